//! Measurement: per-flow latency histograms (HDR, so memory does not grow with requests), per-layer time
//! breakdown, throughput, and the time-weighted number of requests in flight (for Little's law).

pub mod core_usage;
pub mod energy;
pub mod fairness;
pub mod fio_stats;
pub mod per_job;
mod recorder;
pub mod timeseries;

pub(crate) use recorder::Recorder;
use serde::Serialize;

use crate::engine::Time;
use crate::request::{Criticality, NvmePriority, Op, Request, Stamps};

/// Latency statistics in ns. The mean is exact; percentiles come from an HDR histogram with 3 significant
/// digits (relative error below 0.1%).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LatencySummary {
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub p99_99: u64,
    /// 99.999th percentile: datasheets quote QoS at "five nines" (e.g. P4800X: < 60 us at QD1).
    pub p99_999: u64,
    pub min: u64,
    pub max: u64,
}

/// Mean and 99th percentile of the time spent in one layer, in ns.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LayerTime {
    pub mean: f64,
    pub p99: u64,
}

/// fio's default `percentile_list`: the percentiles its JSON output reports (`clat_ns.percentile`).
pub const FIO_PERCENTILES: [f64; 17] =
    [1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

/// A latency distribution with the statistics fio reports for one (`min`, `max`, `mean`, `stddev`, `N` and
/// the percentiles of [`FIO_PERCENTILES`]), in ns. Not in the native JSON (which has [`LatencySummary`]);
/// [`fio_json`] writes it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LatencyDistribution {
    /// Requests measured (fio's `N`).
    pub count: u64,
    /// Smallest and largest, quantized as [`LatencySummary`]'s.
    pub min: u64,
    pub max: u64,
    /// Exact mean and population standard deviation (of the true values, not the histogram's).
    pub mean: f64,
    pub stddev: f64,
    /// The value at each of [`FIO_PERCENTILES`], in that order (nearest-rank from the HDR histogram).
    pub percentiles: [u64; FIO_PERCENTILES.len()],
}

/// Throughput and latency of one direction (or both).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OpResult {
    pub completed: u64,
    pub iops: f64,
    pub bandwidth_bytes_per_s: f64,
    pub latency_ns: LatencySummary,
    /// What fio's JSON layout needs beyond the native JSON (not serialized; see [`fio_json`]).
    #[serde(skip)]
    pub detail: OpDetail,
}

/// The part of an [`OpResult`] only the fio-json output writes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OpDetail {
    /// Bytes of the counted requests (exact; `bandwidth_bytes_per_s` is this over the window).
    pub bytes: u64,
    /// Issue (or arrival) to completion: the distribution `latency_ns` summarizes (fio's `lat_ns`).
    pub latency: LatencyDistribution,
    /// From the command's submission (written to the submission queue, the doorbell rung) to completion as
    /// the application sees it: the last four parts of [`Breakdown`] (fio's `clat_ns`). `None` where it is
    /// not measured (flushes, the flow's totals).
    pub after_submission: Option<LatencyDistribution>,
    /// Completions and bytes in each whole 500 ms interval of the flow's window (fio's IOPS and bandwidth
    /// samples); empty for flushes and the flow's totals.
    pub intervals: fio_stats::IntervalCounts,
}

impl OpResult {
    /// With `intervals`' whole intervals of a window of `window_ns`.
    fn with_intervals(mut self, intervals: &fio_stats::IntervalCounts, window_ns: Time) -> OpResult {
        self.detail.intervals = intervals.whole(window_ns);
        self
    }
}

/// Where fsync calls spent their time, as FastResponse's Figs. 5(b) and 15(b) split it (ext4 `data=ordered`):
/// T_D1, writing and waiting for the file's own dirty data; then, when the call needs a journal commit, the
/// commit's T_D2 (the other files' ordered data), T_JD (descriptor and metadata blocks to the log) and T_JC
/// (the commit block with PREFLUSH+FUA); and T_Sched, the two hand-offs between the caller and the journal
/// thread (its wake-up until the commit starts, and the commit's end until the caller runs). A call without
/// a commit counts 0 for the last four.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FsyncPhases {
    /// Calls measured (issued in the window and completed).
    pub count: u64,
    pub d1: LayerTime,
    pub d2: LayerTime,
    pub jd: LayerTime,
    pub jc: LayerTime,
    pub sched: LayerTime,
}

