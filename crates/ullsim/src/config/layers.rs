//! What the layers add to a scenario as it loads. `config` reads and merges the text and checks the values as
//! data; the apps' defaults, the names of each layer's policies and the rules of flows belong to the layers
//! above it, which give them through [`LayerRules`] (`crate::load` implements it). So `config` imports none of
//! the layers, and a new policy or app touches only its own layer.

use super::device::DeviceConfig;
use super::host::HostConfig;
use super::scenario::{FlowSpec, Scenario};

/// The layers' part of loading a scenario. Errors are `(key, what was expected)`, the key relative to the
/// section checked (`io_scheduler` under `host.`, `iodepth` in a flow), a drive's whole (`device.tsu.scheduler`).
pub trait LayerRules {
    /// A flow's table before it is read: an `app` fills in the keys the flow leaves out.
    fn fill_flow_table(&self, flow: &mut toml::Table);
    /// The read flows: an app's remaining defaults, and the flows a scenario implies (an app's background).
    fn complete_flows(&self, flows: &mut Vec<FlowSpec>);
    /// The host section's policy names.
    fn check_host(&self, host: &HostConfig) -> Result<(), (String, String)>;
    /// A drive's policy names and what its geometry must leave room for; every problem found.
    fn check_device(&self, device: &DeviceConfig) -> Vec<(String, String)>;
    /// Flow `flow` of `scenario`, whose target holds `capacity` bytes.
    fn check_flow(&self, flow: &FlowSpec, capacity: u64, scenario: &Scenario) -> Result<(), (String, String)>;
    /// What flows must agree on among themselves: the index of the flow at fault, its key and what was expected.
    fn check_flows(&self, flows: &[FlowSpec]) -> Result<(), (usize, String, String)>;
}
