//! The host side of the I/O path: the application's tasks on CPU cores, the system call, blk-mq with its I/O
//! scheduler, the NVMe driver, and interrupts or polling on the way back.
//!
//! Each flow runs `numjobs` tasks. A task loops like fio: reap completions (user code), submit new I/O
//! (system call -> file system -> block layer -> driver: one kernel segment per request, doorbells rung
//! where the driver finishes), then wait for completions by sleeping (interrupt) or spinning (polling). With
//! `sqthread_poll` a kernel thread on the next core submits instead, spinning on the submission ring.
//! Completions come back through the interrupt handler (which completes requests in the block layer and wakes
//! their tasks) or a poll loop. Every request is stamped at each hop; see `metrics::Breakdown`.
//!
//! The seam to the device is `Device::ring_doorbell` down and [`Host::on_device_completion`] up.

pub mod block;
pub mod completion;
pub mod cpu;
pub mod nvme;

use std::collections::VecDeque;

use serde::Serialize;

use crate::config::scenario::{parse_cpu_list, CpusAllowedPolicy, FlowSpec, IoEngine};
use crate::config::HostConfig;
use crate::device::Device;
use crate::engine::{EventQueue, Time};
use crate::request::{Class, Criticality, ReqId, Request, RequestArena, Stamps};
use crate::sim::Event;
use block::sched::SchedRequest;
use block::{BlockLayer, BlockResults, Dispatched};
use completion::{CompletionPolicy, WaitMode};
use cpu::{Activity, CoreUsage, Cpu, CpuEvent, TaskId};
use nvme::{IrqAction, NvmeDriver};

/// Events the host schedules for itself.
#[derive(Debug, Clone, Copy)]
pub enum HostEvent {
    Cpu(CpuEvent),
    /// The interrupt handler run of hardware queue `hwq` (generation `gen`) ends.
    IrqDone {
        hwq: u32,
        gen: u32,
    },
    /// Interrupt coalescing timer of `hwq`.
    CoalesceTimer {
        hwq: u32,
        gen: u32,
    },
    /// A sleeping task's timer (hybrid polling's sleep, a CPU burner's pause, a start delay).
    TimerWake {
        task: TaskId,
        gen: u32,
    },
}

const NO_PARENT: u32 = u32::MAX;

/// What the host keeps per request (by request id).
#[derive(Debug, Clone, Copy)]
struct HostReq {
    job: u32,
    hwq: u32,
    mode: WaitMode,
    /// For a piece of a split request: the request it belongs to.
    parent: u32,
    /// For a split request: pieces not completed yet.
    pieces_left: u32,
}

impl Default for HostReq {
    fn default() -> Self {
        HostReq { job: 0, hwq: 0, mode: WaitMode::Interrupt, parent: NO_PARENT, pieces_left: 0 }
    }
}

/// What a task's current segment does (applied when it ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    None,
    /// Reaping the first `n` completions of `done` (user code, after the system call returns).
    Reap(u32),
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
    engine: IoEngine,
    mode: WaitMode,
    /// The kernel thread that submits (and polls) for it with `sqthread_poll`.
    sqpoll: Option<TaskId>,
    /// Issued by the application, not yet submitted.
    to_submit: VecDeque<ReqId>,
    /// In the submission ring for the sqpoll thread.
    sq_ring: VecDeque<ReqId>,
    /// Polled completion entries seen on the device's queue, not processed yet.
    found: VecDeque<ReqId>,
    /// Completed, waiting for the application to reap.
    done: VecDeque<ReqId>,
    /// Submitted and not yet completed.
    in_flight: u32,
    in_kernel: bool,
    /// libaio: the submit system call must return before io_getevents is entered.
    needs_getevents_entry: bool,
    hybrid_slept: bool,
    waiting: Waiting,
    action: Action,
    sq_action: Action,
}

/// A CPU-burning task (ioengine = cpuio): burns `burn_ns`, pauses `pause_ns`, until `stop_ns`.
struct Burner {
    burn_ns: Time,
    pause_ns: Time,
    stop_ns: Time,
    burning: bool,
}

#[derive(Debug, Clone, Copy)]
enum Role {
    Job(u32),
    SqPoll(u32),
    Burner(u32),
}

