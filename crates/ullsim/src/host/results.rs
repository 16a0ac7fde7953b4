//! What the host reports over the measurement window: the difference of two snapshots of its cumulative
//! counters (see `device/results.rs`).

use serde::Serialize;

use super::block::BlockResults;
use super::cpu::{CoreTime, CoreUsage};
use super::fs::FsCounters;
use crate::config::host::HostModel;
use crate::engine::Time;
use crate::metrics::FsyncPhases;

/// Host-level results over the measurement window.
#[derive(Debug, Clone, Serialize)]
pub struct HostResults {
    /// `host.model`: with "device-only" there are no cores, interrupts or block layer (all empty or zero).
    pub model: HostModel,
    pub cpu_scheduler: String,
    pub completion: String,
    /// Per core: fractions of the window in user code, kernel, polling and idle.
    pub cores: Vec<CoreUsage>,
    /// Mean busy cores (user + kernel + polling) over the window.
    pub busy_cores: f64,
    pub interrupts: u64,
    pub block: BlockResults,
    /// The file system's page cache, writeback and journal (only when a flow uses files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fs: Option<FsCounters>,
}

/// What the host measured of one flow over the window.
#[derive(Debug, Clone)]
pub struct FlowHost {
    /// CPU of its tasks and their sqpoll threads.
    pub cpu: CpuUse,
    /// The same of each of its jobs (a job's task and its sqpoll thread), in job order; empty without CPU
    /// (`host.model = "device-only"`). They add up to `cpu`.
    pub jobs: Vec<CpuUse>,
    /// Its fsync calls' phases (flows that sync through the file system).
    pub fsync_phases_ns: Option<FsyncPhases>,
}

/// CPU use of some tasks over the window.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuUse {
    /// CPU time in cores.
    pub cpu_cores: f64,
    /// The part of `cpu_cores` in user code.
    pub cpu_user_cores: f64,
    /// Times the tasks were switched onto a core.
    pub context_switches: u64,
}

/// The host's cumulative counters at one instant.
#[derive(Debug, Clone)]
pub struct HostCounters {
    pub(super) at: Time,
    pub(super) cores: Vec<CoreTime>,
    /// CPU time of each flow's jobs' tasks, per flow and job.
    pub(super) flow_cpu: Vec<Vec<FlowCpu>>,
    pub(super) interrupts: u64,
    pub(super) block: BlockResults,
    pub(super) fs: Option<FsCounters>,
}

/// One job's (or flow's) tasks' cumulative CPU use.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct FlowCpu {
    pub cpu_ns: Time,
    /// The part of `cpu_ns` in user code.
    pub user_ns: Time,
    pub context_switches: u64,
}

impl FlowCpu {
    /// The counters of several jobs together.
    fn sum(jobs: &[FlowCpu]) -> FlowCpu {
        jobs.iter().fold(FlowCpu::default(), |total, j| FlowCpu {
            cpu_ns: total.cpu_ns + j.cpu_ns,
            user_ns: total.user_ns + j.user_ns,
            context_switches: total.context_switches + j.context_switches,
        })
    }
}

/// How the results name the host's parts.
pub(super) struct HostNames {
    pub model: HostModel,
    pub cpu_scheduler: String,
    pub completion: String,
}

impl HostCounters {
    /// Host results between the snapshots `self` and `now` (both from the same host), and the CPU each flow
    /// used (in cores).
    pub(super) fn until(&self, now: &HostCounters, names: HostNames) -> (HostResults, Vec<FlowHost>) {
        let span = now.at.saturating_sub(self.at);
        // Both snapshots come from the same host: one entry per core and per flow in each.
        let cores: Vec<CoreUsage> =
            now.cores.iter().zip(&self.cores).map(|(after, before)| CoreUsage::between(before, after, span)).collect();
        let busy_cores = cores.iter().map(|c| 1.0 - c.idle).sum();
        let cores_of = |after: Time, before: Time| after.saturating_sub(before) as f64 / span.max(1) as f64;
        let use_between = |after: &FlowCpu, before: &FlowCpu| CpuUse {
            cpu_cores: cores_of(after.cpu_ns, before.cpu_ns),
            cpu_user_cores: cores_of(after.user_ns, before.user_ns),
            context_switches: after.context_switches.saturating_sub(before.context_switches),
        };
        let flow_cpu = now
            .flow_cpu
            .iter()
            .zip(&self.flow_cpu)
            .map(|(after, before)| FlowHost {
                // The flow's figures from its summed counters (not the sum of its jobs' rounded cores).
                cpu: use_between(&FlowCpu::sum(after), &FlowCpu::sum(before)),
                jobs: after.iter().zip(before).map(|(a, b)| use_between(a, b)).collect(),
                fsync_phases_ns: None,
            })
            .collect();
        (
            HostResults {
                model: names.model,
                cpu_scheduler: names.cpu_scheduler,
                completion: names.completion,
                cores,
                busy_cores,
                interrupts: now.interrupts - self.interrupts,
                block: now.block.since(&self.block),
                fs: now.fs.zip(self.fs).map(|(after, before)| after.since(&before)),
            },
            flow_cpu,
        )
    }
}
