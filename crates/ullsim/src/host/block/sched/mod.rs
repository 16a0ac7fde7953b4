//! blk-mq I/O schedulers, one file each, behind [`IoScheduler`] (Linux's `struct elevator_mq_ops`: insert,
//! dispatch, completed, has_work). Adding a scheduler means adding a file and a name in [`make`].
//!
//! The block layer calls `insert` when a request enters the scheduler and `dispatch` whenever a hardware
//! queue has room; what the scheduler returns goes to the driver at once. The CPU each call costs, and
//! whether it is taken under the scheduler's queue-wide lock, comes from [`IoScheduler::costs`].

mod bfq;
mod kyber;
mod ld;
mod mq_deadline;
mod none;

use std::collections::VecDeque;

use crate::config::host::BlockConfig;
use crate::engine::Time;
use crate::request::{Op, ReqId};

/// What a scheduler sees of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedRequest {
    pub id: ReqId,
    pub op: Op,
    /// First 512-byte sector and length in sectors.
    pub sector: u64,
    pub sectors: u32,
    /// The flow (application) and task (process) that issued it: bfq queues per process.
    pub flow: u32,
    pub task: u32,
    /// I/O priority class of the issuer: 0 real-time, 1 best-effort, 2 idle (mq-deadline and bfq use it).
    pub prio_class: u8,
    /// I/O priority level within the class, 0 (highest) to 7 (Linux's `IOPRIO_PRIO_LEVEL`): 4
    /// (`IOPRIO_BE_NORM`) for a task that set none, 3 for ext4's journal thread (`journal_ioprio`). bfq
    /// weighs a queue by it; the other schedulers ignore it.
    pub prio_level: u8,
    /// Its flow is latency-critical (`class = "critical"`; ld lets it bypass the token limit).
    pub critical: bool,
    /// Synchronous in Linux's sense (`op_is_sync`): reads, and writes someone waits for (direct I/O carries
    /// REQ_SYNC). Only buffered writeback would be async; ld schedules the two apart.
    pub sync: bool,
    /// A bio may merge into it, and it into another request (Linux's `rq_mergeable`/`bio_mergeable`): an
    /// application request, not a piece of a split one, a file-system bio or a FUA write.
    pub mergeable: bool,
    /// When it entered the scheduler.
    pub inserted_at: Time,
}

/// A bio merged into a request waiting in the scheduler: that request's id and its new extent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElevatorMerge {
    pub into: ReqId,
    pub sector: u64,
    pub sectors: u32,
}

/// CPU cost of a scheduler's operations, in ns, and whether they hold a queue-wide lock (then concurrent
/// callers on other cores wait for each other).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SchedCosts {
    pub insert_ns: Time,
    pub dispatch_ns: Time,
    pub completed_ns: Time,
    pub global_lock: bool,
}

impl SchedCosts {
    /// The costs on cores `speed` times the reference machine's (`host.cpu.speed`).
    pub fn at_cpu_speed(self, speed: f64) -> SchedCosts {
        let cost = |ns| crate::config::host::cpu_cost(ns, speed);
        SchedCosts {
            insert_ns: cost(self.insert_ns),
            dispatch_ns: cost(self.dispatch_ns),
            completed_ns: cost(self.completed_ns),
            global_lock: self.global_lock,
        }
    }
}

