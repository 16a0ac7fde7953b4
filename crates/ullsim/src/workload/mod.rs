//! Workloads: flows that issue I/O. A flow is a synthetic job in fio's vocabulary (closed loop with
//! `iodepth`, or open loop with `rate_iops`) or a trace replayed from a file, streamed.

pub mod app;
pub(crate) mod check;
pub mod distribution;
mod files;
mod flush;
pub mod onoff;
mod queue;
mod replay;
mod synthetic;
pub mod trace;

use std::collections::VecDeque;

use rand_distr::{Distribution, Exp};

use crate::config::scenario::{FlowSpec, RateProcess};
use crate::config::target::Storage;
use crate::engine::{stream_rng, stream_seed, SimRng, Time};
use crate::request::{Class, Op};
pub use check::{active_window, burst_shape, check_arrivals, check_flow_spec, BurstShape, MAX_RATE_IOPS};
use distribution::{BlockPicker, RandomDistribution};
use files::Files;
use flush::{FlushEvery, SyncOnArrival};
use onoff::{burst_group_stream, gap_ns, OnOffClock, DEFAULT_BURST_ON_NS};
use queue::WorkloadQueue;
use replay::Replay;
use synthetic::{block_sizes, Synthetic};
use trace::TraceError;

/// Events the workload schedules for itself.
#[derive(Debug, Clone, Copy)]
pub enum WorkloadEvent {
    /// The flow's `startdelay` has passed.
    Start { flow: u32 },
    /// The next open-loop arrival (or trace record) is due.
    Arrival { flow: u32 },
    /// A closed-loop flow's think time after a completion has passed.
    ThinkDone { flow: u32, job: u32 },
}

/// An I/O the workload wants issued now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewIo {
    pub flow: u32,
    /// The flow's job (fio's numjobs: one task each) that issues it.
    pub job: u32,
    /// The drive it goes to (`flow.device`, a list's pick), or `MD_VOLUME` on the md volume.
    pub drive: u32,
    pub op: Op,
    pub offset: u64,
    pub len: u32,
    /// When the I/O arrived: now, or earlier for an open-loop arrival that waited for the flow's iodepth
    /// cap. Response time is measured from here.
    pub arrived_at: Time,
    /// The arrival was already reported through [`Workload::take_backlogged`].
    pub was_backlogged: bool,
}

/// How long a closed-loop job sleeps after a completion before it issues again: `thinktime` less the
/// `thinktime_spin` the host's task burns first (fio's `thinktime` holds its spin).
fn sleep_after_completion_ns(spec: &FlowSpec) -> Time {
    let spin_ns = spec.thinktime_spin.map_or(0, |t| t.0);
    spec.thinktime.map_or(0, |t| t.0.saturating_sub(spin_ns))
}

enum Source {
    Synthetic(Synthetic),
    Trace(Replay),
    /// A CPU-only flow.
    None,
}

/// How an open-loop flow spaces its arrivals (`rate_process`).
enum Spacing {
    Linear,
    /// Exponential gaps: from the flow's stream, or with an `iodepth` cap from a stream of their own
    /// (`flow:NAME:arrivals`, see `OnOff`).
    Poisson(Option<SimRng>),
    /// Bursts, drawn from a stream of their own (`flow:NAME:arrivals`): the flow's stream also serves
    /// issues, which a backlog delays to completions, so sharing it would make the arrival times depend on
    /// completions (which differ between the flow's alone and shared runs).
    OnOff(OnOffClock, SimRng),
}

/// How a flow decides when to issue.
enum Pacing {
    /// Keep `depth` I/Os outstanding per job (fio's iodepth), with a think time after each completion.
    Closed { depth: u32, think_ns: Time },
    /// Arrivals on a clock, `interval_ns` apart on average; optionally at most `cap` outstanding (arrivals
    /// beyond it wait).
    Open { interval_ns: f64, spacing: Spacing, cap: Option<u32> },
    /// Arrivals at the trace's time stamps.
    TraceTimed,
}

