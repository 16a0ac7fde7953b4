//! The scenario file: what to simulate. Loading merges the device preset, the file and `--set` overrides,
//! then checks everything, so a scenario that loads is one that can run.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::device::DeviceConfig;
use super::distribution::RandomDistribution;
use super::drive_tables::{self, DriveTables};
pub use super::host::{HostConfig, HostModel};
use super::layers::LayerRules;
use super::md::MdConfig;
use super::preset_file::merge_device_preset;
use super::target::{file_service_of, target_of, Storage, Target};
use super::trace_format::TraceFormat;
use super::units::{describe_ns, Bytes, Flag, Micros, Seconds, SizeOrPercent};
use crate::request::{Criticality, NvmePriority};
use crate::util::keyword::keyword_serde;
use crate::util::quote::{clip_quotes, escape_controls, first_control, quoted, QUOTED_CHARS};

/// A scenario error: one message that names the file and the key path or line.
#[derive(Debug, thiserror::Error)]
#[error("{source_name}: {message}")]
pub struct ConfigError {
    pub source_name: String,
    pub message: String,
    /// The key the message is about (`flow[0].iodepth`), if one: a `--set` of it is named too.
    pub key: Option<String>,
}

impl ConfigError {
    /// `message` with any long quoted text in it cut short: the input may be huge.
    pub fn new(source_name: &str, message: impl Into<String>) -> Self {
        let message = clip_quotes(&message.into(), QUOTED_CHARS);
        ConfigError { source_name: source_name.to_string(), message, key: None }
    }

    /// "key `KEY`: WHAT".
    pub fn at_key(source_name: &str, key: &str, what: impl fmt::Display) -> Self {
        ConfigError { key: Some(key.to_string()), ..Self::new(source_name, format!("key `{key}`: {what}")) }
    }

    /// "key `flow[INDEX].KEY` (flow "NAME"): WHAT".
    pub fn at_flow_key(source_name: &str, index: usize, flow: &FlowSpec, key: &str, what: impl fmt::Display) -> Self {
        let key = format!("flow[{index}].{key}");
        let message = format!("key `{key}` (flow {:?}): {what}", flow.name);
        ConfigError { key: Some(key), ..Self::new(source_name, message) }
    }

    /// The same error, naming the `--set` that gave its key, if one did (the last, which wins). `set_keys` pairs
    /// each `--set` argument with the key it set.
    fn blaming_overrides(mut self, set_keys: &[(&String, String)]) -> Self {
        let Some(key) = &self.key else { return self };
        // A `--set` of a table or array also gave every key inside it.
        let covers =
            |set: &str| key.strip_prefix(set).is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']));
        if let Some((assignment, _)) = set_keys.iter().rev().find(|(_, set)| covers(set)) {
            self.message = format!("--set {}: {}", escape_controls(assignment), self.message);
        }
        self
    }
}

/// fio's `rw`: the direction and order of a flow's I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", remote = "Self")]
pub enum RwMode {
    Read,
    Write,
    Randread,
    Randwrite,
    /// Sequential mixed reads and writes (`rwmixread` sets the mix); fio also spells it `readwrite`.
    #[serde(alias = "readwrite")]
    Rw,
    Randrw,
}

impl RwMode {
    pub fn is_random(self) -> bool {
        matches!(self, RwMode::Randread | RwMode::Randwrite | RwMode::Randrw)
    }
}

/// fio's `rate_process`: how an open-loop flow spaces its arrivals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", remote = "Self")]
pub enum RateProcess {
    /// Evenly spaced (fio's default).
    #[default]
    Linear,
    /// Exponential inter-arrival times.
    Poisson,
    /// Bursts: Poisson at `burst_factor` times the rate during ON periods, nothing during OFF periods (an
    /// interrupted Poisson process; not in fio).
    Onoff,
}

/// `latency_from`: where a flow's response time starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", remote = "Self")]
pub enum LatencyFrom {
    /// When the I/O arrives (is issued by the workload): a sleeping task's wake-up, its wait for a core and
    /// an open-loop backlog count.
    #[default]
    Arrival,
    /// When the flow's task starts the system call for it (fio's `lat`, db_bench's per-op time): what came
    /// before, the task waking up and waiting for a core or for its previous I/O, does not count.
    Submit,
}

/// fio's `ioengine`: how a flow's tasks submit I/O and wait for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", remote = "Self")]
pub enum IoEngine {
    /// One blocking pread/pwrite per task (iodepth 1).
    Psync,
    /// Like psync, but `hipri` may poll for the completion.
    Pvsync2,
    /// io_submit + io_getevents: two system calls per batch.
    Libaio,
    /// io_uring: one io_uring_enter submits and waits; `hipri` polls, `sqthread_poll` submits from a kernel
    /// thread without a system call.
    #[default]
    #[serde(rename = "io_uring")]
    IoUring,
    /// No I/O: the flow's tasks burn CPU (`cpuload` percent, in chunks of `cpuchunks`).
    Cpuio,
}

/// fio's `prioclass`: the Linux I/O priority class of a flow's tasks (mq-deadline and bfq act on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", remote = "Self")]
pub enum IoPrioClass {
    /// Real time: served before best-effort.
    Rt,
    /// Best effort (what a task without an I/O priority gets).
    #[default]
    Be,
    /// Idle: served only when nothing else is waiting.
    Idle,
}

