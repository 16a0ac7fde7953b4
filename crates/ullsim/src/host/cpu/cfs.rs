//! CFS (Linux 5.x fair class), for equal-weight tasks: vruntime, min_vruntime, sleeper credit (a woken task
//! is placed no further back than min_vruntime - sched_latency/2), wake-up preemption only when the running
//! task is ahead by more than the wake-up granularity, tick preemption once the running task used its ideal
//! slice, and the `next` buddy. With `critical_wakeup` (FastResponse, seed 000 Algorithm 1) a critical woken
//! task becomes `next` unconditionally, sets need_resched and cannot be displaced as `next` until it runs.

use super::{CpuScheduler, SchedTunables, TaskId};
use crate::engine::Time;

/// vruntime starts here so that placing a sleeper behind min_vruntime never goes below zero.
const VRUNTIME_ORIGIN: u64 = 1 << 50;

#[derive(Clone, Copy, Default)]
struct Entity {
    vruntime: u64,
    exec_start: Time,
    sum_exec: Time,
    /// sum_exec when the task was last picked (its current slice started).
    prev_sum_exec: Time,
    core: u32,
}

#[derive(Default)]
struct RunQueue {
    queued: Vec<TaskId>,
    curr: Option<TaskId>,
    min_vruntime: u64,
    next: Option<TaskId>,
    /// `next` is a critical task (FastResponse): keep it until it runs.
    next_locked: bool,
}

pub struct Cfs {
    t: SchedTunables,
    critical_wakeup: bool,
    tasks: Vec<Entity>,
    rqs: Vec<RunQueue>,
}

impl Cfs {
    pub fn new(t: SchedTunables, cores: u32, critical_wakeup: bool) -> Self {
        Cfs {
            t,
            critical_wakeup,
            tasks: Vec::new(),
            rqs: (0..cores).map(|_| RunQueue { min_vruntime: VRUNTIME_ORIGIN, ..RunQueue::default() }).collect(),
        }
    }

    fn update_curr(&mut self, core: u32, now: Time) {
        let rq = &mut self.rqs[core as usize];
        if let Some(c) = rq.curr {
            let e = &mut self.tasks[c as usize];
            let delta = now.saturating_sub(e.exec_start);
            e.exec_start = now;
            e.sum_exec += delta;
            e.vruntime += delta;
        }
        self.update_min_vruntime(core);
    }

    fn leftmost(&self, core: u32) -> Option<TaskId> {
        self.rqs[core as usize].queued.iter().copied().min_by_key(|&t| (self.tasks[t as usize].vruntime, t))
    }

    fn update_min_vruntime(&mut self, core: u32) {
        let left = self.leftmost(core).map(|t| self.tasks[t as usize].vruntime);
        let rq = &self.rqs[core as usize];
        let curr = rq.curr.map(|t| self.tasks[t as usize].vruntime);
        let candidate = match (curr, left) {
            (Some(c), Some(l)) => c.min(l),
            (Some(c), None) => c,
            (None, Some(l)) => l,
            (None, None) => return,
        };
        let rq = &mut self.rqs[core as usize];
        rq.min_vruntime = rq.min_vruntime.max(candidate);
    }

    /// The ideal slice of one task: the scheduling period shared among the runnable tasks.
    fn ideal_runtime(&self, core: u32) -> Time {
        let rq = &self.rqs[core as usize];
        let nr = (rq.queued.len() + usize::from(rq.curr.is_some())).max(1) as u64;
        let nr_latency = (self.t.latency_ns / self.t.min_granularity_ns.max(1)).max(1);
        let period = if nr > nr_latency { nr * self.t.min_granularity_ns } else { self.t.latency_ns };
        (period / nr).max(self.t.min_granularity_ns.min(period))
    }

    /// wakeup_preempt_entity: 1 when `curr` is ahead of `se` by more than the wake-up granularity.
    fn ahead_by_more_than_gran(&self, curr: TaskId, se: TaskId) -> bool {
        let c = self.tasks[curr as usize].vruntime;
        let s = self.tasks[se as usize].vruntime;
        c > s && c - s > self.t.wakeup_granularity_ns
    }
}