struct Flow {
    /// The drives its I/O goes to (`flow.device`) and its jobs' choices among them.
    files: Files,
    source: Source,
    pacing: Pacing,
    rng: SimRng,
    start_ns: Time,
    stop_ns: Time,
    max_ios: Option<u64>,
    issued: u64,
    outstanding: u32,
    /// Arrival times of open-loop arrivals that found the flow at its iodepth cap, oldest first.
    backlog: VecDeque<Time>,
    exhausted: bool,
    /// Jobs (tasks) of the flow; open-loop arrivals and trace records go to them in turn.
    jobs: u32,
    next_job: u32,
    /// When the flow ran out of I/O to issue (end of trace or `number_ios` reached), if it did.
    ran_out_at: Option<Time>,
    /// When its last I/O completed.
    last_completion_at: Time,
    /// `flush_every`, `fsync`, `fdatasync`: each job's flushes or sync calls (closed-loop flows).
    flush: Option<FlushEvery>,
    /// `fsync`, `fdatasync` of an open-loop flow: sync calls sent with the writes.
    sync_on_arrival: Option<SyncOnArrival>,
    /// `fua`: every write carries Force Unit Access.
    fua: bool,
}

impl Flow {
    fn can_issue_more(&self, now: Time) -> bool {
        !self.exhausted && now < self.stop_ns && self.max_ios.is_none_or(|m| self.issued < m)
    }

    /// Whether a new open-loop arrival may join: the flow still issues, and the backlog does not already
    /// hold the rest of its `number_ios`.
    fn accepts_arrival(&self, now: Time) -> bool {
        self.can_issue_more(now) && self.max_ios.is_none_or(|m| self.issued + (self.backlog.len() as u64) < m)
    }
}

/// All flows of a scenario.
pub struct Workload {
    flows: Vec<Flow>,
    classes: Vec<Class>,
    error: Option<TraceError>,
    /// Changes to flows' backlogs since the last `take_backlog_changes`: (flow, +1 per arrival put in the
    /// backlog, -n for n arrivals dropped when the flow stopped).
    backlog_changes: Vec<(u32, i64)>,
}

