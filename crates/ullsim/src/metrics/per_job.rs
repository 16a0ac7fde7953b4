//! Each job's results (fio's numjobs: one task each) of a flow with `numjobs` > 1, recorded apart with
//! `[metrics] per_job` unless the flow sets `group_reporting`: the results' `flows[].jobs` and fio-json's one
//! entry per job (what fio writes without `group_reporting`). A job's recorders are made when it completes
//! its first request of that kind, so a job that only reads holds two latency histograms (~270 KB each:
//! issue to completion, submission to completion), and CPU-only jobs none.

use serde::Serialize;

use super::fio_stats::{IntervalCounts, LatencyBuckets};
use super::{LatencySummary, OpResult, Recorder};
use crate::config::Scenario;
use crate::engine::Time;
use crate::request::Op;

/// Most jobs of a run's I/O flows recorded apart (at most ~1.4 MB each, so ~350 MB in all): a flow whose
/// jobs would pass it, counting the flows before it, is recorded as a group, with a warning.
pub const MAX_JOBS_APART: u32 = 256;

/// One job's results over its flow's window (`flows[].window`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct JobResult {
    /// The job's number in its flow, from 0.
    pub job: u32,
    pub completed: u64,
    pub iops: f64,
    pub bandwidth_bytes_per_s: f64,
    /// Over its reads and writes.
    pub latency_ns: LatencySummary,
    /// Reads only; null when the job completed none.
    pub read: Option<OpResult>,
    /// Writes only; null when the job completed none.
    pub write: Option<OpResult>,
    /// Its flushes or fsync / fdatasync calls; null when it completed none.
    pub flush: Option<OpResult>,
    /// CPU of the job's task (and its sqpoll thread) over the run's window, in cores, as the flow's.
    pub cpu_cores: f64,
    /// The part of `cpu_cores` in user code.
    pub cpu_user_cores: f64,
    /// Times the job's task (and its sqpoll thread) were switched onto a core over the run's window.
    pub context_switches: u64,
    /// Its reads' and writes' submission-to-completion latencies in fio's latency distribution buckets
    /// (fio-json; not serialized).
    #[serde(skip)]
    pub latency_buckets: LatencyBuckets,
}

/// How many jobs of each flow `scenario` records apart (0: the flow as a group), and a warning for each flow
/// that would have been but did not fit in [`MAX_JOBS_APART`].
pub fn jobs_apart(scenario: &Scenario) -> (Vec<u32>, Vec<String>) {
    let mut budget = MAX_JOBS_APART;
    let mut warnings = Vec::new();
    let apart = scenario
        .flows
        .iter()
        .map(|f| {
            let jobs = f.numjobs.unwrap_or(1);
            if !scenario.metrics.per_job || jobs <= 1 || f.group_reporting == Some(true) {
                return 0;
            }
            // CPU-only jobs record no latencies: nothing to bound.
            if f.is_cpu_only() {
                return jobs;
            }
            if jobs > budget {
                warnings.push(format!(
                    "flow \"{}\": its {jobs} jobs are reported as one group (no flows[].jobs): metrics.per_job \
                     records at most {MAX_JOBS_APART} jobs of a run apart ({} were left), as each costs latency \
                     histograms; set group_reporting = true on the flow to say so",
                    f.name, budget
                ));
                return 0;
            }
            budget -= jobs;
            jobs
        })
        .collect();
    (apart, warnings)
}

/// The recorders of one flow's jobs.
#[derive(Debug, Clone)]
pub(super) struct JobRecorders {
    jobs: Vec<Job>,
}

#[derive(Debug, Clone, Default)]
struct Job {
    read: Option<Box<Direction>>,
    write: Option<Box<Direction>>,
    flush: Option<Box<Recorder>>,
    latency_buckets: LatencyBuckets,
}

/// One direction's latencies (issue to completion, and submission to completion) and its completions per
/// 500 ms interval.
#[derive(Debug, Clone)]
struct Direction {
    latency: Recorder,
    after_submission: Recorder,
    intervals: IntervalCounts,
}

impl JobRecorders {
    pub(super) fn new(jobs: u32) -> Self {
        JobRecorders { jobs: vec![Job::default(); jobs as usize] }
    }

    /// A request of `job` completed after `latency` (`after_submission` of it after its submission; not
    /// read for flushes), in the flow window's 500 ms `interval`.
    pub(super) fn record(
        &mut self,
        job: u32,
        op: Op,
        latency: Time,
        after_submission: Time,
        bytes: u64,
        interval: usize,
    ) {
        let j = &mut self.jobs[job as usize];
        let direction = match op {
            Op::Read => &mut j.read,
            Op::Write => &mut j.write,
            Op::Flush => {
                j.flush.get_or_insert_with(|| Box::new(Recorder::new())).record(latency, 0);
                return;
            }
        };
        let d = direction.get_or_insert_with(|| {
            Box::new(Direction {
                latency: Recorder::new(),
                after_submission: Recorder::new(),
                intervals: IntervalCounts::default(),
            })
        });
        d.latency.record(latency, bytes);
        d.after_submission.record(after_submission, 0);
        d.intervals.record(interval, bytes);
        j.latency_buckets.record(after_submission);
    }

    /// Each job's results over `seconds` (`window_ns`), CPU zero (the host's, filled in by the simulation).
    pub(super) fn results(&self, seconds: f64, window_ns: Time) -> Vec<JobResult> {
        self.jobs
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let op = |d: &Option<Box<Direction>>| {
                    d.as_ref().map(|d| {
                        d.latency.op_result(seconds, Some(&d.after_submission)).with_intervals(&d.intervals, window_ns)
                    })
                };
                let mut all = Recorder::new();
                for d in [&j.read, &j.write].into_iter().flatten() {
                    all.add(&d.latency);
                }
                let all = all.op_result(seconds, None);
                JobResult {
                    job: i as u32,
                    completed: all.completed,
                    iops: all.iops,
                    bandwidth_bytes_per_s: all.bandwidth_bytes_per_s,
                    latency_ns: all.latency_ns,
                    read: op(&j.read),
                    write: op(&j.write),
                    flush: j.flush.as_ref().map(|f| f.op_result(seconds, None)),
                    cpu_cores: 0.0,
                    cpu_user_cores: 0.0,
                    context_switches: 0,
                    latency_buckets: j.latency_buckets.clone(),
                }
            })
            .collect()
    }
}
