//! The full host: the application's tasks on CPU cores, the system call, blk-mq with its I/O scheduler, the
//! NVMe driver, and interrupts or polling on the way back (`host.model = "full"`).
//!
//! Each flow runs `numjobs` tasks. A task loops like fio: reap completions (user code), submit new I/O
//! (system call -> file system -> block layer -> driver: one kernel segment per request, doorbells rung
//! where the driver finishes), then wait for completions by sleeping (interrupt) or spinning (polling). With
//! `sqthread_poll` a kernel thread on the next core submits instead, spinning on the submission ring.
//! Completions come back through the interrupt handler (which completes requests in the block layer and wakes
//! their tasks) or a poll loop. Every request is stamped at each hop; see `metrics::Breakdown`.

mod app_work;
mod complete;
mod dedcore;
mod fs;
mod hazard;
mod lbio;
mod md;
mod results;
mod submit;
mod threads;
mod xler;

use std::collections::VecDeque;

use super::block::sched::SchedRequest;
use super::block::{BlockLayer, Dispatched, Plug, PlugOutcome};
use super::completion::{self, CompletionPolicy, WaitMode};
use super::cpu::burner::{BurnStep, Burner};
use super::cpu::{Activity, Cpu, TaskId};
use super::nvme::{IrqAction, NvmeDriver};
use super::queue::HostQueue;
use super::results::{FlowCpu, FlowHost, HostCounters, HostNames, HostResults};
use super::syscall::{self, Call, Step};
use super::HostEvent;
use crate::config::host::HostModel;
use crate::config::scenario::{parse_cpu_list, CpusAllowedPolicy, FlowSpec, IoEngine, LatencyFrom};
use crate::config::{HostConfig, Scenario};
use crate::device::Device;
use crate::engine::Time;
use crate::request::{Class, Criticality, NvmePriority, Op, ReqId, Request, RequestArena, Stamps};
use app_work::{AfterReap, AppWork};
use complete::copy_lower_stamps;
use fs::{FsCall, FsHost, Thread};

/// "No request" in the links below.
const NO_PARENT: u32 = u32::MAX;

/// A system call submitting this many requests or more plugs them (io_uring's `need_plug` and libaio's
/// `AIO_PLUG_THRESHOLD` both start a plug above two).
const PLUG_MIN_BATCH: usize = 3;

/// What the host keeps per request (by request id).
#[derive(Debug, Clone, Copy)]
struct HostReq {
    job: u32,
    hwq: u32,
    /// The core that submitted it to the block layer.
    submit_core: u32,
    mode: WaitMode,
    /// For a piece of a split request: the request it belongs to.
    parent: u32,
    /// For a split request: pieces not completed yet.
    pieces_left: u32,
    /// For a request made of merged bios: the first application request it carries.
    riders: u32,
    /// For a carried application request: the next one carried with it.
    next_rider: u32,
    /// A bio of the file system (page cache, journal), not an application request.
    fs_bio: bool,
    /// An AIOS bio that goes as LBIO, around the block layer (`full/lbio.rs`).
    lbio: bool,
    /// For a command made by FlashShare's hazard merge (`full/hazard.rs`): the bypassed critical request and
    /// the queued one it took along, each completed through its own path when the command completes.
    hazard_merged: Option<(ReqId, ReqId)>,
    /// For a file-system bio: the I/O context of the task that submitted it (None: the job's). bfq queues a
    /// request by its submitter's context (`bfq_prepare_request` takes `ioc_find_get_icq` of `current`,
    /// `bfq_get_queue` the context's ioprio), so the journal thread's commit writes go to the journal
    /// thread's queue, not to the queue of the task whose fsync asked for the commit.
    io_context: Option<IoContext>,
}

/// What the block layer's schedulers see of the task a request comes from: the task (bfq's process queue)
/// and its I/O priority class and level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct IoContext {
    task: TaskId,
    class: u8,
    level: u8,
}

/// The I/O priority level of a task that set none: IOPRIO_BE_NORM (`task_nice_ioprio` at nice 0).
const IOPRIO_NORM_LEVEL: u8 = 4;

