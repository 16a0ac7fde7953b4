//! Unit tests of the bfq model, one or more per mechanism.

use super::*;

/// The B-WF2Q+ core alone: no idling, no weight raising.
const CORE: BfqParams = BfqParams {
    slice_idle_ns: 0,
    low_latency: false,
    back_seek_max_kib: 16 * 1024,
    back_seek_penalty: 2,
    tree_node_ns: 10,
};

/// Queues created this far apart are neither stably merged nor in a burst.
const APART: Time = 200 * MS;

fn rq(id: u32, task: u32, sector: u64, sectors: u32, op: Op) -> SchedRequest {
    SchedRequest { id: ReqId(id), op, sector, sectors, flow: task, task, ..super::super::test_request() }
}

fn read(id: u32, task: u32, sector: u64) -> SchedRequest {
    rq(id, task, sector, 8, Op::Read)
}

/// The queue of `task` (its sync queue of the BE class).
fn queue_of(b: &Bfq, task: u32) -> usize {
    b.by_key[&(task, 1, 4)]
}

/// A scheduler whose only queue, task 1's, has one 4 KiB read waiting (inserted at 0).
fn one_reader(params: BfqParams) -> (Bfq, usize) {
    let mut b = Bfq::new(1, params);
    b.insert(0, read(1, 1, 0), 0);
    let qi = queue_of(&b, 1);
    (b, qi)
}

/// End a queue's weight raising, as its time running out would.
fn unraise(b: &mut Bfq, qi: usize) {
    b.end_wr(qi, 0);
    b.apply_weight(qi);
}

/// An unraised writer (task 1) in service with a backlog, then a new reader (task 2, raised) with one read at
/// `APART`: the scheduler and the writer's queue.
fn unraised_writer_then_new_reader() -> (Bfq, usize) {
    let mut b = Bfq::new(1, BfqParams::default());
    let mut load = Load::new();
    load.add(&mut b, 1, 8, 64, 0);
    let w = queue_of(&b, 1);
    unraise(&mut b, w);
    load.run(&mut b, 3, 0, &[]);
    assert_eq!(b.in_service, Some(w));
    b.insert(0, read(900_000, 2, 0), APART);
    (b, w)
}

/// Fire the idle timer if it is armed, as the block layer does when it is due; returns when.
fn fire_timer(b: &mut Bfq) -> Option<Time> {
    let due = b.timer_due()?;
    b.timer(due);
    Some(due)
}

/// Keeps tasks backlogged: every dispatched request completes at once and is replaced by one of the same
/// task and size. Each task reads sequentially (not seeky), in its own area.
struct Load {
    next_id: u32,
    next_sector: FxHashMap<u32, u64>,
    served: FxHashMap<u32, u64>,
    dispatched: FxHashMap<u32, u64>,
}

impl Load {
    fn new() -> Self {
        Load {
            next_id: 0,
            next_sector: FxHashMap::default(),
            served: FxHashMap::default(),
            dispatched: FxHashMap::default(),
        }
    }
    fn sector(&mut self, task: u32, sectors: u32) -> u64 {
        let next = self.next_sector.entry(task).or_insert(u64::from(task) << 32);
        let s = *next;
        *next += u64::from(sectors);
        s
    }
    fn add(&mut self, b: &mut Bfq, task: u32, sectors: u32, n: u32, now: Time) {
        for _ in 0..n {
            self.next_id += 1;
            let sector = self.sector(task, sectors);
            b.insert(0, rq(self.next_id, task, sector, sectors, Op::Read), now);
        }
    }
    /// Dispatch `n` requests at `now`, completing and replacing each (unless its task is in `stopping`).
    fn run(&mut self, b: &mut Bfq, n: usize, now: Time, stopping: &[u32]) {
        for _ in 0..n {
            let Some(r) = b.dispatch(0, now) else { return };
            *self.served.entry(r.task).or_default() += r.sectors as u64;
            *self.dispatched.entry(r.task).or_default() += 1;
            b.completed(&r, 1_000, now);
            if !stopping.contains(&r.task) {
                self.next_id += 1;
                let sector = self.sector(r.task, r.sectors);
                b.insert(0, SchedRequest { id: ReqId(self.next_id), sector, ..r }, now);
            }
        }
    }
    fn served(&self, task: u32) -> u64 {
        self.served.get(&task).copied().unwrap_or(0)
    }
}

#[test]
fn defaults_are_linux_and_keys_reach_the_scheduler() {
    let params = BfqParams::from_config(&BlockConfig::default());
    assert_eq!(params, BfqParams::default());
    assert_eq!(
        params,
        BfqParams {
            slice_idle_ns: 8 * MS,
            low_latency: true,
            back_seek_max_kib: 16384,
            back_seek_penalty: 2,
            tree_node_ns: 10
        }
    );
}

