//! EEVDF (Linux 6.6+ fair class), for equal-weight tasks: each task has a vruntime and a virtual deadline
//! one slice later; a task is eligible when its vruntime is not ahead of the queue's average; the eligible
//! task with the earliest deadline runs. A sleeper keeps its lag (clamped) and is placed by it on wake-up.
//! RUN_TO_PARITY: once picked, the running task keeps the core until its slice is used up while it stays
//! eligible, so a woken task that has not fallen behind waits for the end of the current slice — noticed at
//! a tick or a wake-up; one that lags (a sleeper next to a CPU hog) preempts at once.

use super::{CpuScheduler, SchedTunables, TaskId};
use crate::engine::Time;

const VRUNTIME_ORIGIN: i64 = 1 << 50;

#[derive(Clone, Copy, Default)]
struct Entity {
    vruntime: i64,
    deadline: i64,
    /// Lag saved when the task went to sleep: average vruntime minus its vruntime.
    vlag: i64,
    exec_start: Time,
    core: u32,
    /// Picked and still within its slice (RUN_TO_PARITY).
    protected: bool,
}

#[derive(Default)]
struct RunQueue {
    queued: Vec<TaskId>,
    curr: Option<TaskId>,
    /// Average vruntime when the queue was last non-empty (where a task lands on an empty queue).
    last_avg: i64,
}

pub struct Eevdf {
    slice: i64,
    tick: i64,
    tasks: Vec<Entity>,
    rqs: Vec<RunQueue>,
}

impl Eevdf {
    pub fn new(t: SchedTunables, cores: u32) -> Self {
        Eevdf {
            slice: t.base_slice_ns as i64,
            tick: t.tick_ns as i64,
            tasks: Vec::new(),
            rqs: (0..cores).map(|_| RunQueue { last_avg: VRUNTIME_ORIGIN, ..RunQueue::default() }).collect(),
        }
    }

    fn members(&self, core: u32) -> impl Iterator<Item = TaskId> + '_ {
        let rq = &self.rqs[core as usize];
        rq.queued.iter().copied().chain(rq.curr)
    }

    fn avg_vruntime(&mut self, core: u32) -> i64 {
        let (sum, n) =
            self.members(core).fold((0i128, 0i128), |(s, n), t| (s + self.tasks[t as usize].vruntime as i128, n + 1));
        let rq = &mut self.rqs[core as usize];
        if n > 0 {
            rq.last_avg = (sum / n) as i64;
        }
        rq.last_avg
    }

    /// Advance the running task's vruntime; true when it reached its deadline (a new slice starts and the
    /// task loses its protection).
    fn update_curr(&mut self, core: u32, now: Time) -> bool {
        let Some(c) = self.rqs[core as usize].curr else { return false };
        let slice = self.slice;
        let e = &mut self.tasks[c as usize];
        let delta = now.saturating_sub(e.exec_start) as i64;
        e.exec_start = now;
        e.vruntime += delta;
        if e.vruntime >= e.deadline {
            e.deadline = e.vruntime + slice;
            e.protected = false;
            return true;
        }
        false
    }

    /// pick_eevdf: the eligible member (queued or running) with the earliest deadline.
    fn best(&mut self, core: u32) -> Option<TaskId> {
        let avg = self.avg_vruntime(core);
        let eligible = self
            .members(core)
            .filter(|&t| self.tasks[t as usize].vruntime <= avg)
            .min_by_key(|&t| (self.tasks[t as usize].deadline, t));
        eligible.or_else(|| self.members(core).min_by_key(|&t| (self.tasks[t as usize].vruntime, t)))
    }
}

