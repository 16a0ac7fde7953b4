//! `bfq`: Budget Fair Queueing (block/bfq-iosched.c and bfq-wf2q.c, as of 6.x), with the mechanisms that
//! decide a latency-sensitive reader's fate beside throughput flows on a flash drive with command queueing.
//!
//! Modeled, each with Linux's parameter (the sysfs tunables are keys, `host.block.bfq_*`):
//! - Queues. One sync queue per process (`task`: the submitting task's I/O context, so the journal
//!   thread's commit writes are its own) and I/O priority class; async requests (writeback) share one
//!   queue per class and level (`async_bfqq[class][ioprio]`). Weight (8 - ioprio level) x 10
//!   (`bfq_ioprio_to_weight`): 40 for the applications (level 4, none set), 50 for ext4's journal thread
//!   (level 3, `journal_ioprio`). **Stable merge** (`bfq_do_or_sched_stable_merge`): a new sync queue
//!   created within `bfq_burst_interval` (180 ms) of the last queue created (the reference; it moves to a
//!   queue created more than 600 ms after it, or of another class or level) is merged into it at creation,
//!   for good, on a non-rotational drive with queueing: processes that start their I/O together share one
//!   queue.
//! - B-WF2Q+ per class (bfq-wf2q.c): virtual start and finish times, V advanced by service / weight sum,
//!   idle queues keeping their weight until V passes their finish (forgotten one per update, as
//!   `bfq_forget_idle`), the eligible queue with the smallest finish served next, V jumping to the smallest
//!   start when none is eligible; classes strictly by priority but the IDLE class gets a turn after 200 ms
//!   (`BFQ_CL_IDLE_TIMEOUT`) and gives up service after each request when others are busy. A queue that
//!   becomes busy again soon after emptying (within 3 x `slice_idle`, having expired for lack of requests)
//!   keeps its remaining budget and backshifted timestamps (`bfq_bfqq_update_budg_for_activation`).
//! - Service: the in-service queue dispatches its next request while it fits in what is left of its budget;
//!   sync requests are charged their sectors, async ones 3 x theirs (`bfq_async_charge_factor`) unless the
//!   queue is weight-raised or the scenario asymmetric. Budgets start at 2/3 of the maximum (16384
//!   sectors, `bfq_default_max_budget`) and follow the expiration reason (`__bfq_bfqq_recalc_budget`: x4
//!   when exhausted, x2 on timeout, the service received when the queue emptied, cut when idling timed
//!   out); weight-raised queues get 2 x the minimum (1024 sectors). Budget timeout 125 ms
//!   (`bfq_timeout`), times the weight-raising factor. A seeky or slow queue is charged the time it held
//!   the device instead of its service (`bfq_bfqq_charge_time`).
//! - Next request of a queue: `bfq_choose_req` from the last dispatched position, back seeks up to
//!   `back_seek_max` (16384 KiB) costing `back_seek_penalty` (2) times their distance, farther ones last;
//!   an expired FIFO head (125 ms sync, 250 ms async) goes first, checked once per service slot.
//! - Weight raising (`low_latency`, default on): a sync queue of the default weight (40) that is new or
//!   was idle for 2 s (`bfq_wr_min_idle_time`), not in a large burst, is "interactive" when it becomes
//!   busy: its weight is raised x30 (`bfq_wr_coeff`) for `bfq_wr_duration` (3.75 s: see below) or until
//!   it received 120000 sectors (`max_service_from_wr`). An async queue is raised when a request arrives
//!   more than 500 ms after the last one. A weight-raised queue that becomes busy preempts a queue of lower
//!   weight.
//! - Large bursts (`bfq_handle_burst`): 8 queues (`bfq_large_burst_thresh`) created within 180 ms of each
//!   other are in a large burst and not weight-raised.
//! - Idling (I/O-dispatch plugging, `bfq_better_to_idle`): when the in-service sync queue empties, it stays
//!   in service if idling boosts throughput (never on non-rotational drives with queueing: only if the
//!   queueing detection finds the drive holds 3 or fewer requests, `bfq_update_hw_tag`, and the queue is
//!   sequential and I/O-bound) or is needed for its guarantees (`idling_needed_for_service_guarantees`: it
//!   is weight-raised while unraised queues are busy or 4 or more other requests are in the drive, or the
//!   scenario is asymmetric - queues of several classes busy, or unequal unraised weights - or it is the
//!   only busy queue). It then waits for its in-flight requests and, when the last completes, arms the idle
//!   timer: `slice_idle` (8 ms), at most 2 ms for a seeky unraised queue in a symmetric scenario, at least
//!   20 ms for a weight-raised one. A new request ends the wait; the timer expires the queue.
//! - Injection (`bfq_choose_bfqq_for_injection`, `bfq_update_inject_limit`): while plugging, other queues'
//!   requests go to the drive only while fewer than the in-service queue's inject limit are in flight
//!   (large requests one at a time); the limit starts at 0 (short think time) or 1, is raised while the
//!   queue's first requests after emptying complete within 1.5x their time without injection, lowered
//!   otherwise, and reset every second. A queue that keeps getting its next request within 4 ms of another
//!   queue's completion while it has a long think time (three times in a row, `bfq_check_waker`) has that
//!   queue as its waker: the waker's requests, and those of a queue it wakes, are injected without limit
//!   while it is plugged (e.g. a process waiting in fsync for the journal thread's commit).
//! - Think time, seekiness, I/O intensity (`bfq_update_io_thinktime`, `_seektime`, `_intensity`), budget
//!   timeouts and expiration reasons as in Linux.
//! - Scheduler tags (`bfq_limit_depth`, `bfq_update_depths`): async requests may hold 50% of them and sync
//!   writes 75% (18.75% and 37.5% while a queue is weight-raised); sync reads all.
//!
//! Not modeled, and why:
//! - The peak-rate estimator (`bfq_update_peak_rate`): the maximum budget stays at 16384 sectors and the
//!   weight-raising duration at the initial estimate's, ref_rate x ref_wr_duration / (2/3 ref_rate) =
//!   1.5 x 2500 ms = 3.75 s (clamped to [3 s, 25 s]; a drive faster than ~200 MB/s would bring it to 3 s).
//! - Soft real-time weight raising (it needs the isochrony detector; queues of random I/O are never soft
//!   real-time, `BFQQ_TOTALLY_SEEKY`); injecting a plugged process's own async I/O (writeback is issued
//!   by the flusher, not by the process); cooperator (close I/O) queue merging and splitting (off on
//!   non-rotational drives with queueing); the delayed stable merge of drives without queueing; cgroups
//!   and per-group limits; `strict_guarantees`; per-actuator injection; request merging inside the
//!   scheduler.
//! - Jiffies: every time is in ns.
//!
//! Hardware queues: bfq is queue-wide (one `bfq_data`, one lock), so `dispatch(hwq)` ignores `hwq` and may
//! return a request inserted for another hardware queue. `queued(hwq)` counts the waiting requests
//! inserted for `hwq`. `dispatch` may return None while requests wait (plugging): the block layer runs the
//! queues again after a completion and when the idle timer fires (`timer_due`, `timer`).

mod queue;
#[cfg(test)]
mod tests;
mod wf2q;

use rustc_hash::FxHashMap;

use super::{IoScheduler, SchedCosts, SchedRequest};
use crate::config::host::BlockConfig;
use crate::engine::Time;
use crate::request::{Op, ReqId};
use queue::{Requests, RqKey, SeekRule, Waiting};
use wf2q::{vt_after, vt_delta, ServiceTree, Stamps};

const MS: Time = 1_000_000;

/// The tunables (`host.block.bfq_*`, the scheduler's sysfs files).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BfqParams {
    /// Idling time, ns (`slice_idle`, in ms in sysfs; `slice_idle_us`). 0 disables idling.
    pub slice_idle_ns: Time,
    /// Weight raising for interactive queues (`low_latency`).
    pub low_latency: bool,
    /// Longest back seek preferred at a penalty, KiB (`back_seek_max`).
    pub back_seek_max_kib: u32,
    /// Cost factor of a back seek (`back_seek_penalty`).
    pub back_seek_penalty: u32,
    /// CPU time per service-tree node an operation visits beyond the root, ns.
    pub tree_node_ns: Time,
}

