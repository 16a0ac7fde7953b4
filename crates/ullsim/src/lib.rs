//! ullsim: a deterministic, fast discrete-event simulator of one server's storage I/O path — workload,
//! host stack and NVMe SSD (host interface, DRAM cache, FTL with garbage collection, transaction scheduler,
//! flash) — for studying tail latency of mixed workloads on ultra-low-latency SSDs.
//!
//! The request path, top to bottom: [`workload`] -> [`host`] -> [`device`] (hil -> cache -> ftl -> tsu ->
//! flash) and back; [`sim`] runs the event loop; [`metrics`] measures; [`config`] reads scenarios.
//!
//! The modules are layers with no import circle: each names only those beneath it (`tests/it/layers.rs`
//! holds this), bottom to top [`util`] < [`engine`] < [`request`] < [`config`] < [`workload`] < [`device`] <
//! [`metrics`] < [`host`] < [`load`] < [`sim`] < [`export`] < [`reproduce`] < [`calibrate`]. `config` is
//! data and parsing: the layers fill their defaults and check their own sections through
//! [`config::layers::LayerRules`], which [`load`] gives it. Each layer schedules its own event type through
//! [`engine::Scheduler`]; [`sim`] wraps them in its one event type and dispatches them.
//!
//! ```
//! let scenario = ullsim::Scenario::from_toml_str(
//!     r#"
//!     [run]
//!     duration = "20ms"
//!     [device]
//!     preset = "optane-ull"
//!     [[flow]]
//!     name = "reader"
//!     rw = "randread"
//!     bs = "4k"
//!     "#,
//!     "example",
//!     std::path::Path::new("."),
//!     &[],
//! )?;
//! let results = ullsim::run_scenario(&scenario)?;
//! let reader = &results.flows[0];
//! assert!(reader.completed > 1000);
//! assert!(reader.latency_ns.p50 > 10_000 && reader.latency_ns.p50 < 15_000); // ~12.5 us
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod calibrate;
pub mod config;
pub mod device;
pub mod engine;
pub mod export;
pub mod host;
pub mod load;
pub mod metrics;
pub mod reproduce;
pub mod request;
pub mod sim;
pub mod util;
pub mod workload;

pub use config::Scenario;
pub use sim::{map_memory_note, run_scenario, run_scenario_with_progress, RunResults, SimError, Simulation};