// ---- B-WF2Q+ ----

#[test]
fn equal_weights_get_equal_service_in_sectors() {
    let mut b = Bfq::new(1, CORE);
    let mut load = Load::new();
    load.add(&mut b, 1, 128, 32, 0);
    load.add(&mut b, 2, 256, 32, APART);
    load.run(&mut b, 20_000, APART, &[]);
    let (s1, s2) = (load.served(1), load.served(2));
    let diff = s1.abs_diff(s2) as f64 / s1.max(s2) as f64;
    assert!(diff < 0.05, "service {s1} vs {s2}");
    let (d1, d2) = (load.dispatched[&1], load.dispatched[&2]);
    assert!(d1 > d2 * 19 / 10, "requests {d1} vs {d2}");
}

#[test]
fn virtual_time_advances_by_service_over_weight_sum() {
    let mut b = Bfq::new(1, CORE);
    let mut load = Load::new();
    load.add(&mut b, 1, 128, 16, 0);
    load.run(&mut b, 10, 0, &[]);
    assert_eq!(b.trees[1].vtime, 10 * vt_delta(128, DEFAULT_WEIGHT));
    // A queue busy beside it doubles the weight sum: V advances half as fast.
    let mut b = Bfq::new(1, CORE);
    load.add(&mut b, 1, 128, 16, 0);
    load.add(&mut b, 2, 128, 16, APART);
    assert_eq!(b.queues[queue_of(&b, 2)].stamps.start, 0);
    load.run(&mut b, 10, APART, &[]);
    assert_eq!(b.trees[1].vtime, 10 * vt_delta(128, 2 * DEFAULT_WEIGHT));
}

#[test]
fn rt_queue_goes_first_and_preempts_be() {
    let mut b = Bfq::new(1, CORE);
    let mut load = Load::new();
    load.add(&mut b, 1, 8, 64, 0);
    load.run(&mut b, 5, 0, &[]);
    assert_eq!(b.in_service.map(|q| b.queues[q].class), Some(1));
    // An RT request preempts the BE queue in the middle of its budget.
    let mut rt = read(10_000, 2, 0);
    rt.prio_class = 0;
    for i in 0..3 {
        b.insert(0, SchedRequest { id: ReqId(10_000 + i), sector: i as u64 * 8, ..rt }, APART);
    }
    for _ in 0..3 {
        assert_eq!(b.dispatch(0, APART).unwrap().task, 2);
    }
    // Once the RT queue is empty, BE goes on.
    assert_eq!(b.dispatch(0, APART + 1).unwrap().task, 1);
}

#[test]
fn idle_class_served_only_when_owed_a_turn() {
    let mut b = Bfq::new(1, CORE);
    let mut next = 0u32;
    let mut add = |b: &mut Bfq, task: u32, class: u8, now: Time| {
        next += 1;
        b.insert(0, SchedRequest { prio_class: class, ..read(next, task, next as u64 * 997 * 64) }, now);
    };
    for _ in 0..16 {
        add(&mut b, 1, 1, 0);
        add(&mut b, 3, 2, 0);
    }
    let mut idle_served_at = Vec::new();
    for i in 0..40_000u64 {
        let now = 1 + i * 10_000;
        let r = b.dispatch(0, now).unwrap();
        b.completed(&r, 1_000, now);
        if r.task == 3 {
            idle_served_at.push(now);
        }
        add(&mut b, r.task, r.prio_class, now);
    }
    // 400 ms of BE backlog: the IDLE queue gets single requests, at most one per 200 ms.
    assert!(!idle_served_at.is_empty() && idle_served_at.len() <= 2, "{idle_served_at:?}");
    assert!(idle_served_at[0] >= IDLE_CLASS_TIMEOUT_NS);
}

#[test]
fn idle_queue_keeps_its_weight_until_v_passes_its_finish_and_is_forgotten_one_at_a_time() {
    let mut b = Bfq::new(1, CORE);
    let mut load = Load::new();
    load.add(&mut b, 2, 128, 1, 0);
    load.add(&mut b, 3, 128, 1, APART);
    load.add(&mut b, 1, 128, 16, 2 * APART);
    let (q2, q3) = (queue_of(&b, 2), queue_of(&b, 3));
    // Tasks 2 and 3 do one request each, served first, and go idle with their finish ahead of V: their
    // weight stays in the sum until task 1's service moves V past it.
    let mut sums = vec![b.trees[1].wsum];
    let mut both_idle = false;
    for _ in 0..5_000 {
        load.run(&mut b, 1, 2 * APART, &[2, 3]);
        if !both_idle && b.queues[q2].dispatched + b.queues[q3].dispatched == 0 && !b.queues[q3].busy {
            both_idle = true;
            assert_eq!((b.queues[q2].tree, b.queues[q3].tree), (TreeState::Idle, TreeState::Idle));
        }
        if both_idle && *sums.last().unwrap() != b.trees[1].wsum {
            sums.push(b.trees[1].wsum);
        }
    }
    assert_eq!((b.queues[q2].tree, b.queues[q3].tree), (TreeState::Off, TreeState::Off));
    assert_eq!(sums, [3, 2, 1].map(|n| n * DEFAULT_WEIGHT), "forgotten one at a time");
}

