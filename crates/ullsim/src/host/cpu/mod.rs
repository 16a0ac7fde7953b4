//! CPU: cores, tasks and the CPU scheduler.
//!
//! A task runs *segments*: stretches of CPU work of known length in one activity (user code, kernel I/O path,
//! polling). The host decides what a task does next each time it finishes a segment or gets a core; the CPU
//! model decides when that happens: it runs one task per core, lets interrupts steal time from whatever runs
//! (the segment ends that much later), puts woken tasks on a core, and asks the [`CpuScheduler`] whether they
//! preempt the running task, at wake-up and at each tick. Kernel segments are not preemptible (a server
//! kernel preempts at the return to user space); user code and polling loops are.
//!
//! Per-core time is accounted as user, kernel (including interrupt handlers), polling and idle.

pub(crate) mod burner;
mod cache_refill;
mod cfs;
mod eevdf;

use std::collections::VecDeque;

use crate::config::host::{CpuConfig, HostConfig};
use crate::engine::Time;

use super::queue::HostQueue;
use super::HostEvent;

/// Index of a task.
pub type TaskId = u32;

/// What a core spends its time on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    User = 0,
    Kernel = 1,
    Poll = 2,
}

/// CPU events.
#[derive(Debug, Clone, Copy)]
pub enum CpuEvent {
    /// The segment running on `core` (generation `gen`) may have ended.
    SegmentEnd { core: u32, gen: u32 },
    /// Scheduler tick on `core`.
    Tick { core: u32 },
}

/// Scheduler tunables after scaling by the number of cores, as Linux does: factor 1 + log2(min(cores, 8)).
#[derive(Debug, Clone, Copy)]
pub struct SchedTunables {
    pub latency_ns: Time,
    pub min_granularity_ns: Time,
    pub wakeup_granularity_ns: Time,
    pub base_slice_ns: Time,
    pub tick_ns: Time,
}

impl SchedTunables {
    pub fn from_config(cfg: &CpuConfig, cores: u32) -> Self {
        let factor = 1 + (cores.clamp(1, 8)).ilog2() as u64;
        SchedTunables {
            latency_ns: cfg.sched_latency_ns.0 * factor,
            min_granularity_ns: cfg.min_granularity_ns.0 * factor,
            wakeup_granularity_ns: cfg.wakeup_granularity_ns.0 * factor,
            base_slice_ns: cfg.base_slice_ns.0 * factor,
            tick_ns: cfg.tick_ns.0.max(1),
        }
    }
}

/// A CPU scheduling policy (Linux's fair class): which runnable task a core runs, and when a woken or waiting
/// task preempts the running one. The CPU model tells it every change; it keeps its own per-task state.
pub trait CpuScheduler {
    fn name(&self) -> &'static str;
    /// A new task exists (it starts asleep).
    fn task_new(&mut self, task: TaskId, core: u32, now: Time);
    /// `task` becomes runnable on `core` (not running yet); `wakeup` is false for a preempted task going back.
    fn enqueue(&mut self, core: u32, task: TaskId, wakeup: bool, now: Time);
    /// `task`, running on `core`, stops running: back to the queue if `runnable`, else it sleeps.
    fn put_prev(&mut self, core: u32, task: TaskId, runnable: bool, now: Time);
    /// Take the task `core` should run next out of its queue.
    fn pick_next(&mut self, core: u32, now: Time) -> Option<TaskId>;
    /// `woken` was just enqueued on `core` where `curr` runs: should `curr` be preempted?
    fn check_preempt_wakeup(&mut self, core: u32, curr: TaskId, woken: TaskId, critical: bool, now: Time) -> bool;
    /// Periodic tick on `core` while `curr` runs and others wait: should `curr` be preempted?
    fn tick(&mut self, core: u32, curr: TaskId, now: Time) -> bool;
    /// Tasks waiting (runnable, not running) on `core`.
    fn queued(&self, core: u32) -> usize;
}