impl BfqParams {
    pub fn from_config(cfg: &BlockConfig) -> Self {
        BfqParams {
            slice_idle_ns: cfg.bfq_slice_idle.0,
            low_latency: cfg.bfq_low_latency,
            back_seek_max_kib: cfg.bfq_back_seek_max,
            back_seek_penalty: cfg.bfq_back_seek_penalty,
            tree_node_ns: cfg.bfq_tree_node_ns.0,
        }
    }
}

impl Default for BfqParams {
    /// Linux's: `slice_idle` NSEC_PER_SEC / 125 (8 ms), `low_latency` 1, `back_seek_max` 16 * 1024 KiB,
    /// `back_seek_penalty` 2; the tree walks' cost as `host.block.bfq_tree_node_ns`.
    fn default() -> Self {
        BfqParams::from_config(&BlockConfig::default())
    }
}

/// Maximum budget in sectors (`bfq_default_max_budget`; the peak-rate estimator is not modeled).
const MAX_BUDGET: u64 = 16 * 1024;
/// Minimum budget (`bfq_min_budget`: max / 32).
const MIN_BUDGET: u64 = MAX_BUDGET / 32;
/// Budgets assigned before the statistics count (`bfq_stats_min_budgets`).
const STATS_MIN_BUDGETS: u64 = 194;
/// Budget timeout (`bfq_timeout`, HZ / 8).
const TIMEOUT_NS: Time = 125 * MS;
/// FIFO deadline of async and sync requests (`bfq_fifo_expire`).
const FIFO_EXPIRE_NS: [Time; 2] = [250 * MS, 125 * MS];
/// Async requests are charged this many times their sectors (`bfq_async_charge_factor`).
const ASYNC_CHARGE_FACTOR: u64 = 3;
/// Think time below which it counts as immediate (`BFQ_MIN_TT`); also the shortest idling for seeky queues.
const MIN_TT_NS: Time = 2 * MS;
/// Queueing detection (`BFQ_HW_QUEUE_THRESHOLD`, `BFQ_HW_QUEUE_SAMPLES`).
const HW_QUEUE_THRESHOLD: u32 = 3;
const HW_QUEUE_SAMPLES: u32 = 32;
/// A request farther than this from the last one is a seek (`BFQQ_SEEK_THR`, sectors)...
const SEEK_THR: u64 = 8 * 100;
/// ...unless, on a non-rotational drive, it is at least this large (`BFQQ_SECT_THR_NONROT`).
const SECT_THR_NONROT: u32 = 2 * 32;
/// A queue is seeky when more than this many of its last 32 requests were (`BFQQ_SEEKY`).
const SEEKY_COUNT: u32 = 19;
/// Think-time samples needed before it counts (`bfq_sample_valid`: more than 80).
const TTIME_VALID_SAMPLES: u64 = 80;
/// Weight raising (`bfq_init_queue`): factor, minimum idle time, async inter-arrival, service cap.
const WR_COEFF: u64 = 30;
const WR_MIN_IDLE_NS: Time = 2_000 * MS;
const WR_MIN_INTER_ARR_ASYNC_NS: Time = 500 * MS;
const MAX_SERVICE_FROM_WR: u64 = 120_000;
/// `bfq_wr_duration` with the initial peak-rate estimate of a non-rotational drive: ref_rate[1] x
/// ref_wr_duration[1] / (ref_rate[1] x 2 / 3) = 2500 ms x 3 / 2, within its [3 s, 25 s] clamp.
const WR_DURATION_NS: Time = 3_750 * MS;
/// Weight-raised queues idle at least this long (`bfq_arm_slice_timer`).
const WR_MIN_IDLE_SLICE_NS: Time = 20 * MS;
/// Burst detection (`bfq_large_burst_thresh`, `bfq_burst_interval`) and stable merging
/// (`bfq_activation_stable_merging`).
const LARGE_BURST_THRESH: u32 = 8;
const BURST_INTERVAL_NS: Time = 180 * MS;
const STABLE_MERGE_WINDOW_NS: Time = 600 * MS;
/// The IDLE class gets a turn when it has not been considered for this long (`BFQ_CL_IDLE_TIMEOUT`).
const IDLE_CLASS_TIMEOUT_NS: Time = 200 * MS;
/// I/O priority levels (`IOPRIO_NR_LEVELS`); a level past the last counts as the last, as
/// `bfq_set_next_ioprio_data` clamps it.
const IOPRIO_NR_LEVELS: u8 = 8;
/// Weight of a queue of ioprio `level` (`bfq_ioprio_to_weight`: (IOPRIO_NR_LEVELS - level) x
/// BFQ_WEIGHT_CONVERSION_COEFF).
fn ioprio_weight(level: u8) -> u64 {
    u64::from(IOPRIO_NR_LEVELS - level.min(IOPRIO_NR_LEVELS - 1)) * 10
}
/// Weight of a queue with the default ioprio 4 (`IOPRIO_BE_NORM`), the only weight deemed interactive.
const DEFAULT_WEIGHT: u64 = (8 - 4) * 10;

/// Classes, highest first: RT, BE, IDLE.
const CLASSES: usize = 3;
const IDLE_CLASS: usize = 2;
/// The `task` of the shared async queues.
const ASYNC_TASK: u32 = u32::MAX;

/// Class index of an I/O priority class: 0 RT, 2 IDLE, everything else BE.
fn class_of(prio_class: u8) -> usize {
    match prio_class {
        0 => 0,
        2 => IDLE_CLASS,
        _ => 1,
    }
}

/// Why the in-service queue stops being served (`enum bfqq_expiration`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expiration {
    TooIdle,
    BudgetTimeout,
    BudgetExhausted,
    NoMoreRequests,
    Preempted,
}

/// Where a queue is with respect to its service tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TreeState {
    /// On no tree, its weight not in the sum.
    Off,
    /// In the idle tree: empty, its finish still ahead of V.
    Idle,
    /// In the active tree, or in service.
    Active,
}

/// A `bfq_queue` with its `bfq_entity`.
#[derive(Debug)]
struct BfqQueue {
    class: usize,
    /// Its ioprio level (`ioprio`): stable merging joins only queues of the same one.
    level: u8,
    sync: bool,
    orig_weight: u64,
    weight: u64,
    /// The weight must be recomputed at the next (re)activation (`prio_changed`).
    weight_stale: bool,
    requests: Requests,
    /// Waiting requests by sync flag (`queued[]`).
    queued: [u32; 2],
    /// Requests at the driver (`dispatched`).
    dispatched: u32,
    stamps: Stamps,
    tree: TreeState,
    busy: bool,
    budget: u64,
    service: u64,
    max_budget: u64,
    /// The weight this queue is counted with in the weights tree, if it is.
    counted_weight: Option<u64>,
    creation: Time,
    /// `budget_timeout`, also overloaded to stamp when the queue went idle; None is minus infinity.
    budget_timeout: Option<Time>,
    wait_request: bool,
    non_blocking_wait_rq: bool,
    fifo_checked: bool,
    just_created: bool,
    in_large_burst: bool,
    in_burst_list: bool,
    has_short_ttime: bool,
    io_bound: bool,
    wr_coeff: u64,
    wr_cur_max_time: Time,
    last_wr_start_finish: Time,
    service_from_wr: u64,
    ttime_samples: u64,
    ttime_total: u64,
    ttime_mean: u64,
    last_end_request: Time,
    seek_history: u32,
    last_request_pos: u64,
    io_start_time: Time,
    tot_idle_time: Time,
    inject_limit: u32,
    last_serv_time_ns: Time,
    decrease_time: Time,
    /// Other queues' requests were redirected here (a stable merge): shared (`coop`).
    shared: bool,
    /// Waker detection (`tentative_waker_bfqq`, `num_waker_detections`, `waker_detection_started`).
    tentative_waker: Option<usize>,
    waker_detections: u32,
    waker_detection_started: Time,
    /// The queue whose completions this one's requests follow (`waker_bfqq`).
    waker: Option<usize>,
    /// Queues this one wakes, the most recently busy first (`woken_list`).
    woken: Vec<usize>,
}

