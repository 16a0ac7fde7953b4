//! What the host reports over the measurement window: the difference of two snapshots of its cumulative
//! counters (see `device/results.rs`).

use serde::Serialize;

use super::block::BlockResults;
use super::cpu::{CoreTime, CoreUsage};
use super::Host;
use crate::engine::Time;

/// Host-level results over the measurement window.
#[derive(Debug, Clone, Serialize)]
pub struct HostResults {
    pub cpu_scheduler: String,
    pub completion: String,
    /// Per core: fractions of the window in user code, kernel, polling and idle.
    pub cores: Vec<CoreUsage>,
    /// Mean busy cores (user + kernel + polling) over the window.
    pub busy_cores: f64,
    pub interrupts: u64,
    pub block: BlockResults,
}

/// CPU time per flow over the window, in cores (CPU time of its tasks and their sqpoll threads / window).
pub type FlowCpu = Vec<f64>;

/// The host's cumulative counters at one instant.
#[derive(Debug, Clone)]
pub struct HostCounters {
    at: Time,
    cores: Vec<CoreTime>,
    flow_cpu_ns: Vec<Time>,
    interrupts: u64,
    block: BlockResults,
}

impl Host {
    /// The cumulative counters at `at`.
    pub fn counters(&mut self, at: Time) -> HostCounters {
        let cores = self.cpu.core_times(at);
        let flow_cpu_ns =
            self.flow_tasks.iter().map(|tasks| tasks.iter().map(|&t| self.cpu.task_cpu_ns(t)).sum()).collect();
        HostCounters { at, cores, flow_cpu_ns, interrupts: self.nvme.interrupts(), block: self.block.results() }
    }

    /// Host results between the snapshots `since` and `now`, and the CPU each flow used (in cores).
    pub fn results(&self, since: &HostCounters, now: &HostCounters) -> (HostResults, FlowCpu) {
        let span = now.at.saturating_sub(since.at);
        // Both snapshots come from the same host: one entry per core and per flow in each.
        let cores: Vec<CoreUsage> =
            now.cores.iter().zip(&since.cores).map(|(after, before)| CoreUsage::between(before, after, span)).collect();
        let busy_cores = cores.iter().map(|c| 1.0 - c.idle).sum();
        let flow_cpu = now
            .flow_cpu_ns
            .iter()
            .zip(&since.flow_cpu_ns)
            .map(|(&after, &before)| after.saturating_sub(before) as f64 / span.max(1) as f64)
            .collect();
        (
            HostResults {
                cpu_scheduler: self.cpu.scheduler_name().to_string(),
                completion: self.completion.name().to_string(),
                cores,
                busy_cores,
                interrupts: now.interrupts - since.interrupts,
                block: now.block.since(&since.block),
            },
            flow_cpu,
        )
    }
}
