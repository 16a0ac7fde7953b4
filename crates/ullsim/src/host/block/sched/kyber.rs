//! `kyber`: Linux's token-based latency scheduler (block/kyber-iosched.c, as of 6.x), rule by rule.
//!
//! Modeled, with Linux's defaults:
//! - Requests fall into scheduling domains by operation (`kyber_sched_domain`): READ, WRITE (sync or async),
//!   DISCARD and OTHER (flushes and the rest). The simulator makes no discards and sends flushes around the
//!   scheduler, so only READ and WRITE carry requests; the other two are kept so that the rotation and the
//!   tables are Linux's.
//! - Each domain has a device-wide token pool (`kyber_depth`: READ 256, WRITE 128, DISCARD 64, OTHER 16
//!   at most); a request needs one of its domain's tokens to be dispatched and gives it back in `completed`.
//! - Per hardware queue, a FIFO per domain. Dispatch continues the hardware queue's current domain while
//!   its batch (`kyber_batch_size`: 16, 8, 1, 1) is not used up; otherwise, or when that domain has no
//!   request or no token, it starts a new batch with the next domain round-robin (wrapping back to the
//!   current one last), skipping domains without requests or tokens; None when nothing can go. When
//!   `dispatch` returns None for lack of tokens the block layer tries again after a completion.
//! - Async requests (writeback) may hold at most 75% of the scheduler tags (`KYBER_ASYNC_PERCENT`,
//!   `kyber_limit_depth`); sync ones all of them.
//! - Latency feedback: every completion of a READ, WRITE or DISCARD request adds its total latency
//!   (`latency_ns`, insertion to completion) and its I/O latency (dispatch to completion) to its domain's two
//!   histograms of 8 buckets of width target/4 (`add_latency_sample`; targets READ 2 ms, WRITE 10 ms, DISCARD
//!   5 s), and arms the timer 100 ms ahead if it is not armed (`timer_reduce(jiffies + HZ / 10)`; later
//!   completions do not push it back). The timer (`kyber_timer_fn`) first asks every domain for the p90 of
//!   its I/O latency, then for the p99 of its total latency (`calculate_percentile`). A histogram gives its
//!   percentile once it holds 500 samples or once the domain's window deadline has passed, and is then
//!   emptied; the deadline is set 1 s ahead by the first such question that finds samples and no deadline,
//!   and cleared when a percentile is given. The two histograms share the deadline, so a window that closes
//!   on time with fewer than 500 samples yields the I/O p90 only: the p99 question that follows finds the
//!   deadline cleared, sets a new one and waits (its histogram keeps its samples), as in Linux. Any domain's
//!   p90 at or above its target (bucket >= 4) means congestion. Then, per domain: under congestion the p99
//!   is this window's or, if none, the one remembered from an earlier window, which is then forgotten;
//!   without congestion a new p99 is remembered. A domain with a p99 bucket b is rescaled, depth <- depth *
//!   (b + 1) / 4 clamped to [1, max], if there is congestion or b >= 4. So a slow device does not shrink
//!   the slow domain itself: it throttles the others (a p99 at 3/4 of the target cuts a depth to 3/4); a
//!   throttled domain grows back only when its own total latency passes its target (a p99 at 2x the target
//!   doubles its depth). At ULL latencies no bucket ever reaches the targets and the depths stay at their
//!   maximum.
//!
//! Hardware queues: queues and batching state are per hardware queue, tokens and latency statistics are
//! device-wide, as in Linux. `dispatch(hwq)` returns only requests inserted for `hwq`.
//!
//! Ignored: the per-CPU software queues inside each hardware queue (Linux flushes them into the domain list
//! in CPU order when a token is free; here requests keep arrival order) and the merges made there; the
//! token wait queue's batching (Linux wakes a hardware queue waiting for tokens after `wake_batch`, up to 8,
//! tokens are freed, and blk-mq re-runs a queue 3 ms after a run that dispatched nothing; here every
//! completion re-runs the queues); the timer's jiffy granularity. The timer runs lazily: at the first
//! `insert`, `dispatch` or `completed` call at or after its due time (the only moments its result can be
//! observed), with the due time as its clock.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::{IoScheduler, SchedCosts, SchedRequest};
use crate::config::host::BlockConfig;
use crate::engine::Time;
use crate::request::{Op, ReqId};

const MS: Time = 1_000_000;

/// Scheduling domains, used as indices.
const READ: usize = 0;
const WRITE: usize = 1;
const DISCARD: usize = 2;
const OTHER: usize = 3;
const DOMAINS: usize = 4;
/// Domains whose latencies are measured (all but OTHER).
const MEASURED: usize = OTHER;