impl BfqQueue {
    /// `bfq_init_bfqq`, with the weight of its ioprio `level` (`bfq_set_next_ioprio_data`).
    fn new(class: usize, level: u8, sync: bool, now: Time) -> Self {
        BfqQueue {
            class,
            level,
            sync,
            orig_weight: ioprio_weight(level),
            weight: ioprio_weight(level),
            weight_stale: false,
            requests: Requests::default(),
            queued: [0; 2],
            dispatched: 0,
            stamps: Stamps::default(),
            tree: TreeState::Off,
            busy: false,
            budget: 0,
            service: 0,
            max_budget: 2 * MAX_BUDGET / 3,
            counted_weight: None,
            creation: now,
            budget_timeout: None,
            wait_request: false,
            non_blocking_wait_rq: false,
            fifo_checked: false,
            just_created: sync,
            in_large_burst: false,
            in_burst_list: false,
            has_short_ttime: sync && class != IDLE_CLASS,
            io_bound: true,
            wr_coeff: 1,
            wr_cur_max_time: 0,
            last_wr_start_finish: now,
            service_from_wr: 0,
            ttime_samples: 0,
            ttime_total: 0,
            ttime_mean: 0,
            last_end_request: now,
            // The first request is almost certainly seeky.
            seek_history: 1,
            last_request_pos: 0,
            io_start_time: now,
            tot_idle_time: 0,
            inject_limit: 0,
            last_serv_time_ns: 0,
            decrease_time: now,
            shared: false,
            tentative_waker: None,
            waker_detections: 0,
            waker_detection_started: 0,
            waker: None,
            woken: Vec::new(),
        }
    }

    fn budget_left(&self) -> i64 {
        self.budget as i64 - self.service as i64
    }

    fn seeky(&self) -> bool {
        self.seek_history.count_ones() > SEEKY_COUNT
    }

    /// `bfq_bfqq_budget_timeout`: the budget timeout has passed.
    fn budget_timed_out(&self, now: Time) -> bool {
        self.budget_timeout.is_none_or(|t| t <= now)
    }

    /// `bfq_may_expire_for_budg_timeout`.
    fn may_expire_for_budget_timeout(&self, now: Time) -> bool {
        (!self.wait_request || self.budget_left() >= self.budget as i64 / 3) && self.budget_timed_out(now)
    }
}

pub struct Bfq {
    params: BfqParams,
    queues: Vec<BfqQueue>,
    /// Queues by (task, class, level); async queues have the task `ASYNC_TASK` (`async_bfqq[class][level]`).
    by_key: FxHashMap<(u32, u8, u8), usize>,
    trees: [ServiceTree; CLASSES],
    /// Queues in the active trees, most recently inserted last (`active_list`, searched for injection).
    active_list: Vec<usize>,
    next_order: u64,
    in_service: Option<usize>,
    busy: [u32; CLASSES],
    wr_busy: u32,
    /// Weights of the unraised queues that are busy or have requests in flight, and how many have each.
    weights: std::collections::BTreeMap<u64, u32>,
    rq_in_driver: u32,
    max_rq_in_driver: u32,
    /// Queueing detection: -1 unknown, 0 no, 1 yes (`hw_tag`).
    hw_tag: i8,
    hw_tag_samples: u32,
    queued_total: u32,
    last_position: u64,
    last_budget_start: Time,
    last_idling_start: Time,
    idle_timer: Option<Time>,
    budgets_assigned: u64,
    idle_class_last_service: Time,
    burst_list: Vec<usize>,
    burst_size: u32,
    large_burst: bool,
    last_ins_in_burst: Option<Time>,
    last_created: Option<usize>,
    wait_dispatch: bool,
    waited_rq: Option<ReqId>,
    rqs_injected: bool,
    last_empty_occupied: Time,
    /// The queue of the last completed request (None if it was shared) and when it completed.
    last_completed: Option<usize>,
    last_completion: Time,
    /// Dispatched requests not completed yet, with their queue.
    in_flight: FxHashMap<ReqId, usize>,
    /// Requests each process has in the scheduler or in flight (`bic->requests`).
    task_requests: FxHashMap<u32, u32>,
    /// Requests waiting per hardware-queue slot.
    queued_per_slot: Vec<usize>,
    next_seq: u64,
}

impl Bfq {
    pub fn new(hw_queues: u32, params: BfqParams) -> Self {
        Bfq {
            params,
            queues: Vec::new(),
            by_key: FxHashMap::default(),
            trees: Default::default(),
            active_list: Vec::new(),
            next_order: 0,
            in_service: None,
            busy: [0; CLASSES],
            wr_busy: 0,
            weights: Default::default(),
            rq_in_driver: 0,
            max_rq_in_driver: 0,
            hw_tag: -1,
            hw_tag_samples: 0,
            queued_total: 0,
            last_position: 0,
            last_budget_start: 0,
            last_idling_start: 0,
            idle_timer: None,
            budgets_assigned: 0,
            idle_class_last_service: 0,
            burst_list: Vec::new(),
            burst_size: 0,
            large_burst: false,
            last_ins_in_burst: None,
            last_created: None,
            wait_dispatch: false,
            waited_rq: None,
            rqs_injected: false,
            last_empty_occupied: 0,
            last_completed: None,
            last_completion: 0,
            in_flight: FxHashMap::default(),
            task_requests: FxHashMap::default(),
            queued_per_slot: vec![0; hw_queues.max(1) as usize],
            next_seq: 0,
        }
    }

    /// Slot of a hardware queue; out-of-range numbers fold back instead of panicking.
    fn slot(&self, hwq: u32) -> usize {
        hwq as usize % self.queued_per_slot.len()
    }

    fn seek_rule(&self) -> SeekRule {
        SeekRule {
            back_max: u64::from(self.params.back_seek_max_kib) * 2,
            penalty: u64::from(self.params.back_seek_penalty),
        }
    }

    fn tot_busy(&self) -> u32 {
        self.busy.iter().sum()
    }

    /// The drive queues commands (`nonrot_with_queueing`: assumed at first, then as detected).
    fn nonrot_with_queueing(&self) -> bool {
        self.hw_tag != 0
    }

    // ---- queues and weights ----

    /// The queue a request of `task` goes to, created if needed (`bfq_get_queue`), with stable merging.
    fn queue_for(&mut self, rq: &SchedRequest, now: Time) -> usize {
        let class = class_of(rq.prio_class);
        let level = rq.prio_level.min(IOPRIO_NR_LEVELS - 1);
        let key = (if rq.sync { rq.task } else { ASYNC_TASK }, class as u8, level);
        if let Some(&qi) = self.by_key.get(&key) {
            return qi;
        }
        self.queues.push(BfqQueue::new(class, level, rq.sync, now));
        let mut qi = self.queues.len() - 1;
        if rq.sync {
            qi = self.stable_merge(qi, now);
        }
        self.by_key.insert(key, qi);
        qi
    }

    /// `bfq_do_or_sched_stable_merge` for the new sync queue `qi`: the queue it is to use. The reference
    /// moves to `qi` when it is older than the window or of another class or ioprio.
    fn stable_merge(&mut self, qi: usize, now: Time) -> usize {
        let q = &self.queues[qi];
        match self.last_created {
            Some(last)
                if self.queues[last].creation + STABLE_MERGE_WINDOW_NS >= now
                    && (self.queues[last].class, self.queues[last].level) == (q.class, q.level) =>
            {
                if self.queues[last].creation + BURST_INTERVAL_NS >= now && self.nonrot_with_queueing() {
                    // The new queue was never used: the process's requests go to the reference queue.
                    self.queues[last].shared = true;
                    return last;
                }
                qi
            }
            _ => {
                self.last_created = Some(qi);
                qi
            }
        }
    }

    /// Add a queue's weight to the weights tree (`bfq_weights_tree_add`), once.
    fn weights_add(&mut self, qi: usize) {
        let q = &mut self.queues[qi];
        if q.counted_weight.is_none() {
            q.counted_weight = Some(q.weight);
            *self.weights.entry(q.weight).or_default() += 1;
        }
    }

    /// `bfq_weights_tree_remove`.
    fn weights_remove(&mut self, qi: usize) {
        if let Some(w) = self.queues[qi].counted_weight.take() {
            if let Some(n) = self.weights.get_mut(&w) {
                *n -= 1;
                if *n == 0 {
                    self.weights.remove(&w);
                }
            }
        }
    }

