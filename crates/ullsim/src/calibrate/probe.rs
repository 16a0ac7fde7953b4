//! The probe set: the fio jobs that measure what a fit of a drive needs, defined once here as data, and
//! written as plain fio job files (`ullsim probe -o DIR`) or run in the simulator ([`super::probe_sim`]).
//!
//! What each family measures (docs/calibration.md says it to the user):
//! - 4 KiB random reads at rising queue depth, one job: QD 1 gives the unloaded latency (command
//!   processing, media read, transfer, host); the deep points the read IOPS limit and where the curve
//!   bends (effective parallelism).
//! - 4 KiB random reads at QD 32 from several jobs: the host's share (CPU per I/O, several submitters).
//! - 16 KiB and 128 KiB random reads: the per-byte cost of a read (transfer, read bandwidth limit).
//! - 128 KiB sequential reads and writes at QD 32: the bandwidth limit of each direction.
//! - 4 KiB random writes at QD 1 and 32 after preconditioning, and a 70/30 random mix at QD 32: write
//!   latency and steady-state write IOPS (garbage collection at work), and how the two directions share.
//!
//! The points left out of the default set (QD 2, 8, 32, 128; 2 and 8 jobs) are for checking a fit on what
//! it has not seen; [`ProbePoints`] asks for them.

use std::fmt::Write as _;

use super::shape::{JobShape, Pattern};

/// fio's engine for every job: libaio is in every kernel and fio build of the last fifteen years (io_uring
/// needs Linux 5.1 and a recent fio) [inferred: the most portable asynchronous engine].
pub const IOENGINE: &str = "libaio";

/// A `filename` fio refuses (no such device, and no `size` to create a file of), so that a job file written
/// without `--filename` cannot touch a real device by accident.
pub const PLACEHOLDER_FILENAME: &str = "/dev/CHANGE-ME";

/// Measured seconds of a read job, after its ramp: at QD 1 on a ~10 us drive, ~3 million I/Os, so the
/// 99.99th percentile rests on ~300 samples; longer runs change read results little [inferred].
pub const READ_RUNTIME_S: u32 = 30;
/// Seconds of a job before fio measures (fio's `ramp_time`): the queues fill, the drive's read cache and
/// power state settle [inferred: a few seconds is the usual choice].
pub const READ_RAMP_S: u32 = 5;
/// Measured seconds of a write job: a drive in steady state still swings with its garbage collection, over
/// periods of seconds; a minute averages several swings (the SNIA SSS PTS measures in rounds of one minute
/// per workload).
pub const WRITE_RUNTIME_S: u32 = 60;
/// Ramp of a write job: the queue fills, the write cache reaches its steady occupancy.
pub const WRITE_RAMP_S: u32 = 10;
/// Random 4 KiB writes after the sequential fill, before the write jobs: the SNIA SSS PTS (v2.0.2, 2020)
/// runs workload-dependent preconditioning in one-minute rounds until five in a row stay within 20% of
/// their mean (its steady state); half an hour of QD 32 x 4 jobs is a budget of 30 such rounds without
/// their bookkeeping [inferred: enough for the drives we know to reach steady state, not checked here].
pub const PRECONDITION_RANDOM_S: u32 = 1800;
/// Passes of the sequential fill: the SNIA SSS PTS's workload-independent preconditioning writes twice the
/// user capacity with 128 KiB sequential writes.
pub const PRECONDITION_FILL_LOOPS: u32 = 2;

/// The queue depths and job counts of the 4 KiB random-read sweeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbePoints {
    /// Queue depths of the one-job sweep.
    pub queue_depths: Vec<u32>,
    /// Job counts of the QD 32 sweep.
    pub job_counts: Vec<u32>,
}

impl Default for ProbePoints {
    /// QD 1, 4, 16, 64, 256 and 1 and 4 jobs: every other point of the curve, so a fit can be checked on
    /// the rest (QD 2, 8, 32, 128; 2 and 8 jobs).
    fn default() -> Self {
        ProbePoints { queue_depths: vec![1, 4, 16, 64, 256], job_counts: vec![1, 4] }
    }
}

/// How long a job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Duration {
    /// `time_based`: `ramp_s` unmeasured, then `runtime_s` measured.
    Timed { runtime_s: u32, ramp_s: u32 },
    /// Once over the whole device, `loops` times (a fill).
    Fill { loops: u32 },
}

/// One job of the probe set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeJob {
    /// The fio job's name (`randread-4k-qd1`): the section name, and the `jobname` in fio's JSON.
    pub name: String,
    pub shape: JobShape,
    pub duration: Duration,
}