// ---- budgets and expiration ----

#[test]
fn a_queue_that_empties_keeps_its_budget_when_its_next_request_comes_in_time() {
    let mut b = Bfq::new(1, CORE);
    let mut load = Load::new();
    load.add(&mut b, 1, 8, 64, 0);
    load.add(&mut b, 2, 8, 1, APART);
    // Task 2's one request is served; its queue expires for lack of requests, waiting (non-blocking).
    let mut now = APART;
    let r2 = loop {
        let r = b.dispatch(0, now).unwrap();
        if r.task == 2 {
            break r;
        }
        b.completed(&r, 1_000, now);
        b.insert(0, SchedRequest { id: ReqId(r.id.0 + 100_000), ..r }, now);
        now += 1_000;
    };
    let q2 = queue_of(&b, 2);
    b.completed(&r2, 1_000, now);
    assert!(b.queues[q2].non_blocking_wait_rq);
    let left = b.queues[q2].budget_left();
    assert!(left > 0);
    // A request within 3 x slice_idle: the budget left is kept and it may preempt.
    b.insert(0, read(900_000, 2, 4_096), now + 1_000);
    assert_eq!(b.queues[q2].budget, (left as u64).min(b.queues[q2].max_budget));
}

#[test]
fn budget_feedback_follows_the_expiration_reason() {
    let mut b = Bfq::new(1, CORE);
    b.insert(0, read(1, 1, 0), 0);
    let qi = queue_of(&b, 1);
    b.in_service = None;
    for (reason, expected) in [
        (Expiration::BudgetExhausted, (2 * MAX_BUDGET / 3 * 4).min(MAX_BUDGET)),
        (Expiration::BudgetTimeout, MAX_BUDGET),
        (Expiration::NoMoreRequests, MIN_BUDGET),
    ] {
        b.queues[qi].max_budget = 2 * MAX_BUDGET / 3;
        b.queues[qi].service = 0;
        b.recalc_budget(qi, reason);
        assert_eq!(b.queues[qi].max_budget, expected, "{reason:?}");
    }
    // Weight-raised queues get twice the minimum budget.
    b.queues[qi].wr_coeff = WR_COEFF;
    b.recalc_budget(qi, Expiration::BudgetExhausted);
    assert_eq!(b.queues[qi].max_budget, 2 * MIN_BUDGET);
}

#[test]
fn slow_seeky_queues_are_charged_their_time() {
    let mut b = Bfq::new(1, CORE);
    let mut load = Load::new();
    load.add(&mut b, 1, 8, 1, 0);
    let qi = queue_of(&b, 1);
    b.queues[qi].seek_history = u32::MAX;
    let r = b.dispatch(0, 0).unwrap();
    // 10 ms in service for 8 sectors: charged 16384 x 10 / 125 sectors, V advancing accordingly.
    let v = b.trees[1].vtime;
    b.completed(&r, 10 * MS, 10 * MS);
    assert_eq!(b.in_service, None);
    let charged = MAX_BUDGET * 10 / 125;
    assert_eq!(b.trees[1].vtime, v + vt_delta(charged - 8, DEFAULT_WEIGHT));
}

#[test]
fn async_requests_are_charged_three_times_and_share_one_queue_per_class() {
    let mut b = Bfq::new(1, CORE);
    let wb = |id, task| SchedRequest { sync: false, ..rq(id, task, id as u64 * 64, 8, Op::Write) };
    b.insert(0, wb(1, 1), 0);
    b.insert(0, wb(2, 2), APART);
    assert_eq!(b.queues.len(), 1, "one async queue for both tasks");
    let v = b.trees[1].vtime;
    b.dispatch(0, APART).unwrap();
    assert_eq!(b.trees[1].vtime, v + vt_delta(3 * 8, DEFAULT_WEIGHT));
}

// ---- next request of a queue ----

/// Requests of one queue in service at once from a fixed last position.
fn order_of(params: BfqParams, last: u64, sectors: &[u64]) -> Vec<u64> {
    let mut b = Bfq::new(1, params);
    b.last_position = last;
    for (i, &s) in sectors.iter().enumerate() {
        b.insert(0, read(i as u32, 1, s), 0);
    }
    std::iter::from_fn(|| b.dispatch(0, 1)).map(|r| r.sector).collect()
}

