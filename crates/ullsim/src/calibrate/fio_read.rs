//! The reader of fio's JSON output (`fio --output-format=json` or `json+`, and ullsim's own `fio-json`):
//! each job's shape, recognised from its options, and what it measured per direction (I/Os, IOPS,
//! bandwidth, mean latency, percentiles). The layouts, options and errors it knows are in
//! docs/calibration.md ("Reading fio results").
//!
//! fio writes one `jobs[]` entry per job clone (a job section with `numjobs=N` runs N clones of the same
//! name) unless `group_reporting` merges a group into one entry (stat.c, `__show_run_stats`). The options
//! of a job are its section's (`job options`); those of the `[global]` section are in the file's `global
//! options` and every job inherits them.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

use super::fio_latency::{merge, read_stats, LatencyKind, LatencyStats};
use super::fio_options::{parse_count, parse_flag, parse_size, parse_time, per_direction, split_rw, BareTime};
use super::shape::{JobShape, Pattern};

/// Runs shorter than this measure start-up more than the drive.
const SHORT_RUNTIME_MS: u64 = 1000;
/// fio's default block size (HOWTO, option `bs`).
const FIO_DEFAULT_BS: u64 = 4096;

/// Who wrote the file: fio's defaults and units differ from ullsim's fio-json.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Producer {
    /// fio itself; its `fio version` ("fio-3.36").
    Fio(String),
    /// ullsim's `fio-json` ("ullsim-<version>"): the options are a scenario flow's keys, durations in ns,
    /// `direct` 1 and `ioengine` io_uring unless set.
    Ullsim(String),
}

/// One direction (reads or writes) of a job, over all its clones.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasuredDirection {
    pub ios: u64,
    pub bytes: u64,
    /// The longest clone's time in this direction (fio's `runtime`, ms).
    pub runtime_ms: u64,
    /// I/Os per second of all clones together.
    pub iops: f64,
    pub bytes_per_s: f64,
    /// Mean issue-to-completion latency (`lat_ns`; `clat_ns` + `slat_ns` when `lat_ns` has no samples).
    pub mean_ns: f64,
    /// Mean submission-to-completion latency (`clat_ns`), when reported.
    pub completion_mean_ns: Option<f64>,
    /// What `percentiles` measure: `lat_ns`'s when the file has them (`lat_percentiles=1`, ullsim), else
    /// `clat_ns`'s (fio's default); `None` with no percentiles.
    pub percentiles_of: Option<LatencyKind>,
    /// (percent, ns), ascending.
    pub percentiles: Vec<(f64, u64)>,
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub p999_ns: Option<u64>,
}

/// A rate cap that makes a job open-loop (fio's `rate_iops` or `rate`): its IOPS are the cap's, not the
/// drive's, and its latency is at that load.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpenLoop {
    /// The option as written, e.g. "rate_iops=5000".
    pub option: String,
    /// The cap in I/Os per second of the whole job (all its clones), when it is one `rate_iops` for all
    /// directions: fio's cap is per clone (x `numjobs`); ullsim's is the flow's.
    pub total_iops: Option<f64>,
}

/// Something that does not stop a job from being read but may make its figures a poor fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum FioWarning {
    /// No `ramp_time`: the figures include the start (empty queues, cold caches).
    NoRampTime,
    /// The job ran less than a second.
    ShortRuntime { runtime_ms: u64 },
    /// The job is rate-limited.
    OpenLoop { option: String },
    /// The job idles between I/Os (`thinktime`).
    ThinkTime { ns: u64 },
}

impl std::fmt::Display for FioWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            FioWarning::NoRampTime => {
                write!(f, "no ramp_time: its figures include the start of the run (set ramp_time=5s or more)")
            }
            FioWarning::ShortRuntime { runtime_ms } => {
                write!(f, "ran {runtime_ms} ms, under 1 s: its figures are noisy (use time_based and runtime=30s)")
            }
            FioWarning::OpenLoop { option } => {
                write!(f, "{option} caps its rate (open loop): its IOPS are the cap's, its latency is at that load")
            }
            FioWarning::ThinkTime { ns } => {
                write!(f, "thinktime of {ns} ns between I/Os: it keeps fewer I/Os in flight than its iodepth")
            }
        }
    }
}