impl IoPrioClass {
    /// The class as the block layer's schedulers number it: 0 real time, 1 best effort, 2 idle.
    pub fn level(self) -> u8 {
        match self {
            IoPrioClass::Rt => 0,
            IoPrioClass::Be => 1,
            IoPrioClass::Idle => 2,
        }
    }
}

impl IoEngine {
    /// One blocking system call per I/O: a job has at most one I/O in flight.
    pub fn is_blocking(self) -> bool {
        matches!(self, IoEngine::Psync | IoEngine::Pvsync2)
    }
}

/// fio's `cpus_allowed_policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", remote = "Self")]
pub enum CpusAllowedPolicy {
    /// Every job may run on any core of `cpus_allowed`.
    #[default]
    Shared,
    /// Job i is pinned to the i-th core of `cpus_allowed` (wrapping).
    Split,
}

keyword_serde!(RwMode, RateProcess, LatencyFrom, IoEngine, IoPrioClass, CpusAllowedPolicy);

/// One flow (fio job) of the scenario. Keys follow fio's names and meanings; see docs/scenarios.md.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub name: String,
    #[serde(default)]
    pub class: Criticality,
    #[serde(default)]
    pub prio: NvmePriority,
    pub prioclass: Option<IoPrioClass>,
    /// Where the flow's I/O goes (`nvme0` unless set): a drive, a colon-separated list of drives, or the md
    /// volume `md0` (`config/target.rs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// fio's `file_service_type`: how a flow on a list of drives picks each I/O's drive (`config/target.rs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_service_type: Option<String>,
    pub app: Option<String>,
    pub rw: Option<RwMode>,
    pub rwmixread: Option<u32>,
    pub bs: Option<Bytes>,
    pub bssplit: Option<String>,
    pub iodepth: Option<u32>,
    pub iodepth_batch_submit: Option<u32>,
    pub rate_iops: Option<f64>,
    pub rate_process: Option<RateProcess>,
    pub burst_factor: Option<f64>,
    pub burst_on: Option<Seconds>,
    pub burst_group: Option<String>,
    pub random_distribution: Option<RandomDistribution>,
    /// fio's `percentage_random`: of a random flow's I/Os, the share (percent) at a random offset; the rest
    /// follow the previous I/O.
    pub percentage_random: Option<u32>,
    pub size: Option<SizeOrPercent>,
    pub offset: Option<SizeOrPercent>,
    pub number_ios: Option<u64>,
    pub runtime: Option<Seconds>,
    pub thinktime: Option<Micros>,
    /// fio's `thinktime_spin`: user-mode CPU the job burns after each completion before it issues again
    /// (part of `thinktime` when that is set, as in fio).
    pub thinktime_spin: Option<Micros>,
    /// User-mode CPU the job burns on each completed I/O before the request counts as done (a server's work
    /// on what it read before it answers): in the response time.
    pub response_cpu: Option<Micros>,
    pub startdelay: Option<Seconds>,
    pub trace: Option<PathBuf>,
    pub format: Option<TraceFormat>,
    pub time_scale: Option<f64>,
    pub numjobs: Option<u32>,
    pub ioengine: Option<IoEngine>,
    pub hipri: Option<bool>,
    pub sqthread_poll: Option<bool>,
    pub cpus_allowed: Option<String>,
    pub cpus_allowed_policy: Option<CpusAllowedPolicy>,
    pub cpuload: Option<u32>,
    pub cpuchunks: Option<Micros>,
    pub latency_from: Option<LatencyFrom>,
    /// fio's `fsync=N` at the device: each job issues an NVMe Flush after every N of its writes.
    pub flush_every: Option<u32>,
    /// Every write of the flow carries Force Unit Access.
    pub fua: Option<bool>,
    /// fio's `direct`: false (0) sends reads and writes through the page cache; true (1, the default) is
    /// direct I/O.
    pub direct: Option<Flag>,
    /// fio's `nrfiles`: files per job's region.
    pub nrfiles: Option<u32>,
    /// fio's `filesize`: size of each file.
    pub filesize: Option<Bytes>,
    /// fio's `fsync=N`: an fsync system call after every N writes.
    pub fsync: Option<u32>,
    /// fio's `fdatasync=N`: an fdatasync system call after every N writes.
    pub fdatasync: Option<u32>,
    /// AIOS's `O_AIOS` (ATC'19) on the flow's files: reads and fsyncs take the asynchronous I/O stack
    /// (LBIO, overlapped reads, the asynchronous fsync). Unset: `host.fs.aios`.
    pub aios: Option<bool>,
    /// fio's `group_reporting`: report the flow's jobs as one group (fio-json's one entry for the flow) even
    /// with `metrics.per_job`, which then records none of them apart.
    pub group_reporting: Option<bool>,
}

impl FlowSpec {
    /// The flow only burns CPU (`ioengine = "cpuio"`).
    pub fn is_cpu_only(&self) -> bool {
        self.ioengine == Some(IoEngine::Cpuio)
    }

    /// Direct I/O (`direct`, 1 unless set to 0).
    pub fn is_direct(&self) -> bool {
        self.direct.is_none_or(|d| d.0)
    }