/// Names of the CPU schedulers.
pub fn scheduler_names() -> &'static [&'static str] {
    &["cfs", "eevdf", "fastresponse"]
}

/// Build a CPU scheduler by name.
pub fn make_scheduler(name: &str, tunables: SchedTunables, cores: u32) -> Option<Box<dyn CpuScheduler>> {
    match name {
        "cfs" => Some(Box::new(cfs::Cfs::new(tunables, cores, false))),
        "fastresponse" => Some(Box::new(cfs::Cfs::new(tunables, cores, true))),
        "eevdf" => Some(Box::new(eevdf::Eevdf::new(tunables, cores))),
        _ => None,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Running,
    Runnable,
    Sleeping,
}

/// Work a preempted task had left.
#[derive(Debug, Clone, Copy)]
enum Saved {
    Segment { remaining: Time, activity: Activity },
    Spin,
}

struct Task {
    allowed: Vec<u32>,
    core: u32,
    state: State,
    critical: bool,
    saved: Option<Saved>,
    /// Time to add in front of the task's next segment: switching it in, leaving idle.
    pending_overhead: Time,
    cpu_ns: Time,
    /// The part of `cpu_ns` in user code (the rest is kernel and polling).
    user_ns: Time,
    /// Times the task was switched onto a core.
    switched_in: u64,
    /// The core it last ran on (`NO_CORE`: none yet) and that core's switch count when it left it (so the
    /// tasks that ran there since are known: `cache_refill.rs`).
    ran_on: u32,
    left_at_switch: u64,
}

/// `Task::ran_on` of a task that has not run yet.
const NO_CORE: u32 = u32::MAX;

#[derive(Default)]
struct Core {
    current: Option<TaskId>,
    /// The current segment: when it started, when it ends (before stolen time) and its activity.
    seg: Option<(Time, Time, Activity)>,
    /// The current task spins (polling) since this time.
    spin_since: Option<Time>,
    gen: u32,
    /// Interrupt time taken from the current segment and not yet added to its end.
    stolen: Time,
    /// Interrupt handler runs booked on the core, merged and in time order (those that ended before the open
    /// segment or spin began are dropped). Time they cover is the handlers', never a task's.
    irqs: VecDeque<(Time, Time)>,
    /// An interrupt handler runs on this core until then.
    irq_until: Time,
    need_resched: bool,
    tick_scheduled: bool,
    busy_ns: [Time; 3],
    irq_ns: Time,
    context_switches: u64,
    /// Tasks whose last run was on this core: those that may have filled its cache since a task left it.
    resident_tasks: u64,
}

impl Core {
    /// Handler time booked within `[from, to)`.
    fn irq_overlap(&self, from: Time, to: Time) -> Time {
        self.irqs.iter().map(|&(s, e)| e.min(to).saturating_sub(s.max(from))).sum()
    }

    /// Book a handler run over `[start, end)`; runs that ended by `keep_from` are dropped.
    fn book_irq_run(&mut self, start: Time, end: Time, keep_from: Time) {
        while self.irqs.front().is_some_and(|&(_, e)| e <= keep_from) {
            self.irqs.pop_front();
        }
        match self.irqs.back_mut() {
            // One core runs one handler at a time: a run booked to start inside the last one follows it.
            Some(last) if start <= last.1 => last.1 += end - start,
            _ => self.irqs.push_back((start, end)),
        }
    }

    /// Start of the open segment or spin, if any.
    fn open_since(&self) -> Option<Time> {
        self.seg.map(|(start, _, _)| start).or(self.spin_since)
    }
}

/// A core's cumulative time up to an instant, ns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CoreTime {
    pub user_ns: Time,
    /// The I/O path and interrupt handlers.
    pub kernel_ns: Time,
    pub poll_ns: Time,
    pub context_switches: u64,
}

pub use crate::metrics::core_usage::CoreUsage;

