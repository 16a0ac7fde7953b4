//! A calibration end to end: fio results read ([`super::fio_read`]), turned into fit targets, the base
//! device fitted to them ([`super::fit`]), and the outcome as a fit table and a preset file whose every
//! fitted value names the files it was fitted from.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Serialize;

use super::evaluate::Bench;
use super::fio_latency::LatencyKind;
use super::fio_read::{read_file, MeasuredDirection, MeasuredJob};
use super::fit::{fit, Figures, FitOutcome, JobFigures, Metric, Target, Verdict};
use super::knobs::{json_at, value_at, Knob, KNOBS};
use super::probe_sim::SimulatedProbe;
use super::JobShape;

/// Two jobs of one shape whose IOPS differ by more than this share contradict each other [inferred: fio
/// runs of one shape on one drive repeat within a few percent once ramped; 25% is a different drive, state
/// or setup].
const CONTRADICTION: f64 = 0.25;

/// What to calibrate from.
#[derive(Debug, Clone)]
pub struct Options {
    /// The device to start from: a built-in preset or a preset file (a scenario file lends its device and
    /// host).
    pub base: String,
    /// `key=value` settings over the base for every simulated job (the host: `host.model=...`).
    pub settings: Vec<String>,
    /// I/Os each simulated job aims for (fewer: a faster, rougher fit).
    pub target_ios: f64,
}

impl Options {
    pub fn new(base: &str) -> Self {
        Options { base: base.to_string(), settings: Vec::new(), target_ios: super::evaluate::TARGET_IOS }
    }
}

/// One line of the fit table: a job's direction, measured beside simulated with the fitted values.
#[derive(Debug, Clone, Serialize)]
pub struct FitRow {
    pub source: String,
    pub shape: JobShape,
    /// fio's `rw` of the shape (for readers of the JSON: the report, Python).
    pub rw: &'static str,
    pub direction: &'static str,
    pub measured: Figures,
    pub simulated: Option<Figures>,
    /// Keys this job decided (none: it is a check of the others).
    pub decides: Vec<&'static str>,
}