    /// The flow goes through the file system's files: buffered I/O, or a sync call after its writes.
    pub fn uses_files(&self) -> bool {
        !self.is_cpu_only() && (!self.is_direct() || self.fsync.is_some() || self.fdatasync.is_some())
    }

    /// The flow's files are opened with `O_AIOS` (its own `aios`, else the host's `fs.aios`).
    pub fn uses_aios(&self, host_aios: bool) -> bool {
        self.uses_files() && self.aios.unwrap_or(host_aios)
    }

    /// The flow's synthetic I/O only writes (`rw = "write"` or `"randwrite"`, or a mix with `rwmixread = 0`).
    pub fn writes_only(&self) -> bool {
        match self.rw {
            Some(RwMode::Write | RwMode::Randwrite) => true,
            Some(RwMode::Rw | RwMode::Randrw) => self.rwmixread == Some(0),
            _ => false,
        }
    }

    /// The byte range `(start, length)` the flow's I/O falls in on a device of `capacity` bytes (`offset` and
    /// `size`), in whole sectors.
    pub fn region(&self, capacity: u64) -> (u64, u64) {
        const SECTOR: u64 = 512;
        let start = self.offset.map_or(0, |o| o.resolve(capacity)) / SECTOR * SECTOR;
        let len = self.size.map_or(capacity - start, |s| s.resolve(capacity)) / SECTOR * SECTOR;
        (start, len)
    }
}

/// Parse fio's `cpus_allowed` ("0-3,6"): the listed cores, in order, each below `cores`.
pub fn parse_cpu_list(text: &str, cores: u32) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let parse =
            |t: &str| t.parse::<u32>().map_err(|_| format!("expected core numbers like \"0-3,6\", found {text:?}"));
        let (lo, hi) = (parse(lo)?, parse(hi)?);
        if lo > hi {
            return Err(format!("expected a range low-high with low <= high, found {part:?}"));
        }
        if hi >= cores {
            return Err(format!("core {hi} does not exist (host.cores = {cores}, cores are numbered from 0)"));
        }
        for c in lo..=hi {
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    if out.is_empty() {
        return Err(format!("expected at least one core, like \"0-3,6\", found {text:?}"));
    }
    Ok(out)
}

/// `[run]`: how long to simulate and what to measure.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Simulated time after which the run stops (bare numbers are seconds).
    #[serde(default = "default_duration")]
    pub duration: Seconds,
    /// Requests issued before this time are not counted (bare numbers are seconds).
    #[serde(default)]
    pub warmup: Seconds,
    /// Check model invariants (the FTL map is a bijection onto valid pages, per-block counts agree) at the end
    /// of the run; linear in the drive size, so for tests and small drives.
    #[serde(default)]
    pub check_invariants: bool,
    /// Most bytes the drive's map (the FTL's page map and per-block state) may hold: a run whose map passes
    /// it stops with an error. Only a drive whose whole map is larger can reach it.
    #[serde(default = "default_map_memory_limit")]
    pub map_memory_limit: Bytes,
}

fn default_duration() -> Seconds {
    Seconds::from_ns(crate::engine::SEC)
}

/// 8 GiB: above the whole map of every preset (znand-ull's 800 GB of 2 KiB pages is the largest, ~5 GiB), so
/// only a larger custom drive can reach it, and within the memory of a machine that simulates such drives.
fn default_map_memory_limit() -> Bytes {
    Bytes(8 << 30)
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            duration: default_duration(),
            warmup: Seconds::default(),
            check_invariants: false,
            map_memory_limit: default_map_memory_limit(),
        }
    }
}

/// `[metrics]`: what to compute besides the per-flow results.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsConfig {
    /// Also run every flow alone (same seed, in parallel) and report slowdown, fairness and weighted speedup.
    #[serde(default)]
    pub fairness: bool,
    /// Length of each interval of the per-flow and device time series (bare numbers are seconds); 0, the
    /// default, records none.
    #[serde(default)]
    pub timeseries_interval: Seconds,
    /// Also record each job (task) of a flow with `numjobs` > 1 apart, unless the flow sets `group_reporting`:
    /// the results' `flows[].jobs` and fio-json's one entry per job. Costs a latency histogram or more per job.
    #[serde(default)]
    pub per_job: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile {
    name: Option<String>,
    description: Option<String>,
    seed: Option<u64>,
    #[serde(default)]
    run: RunConfig,
    #[serde(default)]
    metrics: MetricsConfig,
    #[serde(default)]
    host: HostConfig,
    device: DeviceConfig,
    md: Option<MdConfig>,
    #[serde(default)]
    flow: Vec<FlowSpec>,
}

/// A loaded, merged and checked scenario.
#[derive(Debug, Clone, Serialize)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub seed: u64,
    pub run: RunConfig,
    pub metrics: MetricsConfig,
    pub host: HostConfig,
    /// The first drive's (`nvme0`) configuration: the scenario's `[device]`, unless `[drives.nvme0]` gives it
    /// a table of its own. Every drive's: [`Scenario::drive_config`].
    pub device: DeviceConfig,
    /// `[drives.nvmeN]`: the drives with a device table of their own (`config/drive_tables.rs`).
    #[serde(skip)]
    drive_tables: DriveTables,
    /// `[md]`: the host's md RAID-0 volume, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub md: Option<MdConfig>,
    #[serde(rename = "flow")]
    pub flows: Vec<FlowSpec>,
    /// Where the scenario came from (file path or "built-in default"), for messages.
    #[serde(skip)]
    pub source_name: String,
    /// Directory relative paths (traces) resolve against.
    #[serde(skip)]
    pub base_dir: PathBuf,
}