/// Where a request's time went, layer by layer (FastResponse's Fig. 5(a): T_PC, T_FS, T_Blk, T_Dev,
/// T_Sched ...). The nine parts add up to its latency exactly.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Breakdown {
    /// Issue to the block layer, less the page cache's and the file system's parts: waiting for the task to
    /// get to it and the system call entry (or the sqpoll thread picking it up).
    pub syscall: LayerTime,
    /// The page cache (buffered I/O): looking pages up and allocating the missing ones before the block
    /// layer, copying to or from the user (a hit, a write, a read's copy after its wake-up), a throttled
    /// writer's pause. 0 for direct I/O.
    pub page_cache: LayerTime,
    /// The file system's own path: ext4's read_iter or write_begin/write_end, or the direct-I/O path that
    /// maps blocks and builds the bio.
    pub file_system: LayerTime,
    /// Block layer: request allocation (and any wait for a tag), the I/O scheduler (and its lock, and
    /// queueing in it).
    pub block: LayerTime,
    /// NVMe driver: building the command and writing the doorbell.
    pub driver: LayerTime,
    /// Doorbell to fetch (waiting in the submission queue and for the controller), plus waiting inside the
    /// device (transaction queues, write-buffer space).
    pub device_queued: LayerTime,
    /// The rest of the device time: doorbell delivery, command fetch and processing, flash work, transfers,
    /// completion posting.
    pub device_service: LayerTime,
    /// Completion: interrupt delivery and handler (or noticing it in a poll loop) up to waking the task,
    /// plus, once the task runs, the system call's return and the application reaping it (a buffered
    /// read's copy to the user is the page cache's).
    pub completion: LayerTime,
    /// Woken to running: the CPU scheduler's delay and the context switch (0 when polling).
    pub cpu_wait: LayerTime,
}

/// Parts of [`Breakdown`].
pub const LAYERS: usize = 9;

impl Breakdown {
    /// The parts, named as in the JSON, in the order of a request's path.
    pub fn parts(&self) -> [(&'static str, &LayerTime); LAYERS] {
        [
            ("syscall", &self.syscall),
            ("page_cache", &self.page_cache),
            ("file_system", &self.file_system),
            ("block", &self.block),
            ("driver", &self.driver),
            ("device_queued", &self.device_queued),
            ("device_service", &self.device_service),
            ("completion", &self.completion),
            ("cpu_wait", &self.cpu_wait),
        ]
    }

    /// The sum of the parts' means: the mean latency.
    pub fn sum_of_means(&self) -> f64 {
        self.parts().iter().map(|(_, p)| p.mean).sum()
    }
}

/// The nine parts of a request's latency, in the order of [`Breakdown`]; `None` if the stamps are out of
/// order, or the page cache's and file system's durations do not fit in their spans (a model bug).
pub fn layer_times(s: &Stamps) -> Option<[Time; LAYERS]> {
    let queued = s.device_fetched.checked_sub(s.device_arrival)? + s.device_internal_wait;
    let device_total = s.device_done.checked_sub(s.submitted)?;
    let before_block = s.block_entered.checked_sub(s.issued)?;
    let after_running = s.completed.checked_sub(s.running)?;
    Some([
        before_block.checked_sub(s.page_cache_ns.checked_add(s.file_system_ns)?)?,
        s.page_cache_ns + s.page_cache_return_ns,
        s.file_system_ns,
        s.driver_entered.checked_sub(s.block_entered)?,
        s.submitted.checked_sub(s.driver_entered)?,
        queued,
        device_total.checked_sub(queued)?,
        s.woken.checked_sub(s.device_done)? + after_running.checked_sub(s.page_cache_return_ns)?,
        s.running.checked_sub(s.woken)?,
    ])
}

/// A stretch of simulated time, ns.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Window {
    pub start_ns: Time,
    pub end_ns: Time,
}