/// One job file of the probe set, and the JSON fio writes of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeFile {
    /// The file's stem: `STEM.fio`, and `STEM.json` for its results. Starts with `DESTRUCTIVE-` when a job
    /// of it writes.
    pub stem: String,
    /// What the file measures, for its header.
    pub what: &'static str,
    /// Its results are measurements (`false`: preconditioning, whose results no fit reads).
    pub measured: bool,
    /// Its jobs, run one after another (fio's `stonewall`).
    pub jobs: Vec<ProbeJob>,
}

impl ProbeFile {
    /// Some job of the file writes: it destroys the data on the device.
    pub fn destructive(&self) -> bool {
        self.jobs.iter().any(|j| j.shape.writes())
    }
}

/// A job of `shape` named from it (`randread-4k-qd1`, `randread-4k-qd32-jobs4`, `randrw70-4k-qd32`).
fn job(shape: JobShape, duration: Duration) -> ProbeJob {
    let mix = match shape.read_percent {
        0 | 100 => String::new(),
        read => read.to_string(),
    };
    let jobs = if shape.numjobs > 1 { format!("-jobs{}", shape.numjobs) } else { String::new() };
    let name = format!("{}{mix}-{}-qd{}{jobs}", shape.fio_rw(), fio_size(shape.block_size), shape.iodepth);
    ProbeJob { name, shape, duration }
}

fn shape(pattern: Pattern, read_percent: u8, block_size: u64, iodepth: u32, numjobs: u32) -> JobShape {
    JobShape { pattern, read_percent, block_size, iodepth, numjobs }
}

/// The probe set with the read sweeps at `points`: the files in the order they are to be run (reads,
/// then preconditioning, then the writes it prepares).
pub fn probe_set(points: &ProbePoints) -> Vec<ProbeFile> {
    use Pattern::{Random, Sequential};
    const KIB: u64 = 1024;
    let read = Duration::Timed { runtime_s: READ_RUNTIME_S, ramp_s: READ_RAMP_S };
    let write = Duration::Timed { runtime_s: WRITE_RUNTIME_S, ramp_s: WRITE_RAMP_S };
    let file = |stem: &str, what, measured, jobs| ProbeFile { stem: stem.into(), what, measured, jobs };
    let qd_sweep = points.queue_depths.iter().map(|&qd| job(shape(Random, 100, 4 * KIB, qd, 1), read)).collect();
    let jobs_sweep = points.job_counts.iter().map(|&n| job(shape(Random, 100, 4 * KIB, 32, n), read)).collect();
    let larger = [16 * KIB, 128 * KIB]
        .iter()
        .flat_map(|&bs| [1, 8, 32].map(|qd| job(shape(Random, 100, bs, qd, 1), read)))
        .collect();
    vec![
        file("randread-4k-qd", "4 KiB random reads, one job, at rising queue depth", true, qd_sweep),
        file("randread-4k-jobs", "4 KiB random reads at QD 32 from several jobs", true, jobs_sweep),
        file("randread-large", "16 KiB and 128 KiB random reads", true, larger),
        file("read-seq", "128 KiB sequential reads", true, vec![job(shape(Sequential, 100, 128 * KIB, 32, 1), read)]),
        file(
            "DESTRUCTIVE-precondition",
            "preconditioning to steady state: the whole device written sequentially twice, then random writes \
             (the SNIA SSS PTS recipe); no results to keep",
            false,
            vec![
                ProbeJob {
                    name: "precondition-fill".into(),
                    shape: shape(Sequential, 0, 128 * KIB, 32, 1),
                    duration: Duration::Fill { loops: PRECONDITION_FILL_LOOPS },
                },
                ProbeJob {
                    name: "precondition-randwrite".into(),
                    shape: shape(Random, 0, 4 * KIB, 32, 4),
                    duration: Duration::Timed { runtime_s: PRECONDITION_RANDOM_S, ramp_s: 0 },
                },
            ],
        ),
        file(
            "DESTRUCTIVE-write",
            "4 KiB random writes, a 70/30 random mix and 128 KiB sequential writes, after preconditioning",
            true,
            vec![
                job(shape(Random, 0, 4 * KIB, 1, 1), write),
                job(shape(Random, 0, 4 * KIB, 32, 1), write),
                job(shape(Random, 70, 4 * KIB, 32, 1), write),
                // Last: sequential writes leave whole blocks stale, undoing the random writes' state.
                job(shape(Sequential, 0, 128 * KIB, 32, 1), write),
            ],
        ),
    ]
}

/// fio's size of `bytes`: `4k`, `128k`, `1m` (fio's default `kb_base=1024`), or plain bytes.
pub fn fio_size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "g"), (1 << 20, "m"), (1 << 10, "k")];
    match UNITS.iter().find(|(unit, _)| bytes >= *unit && bytes.is_multiple_of(*unit)) {
        Some((unit, suffix)) => format!("{}{suffix}", bytes / unit),
        None => bytes.to_string(),
    }
}