impl Default for HostReq {
    fn default() -> Self {
        HostReq {
            job: 0,
            hwq: 0,
            submit_core: 0,
            mode: WaitMode::Interrupt,
            parent: NO_PARENT,
            pieces_left: 0,
            riders: NO_PARENT,
            next_rider: NO_PARENT,
            fs_bio: false,
            lbio: false,
            hazard_merged: None,
            io_context: None,
        }
    }
}

/// What a task's current segment does (applied when it ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    None,
    /// Reaping the first `n` completions of `done` (user code, after the system call returns).
    Reap(u32),
    /// The application's `response_cpu` on the first `n` completions of `done`.
    Respond(u32),
    /// Its `thinktime_spin` after the first `n` completions of `done`.
    Spin(u32),
    /// Processing the first `n` polled completion entries of `found`.
    PollComplete(u32),
    /// System call transition (exit and re-entry, or exit before idling).
    Transition,
}

/// How a job's task is waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waiting {
    No,
    /// Asleep until a completion's interrupt or new work.
    Sleeping,
    /// Asleep for hybrid polling's delay.
    HybridSleep,
    /// Spinning on the completion queue.
    Spinning,
}

/// One fio job: a task issuing one flow's I/O.
struct Job {
    flow: u32,
    task: TaskId,
    /// The NVMe driver's queue set for the flow's priority class.
    queue_set: u32,
    /// Linux I/O priority class as the block layer's schedulers number it.
    ioprio_class: u8,
    engine: IoEngine,
    mode: WaitMode,
    /// The kernel thread that submits (and polls) for it with `sqthread_poll`.
    sqpoll: Option<TaskId>,
    /// Issued by the application, not yet submitted.
    to_submit: VecDeque<ReqId>,
    /// In the submission ring for the sqpoll thread.
    sq_ring: VecDeque<ReqId>,
    /// The block-layer plug of whichever task submits for the job.
    plug: Plug,
    /// Polled completion entries seen on the device's queue, not processed yet.
    found: VecDeque<ReqId>,
    /// Completed, waiting for the application to reap.
    done: VecDeque<ReqId>,
    /// Submitted and not yet completed.
    in_flight: u32,
    /// The system call the task is in, if any.
    call: Option<Call>,
    /// A file-system call's program (with `call` = `Call::FileSystem`), and the request it serves.
    fs_call: Option<FsCall>,
    fs_req: Option<ReqId>,
    /// Direction and size of the last I/O submitted (what hybrid polling sleeps for).
    last_submitted: (Op, u32),
    /// Most requests one submitting system call takes (`iodepth_batch_submit`).
    batch_submit: u32,
    /// `latency_from = "submit"`: a request's response time starts when this job's task submits it.
    latency_from_submit: bool,
    /// The application's CPU work per reaped I/O.
    app_work: AppWork,
    hybrid_slept: bool,
    waiting: Waiting,
    action: Action,
    sq_action: Action,
}

/// `latency_from = "submit"`: `req`'s response time starts at `at`, when its task submits it (the clock
/// of fio's `lat` and db_bench's per-op time), not when it arrived.
fn restart_clock(requests: &mut RequestArena, req: ReqId, at: Time) {
    let s = &mut requests[req].stamps;
    s.issued = s.issued.max(at);
}

#[derive(Debug, Clone, Copy)]
enum Role {
    Job(u32),
    SqPoll(u32),
    Burner(u32),
    FsThread(Thread),
}

struct Costs {
    syscall_entry_ns: Time,
    syscall_exit_ns: Time,
    fs_submit_ns: Time,
    reap_ns: Time,
    wakeup_ns: Time,
    poll_loop_ns: Time,
    /// Moving a line between two cores, and the lines an interrupt's completion of another core's request
    /// moves (`cpu.remote_completion_lines`).
    line: crate::host::block::LineTransfer,
    remote_completion_lines: u64,
    md_submit_ns: Time,
}

/// A handler run in progress: an NVMe vector's, an accelerator interrupt's or DedCore's polling core's.
#[derive(Default)]
struct IsrRun {
    reqs: Vec<ReqId>,
    end: Time,
    gen: u32,
    active: bool,
}

