//! Runs a measured job's shape in the simulator for a calibration: the probe's scenario of the job
//! ([`SimulatedProbe::scenario_of`]) with the fit's trial settings over the device, long enough for a
//! stable 99th percentile.

use rayon::prelude::*;

use super::fio_latency::LatencyKind;
use super::fit::{Figures, JobFigures, Target};
use super::probe_sim::SimulatedProbe;
use super::JobShape;
use crate::engine::Time;
use crate::metrics::{OpResult, FIO_PERCENTILES};

/// I/Os a simulated job aims for [inferred: 99th percentiles of 20,000 samples move by ~1-2% between
/// seeds, below the fit's tolerance, and a job of 1 M IOPS still simulates in ~50 ms of CPU].
pub const TARGET_IOS: f64 = 20_000.0;
/// Bounds on a job's measured simulated time: at least enough for queues to fill (1 ms), at most what a
/// slow job needs (a 4 KiB random writer of ~20K IOPS) without making a fit slow.
const MIN_RUN_NS: Time = 1_000_000;
const MAX_RUN_NS: Time = 1_000_000_000;

/// Where jobs are simulated: the probe's device, and settings every job gets.
#[derive(Debug, Clone)]
pub struct Bench {
    pub probe: SimulatedProbe,
    /// `key=value` settings (as `--set` takes them) over the device, before the fit's own.
    pub settings: Vec<String>,
    /// I/Os each job aims for ([`TARGET_IOS`]).
    pub target_ios: f64,
}

impl Bench {
    /// Simulate `shape` for `run_ns` (after the probe's ramp) with `settings` over the base.
    pub fn run(
        &self,
        settings: &[(&'static str, f64)],
        shape: &JobShape,
        run_ns: Time,
        kind: LatencyKind,
    ) -> Result<JobFigures, String> {
        let mut sets = self.settings.clone();
        sets.extend(settings.iter().map(|(key, value)| super::knobs::setting(key, *value)));
        let scenario = self.probe.scenario_of("job", shape, run_ns, &sets)?;
        let results = crate::run_scenario(&scenario).map_err(|e| e.to_string())?;
        let flow = results.flows.first().ok_or("the job's scenario has no flow")?;
        let figures = |op: &Option<OpResult>| op.as_ref().map(|op| figures(op, kind));
        Ok(JobFigures { read: figures(&flow.read), write: figures(&flow.write) })
    }

    /// Simulate every target in parallel, each for the time its measured IOPS say it needs.
    pub fn evaluate(&self, settings: &[(&'static str, f64)], targets: &[&Target]) -> Result<Vec<JobFigures>, String> {
        targets.par_iter().map(|t| self.run(settings, &t.shape, run_ns(t, self.target_ios), t.percentiles)).collect()
    }

    /// The base's device and host configurations as JSON (with the bench's settings), under `device` and
    /// `host`, to read base values from by their scenario keys.
    pub fn base_json(&self) -> Result<serde_json::Value, String> {
        let shape =
            JobShape { pattern: super::Pattern::Random, read_percent: 100, block_size: 4096, iodepth: 1, numjobs: 1 };
        let scenario = self.probe.scenario_of("base", &shape, MIN_RUN_NS, &self.settings)?;
        let device = serde_json::to_value(&scenario.device).map_err(|e| e.to_string())?;
        let host = serde_json::to_value(&scenario.host).map_err(|e| e.to_string())?;
        Ok(serde_json::json!({ "device": device, "host": host }))
    }
}

/// How long to simulate `target`: `target_ios` at its measured IOPS, within bounds.
pub fn run_ns(target: &Target, target_ios: f64) -> Time {
    let iops: f64 = [target.measured.read, target.measured.write].iter().flatten().map(|f| f.iops).sum();
    if iops <= 0.0 {
        return MAX_RUN_NS;
    }
    ((target_ios / iops * 1e9) as Time).clamp(MIN_RUN_NS, MAX_RUN_NS)
}

/// A direction's figures: IOPS, mean from issue, and the 99th percentile measured as `kind` says.
fn figures(op: &OpResult, kind: LatencyKind) -> Figures {
    let p99_index = FIO_PERCENTILES.iter().position(|&p| p == 99.0).expect("fio reports the 99th percentile");
    let p99 = match (kind, &op.detail.after_submission) {
        (LatencyKind::Completion, Some(after)) => after.percentiles[p99_index],
        _ => op.latency_ns.p99,
    };
    Figures { iops: op.iops, mean_ns: op.latency_ns.mean, p99_ns: Some(p99 as f64) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::Pattern;

    #[test]
    fn a_qd1_read_on_optane_matches_its_closed_form() {
        let probe = SimulatedProbe::new("optane-ull", 1_000_000).unwrap();
        let bench = Bench { probe, settings: vec!["host.model=\"device-only\"".into()], target_ios: TARGET_IOS };
        let shape = JobShape { pattern: Pattern::Random, read_percent: 100, block_size: 4096, iodepth: 1, numjobs: 1 };
        let figures = bench.run(&[], &shape, 20_000_000, LatencyKind::Total).unwrap();
        let read = figures.read.unwrap();
        assert!(figures.write.is_none());
        // QD1: IOPS is one over the mean latency, the preset's device-only 4 KB read of ~6.5 us.
        assert!((read.iops * read.mean_ns / 1e9 - 1.0).abs() < 0.02, "{read:?}");
        assert!(read.mean_ns > 5_500.0 && read.mean_ns < 7_500.0, "{read:?}");
        // A setting changes it: 20 us of media read instead of 0.63 adds ~19.4 us.
        let slower = bench.run(&[("device.flash.read_ns", 20_000.0)], &shape, 20_000_000, LatencyKind::Total).unwrap();
        let added = slower.read.unwrap().mean_ns - read.mean_ns;
        assert!((added / 19_370.0 - 1.0).abs() < 0.1, "{added}");
    }
}