    /// `__bfq_entity_update_weight_prio` for a queue counted in its tree's weight sum: apply a pending
    /// weight change (weight-raising start or end).
    fn apply_weight(&mut self, qi: usize) {
        let q = &mut self.queues[qi];
        if !q.weight_stale {
            return;
        }
        q.weight_stale = false;
        let new = q.orig_weight * q.wr_coeff;
        let old = q.weight;
        let tree = &mut self.trees[q.class];
        tree.wsum = tree.wsum.saturating_sub(old) + new;
        q.weight = new;
        if old != new {
            self.weights_remove(qi);
            if self.queues[qi].wr_coeff == 1 {
                self.weights_add(qi);
            }
        }
    }

    /// `bfq_asymmetric_scenario`: unraised queues of different weights (and `qi` not among the lightest), or
    /// busy queues of several classes.
    fn asymmetric(&self, qi: usize) -> bool {
        let q = &self.queues[qi];
        let smallest = q.counted_weight.is_some() && q.counted_weight == self.weights.keys().next().copied();
        let varied = !smallest && self.weights.len() > 1;
        varied || self.busy.iter().filter(|&&b| b > 0).count() > 1
    }

    /// `bfq_serv_to_charge`.
    fn charge(&self, qi: usize, sectors: u32) -> u64 {
        let q = &self.queues[qi];
        if q.sync || q.wr_coeff > 1 || self.asymmetric(qi) {
            u64::from(sectors)
        } else {
            u64::from(sectors) * ASYNC_CHARGE_FACTOR
        }
    }

    fn next_charge(&self, qi: usize) -> Option<u64> {
        self.queues[qi].requests.next_rq().map(|w| self.charge(qi, w.rq.sectors))
    }

    // ---- service trees ----

    fn insert_active(&mut self, qi: usize) {
        let order = self.next_order;
        self.next_order += 1;
        let q = &mut self.queues[qi];
        q.stamps.order = order;
        q.tree = TreeState::Active;
        self.trees[q.class].insert_active(qi);
        self.active_list.push(qi);
    }

    fn extract_active(&mut self, qi: usize) {
        let class = self.queues[qi].class;
        self.trees[class].extract_active(qi);
        self.active_list.retain(|&i| i != qi);
    }

    /// `bfq_forget_idle` on `class`'s tree.
    fn forget_idle(&mut self, class: usize) {
        let queues = &self.queues;
        if let Some(qi) = self.trees[class].forget_idle(|i| queues[i].stamps) {
            self.forget(qi);
        }
    }

    /// `bfq_forget_entity`: the queue leaves its tree and the weight sum.
    fn forget(&mut self, qi: usize) {
        let q = &mut self.queues[qi];
        q.tree = TreeState::Off;
        let tree = &mut self.trees[q.class];
        tree.wsum = tree.wsum.saturating_sub(q.weight);
    }

    /// `bfq_update_fin_time_enqueue`: finish from the budget, the backshift pushed up to V, then insertion.
    fn finish_and_enqueue(&mut self, qi: usize, backshifted: bool) {
        self.apply_weight(qi);
        let q = &mut self.queues[qi];
        q.stamps.finish = q.stamps.start.wrapping_add(vt_delta(q.budget, q.weight));
        let vtime = self.trees[q.class].vtime;
        if backshifted && vt_after(vtime, q.stamps.finish) {
            let delta = vtime.wrapping_sub(q.stamps.finish) / q.wr_coeff;
            q.stamps.start = q.stamps.start.wrapping_add(delta);
            q.stamps.finish = q.stamps.finish.wrapping_add(delta);
        }
        self.insert_active(qi);
    }

    /// `__bfq_activate_entity`: the queue becomes busy.
    fn activate(&mut self, qi: usize) {
        let q = &self.queues[qi];
        let vtime = self.trees[q.class].vtime;
        let backshifted = q.non_blocking_wait_rq && vt_after(vtime, q.stamps.finish);
        let min_vstart = if backshifted { q.stamps.finish } else { vtime };
        match q.tree {
            TreeState::Idle => {
                self.trees[q.class].extract_idle(qi);
                let q = &mut self.queues[qi];
                q.stamps.start = if vt_after(min_vstart, q.stamps.finish) { min_vstart } else { q.stamps.finish };
            }
            _ => {
                let q = &mut self.queues[qi];
                q.stamps.start = min_vstart;
                self.trees[q.class].wsum += q.weight;
            }
        }
        self.finish_and_enqueue(qi, backshifted);
    }

    /// `__bfq_requeue_entity`: the in-service queue goes back to the active tree charged its service, or an
    /// active queue is repositioned after a budget change.
    fn requeue(&mut self, qi: usize) {
        if self.in_service == Some(qi) {
            let q = &mut self.queues[qi];
            q.stamps.finish = q.stamps.start.wrapping_add(vt_delta(q.service, q.weight));
            q.stamps.start = q.stamps.finish;
            if q.tree == TreeState::Active && self.active_list.contains(&qi) {
                self.extract_active(qi);
            }
        } else {
            self.extract_active(qi);
        }
        self.finish_and_enqueue(qi, false);
    }

    /// `__bfq_deactivate_entity` with the idle tree allowed: the queue leaves the active tree (or service)
    /// for the idle tree while its finish is ahead of V, else is forgotten.
    fn deactivate(&mut self, qi: usize) {
        if self.queues[qi].tree == TreeState::Off {
            return;
        }
        if self.in_service == Some(qi) {
            let q = &mut self.queues[qi];
            q.stamps.finish = q.stamps.start.wrapping_add(vt_delta(q.service, q.weight));
        } else if self.queues[qi].tree == TreeState::Active {
            self.extract_active(qi);
        } else {
            let class = self.queues[qi].class;
            self.trees[class].extract_idle(qi);
        }
        let q = &mut self.queues[qi];
        if vt_after(q.stamps.finish, self.trees[q.class].vtime) {
            q.tree = TreeState::Idle;
            self.trees[q.class].insert_idle(qi);
        } else {
            self.forget(qi);
        }
    }

    /// `bfq_bfqq_served`: charge `service` sectors to the queue and advance its tree's V.
    fn served(&mut self, qi: usize, service: u64) {
        let q = &mut self.queues[qi];
        if q.wr_coeff > 1 {
            q.service_from_wr += service;
        }
        q.service += service;
        let tree = &mut self.trees[q.class];
        tree.vtime = tree.vtime.wrapping_add(vt_delta(service, tree.wsum));
        let class = q.class;
        self.forget_idle(class);
    }

    /// `bfq_add_bfqq_busy`.
    fn add_busy(&mut self, qi: usize) {
        self.activate(qi);
        let q = &mut self.queues[qi];
        q.non_blocking_wait_rq = false;
        q.busy = true;
        self.busy[q.class] += 1;
        let (dispatched, wr) = (q.dispatched, q.wr_coeff);
        if dispatched == 0 && wr == 1 {
            self.weights_add(qi);
        }
        if wr > 1 {
            self.wr_busy += 1;
        }
        if let Some(w) = self.queues[qi].waker {
            let woken = &mut self.queues[w].woken;
            if let Some(at) = woken.iter().position(|&i| i == qi) {
                woken.remove(at);
                woken.insert(0, qi);
            }
        }
    }

    /// `bfq_del_bfqq_busy`.
    fn del_busy(&mut self, qi: usize) {
        let q = &mut self.queues[qi];
        q.busy = false;
        self.busy[q.class] -= 1;
        if q.wr_coeff > 1 {
            self.wr_busy -= 1;
        }
        self.deactivate(qi);
        if self.queues[qi].dispatched == 0 {
            self.weights_remove(qi);
        }
    }