impl CpuScheduler for Cfs {
    fn name(&self) -> &'static str {
        if self.critical_wakeup {
            "fastresponse"
        } else {
            "cfs"
        }
    }

    fn task_new(&mut self, task: TaskId, core: u32, _now: Time) {
        let vruntime = self.rqs[core as usize].min_vruntime;
        if self.tasks.len() <= task as usize {
            self.tasks.resize(task as usize + 1, Entity::default());
        }
        self.tasks[task as usize] = Entity { vruntime, core, ..Entity::default() };
    }

    fn enqueue(&mut self, core: u32, task: TaskId, wakeup: bool, now: Time) {
        self.update_curr(core, now);
        let min_vruntime = self.rqs[core as usize].min_vruntime;
        let e = &mut self.tasks[task as usize];
        if e.core != core {
            // Migration keeps the task's lag relative to its queue.
            let old_min = self.rqs[e.core as usize].min_vruntime;
            e.vruntime = (e.vruntime + min_vruntime).saturating_sub(old_min);
            e.core = core;
        }
        if wakeup {
            // GENTLE_FAIR_SLEEPERS: credit at most half a latency period.
            let floor = min_vruntime.saturating_sub(self.t.latency_ns / 2);
            e.vruntime = e.vruntime.max(floor);
        }
        self.rqs[core as usize].queued.push(task);
    }

    fn put_prev(&mut self, core: u32, task: TaskId, runnable: bool, now: Time) {
        self.update_curr(core, now);
        let rq = &mut self.rqs[core as usize];
        if rq.curr == Some(task) {
            rq.curr = None;
        }
        if runnable {
            rq.queued.push(task);
        }
    }

    fn pick_next(&mut self, core: u32, now: Time) -> Option<TaskId> {
        let left = self.leftmost(core)?;
        let rq = &self.rqs[core as usize];
        let pick = match rq.next {
            // Even a critical `next` runs only within the wake-up granularity of the leftmost task: the
            // paper's guard against starving the others ("scheduled only if the difference between its vtime
            // and the minimum vtime is less than a given threshold"). It stays `next` meanwhile.
            Some(n) if rq.queued.contains(&n) && !self.ahead_by_more_than_gran(n, left) => n,
            _ => left,
        };
        let rq = &mut self.rqs[core as usize];
        rq.queued.retain(|&t| t != pick);
        if rq.next == Some(pick) || rq.next.is_some_and(|n| !rq.queued.contains(&n)) {
            rq.next = None;
            rq.next_locked = false;
        }
        rq.curr = Some(pick);
        let e = &mut self.tasks[pick as usize];
        e.exec_start = now;
        e.prev_sum_exec = e.sum_exec;
        self.update_min_vruntime(core);
        Some(pick)
    }

    fn check_preempt_wakeup(&mut self, core: u32, curr: TaskId, woken: TaskId, critical: bool, now: Time) -> bool {
        self.update_curr(core, now);
        let rq = &mut self.rqs[core as usize];
        // Algorithm 1: if `next` is empty or non-critical and the woken task is critical, it becomes `next`
        // (and stays so until it runs) and the core reschedules; otherwise the normal wake-up flow.
        if self.critical_wakeup && critical && !rq.next_locked {
            rq.next = Some(woken);
            rq.next_locked = true;
            return true;
        }
        if self.ahead_by_more_than_gran(curr, woken) {
            let rq = &mut self.rqs[core as usize];
            if !rq.next_locked {
                rq.next = Some(woken);
            }
            return true;
        }
        false
    }

    fn tick(&mut self, core: u32, curr: TaskId, now: Time) -> bool {
        self.update_curr(core, now);
        let ideal = self.ideal_runtime(core);
        let e = self.tasks[curr as usize];
        let delta_exec = e.sum_exec - e.prev_sum_exec;
        if delta_exec > ideal {
            return true;
        }
        if delta_exec < self.t.min_granularity_ns {
            return false;
        }
        let Some(left) = self.leftmost(core) else { return false };
        let lv = self.tasks[left as usize].vruntime;
        e.vruntime > lv && e.vruntime - lv > ideal
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

    /// One core: latency 6 ms, min granularity 0.75 ms, wake-up granularity 1 ms, 4 ms ticks.
    fn one_core(critical_wakeup: bool) -> Cfs {
        Cfs::new(SchedTunables::from_config(&CpuConfig::default(), 1), 1, critical_wakeup)
    }

    /// A hog (task 0) runs from 0; an I/O task (task 1) created at 0 wakes at `wake_at`.
    fn hog_then_wake(s: &mut Cfs, wake_at: Time, critical: bool) -> bool {
        s.task_new(0, 0, 0);
        s.task_new(1, 0, 0);
        s.enqueue(0, 0, true, 0);
        assert_eq!(s.pick_next(0, 0), Some(0));
        s.enqueue(0, 1, true, wake_at);
        s.check_preempt_wakeup(0, 0, 1, critical, wake_at)
    }

    #[test]
    fn a_wakee_close_in_vruntime_waits_for_the_tick_after_the_hogs_slice() {
        let mut s = one_core(false);
        assert!(!hog_then_wake(&mut s, 100 * US, false), "100 us ahead is within the 1 ms wake-up granularity");
        // Two tasks share a 6 ms period: the hog's ideal slice is 3 ms; the 4 ms tick preempts it.
        assert!(!s.tick(0, 0, 2 * MS));
        assert!(s.tick(0, 0, 4 * MS));
        s.put_prev(0, 0, true, 4 * MS);
        assert_eq!(s.pick_next(0, 4 * MS), Some(1), "the waiting task has the smaller vruntime");
    }

    #[test]
    fn a_wakee_that_lags_by_more_than_the_granularity_preempts_at_once() {
        let mut s = one_core(false);
        assert!(hog_then_wake(&mut s, 2 * MS, false), "2 ms behind the hog is more than the 1 ms granularity");
        s.put_prev(0, 0, true, 2 * MS);
        assert_eq!(s.pick_next(0, 2 * MS), Some(1), "the wakee is the next buddy");
    }

    #[test]
    fn sleeper_credit_is_capped_at_half_the_latency() {
        let mut s = one_core(false);
        // The hog runs 100 ms alone; the sleeper's vruntime is then floored at min_vruntime - 3 ms.
        assert!(hog_then_wake(&mut s, 100 * MS, false));
        let lag = s.tasks[0].vruntime - s.tasks[1].vruntime;
        assert_eq!(lag, 3 * MS);
    }

    #[test]
    fn fastresponse_preempts_for_a_critical_wakee_only() {
        let mut s = one_core(true);
        assert!(hog_then_wake(&mut s, 100 * US, true), "critical: preempt regardless of the granularity");
        let mut s = one_core(true);
        assert!(!hog_then_wake(&mut s, 100 * US, false), "normal tasks keep CFS's rule");
    }

    #[test]
    fn fastresponse_follows_algorithm_1_and_its_starvation_guard() {
        // A second critical wakee while `next` already points to a critical task takes the normal flow: no
        // forced reschedule within the granularity, and `next` is not replaced.
        let mut s = one_core(true);
        assert!(hog_then_wake(&mut s, 100 * US, true));
        s.task_new(2, 0, 100 * US);
        s.enqueue(0, 2, true, 150 * US);
        assert!(!s.check_preempt_wakeup(0, 0, 2, true, 150 * US), "next is critical already: normal flow");
        assert_eq!(s.rqs[0].next, Some(1), "a critical next is kept until it runs");
        s.put_prev(0, 0, true, 150 * US);
        assert_eq!(s.pick_next(0, 150 * US), Some(1));
        // The guard: a critical task far ahead in vruntime (it used much CPU) is made `next` and asks for a
        // reschedule, but runs only within the wake-up granularity of the leftmost task.
        let mut s = one_core(true);
        s.task_new(0, 0, 0);
        s.task_new(1, 0, 0);
        s.tasks[1].vruntime += 10 * MS;
        s.enqueue(0, 0, false, 0);
        assert_eq!(s.pick_next(0, 0), Some(0));
        s.enqueue(0, 1, false, 100 * US);
        assert!(s.check_preempt_wakeup(0, 0, 1, true, 100 * US));
        s.put_prev(0, 0, true, 100 * US);
        assert_eq!(s.pick_next(0, 100 * US), Some(0), "10 ms ahead: the others run first");
        assert_eq!(s.rqs[0].next, Some(1), "and it stays next");
    }

    #[test]
    fn scaled_tunables_follow_linux() {
        let t = SchedTunables::from_config(&CpuConfig::default(), 8);
        assert_eq!((t.latency_ns, t.min_granularity_ns, t.wakeup_granularity_ns), (24 * MS, 3 * MS, 4 * MS));
        let t = SchedTunables::from_config(&CpuConfig::default(), 64);
        assert_eq!(t.latency_ns, 24 * MS, "the factor stops growing at 8 CPUs");
    }
}