pub struct FullHost {
    cpu: Cpu,
    block: BlockLayer,
    nvme: NvmeDriver,
    completion: Box<dyn CompletionPolicy>,
    costs: Costs,
    /// Largest request of a critical flow, and of the others (FastResponse's split).
    max_request_bytes: u64,
    noncritical_max_request_bytes: u64,
    /// Critical requests go around the plug and the scheduler (FastResponse's bypass).
    critical_bypass: bool,
    /// The hardware queues each core submits to, by drive and core, which FlashShare's hazard check searches.
    core_hwqs: Vec<Vec<Vec<u32>>>,
    /// The file system, when a flow uses files.
    fs: Option<Box<FsHost>>,
    jobs: Vec<Job>,
    burners: Vec<Burner>,
    roles: Vec<Role>,
    timer_gen: Vec<u32>,
    /// Tasks interrupted while spinning that must be told what to run.
    kicked: Vec<TaskId>,
    /// Tasks that reaped completions and go on once the application issued what follows.
    after_delivery: Vec<TaskId>,
    /// Scratch: the `after_delivery` list being resumed, kept to be reused (no allocation per completion).
    resuming: Vec<TaskId>,
    /// First job of each flow.
    first_job: Vec<u32>,
    /// Tasks of each flow's jobs (a job's task and its sqpoll thread, if any), for CPU accounting.
    flow_tasks: Vec<Vec<Vec<TaskId>>>,
    /// Start time of each task that starts on a timer (burners, sqpoll threads).
    timed_starts: Vec<(TaskId, Time)>,
    reqs: Vec<HostReq>,
    isr: Vec<IsrRun>,
    dispatched: Vec<Dispatched>,
    scratch: Vec<ReqId>,
    /// Tasks the current interrupt handler run has paid a wake-up for.
    woken_in_irq: Vec<TaskId>,
    xler: Option<xler::Xler>,
    dedcore: Option<dedcore::DedicatedCore>,
    /// The due time of the I/O scheduler's timer an event is scheduled for.
    block_timer_armed: Option<Time>,
    /// The md volume (`[md]`), if the scenario has one, and scratch for a request's pieces on it.
    md: Option<crate::config::md::Raid0>,
    md_pieces: Vec<crate::config::md::Piece>,
}