    /// `bfq_get_next_queue` and `__bfq_set_in_service_queue`: the next queue in service, highest class
    /// first unless the IDLE class is owed a turn.
    fn set_next_in_service(&mut self, now: Time) -> Option<usize> {
        if self.tot_busy() == 0 {
            return None;
        }
        let mut first_class = 0;
        if now > self.idle_class_last_service + IDLE_CLASS_TIMEOUT_NS {
            if !self.trees[IDLE_CLASS].active.is_empty() {
                first_class = IDLE_CLASS;
            }
            self.idle_class_last_service = now;
        }
        let mut chosen = None;
        for class in first_class..CLASSES {
            let queues = &self.queues;
            if let Some((qi, jumped)) = self.trees[class].pick(|i| queues[i].stamps) {
                if jumped {
                    self.forget_idle(class);
                }
                chosen = Some(qi);
                break;
            }
        }
        let qi = chosen?;
        self.extract_active(qi);
        self.budgets_assigned = (self.budgets_assigned * 7 + 256) / 8;
        let q = &mut self.queues[qi];
        q.service = 0;
        q.fifo_checked = false;
        // `bfq_set_budget_timeout`: the timeout grows with the weight raising.
        let coeff = q.weight / q.orig_weight;
        q.budget_timeout = Some(now + TIMEOUT_NS * coeff);
        self.last_budget_start = now;
        self.in_service = Some(qi);
        Some(qi)
    }

    // ---- weight raising and bursts ----

    /// `bfq_bfqq_end_wr`.
    fn end_wr(&mut self, qi: usize, now: Time) {
        let q = &mut self.queues[qi];
        if q.busy {
            self.wr_busy -= 1;
        }
        q.wr_coeff = 1;
        q.wr_cur_max_time = 0;
        q.last_wr_start_finish = now;
        q.weight_stale = true;
    }

    /// `bfq_update_wr_data` for the in-service queue after a dispatch: end its weight raising if it is in a
    /// large burst, its time is up or it received enough service; apply weight changes at once.
    fn update_wr_data(&mut self, qi: usize, now: Time) {
        let q = &self.queues[qi];
        if q.wr_coeff > 1 {
            if q.in_large_burst || now > q.last_wr_start_finish + q.wr_cur_max_time {
                self.end_wr(qi, now);
            }
            let q = &self.queues[qi];
            if q.wr_coeff > 1 && q.service_from_wr > MAX_SERVICE_FROM_WR {
                self.end_wr(qi, now);
            }
        }
        let q = &self.queues[qi];
        if (q.weight > q.orig_weight) != (q.wr_coeff > 1) {
            self.queues[qi].weight_stale = true;
            self.apply_weight(qi);
        }
    }

    /// `bfq_handle_burst` for a new queue.
    fn handle_burst(&mut self, qi: usize, now: Time) {
        let q = &self.queues[qi];
        if q.in_burst_list || q.in_large_burst {
            return;
        }
        if self.last_ins_in_burst.is_none_or(|t| t + BURST_INTERVAL_NS < now) {
            // A new burst may start here (`bfq_reset_burst_list`).
            self.large_burst = false;
            for &i in &self.burst_list {
                self.queues[i].in_burst_list = false;
            }
            self.burst_list.clear();
            if self.tot_busy() == 0 {
                self.burst_list.push(qi);
                self.queues[qi].in_burst_list = true;
                self.burst_size = 1;
            } else {
                self.burst_size = 0;
            }
        } else if self.large_burst {
            self.queues[qi].in_large_burst = true;
        } else {
            self.burst_size += 1;
            if self.burst_size == LARGE_BURST_THRESH {
                self.large_burst = true;
                for i in std::mem::take(&mut self.burst_list) {
                    let q = &mut self.queues[i];
                    q.in_large_burst = true;
                    q.in_burst_list = false;
                }
                self.queues[qi].in_large_burst = true;
            } else {
                self.burst_list.push(qi);
                self.queues[qi].in_burst_list = true;
            }
        }
        self.last_ins_in_burst = Some(now);
    }

    // ---- idling ----

    /// `idling_boosts_thr_without_issues`: only on a drive found not to queue, for a sequential I/O-bound
    /// queue with a short think time, and not while weight-raised queues are busy.
    fn idling_boosts_throughput(&self, qi: usize) -> bool {
        let q = &self.queues[qi];
        let sequential_io_bound = !q.seeky() && q.io_bound && q.has_short_ttime;
        self.hw_tag == 0 && sequential_io_bound && self.wr_busy == 0
    }

    /// `idling_needed_for_service_guarantees`.
    fn idling_needed_for_guarantees(&self, qi: usize) -> bool {
        let q = &self.queues[qi];
        let busy = self.tot_busy();
        (q.wr_coeff > 1 && (self.wr_busy < busy || self.rq_in_driver >= q.dispatched + 4))
            || self.asymmetric(qi)
            || busy == 1
    }

    /// `bfq_better_to_idle`.
    fn better_to_idle(&self, qi: usize) -> bool {
        let q = &self.queues[qi];
        if self.params.slice_idle_ns == 0 || !q.sync || q.class == IDLE_CLASS {
            return false;
        }
        self.idling_boosts_throughput(qi) || self.idling_needed_for_guarantees(qi)
    }

    fn must_idle(&self, qi: usize) -> bool {
        self.queues[qi].requests.is_empty() && self.better_to_idle(qi)
    }

    /// `bfq_arm_slice_timer` for the in-service queue.
    fn arm_slice_timer(&mut self, qi: usize, now: Time) {
        let mut slice = self.params.slice_idle_ns;
        let q = &self.queues[qi];
        if q.seeky() && q.wr_coeff == 1 && !self.asymmetric(qi) {
            slice = slice.min(MIN_TT_NS);
        } else if q.wr_coeff > 1 {
            slice = slice.max(WR_MIN_IDLE_SLICE_NS);
        }
        self.queues[qi].wait_request = true;
        self.last_idling_start = now;
        self.idle_timer = Some(now + slice);
    }

    /// Stop idling (`bfq_clear_bfqq_wait_request` and cancelling the timer).
    fn stop_idling(&mut self, qi: usize) {
        self.queues[qi].wait_request = false;
        self.idle_timer = None;
    }

    // ---- injection ----

    /// `bfq_check_waker`: queue `qi`, with a long think time, got a request soon after another queue's
    /// completion; the third time in a row (within 128 x `slice_idle`) that queue becomes its waker.
    fn check_waker(&mut self, qi: usize, now: Time) {
        let Some(last) = self.last_completed else { return };
        let q = &self.queues[qi];
        if last == qi || q.has_short_ttime || now.saturating_sub(self.last_completion) >= 4 * MS {
            return;
        }
        let q = &mut self.queues[qi];
        if q.tentative_waker != Some(last) || now > q.waker_detection_started + 128 * self.params.slice_idle_ns {
            q.tentative_waker = Some(last);
            q.waker_detections = 1;
            q.waker_detection_started = now;
        } else {
            q.waker_detections += 1;
        }
        if q.waker_detections == 3 {
            let old = q.waker.replace(last);
            q.tentative_waker = None;
            if let Some(old) = old {
                self.queues[old].woken.retain(|&i| i != qi);
            }
            self.queues[last].woken.retain(|&i| i != qi);
            self.queues[last].woken.insert(0, qi);
        }
    }

    /// A queue to inject from without limit while `qi` is plugged: its waker, or else the first queue it
    /// wakes, if that one is busy with a request that fits its budget.
    fn waker_or_woken(&self, qi: usize) -> Option<usize> {
        let fits = |i: usize| {
            let q = &self.queues[i];
            q.busy && self.next_charge(i).is_some_and(|c| c as i64 <= q.budget_left())
        };
        let q = &self.queues[qi];
        q.waker.filter(|&w| fits(w)).or_else(|| q.woken.first().copied().filter(|&b| fits(b)))
    }

    /// `bfq_reset_inject_limit`.
    fn reset_inject_limit(&mut self, qi: usize, now: Time) {
        self.waited_rq = None;
        let q = &mut self.queues[qi];
        q.last_serv_time_ns = 0;
        q.inject_limit = if q.has_short_ttime { 0 } else { 1 };
        q.decrease_time = now;
    }