/// Text of the built-in default scenario.
pub const DEFAULT_SCENARIO: &str = include_str!("default.toml");

/// Most I/O queue pairs an NVMe controller can have.
pub const MAX_QUEUE_PAIRS: u32 = 65_535;

/// The keys a `[[flow]]` table takes (the fields of [`FlowSpec`]; tests check the two agree).
pub const FLOW_KEYS: &[&str] = &[
    "name",
    "class",
    "prio",
    "prioclass",
    "device",
    "file_service_type",
    "app",
    "rw",
    "rwmixread",
    "bs",
    "bssplit",
    "iodepth",
    "iodepth_batch_submit",
    "rate_iops",
    "rate_process",
    "burst_factor",
    "burst_on",
    "burst_group",
    "random_distribution",
    "percentage_random",
    "size",
    "offset",
    "number_ios",
    "runtime",
    "thinktime",
    "thinktime_spin",
    "response_cpu",
    "startdelay",
    "trace",
    "format",
    "time_scale",
    "numjobs",
    "ioengine",
    "hipri",
    "sqthread_poll",
    "cpus_allowed",
    "cpus_allowed_policy",
    "cpuload",
    "cpuchunks",
    "latency_from",
    "flush_every",
    "fua",
    "direct",
    "nrfiles",
    "filesize",
    "fsync",
    "fdatasync",
    "aios",
    "group_reporting",
];

/// The seed used when a scenario names none.
pub const DEFAULT_SEED: u64 = 1;

/// Most intervals a time series (`metrics.timeseries_interval`) may have: each costs ~40 bytes per flow
/// plus ~30 for the device, so a series stays within tens of MB.
pub const MAX_TIMESERIES_INTERVALS: u64 = 1_000_000;

/// Longest `run.duration`: a year. Simulated time beyond that is no SSD experiment but a slip of units, and the
/// clock (u64 ns, 584 years) keeps room past the end for the work still in flight.
pub const MAX_RUN_DURATION_NS: u64 = 365 * 24 * 3600 * crate::engine::SEC;

/// Largest scenario file read: far beyond any scenario written by hand or script, and a bound on what a wrong
/// path (a trace, /dev/zero, a FIFO that never ends) can make the loader hold.
pub const MAX_SCENARIO_BYTES: u64 = 16 << 20;

/// Most flows a scenario may have. Each costs a few KiB before it issues an I/O (its configuration, its
/// task, its recorders, which allocate nothing until they record: metrics/recorder.rs); a busy flow's
/// latency histograms grow to ~50-250 KiB each with the spread of its latencies, so ten thousand busy
/// flows can take gigabytes. [inferred: multi-tenant studies run hundreds to a few thousand tenants; fio's
/// numjobs, up to 4096 per flow, covers more tasks without more flows.]
pub const MAX_FLOWS: usize = 10_000;

/// Most tasks (the flows' `numjobs`, summed) a scenario may have: each task costs ~0.5 KiB in the host
/// (its state, its run queue entries) whether or not it issues. [inferred: fio's numjobs is at most 4096 per
/// flow here; sixteen such flows, or thousands of tenants with a few tasks each, fit.]
pub const MAX_TASKS: u64 = 1 << 16;

/// Largest `iodepth` accepted (fio's limit).
pub const MAX_IODEPTH: u32 = 65_536;

/// Most files (`nrfiles`) one flow's jobs may each have.
pub const MAX_NRFILES: u32 = 1 << 20;

/// Most jobs (tasks) one flow may have.
pub const MAX_NUMJOBS: u32 = 4096;

/// How much of a line an invalid-TOML message quotes.
const TOML_EXCERPT_CHARS: usize = 80;

/// More than [`MAX_FLOWS`] flows is an error (application models add background flows of their own).
fn check_flow_count(source: &str, flows: usize) -> Result<(), ConfigError> {
    if flows <= MAX_FLOWS {
        return Ok(());
    }
    let what = format!(
        "{flows} flows is above the most a scenario may have, {MAX_FLOWS} (memory); for many tasks doing the \
         same I/O use one flow with numjobs"
    );
    Err(ConfigError::at_key(source, "flow", what))
}

impl Scenario {
    /// Load a scenario file, apply `overrides` (`key.path=value`) and check it, with the layers' `rules`
    /// (`Scenario::load` in `crate::load` gives them).
    pub fn load_with(path: &Path, overrides: &[String], rules: &dyn LayerRules) -> Result<Scenario, ConfigError> {
        // The file's name is printed (in messages, and as the scenario's name when it has no `name` key), and no
        // one checked it: its control characters are printed escaped.
        let name = escape_controls(&path.display().to_string());
        let text = read_scenario_file(path).map_err(|what| ConfigError::new(&name, what))?;
        let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Self::parse_with(&text, &name, &base_dir, overrides, rules)
    }