/// Maximum device-wide tokens (in-flight requests) per domain (`kyber_depth`).
const MAX_DEPTH: [u32; DOMAINS] = [256, 128, 64, 16];
/// Requests dispatched in a row from one domain before moving to the next (`kyber_batch_size`).
const BATCH: [u32; DOMAINS] = [16, 8, 1, 1];
/// DISCARD's latency target (`kyber_latency_targets`; it has no sysfs file).
const DISCARD_TARGET_NS: Time = 5_000 * MS;
/// Share of the scheduler tags async requests may hold (`KYBER_ASYNC_PERCENT`).
const ASYNC_PERCENT: u32 = 75;

/// The tunables (`host.block.kyber_*`): the latency target per domain, in ns (sysfs `read_lat_nsec`,
/// `write_lat_nsec`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KyberParams {
    pub target_ns: [Time; 2],
}

impl KyberParams {
    pub fn from_config(cfg: &BlockConfig) -> Self {
        KyberParams { target_ns: [cfg.kyber_read_lat_nsec.0, cfg.kyber_write_lat_nsec.0] }
    }
}

impl Default for KyberParams {
    /// Linux's `kyber_latency_targets`: 2 ms for reads, 10 ms for writes.
    fn default() -> Self {
        KyberParams { target_ns: [2 * MS, 10 * MS] }
    }
}

/// Histogram buckets are target >> LATENCY_SHIFT wide; the first GOOD_BUCKETS are at or under target.
const LATENCY_SHIFT: u32 = 2;
const GOOD_BUCKETS: usize = 1 << LATENCY_SHIFT;
const BUCKETS: usize = 2 << LATENCY_SHIFT;

/// A histogram gives its percentile once it has this many samples...
const WINDOW_SAMPLES: u32 = 500;
/// ...or once this long has passed since the domain's deadline was set (HZ).
const WINDOW_NS: Time = 1_000 * MS;
/// The timer runs this long after a completion that found it unarmed (HZ / 10).
const TIMER_NS: Time = 100 * MS;

fn domain_of(op: Op) -> usize {
    match op {
        Op::Read => READ,
        Op::Write => WRITE,
        // REQ_OP_FLUSH falls to KYBER_OTHER; flushes go around the scheduler (blk_insert_flush;
        // `FullHost::submit_to_block`), so none reaches it.
        Op::Flush => OTHER,
    }
}

/// Histogram bucket of a latency (`add_latency_sample`).
fn bucket_of(latency_ns: Time, target_ns: Time) -> usize {
    if latency_ns == 0 {
        return 0;
    }
    let width = (target_ns >> LATENCY_SHIFT).max(1);
    ((latency_ns - 1) / width).min(BUCKETS as u64 - 1) as usize
}

/// Bucket holding the `percent` percentile of `buckets` (the rank loop of `calculate_percentile`).
fn percentile_bucket(buckets: &[u32; BUCKETS], samples: u32, percent: u32) -> usize {
    let mut rank = (samples as u64 * percent as u64).div_ceil(100);
    for (bucket, &count) in buckets.iter().enumerate().take(BUCKETS - 1) {
        if count as u64 >= rank {
            return bucket;
        }
        rank -= count as u64;
    }
    BUCKETS - 1
}

/// The two histograms of a measured domain (`latency_buckets[domain]`) and their shared window deadline
/// (`latency_timeout[domain]`).
#[derive(Debug, Default, Clone, Copy)]
struct DomainLatency {
    /// Insertion to completion (KYBER_TOTAL_LATENCY).
    total: [u32; BUCKETS],
    /// Dispatch to completion (KYBER_IO_LATENCY): device time, plus driver.
    io: [u32; BUCKETS],
    deadline: Option<Time>,
}

impl DomainLatency {
    /// `calculate_percentile` on the I/O histogram (`io`) or the total one: the bucket of the `percent`
    /// percentile if the histogram may give it now, emptying it; None if it has no samples or must wait.
    fn percentile(&mut self, io: bool, percent: u32, now: Time) -> Option<usize> {
        let buckets = if io { &mut self.io } else { &mut self.total };
        let samples = buckets.iter().fold(0u32, |s, &c| s.saturating_add(c));
        if samples == 0 {
            return None;
        }
        let deadline = *self.deadline.get_or_insert(now.saturating_add(WINDOW_NS));
        if samples < WINDOW_SAMPLES && now < deadline {
            return None;
        }
        self.deadline = None;
        let bucket = percentile_bucket(buckets, samples, percent);
        *buckets = [0; BUCKETS];
        Some(bucket)
    }
}