    /// `bfq_update_inject_limit`: the first request of the in-service queue after it emptied completed.
    fn update_inject_limit(&mut self, qi: usize, now: Time) {
        let tot_time = now.saturating_sub(self.last_empty_occupied);
        let (injected, max_in_driver, in_driver) = (self.rqs_injected, self.max_rq_in_driver, self.rq_in_driver);
        let q = &mut self.queues[qi];
        let old = q.inject_limit;
        if q.last_serv_time_ns > 0 && injected {
            let threshold = q.last_serv_time_ns * 3 / 2;
            if tot_time >= threshold && old > 0 {
                q.inject_limit -= 1;
                q.decrease_time = now;
            } else if tot_time < threshold && old <= max_in_driver {
                q.inject_limit += 1;
            }
        }
        // The completing request is still counted in the driver: 1 means nothing else is there.
        if (q.last_serv_time_ns == 0 && in_driver == 1) || tot_time < q.last_serv_time_ns {
            if q.last_serv_time_ns == 0 {
                q.inject_limit = old.max(1);
            }
            q.last_serv_time_ns = tot_time;
        } else if !injected && in_driver == 1 {
            q.last_serv_time_ns = tot_time;
        }
        self.waited_rq = None;
        self.rqs_injected = false;
    }

    /// `bfq_choose_bfqq_for_injection`: a queue whose next request may go to the drive while the in-service
    /// queue `qi` is plugged.
    fn choose_for_injection(&mut self, qi: usize, now: Time) -> Option<usize> {
        let s = &self.queues[qi];
        let mut limit = s.inject_limit;
        let always = s.wr_coeff == 1 || !s.has_short_ttime;
        if limit == 0
            && s.last_serv_time_ns == 0
            && s.wait_request
            && now >= self.last_idling_start + self.params.slice_idle_ns
        {
            limit = 1;
        }
        if self.rq_in_driver >= limit {
            return None;
        }
        let found = self.active_list.iter().rev().copied().find(|&i| {
            let q = &self.queues[i];
            let Some(next) = q.requests.next_rq() else { return false };
            (always || q.wr_coeff > 1)
                && self.charge(i, next.rq.sectors) as i64 <= q.budget_left()
                // One large request at a time on a non-rotational drive.
                && !(next.rq.sectors >= SECT_THR_NONROT && self.rq_in_driver >= 1)
        })?;
        self.rqs_injected = true;
        Some(found)
    }

    // ---- expiration ----

    /// `bfq_bfqq_is_slow`: (slow, time in service in ms).
    fn is_slow(&self, qi: usize, compensate: bool, now: Time) -> (bool, u64) {
        let q = &self.queues[qi];
        let mut slow = q.seeky();
        if !q.sync {
            return (false, 0);
        }
        let end = if compensate { self.last_idling_start } else { now };
        let delta_us = end.saturating_sub(self.last_budget_start) / 1_000;
        if delta_us < 1_000 {
            // Non-rotational: the same worst case as idling for a seeky queue.
            return (slow, MIN_TT_NS / MS);
        }
        if delta_us > 20_000 {
            slow = q.service < MAX_BUDGET / 2;
        }
        (slow, delta_us / 1_000)
    }

    /// `bfq_bfqq_charge_time`: charge the service the queue would have received at full speed.
    fn charge_time(&mut self, qi: usize, time_ms: u64) {
        let timeout_ms = TIMEOUT_NS / MS;
        let for_time = MAX_BUDGET * time_ms.min(timeout_ms) / timeout_ms;
        let q = &mut self.queues[qi];
        let total = for_time.max(q.service);
        q.budget = q.budget.max(total);
        let extra = total - q.service;
        self.served(qi, extra);
    }

    /// `__bfq_bfqq_recalc_budget`.
    fn recalc_budget(&mut self, qi: usize, reason: Expiration) {
        let max = MAX_BUDGET;
        let q = &self.queues[qi];
        let mut budget = if q.wr_coeff == 1 { q.max_budget } else { 2 * MIN_BUDGET };
        if q.sync && q.wr_coeff == 1 {
            budget = match reason {
                Expiration::TooIdle if q.dispatched > 0 => (budget * 2).min(max),
                Expiration::TooIdle if budget > 5 * MIN_BUDGET => budget - 4 * MIN_BUDGET,
                Expiration::TooIdle => MIN_BUDGET,
                Expiration::BudgetTimeout => (budget * 2).min(max),
                Expiration::BudgetExhausted => (budget * 4).min(max),
                Expiration::NoMoreRequests => q.service.max(MIN_BUDGET),
                Expiration::Preempted => return,
            };
        } else if !q.sync {
            budget = max;
        }
        if self.budgets_assigned >= STATS_MIN_BUDGETS {
            budget = budget.min(max);
        }
        let next = self.next_charge(qi);
        let q = &mut self.queues[qi];
        q.max_budget = budget;
        if let Some(charge) = next {
            q.budget = budget.max(charge);
        }
    }

    /// `bfq_bfqq_expire`.
    fn expire(&mut self, qi: usize, compensate: bool, reason: Expiration, now: Time) {
        let (slow, delta_ms) = self.is_slow(qi, compensate, now);
        let q = &self.queues[qi];
        if q.wr_coeff == 1 && (slow || (reason == Expiration::BudgetTimeout && q.budget_left() >= q.budget as i64 / 3))
        {
            self.charge_time(qi, delta_ms);
        }
        if self.params.low_latency && self.queues[qi].wr_coeff == 1 {
            self.queues[qi].last_wr_start_finish = now;
        }
        self.rqs_injected = false;
        self.wait_dispatch = false;
        self.waited_rq = None;
        self.recalc_budget(qi, reason);
        // `__bfq_bfqq_expire`: an empty queue leaves the busy set unless it was preempted and needs idling.
        let q = &self.queues[qi];
        if q.requests.is_empty() && !(reason == Expiration::Preempted && self.idling_needed_for_guarantees(qi)) {
            if q.dispatched == 0 {
                self.queues[qi].budget_timeout = Some(now);
            }
            self.del_busy(qi);
        } else {
            self.requeue(qi);
        }
        self.stop_idling(qi);
        self.in_service = None;
        let q = &mut self.queues[qi];
        if !q.busy && reason != Expiration::BudgetTimeout && reason != Expiration::BudgetExhausted {
            // Keep the service: a request arriving in time goes on with this budget.
            q.non_blocking_wait_rq = true;
        } else {
            q.service = 0;
        }
    }

    // ---- request arrival ----

    /// `bfq_update_io_thinktime`, `bfq_update_has_short_ttime` and `bfq_update_io_seektime` for a request
    /// arriving at `qi`.
    fn update_arrival_stats(&mut self, qi: usize, rq: &SchedRequest, now: Time) {
        let slice_idle = self.params.slice_idle_ns;
        let q = &mut self.queues[qi];
        if q.dispatched == 0 && !q.busy {
            let elapsed = now.saturating_sub(q.last_end_request).min(2 * slice_idle);
            q.ttime_samples = (7 * q.ttime_samples + 256) / 8;
            q.ttime_total = (7 * q.ttime_total + 256 * elapsed) / 8;
            q.ttime_mean = (q.ttime_total + 128) / q.ttime_samples;
        }
        if q.sync && q.class != IDLE_CLASS && slice_idle != 0 {
            let short = !(q.ttime_samples > TTIME_VALID_SAMPLES && q.ttime_mean > slice_idle / 2);
            let changed = short != q.has_short_ttime;
            q.has_short_ttime = short;
            if changed && q.last_serv_time_ns == 0 && (now >= q.decrease_time + 100 * MS || !short) {
                self.reset_inject_limit(qi, now);
            }
        }
        let q = &mut self.queues[qi];
        let distance = if q.last_request_pos > 0 { rq.sector.abs_diff(q.last_request_pos) } else { 0 };
        let seeky = distance > SEEK_THR && rq.sectors < SECT_THR_NONROT;
        q.seek_history = (q.seek_history << 1) | u32::from(seeky);
    }

    /// `bfq_update_io_intensity`.
    fn update_io_intensity(&mut self, qi: usize, now: Time) {
        let q = &mut self.queues[qi];
        let tot_io_time = now.saturating_sub(q.io_start_time);
        if q.requests.is_empty() && q.dispatched == 0 {
            q.tot_idle_time += now.saturating_sub(q.last_end_request);
        }
        if q.just_created {
            return;
        }
        q.io_bound = q.tot_idle_time * 5 <= tot_io_time;
        if tot_io_time > 200 * MS {
            q.io_start_time = now - tot_io_time / 2;
            q.tot_idle_time /= 2;
        }
    }