    /// Parse a scenario from TOML text and check it with the layers' `rules`; `source_name` is used in
    /// messages (`Scenario::from_toml_str` in `crate::load` gives the rules).
    pub fn parse_with(
        text: &str,
        source_name: &str,
        base_dir: &Path,
        overrides: &[String],
        rules: &dyn LayerRules,
    ) -> Result<Scenario, ConfigError> {
        let mut table: toml::Table =
            text.parse().map_err(|e| ConfigError::new(source_name, invalid_toml_message(text, &e)))?;
        // Before anything is built for the flows (presets merged into each, defaults filled in).
        if let Some(toml::Value::Array(flows)) = table.get("flow") {
            check_flow_count(source_name, flows.len())?;
        }
        let mut set_keys = Vec::new();
        for o in overrides {
            let key = apply_override(&mut table, o)
                .map_err(|m| ConfigError::new(source_name, format!("--set {}: {m}", escape_controls(o))))?;
            set_keys.push((o, key));
        }
        let blame = |e: ConfigError| e.blaming_overrides(&set_keys);
        let at_key = |(key, what): (String, String)| blame(ConfigError::at_key(source_name, &key, what));
        // The stack first: its firmware keys go under the scenario's `[device]`, and the preset under both.
        let firmware = super::stacks::merge_host_stack(&mut table).map_err(at_key)?;
        // The platform under both the stack's host keys and the scenario's.
        super::platforms::merge_platform(&mut table).map_err(at_key)?;
        // A preset file's path is relative to the scenario's directory; given by `--set`, to the current one.
        let preset_dir = |key: &str| match set_keys.iter().any(|(_, set)| set == key) {
            true => PathBuf::new(),
            false => base_dir.to_path_buf(),
        };
        merge_device_preset(&mut table, &preset_dir("device.preset")).map_err(at_key)?;
        // The drive tables start from the merged `[device]`, or from a preset under the stack's firmware.
        let raw_drive_tables = drive_tables::take(&mut table, firmware).map_err(at_key)?;
        if let Some(toml::Value::Array(flows)) = table.get_mut("flow") {
            flows.iter_mut().filter_map(toml::Value::as_table_mut).for_each(|flow| rules.fill_flow_table(flow));
        }
        let file: ScenarioFile = serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
            let path = e.path().to_string();
            let what = plain_expectation(&path, e.into_inner().message().trim());
            blame(ConfigError::at_key(source_name, &path, what))
        })?;
        let drive_tables = match raw_drive_tables {
            Some(raw) => drive_tables::build(raw, &file.device, &preset_dir, plain_expectation).map_err(at_key)?,
            None => DriveTables::default(),
        };
        let device = match drive_tables.is_empty() {
            true => file.device,
            false => drive_tables.config(0, &file.device).clone(),
        };
        let mut scenario = Scenario {
            name: file.name.unwrap_or_else(|| {
                Path::new(source_name).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
            }),
            description: file.description.unwrap_or_default(),
            seed: file.seed.unwrap_or(DEFAULT_SEED),
            run: file.run,
            metrics: file.metrics,
            host: file.host,
            device,
            drive_tables,
            md: file.md,
            flows: file.flow,
            source_name: source_name.to_string(),
            base_dir: base_dir.to_path_buf(),
        };
        rules.complete_flows(&mut scenario.flows);
        scenario.validate(rules).map_err(blame)?;
        Ok(scenario)
    }

    /// The same scenario with only flow `index` (for alone runs).
    pub fn alone(&self, index: usize) -> Scenario {
        let mut s = self.clone();
        s.flows = vec![self.flows[index].clone()];
        s.metrics.fairness = false;
        // The alone runs feed slowdowns only; their series would be memory no one reads.
        s.metrics.timeseries_interval = Seconds::default();
        s.metrics.per_job = false;
        s
    }

    /// Check everything that serde cannot: geometry, flows, run window; the layers' `rules` check their parts.
    fn validate(&self, rules: &dyn LayerRules) -> Result<(), ConfigError> {
        let source = self.source_name.as_str();
        for (table, device) in self.drive_tables.to_check(&self.device) {
            let mut errors = device.validate().err().unwrap_or_default();
            errors.extend(rules.check_device(device));
            if let Some((key, what)) = errors.first() {
                return Err(ConfigError::at_key(source, &drive_tables::rekey(key, &table), what));
            }
        }
        if self.flows.is_empty() {
            return Err(ConfigError::new(source, "no flows: add at least one [[flow]] table"));
        }
        check_flow_count(source, self.flows.len())?;
        let tasks: u64 = self.flows.iter().map(|f| u64::from(f.numjobs.unwrap_or(1).max(1))).sum();
        if tasks > MAX_TASKS {
            let what = format!(
                "the flows' numjobs add up to {tasks} tasks, above the most a scenario may have, {MAX_TASKS} \
                 (memory)"
            );
            return Err(ConfigError::at_key(source, "flow", what));
        }
        if self.run.duration.0 == 0 {
            return Err(ConfigError::at_key(source, "run.duration", "expected a duration > 0"));
        }
        if self.run.duration.0 > MAX_RUN_DURATION_NS {
            let what = format!(
                "expected at most a year ({}), found {}",
                describe_ns(MAX_RUN_DURATION_NS),
                describe_ns(self.run.duration.0)
            );
            return Err(ConfigError::at_key(source, "run.duration", what));
        }
        if let Err((key, what)) = self.host.validate().and_then(|()| rules.check_host(&self.host)) {
            return Err(ConfigError::at_key(source, &format!("host.{key}"), what));
        }
        let by_drive = self.host.nvme.irq_cpus_by_drive.len();
        if by_drive > self.device.count as usize {
            let what = format!(
                "expected at most one CPU list per drive ({} with device.count = {}), found {by_drive}",
                self.device.count, self.device.count
            );
            return Err(ConfigError::at_key(source, "host.nvme.irq_cpus_by_drive", what));
        }
        if self.run.map_memory_limit.0 == 0 {
            return Err(ConfigError::at_key(source, "run.map_memory_limit", "expected a size > 0"));
        }
        if self.run.warmup.0 >= self.run.duration.0 {
            return Err(ConfigError::at_key(source, "run.warmup", "expected a warm-up shorter than run.duration"));
        }
        self.check_timeseries_interval()?;
        check_label(&self.name, "scenario").map_err(|what| ConfigError::at_key(source, "name", what))?;
        let storage = self.storage()?;
        let mut names = std::collections::BTreeSet::new();
        for (i, flow) in self.flows.iter().enumerate() {
            let name_key = format!("flow[{i}].name");
            if flow.name.trim().is_empty() {
                let what = format!(
                    "expected a non-empty name, found {:?} (the name labels the flow's results and is how \
                     --set flow.NAME.key finds it)",
                    flow.name
                );
                return Err(ConfigError::at_key(source, &name_key, what));
            }
            check_label(&flow.name, "flow").map_err(|what| ConfigError::at_key(source, &name_key, what))?;
            if let Some(group) = &flow.burst_group {
                check_label(group, "burst group")
                    .map_err(|what| ConfigError::at_flow_key(source, i, flow, "burst_group", what))?;
            }
            if !names.insert(flow.name.as_str()) {
                return Err(ConfigError::at_key(source, &name_key, format!("flow name {:?} is used twice", flow.name)));
            }
            if flow.startdelay.is_some_and(|d| d.0 >= self.run.duration.0) {
                let what = "the flow would start after run.duration ends";
                return Err(ConfigError::at_flow_key(source, i, flow, "startdelay", what));
            }
            let capacity = self.check_target(i, flow, &storage)?;
            if self.host.model == HostModel::DeviceOnly && flow.is_cpu_only() {
                let what = "\"cpuio\" burns CPU, and host.model = \"device-only\" has no CPU: remove the flow, or \
                            use host.model = \"full\"";
                return Err(ConfigError::at_flow_key(source, i, flow, "ioengine", what));
            }
            if self.host.model == HostModel::DeviceOnly && flow.uses_files() {
                let key = if !flow.is_direct() {
                    "direct"
                } else if flow.fsync.is_some() {
                    "fsync"
                } else {
                    "fdatasync"
                };
                let what = "files (the page cache, fsync) are the host's, and host.model = \"device-only\" has none: \
                            use host.model = \"full\", or flush_every for NVMe flushes without a file system";
                return Err(ConfigError::at_flow_key(source, i, flow, key, what));
            }
            rules
                .check_flow(flow, capacity, self)
                .map_err(|(key, what)| ConfigError::at_flow_key(source, i, flow, &key, what))?;
        }
        rules
            .check_flows(&self.flows)
            .map_err(|(i, key, what)| ConfigError::at_flow_key(source, i, &self.flows[i], &key, what))
    }

    /// The configuration of drive `index` (`nvme{index}`, below `device.count`): its `[drives.nvmeN]` table's,
    /// or the scenario's `[device]`.
    pub fn drive_config(&self, index: u32) -> &DeviceConfig {
        self.drive_tables.config(index, &self.device)
    }

    /// Every drive's configuration, by index.
    pub fn drive_configs(&self) -> impl Iterator<Item = &DeviceConfig> {
        (0..self.device.count).map(|i| self.drive_config(i))
    }

    /// What the scenario's flows can address: its drives and its md volume (`[md]` checked: errors name the key).
    pub fn storage(&self) -> Result<Storage, ConfigError> {
        let drive_bytes: Vec<u64> = self.drive_configs().map(DeviceConfig::logical_capacity_bytes).collect();
        let md = match &self.md {
            None => None,
            Some(md) => Some(
                md.raid0(&drive_bytes)
                    .map_err(|(key, what)| ConfigError::at_key(&self.source_name, &format!("md.{key}"), what))?,
            ),
        };
        Ok(Storage { drive_bytes, md })
    }

    /// Check flow `index`'s `device` and `file_service_type`; returns the bytes it can address.
    fn check_target(&self, index: usize, flow: &FlowSpec, storage: &Storage) -> Result<u64, ConfigError> {
        let error = |key: &str, what: &str| ConfigError::at_flow_key(&self.source_name, index, flow, key, what);
        let target = target_of(flow, self.device.count).map_err(|what| error("device", &what))?;
        match &target {
            Target::Md if self.md.is_none() => {
                return Err(error(
                    "device",
                    "\"md0\" is the host's md RAID-0 volume, and the scenario has no [md] table: add one (md.level = \
                     0, md.devices, md.chunk)",
                ));
            }
            Target::Md if self.host.model == HostModel::DeviceOnly => {
                return Err(error(
                    "device",
                    "\"md0\" is a volume of the host's md driver, and host.model = \"device-only\" has no host: \
                     target a drive or a list of drives (\"nvme0:nvme1\")",
                ));
            }
            Target::Drives(drives) if drives.len() > 1 && flow.trace.is_some() => {
                return Err(error(
                    "device",
                    "a list of drives is for synthetic flows (fio's files of one job); a trace gives its own \
                     offsets: target one drive or \"md0\"",
                ));
            }
            Target::Drives(_) | Target::Md => {}
        }
        if flow.uses_files() && target != Target::Drives(vec![0]) {
            return Err(error(
                "device",
                "the flow's files (direct = 0, fsync, fdatasync) are in the file system on nvme0: target nvme0 (omit \
                 device)",
            ));
        }
        file_service_of(flow).map_err(|what| error("file_service_type", &what))?;
        if flow.file_service_type.is_some() && !matches!(&target, Target::Drives(d) if d.len() > 1) {
            return Err(error(
                "file_service_type",
                "applies only to a flow on a list of drives (device = \"nvme0:nvme1\"): it picks each I/O's drive",
            ));
        }
        Ok(storage.capacity(&target))
    }

    /// A time series holds one entry per interval (and flow), so its interval may not cut the measurement
    /// window into more than [`MAX_TIMESERIES_INTERVALS`].
    fn check_timeseries_interval(&self) -> Result<(), ConfigError> {
        let interval = self.metrics.timeseries_interval.0;
        if interval == 0 {
            return Ok(());
        }
        let window = self.run.duration.0 - self.run.warmup.0;
        let intervals = window.div_ceil(interval);
        if intervals > MAX_TIMESERIES_INTERVALS {
            let what = format!(
                "an interval of {} cuts the measurement window (run.duration - run.warmup = {}) into {intervals} \
                 intervals; the most allowed is {MAX_TIMESERIES_INTERVALS}: use an interval of at least {}",
                describe_ns(interval),
                describe_ns(window),
                describe_ns(window.div_ceil(MAX_TIMESERIES_INTERVALS))
            );
            return Err(ConfigError::at_key(&self.source_name, "metrics.timeseries_interval", what));
        }
        Ok(())
    }
}