/// Host-level results.
#[derive(Debug, Clone, Serialize)]
pub struct HostResults {
    pub cpu_scheduler: String,
    pub completion: String,
    /// Per core, over the whole run: fractions of time in user code, kernel, polling and idle.
    pub cores: Vec<CoreUsage>,
    /// Mean busy cores (user + kernel + polling) over the whole run.
    pub busy_cores: f64,
    pub interrupts: u64,
    pub block: BlockResults,
}

/// CPU time per flow, in cores (CPU time of its tasks and their sqpoll threads / run length).
pub type FlowCpu = Vec<f64>;

struct Costs {
    syscall_entry_ns: Time,
    syscall_exit_ns: Time,
    fs_submit_ns: Time,
    reap_ns: Time,
    wakeup_ns: Time,
    poll_loop_ns: Time,
}

/// The interrupt handler run in progress for a hardware queue.
#[derive(Default)]
struct IsrRun {
    reqs: Vec<ReqId>,
    end: Time,
    gen: u32,
    active: bool,
}

pub struct Host {
    cpu: Cpu,
    block: BlockLayer,
    nvme: NvmeDriver,
    completion: Box<dyn CompletionPolicy>,
    costs: Costs,
    max_request_bytes: u64,
    jobs: Vec<Job>,
    burners: Vec<Burner>,
    roles: Vec<Role>,
    timer_gen: Vec<u32>,
    /// Tasks interrupted while spinning that must be told what to run.
    kicked: Vec<TaskId>,
    /// Tasks that reaped completions and go on once the application issued what follows.
    after_delivery: Vec<TaskId>,
    /// First job of each flow.
    first_job: Vec<u32>,
    /// Tasks of each flow (including sqpoll threads), for CPU accounting.
    flow_tasks: Vec<Vec<TaskId>>,
    /// Start time of each task that starts on a timer (burners, sqpoll threads).
    timed_starts: Vec<(TaskId, Time)>,
    reqs: Vec<HostReq>,
    isr: Vec<IsrRun>,
    dispatched: Vec<Dispatched>,
    scratch: Vec<ReqId>,
}