impl Window {
    /// Its length in seconds (at least 1 ns, so that rates over an empty window stay finite).
    pub fn seconds(&self) -> f64 {
        self.end_ns.saturating_sub(self.start_ns).max(1) as f64 / 1e9
    }
}

/// Results of one flow over its part of the measurement window.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FlowResult {
    pub name: String,
    pub class: Criticality,
    pub priority: NvmePriority,
    /// The time the flow's rates are over: the run's window, cut to when the flow was active (from its
    /// `startdelay` to when it could issue no more and its last I/O completed), as fio reports each job
    /// over its own runtime.
    pub window: Window,
    pub completed: u64,
    /// Completions per second of the flow's `window` (its served rate).
    pub iops: f64,
    pub bandwidth_bytes_per_s: f64,
    /// Open-loop flows (`rate_iops`, timed traces): arrivals per second of the flow's `window`; null for
    /// closed-loop flows, which issue only as fast as they are served.
    pub offered_iops: Option<f64>,
    /// Open-loop flows: arrivals of the window not completed at its end (waiting for the `iodepth` cap, in
    /// the host or in the device, or dropped unserved when the flow's `runtime` ended); null for closed-loop
    /// flows.
    pub backlog_at_end: Option<u64>,
    /// Open-loop flows whose `runtime` ended while arrivals waited: how many they dropped unserved (as fio
    /// does), whenever they arrived. Absent when none were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped_at_stop: Option<u64>,
    /// The flow offered more than the system served: its backlog grew by more than
    /// [`OVERLOAD_BACKLOG_SHARE`] of its arrivals (and at least [`OVERLOAD_MIN_BACKLOG`] requests), so its
    /// latencies are those of a queue that grows for as long as the run lasts.
    pub overloaded: bool,
    pub latency_ns: LatencySummary,
    /// Reads only; null when the flow completed none.
    pub read: Option<OpResult>,
    /// Writes only; null when the flow completed none.
    pub write: Option<OpResult>,
    /// Flush commands (`flush_every`), or fsync / fdatasync calls (`fsync`, `fdatasync`); null when the flow
    /// completed none. Not in the flow's other figures.
    pub flush: Option<OpResult>,
    /// Where the flow's fsync calls spent their time (only for flows with `fsync` or `fdatasync`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fsync_phases_ns: Option<FsyncPhases>,
    pub breakdown_ns: Breakdown,
    /// CPU time of the flow's tasks (and their sqpoll threads) over the whole run, in cores.
    pub cpu_cores: f64,
    /// The part of `cpu_cores` in user code (the rest is kernel and polling).
    pub cpu_user_cores: f64,
    /// Times the flow's tasks were switched onto a core over the run's window.
    pub context_switches: u64,
    /// Time-weighted mean number of the flow's requests in flight (arrived, not completed).
    pub mean_in_flight: f64,
    /// Requests still in flight when the run ended (not in any latency figure). A large number next to a
    /// short run means the flow was stalled, not fast.
    pub in_flight_at_end: u64,
    /// Age at the end of the run of the oldest request still in flight (0 if none). Larger than
    /// `latency_ns.max` (and `flush`'s) means a request waited longer than any that completed: look for a stall.
    pub oldest_in_flight_ns: u64,
    /// Die time of garbage collection charged to the flow over the whole run, in proportion to the host
    /// pages it wrote to each collected plane (see `device/gc_cost.rs`).
    pub gc_busy_ns: u64,
    /// The flow's results when run alone (only with `[metrics] fairness = true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alone: Option<fairness::AloneResult>,
    /// Mean latency shared / alone (only with `[metrics] fairness = true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowdown: Option<f64>,
    /// Each job's results, in job order (only with `[metrics] per_job = true`, for a flow with `numjobs` > 1
    /// and no `group_reporting`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs: Option<Vec<per_job::JobResult>>,
    /// Submission-to-completion latencies of the flow's reads and writes in fio's latency distribution
    /// buckets (fio-json's `latency_ns`, `latency_us`, `latency_ms`; not serialized).
    #[serde(skip)]
    pub latency_buckets: fio_stats::LatencyBuckets,
}

