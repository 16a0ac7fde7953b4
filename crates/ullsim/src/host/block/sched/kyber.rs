//! `kyber`: Linux's token-based latency scheduler (block/kyber-iosched.c, as of 6.x).
//!
//! Modeled, with Linux's defaults:
//! - Requests fall into scheduling domains by operation. Linux has READ, WRITE, DISCARD and OTHER; our
//!   requests are only reads and writes, so the model has the READ and WRITE domains (adding one means a
//!   row in the per-domain tables below and a case in `domain_of`).
//! - Each domain has a device-wide token pool (READ 256, WRITE 128 at most); a request needs one of its
//!   domain's tokens to be dispatched and gives it back in `completed`.
//! - Per hardware queue, a FIFO per domain. Dispatch continues the hardware queue's current domain while
//!   its batch (READ 16, WRITE 8) is not used up; otherwise, or when that domain has no request or no token,
//!   it starts a new batch with the next domain round-robin (wrapping back to the current one last),
//!   skipping domains without requests or tokens; None when nothing can go. When `dispatch` returns None
//!   for lack of tokens the block layer must try again after a completion (Linux re-runs the hardware
//!   queue from the token wait queue).
//! - Latency feedback (`kyber_timer_fn`): every completion adds its total latency (`latency_ns`, insertion
//!   to completion) and its I/O latency (dispatch to completion) to its domain's histograms of 8 buckets of
//!   width target/4 (targets READ 2 ms, WRITE 10 ms). A timer runs 100 ms after a completion finds it
//!   unarmed; it closes a domain's window once the window has 500 samples or is 1 s old. If any closed
//!   domain's p90 I/O latency is at or above its target the device is "congested": every domain with a
//!   p99 (this window's, or the one remembered from an earlier window) is scaled by (p99 bucket + 1) / 4,
//!   which throttles the domains with good latency and relaxes the ones with bad latency. Without
//!   congestion only domains whose p99 total latency is at or above target are scaled (up). Depths are
//!   clamped to [1, max]. So a slow device does not shrink the slow domain itself: it throttles the others;
//!   and a throttled domain grows back only when its own requests' total latency (including time waiting
//!   for tokens) reaches its target, doubling per window when the p99 is in the last bucket (from depth 1 it
//!   needs that last bucket to grow at all, as in Linux's integer arithmetic). At ULL latencies (tens of
//!   us) no bucket ever reaches the targets and the depths stay at their maximum.
//!
//! Hardware queues: queues and batching state are per hardware queue, tokens and latency statistics are
//! device-wide, as in Linux. `dispatch(hwq)` returns only requests inserted for `hwq`.
//!
//! Ignored: the per-CPU software-queue split inside each hardware queue (requests go to one FIFO per
//! domain), merging, the async-request limit (75% of the scheduler tags; every request of the model is
//! sync, see `SchedRequest::sync`), and the timer firing at exactly its due
//! time: it runs at the first `insert`, `dispatch` or `completed` call at or after it (the only moments its
//! result can be observed).

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
const DOMAINS: usize = 2;

/// Maximum device-wide tokens (in-flight requests) per domain.
const MAX_DEPTH: [u32; DOMAINS] = [256, 128];
/// Requests dispatched in a row from one domain before moving to the next.
const BATCH: [u32; DOMAINS] = [16, 8];
/// The tunables (`host.block.kyber_*`): the latency target per domain, in ns (sysfs `read_lat_nsec`,
/// `write_lat_nsec`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KyberParams {
    pub target_ns: [Time; DOMAINS],
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

/// A window closes once it has this many samples...
const WINDOW_SAMPLES: u32 = 500;
/// ...or once it is this old.
const WINDOW_NS: Time = 1_000 * MS;
/// The timer runs this long after a completion that found it unarmed (HZ / 10).
const TIMER_NS: Time = 100 * MS;