impl FullHost {
    /// Build the host for `flows` on its drives `devices`: cores, tasks, queues.
    pub fn new(scenario: &Scenario, devices: &mut [Device]) -> Result<FullHost, String> {
        // The costs at this host's cores' speed (`host.cpu.speed`), once, for every part built below.
        let host = scenario.host.at_its_cpu_speed();
        let (cfg, flows, run_end) = (&host, &scenario.flows[..], scenario.run.duration.0);
        let mut cpu = Cpu::new(cfg)?;
        let md = scenario.storage().map_err(|e| e.to_string())?.md;
        // One queue set per NVMe priority class the I/O flows use, in class order.
        let mut classes: Vec<NvmePriority> = flows.iter().filter(|f| !f.is_cpu_only()).map(|f| f.prio).collect();
        classes.sort();
        classes.dedup();
        let nvme = NvmeDriver::new(&cfg.nvme, cfg.cores, cfg.queue_pairs, &classes, devices);
        // Each drive's hardware queues hold its submission queues' entries but one.
        let depths: Vec<u32> = devices.iter().map(|d| d.queue_depth().saturating_sub(1).max(1)).collect();
        let line = crate::host::block::LineTransfer::of(&cfg.cpu);
        let mut block =
            BlockLayer::for_drives(&cfg.block, &cfg.io_scheduler, nvme.hw_queues_per_drive(), &depths, line)?
                .at_cpu_speed(cfg.cpu.speed);
        block.share_submission_queues(|hwq| nvme.is_shared(hwq), line);
        let completion = completion::make(&cfg.completion).ok_or_else(|| {
            format!("host.completion: unknown policy \"{}\"; expected one of {:?}", cfg.completion, completion::names())
        })?;
        let mut jobs = Vec::new();
        let mut burners = Vec::new();
        let mut roles = Vec::new();
        let mut first_job = Vec::new();
        let mut flow_tasks = Vec::new();
        let mut timed_starts = Vec::new();
        // DedCore's polling core runs no task.
        let all: Vec<u32> = (0..cfg.task_cores()).collect();
        let mut spread = 0usize;
        for (flow, spec) in flows.iter().enumerate() {
            first_job.push(jobs.len() as u32);
            let allowed = match &spec.cpus_allowed {
                Some(list) => parse_cpu_list(list, cfg.cores)?,
                None => all.clone(),
            };
            let split = spec.cpus_allowed_policy.unwrap_or_default() == CpusAllowedPolicy::Split;
            let class = Class { criticality: spec.class, priority: spec.prio };
            let critical = class.criticality == Criticality::Critical;
            let (engine, start) = (spec.ioengine.unwrap_or_default(), spec.startdelay.map_or(0, |d| d.0));
            let mut tasks = Vec::new();
            for j in 0..spec.numjobs.unwrap_or(1).max(1) as usize {
                // Spread tasks over their cores as fork balancing does; `split` pins each to one.
                let first = allowed[if split { j } else { spread } % allowed.len()];
                spread += 1;
                let mut cores = vec![first];
                if !split {
                    cores.extend(allowed.iter().copied().filter(|&c| c != first));
                }
                let task = cpu.add_task(cores, critical);
                tasks.push(vec![task]);
                if engine == IoEngine::Cpuio {
                    roles.push(Role::Burner(burners.len() as u32));
                    burners.push(Burner::new(spec, start, run_end));
                    timed_starts.push((task, start));
                    continue;
                }
                roles.push(Role::Job(jobs.len() as u32));
                let sqpoll = (spec.sqthread_poll == Some(true)).then(|| {
                    // fio leaves the SQ thread's CPU to the kernel (it is not bound by the job's
                    // cpus_allowed): it starts on the core after the job's and may run on any.
                    let home = (first + 1) % cfg.task_cores();
                    let t = cpu.add_task(
                        std::iter::once(home).chain(all.iter().copied().filter(|&c| c != home)).collect(),
                        false,
                    );
                    roles.push(Role::SqPoll(jobs.len() as u32));
                    timed_starts.push((t, start));
                    tasks.last_mut().expect("the job's task was added").push(t);
                    t
                });
                jobs.push(Job {
                    flow: flow as u32,
                    task,
                    queue_set: classes.binary_search(&spec.prio).unwrap_or(0) as u32,
                    ioprio_class: spec.prioclass.unwrap_or_default().level(),
                    engine,
                    mode: xler::job_wait_mode(&cfg.xler, completion.as_ref(), class, spec.hipri == Some(true)),
                    sqpoll,
                    to_submit: VecDeque::new(),
                    sq_ring: VecDeque::new(),
                    plug: Plug::default(),
                    found: VecDeque::new(),
                    done: VecDeque::new(),
                    in_flight: 0,
                    call: None,
                    fs_call: None,
                    fs_req: None,
                    batch_submit: if engine.is_blocking() { 1 } else { spec.iodepth_batch_submit.unwrap_or(1) },
                    last_submitted: (Op::Read, 0),
                    latency_from_submit: spec.latency_from == Some(LatencyFrom::Submit),
                    app_work: AppWork::of(spec),
                    hybrid_slept: false,
                    waiting: Waiting::Sleeping,
                    action: Action::None,
                    sq_action: Action::None,
                });
            }
            flow_tasks.push(tasks);
        }
        let fs = flows.iter().any(FlowSpec::uses_files).then(|| {
            let fsh = FsHost::new(flows, cfg, &mut cpu, &devices[0], jobs.len(), scenario.run.warmup.0);
            for (task, thread) in fsh.threads() {
                roles.push(Role::FsThread(thread));
                timed_starts.push((task, 0));
            }
            Box::new(fsh)
        });
        let task_count = roles.len();
        // Handler runs: one per NVMe vector, then the polling core's (the accelerator's are added as needed).
        let (dedcore, runs) = dedcore::DedicatedCore::new(cfg, nvme.hw_queues());
        let core_hwqs = (0..devices.len() as u32)
            .map(|drive| (0..cfg.cores).map(|core| nvme.hwqs_of_core(drive, core)).collect())
            .collect();
        Ok(FullHost {
            cpu,
            block,
            isr: (0..runs).map(|_| IsrRun::default()).collect(),
            nvme,
            completion,
            costs: Costs {
                syscall_entry_ns: cfg.cpu.syscall_entry_ns.0,
                syscall_exit_ns: cfg.cpu.syscall_exit_ns.0,
                fs_submit_ns: cfg.cpu.fs_submit_ns.0,
                reap_ns: cfg.cpu.reap_ns.0,
                wakeup_ns: cfg.cpu.wakeup_ns.0,
                poll_loop_ns: cfg.cpu.poll_loop_ns.0,
                line,
                remote_completion_lines: u64::from(cfg.cpu.remote_completion_lines),
                md_submit_ns: cfg.block.md_submit_ns.0,
            },
            md,
            md_pieces: Vec::new(),
            max_request_bytes: u64::from(cfg.block.max_sectors_kb) * 1024,
            noncritical_max_request_bytes: u64::from(match cfg.block.noncritical_max_sectors_kb {
                0 => cfg.block.max_sectors_kb,
                kb => kb,
            }) * 1024,
            critical_bypass: cfg.block.critical_bypass,
            core_hwqs,
            fs,
            jobs,
            burners,
            roles,
            timer_gen: vec![0; task_count],
            kicked: Vec::new(),
            after_delivery: Vec::new(),
            resuming: Vec::new(),
            first_job,
            flow_tasks,
            timed_starts,
            reqs: Vec::new(),
            dispatched: Vec::new(),
            scratch: Vec::new(),
            woken_in_irq: Vec::new(),
            xler: xler::Xler::new(&cfg.xler),
            dedcore,
            block_timer_armed: None,
        })
    }

