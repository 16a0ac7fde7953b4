//! Runs a measured job's shape in the simulator: one scenario per job, the base device with the fit's
//! settings over it, one flow of the job's shape, long enough for a stable 99th percentile.

use std::path::PathBuf;

use rayon::prelude::*;

use super::fit::{Figures, JobFigures, Target};
use super::JobShape;
use crate::config::Scenario;
use crate::metrics::{OpResult, FIO_PERCENTILES};

/// I/Os a simulated job aims for [inferred: 99th percentiles of 20,000 samples move by ~1-2% between
/// seeds, below the fit's tolerance, and a job of 1 M IOPS still simulates in ~50 ms of CPU].
const TARGET_IOS: f64 = 20_000.0;
/// Bounds on a job's simulated time: at least enough for a queue to fill (1 ms), at most what a slow job
/// needs (a 128 KiB writer of a few hundred MB/s) without making a fit slow.
const MIN_RUN_NS: u64 = 1_000_000;
const MAX_RUN_NS: u64 = 1_000_000_000;
/// The first part of a run is not measured, as fio's `ramp_time` [inferred: a fifth fills queues and caches
/// at every shape of the probe set].
const WARMUP_SHARE: u64 = 5;

/// Whether a measured percentile counts from issue (fio's `lat`) or from submission (`clat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PercentileKind {
    Issue,
    Submission,
}

/// Where and how jobs are simulated.
#[derive(Debug, Clone)]
pub struct Bench {
    /// The base device: a built-in preset's name or a preset file's path.
    pub device: String,
    /// Extra scenario settings (`--set` form, `host.model="device-only"`) every job gets.
    pub settings: Vec<String>,
    /// Directory preset paths are relative to.
    pub dir: PathBuf,
    /// fio's `ioengine` of the simulated jobs.
    pub ioengine: String,
    pub seed: u64,
}

impl Bench {
    /// A bench of `device` with the default host and `libaio` jobs.
    pub fn new(device: &str) -> Self {
        Bench {
            device: device.to_string(),
            settings: Vec::new(),
            dir: PathBuf::from("."),
            ioengine: "libaio".into(),
            seed: 1,
        }
    }

    /// The scenario of one job: `shape` for `run_ns` of simulated time.
    pub fn scenario_text(&self, shape: &JobShape, run_ns: u64) -> String {
        let mix =
            if shape.read_percent % 100 == 0 { String::new() } else { format!("rwmixread = {}\n", shape.read_percent) };
        let warmup = run_ns / WARMUP_SHARE;
        format!(
            "name = \"calibrate-{rw}-{bs}-qd{qd}-jobs{jobs}\"\nseed = {seed}\n[run]\nduration = \"{run}ns\"\nwarmup = \
             \"{warmup}ns\"\n[device]\npreset = {device:?}\n[[flow]]\nname = \"job\"\nrw = \"{rw}\"\n{mix}bs = \
             {bs}\niodepth = {qd}\nnumjobs = {jobs}\nioengine = {engine:?}\ndirect = 1\n",
            rw = shape.fio_rw(),
            bs = shape.block_size,
            qd = shape.iodepth,
            jobs = shape.numjobs,
            seed = self.seed,
            run = run_ns + warmup,
            device = self.device,
            engine = self.ioengine,
        )
    }

    /// Simulate `shape` for `run_ns` (after a warm-up) with `settings` over the base.
    pub fn run(
        &self,
        settings: &[(&'static str, f64)],
        shape: &JobShape,
        run_ns: u64,
        kind: PercentileKind,
    ) -> Result<JobFigures, String> {
        let text = self.scenario_text(shape, run_ns);
        let mut sets = self.settings.clone();
        sets.extend(settings.iter().map(|(key, value)| format!("{key}={}", setting_text(*value))));
        let scenario =
            Scenario::from_toml_str(&text, "calibration job", &self.dir, &sets).map_err(|e| e.to_string())?;
        let results = crate::run_scenario(&scenario).map_err(|e| e.to_string())?;
        let flow = results.flows.first().ok_or("the job's scenario has no flow")?;
        Ok(JobFigures {
            read: flow.read.as_ref().map(|r| figures(r, kind)),
            write: flow.write.as_ref().map(|w| figures(w, kind)),
        })
    }

    /// Simulate every target in parallel, each for the time its measured IOPS say it needs.
    pub fn evaluate(&self, settings: &[(&'static str, f64)], targets: &[&Target]) -> Result<Vec<JobFigures>, String> {
        targets.par_iter().map(|t| self.run(settings, &t.shape, run_ns(t), t.percentiles)).collect()
    }
}

/// A setting as the scenario reads it: whole numbers as integers (integer keys take nothing else).
fn setting_text(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 9e15 {
        format!("{}", value as i64)
    } else {
        format!("{value:e}")
    }
}

/// How long to simulate `target`: [`TARGET_IOS`] at its measured IOPS, within bounds.
pub fn run_ns(target: &Target) -> u64 {
    let iops: f64 = [target.measured.read, target.measured.write].iter().flatten().map(|f| f.iops).sum();
    if iops <= 0.0 {
        return MAX_RUN_NS;
    }
    ((TARGET_IOS / iops * 1e9) as u64).clamp(MIN_RUN_NS, MAX_RUN_NS)
}

/// A direction's figures: IOPS, mean from issue, and the 99th percentile measured as `kind` says.
fn figures(op: &OpResult, kind: PercentileKind) -> Figures {
    let p99_index = FIO_PERCENTILES.iter().position(|&p| p == 99.0).expect("fio reports the 99th percentile");
    let p99 = match (kind, &op.detail.after_submission) {
        (PercentileKind::Submission, Some(after)) => after.percentiles[p99_index],
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
        let bench = Bench { settings: vec!["host.model=\"device-only\"".into()], ..Bench::new("optane-ull") };
        let shape = JobShape { pattern: Pattern::Random, read_percent: 100, block_size: 4096, iodepth: 1, numjobs: 1 };
        let figures = bench.run(&[], &shape, 20_000_000, PercentileKind::Issue).unwrap();
        let read = figures.read.unwrap();
        assert!(figures.write.is_none());
        // QD1: IOPS is one over the mean latency, the preset's device-only 4 KB read of ~6.5 us.
        assert!((read.iops * read.mean_ns / 1e9 - 1.0).abs() < 0.02, "{read:?}");
        assert!(read.mean_ns > 5_500.0 && read.mean_ns < 7_500.0, "{read:?}");
        // A setting changes it: 20 us of media read instead of 0.63 adds ~19.4 us.
        let slower =
            bench.run(&[("device.flash.read_ns", 20_000.0)], &shape, 20_000_000, PercentileKind::Issue).unwrap();
        let added = slower.read.unwrap().mean_ns - read.mean_ns;
        assert!((added / 19_370.0 - 1.0).abs() < 0.1, "{added}");
    }

    #[test]
    fn settings_are_written_as_the_scenario_reads_them() {
        assert_eq!(setting_text(12000.0), "12000");
        assert_eq!(setting_text(0.25), "2.5e-1");
        assert_eq!(setting_text(2.5e9), "2500000000");
    }
}
