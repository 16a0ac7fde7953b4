//! `ld`: FastResponse's "Limited Depth" scheduler (ICS'22, seed 000; block/limited-depth-iosched.c, derived
//! from kyber), which throttles non-critical I/O so that critical I/O meets a short device queue.
//!
//! Modeled, with its defaults (`host.block.ld_*`):
//! - Two scheduling domains, SYNC and ASYNC, by Linux's `op_is_sync` (`SchedRequest::sync`): reads and
//!   writes someone waits for are sync. Every request the simulator makes is direct I/O, hence sync; the
//!   async domain is there for completeness.
//! - One device-wide pool of `ld_depth` (32) dispatch tokens shared by both domains. A non-critical request
//!   needs a token to be dispatched and gives it back in `completed`; when none is free `dispatch` returns
//!   None and the block layer runs the queue again after a completion (Linux re-runs the hardware queue
//!   from the token wait queue).
//! - Per hardware queue, a FIFO per domain, and batches as in kyber: `ld_sync_batch` (8) sync or
//!   `ld_async_batch` (4) async requests in a row, then the other domain if it has a request and a token
//!   (wrapping back to the current one last). No latency feedback: the depth is fixed.
//! - Critical requests (`SchedRequest::critical`, the flow's `class = "critical"`) bypass the scheduler in
//!   FastResponse and go straight to the driver: here they wait in their own FIFO per hardware queue, which
//!   `dispatch` serves before anything else, and never wait for a token. Each one takes a token if one is
//!   free (`ld_prepare_token`) and holds it until it completes; that is how critical I/O throttles the rest.
//! - Async requests may take at most 75% of the scheduler tags (`alloc_limit`, Linux's `limit_depth`).
//!
//! Hardware queues: queues and batch state are per hardware queue, the tokens device-wide, as in Linux;
//! there is no queue-wide lock. `dispatch(hwq)` returns only requests inserted for `hwq`.
//!
//! Ignored: the per-CPU staging lists inside each hardware queue (requests go to one FIFO per domain) and
//! the merges they allow, FastResponse's bypass of the plug for critical requests (they are plugged like the
//! rest; once flushed they reach the driver first), and the CPU cost difference of the bypass (a critical
//! request pays the scheduler's costs like any other).

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::{IoScheduler, SchedCosts, SchedRequest};
use crate::config::host::BlockConfig;
use crate::engine::Time;
use crate::request::ReqId;

/// Scheduling domains, used as indices.
const SYNC: usize = 0;
const ASYNC: usize = 1;
const DOMAINS: usize = 2;

/// Share of the scheduler tags async requests may hold, in percent (`LD_ASYNC_PERCENT`).
const ASYNC_TAG_PERCENT: u32 = 75;

/// The tunables (`host.block.ld_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LdParams {
    /// Device-wide dispatch tokens.
    pub depth: u32,
    /// Requests dispatched in a row per domain, indexed by SYNC and ASYNC.
    pub batch: [u32; DOMAINS],
}

impl LdParams {
    pub fn from_config(cfg: &BlockConfig) -> Self {
        LdParams { depth: cfg.ld_depth, batch: [cfg.ld_sync_batch, cfg.ld_async_batch] }
    }
}

fn domain_of(rq: &SchedRequest) -> usize {
    if rq.sync {
        SYNC
    } else {
        ASYNC
    }
}

/// A hardware queue's waiting requests and batch state (`ld_hctx_data`).
#[derive(Debug, Default)]
struct HwQueue {
    /// Critical requests, which go before everything else and wait for no token.
    critical: VecDeque<SchedRequest>,
    waiting: [VecDeque<SchedRequest>; DOMAINS],
    cur_domain: usize,
    /// Requests dispatched in the current batch.
    batching: u32,
}

/// Token accounting, kept apart so that tests can check conservation.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct TokenCounts {
    /// Tokens handed out and returned over the run.
    taken: u64,
    returned: u64,
    /// Non-critical requests dispatched and not completed (each holds a token).
    normal_in_flight: u32,
    /// Critical requests dispatched without a free token.
    critical_without_token: u64,
}

pub struct Ld {
    params: LdParams,
    hwqs: Vec<HwQueue>,
    /// Tokens in use, device-wide.
    in_use: u32,
    /// Dispatched requests holding a token, and whether each is critical.
    holders: FxHashMap<ReqId, bool>,
    counts: TokenCounts,
}