/// The command that runs `file` and keeps fio's JSON.
pub fn fio_command(file: &ProbeFile) -> String {
    format!("fio --output-format=json --output={0}.json {0}.fio", file.stem)
}

/// The text of `file` as a fio job file on `filename`.
pub fn job_file_text(file: &ProbeFile, filename: &str) -> String {
    let mut text = String::new();
    if file.destructive() {
        let _ = writeln!(text, "; DESTRUCTIVE: these jobs WRITE to {filename} and destroy every byte of data on it.");
    } else {
        let _ = writeln!(text, "; Read-only: no job of this file writes (fio's readonly=1 refuses writes).");
    }
    let _ = writeln!(text, "; ullsim probe: {}.", file.what);
    let _ = writeln!(text, "; Run: {}", fio_command(file));
    let _ = writeln!(text, "\n[global]\nioengine={IOENGINE}\ndirect=1\nfilename={filename}\ngroup_reporting=1");
    // Random offsets drawn afresh on every pass and run (no map of blocks done): a drive sees no repeat.
    let _ = writeln!(text, "norandommap=1\nrandrepeat=0");
    if !file.destructive() {
        let _ = writeln!(text, "readonly=1");
    }
    for job in &file.jobs {
        let shape = &job.shape;
        let _ = writeln!(text, "\n[{}]\nstonewall\nrw={}\nbs={}", job.name, shape.fio_rw(), fio_size(shape.block_size));
        if !matches!(shape.read_percent, 0 | 100) {
            let _ = writeln!(text, "rwmixread={}", shape.read_percent);
        }
        let _ = writeln!(text, "iodepth={}\nnumjobs={}", shape.iodepth, shape.numjobs);
        match job.duration {
            Duration::Timed { runtime_s, ramp_s } => {
                let _ = writeln!(text, "time_based=1\nruntime={runtime_s}\nramp_time={ramp_s}");
            }
            Duration::Fill { loops } => {
                let _ = writeln!(text, "loops={loops}");
            }
        }
    }
    text
}

/// `run.sh`: runs the read-only files; the destructive ones only when given `--destroy-data`.
pub fn run_script(files: &[ProbeFile], filename: &str) -> String {
    let mut text = String::from(
        "#!/bin/sh\n# ullsim probe: runs the probe set's fio jobs, each file's results in FILE.json beside it.\n\
         # The read-only files run by default. The DESTRUCTIVE files write to the device and destroy its data:\n",
    );
    let _ = writeln!(
        text,
        "# they run only as `./run.sh --destroy-data` (device: {filename}).\nset -e\ncd \"$(dirname \"$0\")\""
    );
    for file in files.iter().filter(|f| !f.destructive()) {
        let _ = writeln!(text, "{}", fio_command(file));
    }
    let _ = writeln!(text, "if [ \"$1\" != \"--destroy-data\" ]; then\n    echo \"read-only probes done; the write probes need --destroy-data (they erase {filename})\"\n    exit 0\nfi");
    for file in files.iter().filter(|f| f.destructive()) {
        let _ = writeln!(text, "{}", fio_command(file));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_sizes_follow_the_shape() {
        assert_eq!(fio_size(4096), "4k");
        assert_eq!(fio_size(128 << 10), "128k");
        assert_eq!(fio_size(1 << 20), "1m");
        assert_eq!(fio_size(1000), "1000");
        let set = probe_set(&ProbePoints::default());
        let names: Vec<&str> = set.iter().flat_map(|f| f.jobs.iter().map(|j| j.name.as_str())).collect();
        for name in
            ["randread-4k-qd1", "randread-4k-qd32-jobs4", "randread-128k-qd8", "randrw70-4k-qd32", "write-128k-qd32"]
        {
            assert!(names.contains(&name), "{name} in {names:?}");
        }
        let unique: std::collections::BTreeSet<_> = names.iter().collect();
        assert_eq!(unique.len(), names.len(), "job names are unique");
    }

    #[test]
    fn only_destructive_files_write_and_they_say_so() {
        for file in probe_set(&ProbePoints::default()) {
            assert_eq!(file.destructive(), file.stem.starts_with("DESTRUCTIVE"), "{}", file.stem);
            let text = job_file_text(&file, "/dev/x");
            assert_eq!(text.starts_with("; DESTRUCTIVE"), file.destructive(), "{text}");
            assert_eq!(text.contains("readonly=1"), !file.destructive(), "{text}");
        }
    }
}