/// `bfq_choose_req`: ascending from the last position, a short back seek at twice its distance beats a
/// longer forward one, and one past `back_seek_max` goes last.
#[test]
fn next_request_by_seek_distance_with_back_seek_max_and_penalty() {
    // From 10000: 9900 is 100 back (cost 200), 10300 is 300 ahead: the back seek first.
    assert_eq!(order_of(CORE, 10_000, &[10_300, 9_900]), [9_900, 10_300]);
    // With a penalty of 4 the back seek costs 400: forward first.
    let p4 = BfqParams { back_seek_penalty: 4, ..CORE };
    assert_eq!(order_of(p4, 10_000, &[10_300, 9_900]), [10_300, 9_900]);
    // back_seek_max = 0: any request behind wraps and goes after the ones ahead.
    let no_back = BfqParams { back_seek_max_kib: 0, ..CORE };
    assert_eq!(order_of(no_back, 10_000, &[9_990, 20_000, 30_000]), [20_000, 30_000, 9_990]);
    // 16384 KiB is 32768 sectors: a request 40000 sectors back wraps by default too.
    assert_eq!(order_of(CORE, 50_000, &[10_000, 90_000]), [90_000, 10_000]);
}

#[test]
fn an_expired_fifo_head_goes_first_once_per_service_slot() {
    let mut b = Bfq::new(1, CORE);
    b.insert(0, read(0, 1, 1_000_000), 0);
    for i in 1..6 {
        b.insert(0, read(i, 1, i as u64 * 8), 100 * MS);
    }
    // The first dispatch goes by sector; at 130 ms the request inserted at 0 has expired (125 ms).
    let first = b.dispatch(0, 130 * MS).unwrap();
    assert_eq!(first.sector, 8);
    assert_eq!(b.dispatch(0, 130 * MS).unwrap().sector, 1_000_000);
}

// ---- stable merging and bursts ----

#[test]
fn queues_created_within_180ms_are_merged_for_good() {
    let mut b = Bfq::new(1, BfqParams::default());
    b.insert(0, read(1, 1, 0), 0);
    b.insert(0, read(2, 2, 64), 100 * MS);
    b.insert(0, read(3, 3, 128), 180 * MS);
    assert_eq!(queue_of(&b, 2), queue_of(&b, 1));
    assert_eq!(queue_of(&b, 3), queue_of(&b, 1));
    // 181 ms after the reference: a queue of its own, and the reference stays.
    b.insert(0, read(4, 4, 192), 181 * MS);
    assert_ne!(queue_of(&b, 4), queue_of(&b, 1));
    b.insert(0, read(5, 5, 256), 600 * MS);
    assert_ne!(queue_of(&b, 5), queue_of(&b, 1));
    // More than 600 ms after it, a new queue becomes the reference; the next one merges into that.
    b.insert(0, read(6, 6, 320), 601 * MS);
    b.insert(0, read(7, 7, 384), 700 * MS);
    assert_eq!(queue_of(&b, 7), queue_of(&b, 6));
    // Another class is never merged.
    b.insert(0, SchedRequest { prio_class: 0, ..read(8, 8, 448) }, 701 * MS);
    assert_ne!(b.by_key[&(8, 0, 4)], queue_of(&b, 6));
}

#[test]
fn eight_queues_created_close_together_are_a_large_burst_and_not_raised() {
    let mut b = Bfq::new(1, BfqParams::default());
    // Alternate classes so that no stable merge happens; burst detection is at queue creation.
    for i in 0..9u32 {
        let r = SchedRequest { prio_class: (i % 2) as u8, ..read(i, i, i as u64 * 64) };
        b.insert(0, r, i as Time * 20 * MS);
    }
    let queue = |i: u32| &b.queues[b.by_key[&(i, (i % 2) as u8, 4)]];
    assert!((0..8).all(|i| queue(i).in_large_burst));
    assert!(b.large_burst);
    // The ninth, created within the burst, is in it from the start: not raised.
    assert!(queue(8).in_large_burst);
    assert_eq!(queue(8).wr_coeff, 1);
    assert_eq!(queue(0).wr_coeff, WR_COEFF, "raised before the burst was known");
    // Its raising ends at its next dispatch.
    let q0 = b.by_key[&(0, 0, 4)];
    while b.queues[q0].dispatched == 0 {
        b.dispatch(0, 200 * MS).unwrap();
    }
    assert_eq!(b.queues[q0].wr_coeff, 1);
}

