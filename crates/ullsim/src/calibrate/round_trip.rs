//! The calibration's round trip (`ullsim round-trip TRUTH --base BASE -o DIR`): a drive the simulator
//! knows (the truth) runs the probe set, its fio JSON is calibrated from another base, and the preset
//! that comes out runs the same jobs, and jobs the input did not have, beside the truth. How well a base
//! can be made into a drive, measured where the answer is known: issue 34's check (the fitted figures
//! within 5%, the points not in the input within 15%), and a user's way to see what a base can and cannot
//! reach before fitting it to their own drive.
//!
//! Both sides run through [`SimulatedProbe`] with the same duration, so the comparison is of devices, not
//! of run lengths.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::calibration::{calibrate, Calibration, Options};
use super::fio_read::read_file;
use super::probe::{probe_set, ProbeFile, ProbePoints};
use super::probe_sim::SimulatedProbe;
use super::JobShape;
use crate::engine::Time;

/// How far a figure the fit was given may land from the truth (issue 34: "recover the fitted metrics ...
/// within 5%").
pub const SEEN_TOLERANCE: f64 = 0.05;
/// How far a point the fit never saw may land (issue 34: "unseen points ... within 15%").
pub const UNSEEN_TOLERANCE: f64 = 0.15;

/// The queue depths and job counts of the 4 KiB read sweeps the default probe set leaves out: the unseen
/// points ([`ProbePoints::default`] takes every other one; QD 32 of one job is in its jobs sweep).
pub fn unseen_points() -> ProbePoints {
    ProbePoints { queue_depths: vec![2, 8, 128], job_counts: vec![2, 8] }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct RoundTripOptions {
    /// The drive to recover: a built-in preset or a preset file.
    pub truth: String,
    /// The calibration's options (its base, settings, I/Os per simulated job).
    pub calibration: Options,
    /// Each read job's measured time, on both sides.
    pub duration_ns: Time,
    /// Each write job's measured time, on both sides: longer, as the real probe's (a NAND drive's steady
    /// sequential writes run at tens of I/Os per second).
    pub write_duration_ns: Time,
    /// Also the DESTRUCTIVE write files.
    pub writes: bool,
}

/// Which of a job's figures a check compares, and how it counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckKind {
    /// A headline figure the fit was given (QD1 latency, saturation IOPS, a bandwidth, the steady write
    /// rate): within [`SEEN_TOLERANCE`].
    Fitted,
    /// Another figure the fit was given: within [`UNSEEN_TOLERANCE`] (the fit weighs it against the rest).
    Given,
    /// A point not in the input: within [`UNSEEN_TOLERANCE`].
    Unseen,
}

/// One figure of one job, the truth's beside the fitted preset's.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub job: String,
    pub direction: &'static str,
    /// "IOPS" or "mean latency".
    pub figure: &'static str,
    pub kind: CheckKind,
    pub truth: f64,
    pub fitted: f64,
    pub tolerance: f64,
}

impl Check {
    /// The fitted preset's figure off the truth's, as a share.
    pub fn off(&self) -> f64 {
        self.fitted / self.truth - 1.0
    }

    pub fn passes(&self) -> bool {
        self.off().abs() <= self.tolerance
    }
}

/// A round trip's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct RoundTrip {
    pub truth: String,
    pub base: String,
    pub calibration: Calibration,
    /// The preset file written.
    pub preset: PathBuf,
    pub checks: Vec<Check>,
}

