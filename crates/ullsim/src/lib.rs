//! ullsim: a deterministic, fast discrete-event simulator of one server's storage I/O path — workload,
//! host stack and NVMe SSD (host interface, DRAM cache, FTL with garbage collection, transaction scheduler,
//! flash) — for studying tail latency of mixed workloads on ultra-low-latency SSDs.
//!
//! The request path, top to bottom: [`workload`] -> [`host`] -> [`device`] (hil -> cache -> ftl -> tsu ->
//! flash) and back; [`sim`] runs the event loop; [`metrics`] measures; [`config`] reads scenarios.

pub mod config;
pub mod device;
pub mod engine;
pub mod host;
pub mod metrics;
pub mod request;
pub mod sim;
pub mod util;
pub mod workload;

pub use config::Scenario;
pub use sim::{run_scenario, run_scenario_with_progress, RunResults, SimError, Simulation};