fn domain_of(op: Op) -> usize {
    match op {
        Op::Read => READ,
        Op::Write => WRITE,
        // Linux puts flushes in KYBER_OTHER, a domain this model leaves out: flushes go around the scheduler
        // (blk_insert_flush; `FullHost::submit_to_block`), so none reaches it.
        Op::Flush => WRITE,
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

/// Bucket holding the `percent` percentile of `buckets` (`calculate_percentile`).
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

/// One domain's latency histograms for the current window.
#[derive(Debug, Default, Clone, Copy)]
struct LatencyWindow {
    /// Insertion to completion.
    total: [u32; BUCKETS],
    /// Dispatch to completion (device time, plus driver).
    io: [u32; BUCKETS],
    samples: u32,
    /// Set by the first timer run that sees samples: the window closes at this time even if short of samples.
    closes_at: Option<Time>,
}

impl LatencyWindow {
    /// Close the window if it is due: (p90 I/O-latency bucket, p99 total-latency bucket).
    fn close_if_due(&mut self, now: Time) -> Option<(usize, usize)> {
        if self.samples == 0 {
            return None;
        }
        let closes_at = *self.closes_at.get_or_insert(now.saturating_add(WINDOW_NS));
        if self.samples < WINDOW_SAMPLES && now < closes_at {
            return None;
        }
        let result = (percentile_bucket(&self.io, self.samples, 90), percentile_bucket(&self.total, self.samples, 99));
        *self = LatencyWindow::default();
        Some(result)
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
    windows: [LatencyWindow; DOMAINS],
    /// Last p99 bucket seen without congestion, used when congestion shows up in a window where this domain
    /// had too few samples (Linux's `domain_p99`).
    remembered_p99: [Option<usize>; DOMAINS],
    timer_due: Option<Time>,
    holds: FxHashMap<ReqId, TokenHold>,
    target_ns: [Time; DOMAINS],
}

impl Kyber {
    pub fn new(hw_queues: u32, params: KyberParams) -> Self {
        Kyber {
            target_ns: params.target_ns,
            hwqs: (0..hw_queues.max(1)).map(|_| HwQueue::default()).collect(),
            depth: MAX_DEPTH,
            in_flight: [0; DOMAINS],
            windows: Default::default(),
            remembered_p99: [None; DOMAINS],
            timer_due: None,
            holds: FxHashMap::default(),
        }
    }

    /// Slot of a hardware queue; out-of-range numbers fold back instead of panicking.
    fn slot(&self, hwq: u32) -> usize {
        hwq as usize % self.hwqs.len()
    }

    /// Run the feedback timer if it is due.
    fn run_timer_if_due(&mut self, now: Time) {
        if self.timer_due.is_some_and(|due| due <= now) {
            self.timer_due = None;
            self.adjust_depths(now);
        }
    }

    /// `kyber_timer_fn`: close due windows and rescale the domains' depths.
    fn adjust_depths(&mut self, now: Time) {
        let closed: [Option<(usize, usize)>; DOMAINS] = std::array::from_fn(|d| self.windows[d].close_if_due(now));
        let congested = closed.iter().flatten().any(|&(p90, _)| p90 >= GOOD_BUCKETS);
        for d in 0..DOMAINS {
            let mut p99 = closed[d].map(|(_, p99)| p99);
            if congested {
                // Use what an earlier window saw if this one had too few samples, then forget it so that the
                // domain is not throttled again before new data.
                p99 = p99.or(self.remembered_p99[d]);
                self.remembered_p99[d] = None;
            } else if p99.is_some() {
                self.remembered_p99[d] = p99;
            }
            let Some(p99) = p99 else { continue };
            // Depth scales with p99 / target: throttle good domains under congestion, relax bad ones always.
            if congested || p99 >= GOOD_BUCKETS {
                let scaled = (self.depth[d] as u64 * (p99 as u64 + 1)) >> LATENCY_SHIFT;
                self.depth[d] = scaled.clamp(1, MAX_DEPTH[d] as u64) as u32;
            }
        }
    }

    /// Dispatch from the hardware queue's current domain if it has a request and a token is free.
    fn dispatch_cur_domain(&mut self, slot: usize, now: Time) -> Option<SchedRequest> {
        let hq = &mut self.hwqs[slot];
        let d = hq.cur_domain;
        if hq.waiting[d].is_empty() || self.in_flight[d] >= self.depth[d] {
            return None;
        }
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
        let w = &mut self.windows[d];
        let (total, io) = (
            bucket_of(latency_ns, self.target_ns[d]),
            bucket_of(now.saturating_sub(hold.dispatched_at), self.target_ns[d]),
        );
        w.total[total] = w.total[total].saturating_add(1);
        w.io[io] = w.io[io].saturating_add(1);
        w.samples = w.samples.saturating_add(1);
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
        assert_eq!(k.in_flight, [256, 128]);
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
            assert!(t < 30_000 * MS, "write depth never reached 1: {:?}", k.depth);
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
        assert_eq!(k.depth, [MAX_DEPTH[READ], 1]);
        // Writes now back up behind the single token: their total latency (25 ms, over 1.75x target) puts the
        // p99 in the last bucket and the depth doubles each window back to the maximum.
        let mut depths = vec![k.depth[WRITE]];
        while k.depth[WRITE] < MAX_DEPTH[WRITE] {
            assert!(t < before + 60_000 * MS, "write depth never recovered: {depths:?}");
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
