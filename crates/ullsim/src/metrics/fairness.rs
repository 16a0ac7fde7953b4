//! Slowdown, fairness and weighted speedup from a shared run and one alone run per flow (FLIN's metrics):
//! slowdown S_i = mean response time shared / alone; fairness F = min S / max S (1 is perfectly fair);
//! weighted speedup WS = sum of alone / shared; maximum slowdown = max S.

use serde::Serialize;

use super::{FlowResult, LatencySummary};

/// The flow's own results when it ran alone.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct AloneResult {
    pub iops: f64,
    pub latency_ns: LatencySummary,
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
pub fn attach(shared: &mut [FlowResult], alone: &[FlowResult]) -> Option<Fairness> {
    let mut slowdowns = Vec::new();
    for (flow, alone) in shared.iter_mut().zip(alone) {
        flow.alone = Some(AloneResult { iops: alone.iops, latency_ns: alone.latency_ns.clone() });
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
