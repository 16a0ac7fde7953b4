//! `bfq`: Budget Fair Queueing (block/bfq-iosched.c and bfq-wf2q.c), reduced to its scheduling core.
//!
//! Modeled:
//! - One queue per process (`task`) and I/O priority class, like Linux's per-process `bfq_queue` (a task
//!   that changes class gets a new queue, as in Linux). Weight (8 - ioprio) * 10 = 40 for the default
//!   ioprio 4; our requests carry no ioprio level, so all queues weigh the same.
//! - Classes are served strictly: RT before BE before IDLE, each with its own service tree (virtual time
//!   V and weight sum), except that the IDLE class gets one turn when it has not been served for 200 ms
//!   (`BFQ_CL_IDLE_TIMEOUT`), and an IDLE queue gives up service after each request when others are busy.
//! - B-WF2Q+: a queue that becomes busy gets virtual start S = max(V, its old finish F) (time spent idle
//!   earns no credit, and a queue that idles briefly resumes at its own F) and F = S + budget / weight. V advances by the
//!   sectors dispatched / the tree's weight sum, where the sum keeps an idle queue's weight until V passes
//!   its F (Linux's idle tree). The in-service queue dispatches its requests in FIFO order until its next
//!   request does not fit in what is left of its budget (max budget 16384 sectors, fixed: no budget
//!   feedback), it has been in service for 125 ms (budget timeout), or it is empty; then it expires: F is
//!   recomputed from the service it actually received, and if it still has requests it is requeued with
//!   S = that F. The next in-service queue is the eligible one (S <= V) with the smallest F, V first jumping
//!   to the smallest S when none is eligible. A queue of a higher class that becomes busy preempts the
//!   in-service queue.
//!
//! Ignored, and why:
//! - Idling (`slice_idle` 8 ms). Linux does not idle on NCQ flash when all busy queues have the same weight
//!   and class and no weight raising is going on (`bfq_better_to_idle`), which is the common case here. It
//!   would idle for an RT or differently weighted queue (an asymmetric scenario); not modeled, as it needs a
//!   timer to re-run dispatch that the scheduler interface does not have. So an empty in-service queue
//!   expires at the next `dispatch`.
//! - Low-latency heuristics (weight raising x30 for interactive and soft real-time queues, burst handling),
//!   injection, queue merging, budget auto-tuning from the peak rate, charging time instead of service to
//!   slow or timed-out queues, and the separate per-cgroup async queues (our requests carry no sync flag).
//! - Sector ordering inside a queue (`bfq_choose_req`) and the per-queue FIFO expiry (250 ms / 125 ms): a
//!   queue's requests are served in arrival order.
//!
//! Hardware queues: bfq is queue-wide (one `bfq_data`, one lock), so `dispatch(hwq)` ignores `hwq` and may
//! return a request that was inserted for another hardware queue (Linux then issues it on its own hardware
//! queue). `queued(hwq)` counts the waiting requests inserted for `hwq`, so the counts add up to the total;
//! `dispatch(hwq)` can return a request while `queued(hwq)` is 0 when other hardware queues have some.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::{IoScheduler, SchedCosts, SchedRequest};
use crate::engine::Time;

const MS: Time = 1_000_000;
/// Budget of every queue, in sectors (`BFQ_DEFAULT_MAX_BUDGET`); a larger request gets a budget of its size.
const MAX_BUDGET_SECTORS: u64 = 16 * 1024;
/// Weight of a queue with the default ioprio 4: (IOPRIO_NR_LEVELS - 4) * BFQ_WEIGHT_CONVERSION_COEFF.
const DEFAULT_WEIGHT: u64 = (8 - 4) * 10;
/// Fixed-point shift of virtual times (`WFQ_SERVICE_SHIFT`).
const SERVICE_SHIFT: u32 = 22;
/// A queue in service longer than this expires (`bfq_timeout`).
const BUDGET_TIMEOUT_NS: Time = 125 * MS;
/// The IDLE class gets a turn when it has not been considered for this long (`BFQ_CL_IDLE_TIMEOUT`).
const IDLE_CLASS_TIMEOUT_NS: Time = 200 * MS;

/// Classes, highest first: RT, BE, IDLE.
const CLASSES: usize = 3;
const IDLE_CLASS: usize = 2;

/// Class index of an I/O priority class: 0 RT, 2 IDLE, everything else BE.
fn class_of(prio_class: u8) -> usize {
    match prio_class {
        0 => 0,
        2 => IDLE_CLASS,
        _ => 1,
    }
}

