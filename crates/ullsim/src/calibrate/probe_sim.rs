//! The probe set run in the simulator (`ullsim probe --simulate`): each measured job of [`super::probe`] as
//! the one flow of a scenario on the given device, its results in fio's JSON layout
//! (`export/fio_json.rs`), gathered per job file as fio writes them. What a calibration reads in place of a
//! real drive's results: the input of its round trip.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::Value;

use super::probe::{Duration, ProbeFile, ProbeJob, IOENGINE};
use super::shape::{JobShape, Pattern};
use crate::config::device::MappingKind;
use crate::config::preset_file::is_path;
use crate::config::units::describe_ns;
use crate::engine::Time;
use crate::export::fio_json::fio_json;
use crate::Scenario;

/// The device the probes run on, and how long each runs.
#[derive(Debug, Clone)]
pub struct SimulatedProbe {
    /// `[device]`, `[drives]`, `[md]`, `[host]` and `seed` of the scenario the probes are flows of.
    base: toml::Table,
    /// Where the base's preset files are found.
    dir: PathBuf,
    /// What the user named (a preset or a scenario file), for messages.
    source: String,
    /// Measured time of each job.
    duration_ns: Time,
    /// `key=value` settings (as `--set` takes them) over the base for every job, before a job's own.
    settings: Vec<String>,
}

/// What part of a probe job's simulated time goes before its measurement, as fio's `ramp_time` (5 s of a
/// 35 s job): a fifth of the measured time [inferred: the queues fill within microseconds; garbage
/// collection's pace settles within a few milliseconds of the preconditioned state].
const RAMP_FRACTION: u64 = 5;

/// Timed writes before a write job (`device.ftl.precondition_timed_writes`, blocks per plane): the counted
/// preconditioning starts every plane at the same point of its GC cycle, and a drive started so runs in
/// step for its first cycles, its write rate swinging by 2-4x over seconds (an `mqsim-mlc`-like drive with
/// 16 KiB pages: 2,087 IOPS over 60-360 ms, 6,421 over 0.2-1.2 s, 2,471 over 3-6 s). Four blocks per plane
/// of timed writes put each plane at its own point: 2,807, 2,409 and 2,438 over the same windows, for
/// ~0.1 s of setup on that drive (one or two blocks were not enough: 10,860 and 3,580 over the first
/// window).
const TIMED_PRECONDITION: &str = "device.ftl.precondition_timed_writes=4";

/// The SLC cache of a write job's drive starts exhausted (`device.ftl.precondition_slc_exhausted`): the real
/// probe's preconditioning writes for half an hour without a pause, far past any cache (a 1 TB drive's 6 GB
/// static part lasts seconds at its write rate), and the write jobs follow it and each other within the
/// time fio takes to start a job [inferred: well under a second; a drive that folds in a shorter pause
/// than that refills its cache in the first seconds of a job's 10 s ramp]. A real job's measured minute
/// sees native writes; a simulated job of 2 s started with an empty cache would see the cache alone
/// (`tlc-consumer`'s 4 KiB random writes: 509K IOPS in SLC).
const SLC_EXHAUSTED: &str = "device.ftl.precondition_slc_exhausted=true";