    /// Start CPU burners and sqpoll threads at their start times.
    pub fn start(&mut self, q: &mut impl HostQueue) {
        for &(task, at) in &self.timed_starts {
            q.schedule_at(at, HostEvent::TimerWake { task, gen: 0 });
        }
    }

    fn req_mut(&mut self, id: ReqId) -> &mut HostReq {
        let i = id.index();
        if self.reqs.len() <= i {
            self.reqs.resize(i + 1, HostReq::default());
        }
        &mut self.reqs[i]
    }

    /// The application (job `job` of flow `flow`) issued `req` now.
    pub fn submit(&mut self, q: &mut impl HostQueue, flow: u32, job: u32, req: ReqId) {
        let j = self.first_job[flow as usize] + job;
        let mode = self.jobs[j as usize].mode;
        *self.req_mut(req) = HostReq { job: j, mode, ..HostReq::default() };
        self.jobs[j as usize].to_submit.push_back(req);
        self.kick_job(q, j);
    }

    /// New work for job `j`: a sleeping or spinning task goes on now.
    fn kick_job(&mut self, q: &mut impl HostQueue, j: u32) {
        let job = &mut self.jobs[j as usize];
        if job.fs_call.is_some() {
            // Blocked in a file-system call: new work waits until it returns.
            return;
        }
        let task = job.task;
        match job.waiting {
            Waiting::Sleeping | Waiting::HybridSleep => {
                job.waiting = Waiting::No;
                self.timer_gen[task as usize] += 1;
                self.cpu.wake(q, task);
            }
            Waiting::Spinning => {
                job.waiting = Waiting::No;
                self.stop_spinning(q.now(), task);
            }
            Waiting::No => {}
        }
    }

    /// A task that waits in a polling loop has something to do: if it spins now, it stops and goes on. It may
    /// not spin yet (`Cpu::spin` first runs its switch-in costs as a segment); it then sees the work when that
    /// segment ends, and kicking it too would step it twice.
    fn stop_spinning(&mut self, now: Time, task: TaskId) {
        if self.cpu.is_spinning(task) {
            self.cpu.stop_spin(now, task);
            self.kicked.push(task);
        }
    }

    /// Handle a host event.
    pub fn handle(
        &mut self,
        event: HostEvent,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
    ) {
        let now = q.now();
        match event {
            HostEvent::Cpu(e) => self.cpu.handle(q, e),
            HostEvent::IrqDone { hwq, gen } => {
                let run = &mut self.isr[hwq as usize];
                if run.gen != gen || !run.active {
                    return;
                }
                run.active = false;
                let mut reqs = std::mem::take(&mut run.reqs);
                for &req in &reqs {
                    requests[req].stamps.woken = now;
                    self.request_done(q, requests, req);
                }
                reqs.clear();
                self.isr[hwq as usize].reqs = reqs;
            }
            HostEvent::CoalesceTimer { hwq, gen } => {
                if self.nvme.timer_gen(hwq) == gen {
                    self.fire_irq(q, requests, devices, hwq);
                }
            }
            HostEvent::BlockTimer => {
                if self.block_timer_armed == Some(now) {
                    self.block_timer_armed = None;
                }
                let mut out = std::mem::take(&mut self.dispatched);
                self.block.run_timer(now, self.nvme.caller(0), &mut out);
                self.ring_all(q, requests, devices, &mut out, None);
                self.dispatched = out;
                self.arm_block_timer(q);
            }
            HostEvent::TimerWake { task, gen } => {
                if self.timer_gen[task as usize] != gen {
                    return;
                }
                if let Role::Job(j) = self.roles[task as usize] {
                    self.jobs[j as usize].waiting = Waiting::No;
                }
                self.cpu.wake(q, task);
            }
        }
    }