/// Virtual time `a` is after `b`; virtual times wrap, as in Linux's `bfq_gt`.
fn vt_after(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) > 0
}

/// Virtual time taken by `service` sectors at `weight` (`bfq_delta`).
fn vt_delta(service: u64, weight: u64) -> u64 {
    (service << SERVICE_SHIFT) / weight.max(1)
}

/// Where a queue is with respect to its service tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum QueueState {
    /// Not busy and not counted in the weight sum.
    Forgotten,
    /// Not busy, but its finish time is still ahead of V: its weight stays in the sum until V passes it.
    Idle,
    /// Has requests (in the tree's active list) or is the in-service queue.
    Busy,
}

/// A per-process queue (`bfq_queue` with its `bfq_entity`).
#[derive(Debug)]
struct ProcessQueue {
    class: usize,
    weight: u64,
    /// Waiting requests with the hardware-queue slot they were inserted for.
    requests: VecDeque<(SchedRequest, u32)>,
    /// Virtual start and finish times.
    start: u64,
    finish: u64,
    /// Budget of the current (or next) service turn and the service received in the current turn, sectors.
    budget: u64,
    service: u64,
    state: QueueState,
}

impl ProcessQueue {
    /// Budget for the next turn: the maximum, or the head request's size if larger.
    fn next_budget(&self) -> u64 {
        self.requests.front().map_or(0, |(rq, _)| rq.sectors as u64).max(MAX_BUDGET_SECTORS)
    }
}

/// One class's service tree.
#[derive(Debug, Default)]
struct ServiceTree {
    /// System virtual time V.
    vtime: u64,
    /// Weights of busy queues and of idle queues whose finish is still ahead of V.
    weight_sum: u64,
    /// Busy queues waiting for service (the in-service queue is not here).
    active: Vec<usize>,
    /// Idle queues still counted in `weight_sum`.
    idle: Vec<usize>,
}

pub struct Bfq {
    queues: Vec<ProcessQueue>,
    by_task: FxHashMap<(u32, u8), usize>,
    trees: [ServiceTree; CLASSES],
    in_service: Option<usize>,
    in_service_since: Time,
    idle_class_last_service: Time,
    /// Requests waiting per hardware-queue slot.
    queued_per_slot: Vec<usize>,
}

impl Bfq {
    pub fn new(hw_queues: u32) -> Self {
        Bfq {
            queues: Vec::new(),
            by_task: FxHashMap::default(),
            trees: Default::default(),
            in_service: None,
            in_service_since: 0,
            idle_class_last_service: 0,
            queued_per_slot: vec![0; hw_queues.max(1) as usize],
        }
    }

    /// Slot of a hardware queue; out-of-range numbers fold back instead of panicking.
    fn slot(&self, hwq: u32) -> usize {
        hwq as usize % self.queued_per_slot.len()
    }

    /// The queue became busy: timestamp it and put it in its tree (`__bfq_activate_entity`).
    fn activate(&mut self, qi: usize) {
        let q = &mut self.queues[qi];
        let tree = &mut self.trees[q.class];
        match q.state {
            QueueState::Busy => return,
            QueueState::Idle => {
                tree.idle.retain(|&i| i != qi);
                // No credit for the idle time, and no gain from having gone idle before finishing.
                q.start = if vt_after(tree.vtime, q.finish) { tree.vtime } else { q.finish };
            }
            QueueState::Forgotten => {
                q.start = tree.vtime;
                tree.weight_sum += q.weight;
            }
        }
        q.budget = q.next_budget();
        q.finish = q.start.wrapping_add(vt_delta(q.budget, q.weight));
        q.state = QueueState::Busy;
        tree.active.push(qi);
    }

    /// End the in-service queue's turn (`bfq_bfqq_expire`): charge it the service it received, then requeue
    /// it if it has requests or let it go idle.
    fn expire(&mut self, qi: usize) {
        self.in_service = None;
        let q = &mut self.queues[qi];
        let served_finish = q.start.wrapping_add(vt_delta(q.service, q.weight));
        if q.requests.is_empty() {
            q.finish = served_finish;
            self.park(qi);
        } else {
            q.start = served_finish;
            q.budget = q.next_budget();
            q.finish = q.start.wrapping_add(vt_delta(q.budget, q.weight));
            self.trees[q.class].active.push(qi);
        }
    }