/// A name that the results print as a label (the scenario's in the table's title, a flow's at the start of its
/// rows) or messages quote: no control characters. Errors say what was expected.
fn check_label(name: &str, what: &str) -> Result<(), String> {
    if first_control(name).is_none() {
        return Ok(());
    }
    Err(format!(
        "expected a {what} name without control characters, found {}: a newline, tab, escape (\\u{{1b}}) or other \
         control character would break the rows of the results table or drive the terminal",
        quoted(name, QUOTED_CHARS)
    ))
}

/// serde's message about `key` with the Rust type it expected (`expected u32`) said as what a scenario may write
/// there: for a whole number, the range the key accepts (iodepth: 1 to 65536), not the type's.
pub(super) fn plain_expectation(key: &str, message: &str) -> String {
    const PLAIN: [(&str, &str); 4] = [
        ("u32", "a whole number from 0 to 4294967295"),
        // TOML's integers stop at i64::MAX.
        ("u64", "a whole number from 0 to 9223372036854775807"),
        ("f64", "a number"),
        ("a boolean", "true or false"),
    ];
    for (rust, plain) in PLAIN {
        if let Some(head) = message.strip_suffix(rust).and_then(|head| head.strip_suffix("expected ")) {
            let accepted = match rust {
                "u32" | "u64" => super::accepted::whole_number(key),
                _ => None,
            };
            return format!("{head}expected {}", accepted.as_deref().unwrap_or(plain));
        }
    }
    message.to_owned()
}