    /// Schedule an event for the I/O scheduler's timer if it is armed for a time no event is scheduled for
    /// (events for a timer re-armed or cancelled since find it not due and do nothing).
    pub(super) fn arm_block_timer(&mut self, q: &mut impl HostQueue) {
        if let Some(due) = self.block.timer_due() {
            if self.block_timer_armed != Some(due) {
                self.block_timer_armed = Some(due);
                q.schedule_at(due.max(q.now()), HostEvent::BlockTimer);
            }
        }
    }

    /// Let tasks that got a core or finished a segment go on. Requests the application now sees completed
    /// are appended to `delivered` with their flow and job; call again once the application issued what
    /// follows.
    pub fn run_ready(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        delivered: &mut Vec<(ReqId, u32, u32)>,
    ) {
        // Swap the list with the empty scratch one: tasks that step puts back wait for the next call. (Most
        // calls, one per event, have none.)
        if !self.after_delivery.is_empty() {
            let mut resumed = std::mem::replace(&mut self.after_delivery, std::mem::take(&mut self.resuming));
            for &task in &resumed {
                self.step(q, requests, devices, task, delivered);
            }
            resumed.clear();
            self.resuming = resumed;
        }
        loop {
            let task = match self.kicked.pop() {
                Some(t) => t,
                None => match self.cpu.take_ready() {
                    Some(t) => t,
                    None => break,
                },
            };
            self.step(q, requests, devices, task, delivered);
        }
    }

    /// `task` holds its core with nothing running: apply what its last segment did, decide what it does next.
    fn step(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        task: TaskId,
        delivered: &mut Vec<(ReqId, u32, u32)>,
    ) {
        match self.roles[task as usize] {
            Role::Job(j) => self.step_job(q, requests, devices, j, delivered),
            Role::SqPoll(j) => self.step_sqpoll(q, requests, devices, j),
            Role::Burner(b) => self.step_burner(q, task, b),
            Role::FsThread(thread) => self.step_fs_thread(q, requests, devices, task, thread),
        }
    }