    /// `bfq_updated_next_req`: a queue not in service whose next request changed gets a budget that fits it.
    fn updated_next_req(&mut self, qi: usize) {
        if self.in_service == Some(qi) {
            return;
        }
        let Some(charge) = self.next_charge(qi) else { return };
        let q = &self.queues[qi];
        let budget = q.max_budget.max(charge).max(q.service);
        if q.budget != budget {
            self.queues[qi].budget = budget;
            if self.queues[qi].tree == TreeState::Active {
                self.requeue(qi);
            }
        }
    }

    /// `bfq_bfqq_update_budg_for_activation`: whether the queue may preempt to recover its service hole.
    fn update_budget_for_activation(&mut self, qi: usize, arrived_in_time: bool) -> bool {
        let charge = self.next_charge(qi).unwrap_or(0);
        let q = &mut self.queues[qi];
        if q.non_blocking_wait_rq && arrived_in_time && q.budget_left() > 0 {
            q.budget = (q.budget_left() as u64).min(q.max_budget);
            q.service = 0;
            return true;
        }
        q.service = 0;
        q.budget = q.max_budget.max(charge);
        q.non_blocking_wait_rq = false;
        false
    }

    /// `bfq_bfqq_handle_idle_busy_switch`: the empty queue `qi` got a request. Returns whether it is deemed
    /// interactive.
    fn idle_busy_switch(&mut self, qi: usize, old_wr: u64, now: Time) -> bool {
        let q = &self.queues[qi];
        let idle_for_long = q.dispatched == 0 && q.budget_timeout.is_none_or(|t| t + WR_MIN_IDLE_NS < now);
        let arrived_in_time = now <= q.last_end_request + 3 * self.params.slice_idle_ns;
        let in_burst = q.in_large_burst;
        let interactive = !in_burst && idle_for_long && q.orig_weight == DEFAULT_WEIGHT;
        let deserves_wr = self.params.low_latency && (q.wr_coeff > 1 || (q.sync && interactive));
        let wants_to_preempt = self.update_budget_for_activation(qi, arrived_in_time);
        let q = &mut self.queues[qi];
        if !q.just_created && idle_for_long && q.budget_timeout.is_none_or(|t| t + 10_000 * MS < now) {
            q.in_large_burst = false;
            if q.in_burst_list {
                q.in_burst_list = false;
                self.burst_list.retain(|&i| i != qi);
            }
        }
        let q = &mut self.queues[qi];
        q.just_created = false;
        if self.params.low_latency {
            // `bfq_update_bfqq_wr_on_rq_arrival` (interactive raising; soft real-time is not modeled).
            if old_wr == 1 && deserves_wr {
                if interactive {
                    q.service_from_wr = 0;
                    q.wr_coeff = WR_COEFF;
                    q.wr_cur_max_time = WR_DURATION_NS;
                }
                q.budget = q.budget.min(2 * MIN_BUDGET);
            } else if old_wr > 1 {
                if interactive {
                    q.wr_coeff = WR_COEFF;
                    q.wr_cur_max_time = WR_DURATION_NS;
                } else if in_burst {
                    q.wr_coeff = 1;
                }
            }
            if old_wr != q.wr_coeff {
                q.weight_stale = true;
            }
        }
        self.add_busy(qi);
        // Preempt the in-service queue to recover a service hole, for a higher class or weight, or when it
        // does not need idling any more (`next_queue_may_preempt` always holds without cgroups).
        if let Some(s) = self.in_service.filter(|&s| s != qi) {
            let (q, sq) = (&self.queues[qi], &self.queues[s]);
            let higher = q.class < sq.class || q.weight > sq.weight;
            if (wants_to_preempt && q.wr_coeff >= sq.wr_coeff) || higher || !self.better_to_idle(s) {
                self.expire(s, false, Expiration::Preempted, now);
            }
        }
        interactive
    }

    /// `bfq_add_request`.
    fn add_request(&mut self, qi: usize, key: RqKey, w: Waiting, now: Time) {
        let rq = w.rq;
        let old_wr = self.queues[qi].wr_coeff;
        let sync = usize::from(rq.sync);
        self.queues[qi].queued[sync] += 1;
        self.queued_total += 1;
        if self.queues[qi].sync && self.task_requests.get(&rq.task).copied().unwrap_or(0) <= 1 {
            self.check_waker(qi, now);
            if now >= self.queues[qi].decrease_time + 1_000 * MS {
                self.reset_inject_limit(qi, now);
            }
            let q = &self.queues[qi];
            let sample =
                self.rq_in_driver == 0 || (q.last_serv_time_ns > 0 && self.rqs_injected && self.rq_in_driver > 0);
            if self.in_service == Some(qi) && sample && now >= q.decrease_time + 10 * MS {
                // Measure this first request's total service time (`wait_dispatch`, `waited_rq`).
                self.last_empty_occupied = now;
                self.wait_dispatch = true;
                if self.rq_in_driver == 0 {
                    self.rqs_injected = false;
                }
            }
        }
        if self.queues[qi].sync {
            self.update_io_intensity(qi, now);
        }
        let rule = self.seek_rule();
        let changed = self.queues[qi].requests.add(key, w, self.last_position, rule);
        let mut interactive = false;
        if !self.queues[qi].busy {
            interactive = self.idle_busy_switch(qi, old_wr, now);
        } else {
            let q = &mut self.queues[qi];
            if self.params.low_latency
                && old_wr == 1
                && !rq.sync
                && now > q.last_wr_start_finish + WR_MIN_INTER_ARR_ASYNC_NS
            {
                q.wr_coeff = WR_COEFF;
                q.wr_cur_max_time = WR_DURATION_NS;
                q.weight_stale = true;
                self.wr_busy += 1;
            }
            if changed {
                self.updated_next_req(qi);
            }
        }
        let q = &mut self.queues[qi];
        if self.params.low_latency && (old_wr == 1 || q.wr_coeff == 1 || interactive) {
            q.last_wr_start_finish = now;
        }
    }

    /// `bfq_rq_enqueued`: a request arriving at the in-service queue while it idles ends the idling (unless
    /// idling is for throughput and it is small), and expires the queue if its budget timed out.
    fn rq_enqueued(&mut self, qi: usize, rq: &SchedRequest, now: Time) {
        self.queues[qi].last_request_pos = rq.sector + u64::from(rq.sectors);
        if self.in_service != Some(qi) || !self.queues[qi].wait_request {
            return;
        }
        let q = &self.queues[qi];
        let small = q.queued[usize::from(rq.sync)] == 1 && rq.sectors < 32;
        let timed_out = q.budget_timed_out(now);
        if small && self.idling_boosts_throughput(qi) && !timed_out {
            return;
        }
        self.stop_idling(qi);
        if timed_out {
            self.expire(qi, false, Expiration::BudgetTimeout, now);
        }
    }

    /// `bfq_remove_request`: `key` leaves queue `qi` (dispatched at `now`, or taken out: `now` None, which
    /// leaves the once-per-slot FIFO check for a dispatch).
    fn remove_request(&mut self, qi: usize, key: RqKey, now: Option<Time>) -> Waiting {
        let rule = self.seek_rule();
        let q = &mut self.queues[qi];
        let mut fifo_checked = q.fifo_checked || now.is_none();
        let (w, changed) = q.requests.remove(key, &mut fifo_checked, now.unwrap_or(0), rule);
        if now.is_some() {
            q.fifo_checked = fifo_checked;
        }
        if changed {
            self.updated_next_req(qi);
        }
        let q = &mut self.queues[qi];
        q.queued[usize::from(w.rq.sync)] -= 1;
        self.queued_total -= 1;
        let slot = w.slot as usize;
        self.queued_per_slot[slot] = self.queued_per_slot[slot].saturating_sub(1);
        if q.requests.is_empty() && q.busy && self.in_service != Some(qi) {
            self.del_busy(qi);
            let q = &mut self.queues[qi];
            q.budget = 0;
            q.service = 0;
        }
        w
    }

    // ---- dispatch ----