impl Ld {
    pub fn new(hw_queues: u32, params: LdParams) -> Self {
        let params = LdParams { depth: params.depth.max(1), batch: params.batch.map(|b| b.max(1)) };
        Ld {
            params,
            hwqs: (0..hw_queues.max(1)).map(|_| HwQueue::default()).collect(),
            in_use: 0,
            holders: FxHashMap::default(),
            counts: TokenCounts::default(),
        }
    }

    /// Slot of a hardware queue; out-of-range numbers fold back instead of panicking.
    fn slot(&self, hwq: u32) -> usize {
        hwq as usize % self.hwqs.len()
    }

    /// Take a token for `rq` if one is free.
    fn try_take_token(&mut self, rq: &SchedRequest) -> bool {
        if self.in_use >= self.params.depth {
            return false;
        }
        self.in_use += 1;
        self.counts.taken += 1;
        self.holders.insert(rq.id, rq.critical);
        true
    }

    /// Dispatch from the hardware queue's current domain if it has a request and a token is free.
    fn dispatch_cur_domain(&mut self, slot: usize) -> Option<SchedRequest> {
        let d = self.hwqs[slot].cur_domain;
        let rq = *self.hwqs[slot].waiting[d].front()?;
        if !self.try_take_token(&rq) {
            return None;
        }
        let hq = &mut self.hwqs[slot];
        hq.waiting[d].pop_front();
        hq.batching += 1;
        self.counts.normal_in_flight += 1;
        Some(rq)
    }
}