/// One job of a results file (all its clones), with its shape and what it measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasuredJob {
    pub file: PathBuf,
    pub job: String,
    pub producer: Producer,
    pub shape: JobShape,
    /// The engine it ran (fio's default `psync`, ullsim's `io_uring`, when unset).
    pub ioengine: String,
    /// The job's run time (fio's `job_runtime`, else the longest direction's `runtime`), ms.
    pub runtime_ms: u64,
    pub read: Option<MeasuredDirection>,
    pub write: Option<MeasuredDirection>,
    /// The percentiles are the I/O-weighted means of the clones' (one entry per clone, no json+ bins), not
    /// the percentiles of all the job's I/Os.
    pub approximate_percentiles: bool,
    /// `jobs[]` entries merged: `numjobs` without `group_reporting`, else 1.
    pub entries: usize,
    pub time_based: bool,
    pub ramp_time_ns: Option<u64>,
    pub thinktime_ns: u64,
    pub open_loop: Option<OpenLoop>,
    pub warnings: Vec<FioWarning>,
}

/// Why a results file cannot be used. Each names the file, and the job where there is one.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum FioReadError {
    #[error("{file}: cannot read it: {detail}")]
    Io { file: PathBuf, detail: String },
    #[error("{file}: not JSON ({detail}); run fio with --output-format=json")]
    NotJson { file: PathBuf, detail: String },
    #[error("{file}: JSON, but not fio's output: {detail}")]
    NotFio { file: PathBuf, detail: String },
    #[error("{file}: job {job:?} failed in fio (error {code}); its figures are not a measurement")]
    JobFailed { file: PathBuf, job: String, code: i64 },
    #[error("{file}: job {job:?}: {key}={value:?}: {expected}")]
    BadOption { file: PathBuf, job: String, key: String, value: String, expected: String },
    #[error("{file}: job {job:?}: a shape calibration does not know: {reason}")]
    UnknownShape { file: PathBuf, job: String, reason: String },
    #[error(
        "{file}: job {job:?} used buffered I/O (direct=0, fio's default): it measures the page cache, not the \
         drive; run it with direct=1"
    )]
    Buffered { file: PathBuf, job: String },
    #[error("{file}: job {job:?} completed no I/O")]
    NoIo { file: PathBuf, job: String },
    #[error("{file}: job {job:?}: {detail}")]
    Malformed { file: PathBuf, job: String, detail: String },
}

/// Read the fio results in `path`.
pub fn read_file(path: &Path) -> Result<Vec<MeasuredJob>, FioReadError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| FioReadError::Io { file: path.to_path_buf(), detail: e.to_string() })?;
    read_str(&text, path)
}

/// Read fio results from `text`; `path` names them in errors and in each job's `file`.
pub fn read_str(text: &str, path: &Path) -> Result<Vec<MeasuredJob>, FioReadError> {
    let file = path.to_path_buf();
    // fio may print warnings before the document (and nothing else can start a fio document).
    let Some(start) = text.find('{') else {
        return Err(FioReadError::NotJson { file, detail: "no '{' in it".to_string() });
    };
    let document: Value = serde_json::Deserializer::from_str(&text[start..])
        .into_iter::<Value>()
        .next()
        .unwrap_or_else(|| serde_json::from_str(""))
        .map_err(|e| FioReadError::NotJson { file: file.clone(), detail: e.to_string() })?;
    let not_fio = |detail: &str| FioReadError::NotFio { file: file.clone(), detail: detail.to_string() };
    let jobs = document.get("jobs").and_then(Value::as_array).ok_or_else(|| not_fio("it has no \"jobs\" array"))?;
    if jobs.is_empty() {
        return Err(not_fio("its \"jobs\" array is empty"));
    }
    let version = document.get("fio version").and_then(Value::as_str).unwrap_or("fio").to_string();
    let producer = if version.starts_with("ullsim-") { Producer::Ullsim(version) } else { Producer::Fio(version) };
    let empty = Map::new();
    let global = document.get("global options").and_then(Value::as_object).unwrap_or(&empty);
    let reader = Reader { file: &file, producer: &producer, global };
    // A job's clones share its name and group; they follow each other, but grouping by key does not rely on it.
    let mut groups: Vec<((&str, i64), Vec<&Value>)> = Vec::new();
    for entry in jobs {
        let name = entry.get("jobname").and_then(Value::as_str).ok_or_else(|| not_fio("a job has no \"jobname\""))?;
        let key = (name, entry.get("groupid").and_then(Value::as_i64).unwrap_or(0));
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, entries)) => entries.push(entry),
            None => groups.push((key, vec![entry])),
        }
    }
    groups.into_iter().map(|((name, _), entries)| reader.job(name, &entries)).collect()
}