impl CoreUsage {
    /// Usage between two snapshots `span_ns` apart.
    pub fn between(before: &CoreTime, after: &CoreTime, span_ns: Time) -> CoreUsage {
        let share = |a: Time, b: Time| a.saturating_sub(b) as f64 / span_ns.max(1) as f64;
        let user = share(after.user_ns, before.user_ns);
        let kernel = share(after.kernel_ns, before.kernel_ns);
        let poll = share(after.poll_ns, before.poll_ns);
        let busy = (user + kernel + poll).min(1.0);
        CoreUsage {
            user,
            kernel,
            poll,
            idle: 1.0 - busy,
            context_switches: after.context_switches - before.context_switches,
        }
    }
}

pub struct Cpu {
    cores: Vec<Core>,
    tasks: Vec<Task>,
    scheduler: Box<dyn CpuScheduler>,
    tunables: SchedTunables,
    context_switch_ns: Time,
    cache_refill: cache_refill::CacheRefill,
    idle_exit_ns: Time,
    /// Tasks that just got a core and wait for the host to say what they run.
    ready: Vec<TaskId>,
}

impl Cpu {
    pub fn new(cfg: &HostConfig) -> Result<Cpu, String> {
        let tunables = SchedTunables::from_config(&cfg.cpu, cfg.cores);
        let scheduler = make_scheduler(&cfg.cpu_scheduler, tunables, cfg.cores).ok_or_else(|| {
            format!(
                "host.cpu_scheduler: unknown scheduler \"{}\"; expected one of {:?}",
                cfg.cpu_scheduler,
                scheduler_names()
            )
        })?;
        Ok(Cpu {
            cores: (0..cfg.cores).map(|_| Core::default()).collect(),
            tasks: Vec::new(),
            scheduler,
            tunables,
            context_switch_ns: cfg.cpu.context_switch_ns.0,
            cache_refill: cache_refill::CacheRefill::new(
                cfg.cpu.cache_bytes.0,
                cfg.cpu.task_footprint_bytes.0,
                cfg.cpu.cache_refill_line_ns.0,
            ),
            idle_exit_ns: cfg.cpu.idle_exit_ns.0,
            ready: Vec::new(),
        })
    }