impl CpuScheduler for Eevdf {
    fn name(&self) -> &'static str {
        "eevdf"
    }

    fn task_new(&mut self, task: TaskId, core: u32, _now: Time) {
        if self.tasks.len() <= task as usize {
            self.tasks.resize(task as usize + 1, Entity::default());
        }
        let v = self.rqs[core as usize].last_avg;
        // PLACE_DEADLINE_INITIAL: a new task gets half a slice.
        self.tasks[task as usize] = Entity { vruntime: v, deadline: v + self.slice / 2, core, ..Entity::default() };
    }

    fn enqueue(&mut self, core: u32, task: TaskId, wakeup: bool, now: Time) {
        self.update_curr(core, now);
        let load = self.members(core).count() as i64;
        let avg = self.avg_vruntime(core);
        let slice = self.slice;
        let e = &mut self.tasks[task as usize];
        e.core = core;
        if wakeup {
            // place_entity with PLACE_LAG: keep the lag, inflated so that adding the task to the average
            // leaves its lag as it was.
            let lag = if load > 0 { e.vlag * (load + 1) / load } else { e.vlag };
            e.vruntime = avg - lag;
            e.deadline = e.vruntime + slice;
        }
        e.protected = false;
        self.rqs[core as usize].queued.push(task);
    }

    fn put_prev(&mut self, core: u32, task: TaskId, runnable: bool, now: Time) {
        self.update_curr(core, now);
        let avg = self.avg_vruntime(core);
        let limit = (2 * self.slice).max(self.tick);
        let rq = &mut self.rqs[core as usize];
        if rq.curr == Some(task) {
            rq.curr = None;
        }
        let e = &mut self.tasks[task as usize];
        e.protected = false;
        if runnable {
            rq.queued.push(task);
        } else {
            e.vlag = (avg - e.vruntime).clamp(-limit, limit);
        }
    }

    fn pick_next(&mut self, core: u32, now: Time) -> Option<TaskId> {
        let pick = self.best(core)?;
        let rq = &mut self.rqs[core as usize];
        rq.queued.retain(|&t| t != pick);
        rq.curr = Some(pick);
        let e = &mut self.tasks[pick as usize];
        e.exec_start = now;
        e.protected = true;
        Some(pick)
    }

    fn check_preempt_wakeup(&mut self, core: u32, curr: TaskId, woken: TaskId, _critical: bool, now: Time) -> bool {
        if self.update_curr(core, now) {
            return true;
        }
        // RUN_TO_PARITY protects the running task's slice only while it is eligible (pick_eevdf drops an
        // ineligible curr), so a woken task that lags preempts a task that ran ahead.
        let avg = self.avg_vruntime(core);
        let c = self.tasks[curr as usize];
        if c.protected && c.vruntime <= avg {
            return false;
        }
        self.best(core) == Some(woken)
    }

    fn tick(&mut self, core: u32, _curr: TaskId, now: Time) -> bool {
        self.update_curr(core, now)
    }

    fn queued(&self, core: u32) -> usize {
        self.rqs[core as usize].queued.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::host::CpuConfig;

    use crate::engine::{MS, US};

    fn one_core() -> Eevdf {
        // Base slice 0.75 ms on one CPU.
        Eevdf::new(SchedTunables::from_config(&CpuConfig::default(), 1), 1)
    }

    #[test]
    fn run_to_parity_keeps_an_eligible_task_running_until_its_slice_ends() {
        let mut s = one_core();
        s.task_new(0, 0, 0);
        s.task_new(1, 0, 0);
        s.enqueue(0, 0, true, 0);
        s.enqueue(0, 1, true, 0);
        let first = s.pick_next(0, 0).expect("two runnable");
        let other = 1 - first;
        // Both start level; right away the running task is still eligible and protected.
        assert!(!s.check_preempt_wakeup(0, first, other, false, 0));
        assert!(!s.tick(0, first, 100 * US));
        // Its slice (0.75 ms) is used up by the next tick.
        assert!(s.tick(0, first, MS));
        s.put_prev(0, first, true, MS);
        assert_eq!(s.pick_next(0, MS), Some(other));
    }

    #[test]
    fn a_sleeper_that_lags_preempts_a_task_that_ran_ahead() {
        let mut s = one_core();
        s.task_new(0, 0, 0);
        s.task_new(1, 0, 0);
        s.enqueue(0, 0, true, 0);
        s.enqueue(0, 1, true, 0);
        assert_eq!(s.pick_next(0, 0), Some(0), "equal deadlines: the hog (lower id) first");
        assert!(s.tick(0, 0, MS), "the hog's first slice ends");
        s.put_prev(0, 0, true, MS);
        assert_eq!(s.pick_next(0, MS), Some(1));
        // The I/O task runs 10 us and sleeps, behind the hog in virtual time: it keeps that lag.
        s.put_prev(0, 1, false, MS + 10 * US);
        assert_eq!(s.pick_next(0, MS + 10 * US), Some(0));
        // It wakes 2 ms later; placed by its lag, it is behind the hog, which is then not eligible.
        s.enqueue(0, 1, true, 3 * MS);
        assert!(s.check_preempt_wakeup(0, 0, 1, false, 3 * MS));
    }

    #[test]
    fn a_sleeper_without_lag_gets_no_credit() {
        let mut s = one_core();
        s.task_new(0, 0, 0);
        s.task_new(1, 0, 0);
        s.enqueue(0, 1, true, 0);
        assert_eq!(s.pick_next(0, 0), Some(1));
        s.put_prev(0, 1, false, 10 * US); // alone on the queue: zero lag
        s.enqueue(0, 0, true, 10 * US);
        assert_eq!(s.pick_next(0, 10 * US), Some(0));
        s.enqueue(0, 1, true, 200 * US);
        assert!(!s.check_preempt_wakeup(0, 0, 1, false, 200 * US), "unlike CFS, no sleeper credit");
    }
}