impl Workload {
    /// Build the flows (checked specs) on `storage`. Trace files are opened here; `base_dir` resolves paths.
    pub fn new(
        specs: &[FlowSpec],
        seed: u64,
        storage: &Storage,
        run_end: Time,
        base_dir: &std::path::Path,
    ) -> Result<Workload, String> {
        let mut flows = Vec::new();
        let mut classes = Vec::new();
        for spec in specs {
            let stream = format!("flow:{}", spec.name);
            let jobs = spec.numjobs.unwrap_or(1).max(1);
            if spec.is_cpu_only() {
                // Burns CPU only (the host runs it); issues no I/O.
                flows.push(Flow {
                    files: Files::single(0),
                    source: Source::None,
                    pacing: Pacing::TraceTimed,
                    rng: stream_rng(seed, &stream),
                    start_ns: 0,
                    stop_ns: 0,
                    max_ios: None,
                    issued: 0,
                    outstanding: 0,
                    backlog: VecDeque::new(),
                    exhausted: true,
                    jobs,
                    next_job: 0,
                    ran_out_at: Some(0),
                    last_completion_at: 0,
                    flush: None,
                    sync_on_arrival: None,
                    fua: false,
                });
                classes.push(Class { criticality: spec.class, priority: spec.prio });
                continue;
            }
            let spec = app::resolve(spec).map_err(|(key, what)| format!("flow \"{}\": {key}: {what}", spec.name))?;
            let spec = spec.as_ref();
            let (files, capacity) = Files::for_flow(spec, storage, jobs, seed, &stream)?;
            let (start_ns, stop_ns) = active_window(spec, run_end);
            let (source, pacing) = if let Some(path) = &spec.trace {
                let path = if path.is_absolute() { path.clone() } else { base_dir.join(path) };
                let format = spec.format.expect("checked: trace flows have a format");
                let replay = Replay::open(&path, format, spec.time_scale.unwrap_or(1.0), capacity)?;
                let pacing = match spec.iodepth {
                    Some(depth) => Pacing::Closed { depth, think_ns: sleep_after_completion_ns(spec) },
                    None => Pacing::TraceTimed,
                };
                (Source::Trace(replay), pacing)
            } else {
                let rw = spec.rw.expect("checked: synthetic flows have rw");
                let sizes = block_sizes(spec)?;
                let max_bs = sizes.largest();
                let align = sizes.smallest();
                let (region_start, region_len) = spec.region(capacity);
                let picker = rw.is_random().then(|| {
                    let dist = spec.random_distribution.clone().unwrap_or(RandomDistribution::Uniform);
                    let slots = (region_len - max_bs) / align + 1;
                    BlockPicker::new(&dist, slots, stream_seed(seed, &format!("{stream}:scatter")))
                });
                let synthetic = Synthetic {
                    rw,
                    read_percent: spec.rwmixread.unwrap_or(50),
                    sizes,
                    region_start,
                    region_len,
                    align,
                    picker,
                    random_percent: spec.percentage_random.unwrap_or(100),
                    cursors: vec![0; files.count()],
                };
                let pacing = match spec.rate_iops {
                    Some(rate) => {
                        let interval_ns = 1e9 / rate;
                        let spacing = match spec.rate_process.unwrap_or_default() {
                            RateProcess::Linear => Spacing::Linear,
                            // Without a cap every arrival issues at once, so gap and issue draws interleave
                            // the same way whatever the completions, and share the flow's stream (as always).
                            RateProcess::Poisson => {
                                Spacing::Poisson(spec.iodepth.map(|_| stream_rng(seed, &format!("{stream}:arrivals"))))
                            }
                            RateProcess::Onoff => {
                                let on_ns = spec.burst_on.map_or(DEFAULT_BURST_ON_NS, |d| d.0) as f64;
                                let clock = spec
                                    .burst_factor
                                    .and_then(|factor| OnOffClock::new(interval_ns, factor, on_ns))
                                    .ok_or_else(|| format!("flow \"{}\": bad burst_factor or burst_on", spec.name))?;
                                let clock = match &spec.burst_group {
                                    Some(group) => clock.with_schedule(stream_rng(seed, &burst_group_stream(group))),
                                    None => clock,
                                };
                                Spacing::OnOff(clock, stream_rng(seed, &format!("{stream}:arrivals")))
                            }
                        };
                        Pacing::Open { interval_ns, spacing, cap: spec.iodepth }
                    }
                    None => {
                        Pacing::Closed { depth: spec.iodepth.unwrap_or(1), think_ns: sleep_after_completion_ns(spec) }
                    }
                };
                (Source::Synthetic(synthetic), pacing)
            };
            // fsync and fdatasync use the same quiesce-then-sync cycle; the host runs the system call. An open
            // loop sends its sync calls with its writes (checked: only fsync and fdatasync, on blocking engines).
            let (flush, sync_on_arrival) = match (spec.flush_every.or(spec.fsync).or(spec.fdatasync), &pacing) {
                (Some(every), Pacing::Closed { depth, .. }) => (Some(FlushEvery::new(every, *depth, jobs)), None),
                (Some(every), _) => (None, Some(SyncOnArrival::new(every, jobs))),
                (None, _) => (None, None),
            };
            flows.push(Flow {
                files,
                flush,
                sync_on_arrival,
                fua: spec.fua.unwrap_or(false),
                source,
                pacing,
                rng: stream_rng(seed, &stream),
                start_ns,
                stop_ns,
                max_ios: spec.number_ios,
                issued: 0,
                outstanding: 0,
                backlog: VecDeque::new(),
                exhausted: false,
                jobs,
                next_job: 0,
                ran_out_at: None,
                last_completion_at: 0,
            });
            classes.push(Class { criticality: spec.class, priority: spec.prio });
        }
        Ok(Workload { flows, classes, error: None, backlog_changes: Vec::new() })
    }

    /// The class each flow's requests carry.
    pub fn class(&self, flow: u32) -> Class {
        self.classes[flow as usize]
    }

    /// Whether `flow`'s writes carry Force Unit Access (`fua`).
    pub fn fua(&self, flow: u32) -> bool {
        self.flows[flow as usize].fua
    }

    /// Schedule every flow's start.
    pub fn start(&mut self, q: &mut impl WorkloadQueue) {
        for (i, f) in self.flows.iter().enumerate() {
            q.schedule_at(f.start_ns, WorkloadEvent::Start { flow: i as u32 });
        }
    }

    /// A trace error met while running, if any: the run must fail rather than report partial results.
    pub fn take_error(&mut self) -> Option<TraceError> {
        self.error.take()
    }

    /// True when no flow will issue again and none has I/O outstanding (never for a scenario of CPU-only
    /// flows, which runs to its end).
    pub fn finished(&self, now: Time) -> bool {
        self.flows.iter().any(|f| !matches!(f.source, Source::None))
            && self.flows.iter().all(|f| f.outstanding == 0 && f.backlog.is_empty() && !f.can_issue_more(now))
    }