/// An I/O scheduler.
pub trait IoScheduler {
    fn name(&self) -> &'static str;
    fn costs(&self) -> SchedCosts;
    /// CPU time of its operations since the last call beyond [`IoScheduler::costs`], where it depends on the
    /// scheduler's state (bfq's tree walks grow with its queues); then zero again. The block layer charges
    /// it to the operation that just ran, under the same lock. None by default.
    fn take_work_ns(&mut self) -> Time {
        0
    }
    /// A request enters the scheduler for hardware queue `hwq`.
    fn insert(&mut self, hwq: u32, rq: SchedRequest, now: Time);
    /// The next request to hand to the driver of `hwq`, or None when there is none or the scheduler holds
    /// back (e.g. kyber out of tokens).
    fn dispatch(&mut self, hwq: u32, now: Time) -> Option<SchedRequest>;
    /// A request it dispatched completed; `latency_ns` is its time from insertion to completion.
    fn completed(&mut self, rq: &SchedRequest, latency_ns: Time, now: Time);
    /// Requests waiting in the scheduler for `hwq`.
    fn queued(&self, hwq: u32) -> usize;
    /// Take out the first request waiting for `hwq` that `matches` accepts, asking it about each candidate
    /// in turn (FlashShare's hazard check, [`super::BlockLayer::take_hazard`]). The request leaves as if it
    /// had never been inserted: it is never dispatched, and its completion is not reported here.
    fn remove_first(&mut self, hwq: u32, matches: &mut dyn FnMut(&SchedRequest) -> bool) -> Option<SchedRequest>;
    /// Most of a hardware queue's `capacity` allocation tags a request like `rq` may find in use and still
    /// take one (Linux's `limit_depth` hook, e.g. ld's 75% for async requests); all of them by default.
    fn alloc_limit(&self, _rq: &SchedRequest, capacity: u32) -> u32 {
        capacity
    }
    /// Merge the bio `bio` into a request waiting here (the `bio_merge` hook, `blk_mq_sched_try_merge`),
    /// the two together at most `max_sectors`: the merge, or None (the default: no elevator merges).
    fn merge(&mut self, _bio: &SchedRequest, _max_sectors: u32) -> Option<ElevatorMerge> {
        None
    }
    /// The waiting request `from` is now named `to` (a merge made it carry several application requests).
    fn rename(&mut self, _from: ReqId, _to: ReqId) {}
    /// When the scheduler's own timer is due (bfq's idle-slice timer), if it is armed.
    fn timer_due(&self) -> Option<Time> {
        None
    }
    /// Its timer fired at `now` (called at or after `timer_due`); the block layer then runs the hardware
    /// queues, as the timer's `blk_mq_run_hw_queues` does.
    fn timer(&mut self, _now: Time) {}
}

/// A `limit_depth` rule shared by kyber and ld: a sync request may take any of a hardware queue's `capacity`
/// scheduler tags, an async one `percent` of them (at least one, so that async I/O is limited, never locked
/// out).
fn sync_or_share(rq: &SchedRequest, capacity: u32, percent: u32) -> u32 {
    if rq.sync {
        capacity
    } else {
        (capacity * percent / 100).max(1)
    }
}

/// Take the first request of `fifo` that `matches` accepts out of it (asking in FIFO order).
fn remove_first_in(
    fifo: &mut VecDeque<SchedRequest>,
    matches: &mut dyn FnMut(&SchedRequest) -> bool,
) -> Option<SchedRequest> {
    let at = fifo.iter().position(matches)?;
    fifo.remove(at)
}

/// Names of the I/O schedulers.
pub fn names() -> &'static [&'static str] {
    &["none", "mq-deadline", "kyber", "bfq", "ld"]
}

/// Build an I/O scheduler for `hw_queues` hardware queues; `cfg` holds the tunables of those that have some.
pub fn make(name: &str, hw_queues: u32, cfg: &BlockConfig) -> Option<Box<dyn IoScheduler>> {
    match name {
        "none" => Some(Box::new(none::NoneScheduler::new(hw_queues))),
        "mq-deadline" => {
            Some(Box::new(mq_deadline::MqDeadline::new(hw_queues, mq_deadline::DeadlineParams::from_config(cfg))))
        }
        "kyber" => Some(Box::new(kyber::Kyber::new(hw_queues, kyber::KyberParams::from_config(cfg)))),
        "bfq" => Some(Box::new(bfq::Bfq::new(hw_queues, bfq::BfqParams::from_config(cfg)))),
        "ld" => Some(Box::new(ld::Ld::new(hw_queues, ld::LdParams::from_config(cfg)))),
        _ => None,
    }
}

