//! Loading a scenario: `config` reads and merges the text and checks it as data; the layers add what is
//! theirs through [`config::layers::LayerRules`]: the apps' defaults and background flows (`workload`), the
//! names of each layer's policies (the registries of `host` and `device`) and the flows' rules (`workload`).
//! This module sits above those layers and below `sim`, so `config` imports none of them.

use std::path::Path;

use crate::config::device::DeviceConfig;
use crate::config::host::HostConfig;
use crate::config::layers::LayerRules;
use crate::config::scenario::{ConfigError, FlowSpec, Scenario, DEFAULT_SCENARIO};
use crate::workload::trace::{TraceError, TraceReader};

/// The layers' rules, as `crate::load` gives them to `config`.
pub struct Layers;

impl LayerRules for Layers {
    fn fill_flow_table(&self, flow: &mut toml::Table) {
        crate::workload::app::fill_table_defaults(flow);
    }

    fn complete_flows(&self, flows: &mut Vec<FlowSpec>) {
        flows.iter_mut().for_each(crate::workload::app::fill_defaults);
        crate::workload::app::background::add_flows(flows);
    }

    fn check_host(&self, host: &HostConfig) -> Result<(), (String, String)> {
        crate::host::check::check_policy_names(host)
    }

    fn check_device(&self, device: &DeviceConfig) -> Vec<(String, String)> {
        crate::device::check::check_config(device)
    }

    fn check_flow(&self, flow: &FlowSpec, capacity: u64, scenario: &Scenario) -> Result<(), (String, String)> {
        crate::workload::check_flow_spec(flow, capacity, scenario.host.cores)
            .and_then(|()| crate::workload::check_arrivals(flow, scenario.run.duration.0))
            .and_then(|()| crate::workload::check::check_dedicated_core(flow, scenario.host.dedicated_poll_core()))
    }

    fn check_flows(&self, flows: &[FlowSpec]) -> Result<(), (usize, String, String)> {
        crate::workload::check::check_burst_groups(flows)
    }
}

impl Scenario {
    /// Load a scenario file, apply `overrides` (`key.path=value`) and check it.
    pub fn load(path: &Path, overrides: &[String]) -> Result<Scenario, ConfigError> {
        Scenario::load_with(path, overrides, &Layers)
    }

    /// Parse a scenario from TOML text and check it; `source_name` is used in messages, `base_dir` resolves
    /// relative paths (traces).
    pub fn from_toml_str(
        text: &str,
        source_name: &str,
        base_dir: &Path,
        overrides: &[String],
    ) -> Result<Scenario, ConfigError> {
        Scenario::parse_with(text, source_name, base_dir, overrides, &Layers)
    }

    /// The built-in default scenario (`ullsim run` with no file).
    pub fn builtin_default(overrides: &[String]) -> Result<Scenario, ConfigError> {
        Scenario::from_toml_str(DEFAULT_SCENARIO, "built-in default scenario", Path::new("."), overrides)
    }

    /// Read every trace the scenario names to the end, so that a bad line or a trace without records is
    /// reported before a run rather than seconds into it. Streams: one line in memory at a time, whatever the
    /// trace's length. Returns the number of records read.
    pub fn check_traces(&self) -> Result<u64, ConfigError> {
        let mut records = 0;
        for (i, flow) in self.flows.iter().enumerate() {
            let (Some(trace), Some(format)) = (&flow.trace, flow.format) else { continue };
            let error = |e: TraceError| ConfigError::at_flow_key(&self.source_name, i, flow, "trace", e);
            let mut reader = TraceReader::open(&self.base_dir.join(trace), format).map_err(error)?;
            while reader.next_record().map_err(error)?.is_some() {
                records += 1;
            }
        }
        Ok(records)
    }
}