    /// When `flow` stops being active in a run that ends at `run_end` (fio's per-job runtime): once it can
    /// issue no more (its runtime is over, its trace or `number_ios` ran out) and its last I/O completed; a
    /// flow still active, or a CPU-only one, is active to `run_end`.
    pub fn active_until(&self, flow: u32, run_end: Time) -> Time {
        let f = &self.flows[flow as usize];
        if matches!(f.source, Source::None) || f.outstanding > 0 || !f.backlog.is_empty() {
            return run_end;
        }
        let stopped = f.ran_out_at.unwrap_or(f.stop_ns);
        stopped.max(f.last_completion_at).min(run_end)
    }

    /// When the last flow that issues I/O stops being active (see [`Workload::active_until`]); `run_end`
    /// when no flow issues I/O.
    pub fn all_active_until(&self, run_end: Time) -> Time {
        (0..self.flows.len() as u32)
            .filter(|&f| self.issues_io(f))
            .map(|f| self.active_until(f, run_end))
            .max()
            .unwrap_or(run_end)
    }

    /// Whether `flow` issues I/O (a CPU-only flow does not).
    pub fn issues_io(&self, flow: u32) -> bool {
        !matches!(self.flows[flow as usize].source, Source::None)
    }

    /// When `flow` starts issuing (its `startdelay`).
    pub fn starts_at(&self, flow: u32) -> Time {
        self.flows[flow as usize].start_ns
    }

    /// Whether `flow` arrives on a clock (`rate_iops` or a timed trace), so that it can offer more than the
    /// system serves.
    pub fn is_open_loop(&self, flow: u32) -> bool {
        self.issues_io(flow) && matches!(self.flows[flow as usize].pacing, Pacing::Open { .. } | Pacing::TraceTimed)
    }

    /// Handle a workload event; I/Os to issue now are appended to `out`.
    pub fn handle(&mut self, event: WorkloadEvent, q: &mut impl WorkloadQueue, out: &mut Vec<NewIo>) {
        let now = q.now();
        match event {
            WorkloadEvent::Start { flow } => {
                let f = &self.flows[flow as usize];
                if matches!(f.source, Source::None) {
                    return;
                }
                match f.pacing {
                    Pacing::Closed { depth, .. } => {
                        for job in 0..f.jobs {
                            for _ in 0..depth {
                                self.issue(flow, Some(job), now, now, out);
                            }
                        }
                    }
                    Pacing::Open { .. } => self.schedule_arrival(q, flow, now),
                    Pacing::TraceTimed => self.schedule_trace_arrival(q, flow),
                }
            }
            WorkloadEvent::Arrival { flow } => {
                let f = &mut self.flows[flow as usize];
                let cap = match f.pacing {
                    Pacing::Open { cap, .. } => cap,
                    Pacing::Closed { .. } | Pacing::TraceTimed => None,
                };
                if !f.accepts_arrival(now) {
                    return;
                }
                if cap.is_some_and(|c| f.outstanding >= c.saturating_mul(f.jobs)) {
                    f.backlog.push_back(now);
                    self.backlog_changes.push((flow, 1));
                } else {
                    self.issue(flow, None, now, now, out);
                }
                match self.flows[flow as usize].pacing {
                    Pacing::Open { .. } => self.schedule_arrival(q, flow, now),
                    _ => self.schedule_trace_arrival(q, flow),
                }
            }
            WorkloadEvent::ThinkDone { flow, job } => self.issue(flow, Some(job), now, now, out),
        }
    }

    fn schedule_arrival(&mut self, q: &mut impl WorkloadQueue, flow: u32, now: Time) {
        let f = &mut self.flows[flow as usize];
        let Pacing::Open { interval_ns, spacing, .. } = &mut f.pacing else { return };
        let interval_ns = *interval_ns;
        let gap = match spacing {
            Spacing::Linear => gap_ns(interval_ns),
            Spacing::Poisson(own) => {
                let rng = own.as_mut().unwrap_or(&mut f.rng);
                gap_ns(Exp::new(1.0 / interval_ns).map_or(interval_ns, |e| e.sample(rng)))
            }
            Spacing::OnOff(clock, rng) => clock.next_gap(rng, f.stop_ns.saturating_sub(now)),
        };
        let at = now.saturating_add(gap);
        if at < f.stop_ns {
            q.schedule_at(at, WorkloadEvent::Arrival { flow });
        }
    }