/// Run a round trip; the probe results go under `dir/truth/`, the fitted preset is `dir/fitted.toml`, and
/// the fitted preset's results under `dir/fitted/`. `progress(done, total)` follows the calibration.
pub fn round_trip(
    options: &RoundTripOptions,
    dir: &Path,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<RoundTrip, String> {
    // The settings are over both drives: the truth's jobs run on the host (and drive state) they describe,
    // as the calibration's and the fitted preset's do.
    let truth = Sides::new(&options.truth, options, options.calibration.settings.clone())?;
    let wanted = |f: &ProbeFile| f.measured && (options.writes || !f.destructive());
    let given_files: Vec<ProbeFile> = probe_set(&ProbePoints::default()).into_iter().filter(wanted).collect();
    // Only the 4 KiB read sweeps have points left out.
    let unseen_files: Vec<ProbeFile> = probe_set(&unseen_points())
        .into_iter()
        .filter(|f| f.measured && (f.stem == "randread-4k-qd" || f.stem == "randread-4k-jobs"))
        .map(|f| ProbeFile { stem: format!("{}-unseen", f.stem), ..f })
        .collect();
    let given = write_all(&dir.join("truth"), &truth.run(&given_files)?)?;
    let unseen_truth = write_all(&dir.join("truth"), &truth.run(&unseen_files)?)?;
    let calibration = calibrate(&given, &options.calibration, progress)?;
    let preset = dir.join("fitted.toml");
    std::fs::write(&preset, calibration.preset_toml("fitted"))
        .map_err(|e| format!("{}: cannot write the preset: {e}", preset.display()))?;
    // The fitted preset, on the host the calibration ran and fitted (a host key is not the preset's).
    let mut settings = options.calibration.settings.clone();
    settings.extend(calibration.host_settings());
    let fitted = Sides::new(&preset.display().to_string(), options, settings)?;
    let fitted_given = write_all(&dir.join("fitted"), &fitted.run(&given_files)?)?;
    let fitted_unseen = write_all(&dir.join("fitted"), &fitted.run(&unseen_files)?)?;
    let mut checks = compare(&given, &fitted_given, false)?;
    checks.extend(compare(&unseen_truth, &fitted_unseen, true)?);
    Ok(RoundTrip { truth: options.truth.clone(), base: options.calibration.base.clone(), calibration, preset, checks })
}

/// A drive's probe, with the read files' duration and the write files'.
struct Sides {
    reads: SimulatedProbe,
    writes: SimulatedProbe,
}

impl Sides {
    fn new(device: &str, options: &RoundTripOptions, settings: Vec<String>) -> Result<Sides, String> {
        let probe = |ns| SimulatedProbe::new(device, ns)?.with_settings(settings.clone());
        Ok(Sides { reads: probe(options.duration_ns)?, writes: probe(options.write_duration_ns)? })
    }

    /// Run `files`, each with its side's duration: the read files, then the write files.
    fn run(&self, files: &[ProbeFile]) -> Result<Vec<(String, Value)>, String> {
        let (writes, reads): (Vec<ProbeFile>, Vec<ProbeFile>) = files.iter().cloned().partition(|f| f.destructive());
        let mut documents = self.reads.run(&reads)?;
        documents.extend(self.writes.run(&writes)?);
        Ok(documents)
    }
}

/// Write each `(stem, document)` as `dir/STEM.json`; the paths written.
fn write_all(dir: &Path, documents: &[(String, Value)]) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    documents
        .iter()
        .map(|(stem, document)| {
            let path = dir.join(format!("{stem}.json"));
            let text = serde_json::to_string_pretty(document).map_err(|e| e.to_string())?;
            std::fs::write(&path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(path)
        })
        .collect()
}

/// The headline figures a fit must give back: the QD1 4 KiB read's latency, the deep 4 KiB reads' IOPS
/// (the saturation, one job and several), the sequential bandwidths, the steady 4 KiB random writes' IOPS.
fn headline(shape: &JobShape, figure: &str) -> bool {
    let small = shape.block_size <= 4096;
    match (shape.read_percent, figure) {
        (100, "mean latency") => small && shape.outstanding() == 1,
        (100, "IOPS") => (small && shape.outstanding() >= 64) || shape.pattern == super::Pattern::Sequential,
        (0, "IOPS") => (small && shape.outstanding() >= 32) || shape.pattern == super::Pattern::Sequential,
        _ => false,
    }
}

/// Checks of every job of `truth` against the job of the same name in `fitted`.
fn compare(truth: &[PathBuf], fitted: &[PathBuf], unseen: bool) -> Result<Vec<Check>, String> {
    let read = |paths: &[PathBuf]| -> Result<Vec<_>, String> {
        let mut jobs = Vec::new();
        for path in paths {
            jobs.extend(read_file(path).map_err(|e| e.to_string())?);
        }
        Ok(jobs)
    };
    let truth = read(truth)?;
    let fitted = raw_figures(fitted)?;
    let mut checks = Vec::new();
    for t in &truth {
        for (direction, td) in [("read", &t.read), ("write", &t.write)] {
            let Some(td) = td else { continue };
            // A job the fitted drive completed nothing of is as far off as can be (no rate, no latency).
            let (iops, mean_ns) = fitted.get(&(t.job.clone(), direction)).copied().unwrap_or((0.0, f64::INFINITY));
            for (figure, truth, fitted) in [("IOPS", td.iops, iops), ("mean latency", td.mean_ns, mean_ns)] {
                let kind = match (unseen, headline(&t.shape, figure)) {
                    (true, _) => CheckKind::Unseen,
                    (false, true) => CheckKind::Fitted,
                    (false, false) => CheckKind::Given,
                };
                let tolerance = if kind == CheckKind::Fitted { SEEN_TOLERANCE } else { UNSEEN_TOLERANCE };
                checks.push(Check { job: t.job.clone(), direction, figure, kind, truth, fitted, tolerance });
            }
        }
    }
    Ok(checks)
}

/// (IOPS, mean latency) by (job, direction).
type RawFigures = HashMap<(String, &'static str), (f64, f64)>;

/// Each job's (IOPS, mean latency) per direction of `paths` (fio-json written by the probe), read as they
/// are: the fitted drive may complete no I/O of a job, which the fio reader refuses as input.
fn raw_figures(paths: &[PathBuf]) -> Result<RawFigures, String> {
    let mut figures = HashMap::new();
    for path in paths {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let document: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        for job in document["jobs"].as_array().into_iter().flatten() {
            let name = job["jobname"].as_str().unwrap_or_default().to_string();
            for direction in ["read", "write"] {
                let d = &job[direction];
                if d["io_bytes"].as_u64().unwrap_or(0) > 0 {
                    let (iops, mean) = (d["iops"].as_f64().unwrap_or(0.0), d["lat_ns"]["mean"].as_f64());
                    figures.insert((name.clone(), direction), (iops, mean.unwrap_or(f64::INFINITY)));
                }
            }
        }
    }
    Ok(figures)
}

impl RoundTrip {
    /// The checks as a table, then one line per kind: how many are within their tolerance.
    pub fn table_text(&self) -> String {
        use std::fmt::Write as _;
        let mut text = String::new();
        let _ = writeln!(
            text,
            "round trip: {} calibrated from {}\n{:<28} {:>5} {:<12} {:<7} {:>12} {:>12} {:>8} {:>6}",
            self.truth, self.base, "job", "dir", "figure", "kind", "truth", "fitted", "off", "within"
        );
        for c in &self.checks {
            let scale = if c.figure == "IOPS" { 1.0 } else { 1e3 };
            let kind = match c.kind {
                CheckKind::Fitted => "fitted",
                CheckKind::Given => "given",
                CheckKind::Unseen => "unseen",
            };
            let _ = writeln!(
                text,
                "{:<28} {:>5} {:<12} {:<7} {:>12.1} {:>12.1} {:>+7.1}% {:>5}{}",
                c.job,
                c.direction,
                if c.figure == "IOPS" { "IOPS" } else { "mean us" },
                kind,
                c.truth / scale,
                c.fitted / scale,
                c.off() * 100.0,
                format!("{:.0}%", c.tolerance * 100.0),
                if c.passes() { "" } else { "  MISS" }
            );
        }
        for (kind, name) in [(CheckKind::Fitted, "fitted"), (CheckKind::Given, "given"), (CheckKind::Unseen, "unseen")]
        {
            let of_kind: Vec<&Check> = self.checks.iter().filter(|c| c.kind == kind).collect();
            let passing = of_kind.iter().filter(|c| c.passes()).count();
            let _ = writeln!(text, "{name}: {passing} of {} within their tolerance", of_kind.len());
        }
        text
    }
}