/// A hardware queue's waiting requests and batch state (`kyber_hctx_data`).
#[derive(Debug, Default)]
struct HwQueue {
    waiting: [VecDeque<SchedRequest>; DOMAINS],
    cur_domain: usize,
    /// Requests dispatched in the current batch.
    batching: u32,
}

/// A dispatched request holding a token.
#[derive(Debug, Clone, Copy)]
struct TokenHold {
    domain: u8,
    dispatched_at: Time,
}

pub struct Kyber {
    hwqs: Vec<HwQueue>,
    /// Current token depth and tokens in use, per domain, device-wide.
    depth: [u32; DOMAINS],
    in_flight: [u32; DOMAINS],
    latency: [DomainLatency; MEASURED],
    /// The p99 bucket remembered from a window without congestion (`domain_p99`), used once.
    remembered_p99: [Option<usize>; MEASURED],
    timer_due: Option<Time>,
    holds: FxHashMap<ReqId, TokenHold>,
    target_ns: [Time; MEASURED],
    /// Per domain, the hardware queues that found no token, oldest first (the domain's sbitmap wait queue):
    /// a freed token goes to the first of them, so a queue that waits is not passed over for ever by the
    /// queues whose completions free the tokens (every completion re-runs its own queue first).
    token_waiters: [VecDeque<usize>; DOMAINS],
}

impl Kyber {
    pub fn new(hw_queues: u32, params: KyberParams) -> Self {
        Kyber {
            target_ns: std::array::from_fn(|d| if d == DISCARD { DISCARD_TARGET_NS } else { params.target_ns[d] }),
            hwqs: (0..hw_queues.max(1)).map(|_| HwQueue::default()).collect(),
            depth: MAX_DEPTH,
            in_flight: [0; DOMAINS],
            latency: Default::default(),
            remembered_p99: [None; MEASURED],
            timer_due: None,
            holds: FxHashMap::default(),
            token_waiters: Default::default(),
        }
    }

    /// Slot of a hardware queue; out-of-range numbers fold back instead of panicking.
    fn slot(&self, hwq: u32) -> usize {
        hwq as usize % self.hwqs.len()
    }

    /// Run the feedback timer if it is due, at its due time.
    fn run_timer_if_due(&mut self, now: Time) {
        if let Some(due) = self.timer_due.filter(|&due| due <= now) {
            self.timer_due = None;
            self.adjust_depths(due);
        }
    }

    /// `kyber_timer_fn` at `now`: the p90s of I/O latency decide congestion, the p99s of total latency
    /// rescale the depths.
    fn adjust_depths(&mut self, now: Time) {
        let mut congested = false;
        for latency in &mut self.latency {
            congested |= latency.percentile(true, 90, now).is_some_and(|p90| p90 >= GOOD_BUCKETS);
        }
        let domains = self.latency.iter_mut().zip(&mut self.remembered_p99).zip(&mut self.depth).zip(MAX_DEPTH);
        for (((latency, remembered), depth), max) in domains {
            let mut p99 = latency.percentile(false, 99, now);
            if congested {
                // Use what an earlier window saw if this one gave nothing, then forget it so that the domain
                // is not throttled again before new data.
                p99 = p99.or(remembered.take());
            } else if p99.is_some() {
                *remembered = p99;
            }
            let Some(p99) = p99 else { continue };
            // Depth scales with p99 / target: throttle good domains under congestion, relax bad ones always.
            if congested || p99 >= GOOD_BUCKETS {
                let scaled = (*depth as u64 * (p99 as u64 + 1)) >> LATENCY_SHIFT;
                *depth = scaled.clamp(1, max as u64) as u32;
            }
        }
    }

    /// Dispatch from the hardware queue's current domain if it has a request and a token is free.
    /// A queue that finds no token joins the domain's waiters, and while others wait only the first may
    /// take a freed token (as sbitmap wakes its waiters in turn).
    fn dispatch_cur_domain(&mut self, slot: usize, now: Time) -> Option<SchedRequest> {
        let d = self.hwqs[slot].cur_domain;
        if self.hwqs[slot].waiting[d].is_empty() {
            return None;
        }
        let waiters = &mut self.token_waiters[d];
        // Waiters with nothing left to dispatch in the domain have stopped waiting.
        while waiters.front().is_some_and(|&w| self.hwqs[w].waiting[d].is_empty()) {
            waiters.pop_front();
        }
        let first = waiters.front().is_none_or(|&w| w == slot);
        if self.in_flight[d] >= self.depth[d] || !first {
            if !waiters.contains(&slot) {
                waiters.push_back(slot);
            }
            return None;
        }
        if !waiters.is_empty() {
            waiters.pop_front();
        }
        let hq = &mut self.hwqs[slot];
        let rq = hq.waiting[d].pop_front()?;
        hq.batching += 1;
        self.in_flight[d] += 1;
        self.holds.insert(rq.id, TokenHold { domain: d as u8, dispatched_at: now });
        Some(rq)
    }
}