/// What a reader of a run's results must not miss: overloaded flows, flows that completed nothing.
/// `issues_io` says which flows issue I/O at all (a CPU-only flow completes none by design).
pub fn warnings(flows: &[FlowResult], issues_io: &[bool]) -> Vec<String> {
    let mut out = Vec::new();
    for (f, _) in flows.iter().zip(issues_io).filter(|(_, &io)| io) {
        if let (true, Some(offered), Some(backlog)) = (f.overloaded, f.offered_iops, f.backlog_at_end) {
            let waiting = match f.dropped_at_stop {
                Some(dropped) => format!(
                    "{backlog} of the window's arrivals were never served (its runtime ended with {dropped} requests \
                     waiting, which it dropped)"
                ),
                None => format!("{backlog} of its requests were still waiting at the end"),
            };
            out.push(format!(
                "flow \"{}\" is overloaded: it offered {offered:.0} IOPS but was served {:.0}, and {waiting}; its \
                 latencies grow with the run's length and describe the run, not the flow (lower rate_iops to what \
                 the system serves)",
                f.name, f.iops
            ));
        }
        if f.completed == 0 {
            out.push(format!(
                "flow \"{}\" completed no I/O in the measurement window{}",
                f.name,
                if f.in_flight_at_end > 0 {
                    format!(
                        " ({} requests still in flight: a stall, or a window too short for them)",
                        f.in_flight_at_end
                    )
                } else {
                    String::new()
                }
            ));
        }
    }
    out
}

/// An open-loop flow is overloaded when the arrivals of the window it has not completed exceed this share of
/// them: a stable queue holds about rate x latency requests, a small share of a run's arrivals.
pub const OVERLOAD_BACKLOG_SHARE: f64 = 0.05;
/// ... and at least this many (short runs of fast flows hold a few dozen requests in flight legitimately).
pub const OVERLOAD_MIN_BACKLOG: u64 = 64;

struct FlowMetrics {
    name: String,
    class: Criticality,
    priority: NvmePriority,
    /// The reads' and the writes' latencies (their total is the two taken together at the end).
    read: Recorder,
    write: Recorder,
    flush: Recorder,
    /// Submission to completion of the reads and of the writes (the last four parts of [`Breakdown`]).
    read_after_submission: Recorder,
    write_after_submission: Recorder,
    /// When the flow's window starts (its `startdelay`, not before the warm-up's end): fio's samples are
    /// 500 ms intervals from there.
    start: Time,
    /// Completions and bytes of the reads and of the writes per 500 ms interval.
    read_intervals: fio_stats::IntervalCounts,
    write_intervals: fio_stats::IntervalCounts,
    /// The reads' and writes' submission-to-completion latencies in fio's latency distribution buckets.
    latency_buckets: fio_stats::LatencyBuckets,
    /// One recorder per layer, in the order of [`Breakdown`].
    layers: [Recorder; LAYERS],
    in_flight: u64,
    in_flight_area: u128,
    in_flight_since: Time,
    /// Arrivals in the window (open-loop flows: the offered load).
    arrivals: u64,
    /// Arrivals in the window that completed.
    arrivals_completed: u64,
    /// Arrivals dropped unserved because the flow stopped (its `runtime` ended) while they waited.
    dropped: u64,
    /// Arrivals and completions since the start, warm-up included (for overload errors).
    arrived_all: u64,
    completed_all: u64,
    /// Each job's recorders (`[metrics] per_job`).
    jobs: Option<per_job::JobRecorders>,
}

/// Collects measurements for all flows between `warmup` and the end of the run.
pub struct Metrics {
    flows: Vec<FlowMetrics>,
    warmup: Time,
    /// Requests of all flows arrived and not completed.
    in_flight: u64,
}

