//! Scenario files: schema, units, presets, `--set` overrides and validation.

mod accepted;
pub mod builtin;
pub mod device;
pub mod distribution;
pub mod drive_tables;
pub mod drives;
pub mod host;
pub mod layers;
pub mod md;
pub mod platforms;
pub mod preset_file;
pub mod presets;
pub mod scenario;
pub mod stacks;
pub mod target;
pub mod trace_format;
pub mod units;

pub use device::DeviceConfig;
pub use scenario::{ConfigError, FlowSpec, HostConfig, MetricsConfig, RunConfig, Scenario};