    /// A busy queue that is not in service lost its last request (`bfq_del_bfqq_busy`): it leaves the active
    /// list with the finish it was given at activation, idle while that is ahead of V, else forgotten.
    fn deactivate(&mut self, qi: usize) {
        let q = &mut self.queues[qi];
        if q.state != QueueState::Busy {
            return;
        }
        self.trees[q.class].active.retain(|&i| i != qi);
        self.park(qi);
    }

    /// A queue without requests leaves the busy state: idle while its finish is ahead of V (its weight stays
    /// in the sum), else forgotten.
    fn park(&mut self, qi: usize) {
        let q = &mut self.queues[qi];
        let tree = &mut self.trees[q.class];
        if vt_after(q.finish, tree.vtime) {
            q.state = QueueState::Idle;
            tree.idle.push(qi);
        } else {
            q.state = QueueState::Forgotten;
            tree.weight_sum = tree.weight_sum.saturating_sub(q.weight);
        }
    }

    /// Drop idle queues whose finish V has reached from the weight sum (`bfq_forget_idle`).
    fn forget_idle(&mut self, class: usize) {
        let tree = &mut self.trees[class];
        let queues = &mut self.queues;
        tree.idle.retain(|&qi| {
            let q = &mut queues[qi];
            if vt_after(q.finish, tree.vtime) {
                return true;
            }
            q.state = QueueState::Forgotten;
            tree.weight_sum = tree.weight_sum.saturating_sub(q.weight);
            false
        });
    }

    /// B-WF2Q+ choice within a class: the eligible queue with the smallest finish time.
    fn pick_in_class(&mut self, class: usize) -> Option<usize> {
        let tree = &self.trees[class];
        let first = *tree.active.first()?;
        // If nothing is eligible, V jumps to the smallest start (`bfq_calc_vtime_jump`).
        let min_start = tree.active.iter().map(|&i| self.queues[i].start).fold(self.queues[first].start, |m, s| {
            if vt_after(m, s) {
                s
            } else {
                m
            }
        });
        if vt_after(min_start, tree.vtime) {
            self.trees[class].vtime = min_start;
            self.forget_idle(class);
        }
        let tree = &self.trees[class];
        let mut best: Option<usize> = None;
        for &qi in &tree.active {
            let q = &self.queues[qi];
            if vt_after(q.start, tree.vtime) {
                continue;
            }
            let better = best.is_none_or(|b| {
                let bf = self.queues[b].finish;
                vt_after(bf, q.finish) || (bf == q.finish && qi < b)
            });
            if better {
                best = Some(qi);
            }
        }
        let chosen = best?;
        self.trees[class].active.retain(|&i| i != chosen);
        Some(chosen)
    }

    /// Set the next in-service queue: highest class first, unless the IDLE class is owed a turn.
    fn select_next(&mut self, now: Time) -> Option<usize> {
        let mut first_class = 0;
        if now >= self.idle_class_last_service.saturating_add(IDLE_CLASS_TIMEOUT_NS) {
            if !self.trees[IDLE_CLASS].active.is_empty() {
                first_class = IDLE_CLASS;
            }
            self.idle_class_last_service = now;
        }
        let qi = (first_class..CLASSES).find_map(|class| self.pick_in_class(class))?;
        self.queues[qi].service = 0;
        self.in_service = Some(qi);
        self.in_service_since = now;
        Some(qi)
    }

    /// Charge `sectors` of service to the in-service queue and advance its tree's V (`bfq_bfqq_served`).
    fn served(&mut self, qi: usize, sectors: u64) {
        let q = &mut self.queues[qi];
        q.service += sectors;
        let tree = &mut self.trees[q.class];
        tree.vtime = tree.vtime.wrapping_add(vt_delta(sectors, tree.weight_sum));
        let class = q.class;
        self.forget_idle(class);
    }

    fn busy_queues(&self) -> usize {
        self.trees.iter().map(|t| t.active.len()).sum::<usize>() + self.in_service.is_some() as usize
    }
}