    fn schedule_trace_arrival(&mut self, q: &mut impl WorkloadQueue, flow: u32) {
        let f = &mut self.flows[flow as usize];
        let Source::Trace(replay) = &f.source else { return };
        match replay.due_after_start() {
            Some(after) => {
                let at = f.start_ns.saturating_add(after).max(q.now());
                if at < f.stop_ns {
                    q.schedule_at(at, WorkloadEvent::Arrival { flow });
                }
            }
            None => {
                f.exhausted = true;
                f.ran_out_at.get_or_insert(q.now());
            }
        }
    }

    /// Backlog changes since the last call: arrivals put in a backlog count as in flight from then; arrivals
    /// dropped because their flow stopped no longer do.
    pub fn take_backlog_changes(&mut self) -> std::vec::Drain<'_, (u32, i64)> {
        self.backlog_changes.drain(..)
    }

    /// Issue one I/O of `flow` that arrived at `arrived_at`, if the flow may, on `job` (or the flow's jobs in
    /// turn).
    fn issue(&mut self, flow: u32, job: Option<u32>, now: Time, arrived_at: Time, out: &mut Vec<NewIo>) {
        let f = &mut self.flows[flow as usize];
        if !f.can_issue_more(now) {
            return;
        }
        let job = job.unwrap_or_else(|| {
            let j = f.next_job;
            f.next_job = (j + 1) % f.jobs;
            j
        });
        if f.flush.as_ref().is_some_and(|fl| !fl.may_issue(job)) {
            return;
        }
        let next = match &mut f.source {
            Source::None => None,
            Source::Synthetic(s) => Some(s.next(&mut f.rng, &mut f.files, job)),
            Source::Trace(replay) => {
                // A trace flow has one file (checked): a drive or the md volume.
                let io = replay.take().map(|(op, offset, len)| (op, f.files.drive(0), offset, len));
                if let Err(e) = replay.advance() {
                    self.error.get_or_insert(e);
                    f.exhausted = true;
                }
                if replay.is_done() {
                    f.exhausted = true;
                }
                io
            }
        };
        let Some((op, drive, offset, len)) = next else {
            f.exhausted = true;
            f.ran_out_at.get_or_insert(now);
            return;
        };
        f.issued += 1;
        f.outstanding += 1;
        if let Some(fl) = &mut f.flush {
            fl.issued(job, op);
        }
        if f.exhausted || f.max_ios.is_some_and(|m| f.issued >= m) {
            f.ran_out_at.get_or_insert(now);
        }
        out.push(NewIo { flow, job, drive, op, offset, len, arrived_at, was_backlogged: arrived_at < now });
        self.sync_with_write(flow, job, op, arrived_at, out);
    }

    /// An I/O (of `op`) of `flow`'s `job` completed now.
    pub fn on_complete(&mut self, flow: u32, job: u32, op: Op, q: &mut impl WorkloadQueue, out: &mut Vec<NewIo>) {
        let now = q.now();
        let f = &mut self.flows[flow as usize];
        f.outstanding -= 1;
        f.last_completion_at = now;
        if !self.flush_after_completion(flow, job, op, q, out) {
            self.continue_job(flow, job, q, out);
        }
    }

    /// What `flow`'s `job` does after a completion: a closed loop issues again (at once or after its think
    /// time), an open loop takes an arrival from its backlog.
    fn continue_job(&mut self, flow: u32, job: u32, q: &mut impl WorkloadQueue, out: &mut Vec<NewIo>) {
        let now = q.now();
        let f = &mut self.flows[flow as usize];
        match f.pacing {
            Pacing::Closed { think_ns: 0, .. } => self.issue(flow, Some(job), now, now, out),
            Pacing::Closed { think_ns, .. } => {
                if f.can_issue_more(now.saturating_add(think_ns)) {
                    q.schedule_in(think_ns, WorkloadEvent::ThinkDone { flow, job });
                }
            }
            Pacing::Open { .. } | Pacing::TraceTimed => {
                if !f.can_issue_more(now) {
                    // The flow stopped (runtime over): arrivals still waiting are dropped, as fio drops them.
                    if !f.backlog.is_empty() {
                        self.backlog_changes.push((flow, -(f.backlog.len() as i64)));
                        f.backlog.clear();
                    }
                } else if let Some(arrived_at) = f.backlog.pop_front() {
                    self.issue(flow, Some(job), now, arrived_at, out);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