/// What reading one file's jobs shares.
struct Reader<'a> {
    file: &'a Path,
    producer: &'a Producer,
    global: &'a Map<String, Value>,
}

/// A job's options as the reader needs them, after its global ones.
struct Options<'a> {
    map: Map<String, Value>,
    reader: &'a Reader<'a>,
    job: &'a str,
    kb_base: u64,
}

impl Options<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.map.get(key).map(|v| v.as_str().unwrap_or(""))
    }

    fn bad(&self, key: &str, expected: String) -> FioReadError {
        FioReadError::BadOption {
            file: self.reader.file.to_path_buf(),
            job: self.job.to_string(),
            key: key.to_string(),
            value: self.get(key).unwrap_or("").to_string(),
            expected,
        }
    }

    fn unknown(&self, reason: String) -> FioReadError {
        FioReadError::UnknownShape { file: self.reader.file.to_path_buf(), job: self.job.to_string(), reason }
    }

    /// The first of `keys` that is set (fio's aliases), with its value.
    fn first(&self, keys: &[&'static str]) -> Option<(&'static str, &str)> {
        keys.iter().find_map(|&k| self.get(k).map(|v| (k, v)))
    }

    fn count(&self, key: &str, default: u64) -> Result<u64, FioReadError> {
        self.get(key).map_or(Ok(default), |v| parse_count(v, self.kb_base).map_err(|e| self.bad(key, e)))
    }

    fn flag(&self, key: &str) -> Result<Option<bool>, FioReadError> {
        self.get(key).map(|v| parse_flag(v).map_err(|e| self.bad(key, e))).transpose()
    }

    /// A duration option; fio's bare unit is `fio_bare`, ullsim's fio-json writes ns.
    fn time(&self, key: &str, fio_bare: BareTime) -> Result<Option<u64>, FioReadError> {
        let bare = match self.reader.producer {
            Producer::Fio(_) => fio_bare,
            Producer::Ullsim(_) => BareTime::Nanos,
        };
        self.get(key).map(|v| parse_time(v, bare).map_err(|e| self.bad(key, e))).transpose()
    }

    fn is_ullsim(&self) -> bool {
        matches!(self.reader.producer, Producer::Ullsim(_))
    }
}

/// Engines that complete each I/O before issuing the next: fio ignores `iodepth` for them (HOWTO, options
/// `ioengine` and `iodepth`).
const SYNC_ENGINES: [&str; 5] = ["sync", "psync", "vsync", "pvsync", "pvsync2"];
/// Engines that keep `iodepth` I/Os in flight.
const ASYNC_ENGINES: [&str; 6] = ["libaio", "io_uring", "io_uring_cmd", "posixaio", "windowsaio", "solarisaio"];
/// Options whose presence gives a job a shape calibration does not know.
const UNKNOWN_SHAPE_OPTIONS: [(&str, &str); 10] = [
    ("bsrange", "a range of block sizes (bsrange)"),
    ("blocksize_range", "a range of block sizes (blocksize_range)"),
    ("bssplit", "a mix of block sizes (bssplit)"),
    ("verify", "a verify job"),
    ("trace", "a trace replay"),
    ("read_iolog", "an I/O log replay"),
    ("app", "an application model"),
    ("fsync", "sync calls after writes (fsync)"),
    ("fdatasync", "sync calls after writes (fdatasync)"),
    ("flush_every", "flushes after writes (ullsim's flush_every)"),
];

