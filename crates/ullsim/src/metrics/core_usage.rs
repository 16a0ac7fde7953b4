//! How a core spent the measurement window (the host's CPU model measures it: `host::cpu`).

use serde::Serialize;

/// Per-core time over the measurement window.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CoreUsage {
    /// Fractions of the window: user code, kernel (I/O path and interrupt handlers), polling, idle.
    pub user: f64,
    pub kernel: f64,
    pub poll: f64,
    pub idle: f64,
    pub context_switches: u64,
}