    fn step_job(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        j: u32,
        delivered: &mut Vec<(ReqId, u32, u32)>,
    ) {
        let now = q.now();
        let task = self.jobs[j as usize].task;
        // What the finished segment did.
        let after_reap = match std::mem::replace(&mut self.jobs[j as usize].action, Action::None) {
            Action::Reap(n) => Some((n, AfterReap::Reaped)),
            Action::Respond(n) => Some((n, AfterReap::Responded)),
            Action::Spin(n) => Some((n, AfterReap::Spun)),
            Action::PollComplete(n) => {
                self.finish_polled(q, requests, j, n);
                None
            }
            Action::None | Action::Transition => None,
        };
        if let Some((n, phase)) = after_reap {
            if !self.work_after_reap(q, requests, j, n, phase) {
                let job = &mut self.jobs[j as usize];
                for _ in 0..n {
                    let req = job.done.pop_front().expect("n completions were reaped");
                    delivered.push((req, job.flow, j - self.first_job[job.flow as usize]));
                }
                // The application issues what follows before the task goes on.
                self.after_delivery.push(task);
            }
            return;
        }
        let start = self.cpu.work_starts_at(task, now);
        // 1. Polled completion entries waiting to be processed (by the task itself without an sqpoll thread),
        //    a file-system call's included.
        if !self.jobs[j as usize].found.is_empty() && self.jobs[j as usize].sqpoll.is_none() {
            let core = self.cpu.core_of(task);
            let (end, n) = self.poll_complete(q, requests, devices, j, core, start);
            self.jobs[j as usize].action = Action::PollComplete(n);
            self.cpu.run(q, task, end - start, Activity::Kernel);
            return;
        }
        if self.fs.is_some() && self.step_fs_job(q, requests, devices, j) {
            return;
        }
        let job = &mut self.jobs[j as usize];
        // 2. Reap completions: return from the system call, then the application's per-I/O work.
        if !job.done.is_empty() {
            let n = job.done.len() as u32;
            let exit = if job.call.take().is_some() { self.costs.syscall_exit_ns } else { 0 };
            for &req in &job.done {
                let s = &mut requests[req].stamps;
                if s.running == 0 {
                    s.running = start;
                }
            }
            job.action = Action::Reap(n);
            let cost = exit + self.costs.reap_ns * u64::from(n);
            self.cpu.run(q, task, cost, Activity::User);
            return;
        }
        // 3. With sqpoll, what the application issued goes into the submission ring: the kernel thread
        //    picks it up, no system call.
        if let Some(sqpoll) = job.sqpoll {
            if !job.to_submit.is_empty() {
                if job.latency_from_submit {
                    job.to_submit.iter().for_each(|&req| restart_clock(requests, req, start));
                }
                job.in_flight += job.to_submit.len() as u32;
                job.sq_ring.extend(job.to_submit.drain(..));
                if self.cpu.is_spinning(sqpoll) {
                    self.cpu.stop_spin(now, sqpoll);
                    self.kicked.push(sqpoll);
                }
            }
        }
        // 4. The system call's next step.
        let view = syscall::JobView {
            engine: job.engine,
            to_submit: if job.engine.is_blocking() && job.in_flight > 0 { 0 } else { job.to_submit.len() },
            in_flight: job.in_flight,
            batch_submit: job.batch_submit,
            spins_in_user_space: job.sqpoll.is_some() && !job.mode.sleeps(),
        };
        let (entry_ns, exit_ns) = (self.costs.syscall_entry_ns, self.costs.syscall_exit_ns);
        match syscall::next(&mut job.call, &view) {
            Step::Submit { entering, quota } => {
                let req = job.to_submit.pop_front().expect("a call submits only what the application issued");
                self.note_direct_write(requests, j, req);
                let job = &mut self.jobs[j as usize];
                if job.latency_from_submit {
                    restart_clock(requests, req, start);
                }
                let batch = (job.to_submit.len() + 1).min(quota as usize);
                job.in_flight += 1;
                let fs_at = start + if entering { entry_ns } else { 0 };
                let core = self.cpu.core_of(task);
                let end = self.submit_from_batch(q, requests, devices, j, req, batch, core, fs_at);
                self.cpu.run(q, task, end - start, Activity::Kernel);
            }
            Step::Enter => self.transition(q, j, entry_ns),
            Step::Reenter => self.transition(q, j, exit_ns + entry_ns),
            Step::Return => self.transition(q, j, exit_ns),
            Step::Idle => {
                job.waiting = Waiting::Sleeping;
                self.cpu.sleep(q, task);
            }
            Step::SpinUser => {
                job.waiting = Waiting::Spinning;
                self.cpu.spin(q, task);
            }
            Step::Wait if job.mode.sleeps() => {
                job.waiting = Waiting::Sleeping;
                self.cpu.sleep(q, task);
            }
            Step::Wait if job.mode == WaitMode::Hybrid && !job.hybrid_slept => {
                job.hybrid_slept = true;
                job.waiting = Waiting::HybridSleep;
                self.timer_gen[task as usize] += 1;
                let gen = self.timer_gen[task as usize];
                let (op, bytes) = job.last_submitted;
                let wake_at = now + self.completion.sleep_before_poll(op, bytes);
                q.schedule_at(wake_at, HostEvent::TimerWake { task, gen });
                self.cpu.sleep(q, task);
            }
            Step::Wait => {
                job.hybrid_slept = false;
                job.waiting = Waiting::Spinning;
                self.cpu.spin(q, task);
            }
        }
    }

    /// Job `j`'s task crosses the user/kernel boundary: `ns` of kernel work.
    fn transition(&mut self, q: &mut impl HostQueue, j: u32, ns: Time) {
        let job = &mut self.jobs[j as usize];
        job.action = Action::Transition;
        self.cpu.run(q, job.task, ns, Activity::Kernel);
    }
}