/// `bfq_set_next_ioprio_data` and `bfq_do_or_sched_stable_merge`: a queue weighs (8 - level) x 10; a queue
/// of another ioprio level is not merged into the reference but becomes the reference; levels past 7 count
/// as 7. ext4's journal thread (best-effort level 3) thus gets a queue of weight 50 of its own beside an
/// application that started with it.
#[test]
fn the_ioprio_level_sets_the_weight_and_keeps_queues_apart() {
    let mut b = Bfq::new(1, BfqParams::default());
    b.insert(0, read(1, 1, 0), 0);
    b.insert(0, SchedRequest { prio_level: 3, ..read(2, 2, 64) }, 10 * MS);
    let journal = b.by_key[&(2, 1, 3)];
    assert_ne!(journal, queue_of(&b, 1), "another ioprio is never stably merged");
    assert_eq!(b.queues[journal].orig_weight, 50);
    // The level-3 queue is now the reference: a level-4 queue created next is not merged into either.
    b.insert(0, read(3, 3, 128), 20 * MS);
    assert!(queue_of(&b, 3) != queue_of(&b, 1) && queue_of(&b, 3) != journal);
    // ...and the one after it, of its level and within 180 ms of it, is merged into it.
    b.insert(0, read(4, 4, 192), 30 * MS);
    assert_eq!(queue_of(&b, 4), queue_of(&b, 3));
    // Out-of-range levels are clamped to the lowest priority, weight 10.
    b.insert(0, SchedRequest { prio_level: 200, ..read(5, 5, 256) }, 40 * MS);
    assert_eq!(b.queues[b.by_key[&(5, 1, 7)]].orig_weight, 10);
    // Async queues are one per class and level (`async_bfqq[class][level]`).
    let wb =
        |id, task, level| SchedRequest { sync: false, prio_level: level, ..rq(id, task, id as u64 * 64, 8, Op::Write) };
    b.insert(0, wb(6, 1, 4), 50 * MS);
    b.insert(0, wb(7, 2, 4), 50 * MS);
    b.insert(0, wb(8, 2, 3), 50 * MS);
    assert_eq!(b.by_key[&(ASYNC_TASK, 1, 4)], b.queues.len() - 2);
    assert_eq!(b.by_key[&(ASYNC_TASK, 1, 3)], b.queues.len() - 1);
}

// ---- weight raising ----

/// Only a queue of the default weight is deemed interactive (`*interactive = ... new_weight == 40`): ext4's
/// journal thread, at best-effort level 3 (weight 50), is never weight-raised, however long it was idle.
#[test]
fn a_queue_of_another_ioprio_is_never_raised() {
    let mut b = Bfq::new(1, BfqParams::default());
    b.insert(0, SchedRequest { prio_level: 3, ..read(1, 1, 0) }, 0);
    let qi = b.by_key[&(1, 1, 3)];
    assert_eq!((b.queues[qi].wr_coeff, b.queues[qi].weight), (1, 50));
    let r = b.dispatch(0, 0).unwrap();
    b.completed(&r, 1_000, 1_000);
    // Idle for 3 s (more than `bfq_wr_min_idle_time`), then busy again: still not raised.
    b.insert(0, SchedRequest { prio_level: 3, ..read(2, 1, 64) }, 3_000 * MS);
    assert_eq!((b.queues[qi].wr_coeff, b.queues[qi].weight), (1, 50));
}

#[test]
fn a_new_queue_is_raised_thirty_times_until_its_time_or_service_is_up() {
    let (mut b, qi) = one_reader(BfqParams::default());
    assert_eq!((b.queues[qi].wr_coeff, b.queues[qi].weight), (WR_COEFF, WR_COEFF * DEFAULT_WEIGHT));
    assert_eq!(b.queues[qi].budget, 2 * MIN_BUDGET);
    let mut id = 1;
    let mut now = 0;
    // Serve 4 KiB reads one at a time: raising ends once 120000 sectors were served (15000 reads).
    let mut served = 0;
    while b.queues[qi].wr_coeff > 1 {
        let r = b.dispatch(0, now).unwrap();
        served += 8;
        now += 1_000;
        b.completed(&r, 1_000, now);
        id += 1;
        b.insert(0, read(id, 1, (id as u64 * 7_919 % 100_003) * 64), now);
        assert!(now < WR_DURATION_NS);
    }
    assert_eq!(served, MAX_SERVICE_FROM_WR + 8);
    assert_eq!(b.queues[qi].weight, DEFAULT_WEIGHT);
    // Without low_latency nothing is raised.
    let mut b = Bfq::new(1, BfqParams { low_latency: false, ..BfqParams::default() });
    b.insert(0, read(1, 1, 0), 0);
    assert_eq!(b.queues[queue_of(&b, 1)].wr_coeff, 1);
}

#[test]
fn raising_ends_after_its_duration() {
    let (mut b, qi) = one_reader(BfqParams::default());
    let r = b.dispatch(0, 0).unwrap();
    b.completed(&r, 1_000, WR_DURATION_NS);
    b.insert(0, read(2, 1, 64), WR_DURATION_NS + 1);
    b.dispatch(0, WR_DURATION_NS + 1).unwrap();
    assert_eq!(b.queues[qi].wr_coeff, 1);
}