impl Host {
    /// Build the host for `flows` on `device`: cores, tasks, queues.
    pub fn new(cfg: &HostConfig, flows: &[FlowSpec], run_end: Time, device: &mut Device) -> Result<Host, String> {
        let mut cpu = Cpu::new(cfg)?;
        let nvme = NvmeDriver::new(&cfg.nvme, cfg.cores, cfg.queue_pairs, device);
        let depth = device.queue_depth().saturating_sub(1).max(1);
        let block = BlockLayer::new(&cfg.block, &cfg.io_scheduler, nvme.hw_queues(), depth)?;
        let completion = completion::make(&cfg.completion).ok_or_else(|| {
            format!("host.completion: unknown policy \"{}\"; expected one of {:?}", cfg.completion, completion::names())
        })?;
        let mut jobs = Vec::new();
        let mut burners = Vec::new();
        let mut roles = Vec::new();
        let mut first_job = Vec::new();
        let mut flow_tasks = Vec::new();
        let mut timed_starts = Vec::new();
        let all: Vec<u32> = (0..cfg.cores).collect();
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
            let engine = spec.ioengine.unwrap_or_default();
            let start = spec.startdelay.map_or(0, |d| d.0);
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
                tasks.push(task);
                if engine == IoEngine::Cpuio {
                    let load = u64::from(spec.cpuload.unwrap_or(100).clamp(1, 100));
                    let burn_ns = spec.cpuchunks.map_or(DEFAULT_CPUCHUNKS_NS, |c| c.0);
                    roles.push(Role::Burner(burners.len() as u32));
                    burners.push(Burner {
                        burn_ns,
                        pause_ns: burn_ns * (100 - load) / load,
                        stop_ns: spec.runtime.map_or(run_end, |r| start.saturating_add(r.0)),
                        burning: false,
                    });
                    timed_starts.push((task, start));
                    continue;
                }
                roles.push(Role::Job(jobs.len() as u32));
                let sqpoll = (spec.sqthread_poll == Some(true)).then(|| {
                    // fio leaves the SQ thread's CPU to the kernel; it is put on the next core here.
                    let t = cpu.add_task(vec![(first + 1) % cfg.cores], false);
                    roles.push(Role::SqPoll(jobs.len() as u32));
                    timed_starts.push((t, 0));
                    tasks.push(t);
                    t
                });
                jobs.push(Job {
                    flow: flow as u32,
                    task,
                    engine,
                    mode: completion.mode(class, spec.hipri == Some(true)),
                    sqpoll,
                    to_submit: VecDeque::new(),
                    sq_ring: VecDeque::new(),
                    found: VecDeque::new(),
                    done: VecDeque::new(),
                    in_flight: 0,
                    in_kernel: false,
                    needs_getevents_entry: false,
                    hybrid_slept: false,
                    waiting: Waiting::Sleeping,
                    action: Action::None,
                    sq_action: Action::None,
                });
            }
            flow_tasks.push(tasks);
        }
        let task_count = roles.len();
        Ok(Host {
            cpu,
            block,
            isr: (0..nvme.hw_queues()).map(|_| IsrRun::default()).collect(),
            nvme,
            completion,
            costs: Costs {
                syscall_entry_ns: cfg.cpu.syscall_entry_ns.0,
                syscall_exit_ns: cfg.cpu.syscall_exit_ns.0,
                fs_submit_ns: cfg.cpu.fs_submit_ns.0,
                reap_ns: cfg.cpu.reap_ns.0,
                wakeup_ns: cfg.cpu.wakeup_ns.0,
                poll_loop_ns: cfg.cpu.poll_loop_ns.0,
            },
            max_request_bytes: u64::from(cfg.block.max_sectors_kb) * 1024,
            jobs,
            burners,
            roles,
            timer_gen: vec![0; task_count],
            kicked: Vec::new(),
            after_delivery: Vec::new(),
            first_job,
            flow_tasks,
            timed_starts,
            reqs: Vec::new(),
            dispatched: Vec::new(),
            scratch: Vec::new(),
        })
    }

    /// Start CPU burners and sqpoll threads at their start times.
    pub fn start(&mut self, q: &mut EventQueue<Event>) {
        for &(task, at) in &self.timed_starts {
            q.schedule_at(at, Event::Host(HostEvent::TimerWake { task, gen: 0 }));
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
    pub fn submit(&mut self, q: &mut EventQueue<Event>, flow: u32, job: u32, req: ReqId) {
        let j = self.first_job[flow as usize] + job;
        let mode = self.jobs[j as usize].mode;
        *self.req_mut(req) = HostReq { job: j, mode, ..HostReq::default() };
        self.jobs[j as usize].to_submit.push_back(req);
        self.kick_job(q, j);
    }

    /// New work for job `j`: a sleeping or spinning task goes on now.
    fn kick_job(&mut self, q: &mut EventQueue<Event>, j: u32) {
        let job = &mut self.jobs[j as usize];
        let task = job.task;
        match job.waiting {
            Waiting::Sleeping | Waiting::HybridSleep => {
                job.waiting = Waiting::No;
                self.timer_gen[task as usize] += 1;
                self.cpu.wake(q, task);
            }
            Waiting::Spinning => {
                job.waiting = Waiting::No;
                self.cpu.stop_spin(q.now(), task);
                self.kicked.push(task);
            }
            Waiting::No => {}
        }
    }

    /// The device posted `req`'s completion entry now.
    pub fn on_device_completion(
        &mut self,
        q: &mut EventQueue<Event>,
        requests: &mut RequestArena,
        device: &mut Device,
        req: ReqId,
    ) {
        let now = q.now();
        let r = self.reqs[req.index()];
        match r.mode {
            WaitMode::Interrupt => match self.nvme.on_completion_entry(r.hwq, req, now) {
                IrqAction::Fire => self.fire_irq(q, requests, device, r.hwq),
                IrqAction::ArmTimer(at) => {
                    let gen = self.nvme.timer_gen(r.hwq);
                    q.schedule_at(at, Event::Host(HostEvent::CoalesceTimer { hwq: r.hwq, gen }));
                }
                IrqAction::Wait => {}
            },
            WaitMode::Poll | WaitMode::Hybrid => {
                let s = &requests[req].stamps;
                self.completion.observe(s.device_done.saturating_sub(s.submitted));
                let job = &mut self.jobs[r.job as usize];
                job.found.push_back(req);
                let poller = job.sqpoll.unwrap_or(job.task);
                if self.cpu.is_spinning(poller) {
                    if poller == job.task {
                        job.waiting = Waiting::No;
                    }
                    self.cpu.stop_spin(now, poller);
                    self.kicked.push(poller);
                }
            }
        }
    }

    /// Raise hardware queue `hwq`'s interrupt now: its handler completes every pending entry.
    fn fire_irq(&mut self, q: &mut EventQueue<Event>, requests: &mut RequestArena, device: &mut Device, hwq: u32) {
        let now = q.now();
        let mut entries = std::mem::take(&mut self.scratch);
        self.nvme.fire(hwq, &mut entries);
        let core = self.nvme.irq_core(hwq);
        let run = &self.isr[hwq as usize];
        // A handler still running processes new entries in the same run.
        let joins = run.active && run.end > now;
        let start = if joins { run.end } else { self.cpu.irq_start(core, now + self.nvme.irq_delivery_ns) };
        let mut t = if joins { start } else { start + self.nvme.isr_ns };
        for &req in &entries {
            t += self.nvme.cqe_ns;
            let task = self.jobs[self.reqs[req.index()].job as usize].task;
            if self.cpu.is_sleeping(task) {
                t += self.costs.wakeup_ns;
            }
            t = self.complete_in_block(q, requests, device, req, t);
        }
        self.cpu.book_irq(core, start, t - start);
        let run = &mut self.isr[hwq as usize];
        run.reqs.append(&mut entries);
        run.end = t;
        run.gen = run.gen.wrapping_add(1);
        run.active = true;
        let gen = run.gen;
        self.scratch = entries;
        q.schedule_at(t, Event::Host(HostEvent::IrqDone { hwq, gen }));
    }

    /// Complete `req` in the block layer from `at` (in an interrupt handler or a poll loop); requests that
    /// were waiting go to the driver. Returns when that work ends.
    fn complete_in_block(
        &mut self,
        q: &mut EventQueue<Event>,
        requests: &mut RequestArena,
        device: &mut Device,
        req: ReqId,
        at: Time,
    ) -> Time {
        let mut out = std::mem::take(&mut self.dispatched);
        let t = self.block.complete(req, at, self.nvme.submit_ns, &mut out);
        self.ring_all(q, requests, device, &mut out);
        self.dispatched = out;
        t
    }

    /// Ring the doorbell of every request the block layer handed to the driver.
    fn ring_all(
        &mut self,
        q: &mut EventQueue<Event>,
        requests: &mut RequestArena,
        device: &mut Device,
        out: &mut Vec<Dispatched>,
    ) {
        for d in out.drain(..) {
            let doorbell = d.at + self.nvme.submit_ns;
            let s = &mut requests[d.id].stamps;
            s.driver_entered = d.at;
            s.submitted = doorbell;
            self.nvme.ring(device, q, d.id, d.hwq, doorbell);
        }
    }

    /// Submit `req` through the block layer from `at` on `core` (splitting it at max_sectors_kb); returns
    /// when the submitting core is done.
    fn submit_to_block(
        &mut self,
        q: &mut EventQueue<Event>,
        requests: &mut RequestArena,
        device: &mut Device,
        req: ReqId,
        core: u32,
        at: Time,
    ) -> Time {
        let hwq = self.nvme.hwq_of_core(core);
        let (len, task) = (requests[req].len as u64, self.jobs[self.reqs[req.index()].job as usize].task);
        self.reqs[req.index()].hwq = hwq;
        let mut out = std::mem::take(&mut self.dispatched);
        let t = if len <= self.max_request_bytes {
            self.block_submit(requests, req, task, hwq, at, &mut out)
        } else {
            // Split: each piece is a request of its own; the parent completes with its last piece.
            let count = len.div_ceil(self.max_request_bytes);
            self.reqs[req.index()].pieces_left = count as u32;
            let base = self.reqs[req.index()];
            let mut t = at;
            for i in 0..count {
                let offset = i * self.max_request_bytes;
                let parent = &requests[req];
                let piece = Request {
                    offset: parent.offset + offset,
                    len: (len - offset).min(self.max_request_bytes) as u32,
                    stamps: Stamps { issued: parent.stamps.issued, ..Stamps::default() },
                    ..parent.clone()
                };
                let id = requests.insert(piece);
                *self.req_mut(id) = HostReq { parent: req.0, ..base };
                t = self.block_submit(requests, id, task, hwq, t, &mut out);
            }
            t
        };
        self.ring_all(q, requests, device, &mut out);
        self.dispatched = out;
        t
    }

    /// Hand request `id` of `task` to the block layer on hardware queue `hwq` at `at`.
    fn block_submit(
        &mut self,
        requests: &RequestArena,
        id: ReqId,
        task: TaskId,
        hwq: u32,
        at: Time,
        out: &mut Vec<Dispatched>,
    ) -> Time {
        let r = &requests[id];
        let rq = SchedRequest {
            id,
            op: r.op,
            sector: r.offset / 512,
            sectors: r.len.div_ceil(512),
            flow: r.flow,
            task,
            prio_class: 1,
            inserted_at: at,
        };
        self.block.submit(rq, hwq, at, self.nvme.submit_ns, out)
    }

    /// Handle a host event.
    pub fn handle(
        &mut self,
        event: HostEvent,
        q: &mut EventQueue<Event>,
        requests: &mut RequestArena,
        device: &mut Device,
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
                    self.fire_irq(q, requests, device, hwq);
                }
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

    /// `req`'s completion was processed and its task told: it waits for the application to reap it.
    fn request_done(&mut self, q: &mut EventQueue<Event>, requests: &mut RequestArena, req: ReqId) {
        let r = self.reqs[req.index()];
        let done = if r.parent != NO_PARENT {
            // A piece of a split request: the request is done with its last piece, whose path it takes.
            let parent = ReqId(r.parent);
            let piece = requests[req].stamps;
            requests.remove(req);
            let p = &mut self.reqs[parent.index()];
            p.pieces_left -= 1;
            if p.pieces_left > 0 {
                return;
            }
            let s = &mut requests[parent].stamps;
            s.driver_entered = piece.driver_entered;
            s.submitted = piece.submitted;
            s.device_arrival = piece.device_arrival;
            s.device_fetched = piece.device_fetched;
            s.device_internal_wait = piece.device_internal_wait;
            s.device_done = piece.device_done;
            s.woken = piece.woken;
            parent
        } else {
            req
        };
        let job = &mut self.jobs[r.job as usize];
        job.in_flight -= 1;
        job.done.push_back(done);
        let task = job.task;
        match job.waiting {
            Waiting::Sleeping => {
                job.waiting = Waiting::No;
                self.cpu.wake(q, task);
            }
            Waiting::Spinning => {
                // A user-space spin on the completion ring (sqpoll) sees it at the next loop.
                job.waiting = Waiting::No;
                self.cpu.stop_spin(q.now(), task);
                self.kicked.push(task);
            }
            Waiting::HybridSleep | Waiting::No => {}
        }
    }

    /// Let tasks that got a core or finished a segment go on. Requests the application now sees completed
    /// are appended to `delivered` with their flow and job; call again once the application issued what
    /// follows.
    pub fn run_ready(
        &mut self,
        q: &mut EventQueue<Event>,
        requests: &mut RequestArena,
        device: &mut Device,
        delivered: &mut Vec<(ReqId, u32, u32)>,
    ) {
        let resumed = std::mem::take(&mut self.after_delivery);
        for task in resumed {
            self.step(q, requests, device, task, delivered);
        }
        loop {
            let task = match self.kicked.pop() {
                Some(t) => t,
                None => match self.cpu.take_ready() {
                    Some(t) => t,
                    None => break,
                },
            };
            self.step(q, requests, device, task, delivered);
        }
    }

    /// `task` holds its core with nothing running: apply what its last segment did, decide what it does next.
    fn step(
        &mut self,
        q: &mut EventQueue<Event>,
        requests: &mut RequestArena,
        device: &mut Device,
        task: TaskId,
        delivered: &mut Vec<(ReqId, u32, u32)>,
    ) {
        match self.roles[task as usize] {
            Role::Job(j) => self.step_job(q, requests, device, j, delivered),
            Role::SqPoll(j) => self.step_sqpoll(q, requests, device, j),
            Role::Burner(b) => self.step_burner(q, task, b),
        }
    }

    fn step_burner(&mut self, q: &mut EventQueue<Event>, task: TaskId, b: u32) {
        let now = q.now();
        let burner = &mut self.burners[b as usize];
        if now >= burner.stop_ns {
            self.cpu.sleep(q, task);
            return;
        }
        if burner.burning && burner.pause_ns > 0 {
            burner.burning = false;
            self.timer_gen[task as usize] += 1;
            let gen = self.timer_gen[task as usize];
            q.schedule_at(now + burner.pause_ns, Event::Host(HostEvent::TimerWake { task, gen }));
            self.cpu.sleep(q, task);
            return;
        }
        burner.burning = true;
        let burn = burner.burn_ns.min(burner.stop_ns - now);
        self.cpu.run(q, task, burn, Activity::User);
    }

    /// Process polled completion entries in `found` from `at` (detection and completion work); returns the
    /// end and how many were taken.
    fn poll_complete(
        &mut self,
        q: &mut EventQueue<Event>,
        requests: &mut RequestArena,
        device: &mut Device,
        j: u32,
        at: Time,
    ) -> (Time, u32) {
        let mut t = at + self.costs.poll_loop_ns;
        let count = self.jobs[j as usize].found.len();
        for i in 0..count {
            let req = self.jobs[j as usize].found[i];
            t += self.nvme.cqe_ns;
            t = self.complete_in_block(q, requests, device, req, t);
        }
        (t, count as u32)
    }

    /// Mark the first `n` polled entries of job `j` completed at `now`.
    fn finish_polled(&mut self, q: &mut EventQueue<Event>, requests: &mut RequestArena, j: u32, n: u32) {
        let now = q.now();
        for _ in 0..n {
            let req = self.jobs[j as usize].found.pop_front().expect("n entries were processed");
            let s = &mut requests[req].stamps;
            s.woken = now;
            s.running = now;
            self.request_done(q, requests, req);
        }
    }

    fn step_job(
        &mut self,
        q: &mut EventQueue<Event>,
        requests: &mut RequestArena,
        device: &mut Device,
        j: u32,
        delivered: &mut Vec<(ReqId, u32, u32)>,
    ) {
        let now = q.now();
        let task = self.jobs[j as usize].task;
        // What the finished segment did.
        match std::mem::replace(&mut self.jobs[j as usize].action, Action::None) {
            Action::Reap(n) => {
                let job = &mut self.jobs[j as usize];
                for _ in 0..n {
                    let req = job.done.pop_front().expect("n completions were reaped");
                    requests[req].stamps.completed = now;
                    delivered.push((req, job.flow, j - self.first_job[job.flow as usize]));
                }
                // The application issues what follows before the task goes on.
                self.after_delivery.push(task);
                return;
            }
            Action::PollComplete(n) => self.finish_polled(q, requests, j, n),
            Action::None | Action::Transition => {}
        }
        let start = self.cpu.work_starts_at(task, now);
        let job = &mut self.jobs[j as usize];
        // 1. Polled completion entries waiting to be processed (by the task itself without an sqpoll thread).
        if !job.found.is_empty() && job.sqpoll.is_none() {
            let (end, n) = self.poll_complete(q, requests, device, j, start);
            self.jobs[j as usize].action = Action::PollComplete(n);
            self.cpu.run(q, task, end - start, Activity::Kernel);
            return;
        }
        // 2. Reap completions: return from the system call, then the application's per-I/O work.
        if !job.done.is_empty() {
            let n = job.done.len() as u32;
            let exit = if job.in_kernel { self.costs.syscall_exit_ns } else { 0 };
            job.in_kernel = false;
            job.needs_getevents_entry = false;
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
        // 3. Submit what the application issued.
        if let Some(sqpoll) = job.sqpoll {
            if !job.to_submit.is_empty() {
                // Into the submission ring: the kernel thread picks it up, no system call.
                job.in_flight += job.to_submit.len() as u32;
                job.sq_ring.extend(job.to_submit.drain(..));
                if self.cpu.is_spinning(sqpoll) {
                    self.cpu.stop_spin(now, sqpoll);
                    self.kicked.push(sqpoll);
                }
            }
        } else if let Some(req) = job.to_submit.pop_front() {
            let entry = if job.in_kernel { 0 } else { self.costs.syscall_entry_ns };
            job.in_kernel = true;
            job.in_flight += 1;
            job.needs_getevents_entry = job.engine == IoEngine::Libaio;
            let block_at = start + entry + self.costs.fs_submit_ns;
            requests[req].stamps.block_entered = block_at;
            let core = self.cpu.core_of(task);
            let end = self.submit_to_block(q, requests, device, req, core, block_at);
            self.jobs[j as usize].action = Action::None;
            self.cpu.run(q, task, end - start, Activity::Kernel);
            return;
        }
        // 4. Wait for completions, or for new work.
        let job = &mut self.jobs[j as usize];
        if job.in_flight == 0 {
            if job.in_kernel {
                job.in_kernel = false;
                job.action = Action::Transition;
                self.cpu.run(q, task, self.costs.syscall_exit_ns, Activity::Kernel);
                return;
            }
            job.waiting = Waiting::Sleeping;
            self.cpu.sleep(q, task);
            return;
        }
        if job.needs_getevents_entry {
            // libaio: io_submit returns, io_getevents enters.
            job.needs_getevents_entry = false;
            job.action = Action::Transition;
            self.cpu.run(q, task, self.costs.syscall_exit_ns + self.costs.syscall_entry_ns, Activity::Kernel);
            return;
        }
        match job.mode {
            WaitMode::Interrupt => {
                if !job.in_kernel {
                    job.in_kernel = true;
                    job.action = Action::Transition;
                    self.cpu.run(q, task, self.costs.syscall_entry_ns, Activity::Kernel);
                    return;
                }
                job.waiting = Waiting::Sleeping;
                self.cpu.sleep(q, task);
            }
            WaitMode::Poll | WaitMode::Hybrid if job.sqpoll.is_some() => {
                // The sqpoll thread polls the device; the application spins on the completion ring.
                job.waiting = Waiting::Spinning;
                self.cpu.spin(q, task);
            }
            WaitMode::Poll | WaitMode::Hybrid => {
                if !job.in_kernel {
                    job.in_kernel = true;
                    job.action = Action::Transition;
                    self.cpu.run(q, task, self.costs.syscall_entry_ns, Activity::Kernel);
                    return;
                }
                if job.mode == WaitMode::Hybrid && !job.hybrid_slept {
                    job.hybrid_slept = true;
                    job.waiting = Waiting::HybridSleep;
                    self.timer_gen[task as usize] += 1;
                    let gen = self.timer_gen[task as usize];
                    let wake_at = now + self.completion.sleep_before_poll();
                    q.schedule_at(wake_at, Event::Host(HostEvent::TimerWake { task, gen }));
                    self.cpu.sleep(q, task);
                    return;
                }
                job.hybrid_slept = false;
                job.waiting = Waiting::Spinning;
                self.cpu.spin(q, task);
            }
        }
    }

    /// The sqpoll kernel thread of job `j`: process polled completions, submit from the ring, or spin.
    fn step_sqpoll(&mut self, q: &mut EventQueue<Event>, requests: &mut RequestArena, device: &mut Device, j: u32) {
        let now = q.now();
        let task = self.jobs[j as usize].sqpoll.expect("an sqpoll role has a thread");
        if let Action::PollComplete(n) = std::mem::replace(&mut self.jobs[j as usize].sq_action, Action::None) {
            self.finish_polled(q, requests, j, n);
        }
        let start = self.cpu.work_starts_at(task, now);
        if !self.jobs[j as usize].found.is_empty() {
            let (end, n) = self.poll_complete(q, requests, device, j, start);
            self.jobs[j as usize].sq_action = Action::PollComplete(n);
            self.cpu.run(q, task, end - start, Activity::Kernel);
            return;
        }
        if let Some(req) = self.jobs[j as usize].sq_ring.pop_front() {
            let block_at = start + self.costs.poll_loop_ns + self.costs.fs_submit_ns;
            requests[req].stamps.block_entered = block_at;
            let core = self.cpu.core_of(task);
            let end = self.submit_to_block(q, requests, device, req, core, block_at);
            self.cpu.run(q, task, end - start, Activity::Kernel);
            return;
        }
        self.cpu.spin(q, task);
    }

    /// Model invariants: tags conserved.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.block.check_tags()
    }

    /// Host results over `[0, end]`, and the CPU each flow used (in cores).
    pub fn results(&mut self, end: Time) -> (HostResults, FlowCpu) {
        let cores = self.cpu.usage(end);
        let busy_cores = cores.iter().map(|c| 1.0 - c.idle).sum();
        let run = end.max(1) as f64;
        let flow_cpu = self
            .flow_tasks
            .iter()
            .map(|ts| ts.iter().map(|&t| self.cpu.task_cpu_ns(t) as f64).sum::<f64>() / run)
            .collect();
        (
            HostResults {
                cpu_scheduler: self.cpu.scheduler_name().to_string(),
                completion: self.completion.name().to_string(),
                cores,
                busy_cores,
                interrupts: self.nvme.interrupts(),
                block: self.block.results(),
            },
            flow_cpu,
        )
    }
}

/// fio's cpuio burns in chunks; a 10 ms default keeps events rare while staying below a CFS slice.
const DEFAULT_CPUCHUNKS_NS: Time = 10_000_000;