impl Metrics {
    /// `jobs_apart`: for each flow, how many jobs to record apart (0: none; see [`per_job::jobs_apart`]);
    /// `starts`: when each flow starts issuing (its `startdelay`).
    pub fn new(
        flows: &[(String, Criticality, NvmePriority)],
        jobs_apart: &[u32],
        starts: &[Time],
        warmup: Time,
    ) -> Self {
        Metrics {
            flows: flows
                .iter()
                .zip(jobs_apart)
                .zip(starts)
                .map(|(((name, class, priority), &jobs), &start)| FlowMetrics {
                    name: name.clone(),
                    class: *class,
                    priority: *priority,
                    read: Recorder::new(),
                    write: Recorder::new(),
                    flush: Recorder::new(),
                    read_after_submission: Recorder::new(),
                    write_after_submission: Recorder::new(),
                    start: start.max(warmup),
                    read_intervals: fio_stats::IntervalCounts::default(),
                    write_intervals: fio_stats::IntervalCounts::default(),
                    latency_buckets: fio_stats::LatencyBuckets::default(),
                    layers: std::array::from_fn(|_| Recorder::new()),
                    in_flight: 0,
                    in_flight_area: 0,
                    in_flight_since: 0,
                    arrivals: 0,
                    arrivals_completed: 0,
                    dropped: 0,
                    arrived_all: 0,
                    completed_all: 0,
                    jobs: (jobs > 0).then(|| per_job::JobRecorders::new(jobs)),
                })
                .collect(),
            warmup,
            in_flight: 0,
        }
    }

    /// Number of flows.
    pub fn flows(&self) -> usize {
        self.flows.len()
    }

    /// Requests of all flows arrived and not completed.
    pub fn total_in_flight(&self) -> u64 {
        self.in_flight
    }

    /// The flow with the most requests in flight: its name, arrivals and completions since the start.
    pub fn most_backlogged(&self) -> (&str, u64, u64) {
        let f = self.flows.iter().max_by_key(|f| f.in_flight).expect("a run has flows");
        (&f.name, f.arrived_all, f.completed_all)
    }

    fn integrate(&mut self, flow: usize, now: Time) {
        let f = &mut self.flows[flow];
        let from = f.in_flight_since.max(self.warmup);
        if now > from {
            f.in_flight_area += f.in_flight as u128 * (now - from) as u128;
        }
        f.in_flight_since = now;
    }

    /// `delta` requests of `flow` arrived (positive) or were dropped unserved (negative) at `now`.
    pub fn change_in_flight(&mut self, flow: u32, now: Time, delta: i64) {
        self.integrate(flow as usize, now);
        let f = &mut self.flows[flow as usize];
        f.in_flight = (f.in_flight as i64 + delta) as u64;
        self.in_flight = (self.in_flight as i64 + delta) as u64;
        if delta > 0 {
            f.arrived_all += delta as u64;
            if now >= self.warmup {
                f.arrivals += delta as u64;
            }
        } else {
            // Dropped unserved when the flow stopped: still arrivals of the window, not completed (they count
            // in its backlog, so an overloaded flow is flagged whatever ended it), and counted apart.
            f.dropped += delta.unsigned_abs();
        }
    }

    /// `req`, of its flow's `job`, completed at `now` (its stamps are final).
    pub fn on_complete(&mut self, req: &Request, job: u32, now: Time) {
        let flow = req.flow as usize;
        self.integrate(flow, now);
        self.flows[flow].in_flight -= 1;
        self.flows[flow].completed_all += 1;
        self.in_flight -= 1;
        let s = &req.stamps;
        if s.issued < self.warmup {
            return;
        }
        let f = &mut self.flows[flow];
        f.arrivals_completed += 1;
        let latency = s.completed - s.issued;
        let bytes = req.len as u64;
        // Flushes have a summary of their own and stay out of the flow's figures (and its breakdown), as fio
        // reports fsync latencies apart from its reads' and writes'.
        let interval = (now.saturating_sub(f.start) / fio_stats::FIO_SAMPLE_INTERVAL_NS) as usize;
        let (direction, after_submission, intervals) = match req.op {
            Op::Read => (&mut f.read, &mut f.read_after_submission, &mut f.read_intervals),
            Op::Write => (&mut f.write, &mut f.write_after_submission, &mut f.write_intervals),
            Op::Flush => {
                f.flush.record(latency, 0);
                if let Some(jobs) = &mut f.jobs {
                    jobs.record(job, Op::Flush, latency, 0, 0, interval);
                }
                return;
            }
        };
        intervals.record(interval, bytes);
        direction.record(latency, bytes);
        let parts = layer_times(s).unwrap_or_default();
        let since_submission = parts[LAYERS - 4..].iter().sum();
        after_submission.record(since_submission, 0);
        f.latency_buckets.record(since_submission);
        if let Some(jobs) = &mut f.jobs {
            jobs.record(job, req.op, latency, since_submission, bytes, interval);
        }
        for (recorder, &value) in f.layers.iter_mut().zip(&parts) {
            recorder.record(value, 0);
        }
    }