impl IoScheduler for Ld {
    fn name(&self) -> &'static str {
        "ld"
    }
    fn costs(&self) -> SchedCosts {
        // Kyber's structure (per-hardware-queue locks, a token sbitmap) without its latency statistics: the
        // completion only clears the token bit (docs/model.md, [inferred]).
        SchedCosts { insert_ns: 200, dispatch_ns: 300, completed_ns: 50, global_lock: false }
    }
    fn insert(&mut self, hwq: u32, rq: SchedRequest, _now: Time) {
        let slot = self.slot(hwq);
        let hq = &mut self.hwqs[slot];
        if rq.critical {
            hq.critical.push_back(rq);
        } else {
            hq.waiting[domain_of(&rq)].push_back(rq);
        }
    }
    fn dispatch(&mut self, hwq: u32, _now: Time) -> Option<SchedRequest> {
        let slot = self.slot(hwq);
        if let Some(rq) = self.hwqs[slot].critical.pop_front() {
            // Proceeds with or without a token.
            if !self.try_take_token(&rq) {
                self.counts.critical_without_token += 1;
            }
            return Some(rq);
        }
        let hq = &self.hwqs[slot];
        if hq.batching < self.params.batch[hq.cur_domain] {
            if let Some(rq) = self.dispatch_cur_domain(slot) {
                return Some(rq);
            }
        }
        // Start a new batch with the next domain that can go, coming back to the current one last.
        self.hwqs[slot].batching = 0;
        for _ in 0..DOMAINS {
            let hq = &mut self.hwqs[slot];
            hq.cur_domain = (hq.cur_domain + 1) % DOMAINS;
            if let Some(rq) = self.dispatch_cur_domain(slot) {
                return Some(rq);
            }
        }
        None
    }
    fn completed(&mut self, rq: &SchedRequest, _latency_ns: Time, _now: Time) {
        // Requests that hold no token (critical ones that found none, unknown or repeated completions) give
        // nothing back.
        let Some(critical) = self.holders.remove(&rq.id) else { return };
        self.in_use -= 1;
        self.counts.returned += 1;
        if !critical {
            self.counts.normal_in_flight -= 1;
        }
    }
    fn queued(&self, hwq: u32) -> usize {
        let hq = &self.hwqs[self.slot(hwq)];
        hq.critical.len() + hq.waiting.iter().map(VecDeque::len).sum::<usize>()
    }
    fn remove_first(&mut self, hwq: u32, matches: &mut dyn FnMut(&SchedRequest) -> bool) -> Option<SchedRequest> {
        // Tokens are taken at dispatch: a waiting request holds none, so only its FIFO changes.
        let slot = self.slot(hwq);
        let hq = &mut self.hwqs[slot];
        std::iter::once(&mut hq.critical)
            .chain(hq.waiting.iter_mut())
            .find_map(|fifo| super::remove_first_in(fifo, matches))
    }
    fn alloc_limit(&self, rq: &SchedRequest, capacity: u32) -> u32 {
        super::sync_or_share(rq, capacity, ASYNC_TAG_PERCENT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Op;

    const DEFAULTS: LdParams = LdParams { depth: 32, batch: [8, 4] };

    fn rq(id: u32, sync: bool, critical: bool) -> SchedRequest {
        let op = if sync { Op::Read } else { Op::Write };
        let base = super::super::test_request();
        SchedRequest { id: ReqId(id), op, sector: id as u64 * 8, flow: u32::from(critical), critical, sync, ..base }
    }

    fn drain(s: &mut Ld, hwq: u32) -> Vec<SchedRequest> {
        std::iter::from_fn(|| s.dispatch(hwq, 0)).collect()
    }

    #[test]
    fn tokens_bound_normal_requests_device_wide_and_are_conserved() {
        let mut s = Ld::new(2, LdParams { depth: 8, ..DEFAULTS });
        for i in 0..40 {
            s.insert(i % 2, rq(i, true, false), 0);
        }
        let mut in_flight: Vec<SchedRequest> = drain(&mut s, 0).into_iter().chain(drain(&mut s, 1)).collect();
        assert_eq!(in_flight.len(), 8, "the two hardware queues share the 8 tokens");
        assert_eq!(s.queued(0) + s.queued(1), 32);
        // Complete one at a time: each completion lets exactly one more go, never more than 8 in flight.
        let mut done = 0;
        while let Some(r) = in_flight.pop() {
            s.completed(&r, 0, 0);
            s.completed(&r, 0, 0); // a repeated completion gives nothing back
            done += 1;
            in_flight.extend(drain(&mut s, done % 2).into_iter().chain(drain(&mut s, (done + 1) % 2)));
            assert!(s.counts.normal_in_flight <= 8 && in_flight.len() <= 8);
            assert_eq!(s.counts.normal_in_flight as usize, in_flight.len());
        }
        assert_eq!(done, 40);
        assert_eq!((s.counts.taken, s.counts.returned, s.in_use), (40, 40, 0));
    }

    #[test]
    fn critical_requests_go_first_without_waiting_and_take_free_tokens() {
        let mut s = Ld::new(1, LdParams { depth: 4, ..DEFAULTS });
        for i in 0..10 {
            s.insert(0, rq(i, true, false), 0);
        }
        // One critical request while tokens are free: it goes before the queued normal ones and takes one.
        s.insert(0, rq(100, true, true), 0);
        let first = drain(&mut s, 0);
        assert_eq!(first[0].id, ReqId(100));
        assert_eq!(first.len(), 4, "the critical request's token leaves 3 for the normal ones");
        // Out of tokens: critical requests still go at once, without one.
        for i in 101..104 {
            s.insert(0, rq(i, true, true), 0);
        }
        let critical = drain(&mut s, 0);
        assert_eq!(critical.iter().map(|r| r.id.0).collect::<Vec<_>>(), [101, 102, 103]);
        assert_eq!(s.counts.critical_without_token, 3);
        // Their completions return nothing; the token-holding critical one frees a slot for a normal request.
        for r in &critical {
            s.completed(r, 0, 0);
        }
        assert!(drain(&mut s, 0).is_empty());
        s.completed(&first[0], 0, 0);
        assert_eq!(drain(&mut s, 0).len(), 1);
        assert_eq!(s.counts.taken - s.counts.returned, u64::from(s.in_use));
    }

    #[test]
    fn batches_switch_domain_after_8_sync_and_4_async() {
        let mut s = Ld::new(1, DEFAULTS);
        for i in 0..100 {
            s.insert(0, rq(i, true, false), 0);
            s.insert(0, rq(1000 + i, false, false), 0);
        }
        let mut order = Vec::new();
        for _ in 0..24 {
            let r = s.dispatch(0, 0).unwrap();
            order.push(r.sync);
            s.completed(&r, 0, 0);
        }
        let mut expected = Vec::new();
        for _ in 0..2 {
            expected.extend([true; 8]);
            expected.extend([false; 4]);
        }
        assert_eq!(order, expected);
    }

    #[test]
    fn async_requests_get_at_most_three_quarters_of_the_tags() {
        let s = Ld::new(1, DEFAULTS);
        assert_eq!(s.alloc_limit(&rq(0, false, false), 256), 192);
        assert_eq!(s.alloc_limit(&rq(0, true, false), 256), 256);
        assert_eq!(s.alloc_limit(&rq(0, false, false), 1), 1);
    }

    #[test]
    fn random_sequences_keep_accounting_and_never_panic() {
        super::super::check_random_sequences(|h| Box::new(Ld::new(h, LdParams { depth: 8, ..DEFAULTS })));
        super::super::check_random_sequences(|h| Box::new(Ld::new(h, DEFAULTS)));
    }
}
