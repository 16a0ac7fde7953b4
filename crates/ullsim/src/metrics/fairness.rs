//! Slowdown, fairness and weighted speedup from a shared run and one alone run per flow (FLIN's metrics):
//! slowdown S_i = mean response time shared / alone; fairness F = min S / max S (1 is perfectly fair);
//! weighted speedup WS = sum of alone / shared; maximum slowdown = max S.

use serde::Serialize;

use super::{FlowResult, LatencySummary};

/// FLIN's (ISCA'18) line between low- and high-interference flows: a flow is high-interference when, run
/// alone, "it keeps all of the flash chips busy for more than 8% of the total execution time" (seed 004,
/// the methodology's workload categories). Read here as the mean die utilization; `all_chips_busy`, the
/// literal reading (every chip busy at once), is reported beside it (docs/model.md, Metrics, says why it
/// is not the rule).
pub const HIGH_INTERFERENCE_DIE_BUSY: f64 = 0.08;

/// The flow's own results when it ran alone.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct AloneResult {
    pub iops: f64,
    pub latency_ns: LatencySummary,
    /// Mean over the dies of the share of the alone run each was busy (that run's `die_utilization.mean`).
    pub die_busy: f64,
    /// Share of the alone run with every chip busy at once (that run's `all_chips_busy`).
    pub all_chips_busy: f64,
    /// FLIN's class: `die_busy` above [`HIGH_INTERFERENCE_DIE_BUSY`].
    pub high_interference: bool,
}

/// What a flow's alone run reports back: its flow result and how busy it kept the dies.
#[derive(Debug, Clone)]
pub struct AloneRun {
    pub flow: FlowResult,
    /// Mean die utilization.
    pub die_busy: f64,
    /// Share of the run with every chip busy.
    pub all_chips_busy: f64,
}

/// Scenario-level fairness metrics.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Fairness {
    pub fairness: f64,
    pub weighted_speedup: f64,
    pub max_slowdown: f64,
}

/// Attach each flow's alone result and slowdown; return the scenario-level metrics. Flows that completed
/// nothing (shared or alone) get no slowdown and are left out of the aggregates.
pub fn attach(shared: &mut [FlowResult], alone_runs: &[AloneRun]) -> Option<Fairness> {
    let mut slowdowns = Vec::new();
    for (flow, run) in shared.iter_mut().zip(alone_runs) {
        let alone = &run.flow;
        flow.alone = Some(AloneResult {
            iops: alone.iops,
            latency_ns: alone.latency_ns.clone(),
            die_busy: run.die_busy,
            all_chips_busy: run.all_chips_busy,
            high_interference: run.die_busy > HIGH_INTERFERENCE_DIE_BUSY,
        });
        if flow.completed > 0 && alone.completed > 0 && alone.latency_ns.mean > 0.0 {
            let s = flow.latency_ns.mean / alone.latency_ns.mean;
            flow.slowdown = Some(s);
            slowdowns.push(s);
        }
    }
    if slowdowns.is_empty() {
        return None;
    }
    let max = slowdowns.iter().cloned().fold(f64::MIN, f64::max);
    let min = slowdowns.iter().cloned().fold(f64::MAX, f64::min);
    Some(Fairness { fairness: min / max, weighted_speedup: slowdowns.iter().map(|s| 1.0 / s).sum(), max_slowdown: max })
}