impl Reader<'_> {
    /// One job from its `jobs[]` entries (its clones, or the one entry of its group).
    fn job(&self, name: &str, entries: &[&Value]) -> Result<MeasuredJob, FioReadError> {
        let file = self.file.to_path_buf();
        let job = name.to_string();
        let malformed = |detail: String| FioReadError::Malformed { file: file.clone(), job: job.clone(), detail };
        for entry in entries {
            let code = entry.get("error").and_then(Value::as_i64).unwrap_or(0);
            if code != 0 {
                return Err(FioReadError::JobFailed { file: file.clone(), job: job.clone(), code });
            }
        }
        let job_options = entries[0].get("job options");
        if entries.iter().any(|e| e.get("job options") != job_options) {
            return Err(malformed(format!(
                "{} entries of that name with different options: name each job apart",
                entries.len()
            )));
        }
        let Some(job_options) = job_options.and_then(Value::as_object) else {
            return Err(malformed("no \"job options\" (fio writes them from 2.10 on)".to_string()));
        };
        // fio writes every value as a string; a hand-edited file may hold numbers or flags.
        let as_text = |(k, v): (&String, &Value)| {
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                Value::Bool(b) => if *b { "1" } else { "0" }.to_string(),
                other => other.to_string(),
            };
            (k.clone(), Value::String(text))
        };
        let map: Map<String, Value> = self.global.iter().chain(job_options).map(as_text).collect();
        let mut options = Options { map, reader: self, job: name, kb_base: 1024 };
        options.kb_base = options.count("kb_base", 1024)?;
        let recognised = recognise(&options)?;
        let numjobs = recognised.shape.numjobs as usize;
        let grouped = entries.len() == 1
            && (numjobs == 1 || options.flag("group_reporting")?.unwrap_or(false) || options.is_ullsim());
        if entries.len() != numjobs && !grouped {
            return Err(malformed(format!(
                "{} entries of that name, but numjobs={numjobs} and no group_reporting: each clone should have one",
                entries.len()
            )));
        }
        let mut approximate = false;
        let mut direction = |key: &str| -> Result<Option<MeasuredDirection>, FioReadError> {
            let clones = entries
                .iter()
                .map(|e| read_direction(e.get(key)).ok_or_else(|| malformed(format!("no usable \"{key}\" section"))))
                .collect::<Result<Vec<_>, _>>()?;
            let (merged, inexact) = merge_direction(&clones);
            approximate |= inexact;
            Ok(merged)
        };
        if entries[0].get("read").is_none() && entries[0].get("mixed").is_some() {
            return Err(options
                .unknown("reads and writes reported together (unified_rw_reporting): run it without".to_string()));
        }
        let (read, write) = (direction("read")?, direction("write")?);
        if read.is_none() && write.is_none() {
            return Err(FioReadError::NoIo { file, job });
        }
        let runtime_ms = entries
            .iter()
            .filter_map(|e| e.get("job_runtime").and_then(Value::as_u64))
            .max()
            .unwrap_or_else(|| read.iter().chain(&write).map(|d| d.runtime_ms).max().unwrap_or(0));
        let mut warnings = Vec::new();
        if recognised.ramp_time_ns.is_none() && !options.is_ullsim() {
            warnings.push(FioWarning::NoRampTime);
        }
        if runtime_ms < SHORT_RUNTIME_MS {
            warnings.push(FioWarning::ShortRuntime { runtime_ms });
        }
        if let Some(open) = &recognised.open_loop {
            warnings.push(FioWarning::OpenLoop { option: open.option.clone() });
        }
        if recognised.thinktime_ns > 0 {
            warnings.push(FioWarning::ThinkTime { ns: recognised.thinktime_ns });
        }
        Ok(MeasuredJob {
            file,
            job,
            producer: self.producer.clone(),
            shape: recognised.shape,
            ioengine: recognised.ioengine,
            runtime_ms,
            read,
            write,
            approximate_percentiles: approximate,
            entries: entries.len(),
            time_based: recognised.time_based,
            ramp_time_ns: recognised.ramp_time_ns,
            thinktime_ns: recognised.thinktime_ns,
            open_loop: recognised.open_loop,
            warnings,
        })
    }
}