impl IoScheduler for Bfq {
    fn name(&self) -> &'static str {
        "bfq"
    }
    fn costs(&self) -> SchedCosts {
        // ~1.9 us per request in all (bfq doc: tops out near 400 KIOPS on one fast core), one queue-wide lock.
        SchedCosts { insert_ns: 800, dispatch_ns: 700, completed_ns: 400, global_lock: true }
    }
    fn insert(&mut self, hwq: u32, rq: SchedRequest, _now: Time) {
        let slot = self.slot(hwq);
        let class = class_of(rq.prio_class);
        let queues = &mut self.queues;
        let qi = *self.by_task.entry((rq.task, class as u8)).or_insert_with(|| {
            queues.push(ProcessQueue {
                class,
                weight: DEFAULT_WEIGHT,
                requests: VecDeque::new(),
                start: 0,
                finish: 0,
                budget: MAX_BUDGET_SECTORS,
                service: 0,
                state: QueueState::Forgotten,
            });
            queues.len() - 1
        });
        self.queues[qi].requests.push_back((rq, slot as u32));
        self.queued_per_slot[slot] += 1;
        if self.queues[qi].state != QueueState::Busy {
            self.activate(qi);
            // A newly busy queue of a higher class preempts (`bfq_bfqq_higher_class_or_weight`).
            if let Some(current) = self.in_service {
                if class < self.queues[current].class {
                    self.expire(current);
                }
            }
        }
    }
    fn dispatch(&mut self, _hwq: u32, now: Time) -> Option<SchedRequest> {
        // Each pass dispatches or expires the in-service queue; a freshly selected queue always has a request
        // that fits its fresh budget, so two passes suffice.
        for _ in 0..3 {
            let qi = match self.in_service {
                Some(qi) => qi,
                None => self.select_next(now)?,
            };
            let q = &self.queues[qi];
            let Some(&(head, _)) = q.requests.front() else {
                // No idling: an empty in-service queue expires at once.
                self.expire(qi);
                continue;
            };
            let over_budget = head.sectors as u64 > q.budget.saturating_sub(q.service);
            let timed_out = q.service > 0 && now.saturating_sub(self.in_service_since) >= BUDGET_TIMEOUT_NS;
            if over_budget || timed_out {
                self.expire(qi);
                continue;
            }
            let (rq, slot) = self.queues[qi].requests.pop_front()?;
            self.queued_per_slot[slot as usize] = self.queued_per_slot[slot as usize].saturating_sub(1);
            self.served(qi, rq.sectors as u64);
            // An IDLE-class queue gets one request at a time when others wait.
            if self.queues[qi].class == IDLE_CLASS && self.busy_queues() > 1 {
                self.expire(qi);
            }
            return Some(rq);
        }
        None
    }
    fn completed(&mut self, _rq: &SchedRequest, _latency_ns: Time, _now: Time) {
        // Completions drive idling, think-time and peak-rate estimates in Linux, none of which is modeled.
    }
    fn queued(&self, hwq: u32) -> usize {
        self.queued_per_slot[self.slot(hwq)]
    }
    fn remove_first(&mut self, hwq: u32, matches: &mut dyn FnMut(&SchedRequest) -> bool) -> Option<SchedRequest> {
        // Only requests inserted for `hwq`, each process queue in arrival order.
        let slot = self.slot(hwq);
        let (qi, at) = self.queues.iter().enumerate().find_map(|(qi, q)| {
            q.requests.iter().position(|&(rq, s)| s as usize == slot && matches(&rq)).map(|at| (qi, at))
        })?;
        let (rq, _) = self.queues[qi].requests.remove(at)?;
        self.queued_per_slot[slot] = self.queued_per_slot[slot].saturating_sub(1);
        if self.queues[qi].requests.is_empty() && self.in_service != Some(qi) {
            self.deactivate(qi);
        }
        Some(rq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{Op, ReqId};

    fn rq(id: u32, task: u32, sectors: u32, prio_class: u8) -> SchedRequest {
        SchedRequest {
            id: ReqId(id),
            op: Op::Read,
            sector: id as u64 * 1024,
            sectors,
            flow: task,
            task,
            prio_class,
            critical: false,
            sync: true,
            inserted_at: 0,
        }
    }

    /// Keeps tasks backlogged: every dispatched request is completed and replaced by one of the same task.
    struct Load {
        next_id: u32,
        sectors: FxHashMap<u32, u32>,
        served: FxHashMap<u32, u64>,
        dispatched: FxHashMap<u32, u64>,
    }

    impl Load {
        fn new() -> Self {
            Load {
                next_id: 0,
                sectors: FxHashMap::default(),
                served: FxHashMap::default(),
                dispatched: FxHashMap::default(),
            }
        }
        fn add(&mut self, b: &mut Bfq, task: u32, sectors: u32, class: u8, n: u32, now: Time) {
            self.sectors.insert(task, sectors);
            for _ in 0..n {
                self.next_id += 1;
                b.insert(0, rq(self.next_id, task, sectors, class), now);
            }
        }
        /// Dispatch `n` requests, refilling each task's queue unless it is in `stopping`.
        fn run(&mut self, b: &mut Bfq, n: usize, now: Time, stopping: &[u32]) {
            for _ in 0..n {
                let Some(r) = b.dispatch(0, now) else { return };
                *self.served.entry(r.task).or_default() += r.sectors as u64;
                *self.dispatched.entry(r.task).or_default() += 1;
                b.completed(&r, 1_000, now);
                if !stopping.contains(&r.task) {
                    self.next_id += 1;
                    b.insert(0, rq(self.next_id, r.task, r.sectors, r.prio_class), now);
                }
            }
        }
        fn served(&self, task: u32) -> u64 {
            self.served.get(&task).copied().unwrap_or(0)
        }
    }

    #[test]
    fn equal_weights_get_equal_service_in_sectors() {
        let mut b = Bfq::new(1);
        let mut load = Load::new();
        // Different request sizes: fairness is in sectors, not in requests.
        load.add(&mut b, 1, 128, 1, 32, 0);
        load.add(&mut b, 2, 256, 1, 32, 0);
        load.run(&mut b, 10_000, 0, &[]);
        let (s1, s2) = (load.served(1), load.served(2));
        let diff = s1.abs_diff(s2) as f64 / s1.max(s2) as f64;
        assert!(diff < 0.05, "service {s1} vs {s2}");
        let (d1, d2) = (load.dispatched[&1], load.dispatched[&2]);
        assert!(d1 > d2 * 19 / 10, "requests {d1} vs {d2}");
    }

    #[test]
    fn in_service_queue_keeps_the_device_for_one_budget() {
        let mut b = Bfq::new(1);
        let mut load = Load::new();
        load.add(&mut b, 1, 8, 1, 8, 0);
        load.add(&mut b, 2, 8, 1, 8, 0);
        let mut turns: Vec<(u32, u64)> = Vec::new();
        for i in 0..10_000u32 {
            let r = b.dispatch(0, 0).unwrap();
            match turns.last_mut() {
                Some((task, n)) if *task == r.task => *n += 1,
                _ => turns.push((r.task, 1)),
            }
            b.insert(0, rq(100 + i, r.task, 8, 1), 0);
        }
        // 16384 sectors of 8-sector requests per turn, alternating.
        let full = MAX_BUDGET_SECTORS / 8;
        assert_eq!(turns[..4], [(1, full), (2, full), (1, full), (2, full)]);
    }

    #[test]
    fn virtual_time_advances_by_service_over_weight_sum() {
        let mut b = Bfq::new(1);
        let mut load = Load::new();
        load.add(&mut b, 1, 128, 1, 16, 0);
        load.run(&mut b, 10, 0, &[]);
        let alone = 10 * vt_delta(128, DEFAULT_WEIGHT);
        assert_eq!(b.trees[1].vtime, alone);
        // A queue that becomes busy starts at the current V, and V then slows down with the larger weight sum.
        load.add(&mut b, 2, 128, 1, 16, 1);
        assert_eq!(b.queues[1].start, alone);
        load.run(&mut b, 10, 1, &[]);
        assert_eq!(b.trees[1].vtime, alone + 10 * vt_delta(128, 2 * DEFAULT_WEIGHT));
    }

    #[test]
    fn rt_queue_goes_first_and_preempts_be() {
        let mut b = Bfq::new(1);
        let mut load = Load::new();
        load.add(&mut b, 1, 8, 1, 64, 0);
        load.run(&mut b, 5, 0, &[]);
        assert_eq!(b.in_service.map(|q| b.queues[q].class), Some(1));
        // An RT request preempts the BE queue in the middle of its budget.
        load.add(&mut b, 2, 8, 0, 3, 1);
        for _ in 0..3 {
            assert_eq!(b.dispatch(0, 2).unwrap().task, 2);
        }
        // Once the RT queue is empty, BE goes on.
        assert_eq!(b.dispatch(0, 3).unwrap().task, 1);
        // A backlogged RT queue gets everything.
        load.add(&mut b, 2, 8, 0, 4, 4);
        load.run(&mut b, 1_000, 5, &[]);
        assert_eq!(load.served(1), 5 * 8);
    }

    #[test]
    fn idle_process_gets_no_credit_for_idle_time() {
        let mut b = Bfq::new(1);
        let mut load = Load::new();
        // Task 2 does one request and goes idle; task 1 runs alone for a long time, moving V far ahead.
        load.add(&mut b, 1, 128, 1, 16, 0);
        load.add(&mut b, 2, 128, 1, 1, 0);
        load.run(&mut b, 5_000, 0, &[2]);
        assert_eq!(load.served(2), 128);
        let v = b.trees[1].vtime;
        let idle_finish = b.queues[1].finish;
        assert!(vt_after(v, idle_finish));
        // Task 2 comes back: it starts at V, not at its old finish, so it does not monopolize the device.
        let before = (load.served(1), load.served(2));
        load.add(&mut b, 2, 128, 1, 16, 1);
        assert_eq!(b.queues[1].start, v);
        load.run(&mut b, 2_000, 1, &[]);
        let (s1, s2) = (load.served(1) - before.0, load.served(2) - before.1);
        let diff = s1.abs_diff(s2) as f64 / s1.max(s2) as f64;
        assert!(diff < 0.1, "service after wake-up {s1} vs {s2}");
    }

    #[test]
    fn queue_that_empties_early_keeps_its_finish() {
        let mut b = Bfq::new(1);
        let mut load = Load::new();
        // Task 2 is served first, runs dry after 4 requests and expires with its finish ahead of V.
        load.add(&mut b, 2, 128, 1, 4, 0);
        load.add(&mut b, 1, 128, 1, 16, 0);
        load.run(&mut b, 6, 0, &[2]);
        assert_eq!(load.served(2), 4 * 128);
        let q2 = &b.queues[0];
        assert_eq!(q2.state, QueueState::Idle);
        assert!(vt_after(q2.finish, b.trees[1].vtime));
        // Coming back at once, it starts at its old finish, not at the (earlier) V: going idle gains nothing.
        let finish = q2.finish;
        load.add(&mut b, 2, 128, 1, 1, 1);
        assert_eq!(b.queues[0].start, finish);
    }

    #[test]
    fn idle_class_served_only_when_owed_a_turn() {
        let mut b = Bfq::new(1);
        let mut load = Load::new();
        load.add(&mut b, 1, 128, 1, 16, 0);
        load.add(&mut b, 3, 8, 2, 16, 0);
        let mut idle_served_at = Vec::new();
        for i in 0..40_000u64 {
            let now = 1 + i * 10_000;
            let r = b.dispatch(0, now).unwrap();
            if r.task == 3 {
                idle_served_at.push(now);
                b.insert(0, rq(1_000_000 + i as u32, 3, 8, 2), now);
            } else {
                b.insert(0, rq(2_000_000 + i as u32, 1, 128, 1), now);
            }
        }
        // 400 ms of BE backlog: the IDLE queue gets single requests, at most one per 200 ms.
        assert!(!idle_served_at.is_empty() && idle_served_at.len() <= 2, "{idle_served_at:?}");
        assert!(idle_served_at[0] >= IDLE_CLASS_TIMEOUT_NS);
        // With BE gone idle, the IDLE queue is served.
        let mut b = Bfq::new(1);
        load.add(&mut b, 3, 8, 2, 2, 0);
        assert_eq!(b.dispatch(0, 1).unwrap().task, 3);
    }

    #[test]
    fn dispatch_is_queue_wide_and_queued_counts_per_hwq() {
        let mut b = Bfq::new(2);
        b.insert(1, rq(0, 5, 8, 1), 0);
        assert_eq!((b.queued(0), b.queued(1)), (0, 1));
        assert_eq!(b.dispatch(0, 1).unwrap().id, ReqId(0));
        assert_eq!((b.queued(0), b.queued(1)), (0, 0));
    }

    #[test]
    fn empty_dispatch_and_unknown_completion_are_harmless() {
        let mut b = Bfq::new(0);
        assert_eq!(b.dispatch(3, 0), None);
        b.completed(&rq(7, 1, 8, 1), 0, 0);
        // A request larger than the maximum budget still goes (its budget grows to fit).
        b.insert(5, rq(1, 1, u32::MAX, 9), 0);
        assert_eq!(b.dispatch(0, 1).unwrap().id, ReqId(1));
        assert_eq!(b.dispatch(0, 2), None);
        assert_eq!(b.queued(5), 0);
        assert_eq!(b.in_service, None);
    }

    #[test]
    fn random_sequences_keep_accounting_and_never_panic() {
        super::super::check_random_sequences(|h| Box::new(Bfq::new(h)));
    }
}