    pub fn scheduler_name(&self) -> &'static str {
        self.scheduler.name()
    }

    /// Create a task allowed on `allowed` cores (first one is where it starts); it starts asleep.
    pub fn add_task(&mut self, allowed: Vec<u32>, critical: bool) -> TaskId {
        let id = self.tasks.len() as TaskId;
        let core = allowed[0];
        self.scheduler.task_new(id, core, 0);
        self.tasks.push(Task {
            allowed,
            core,
            state: State::Sleeping,
            critical,
            saved: None,
            pending_overhead: 0,
            cpu_ns: 0,
            user_ns: 0,
            switched_in: 0,
            ran_on: NO_CORE,
            left_at_switch: 0,
        });
        id
    }

    /// The core `task` runs on (or last ran on).
    pub fn core_of(&self, task: TaskId) -> u32 {
        self.tasks[task as usize].core
    }

    pub fn is_sleeping(&self, task: TaskId) -> bool {
        self.tasks[task as usize].state == State::Sleeping
    }

    /// The task is on its core and spinning in a polling loop.
    pub fn is_spinning(&self, task: TaskId) -> bool {
        let t = &self.tasks[task as usize];
        t.state == State::Running && self.cores[t.core as usize].spin_since.is_some()
    }

    /// When `task`'s next segment would start doing its own work if it started now (after switch-in costs).
    pub fn work_starts_at(&self, task: TaskId, now: Time) -> Time {
        now + self.tasks[task as usize].pending_overhead
    }

    /// A task that got a core and needs to be told what to run, if any.
    pub fn take_ready(&mut self) -> Option<TaskId> {
        self.ready.pop()
    }

    /// Run a segment of `ns` on `task`, which holds its core and has nothing running.
    pub fn run(&mut self, q: &mut impl HostQueue, task: TaskId, ns: Time, activity: Activity) {
        let now = q.now();
        let t = &mut self.tasks[task as usize];
        debug_assert_eq!(t.state, State::Running);
        let core_id = t.core;
        let end = now + t.pending_overhead + ns;
        t.pending_overhead = 0;
        let core = &mut self.cores[core_id as usize];
        debug_assert!(core.seg.is_none() && core.spin_since.is_none());
        core.seg = Some((now, end, activity));
        core.stolen = 0;
        core.gen = core.gen.wrapping_add(1);
        q.schedule_at(end, HostEvent::Cpu(CpuEvent::SegmentEnd { core: core_id, gen: core.gen }));
    }

    /// `task`, holding its core with nothing running, spins in a polling loop until [`Cpu::stop_spin`].
    pub fn spin(&mut self, q: &mut impl HostQueue, task: TaskId) {
        if self.tasks[task as usize].pending_overhead > 0 {
            // Switch in first; the host is asked again at the end and spins then.
            self.run(q, task, 0, Activity::Kernel);
            return;
        }
        let now = q.now();
        let core_id = self.tasks[task as usize].core;
        let core = &mut self.cores[core_id as usize];
        core.spin_since = Some(now);
        if core.need_resched {
            // A polling loop checks need_resched and yields.
            self.resched(q, core_id);
        }
    }

    /// The spinning `task` found what it polled for; it holds its core with nothing running.
    pub fn stop_spin(&mut self, now: Time, task: TaskId) {
        let core_id = self.tasks[task as usize].core;
        self.end_spin_accounting(core_id, now);
    }

    fn end_spin_accounting(&mut self, core_id: u32, now: Time) {
        let core = &mut self.cores[core_id as usize];
        if let Some(since) = core.spin_since.take() {
            // Interrupt handlers that ran meanwhile are the core's time, not the task's.
            let own = (now - since) - core.irq_overlap(since, now);
            core.busy_ns[Activity::Poll as usize] += own;
            if let Some(t) = core.current {
                self.charge(t, own, Activity::Poll);
            }
        }
    }

    /// `task`, holding its core with nothing running, goes to sleep until [`Cpu::wake`].
    pub fn sleep(&mut self, q: &mut impl HostQueue, task: TaskId) {
        let now = q.now();
        let core_id = self.tasks[task as usize].core;
        self.tasks[task as usize].state = State::Sleeping;
        self.tasks[task as usize].left_at_switch = self.cores[core_id as usize].context_switches;
        self.scheduler.put_prev(core_id, task, false, now);
        self.cores[core_id as usize].current = None;
        self.cores[core_id as usize].need_resched = false;
        self.switch_next(q, core_id, now, false);
    }

    /// Wake `task` (asleep) now: put it on a core and run it or queue it there.
    pub fn wake(&mut self, q: &mut impl HostQueue, task: TaskId) {
        let now = q.now();
        if self.tasks[task as usize].state != State::Sleeping {
            return;
        }
        let core_id = self.select_core(task, now);
        let t = &mut self.tasks[task as usize];
        t.core = core_id;
        t.state = State::Runnable;
        let critical = t.critical;
        self.scheduler.enqueue(core_id, task, true, now);
        match self.cores[core_id as usize].current {
            None => self.switch_next(q, core_id, now, true),
            Some(curr) => {
                if self.scheduler.check_preempt_wakeup(core_id, curr, task, critical, now) {
                    self.resched(q, core_id);
                }
                self.ensure_tick(q, core_id, now);
            }
        }
    }

    /// When an interrupt raised at `at` on `core` starts its handler: after any handler already running
    /// there, and after leaving the idle state if the core is idle (that exit is booked as interrupt time:
    /// the core is awake for it).
    pub fn irq_start(&mut self, core_id: u32, at: Time) -> Time {
        let core = &mut self.cores[core_id as usize];
        if core.irq_until > at {
            core.irq_until
        } else if core.current.is_some() {
            at
        } else {
            core.irq_ns += self.idle_exit_ns;
            core.irq_until = at + self.idle_exit_ns;
            let keep_from = core.open_since().unwrap_or(at);
            core.book_irq_run(at, core.irq_until, keep_from);
            at + self.idle_exit_ns
        }
    }

    /// An interrupt handler runs on `core` over `[start, start + ns)` (`start` from [`Cpu::irq_start`]). It
    /// delays whatever the core was doing by as much.
    pub fn book_irq(&mut self, core_id: u32, start: Time, ns: Time) {
        let core = &mut self.cores[core_id as usize];
        core.irq_until = core.irq_until.max(start + ns);
        core.irq_ns += ns;
        let keep_from = core.open_since().unwrap_or(start);
        core.book_irq_run(start, start + ns, keep_from);
        if core.current.is_some() && core.seg.is_some() {
            core.stolen += ns;
        }
    }

    /// Handle a CPU event. Tasks that finish a segment are appended to `ready` (see [`Cpu::take_ready`]).
    pub fn handle(&mut self, q: &mut impl HostQueue, event: CpuEvent) {
        let now = q.now();
        match event {
            CpuEvent::SegmentEnd { core: core_id, gen } => {
                let core = &mut self.cores[core_id as usize];
                if core.gen != gen || core.seg.is_none() {
                    return;
                }
                if core.stolen > 0 {
                    // Interrupts ran meanwhile: the segment ends that much later.
                    let (start, end, activity) = core.seg.expect("checked");
                    let new_end = end + core.stolen;
                    core.seg = Some((start, new_end, activity));
                    core.stolen = 0;
                    q.schedule_at(new_end, HostEvent::Cpu(CpuEvent::SegmentEnd { core: core_id, gen }));
                    return;
                }
                self.end_segment_accounting(core_id, now);
                let task = self.cores[core_id as usize].current.expect("a segment has a task");
                if self.cores[core_id as usize].need_resched && self.scheduler.queued(core_id) > 0 {
                    self.preempt(q, core_id, now);
                } else {
                    self.cores[core_id as usize].need_resched = false;
                    self.ready.push(task);
                }
            }
            CpuEvent::Tick { core: core_id } => {
                self.cores[core_id as usize].tick_scheduled = false;
                if self.scheduler.queued(core_id) == 0 {
                    return;
                }
                if let Some(curr) = self.cores[core_id as usize].current {
                    if self.scheduler.tick(core_id, curr, now) {
                        self.resched(q, core_id);
                    }
                }
                self.ensure_tick(q, core_id, now);
            }
        }
    }

    fn end_segment_accounting(&mut self, core_id: u32, now: Time) {
        let core = &mut self.cores[core_id as usize];
        if let Some((start, _, activity)) = core.seg.take() {
            // Interrupt handlers that ran meanwhile are the core's time, not the task's.
            let own = (now - start) - core.irq_overlap(start, now);
            core.busy_ns[activity as usize] += own;
            if let Some(t) = core.current {
                self.charge(t, own, activity);
            }
        }
        let core = &mut self.cores[core_id as usize];
        core.stolen = 0;
        core.gen = core.gen.wrapping_add(1);
    }

    /// The scheduler wants the current task of `core` off: now if it runs user code or polls, else at the end
    /// of its kernel segment.
    fn resched(&mut self, q: &mut impl HostQueue, core_id: u32) {
        let now = q.now();
        let core = &mut self.cores[core_id as usize];
        let preemptible = core.spin_since.is_some() || matches!(core.seg, Some((_, _, Activity::User)));
        if preemptible && self.scheduler.queued(core_id) > 0 {
            self.preempt(q, core_id, now);
        } else {
            core.need_resched = true;
        }
    }

    /// Take the current task off `core` (it stays runnable, keeping any unfinished work) and switch.
    fn preempt(&mut self, q: &mut impl HostQueue, core_id: u32, now: Time) {
        let core = &mut self.cores[core_id as usize];
        let task = core.current.expect("preempting a running task");
        let saved = if core.spin_since.is_some() {
            self.end_spin_accounting(core_id, now);
            Some(Saved::Spin)
        } else if let Some((_, end, activity)) = core.seg {
            let remaining = (end + core.stolen).saturating_sub(now);
            self.end_segment_accounting(core_id, now);
            Some(Saved::Segment { remaining, activity })
        } else {
            None
        };
        let t = &mut self.tasks[task as usize];
        t.saved = saved;
        t.state = State::Runnable;
        t.left_at_switch = self.cores[core_id as usize].context_switches;
        self.scheduler.put_prev(core_id, task, true, now);
        let core = &mut self.cores[core_id as usize];
        core.current = None;
        core.need_resched = false;
        self.switch_next(q, core_id, now, false);
    }

    /// `core` has no current task: run the next one, or go idle. `from_idle`: the core was idle, so unless an
    /// interrupt handler just woke it, it first leaves its idle state.
    fn switch_next(&mut self, q: &mut impl HostQueue, core_id: u32, now: Time, from_idle: bool) {
        let Some(next) = self.scheduler.pick_next(core_id, now) else { return };
        let core = &mut self.cores[core_id as usize];
        // An interrupt handler still running delays the switch; an idle core first leaves its idle state
        // unless a handler just woke it.
        let mut overhead = self.context_switch_ns + core.irq_until.saturating_sub(now);
        if from_idle && core.irq_until < now {
            overhead += self.idle_exit_ns;
        }
        overhead += self.refill_on_switch(core_id, next);
        let core = &mut self.cores[core_id as usize];
        core.current = Some(next);
        core.context_switches += 1;
        let t = &mut self.tasks[next as usize];
        t.switched_in += 1;
        t.state = State::Running;
        t.core = core_id;
        t.pending_overhead += overhead;
        match t.saved.take() {
            Some(Saved::Segment { remaining, activity }) => self.run(q, next, remaining, activity),
            Some(Saved::Spin) | None => self.ready.push(next),
        }
        self.ensure_tick(q, core_id, now);
    }

    /// The cache refill `task` pays switched in on `core` (`cache_refill.rs`): the other tasks that ran there
    /// since it left, at most the others whose last run was there. Moves its residence to `core`.
    fn refill_on_switch(&mut self, core_id: u32, task: TaskId) -> Time {
        let (ran_on, left_at) = {
            let t = &self.tasks[task as usize];
            (t.ran_on, t.left_at_switch)
        };
        if ran_on == core_id {
            let core = &self.cores[core_id as usize];
            let others = (core.context_switches - left_at).min(core.resident_tasks - 1);
            return self.cache_refill.refill_ns(others);
        }
        self.cores[core_id as usize].resident_tasks += 1;
        self.tasks[task as usize].ran_on = core_id;
        if ran_on == NO_CORE {
            // Its first run: a task's start-up is not modelled.
            return 0;
        }
        // Migrated: its footprint is in the other core's cache, and every line of it comes over.
        self.cores[ran_on as usize].resident_tasks -= 1;
        self.cache_refill.migrated_ns()
    }

    /// Schedule a tick on `core` if tasks wait there (ticks on cores with one task change nothing).
    fn ensure_tick(&mut self, q: &mut impl HostQueue, core_id: u32, now: Time) {
        let core = &mut self.cores[core_id as usize];
        if core.tick_scheduled || self.scheduler.queued(core_id) == 0 {
            return;
        }
        core.tick_scheduled = true;
        let tick = self.tunables.tick_ns;
        let at = (now / tick + 1) * tick;
        q.schedule_at(at, HostEvent::Cpu(CpuEvent::Tick { core: core_id }));
    }

    /// Where a woken task runs: its only allowed core; else its previous core if idle, else an idle allowed
    /// core, else its previous core (select_idle_sibling without the cache topology).
    fn select_core(&self, task: TaskId, now: Time) -> u32 {
        let t = &self.tasks[task as usize];
        let idle = |c: u32| {
            let core = &self.cores[c as usize];
            core.current.is_none() && self.scheduler.queued(c) == 0 && core.irq_until <= now
        };
        if t.allowed.len() == 1 || idle(t.core) {
            return t.core;
        }
        t.allowed.iter().copied().find(|&c| idle(c)).unwrap_or(t.core)
    }

    /// Add `ns` of `activity` to `task`'s CPU time.
    fn charge(&mut self, task: TaskId, ns: Time, activity: Activity) {
        let t = &mut self.tasks[task as usize];
        t.cpu_ns += ns;
        if activity == Activity::User {
            t.user_ns += ns;
        }
    }

    /// CPU time `task` has used.
    pub fn task_cpu_ns(&self, task: TaskId) -> Time {
        self.tasks[task as usize].cpu_ns
    }

    /// The part of [`Cpu::task_cpu_ns`] in user code.
    pub fn task_user_ns(&self, task: TaskId) -> Time {
        self.tasks[task as usize].user_ns
    }

    /// Times `task` was switched onto a core (what `getrusage` counts as its context switches, near enough).
    pub fn task_switches(&self, task: TaskId) -> u64 {
        self.tasks[task as usize].switched_in
    }

    /// Each core's cumulative time up to `at` (open segments and spins are closed at `at` and reopened).
    pub fn core_times(&mut self, at: Time) -> Vec<CoreTime> {
        for c in 0..self.cores.len() as u32 {
            // Close the open spin or segment at `at` (crediting the core and its task as if it ended
            // there) and reopen it, so that time before and after `at` is counted once each.
            if self.cores[c as usize].spin_since.is_some_and(|since| since <= at) {
                self.end_spin_accounting(c, at);
                self.cores[c as usize].spin_since = Some(at);
            }
            if let Some((start, end, activity)) = self.cores[c as usize].seg.filter(|&(start, _, _)| start <= at) {
                let core = &mut self.cores[c as usize];
                let own = (at - start) - core.irq_overlap(start, at);
                core.busy_ns[activity as usize] += own;
                if let Some(t) = core.current {
                    self.charge(t, own, activity);
                }
                self.cores[c as usize].seg = Some((at, end, activity));
            }
        }
        self.cores
            .iter()
            .map(|c| CoreTime {
                user_ns: c.busy_ns[Activity::User as usize],
                // Handlers are booked whole when raised: the part that runs after `at` belongs after.
                kernel_ns: c.busy_ns[Activity::Kernel as usize] + c.irq_ns - c.irq_overlap(at, Time::MAX),
                poll_ns: c.busy_ns[Activity::Poll as usize],
                context_switches: c.context_switches,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handler_runs_serialize_and_count_once() {
        let mut core = Core::default();
        core.book_irq_run(100, 200, 0);
        // Raised while the first runs: it follows it (one core runs one handler at a time).
        core.book_irq_run(150, 250, 0);
        core.book_irq_run(1_000, 1_100, 0);
        // 100 ns from 100, then 100 ns more once the first is over: 100 to 300.
        assert_eq!(core.irqs, VecDeque::from([(100, 300), (1_000, 1_100)]));
        assert_eq!(core.irq_overlap(0, Time::MAX), 300);
        assert_eq!(core.irq_overlap(250, 1_050), 50 + 50);
        // Runs over before what is still open are dropped.
        core.book_irq_run(2_000, 2_010, 1_500);
        assert_eq!(core.irqs, VecDeque::from([(2_000, 2_010)]));
    }
}