/// What a job's options say.
struct Recognised {
    shape: JobShape,
    ioengine: String,
    time_based: bool,
    ramp_time_ns: Option<u64>,
    thinktime_ns: u64,
    open_loop: Option<OpenLoop>,
}

/// The job's shape and run options from its options, or why calibration cannot use it.
fn recognise(o: &Options) -> Result<Recognised, FioReadError> {
    for (key, what) in UNKNOWN_SHAPE_OPTIONS {
        // ullsim writes `fsync = 0` never (unset keys are left out); fio's `verify=0` is "none".
        if o.get(key).is_some_and(|v| !matches!(v.trim(), "0" | "none")) {
            return Err(o.unknown(format!("{what}: {key}={:?}", o.get(key).unwrap_or(""))));
        }
    }
    // fio's default rw is read (HOWTO, option rw); ullsim's flows without one replay a trace or an app.
    let (rw_key, rw_text) = o.first(&["rw", "readwrite"]).unwrap_or(("rw", "read"));
    let (rw, modifier) = split_rw(rw_text, o.kb_base).map_err(|e| o.bad(rw_key, e))?;
    let (pattern, mixed, fixed_read) = match rw {
        "read" => (Pattern::Sequential, false, 100),
        "write" => (Pattern::Sequential, false, 0),
        "randread" => (Pattern::Random, false, 100),
        "randwrite" => (Pattern::Random, false, 0),
        "rw" | "readwrite" => (Pattern::Sequential, true, 50),
        "randrw" => (Pattern::Random, true, 50),
        "trim" | "randtrim" | "trimwrite" | "randtrimwrite" => {
            return Err(o.unknown(format!("trims ({rw_key}={rw_text})")))
        }
        _ => return Err(o.bad(rw_key, "expected one of fio's rw values (read, randread, write, ...)".to_string())),
    };
    match (pattern, modifier) {
        (_, None) | (Pattern::Random, Some(0 | 1)) | (Pattern::Sequential, Some(0)) => {}
        (Pattern::Random, Some(n)) => {
            return Err(o.unknown(format!("runs of {n} sequential I/Os at random offsets ({rw_key}={rw_text})")))
        }
        (Pattern::Sequential, Some(n)) => {
            return Err(o.unknown(format!("sequential with a hole of {n} bytes after each I/O ({rw_key}={rw_text})")))
        }
    }
    if let Some(p) = o.get("percentage_random").map(|_| o.count("percentage_random", 100)).transpose()? {
        if p != 0 && p != 100 {
            return Err(o.unknown(format!("{p}% of its I/Os at random offsets (percentage_random)")));
        }
    }
    let read_percent = if mixed {
        match (o.get("rwmixread"), o.get("rwmixwrite")) {
            (Some(_), _) => o.count("rwmixread", 50)?,
            (None, Some(_)) => 100u64.saturating_sub(o.count("rwmixwrite", 50)?),
            (None, None) => 50,
        }
    } else {
        fixed_read
    };
    if read_percent > 100 {
        return Err(o.bad("rwmixread", "expected a percentage, 0 to 100".to_string()));
    }
    let block_size = block_size(o, read_percent)?;
    let ioengine = match (o.get("ioengine"), o.is_ullsim()) {
        (Some(engine), _) => engine.trim().to_string(),
        (None, true) => "io_uring".to_string(),
        (None, false) => "psync".to_string(),
    };
    let iodepth = o.count("iodepth", 1)?;
    let iodepth = if SYNC_ENGINES.contains(&ioengine.as_str()) {
        1
    } else if ASYNC_ENGINES.contains(&ioengine.as_str()) {
        iodepth
    } else {
        return Err(
            o.unknown(format!("the engine {ioengine:?} (calibration knows {SYNC_ENGINES:?} and {ASYNC_ENGINES:?})"))
        );
    };
    let numjobs = o.count("numjobs", 1)?;
    let direct = match (o.flag("direct")?, o.flag("buffered")?) {
        (Some(direct), _) => direct,
        (None, Some(buffered)) => !buffered,
        // fio's default is buffered (HOWTO, option direct); ullsim's flows are direct unless `direct = 0`.
        (None, None) => o.is_ullsim(),
    };
    if !direct {
        return Err(FioReadError::Buffered { file: o.reader.file.to_path_buf(), job: o.job.to_string() });
    }
    let to_u32 = |key: &str, v: u64| {
        u32::try_from(v).ok().filter(|&v| v > 0).ok_or_else(|| o.bad(key, "expected 1 to 4294967295".to_string()))
    };
    let shape = JobShape {
        pattern,
        read_percent: read_percent as u8,
        block_size,
        iodepth: to_u32("iodepth", iodepth)?,
        numjobs: to_u32("numjobs", numjobs)?,
    };
    Ok(Recognised {
        shape,
        ioengine,
        time_based: o.flag("time_based")?.unwrap_or(false),
        ramp_time_ns: o.time("ramp_time", BareTime::Seconds)?,
        thinktime_ns: o.time("thinktime", BareTime::Micros)?.unwrap_or(0),
        open_loop: open_loop(o)?,
    })
}