impl SimulatedProbe {
    /// The device of `what`: a built-in preset's name, a preset file's path, or a scenario file (a TOML
    /// file with a `[device]` table), whose device, drives, host and seed are used and whose flows and run
    /// are not. `duration_ns`: each job's measured time. Errors say what `what` was taken for.
    pub fn new(what: &str, duration_ns: Time) -> Result<SimulatedProbe, String> {
        if duration_ns == 0 {
            return Err("--duration: expected a duration > 0".into());
        }
        let preset = |preset: &str| toml::Table::from_iter([("device".to_string(), device_table(preset))]);
        let (base, dir) = if !is_path(what) {
            (preset(what), PathBuf::new())
        } else {
            let text = crate::config::preset_file::read(Path::new(what))?;
            let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
                format!("{what}: invalid TOML ({}); expected a scenario or a preset file", e.message().trim())
            })?;
            match table.contains_key("device") {
                // A scenario: its machine, without its workload.
                true => {
                    let keep = ["seed", "host", "device", "drives", "md"];
                    let base = table.into_iter().filter(|(k, _)| keep.contains(&k.as_str())).collect();
                    (base, Path::new(what).parent().map(Path::to_path_buf).unwrap_or_default())
                }
                false => (preset(what), PathBuf::new()),
            }
        };
        let probe = SimulatedProbe { base, dir, source: what.to_string(), duration_ns, settings: Vec::new() };
        probe.check()?;
        Ok(probe)
    }

    /// The same probe with `settings` (`key=value`, as `--set` takes them) over the base for every job: the
    /// host the jobs ran on (`ullsim probe --simulate DEVICE --set host.cpu.speed=0.8`). Checked as
    /// [`Self::new`] checks the device.
    pub fn with_settings(mut self, settings: Vec<String>) -> Result<SimulatedProbe, String> {
        self.settings = settings;
        self.check()?;
        Ok(self)
    }

    /// The device loads, checked once before any job runs (or any file is written).
    fn check(&self) -> Result<(), String> {
        let check = JobShape { pattern: Pattern::Random, read_percent: 100, block_size: 4096, iodepth: 1, numjobs: 1 };
        self.scenario(&ProbeJob { name: "check".into(), shape: check, duration: Duration::Fill { loops: 1 } })?;
        Ok(())
    }

    /// The scenario of `job`: the device's with the job as its one flow. Writes on a page-mapped drive start
    /// from the preconditioned state the real probe's preconditioning file makes: full, randomly
    /// overwritten, garbage collection a block behind on every plane (`device.ftl.precondition`), the write
    /// buffer full of the preconditioning's pages (`device.ftl.precondition_buffer_fill`): a job that
    /// writes faster than the flash drains is in its steady state from the start, as fio measures it after
    /// its ramp, instead of filling a gigabyte of buffer first. (A job that writes slower than the flash
    /// drains empties the buffer during its ramp; a short ramp may leave some of it, docs/calibration.md.)
    /// An SLC cache starts exhausted ([`SLC_EXHAUSTED`]), as the preconditioning leaves it.
    pub fn scenario(&self, job: &ProbeJob) -> Result<Scenario, String> {
        self.scenario_of(&job.name, &job.shape, self.duration_ns, &[])
    }

    /// The scenario of a job `name` of `shape` measured for `duration_ns`, with the probe's settings and then
    /// `sets` (`key=value`, as `--set` takes them) over the device: what [`Self::scenario`] makes of a probe
    /// job, for any shape and duration (a calibration's trial settings).
    pub fn scenario_of(
        &self,
        name: &str,
        shape: &JobShape,
        duration_ns: Time,
        sets: &[String],
    ) -> Result<Scenario, String> {
        let mut table = self.base.clone();
        table.insert("name".into(), toml::Value::String(name.to_string()));
        let ramp = duration_ns / RAMP_FRACTION;
        let run = format!("duration = \"{}ns\"\nwarmup = \"{ramp}ns\"", duration_ns + ramp);
        table.insert("run".into(), toml::Value::Table(run.parse().expect("a [run] table")));
        table.insert("flow".into(), toml::Value::Array(vec![toml::Value::Table(flow(name, shape))]));
        let text = toml::to_string(&table).map_err(|e| format!("{}: {e}", self.source))?;
        let load = |extra: &[&str]| {
            let all: Vec<String> =
                self.settings.iter().chain(sets).cloned().chain(extra.iter().map(|s| s.to_string())).collect();
            Scenario::from_toml_str(&text, &self.source, &self.dir, &all).map_err(|e| match name {
                "check" => e.to_string(),
                name => format!("probe {name}: {e}"),
            })
        };
        let scenario = load(&[])?;
        if !shape.writes() || scenario.device.ftl.mapping != MappingKind::Page {
            return Ok(scenario);
        }
        load(&[
            "device.ftl.precondition=random-gc-due",
            "device.ftl.precondition_fill=1.0",
            "device.ftl.precondition_buffer_fill=1.0",
            SLC_EXHAUSTED,
            TIMED_PRECONDITION,
        ])
    }

    /// Every measured file of `files` run: its stem and its results as fio's JSON document, one `jobs[]`
    /// entry per job, each its own group (fio's `stonewall`). The jobs run in parallel; the same device and
    /// seed give the same bytes.
    pub fn run(&self, files: &[ProbeFile]) -> Result<Vec<(String, Value)>, String> {
        let jobs: Vec<(usize, &ProbeJob)> = files
            .iter()
            .enumerate()
            .filter(|(_, f)| f.measured)
            .flat_map(|(i, f)| f.jobs.iter().map(move |j| (i, j)))
            .collect();
        let documents: Vec<(usize, Value)> = jobs
            .par_iter()
            .map(|&(file, job)| {
                debug_assert!(matches!(job.duration, Duration::Timed { .. }), "a measured job is timed");
                let scenario = self.scenario(job)?;
                let results = crate::run_scenario(&scenario).map_err(|e| format!("probe {}: {e}", job.name))?;
                Ok((file, fio_json(&scenario, &results)))
            })
            .collect::<Result<_, String>>()?;
        let mut out: Vec<(String, Value)> = Vec::new();
        for (file, mut document) in documents {
            let stem = &files[file].stem;
            if out.last().is_none_or(|(s, _)| s != stem) {
                let mut first = document.clone();
                first["jobs"] = Value::Array(Vec::new());
                first["global options"]["scenario"] = Value::String(stem.clone());
                out.push((stem.clone(), first));
            }
            let all = out.last_mut().expect("pushed above").1["jobs"].as_array_mut().expect("an array");
            let Some(Value::Array(entries)) = document.get_mut("jobs").map(Value::take) else {
                return Err(format!("{}: fio-json without jobs", self.source));
            };
            for mut entry in entries {
                entry["groupid"] = Value::from(all.len());
                all.push(entry);
            }
        }
        Ok(out)
    }

    /// Each job's measured time, as the command line says it.
    pub fn describe_duration(&self) -> String {
        describe_ns(self.duration_ns)
    }
}

/// `[device]` naming `preset`.
fn device_table(preset: &str) -> toml::Value {
    toml::Value::Table(toml::Table::from_iter([("preset".to_string(), toml::Value::String(preset.to_string()))]))
}

/// The flow of a job of `shape`, as fio runs it: libaio, direct, its jobs reported as one.
fn flow(name: &str, shape: &JobShape) -> toml::Table {
    let mut flow = toml::Table::new();
    let mut set = |key: &str, value: toml::Value| {
        flow.insert(key.to_string(), value);
    };
    set("name", name.into());
    set("rw", shape.fio_rw().into());
    if !matches!(shape.read_percent, 0 | 100) {
        set("rwmixread", i64::from(shape.read_percent).into());
    }
    set("bs", i64::try_from(shape.block_size).unwrap_or(i64::MAX).into());
    set("iodepth", i64::from(shape.iodepth).into());
    set("numjobs", i64::from(shape.numjobs).into());
    set("ioengine", IOENGINE.into());
    set("direct", 1.into());
    set("group_reporting", true.into());
    flow
}