/// Drive a scheduler with 20,000 pseudo-random calls per hardware-queue count, including odd inputs, and check
/// its accounting: `queued` matches what waits, nothing is dispatched or removed twice, everything left can
/// still go.
#[cfg(test)]
pub(crate) fn check_random_sequences(make: impl Fn(u32) -> Box<dyn IoScheduler>) {
    const MS: Time = 1_000_000;
    // xorshift: deterministic pseudo-random calls, including odd inputs (hwq out of range, 0 or huge sizes,
    // unknown classes, unknown and repeated completions, large time jumps).
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    for hw_queues in [0, 1, 3] {
        let mut s = make(hw_queues);
        let (mut now, mut waiting, mut inserted) = (0, 0usize, 0u32);
        let mut in_flight: Vec<SchedRequest> = Vec::new();
        let mut seen = rustc_hash::FxHashSet::default();
        for _ in 0..20_000 {
            now += if next(100) == 0 { next(3_000 * MS) } else { next(50_000) };
            // The block layer fires a scheduler's timer once it is due.
            if s.timer_due().is_some_and(|due| due <= now) {
                s.timer(now);
            }
            match next(6) {
                5 => {
                    // A bio near a random sector may merge only into a waiting request, within the limit.
                    let bio = SchedRequest {
                        id: ReqId(u32::MAX - 100),
                        op: if next(2) == 0 { Op::Read } else { Op::Write },
                        sector: next(1 << 20),
                        sectors: [8, 256][next(2) as usize],
                        task: next(5) as u32,
                        prio_class: next(5) as u8,
                        mergeable: next(4) != 0,
                        ..test_request()
                    };
                    if let Some(m) = s.merge(&bio, 512) {
                        assert!(m.into.0 < inserted && !seen.contains(&m.into), "{m:?} is not waiting");
                        assert!(m.sectors <= 512 && bio.mergeable, "{m:?} of {bio:?}");
                    }
                }
                0 | 1 => {
                    let r = SchedRequest {
                        id: ReqId(inserted),
                        op: if next(2) == 0 { Op::Read } else { Op::Write },
                        sector: next(1 << 20),
                        sectors: [0, 8, 256, u32::MAX][next(4) as usize],
                        flow: next(4) as u32,
                        task: next(5) as u32,
                        prio_class: next(5) as u8,
                        prio_level: next(10) as u8,
                        critical: next(4) == 0,
                        sync: next(3) != 0,
                        mergeable: next(2) == 0,
                        inserted_at: now,
                    };
                    inserted += 1;
                    waiting += 1;
                    s.insert(next(5) as u32, r, now);
                }
                2 => {
                    if let Some(r) = s.dispatch(next(5) as u32, now) {
                        assert!(r.id.0 < inserted && seen.insert(r.id), "{r:?} dispatched twice or never inserted");
                        waiting -= 1;
                        in_flight.push(r);
                    }
                }
                3 => {
                    // Remove a waiting request by a predicate on its sector; every candidate is asked once
                    // at most, and what comes out was waiting, never dispatched, and matches.
                    let (hwq, modulus, asked) = (next(5) as u32, next(4) + 1, std::cell::Cell::new(0usize));
                    let mut matches = |r: &SchedRequest| {
                        asked.set(asked.get() + 1);
                        r.sector.is_multiple_of(modulus)
                    };
                    if let Some(r) = s.remove_first(hwq, &mut matches) {
                        assert!(
                            r.id.0 < inserted && seen.insert(r.id),
                            "{r:?} removed after leaving or never inserted"
                        );
                        assert!(r.sector.is_multiple_of(modulus));
                        waiting -= 1;
                    }
                    assert!(asked.get() <= waiting + 1, "{} candidates asked, {waiting} waiting", asked.get());
                }
                _ => {
                    if !in_flight.is_empty() && next(8) != 0 {
                        let r = in_flight.swap_remove(next(in_flight.len() as u64) as usize);
                        s.completed(&r, now.saturating_sub(r.inserted_at), now);
                        if next(4) == 0 {
                            s.completed(&r, 0, now);
                        }
                    } else {
                        let unknown = SchedRequest { id: ReqId(u32::MAX - next(3) as u32), ..test_request() };
                        s.completed(&unknown, next(1 << 30), now);
                    }
                }
            }
            let queued: usize = (0..hw_queues.max(1)).map(|h| s.queued(h)).sum();
            assert_eq!(queued, waiting);
        }
        // Everything left can still be dispatched once in-flight requests complete.
        for r in in_flight.drain(..) {
            s.completed(&r, 0, now);
        }
        while waiting > 0 {
            now += 1_000;
            let mut r = (0..hw_queues.max(1)).find_map(|h| s.dispatch(h, now));
            // A scheduler that holds requests back (bfq idling) lets them go when its timer fires.
            if let (None, Some(due)) = (r, s.timer_due()) {
                now = now.max(due);
                s.timer(now);
                r = (0..hw_queues.max(1)).find_map(|h| s.dispatch(h, now));
            }
            let r = r.expect("waiting requests must go");
            assert!(seen.insert(r.id));
            waiting -= 1;
            s.completed(&r, 1_000, now);
        }
        assert_eq!(s.dispatch(0, now), None);
    }
}

/// A 4 KiB best-effort read, sync and not critical, for tests to start from.
#[cfg(test)]
pub(crate) fn test_request() -> SchedRequest {
    SchedRequest {
        id: ReqId(0),
        op: Op::Read,
        sector: 0,
        sectors: 8,
        flow: 0,
        task: 0,
        prio_class: 1,
        prio_level: 4,
        critical: false,
        sync: true,
        mergeable: true,
        inserted_at: 0,
    }
}