/// A calibration's outcome (as JSON: `ullsim calibrate --json`, docs/calibration.md).
#[derive(Debug, Clone, Serialize)]
pub struct Calibration {
    pub base: String,
    pub outcome: FitOutcome,
    /// Switches of the base the fitted knobs need on ([`Knob::requires`]).
    pub enabled: Vec<(&'static str, String)>,
    /// An SLC cache's sizes and times the fit gave a base without one ([`super::slc_cache`]): the preset
    /// writes them if the fit turned the cache on (those not fitted).
    pub prepared: Vec<(&'static str, f64)>,
    /// Device keys given with `--set`: the fit ran with them, so the preset keeps them.
    pub given: Vec<(String, String)>,
    pub rows: Vec<FitRow>,
    /// The files read.
    pub files: Vec<PathBuf>,
    /// What the input lacked or what was left out, one line each, naming the file and job.
    pub warnings: Vec<String>,
}

/// Read `paths`, fit the base of `options` to them. `progress(done, total)` follows the fit's stages.
pub fn calibrate(
    paths: &[PathBuf],
    options: &Options,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Calibration, String> {
    if paths.is_empty() {
        return Err("no results given: name fio JSON files (fio --output-format=json --output=FILE)".into());
    }
    let mut jobs = Vec::new();
    for path in paths {
        jobs.extend(read_file(path).map_err(|e| e.to_string())?);
    }
    let (targets, mut warnings) = targets_from(&jobs)?;
    if paths.len() == 1 {
        warnings.push(format!(
            "{}: one results file: only what its jobs measure is fitted; `ullsim probe` writes the full set",
            paths[0].display()
        ));
    }
    let base_name = preset_base(&options.base)?;
    let probe = SimulatedProbe::new(&options.base, 1_000_000)?;
    let mut bench = Bench { probe, settings: options.settings.clone(), target_ios: options.target_ios };
    // A base without an SLC cache gets one to turn on (sizes and times: `slc_cache`), inert while off.
    let prepared = super::slc_cache::for_base(&bench.base_json()?);
    bench.settings.extend(prepared.iter().map(|(key, value)| super::knobs::setting(key, *value)));
    let base_config = bench.base_json()?;
    // A base whose value is none of a choice's (a collector the fit does not choose among) keeps it: the
    // knob is left out of the fit, and the warnings say so.
    let mut knobs: Vec<&Knob> = Vec::new();
    let mut base: Vec<f64> = Vec::new();
    for knob in KNOBS {
        let json = json_at(&base_config, knob.key);
        match json.and_then(|v| knob.value_of(v)) {
            Some(value) => {
                knobs.push(knob);
                base.push(value);
            }
            None => warnings.push(format!(
                "{}: the base's {} is none of the values the fit chooses among ({}): left as the base has it",
                knob.key,
                json.map_or("value".to_string(), |v| v.to_string()),
                knob.choices.join(", ")
            )),
        }
    }
    // A knob the data decides may need a switch of the base on (the read spread, the spread model).
    let mut enabled = Vec::new();
    for knob in knobs.iter().filter(|k| targets.iter().any(|t| (k.decided_by)(&t.shape) && measures(t, k.metrics))) {
        let Some((key, value)) = knob.requires else { continue };
        if value_at(&base_config, key) == Some(0.0) && !enabled.iter().any(|(k, _)| *k == key) {
            bench.settings.push(format!("{key}={value}"));
            enabled.push((key, value.to_string()));
        }
    }
    let outcome = fit(&targets, &knobs, &base, &|s, t| bench.evaluate(s, t), progress)?;
    let all: Vec<&Target> = targets.iter().collect();
    let simulated = bench.evaluate(&outcome.settings(), &all)?;
    let mut rows = Vec::new();
    for (target, simulated) in targets.iter().zip(&simulated) {
        let decides: Vec<&'static str> =
            knobs.iter().filter(|k| (k.decided_by)(&target.shape)).map(|k| k.key).collect();
        for (direction, measured, simulated) in
            [("read", target.measured.read, simulated.read), ("write", target.measured.write, simulated.write)]
        {
            if let Some(measured) = measured {
                rows.push(FitRow {
                    source: target.source.clone(),
                    shape: target.shape,
                    rw: target.shape.fio_rw(),
                    direction,
                    measured,
                    simulated,
                    decides: decides.clone(),
                });
            }
        }
    }
    let mut given: Vec<(String, String)> = Vec::new();
    for setting in &options.settings {
        if let Some((key, value)) = setting.split_once('=').filter(|(k, _)| is_device_key(k.trim())) {
            let value = crate::config::scenario::parse_override_value(value.trim());
            given.push((key.trim().to_string(), value.to_string()));
        }
    }
    Ok(Calibration { base: base_name, outcome, enabled, prepared, given, rows, files: paths.to_vec(), warnings })
}

/// What the preset file names as its `base`: a built-in's name as given, a preset file's path made
/// absolute (the preset's own `base` is read relative to the preset's directory, wherever it is written).
/// A scenario file cannot be a preset's base: its device is a preset plus keys.
fn preset_base(base: &str) -> Result<String, String> {
    if !crate::config::preset_file::is_path(base) {
        return Ok(base.to_string());
    }
    let text = crate::config::preset_file::read(std::path::Path::new(base))?;
    if text.parse::<toml::Table>().is_ok_and(|t| t.contains_key("device")) {
        return Err(format!(
            "--base {base}: a scenario file, not a preset; name its device's preset (and --set its [device] and \
             [host] keys)"
        ));
    }
    let absolute = std::fs::canonicalize(base).map_err(|e| format!("--base {base}: {e}"))?;
    Ok(absolute.display().to_string())
}

/// The fit targets of `jobs`, and warnings for what was left out. Jobs rate-limited are left out (their
/// IOPS are their cap's); two jobs of one shape that disagree are an error.
pub fn targets_from(jobs: &[MeasuredJob]) -> Result<(Vec<Target>, Vec<String>), String> {
    let mut warnings = Vec::new();
    let mut targets: Vec<Target> = Vec::new();
    for job in jobs {
        let source = format!("{}: {}", job.file.display(), job.job);
        for warning in &job.warnings {
            warnings.push(format!("{source}: {warning}"));
        }
        if let Some(open_loop) = &job.open_loop {
            warnings.push(format!(
                "{source}: left out: rate-limited ({}), so its IOPS are the limit's, not the drive's",
                open_loop.option
            ));
            continue;
        }
        let figures = |d: &Option<MeasuredDirection>| {
            d.as_ref().map(|d| Figures { iops: d.iops, mean_ns: d.mean_ns, p99_ns: d.p99_ns.map(|p| p as f64) })
        };
        let kind = [&job.read, &job.write]
            .into_iter()
            .flatten()
            .find_map(|d| d.percentiles_of)
            .unwrap_or(LatencyKind::Completion);
        let target = Target {
            shape: job.shape,
            measured: JobFigures { read: figures(&job.read), write: figures(&job.write) },
            source,
            percentiles: kind,
            runtime_ns: job.runtime_ms.saturating_mul(1_000_000),
        };
        if let Some(other) = targets.iter().find(|t| t.shape == target.shape) {
            let total = |f: &JobFigures| [f.read, f.write].iter().flatten().map(|d| d.iops).sum::<f64>();
            let (a, b) = (total(&other.measured), total(&target.measured));
            if (a - b).abs() > CONTRADICTION * a.max(b) {
                return Err(format!(
                    "contradictory results: {} ({a:.0} IOPS) and {} ({b:.0} IOPS) measured the same shape ({} {} B, \
                     iodepth {}, numjobs {}) {:.0}% apart; calibrate from one drive in one state (drop one, or run \
                     both again)",
                    other.source,
                    target.source,
                    target.shape.fio_rw(),
                    target.shape.block_size,
                    target.shape.iodepth,
                    target.shape.numjobs,
                    (a - b).abs() / a.max(b) * 100.0
                ));
            }
        }
        targets.push(target);
    }
    if targets.is_empty() {
        return Err("no job to fit: every job was left out (see the warnings)".into());
    }
    Ok((targets, warnings))
}

/// Whether `target` measured every figure of `metrics` (a 99th percentile is not always reported).
fn measures(target: &Target, metrics: &[Metric]) -> bool {
    [target.measured.read, target.measured.write]
        .iter()
        .flatten()
        .any(|f| metrics.iter().all(|m| *m != Metric::P99 || f.p99_ns.is_some()))
}

impl Calibration {
    /// The calibration as JSON: the fit table's rows, the parameters, the warnings and the preset file's
    /// text (named `name`).
    pub fn to_json(&self, name: &str) -> serde_json::Value {
        let mut value = serde_json::to_value(self).expect("a calibration is plain data");
        value["preset"] = serde_json::Value::String(self.preset_toml(name));
        value
    }

    /// The preset file: `base = ...`, then each fitted value under its table with the files it was fitted
    /// from; what the data left at the base's values is listed in the header.
    pub fn preset_toml(&self, name: &str) -> String {
        let mut text = String::new();
        let files: Vec<String> = self.files.iter().map(|f| f.display().to_string()).collect();
        let _ =
            writeln!(text, "# {name}: calibrated by `ullsim calibrate` from {} over {}", files.join(", "), self.base);
        let _ = writeln!(
            text,
            "# (error: {:.4} before, {:.4} after; docs/calibration.md explains the fit).",
            self.outcome.error_before, self.outcome.error_after
        );
        let left: Vec<String> = self
            .outcome
            .parameters
            .iter()
            .filter(|p| p.verdict != Verdict::Fitted)
            .map(|p| {
                let why = match p.verdict {
                    Verdict::NoData => "no job measures it",
                    _ => "the jobs do not depend on it",
                };
                format!("#   {} ({why})", p.key)
            })
            .collect();
        if !left.is_empty() {
            let _ = writeln!(text, "# Not constrained by the data, so the base's values:\n{}", left.join("\n"));
        }
        // A fitted host key belongs to the scenario the drive runs in, not to the device preset.
        for p in self.outcome.parameters.iter().filter(|p| p.verdict == Verdict::Fitted && !is_device_key(p.key)) {
            let value = value_text(p.key, p.value);
            let (table, key) = p.key.rsplit_once('.').unwrap_or(("", p.key));
            let _ = writeln!(
                text,
                "# host: set {} = {value} in your scenario ([{table}] {key} = {value}); fitted from: {}",
                p.key,
                shorten(&p.from)
            );
        }
        let _ = writeln!(text, "base = {:?}", self.base);
        // Fitted values grouped by their table under [device].
        let mut tables: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for p in self.outcome.parameters.iter().filter(|p| p.verdict == Verdict::Fitted && is_device_key(p.key)) {
            let (table, key) = split_key(p.key);
            let from = shorten(&p.from);
            tables
                .entry(table)
                .or_default()
                .push(format!("{key} = {}  # fitted from: {from}", value_text(p.key, p.value)));
        }
        for (key, value) in &self.enabled {
            let (table, key) = split_key(key);
            tables.entry(table).or_default().push(format!("{key} = {value}  # needed by a fitted value"));
        }
        let parameter = |key: &str| self.outcome.parameters.iter().find(|p| p.key == key);
        let slc_on = parameter("device.slc.enabled").is_some_and(|p| p.value == 1.0);
        let fitted = |key: &str| parameter(key).is_some_and(|p| p.verdict == Verdict::Fitted);
        for (key, value) in self.prepared.iter().filter(|(key, _)| slc_on && !fitted(key)) {
            let (table, key) = split_key(key);
            // Sizes and times: whole bytes and nanoseconds.
            let value = toml_number(*value, true);
            let line = format!("{key} = {value}  # the SLC cache the fit turned on [inferred]: docs/calibration.md");
            tables.entry(table).or_default().push(line);
        }
        for (key, value) in &self.given {
            let (table, key) = split_key(key);
            tables.entry(table).or_default().push(format!("{key} = {value}  # given: --set"));
        }
        for (table, lines) in tables {
            let _ = writeln!(text, "\n[{table}]\n{}", lines.join("\n"));
        }
        text
    }

    /// The fit table: each measured point beside the simulated one.
    pub fn table_text(&self) -> String {
        let mut text = String::new();
        let _ = writeln!(
            text,
            "{:<44} {:>5} {:>12} {:>12} {:>7} {:>10} {:>10} {:>7} {:>10} {:>10} {:>7}",
            "job", "dir", "IOPS meas", "IOPS sim", "diff", "mean us", "sim", "diff", "p99 us", "sim", "diff"
        );
        let diff = |m: f64, s: f64| format!("{:+.1}%", (s / m - 1.0) * 100.0);
        for row in &self.rows {
            let s = row.simulated;
            let (m, p99m) = (row.measured, row.measured.p99_ns);
            let sim = |f: fn(&Figures) -> f64| s.as_ref().map(f);
            let cell = |v: Option<f64>, scale: f64| v.map_or("-".to_string(), |v| format!("{:.1}", v / scale));
            let _ = writeln!(
                text,
                "{:<44} {:>5} {:>12.0} {:>12} {:>7} {:>10.1} {:>10} {:>7} {:>10} {:>10} {:>7}",
                truncate(&row.source, 44),
                row.direction,
                m.iops,
                cell(sim(|f| f.iops), 1.0),
                sim(|f| f.iops).map_or("-".into(), |v| diff(m.iops, v)),
                m.mean_ns / 1e3,
                cell(sim(|f| f.mean_ns), 1e3),
                sim(|f| f.mean_ns).map_or("-".into(), |v| diff(m.mean_ns, v)),
                cell(p99m, 1e3),
                cell(s.and_then(|f| f.p99_ns), 1e3),
                match (p99m, s.and_then(|f| f.p99_ns)) {
                    (Some(a), Some(b)) => diff(a, b),
                    _ => "-".into(),
                },
            );
        }
        let _ = writeln!(text, "\n{:<48} {:>14} {:>14}  from", "parameter", "base", "fitted");
        for p in &self.outcome.parameters {
            let fitted = match p.verdict {
                Verdict::Fitted => value_text(p.key, p.value),
                Verdict::NoData => "(no data)".into(),
                Verdict::Flat => "(not binding)".into(),
            };
            let _ =
                writeln!(text, "{:<48} {:>14} {:>14}  {}", p.key, value_text(p.key, p.base), fitted, shorten(&p.from));
        }
        text
    }

    /// The fitted keys that are not the preset's but the scenario's host (`host.cpu.speed`), as `key=value`
    /// settings (`run --set`) for running the preset on the host it was fitted with.
    pub fn host_settings(&self) -> Vec<String> {
        let host = self.outcome.parameters.iter().filter(|p| p.verdict == Verdict::Fitted && !is_device_key(p.key));
        host.map(|p| super::knobs::setting(p.key, p.value)).collect()
    }
}

/// A key of the device preset (`device.*`), as opposed to one of the scenario's host (`host.cpu.speed`).
fn is_device_key(key: &str) -> bool {
    key.starts_with("device.")
}

fn split_key(key: &str) -> (&str, &str) {
    let path = key.strip_prefix("device.").unwrap_or(key);
    path.rsplit_once('.').unwrap_or(("", path))
}

/// A fitted value as a preset writes it: a choice's literal, else a number.
fn value_text(key: &str, value: f64) -> String {
    match super::knobs::knob(key) {
        Some(knob) if !knob.choices.is_empty() => knob.value_text(value),
        knob => toml_number(value, knob.is_some_and(|k| k.integer)),
    }
}

/// A value as TOML writes it: integers bare, others with their digits.
fn toml_number(value: f64, integer: bool) -> String {
    if integer {
        format!("{}", value.round() as i64)
    } else if value != 0.0 && (value.abs() >= 1e6 || value.abs() < 1e-3) {
        format!("{value:.4e}")
    } else {
        format!("{value:.4}")
    }
}

/// Sources as one line: all of them when few, else the first three and a count.
fn shorten(sources: &[String]) -> String {
    match sources.len() {
        0 => "-".into(),
        1..=3 => sources.join(", "),
        n => format!("{} and {} more", sources[..3].join(", "), n - 3),
    }
}

fn truncate(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_string()
    } else {
        let tail: String = text.chars().rev().take(width - 1).collect::<Vec<_>>().into_iter().rev().collect();
        format!("…{tail}")
    }
}