/// Deep-merge `top` over `base`: tables merge key by key, anything else replaces.
pub(super) fn overlay(base: &mut toml::Table, top: toml::Table) {
    for (key, value) in top {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(t)) => overlay(b, t),
            (_, v) => {
                base.insert(key, v);
            }
        }
    }
}

/// Parse the value of a `--set` as TOML (numbers, booleans, quoted strings, arrays); anything that is not
/// valid TOML is taken as a bare string, so `--set device.preset=znand-ull` works without quotes.
pub fn parse_override_value(text: &str) -> toml::Value {
    let doc = format!("v = {text}");
    match doc.parse::<toml::Table>() {
        Ok(mut t) => t.remove("v").unwrap_or(toml::Value::String(text.to_string())),
        Err(_) => toml::Value::String(text.to_string()),
    }
}

/// Apply `key.path=value` to the raw scenario table. Flows are addressed as `flow.NAME.key` or `flow.INDEX.key`.
/// Returns the key set as error messages name it (`flow[0].iodepth`).
pub fn apply_override(table: &mut toml::Table, assignment: &str) -> Result<String, String> {
    let (path, value) = assignment
        .split_once('=')
        .ok_or_else(|| "expected key.path=value, e.g. device.flash.read_ns=3000".to_string())?;
    let parts: Vec<&str> = path.trim().split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(format!("bad key path {path:?}"));
    }
    let value = parse_override_value(value.trim());
    let mut current = table;
    let mut key = Vec::new();
    let mut i = 0;
    while i + 1 < parts.len() {
        let part = parts[i];
        if part == "flow" {
            let selector = parts[i + 1];
            if i + 2 >= parts.len() {
                return Err("expected flow.NAME.key or flow.INDEX.key".into());
            }
            let flows = match current.get_mut("flow") {
                Some(toml::Value::Array(a)) => a,
                _ => return Err("the scenario has no [[flow]] tables".into()),
            };
            let position = match selector.parse::<usize>() {
                Ok(index) if index < flows.len() => index,
                Ok(index) => return Err(format!("no flow with index {index} (the scenario has {})", flows.len())),
                Err(_) => flows
                    .iter()
                    .position(|f| f.get("name").and_then(|n| n.as_str()) == Some(selector))
                    .ok_or_else(|| format!("no flow named {selector:?}"))?,
            };
            current = match flows.get_mut(position) {
                Some(toml::Value::Table(t)) => t,
                _ => return Err(format!("flow {selector} is not a table")),
            };
            key.push(format!("flow[{position}]"));
            i += 2;
            continue;
        }
        key.push(part.to_string());
        let entry = current.entry(part.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        current = match entry {
            toml::Value::Table(t) => t,
            _ => return Err(format!("`{}` is not a table", parts[..=i].join("."))),
        };
        i += 1;
    }
    current.insert(parts[parts.len() - 1].to_string(), value);
    key.push(parts[parts.len() - 1].to_string());
    Ok(key.join("."))
}