/// The job's one block size over the directions it does (`bs`/`blocksize`, per direction).
fn block_size(o: &Options, read_percent: u64) -> Result<u64, FioReadError> {
    let Some((key, text)) = o.first(&["bs", "blocksize"]) else { return Ok(FIO_DEFAULT_BS) };
    let sizes = per_direction(text)
        .map(|field| field.map_or(Ok(FIO_DEFAULT_BS), |v| parse_size(v, o.kb_base).map_err(|e| o.bad(key, e))));
    let [read, write, _trim] = sizes;
    let (read, write) = (read?, write?);
    match read_percent {
        100 => Ok(read),
        0 => Ok(write),
        _ if read == write => Ok(read),
        _ => Err(o.unknown(format!("reads of {read} bytes and writes of {write} bytes ({key}={text})"))),
    }
}

/// The rate cap, if the job has one.
fn open_loop(o: &Options) -> Result<Option<OpenLoop>, FioReadError> {
    let Some((key, text)) = o.first(&["rate_iops", "rate"]) else { return Ok(None) };
    let option = format!("{key}={text}");
    let single = !text.contains(',');
    let total_iops = match key {
        "rate_iops" if single => {
            let rate: f64 =
                text.trim().parse().map_err(|_| o.bad(key, "expected a number of I/Os per second".to_string()))?;
            // fio caps each clone; ullsim's rate is the flow's.
            let clones = if o.is_ullsim() { 1.0 } else { o.count("numjobs", 1)? as f64 };
            Some(rate * clones)
        }
        _ => None,
    };
    Ok(Some(OpenLoop { option, total_iops }))
}

/// One clone's direction section, read: its I/Os, bytes, runtime, IOPS, bandwidth, total latency and the
/// latency its percentiles are of. `None` when the section is missing or has no `total_ios`.
struct DirectionEntry {
    ios: u64,
    bytes: u64,
    runtime_ms: u64,
    iops: f64,
    bytes_per_s: f64,
    total: LatencyStats,
    completion: Option<LatencyStats>,
    percentiles: Option<(LatencyKind, LatencyStats)>,
}