#[test]
fn a_queue_idle_for_two_seconds_is_interactive_again() {
    let (mut b, qi) = one_reader(BfqParams::default());
    unraise(&mut b, qi);
    let r = b.dispatch(0, 0).unwrap();
    b.completed(&r, 1_000, 1_000);
    // The only busy queue idles; the timer expires it, idle from then.
    let idle_from = fire_timer(&mut b).unwrap();
    assert_eq!(b.queues[qi].budget_timeout, Some(idle_from));
    // Back after 1 s: not interactive.
    b.insert(0, read(2, 1, 64), 1_000 * MS);
    assert_eq!(b.queues[qi].wr_coeff, 1);
    let r = b.dispatch(0, 1_000 * MS).unwrap();
    b.completed(&r, 1_000, 1_000 * MS);
    let idle_from = fire_timer(&mut b).unwrap();
    // Back more than 2 s later: raised again.
    b.insert(0, read(3, 1, 128), idle_from + WR_MIN_IDLE_NS + 1);
    assert_eq!(b.queues[qi].wr_coeff, WR_COEFF);
}

#[test]
fn a_raised_queue_that_becomes_busy_preempts_a_lighter_one() {
    let (mut b, w) = unraised_writer_then_new_reader();
    let r = queue_of(&b, 2);
    assert_eq!(b.queues[r].wr_coeff, WR_COEFF);
    assert_ne!(b.in_service, Some(w), "preempted");
    assert_eq!(b.dispatch(0, APART).unwrap().task, 2);
}

// ---- idling and injection ----

/// A weight-raised reader in service beside a busy writer: while its request is in flight and after it
/// completed, writes do not go (its inject limit starts at 0: short think time); the idle timer, at least
/// 20 ms for a raised queue, ends the wait; a new read ends it at once.
#[test]
fn bfq_plugs_for_a_raised_reader_and_the_idle_timer_ends_the_wait() {
    let (mut b, _) = unraised_writer_then_new_reader();
    let reader = b.dispatch(0, APART).unwrap();
    assert_eq!(reader.task, 2);
    // The reader's queue is empty, its request in flight: plugged, no write goes.
    assert_eq!(b.dispatch(0, APART + 1), None);
    b.completed(&reader, 10_000, APART + 10_000);
    assert_eq!(b.timer_due(), Some(APART + 10_000 + WR_MIN_IDLE_SLICE_NS));
    assert_eq!(b.dispatch(0, APART + 20_000), None);
    // A new read ends the wait and goes at once.
    b.insert(0, read(900_001, 2, 4_096), APART + 30_000);
    assert_eq!(b.timer_due(), None);
    let reader = b.dispatch(0, APART + 30_000).unwrap();
    assert_eq!(reader.task, 2);
    b.completed(&reader, 10_000, APART + 40_000);
    // The timer fires: the reader expires (too idle) and the writer goes on.
    let due = b.timer_due().unwrap();
    b.timer(due);
    assert_ne!(b.in_service, queue_of(&b, 2).into());
    assert_eq!(b.dispatch(0, due).unwrap().task, 1);
}

/// Without weight raising, equal weights and one class, bfq does not idle on a drive with command queueing:
/// an emptied queue expires and the other goes on at once.
#[test]
fn no_idling_in_a_symmetric_scenario() {
    let mut b = Bfq::new(1, BfqParams { low_latency: false, ..BfqParams::default() });
    let mut load = Load::new();
    load.add(&mut b, 1, 8, 64, 0);
    b.insert(0, read(900_000, 2, 0), APART);
    let mut saw_reader = false;
    for _ in 0..2_000 {
        let r = b.dispatch(0, APART).expect("never plugged");
        if r.task == 2 {
            saw_reader = true;
        } else {
            b.insert(0, SchedRequest { id: ReqId(r.id.0 + 500_000), ..r }, APART);
        }
    }
    assert!(saw_reader);
    assert_eq!(b.timer_due(), None);
}

/// The only busy queue idles (`tot_busy_queues == 1`); seeky and unraised, for at most 2 ms.
#[test]
fn the_only_busy_queue_idles_2ms_when_seeky() {
    let mut b = Bfq::new(1, BfqParams { low_latency: false, ..BfqParams::default() });
    let qi = {
        b.insert(0, read(1, 1, 0), 0);
        queue_of(&b, 1)
    };
    b.queues[qi].seek_history = u32::MAX;
    let r = b.dispatch(0, 0).unwrap();
    b.completed(&r, 1_000, 1_000);
    assert_eq!(b.timer_due(), Some(1_000 + MIN_TT_NS));
    // slice_idle = 0: never.
    let mut b = Bfq::new(1, BfqParams { low_latency: false, slice_idle_ns: 0, ..BfqParams::default() });
    b.insert(0, read(1, 1, 0), 0);
    let r = b.dispatch(0, 0).unwrap();
    b.completed(&r, 1_000, 1_000);
    assert_eq!(b.timer_due(), None);
    assert_eq!(b.in_service, None);
}

