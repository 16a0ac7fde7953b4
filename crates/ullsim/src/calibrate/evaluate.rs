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
/// Longest a writer is simulated to match how long it was measured: a drive's write rate drifts for
/// seconds after preconditioning as its garbage collection settles into step (an `mqsim-mlc`-like drive
/// with 16 KiB pages writes 4 KiB at random 5,600/s over 0.5 s, 5,200/s over 1 s, 4,950/s over 2 s and
/// 4,800/s over 4 s), so a writer simulated for less than its measurement is judged in another state
/// [inferred: 2 s is the round trip's write duration (`round_trip.rs`), and a fit's write jobs then cost
/// ~1-3 s of CPU each; a real probe's 60 s is out of reach, and past 2 s the drift is a few percent].
const MAX_WRITE_RUN_NS: Time = 2_000_000_000;
/// Most bytes a writer simulated for its measured time writes, in 4 KiB pages per I/O a job aims for: a
/// fast writer's 2 s is gigabytes, each page of which a base's garbage collection multiplies
/// (`znand-ull`'s 128 KiB writes at 3.2 GB/s over a TLC base: a write file's fit ran past 14 min where the
/// slow writers' took 3) [inferred: 4 x 20,000 x 4 KiB = 328 MB still runs a 5,600-IOPS 4 KiB writer
/// (23 MB/s) and a 90 MB/s sequential one their full 2 s, the drifting cases above; a faster writer's
/// blocks refill, and its collection settles, in proportion to the bytes it writes].
const MAX_WRITE_RUN_PAGES_PER_TARGET_IO: f64 = 4.0;
/// The page of [`MAX_WRITE_RUN_PAGES_PER_TARGET_IO`].
const WRITE_RUN_PAGE_BYTES: f64 = 4096.0;

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
    /// `host`, to read base values from by their scenario keys; and the capacity the host sees, bytes
    /// (`capacity_bytes`).
    pub fn base_json(&self) -> Result<serde_json::Value, String> {
        let shape =
            JobShape { pattern: super::Pattern::Random, read_percent: 100, block_size: 4096, iodepth: 1, numjobs: 1 };
        let scenario = self.probe.scenario_of("base", &shape, MIN_RUN_NS, &self.settings)?;
        let device = serde_json::to_value(&scenario.device).map_err(|e| e.to_string())?;
        let host = serde_json::to_value(&scenario.host).map_err(|e| e.to_string())?;
        let capacity_bytes = scenario.device.logical_capacity_bytes();
        Ok(serde_json::json!({ "device": device, "host": host, "capacity_bytes": capacity_bytes }))
    }
}

/// How long to simulate `target`: `target_ios` at its measured IOPS, within bounds; a writer at least as
/// long as it was measured, up to [`MAX_WRITE_RUN_NS`] and the time its writes take to reach
/// [`MAX_WRITE_RUN_PAGES_PER_TARGET_IO`] 4 KiB pages per target I/O.
pub fn run_ns(target: &Target, target_ios: f64) -> Time {
    let iops: f64 = [target.measured.read, target.measured.write].iter().flatten().map(|f| f.iops).sum();
    if iops <= 0.0 {
        return MAX_RUN_NS;
    }
    let for_ios = ((target_ios / iops * 1e9) as Time).clamp(MIN_RUN_NS, MAX_RUN_NS);
    let Some(write) = target.measured.write else { return for_ios };
    let write_bytes_per_s = write.iops * target.shape.block_size as f64;
    let bytes = MAX_WRITE_RUN_PAGES_PER_TARGET_IO * target_ios * WRITE_RUN_PAGE_BYTES;
    let for_bytes = if write_bytes_per_s > 0.0 { (bytes / write_bytes_per_s * 1e9) as Time } else { MAX_WRITE_RUN_NS };
    for_ios.max(target.runtime_ns.min(MAX_WRITE_RUN_NS).min(for_bytes))
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

    #[test]
    fn a_job_runs_for_its_ios_and_a_writer_as_long_as_it_was_measured_within_bounds() {
        let figures = |iops| Some(Figures { iops, mean_ns: 1e5, p99_ns: None });
        let target = |read, write, runtime_ns| Target {
            shape: JobShape { pattern: Pattern::Random, read_percent: 0, block_size: 4096, iodepth: 32, numjobs: 1 },
            measured: JobFigures { read, write },
            source: "t.json: job".into(),
            percentiles: LatencyKind::Completion,
            runtime_ns,
        };
        // 20,000 I/Os at 100K IOPS: 200 ms, however long a reader was measured.
        assert_eq!(run_ns(&target(figures(1e5), None, 30_000_000_000), TARGET_IOS), 200_000_000);
        // At 1M IOPS, 20 ms; at 1 IOPS the bound, 1 s; at 100M, at least 1 ms; with no rate, the bound.
        assert_eq!(run_ns(&target(figures(1e6), None, 0), TARGET_IOS), 20_000_000);
        assert_eq!(run_ns(&target(figures(1.0), None, 0), TARGET_IOS), MAX_RUN_NS);
        assert_eq!(run_ns(&target(figures(1e8), None, 0), TARGET_IOS), MIN_RUN_NS);
        assert_eq!(run_ns(&target(figures(0.0), None, 0), TARGET_IOS), MAX_RUN_NS);
        // A writer of 30K IOPS measured for 1.5 s runs 1.5 s though 20,000 I/Os take 667 ms; measured for
        // 60 s, 2 s; measured for less than its I/Os take, for its I/Os (a mixed job counts both directions).
        assert_eq!(run_ns(&target(None, figures(3e4), 1_500_000_000), TARGET_IOS), 1_500_000_000);
        assert_eq!(run_ns(&target(None, figures(3e4), 60_000_000_000), TARGET_IOS), MAX_WRITE_RUN_NS);
        assert_eq!(run_ns(&target(figures(5e4), figures(5e4), 100_000_000), TARGET_IOS), 200_000_000);
        // A fast writer measured for 2 s writes 4 x 20,000 4 KiB pages: at 160K IOPS of 4 KiB, 500 ms.
        assert_eq!(run_ns(&target(None, figures(1.6e5), 2_000_000_000), TARGET_IOS), 500_000_000);
        // A writer of 5,000 IOPS reaches 2 s long before 80,000 pages.
        assert_eq!(run_ns(&target(None, figures(5e3), 2_000_000_000), TARGET_IOS), 2_000_000_000);
        // 128 KiB writes are 32 pages each: at 2,000 IOPS they write the 80,000 pages in 1.25 s, where
        // 4 KiB writes at that rate run the 2 s they were measured.
        let large = |iops| Target {
            shape: JobShape { block_size: 131072, ..target(None, None, 0).shape },
            ..target(None, figures(iops), 2_000_000_000)
        };
        assert_eq!(run_ns(&large(2e3), TARGET_IOS), 1_250_000_000);
        assert_eq!(run_ns(&target(None, figures(2e3), 2_000_000_000), TARGET_IOS), 2_000_000_000);
    }
}