/// Read a direction section: fio 3.x (`lat_ns`, `clat_ns`, `slat_ns`, ns) or 2.x (`lat`, `clat`, `slat`, µs).
fn read_direction(section: Option<&Value>) -> Option<DirectionEntry> {
    let s = section?;
    let ios = s.get("total_ios")?.as_u64()?;
    let (suffix, unit_ns) = if s.get("lat_ns").is_some() { ("_ns", 1) } else { ("", 1000) };
    let stats = |name: &str| s.get(format!("{name}{suffix}")).and_then(|v| read_stats(v, unit_ns));
    let (lat, clat, slat) = (stats("lat"), stats("clat"), stats("slat"));
    // fio 2.x before 2.19 wrote io_bytes in KiB and had no io_kbytes.
    let bytes = match (s.get("io_bytes").and_then(Value::as_u64), s.get("io_kbytes")) {
        (Some(bytes), Some(_)) => bytes,
        (Some(kib), None) => kib.saturating_mul(1024),
        (None, _) => 0,
    };
    let bytes_per_s = match s.get("bw_bytes").and_then(Value::as_f64) {
        Some(b) => b,
        None => s.get("bw").and_then(Value::as_f64).unwrap_or(0.0) * 1024.0,
    };
    let mut total = match (&lat, &clat) {
        (Some(lat), _) if lat.samples > 0 || lat.mean_ns > 0.0 => lat.clone(),
        (_, Some(clat)) => {
            LatencyStats { mean_ns: clat.mean_ns + slat.as_ref().map_or(0.0, |s| s.mean_ns), ..clat.clone() }
        }
        _ => lat.clone().unwrap_or_default(),
    };
    if total.samples == 0 {
        total.samples = ios; // fio 2.x has no N
    }
    let with_percentiles =
        |s: &Option<LatencyStats>| s.as_ref().filter(|s| s.percentiles.iter().any(|p| p.0 > 0.0)).cloned();
    let percentiles = with_percentiles(&lat)
        .map(|s| (LatencyKind::Total, s))
        .or_else(|| with_percentiles(&clat).map(|s| (LatencyKind::Completion, s)))
        .map(|(kind, mut s)| {
            s.percentiles.retain(|p| p.0 > 0.0); // fio 2.x pads the list with "0.00" keys
            (kind, s)
        });
    Some(DirectionEntry {
        ios,
        bytes,
        runtime_ms: s.get("runtime").and_then(Value::as_u64).unwrap_or(0),
        iops: s.get("iops").and_then(Value::as_f64).unwrap_or(0.0),
        bytes_per_s,
        total,
        completion: clat,
        percentiles,
    })
}

/// The clones' sections of one direction merged: sums of I/Os, bytes, IOPS and bandwidth; means weighted by
/// I/Os; percentiles merged (`fio_latency::merge`). `None` when no clone did I/O in that direction; the bool
/// says the percentiles are approximate.
fn merge_direction(clones: &[DirectionEntry]) -> (Option<MeasuredDirection>, bool) {
    let ios: u64 = clones.iter().map(|c| c.ios).sum();
    if ios == 0 {
        return (None, false);
    }
    let active: Vec<&DirectionEntry> = clones.iter().filter(|c| c.ios > 0).collect();
    let weighted = |f: &dyn Fn(&DirectionEntry) -> Option<LatencyStats>| {
        let parts: Option<Vec<(LatencyStats, u64)>> = active.iter().map(|c| f(c).map(|s| (s, c.ios))).collect();
        parts.map(|p| merge(&p))
    };
    let total = weighted(&|c| Some(c.total.clone())).map(|m| m.0).unwrap_or_default();
    let completion = weighted(&|c| c.completion.clone()).map(|m| m.0.mean_ns);
    let kind = active[0].percentiles.as_ref().map(|p| p.0);
    let same_kind = active.iter().all(|c| c.percentiles.as_ref().map(|p| p.0) == kind);
    let (percentiles, approximate) = match weighted(&|c| c.percentiles.as_ref().map(|p| p.1.clone())) {
        Some((stats, approximate)) if same_kind => (stats.percentiles, approximate),
        _ => (Vec::new(), false),
    };
    let at = |p: f64| percentiles.iter().find(|q| (q.0 - p).abs() < 1e-9).map(|q| q.1);
    let direction = MeasuredDirection {
        ios,
        bytes: active.iter().map(|c| c.bytes).sum(),
        runtime_ms: active.iter().map(|c| c.runtime_ms).max().unwrap_or(0),
        iops: active.iter().map(|c| c.iops).sum(),
        bytes_per_s: active.iter().map(|c| c.bytes_per_s).sum(),
        mean_ns: total.mean_ns,
        completion_mean_ns: completion,
        percentiles_of: if percentiles.is_empty() { None } else { kind },
        p50_ns: at(50.0),
        p99_ns: at(99.0),
        p999_ns: at(99.9),
        percentiles,
    };
    (Some(direction), approximate)
}