/// Injection while plugging for an unraised queue: other queues' requests go while fewer than the inject
/// limit are in the drive.
#[test]
fn injection_is_bounded_by_the_inject_limit() {
    // Two classes busy: asymmetric, so the BE reader idles; it is not raised, so injection is allowed.
    let mut b = Bfq::new(1, BfqParams { low_latency: false, ..BfqParams::default() });
    for i in 0..64 {
        b.insert(0, SchedRequest { prio_class: 2, ..read(10_000 + i, 1, i as u64 * 997 * 64) }, 0);
    }
    b.insert(0, read(1, 2, 0), APART);
    let reader = b.dispatch(0, APART).unwrap();
    assert_eq!(reader.task, 2);
    let s = queue_of(&b, 2);
    b.queues[s].inject_limit = 3;
    let injected: Vec<SchedRequest> = std::iter::from_fn(|| b.dispatch(0, APART + 1)).collect();
    assert_eq!(injected.len(), 2, "3 in the drive with the reader's");
    assert!(injected.iter().all(|r| r.task == 1));
    assert!(b.rqs_injected);
}

/// `bfq_update_inject_limit`: a first request served within 1.5x its time without injection raises the limit,
/// a slower one lowers it.
#[test]
fn the_inject_limit_follows_the_first_requests_service_time() {
    let (mut b, qi) = one_reader(BfqParams::default());
    b.max_rq_in_driver = 8;
    b.queues[qi].last_serv_time_ns = 100_000;
    b.queues[qi].inject_limit = 2;
    b.rq_in_driver = 3;
    b.rqs_injected = true;
    b.last_empty_occupied = 0;
    b.update_inject_limit(qi, 140_000);
    assert_eq!(b.queues[qi].inject_limit, 3);
    b.rqs_injected = true;
    b.update_inject_limit(qi, 160_000);
    assert_eq!(b.queues[qi].inject_limit, 2);
    // With nothing else in the drive, the baseline is (re)measured.
    b.rq_in_driver = 1;
    b.rqs_injected = false;
    b.update_inject_limit(qi, 90_000);
    assert_eq!(b.queues[qi].last_serv_time_ns, 90_000);
}

/// `bfq_check_waker`: a queue with a long think time whose requests keep arriving within 4 ms of another
/// queue's completions gets that queue as its waker on the third time, and while it is plugged the waker's
/// requests go without any inject limit.
#[test]
fn a_waker_is_detected_and_injected_without_limit() {
    let mut b = Bfq::new(1, BfqParams::default());
    // The waker: a writer (task 1) with requests in flight.
    let mut load = Load::new();
    load.add(&mut b, 1, 8, 8, 0);
    let w = queue_of(&b, 1);
    let mut writes: Vec<SchedRequest> = std::iter::from_fn(|| b.dispatch(0, 0)).collect();
    // The woken: a reader (task 2) with a long think time (16 ms on average).
    b.insert(0, read(900_000, 2, 0), APART);
    let r = queue_of(&b, 2);
    let q = &mut b.queues[r];
    (q.ttime_samples, q.ttime_total, q.ttime_mean) = (256, 256 * 16 * MS, 16 * MS);
    let mut now = APART;
    for round in 1..=3 {
        let d = b.dispatch(0, now).unwrap();
        assert_eq!(d.task, 2);
        b.completed(&d, 1_000, now + 10);
        // A write completes, and the reader's next request comes 1 ms later.
        now += 5 * MS;
        b.completed(&writes.pop().unwrap(), 1_000, now);
        now += MS;
        b.insert(0, read(900_000 + round, 2, round as u64 * 8), now);
        assert_eq!(b.queues[r].waker, (round == 3).then_some(w), "round {round}");
    }
    // The reader in service and plugged: the waker's new requests go however many are in the drive.
    let d = b.dispatch(0, now).unwrap();
    assert_eq!((d.task, b.in_service), (2, Some(r)));
    load.add(&mut b, 1, 8, 6, now);
    let injected = std::iter::from_fn(|| b.dispatch(0, now)).count();
    assert_eq!(injected, 6);
    assert_eq!(b.in_service, Some(r));
}

// ---- tags ----

#[test]
fn scheduler_tags_for_async_and_sync_writes_shrink_while_a_queue_is_raised() {
    let mut b = Bfq::new(1, BfqParams::default());
    let sync_read = read(1, 1, 0);
    let sync_write = rq(2, 1, 0, 8, Op::Write);
    let writeback = SchedRequest { sync: false, ..sync_write };
    assert_eq!(
        [&sync_read, &sync_write, &writeback].map(|r| b.alloc_limit(r, 256)),
        [256, 192, 128],
        "no raised queue: 75% for sync writes, 50% for async"
    );
    b.insert(0, read(3, 1, 0), 0);
    assert_eq!(b.wr_busy, 1);
    assert_eq!([&sync_read, &sync_write, &writeback].map(|r| b.alloc_limit(r, 256)), [256, 96, 48]);
}