    /// `bfq_select_queue`: the queue to dispatch from (the in-service one, or one to inject), or None while
    /// plugging or with nothing to do.
    fn select_queue(&mut self, now: Time) -> Option<usize> {
        let mut qi = self.in_service;
        if let Some(s) = qi {
            if self.queues[s].may_expire_for_budget_timeout(now) && !self.must_idle(s) {
                self.expire(s, false, Expiration::BudgetTimeout, now);
                qi = None;
            }
        }
        // Each pass keeps the queue or expires it; every expiration takes a queue out of service.
        for _ in 0..2 * self.queues.len() + 2 {
            let s = match qi {
                Some(s) => s,
                None => self.set_next_in_service(now)?,
            };
            if let Some(charge) = self.next_charge(s) {
                if charge as i64 > self.queues[s].budget_left() {
                    self.expire(s, false, Expiration::BudgetExhausted, now);
                    qi = None;
                    continue;
                }
                if self.queues[s].wait_request {
                    self.stop_idling(s);
                }
                return Some(s);
            }
            let q = &self.queues[s];
            if q.wait_request || (q.dispatched != 0 && self.better_to_idle(s)) {
                if let Some(w) = self.waker_or_woken(s) {
                    return Some(w);
                }
                let q = &self.queues[s];
                let inject =
                    !self.idling_boosts_throughput(s) && (q.wr_coeff == 1 || self.wr_busy > 1 || !q.has_short_ttime);
                return if inject { self.choose_for_injection(s, now) } else { None };
            }
            self.expire(s, false, Expiration::NoMoreRequests, now);
            qi = None;
        }
        None
    }

    /// `bfq_dispatch_rq_from_bfqq`.
    fn dispatch_from(&mut self, qi: usize, now: Time) -> SchedRequest {
        let key = self.queues[qi].requests.next.expect("a queue picked for dispatch has a request");
        let sectors = self.queues[qi].requests.get(key).rq.sectors;
        let charge = self.charge(qi, sectors);
        self.served(qi, charge);
        let rq = self.queues[qi].requests.get(key).rq;
        if self.in_service == Some(qi) && self.wait_dispatch {
            self.wait_dispatch = false;
            self.waited_rq = Some(rq.id);
        }
        self.queues[qi].dispatched += 1;
        self.last_position = rq.sector + u64::from(rq.sectors);
        self.remove_request(qi, key, Some(now));
        if self.in_service == Some(qi) {
            self.update_wr_data(qi, now);
            if self.tot_busy() > 1 && self.queues[qi].class == IDLE_CLASS {
                self.expire(qi, false, Expiration::BudgetExhausted, now);
            }
        }
        rq
    }

    /// `bfq_update_hw_tag`: detect whether the drive queues commands.
    fn update_hw_tag(&mut self) {
        self.max_rq_in_driver = self.max_rq_in_driver.max(self.rq_in_driver);
        if self.hw_tag == 1 || self.rq_in_driver + self.queued_total <= HW_QUEUE_THRESHOLD {
            return;
        }
        if let Some(s) = self.in_service {
            let q = &self.queues[s];
            let own = q.dispatched + q.queued[0] + q.queued[1];
            if q.has_short_ttime && own < HW_QUEUE_THRESHOLD && self.rq_in_driver < HW_QUEUE_THRESHOLD {
                return;
            }
        }
        self.hw_tag_samples += 1;
        if self.hw_tag_samples <= HW_QUEUE_SAMPLES {
            return;
        }
        self.hw_tag = i8::from(self.max_rq_in_driver > HW_QUEUE_THRESHOLD);
        self.max_rq_in_driver = 0;
        self.hw_tag_samples = 0;
    }

    /// The request `id` leaves the scheduler's count of its process's requests.
    fn task_request_done(&mut self, task: u32) {
        if let Some(n) = self.task_requests.get_mut(&task) {
            *n = n.saturating_sub(1);
        }
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
    fn take_work_ns(&mut self) -> Time {
        let visits: u64 = self.trees.iter_mut().map(ServiceTree::take_visits).sum();
        visits * self.params.tree_node_ns
    }
    fn insert(&mut self, hwq: u32, rq: SchedRequest, now: Time) {
        let slot = self.slot(hwq);
        *self.task_requests.entry(rq.task).or_default() += 1;
        // `bfq_init_rq`.
        let qi = self.queue_for(&rq, now);
        if self.queues[qi].just_created && (self.burst_size > 0 || self.tot_busy() == 0) {
            self.handle_burst(qi, now);
        }
        // `__bfq_insert_request`.
        self.update_arrival_stats(qi, &rq, now);
        let key = (rq.sector, self.next_seq);
        self.next_seq += 1;
        let fifo_time = now + FIFO_EXPIRE_NS[usize::from(rq.sync)];
        self.queued_per_slot[slot] += 1;
        self.add_request(qi, key, Waiting { rq, slot: slot as u32, fifo_time }, now);
        self.rq_enqueued(qi, &rq, now);
    }
    fn dispatch(&mut self, _hwq: u32, now: Time) -> Option<SchedRequest> {
        if self.tot_busy() == 0 {
            return None;
        }
        let qi = self.select_queue(now)?;
        let rq = self.dispatch_from(qi, now);
        self.rq_in_driver += 1;
        self.in_flight.insert(rq.id, qi);
        Some(rq)
    }
    fn completed(&mut self, rq: &SchedRequest, _latency_ns: Time, now: Time) {
        // Requests this scheduler did not dispatch (or already saw complete) are ignored.
        let Some(qi) = self.in_flight.remove(&rq.id) else { return };
        if self.waited_rq == Some(rq.id) {
            self.update_inject_limit(qi, now);
        }
        // `bfq_completed_request`.
        self.update_hw_tag();
        self.rq_in_driver -= 1;
        let q = &mut self.queues[qi];
        q.dispatched -= 1;
        if q.dispatched == 0 && !q.busy {
            q.budget_timeout = Some(now);
            self.weights_remove(qi);
        }
        self.queues[qi].last_end_request = now;
        self.last_completion = now;
        // Shared queues are kept out of waker detection.
        self.last_completed = (!self.queues[qi].shared).then_some(qi);
        if self.in_service == Some(qi) {
            if self.must_idle(qi) {
                if self.queues[qi].dispatched == 0 {
                    self.arm_slice_timer(qi, now);
                }
            } else if self.queues[qi].may_expire_for_budget_timeout(now) {
                self.expire(qi, false, Expiration::BudgetTimeout, now);
            } else if self.queues[qi].requests.is_empty()
                && (self.queues[qi].dispatched == 0 || !self.better_to_idle(qi))
            {
                self.expire(qi, false, Expiration::NoMoreRequests, now);
            }
        }
        self.task_request_done(rq.task);
    }
    fn queued(&self, hwq: u32) -> usize {
        self.queued_per_slot[self.slot(hwq)]
    }
    fn remove_first(&mut self, hwq: u32, matches: &mut dyn FnMut(&SchedRequest) -> bool) -> Option<SchedRequest> {
        // Only requests inserted for `hwq`, each queue in sector order.
        let slot = self.slot(hwq) as u32;
        let (qi, key) = (0..self.queues.len()).find_map(|qi| {
            self.queues[qi].requests.find(&mut |w| w.slot == slot && matches(&w.rq)).map(|key| (qi, key))
        })?;
        let w = self.remove_request(qi, key, None);
        self.task_request_done(w.rq.task);
        Some(w.rq)
    }
    fn alloc_limit(&self, rq: &SchedRequest, capacity: u32) -> u32 {
        // `bfq_update_depths`: 50% / 75% of the tags for async I/O and sync writes, 3/16 and 6/16 while a
        // queue is weight-raised; sync reads have them all.
        let raised = self.wr_busy > 0;
        let share = match (rq.sync, rq.op) {
            (true, Op::Read) => return capacity,
            (false, _) if raised => (capacity * 3) >> 4,
            (false, _) => capacity >> 1,
            (true, _) if raised => (capacity * 6) >> 4,
            (true, _) => (capacity * 3) >> 2,
        };
        share.max(1)
    }
    fn timer_due(&self) -> Option<Time> {
        self.idle_timer
    }
    fn timer(&mut self, now: Time) {
        // `bfq_idle_slice_timer_body`.
        if self.idle_timer.is_none_or(|t| t > now) {
            return;
        }
        self.idle_timer = None;
        let Some(qi) = self.in_service else { return };
        self.queues[qi].wait_request = false;
        let reason = if self.queues[qi].budget_timed_out(now) {
            Expiration::BudgetTimeout
        } else if self.queues[qi].requests.is_empty() {
            Expiration::TooIdle
        } else {
            return;
        };
        self.expire(qi, true, reason, now);
    }
}