    /// Per-flow results, each over its own window (`windows`, in flow order); `open_loop` says which flows
    /// arrive on a clock.
    pub fn results(&mut self, windows: &[Window], open_loop: &[bool]) -> Vec<FlowResult> {
        for (flow, window) in windows.iter().enumerate() {
            self.integrate(flow, window.end_ns);
        }
        self.flows
            .iter()
            .zip(windows)
            .zip(open_loop)
            .map(|((f, &window), &open_loop)| {
                let seconds = window.seconds();
                let window_ns = window.end_ns.saturating_sub(window.start_ns);
                // Reads and writes together: the same counts, sums and buckets as recording each twice.
                let mut both = f.read.clone();
                both.add(&f.write);
                let all = both.op_result(seconds, None);
                // Saturating: arrivals dropped in the window may have arrived during the warm-up.
                // (Dropped arrivals count: they arrived and were never served.)
                let backlog = f.arrivals.saturating_sub(f.arrivals_completed);
                let overloaded = open_loop
                    && backlog > OVERLOAD_MIN_BACKLOG
                    && backlog as f64 > OVERLOAD_BACKLOG_SHARE * f.arrivals as f64;
                FlowResult {
                    name: f.name.clone(),
                    class: f.class,
                    priority: f.priority,
                    window,
                    completed: all.completed,
                    iops: all.iops,
                    bandwidth_bytes_per_s: all.bandwidth_bytes_per_s,
                    offered_iops: open_loop.then(|| f.arrivals as f64 / seconds),
                    backlog_at_end: open_loop.then_some(backlog),
                    dropped_at_stop: (open_loop && f.dropped > 0).then_some(f.dropped),
                    overloaded,
                    latency_ns: all.latency_ns,
                    read: (f.read.count() > 0).then(|| {
                        f.read
                            .op_result(seconds, Some(&f.read_after_submission))
                            .with_intervals(&f.read_intervals, window_ns)
                    }),
                    write: (f.write.count() > 0).then(|| {
                        f.write
                            .op_result(seconds, Some(&f.write_after_submission))
                            .with_intervals(&f.write_intervals, window_ns)
                    }),
                    flush: (f.flush.count() > 0).then(|| f.flush.op_result(seconds, None)),
                    fsync_phases_ns: None,
                    breakdown_ns: Breakdown {
                        syscall: f.layers[0].layer(),
                        page_cache: f.layers[1].layer(),
                        file_system: f.layers[2].layer(),
                        block: f.layers[3].layer(),
                        driver: f.layers[4].layer(),
                        device_queued: f.layers[5].layer(),
                        device_service: f.layers[6].layer(),
                        completion: f.layers[7].layer(),
                        cpu_wait: f.layers[8].layer(),
                    },
                    cpu_cores: 0.0,
                    cpu_user_cores: 0.0,
                    context_switches: 0,
                    mean_in_flight: f.in_flight_area as f64 / (seconds * 1e9),
                    in_flight_at_end: f.in_flight,
                    oldest_in_flight_ns: 0,
                    gc_busy_ns: 0,
                    alone: None,
                    slowdown: None,
                    jobs: f.jobs.as_ref().map(|jobs| jobs.results(seconds, window_ns)),
                    latency_buckets: f.latency_buckets.clone(),
                }
            })
            .collect()
    }
}