// ---- queueing detection ----

#[test]
fn queueing_is_detected_from_requests_in_the_drive() {
    let mut b = Bfq::new(1, BfqParams { low_latency: false, ..BfqParams::default() });
    let mut id = 0;
    for round in 0..40u64 {
        let now = round * MS;
        for _ in 0..6 {
            id += 1;
            b.insert(0, read(id, 1, id as u64 * 997 * 64), now);
        }
        let out: Vec<SchedRequest> = std::iter::from_fn(|| b.dispatch(0, now)).collect();
        for r in &out {
            b.completed(r, 1_000, now + 500);
        }
    }
    assert_eq!(b.hw_tag, 1);
}

#[test]
fn empty_dispatch_and_unknown_completion_are_harmless() {
    let mut b = Bfq::new(0, BfqParams::default());
    assert_eq!(b.dispatch(3, 0), None);
    b.completed(&read(7, 1, 0), 0, 0);
    // A request larger than the maximum budget still goes (its budget grows to fit).
    b.insert(5, SchedRequest { sectors: u32::MAX, prio_class: 9, ..read(1, 1, 0) }, 0);
    assert_eq!(b.dispatch(0, 1).unwrap().id, ReqId(1));
    assert_eq!(b.queued(5), 0);
}

#[test]
fn dispatch_is_queue_wide_and_queued_counts_per_hwq() {
    let mut b = Bfq::new(2, BfqParams::default());
    b.insert(1, read(0, 5, 8), 0);
    assert_eq!((b.queued(0), b.queued(1)), (0, 1));
    assert_eq!(b.dispatch(0, 1).unwrap().id, ReqId(0));
    assert_eq!((b.queued(0), b.queued(1)), (0, 0));
}

#[test]
fn random_sequences_keep_accounting_and_never_panic() {
    super::super::check_random_sequences(|h| Box::new(Bfq::new(h, BfqParams::default())));
    super::super::check_random_sequences(|h| Box::new(Bfq::new(h, CORE)));
}

// ---- CPU time that grows with the trees ----

/// `n` random readers (no idling; created `APART`, so their queues are not merged), each with one read
/// waiting or in flight: `n` times a dispatch, its completion and the reader's next read. Returns the tree
/// work of the last of `rounds` such rounds, ns.
fn round_robin_tree_work(n: u32, rounds: u32) -> Time {
    let mut b = Bfq::new(1, CORE);
    let mut id = 0;
    // Far apart within and between tasks: random reads.
    let sector = |task: u32, id: u32| u64::from(task) * 1_000_000_000 + u64::from(id) * 40_960;
    for task in 0..n {
        id += 1;
        b.insert(0, read(id, task, sector(task, id)), Time::from(task) * APART);
    }
    let mut work = 0;
    for round in 0..rounds {
        b.take_work_ns();
        let t = Time::from(n + round) * APART;
        for _ in 0..n {
            let r = b.dispatch(0, t).expect("a reader waits");
            b.completed(&r, 10_000, t);
            id += 1;
            b.insert(0, read(id, r.task, sector(r.task, id)), t);
        }
        work = b.take_work_ns();
    }
    work
}

#[test]
fn tree_levels_are_ceil_log2() {
    use super::wf2q::levels;
    let got: Vec<u64> = [0, 1, 2, 3, 4, 5, 8, 9, 32, 33, 256].iter().map(|&n| levels(n)).collect();
    assert_eq!(got, [0, 0, 1, 2, 2, 3, 3, 4, 5, 6, 8]);
}

/// One reader: its queue is alone on the trees and costs nothing beyond the measured 1.9 us. n readers in
/// turn: each request's dispatch picks its queue (`bfq_first_active_entity`: L levels of the n-queue active
/// tree) and extracts it (2L, `bfq_active_extract`), and the reader's next read re-activates it (2L,
/// `bfq_active_insert`): 5L node visits of `tree_node_ns` each, growing with log2 n, not with n.
#[test]
fn tree_work_grows_with_log_of_queues() {
    use super::wf2q::levels;
    assert_eq!(round_robin_tree_work(1, 5), 0);
    for n in [4u32, 32, 256] {
        let per_request = round_robin_tree_work(n, 5) / Time::from(n);
        assert_eq!(per_request, 5 * levels(n as usize) * CORE.tree_node_ns, "{n} queues");
    }
    assert_eq!(5 * levels(256) * CORE.tree_node_ns, 400, "8 levels at 10 ns: 0.4 us beside the 1.9 us");
}