/// The one rule of a key both varied (`ullsim compare --vary`, Python's `sweep(vary=...)`) and fixed (`--set`,
/// `set=`): each variant's value is applied after the fixed ones, so the fixed value would be lost without a
/// word. An error naming the first varied key that is also fixed, or that holds a fixed key (a varied table
/// replaces it whole), and the fixed assignment; `flags` names the two as the caller's user writes them
/// (`("--vary", "--set")`). A varied key inside a fixed table is fine: it overrides that one key of it. Keys
/// compare as written, trimmed (`flow.0.iodepth` and `flow.reader.iodepth` are not seen to be the same).
pub fn check_varied_not_fixed(varied: &[&str], fixed: &[String], flags: (&str, &str)) -> Result<(), String> {
    for key in varied.iter().map(|k| k.trim()) {
        for assignment in fixed {
            let fixed_key = assignment.split_once('=').map_or(assignment.as_str(), |(k, _)| k).trim();
            let inside = fixed_key.strip_prefix(key).is_some_and(|rest| rest.starts_with('.'));
            if fixed_key == key || inside {
                let (vary, set) = flags;
                let within = if inside { ", a key inside it" } else { "" };
                return Err(format!(
                    "{key} is both varied ({vary}) and fixed ({set} {assignment}{within}): each variant's value \
                     would replace the fixed one; give it in one of them"
                ));
            }
        }
    }
    Ok(())
}

/// The text of the scenario file at `path`, read only up to [`MAX_SCENARIO_BYTES`]; errors say why not.
fn read_scenario_file(path: &Path) -> Result<String, String> {
    let cannot_read = |e: std::io::Error| format!("cannot read scenario file: {e}");
    let metadata = std::fs::metadata(path).map_err(cannot_read)?;
    if metadata.is_dir() {
        return Err("is a directory; expected a scenario file (TOML)".into());
    }
    let too_large = format!("the limit for a scenario file is {MAX_SCENARIO_BYTES} bytes (16 MiB)");
    if metadata.len() > MAX_SCENARIO_BYTES {
        return Err(format!("scenario file is {} bytes; {too_large}", metadata.len()));
    }
    // A FIFO or a device has no length to check (and a file may grow): read one byte past the limit at most.
    let mut bytes = Vec::new();
    let file = std::fs::File::open(path).map_err(cannot_read)?;
    file.take(MAX_SCENARIO_BYTES + 1).read_to_end(&mut bytes).map_err(cannot_read)?;
    if bytes.len() as u64 > MAX_SCENARIO_BYTES {
        return Err(format!("scenario file is more than {MAX_SCENARIO_BYTES} bytes long; {too_large}"));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        format!("cannot read scenario file: byte {at} is not UTF-8 text (is this a TOML file?)")
    })
}

/// toml's message for a parse error, with the offending line quoted around the error's column only: toml's own
/// message quotes the whole line, which may be megabytes long.
fn invalid_toml_message(text: &str, error: &toml::de::Error) -> String {
    let what = error.message().trim();
    let Some(span) = error.span() else { return format!("invalid TOML: {what}") };
    let mut at = span.start.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let line = text[line_start..line_end].trim_end_matches('\r');
    let line_number = text[..line_start].matches('\n').count() + 1;
    let column = text[line_start..at].chars().count();
    // A window of the line with the error's column in its middle.
    let first = column.saturating_sub(TOML_EXCERPT_CHARS / 2);
    let excerpt: String = line.chars().skip(first).take(TOML_EXCERPT_CHARS).collect();
    let before = if first > 0 { "..." } else { "" };
    let after = if line.chars().count() > first + TOML_EXCERPT_CHARS { "..." } else { "" };
    let caret = " ".repeat(before.len() + column - first);
    format!(
        "invalid TOML at line {line_number}, column {}: {what}\n    {before}{excerpt}{after}\n    {caret}^",
        column + 1
    )
}