impl IoScheduler for Kyber {
    fn name(&self) -> &'static str {
        "kyber"
    }
    fn costs(&self) -> SchedCosts {
        // Per-hardware-queue locks and per-CPU statistics: no queue-wide lock.
        SchedCosts { insert_ns: 200, dispatch_ns: 300, completed_ns: 150, global_lock: false }
    }
    fn insert(&mut self, hwq: u32, rq: SchedRequest, now: Time) {
        self.run_timer_if_due(now);
        let slot = self.slot(hwq);
        self.hwqs[slot].waiting[domain_of(rq.op)].push_back(rq);
    }
    fn dispatch(&mut self, hwq: u32, now: Time) -> Option<SchedRequest> {
        self.run_timer_if_due(now);
        let slot = self.slot(hwq);
        let hq = &self.hwqs[slot];
        if hq.batching < BATCH[hq.cur_domain] {
            if let Some(rq) = self.dispatch_cur_domain(slot, now) {
                return Some(rq);
            }
        }
        // Start a new batch with the next domain that can go, coming back to the current one last.
        self.hwqs[slot].batching = 0;
        for _ in 0..DOMAINS {
            let hq = &mut self.hwqs[slot];
            hq.cur_domain = (hq.cur_domain + 1) % DOMAINS;
            if let Some(rq) = self.dispatch_cur_domain(slot, now) {
                return Some(rq);
            }
        }
        None
    }
    fn completed(&mut self, rq: &SchedRequest, latency_ns: Time, now: Time) {
        // Requests that hold no token (not dispatched here, or already completed) are ignored.
        let Some(hold) = self.holds.remove(&rq.id) else { return };
        let d = hold.domain as usize;
        self.in_flight[d] = self.in_flight[d].saturating_sub(1);
        // The timer due before this completion runs on the samples that came before it.
        self.run_timer_if_due(now);
        if d >= MEASURED {
            return;
        }
        let target = self.target_ns[d];
        let l = &mut self.latency[d];
        let (total, io) = (bucket_of(latency_ns, target), bucket_of(now.saturating_sub(hold.dispatched_at), target));
        l.total[total] = l.total[total].saturating_add(1);
        l.io[io] = l.io[io].saturating_add(1);
        self.timer_due.get_or_insert(now.saturating_add(TIMER_NS));
    }
    fn queued(&self, hwq: u32) -> usize {
        self.hwqs[self.slot(hwq)].waiting.iter().map(VecDeque::len).sum()
    }
    fn remove_first(&mut self, hwq: u32, matches: &mut dyn FnMut(&SchedRequest) -> bool) -> Option<SchedRequest> {
        // A waiting request holds no token yet: taking it out touches only its FIFO.
        let slot = self.slot(hwq);
        self.hwqs[slot].waiting.iter_mut().find_map(|fifo| super::remove_first_in(fifo, matches))
    }
    fn alloc_limit(&self, rq: &SchedRequest, capacity: u32) -> u32 {
        super::sync_or_share(rq, capacity, ASYNC_PERCENT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rq(id: u32, op: Op) -> SchedRequest {
        SchedRequest { id: ReqId(id), op, sector: id as u64 * 8, ..super::super::test_request() }
    }

    fn drain(k: &mut Kyber, hwq: u32, now: Time) -> Vec<SchedRequest> {
        std::iter::from_fn(|| k.dispatch(hwq, now)).collect()
    }

    #[test]
    fn tokens_bound_in_flight_per_domain_and_completions_return_them() {
        let mut k = Kyber::new(2, KyberParams::default());
        for i in 0..300 {
            k.insert(i % 2, rq(i, Op::Read), 0);
        }
        for i in 300..500 {
            k.insert(0, rq(i, Op::Write), 0);
        }
        // Device-wide: the two hardware queues share the read tokens.
        let from0 = drain(&mut k, 0, 1);
        let from1 = drain(&mut k, 1, 1);
        let reads = from0.iter().chain(&from1).filter(|r| r.op == Op::Read).count();
        let writes = from0.iter().chain(&from1).filter(|r| r.op == Op::Write).count();
        assert_eq!((reads, writes), (256, 128));
        assert_eq!(k.queued(0) + k.queued(1), 500 - 256 - 128);
        // A completion returns one token: exactly one more request of that domain can go.
        let done = from0.iter().find(|r| r.op == Op::Write).unwrap();
        k.completed(done, 1_000, 2);
        let next = drain(&mut k, 0, 3);
        assert_eq!(next.len(), 1);
        assert_eq!(next[0].op, Op::Write);
        // Unknown or repeated completions give nothing back.
        k.completed(done, 1_000, 4);
        k.completed(&rq(9_999, Op::Read), 1_000, 4);
        assert_eq!(drain(&mut k, 0, 5).len(), 0);
        assert_eq!(k.in_flight, [256, 128, 0, 0]);
    }

    #[test]
    fn a_freed_token_goes_to_the_queue_that_waited_first() {
        // Queue 1 holds every read token and waits for more; then queue 0's reader finds none and waits
        // behind it. Freed tokens go to the waiters in turn, whichever queue the block layer runs first.
        let mut k = Kyber::new(2, KyberParams::default());
        for i in 0..400 {
            k.insert(1, rq(i, Op::Read), 0);
        }
        let held = drain(&mut k, 1, 1);
        assert_eq!(held.len(), 256, "queue 1 then waits for a token");
        k.insert(0, rq(1_000, Op::Read), 2);
        assert!(k.dispatch(0, 2).is_none(), "no token: queue 0 waits behind queue 1");
        k.completed(&held[0], 1_000, 3);
        assert!(k.dispatch(0, 3).is_none(), "the token is queue 1's: it waited first");
        assert!(k.dispatch(1, 3).is_some());
        assert!(k.dispatch(1, 3).is_none(), "queue 1 waits again, now behind queue 0");
        k.completed(&held[1], 1_000, 4);
        assert!(k.dispatch(1, 4).is_none(), "queue 1 runs first but may not take queue 0's token");
        assert_eq!(k.dispatch(0, 4).map(|r| r.id), Some(ReqId(1_000)));
        k.completed(&held[2], 1_000, 5);
        assert!(k.dispatch(1, 5).is_some(), "queue 0 has nothing left to wait for: queue 1 takes it");
    }

    #[test]
    fn batches_round_robin_between_domains() {
        let mut k = Kyber::new(1, KyberParams::default());
        for i in 0..100 {
            k.insert(0, rq(i, Op::Read), 0);
            k.insert(0, rq(1000 + i, Op::Write), 0);
        }
        let order: Vec<Op> = (0..48).map(|_| k.dispatch(0, 1).unwrap().op).collect();
        let mut expected = Vec::new();
        for _ in 0..2 {
            expected.extend([Op::Read; 16]);
            expected.extend([Op::Write; 8]);
        }
        assert_eq!(order, expected);
        // A domain out of tokens is skipped: with writes throttled to 1 in flight, reads go on.
        k.depth[WRITE] = 1;
        let more: Vec<Op> = (0..20).map_while(|_| k.dispatch(0, 2)).map(|r| r.op).collect();
        assert!(more.iter().all(|&o| o == Op::Read), "{more:?}");
        assert_eq!(more.len(), 20);
    }

    /// Run `n` requests of `op` one after the other starting at `start`: each waits `queue_ns` in the
    /// scheduler and `device_ns` after dispatch. Returns the end time.
    fn run_serial(k: &mut Kyber, op: Op, n: u32, start: Time, queue_ns: Time, device_ns: Time, id: &mut u32) -> Time {
        let mut t = start;
        for _ in 0..n {
            *id += 1;
            let r = SchedRequest { inserted_at: t, ..rq(*id, op) };
            k.insert(0, r, t);
            let d = k.dispatch(0, t + queue_ns).expect("a token is free");
            assert_eq!(d.id, r.id);
            t += queue_ns + device_ns;
            k.completed(&d, queue_ns + device_ns, t);
            t += 1;
        }
        t
    }

    #[test]
    fn ull_latencies_keep_depths_at_max() {
        let mut k = Kyber::new(1, KyberParams::default());
        let (mut t, mut id) = (0, 0);
        for _ in 0..20_000 {
            t = run_serial(&mut k, Op::Read, 1, t, 2_000, 20_000, &mut id);
            t = run_serial(&mut k, Op::Write, 1, t, 2_000, 30_000, &mut id);
        }
        assert!(t > 10 * TIMER_NS, "several windows closed");
        assert_eq!(k.depth, MAX_DEPTH);
    }

    #[test]
    fn slow_device_throttles_fast_domain_and_backlog_restores_it() {
        let mut k = Kyber::new(1, KyberParams::default());
        let (mut t, mut id) = (0, 0);
        // Reads take 20 ms in the device (10x their target); writes are fast. The device is congested, so
        // the domain with good latency (writes) is throttled; the slow reads keep their full depth.
        while k.depth[WRITE] > 1 {
            assert!(t < 120_000 * MS, "write depth never reached 1: {:?}", k.depth);
            t = run_serial(&mut k, Op::Read, 1, t, 0, 20 * MS, &mut id);
            t = run_serial(&mut k, Op::Write, 1, t, 0, 100_000, &mut id);
            assert_eq!(k.depth[READ], MAX_DEPTH[READ]);
        }
        // Fast again, writes not waiting: no congestion and good latency, so nothing changes (Linux only
        // relaxes a domain whose own latency is bad).
        let before = t;
        while t < before + 5 * WINDOW_NS {
            t = run_serial(&mut k, Op::Read, 1, t, 0, 20_000, &mut id);
            t = run_serial(&mut k, Op::Write, 1, t, 0, 20_000, &mut id);
        }
        assert_eq!(k.depth, [MAX_DEPTH[READ], 1, MAX_DEPTH[DISCARD], MAX_DEPTH[OTHER]]);
        // Writes now back up behind the single token: their total latency (25 ms, over 1.75x target) puts the
        // p99 in the last bucket and the depth doubles each window back to the maximum.
        let mut depths = vec![k.depth[WRITE]];
        while k.depth[WRITE] < MAX_DEPTH[WRITE] {
            assert!(t < before + 120_000 * MS, "write depth never recovered: {depths:?}");
            t = run_serial(&mut k, Op::Read, 1, t, 0, 20_000, &mut id);
            t = run_serial(&mut k, Op::Write, 1, t, 25 * MS, 20_000, &mut id);
            if *depths.last().unwrap() != k.depth[WRITE] {
                depths.push(k.depth[WRITE]);
            }
        }
        assert_eq!(depths, [1, 2, 4, 8, 16, 32, 64, 128]);
        assert_eq!(k.depth[READ], MAX_DEPTH[READ]);
    }

    /// `read_lat_nsec` is what "congested" is measured against: 20 ms reads throttle the writes under the
    /// default 2 ms target, and do not under a 40 ms one (sysfs `read_lat_nsec` = 40000000).
    #[test]
    fn the_read_target_decides_whether_slow_reads_throttle_writes() {
        let params = KyberParams { target_ns: [40 * MS, 10 * MS] };
        for (params, throttled) in [(KyberParams::default(), true), (params, false)] {
            let mut k = Kyber::new(1, params);
            let (mut t, mut id) = (0, 0);
            while t < 20 * WINDOW_NS {
                t = run_serial(&mut k, Op::Read, 1, t, 0, 20 * MS, &mut id);
                t = run_serial(&mut k, Op::Write, 1, t, 0, 100_000, &mut id);
            }
            assert_eq!(k.depth[WRITE] < MAX_DEPTH[WRITE], throttled, "{params:?}: depths {:?}", k.depth);
            assert_eq!(k.depth[READ], MAX_DEPTH[READ]);
        }
    }

    /// `n` requests of `op` inserted together at `start`, dispatched `queue_ns` later and completed `io_ns`
    /// after that. Returns the completion time.
    fn wave(k: &mut Kyber, op: Op, n: u32, start: Time, queue_ns: Time, io_ns: Time, id: &mut u32) -> Time {
        let reqs: Vec<SchedRequest> = (0..n)
            .map(|_| {
                *id += 1;
                SchedRequest { inserted_at: start, ..rq(*id, op) }
            })
            .collect();
        for r in &reqs {
            k.insert(0, *r, start);
        }
        for r in &reqs {
            assert_eq!(k.dispatch(0, start + queue_ns).map(|d| d.id), Some(r.id), "a token is free");
        }
        let end = start + queue_ns + io_ns;
        for r in &reqs {
            k.completed(r, queue_ns + io_ns, end);
        }
        end
    }

    /// 500 writes at 0.1 ms, and the timer: with no congestion the writes' p99 (bucket 0) is remembered.
    /// Returns when the last write completed.
    fn remember_a_good_write_p99(k: &mut Kyber, id: &mut u32) -> Time {
        let mut t = 0;
        for _ in 0..4 {
            t = wave(k, Op::Write, 125, t, 0, 100_000, id);
        }
        fire_timer(k);
        t
    }

    /// Let the armed timer run (at its due time, seen at the next call).
    fn fire_timer(k: &mut Kyber) -> Time {
        let due = k.timer_due.expect("the timer is armed");
        assert_eq!(k.dispatch(0, due), None);
        assert_eq!(k.timer_due, None);
        due
    }

    /// The timer runs 100 ms after the completion that armed it; later completions do not push it back
    /// (`timer_reduce`).
    #[test]
    fn timer_runs_100ms_after_the_first_completion() {
        let mut k = Kyber::new(1, KyberParams::default());
        let mut id = 0;
        wave(&mut k, Op::Read, 1, 0, 0, 10_000, &mut id);
        assert_eq!(k.timer_due, Some(10_000 + TIMER_NS));
        wave(&mut k, Op::Write, 1, 50 * MS, 0, 10_000, &mut id);
        assert_eq!(k.timer_due, Some(10_000 + TIMER_NS));
        fire_timer(&mut k);
        wave(&mut k, Op::Read, 1, 200 * MS, 0, 10_000, &mut id);
        assert_eq!(k.timer_due, Some(200 * MS + 10_000 + TIMER_NS));
    }

    /// Congestion (a domain's p90 I/O latency over its target) shrinks every other domain with a p99 to
    /// depth * (p99 bucket + 1) / 4, while the slow domain keeps its depth (its p99 is past its target, so it
    /// would grow, and is clamped at its maximum).
    #[test]
    fn a_domain_missing_its_target_shrinks_the_others() {
        let mut k = Kyber::new(1, KyberParams::default());
        let mut id = 0;
        // 500 reads at 3 ms in the device (target 2 ms: bucket 5); 500 writes at 5 ms (target 10 ms: bucket 1).
        let mut t = wave(&mut k, Op::Read, 250, 0, 0, 3 * MS, &mut id);
        t = wave(&mut k, Op::Read, 250, t, 0, 3 * MS, &mut id);
        for _ in 0..4 {
            t = wave(&mut k, Op::Write, 125, t, 0, 5 * MS, &mut id);
        }
        assert!(t < k.timer_due.unwrap());
        fire_timer(&mut k);
        assert_eq!(k.depth, [256, 128 * 2 / 4, 64, 16]);
        // Without congestion a good domain is left alone.
        let mut k = Kyber::new(1, KyberParams::default());
        let mut t = 0;
        for _ in 0..4 {
            t = wave(&mut k, Op::Write, 125, t, 0, 5 * MS, &mut id);
        }
        fire_timer(&mut k);
        assert_eq!(k.depth, MAX_DEPTH);
    }

    /// A p99 at twice the target (the last bucket) doubles a throttled domain's depth, congestion or not.
    #[test]
    fn p99_at_twice_the_target_doubles_the_depth() {
        let mut k = Kyber::new(1, KyberParams::default());
        k.depth[WRITE] = 10;
        let mut id = 0;
        // Writes wait 19 ms for tokens and take 1 ms in the device: total 20 ms, I/O latency good.
        let mut t = 0;
        for _ in 0..50 {
            t = wave(&mut k, Op::Write, 10, t, 19 * MS, MS, &mut id);
        }
        k.timer_due = Some(t);
        fire_timer(&mut k);
        assert_eq!(k.depth[WRITE], 20);
        assert_eq!(k.depth[READ], 256);
    }

    /// A histogram short of 500 samples gives its percentile once the domain's deadline, set 1 s ahead by the
    /// first timer run that found samples, has passed: a few slow reads then count as congestion.
    #[test]
    fn a_short_window_closes_after_one_second() {
        let mut k = Kyber::new(1, KyberParams::default());
        let mut id = 0;
        // A write p99 (bucket 0) is remembered from a window without congestion.
        remember_a_good_write_p99(&mut k, &mut id);
        assert_eq!(k.remembered_p99[WRITE], Some(0));
        // Ten reads at 3 ms in the device: the first timer run sets the deadline and waits.
        let t = wave(&mut k, Op::Read, 10, 300 * MS, 0, 3 * MS, &mut id);
        let first = fire_timer(&mut k);
        assert_eq!(k.latency[READ].deadline, Some(first + WINDOW_NS));
        assert_eq!(k.depth[WRITE], 128);
        // A run before the deadline still waits...
        wave(&mut k, Op::Read, 1, t + 200 * MS, 0, 3 * MS, &mut id);
        assert!(fire_timer(&mut k) < first + WINDOW_NS);
        assert_eq!(k.depth[WRITE], 128);
        // ...the first one after it closes the window: congestion, and writes go to 128 * 1 / 4.
        wave(&mut k, Op::Read, 1, first + WINDOW_NS, 0, 3 * MS, &mut id);
        fire_timer(&mut k);
        assert_eq!(k.depth[WRITE], 32);
        assert_eq!(k.remembered_p99[WRITE], None, "a remembered p99 is used once");
    }

    /// The I/O and total histograms of a domain share its deadline: when a short window closes on time, the
    /// I/O p90 clears the deadline and the total p99 asked next sets a new one and waits, keeping its samples
    /// (Linux's `latency_timeout` per domain). The total p99 then comes once 500 samples have gathered.
    #[test]
    fn the_total_p99_of_a_window_closed_on_time_waits_for_500_samples() {
        let mut k = Kyber::new(1, KyberParams::default());
        k.depth[READ] = 10;
        let mut id = 0;
        // Reads wait 4 ms for tokens and take 0.1 ms in the device: total latency past 1.75x the 2 ms target
        // (the last bucket, which doubles the depth), I/O latency good: no congestion.
        let mut t = 0;
        let mut samples = 0;
        let mut windows = 0;
        while samples < WINDOW_SAMPLES {
            wave(&mut k, Op::Read, 10, t, 4 * MS, 100_000, &mut id);
            samples += 10;
            t = fire_timer(&mut k) + 250 * MS;
            if samples < WINDOW_SAMPLES {
                assert_eq!(k.depth[READ], 10, "after {samples} samples");
                windows += k.latency[READ].io.iter().all(|&c| c == 0) as u32;
            }
        }
        assert!(windows > 5, "several I/O windows closed on time ({windows})");
        assert_eq!(k.depth[READ], 20);
    }

    /// A remembered p99 throttles once, at the first congestion; a second congestion without new data for
    /// the domain leaves it alone.
    #[test]
    fn a_remembered_p99_is_used_once() {
        let mut k = Kyber::new(1, KyberParams::default());
        let mut id = 0;
        let mut t = remember_a_good_write_p99(&mut k, &mut id);
        for round in 0..2 {
            t = wave(&mut k, Op::Read, 250, t + 200 * MS, 0, 3 * MS, &mut id);
            t = wave(&mut k, Op::Read, 250, t, 0, 3 * MS, &mut id);
            fire_timer(&mut k);
            assert_eq!(k.depth[WRITE], 32, "round {round}");
        }
    }

    /// Flushes fall in OTHER: 16 tokens at most, batches of one request.
    #[test]
    fn other_domain_has_16_tokens_and_batches_of_one() {
        let mut k = Kyber::new(1, KyberParams::default());
        for i in 0..64 {
            k.insert(0, rq(i, Op::Read), 0);
            k.insert(0, rq(1000 + i, Op::Flush), 0);
        }
        let order: Vec<Op> = (0..34).map(|_| k.dispatch(0, 1).unwrap().op).collect();
        let mut expected = vec![Op::Read; 16];
        expected.push(Op::Flush);
        expected.extend([Op::Read; 16]);
        expected.push(Op::Flush);
        assert_eq!(order, expected);
        let rest: Vec<Op> = std::iter::from_fn(|| k.dispatch(0, 2)).map(|r| r.op).collect();
        assert_eq!(rest.iter().filter(|&&o| o == Op::Flush).count(), 14, "16 flush tokens in all");
        assert_eq!(k.in_flight[OTHER], 16);
    }

    /// Async requests (writeback) may hold 75% of the scheduler tags (`kyber_limit_depth`).
    #[test]
    fn async_requests_hold_at_most_three_quarters_of_the_tags() {
        let k = Kyber::new(1, KyberParams::default());
        let sync = rq(0, Op::Write);
        let writeback = SchedRequest { sync: false, ..sync };
        assert_eq!(k.alloc_limit(&sync, 256), 256);
        assert_eq!(k.alloc_limit(&writeback, 256), 192);
        assert_eq!(k.alloc_limit(&writeback, 1), 1);
    }

    #[test]
    fn percentile_and_bucket_match_linux() {
        // Buckets are (latency - 1) / (target / 4), capped at the last one.
        assert_eq!(bucket_of(0, 2 * MS), 0);
        assert_eq!(bucket_of(500_000, 2 * MS), 0);
        assert_eq!(bucket_of(500_001, 2 * MS), 1);
        assert_eq!(bucket_of(2 * MS, 2 * MS), 3);
        assert_eq!(bucket_of(2 * MS + 1, 2 * MS), 4);
        assert_eq!(bucket_of(20 * MS, 2 * MS), 7);
        let mut b = [0; BUCKETS];
        b[0] = 89;
        b[5] = 11;
        assert_eq!(percentile_bucket(&b, 100, 90), 5);
        assert_eq!(percentile_bucket(&b, 100, 89), 0);
    }

    #[test]
    fn random_sequences_keep_accounting_and_never_panic() {
        super::super::check_random_sequences(|h| Box::new(Kyber::new(h, KyberParams::default())));
    }
}
