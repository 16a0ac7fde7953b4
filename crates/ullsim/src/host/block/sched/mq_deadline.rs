//! `mq-deadline`: Linux's deadline scheduler for blk-mq (block/mq-deadline.c, as of 6.x).
//!
//! Modeled, with Linux's defaults:
//! - One state for the whole device (Linux's per-request-queue `deadline_data`, one lock). Requests are kept
//!   per priority level (RT, BE, IDLE from `prio_class`; anything else counts as BE, like
//!   `IOPRIO_CLASS_NONE`) and per direction, each in a sort list by sector and a FIFO by insertion with a
//!   deadline of `read_expire` 500 ms / `write_expire` 5 s.
//! - Dispatch as `__dd_dispatch_request`: continue the current batch (one direction, ascending sectors from
//!   the last dispatched position) while fewer than `fifo_batch` (16) were dispatched; otherwise pick a
//!   direction (reads, unless writes were passed over `writes_starved` (2) times or there are no reads) and
//!   start at the FIFO head if its deadline passed, else at the next sector after the last dispatched
//!   position in that direction, wrapping to the FIFO head when there is none.
//! - Priorities as `dd_dispatch_request`: first a BE or IDLE request inserted more than
//!   `prio_aging_expire` (10 s) ago, if requests of two or more levels are pending; then the highest level.
//!   A level counts as pending while it has requests queued *or in flight* (Linux's `dd_queued` is
//!   inserted - completed), so lower levels wait until the higher level's requests complete: `dispatch`
//!   then returns None and the block layer must try again after a completion (Linux re-runs the queue).
//! - Linux's quirks are kept because they shape the dispatch order: the state starts as if a write batch
//!   were running (`last_dir = DD_WRITE`), so with both directions queued the first batch is writes; the
//!   batch and starvation counters are shared by all levels, and the aged-request check runs the direction
//!   choice of the BE level (updating those counters) even when it dispatches nothing.
//!
//! Hardware queues: mq-deadline is queue-wide (`QUEUE_FLAG_SQ_SCHED`), so `dispatch(hwq)` ignores `hwq` and
//! may return a request that was inserted for another hardware queue, exactly as `dd_dispatch_request` may
//! (Linux then issues it on its own hardware queue). `queued(hwq)` counts the requests waiting that were
//! inserted for `hwq`, so the counts add up to the total; note that `dispatch(hwq)` can return a request
//! while `queued(hwq)` is 0 when other hardware queues have requests waiting.
//!
//! - Merging a bio into a waiting request (`dd_bio_merge`, `blk_mq_sched_try_merge`, `elv_merge`): first
//!   the last request merged into or inserted (`q->last_merge`), in front of it or behind it; then a request
//!   ending where the bio starts (the request hash: a back merge); then, with `front_merges` (1), one of the
//!   bio's level and direction starting where the bio ends (`dd_request_merge`: a front merge, after which
//!   the request moves to its new place in the sort list). Requests merge when they are of the same
//!   operation and priority class and together at most `max_sectors_kb`; the model also requires the same
//!   task (the host completes a merged request's bios in one job), and merges only bios of application
//!   requests (not pieces of split requests, file-system bios or FUA writes).
//!
//! Ignored: merging two waiting requests after a bio merge made them adjacent (`attempt_back_merge`,
//! `attempt_front_merge`) and merging a request leaving a plug into a waiting one (`elv_attempt_insert_merge`);
//! at-head insertion (the `dispatch` list), zoned-write handling, and `async_depth` (tag allocation depth for
//! writes and async I/O, which belongs to the block layer's tag model; its default, `nr_requests`, limits
//! nothing).

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::{ElevatorMerge, IoScheduler, SchedCosts, SchedRequest};
use crate::config::host::BlockConfig;
use crate::engine::Time;
use crate::request::{Op, ReqId};

const MS: Time = 1_000_000;
/// The tunables (`host.block.deadline_*`, the scheduler's sysfs files).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeadlineParams {
    /// FIFO deadline of a read and of a write (`read_expire`, `write_expire`), in ns.
    pub expire_ns: [Time; 2],
    /// Reads may be preferred over waiting writes this many times in a row (`writes_starved`).
    pub writes_starved: u32,
    /// Requests dispatched in one batch: one direction, ascending sectors (`fifo_batch`).
    pub fifo_batch: u32,
    /// A bio may merge in front of a waiting request found by its sector (`front_merges`).
    pub front_merges: bool,
}

impl DeadlineParams {
    pub fn from_config(cfg: &BlockConfig) -> Self {
        DeadlineParams {
            expire_ns: [cfg.deadline_read_expire.0, cfg.deadline_write_expire.0],
            writes_starved: cfg.deadline_writes_starved,
            fifo_batch: cfg.deadline_fifo_batch,
            front_merges: cfg.deadline_front_merges,
        }
    }
}

impl Default for DeadlineParams {
    /// Linux's: `read_expire` HZ / 2, `write_expire` 5 * HZ, `writes_starved` 2, `fifo_batch` 16,
    /// `front_merges` 1.
    fn default() -> Self {
        DeadlineParams { expire_ns: [500 * MS, 5_000 * MS], writes_starved: 2, fifo_batch: 16, front_merges: true }
    }
}
/// A BE or IDLE request older than this goes before higher-priority ones.
const PRIO_AGING_EXPIRE_NS: Time = 10_000 * MS;

/// Priority levels, highest first: RT, BE, IDLE.
const LEVELS: usize = 3;
const BE_LEVEL: usize = 1;

/// Data direction, used as an index.
const READ: usize = 0;
const WRITE: usize = 1;

fn direction(op: Op) -> usize {
    match op {
        Op::Read => READ,
        Op::Write => WRITE,
        // rq_data_dir(REQ_OP_FLUSH) is READ (its op number is even); flushes go around the scheduler
        // (blk_insert_flush; `FullHost::submit_to_block`), so none reaches it.
        Op::Flush => READ,
    }
}

/// Level of an I/O priority class: 0 RT, 2 IDLE, everything else BE (Linux maps `IOPRIO_CLASS_NONE` to BE).
fn level_of(prio_class: u8) -> usize {
    match prio_class {
        0 => 0,
        2 => 2,
        _ => BE_LEVEL,
    }
}

/// A request waiting in a sort list.
#[derive(Debug, Clone, Copy)]
struct Waiting {
    rq: SchedRequest,
    /// Insertion number: orders the FIFO and breaks sector ties in the sort list.
    seq: u64,
    /// When it was inserted; its FIFO deadline is this plus the direction's expire time.
    inserted: Time,
    /// Hardware-queue slot it was inserted for (for `queued`).
    slot: u32,
}

/// One direction of one priority level: Linux's `sort_list`, `fifo_list` and `latest_pos`.
#[derive(Debug, Default)]
struct DirQueue {
    /// Waiting requests sorted by (sector, seq). A sorted Vec: queues are at most a few hundred deep
    /// (nr_requests), so shifting on insert/remove is cheap and needs no per-request allocation.
    by_sector: Vec<Waiting>,
    /// (seq, sector) of the same requests in insertion order, which is also deadline order.
    fifo: VecDeque<(u64, u64)>,
    /// Start sector of the last request dispatched from here; the sort order resumes at it.
    latest_pos: u64,
}

impl DirQueue {
    fn is_empty(&self) -> bool {
        self.fifo.is_empty()
    }

    fn insert(&mut self, w: Waiting) {
        let key = (w.rq.sector, w.seq);
        let at = self.by_sector.partition_point(|e| (e.rq.sector, e.seq) < key);
        self.by_sector.insert(at, w);
        // Sequence numbers only grow, so the FIFO stays sorted by seq.
        self.fifo.push_back((w.seq, w.rq.sector));
    }

    /// Index (in `by_sector`) of the first request at or after `latest_pos` (`deadline_from_pos`).
    fn next_in_sector_order(&self) -> Option<usize> {
        let at = self.by_sector.partition_point(|e| e.rq.sector < self.latest_pos);
        (at < self.by_sector.len()).then_some(at)
    }

    /// Index (in `by_sector`) of the FIFO head.
    fn fifo_head(&self) -> Option<usize> {
        let &(seq, sector) = self.fifo.front()?;
        self.by_sector.binary_search_by(|e| (e.rq.sector, e.seq).cmp(&(sector, seq))).ok()
    }

    /// Whether the FIFO head's deadline has passed (`deadline_check_fifo`).
    fn head_expired(&self, expire_ns: Time, now: Time) -> bool {
        self.fifo_head().is_some_and(|i| self.by_sector[i].inserted.saturating_add(expire_ns) <= now)
    }

    fn remove(&mut self, index: usize) -> Waiting {
        let w = self.by_sector.remove(index);
        if let Ok(f) = self.fifo.binary_search_by(|&(seq, _)| seq.cmp(&w.seq)) {
            self.fifo.remove(f);
        }
        w
    }

    /// Index (in `by_sector`) of the waiting request with arrival number `seq`.
    fn find_seq(&self, seq: u64) -> Option<usize> {
        let &(_, sector) = self.fifo.iter().find(|&&(s, _)| s == seq)?;
        self.by_sector.binary_search_by(|e| (e.rq.sector, e.seq).cmp(&(sector, seq))).ok()
    }

    /// The request at `index` now starts at `sector` (a front merge): it moves to its place in sector order.
    fn move_to(&mut self, index: usize, sector: u64) {
        let mut w = self.by_sector.remove(index);
        w.rq.sector = sector;
        if let Some(entry) = self.fifo.iter_mut().find(|(seq, _)| *seq == w.seq) {
            entry.1 = sector;
        }
        let key = (w.rq.sector, w.seq);
        let at = self.by_sector.partition_point(|e| (e.rq.sector, e.seq) < key);
        self.by_sector.insert(at, w);
    }
}

/// Where a merge goes: behind the request (it ends where the bio starts) or in front of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MergeSide {
    Back,
    Front,
}

/// `blk_try_merge` with `blk_rq_merge_ok`: how `bio` may merge with the waiting request `rq`, if at all.
fn try_merge(rq: &SchedRequest, bio: &SchedRequest, max_sectors: u32) -> Option<MergeSide> {
    let fits = u64::from(rq.sectors) + u64::from(bio.sectors) <= u64::from(max_sectors);
    let same = rq.op == bio.op && rq.prio_class == bio.prio_class && rq.task == bio.task;
    if !(rq.mergeable && bio.mergeable && same && fits) {
        return None;
    }
    if rq.sector + u64::from(rq.sectors) == bio.sector {
        Some(MergeSide::Back)
    } else if bio.sector + u64::from(bio.sectors) == rq.sector {
        Some(MergeSide::Front)
    } else {
        None
    }
}

/// One priority level: both directions and the count Linux's `dd_queued` returns.
#[derive(Debug, Default)]
struct Level {
    dirs: [DirQueue; 2],
    /// Requests inserted and not completed yet (queued or in flight).
    pending: u32,
}

pub struct MqDeadline {
    levels: [Level; LEVELS],
    /// Direction of the running batch and how many it dispatched (shared by all levels, as in Linux).
    last_dir: usize,
    batching: u32,
    /// Times reads were chosen while writes waited.
    starved: u32,
    next_seq: u64,
    /// Requests waiting per hardware-queue slot.
    queued_per_slot: Vec<usize>,
    /// Dispatched requests not completed yet, with their level (to count `pending` down on completion).
    in_flight: FxHashMap<ReqId, u8>,
    /// The waiting request last merged into or inserted (`q->last_merge`), by level, direction and seq.
    last_merge: Option<(usize, usize, u64)>,
    params: DeadlineParams,
}

impl MqDeadline {
    pub fn new(hw_queues: u32, params: DeadlineParams) -> Self {
        MqDeadline {
            params,
            levels: Default::default(),
            last_dir: WRITE,
            batching: 0,
            starved: 0,
            next_seq: 0,
            queued_per_slot: vec![0; hw_queues.max(1) as usize],
            in_flight: FxHashMap::default(),
            last_merge: None,
        }
    }

    /// Slot of a hardware queue; out-of-range numbers fold back instead of panicking.
    fn slot(&self, hwq: u32) -> usize {
        hwq as usize % self.queued_per_slot.len()
    }

    /// `__dd_dispatch_request` for one level: the next request of `level`, provided it was inserted at or
    /// before `latest_start` (None: no limit).
    fn dispatch_level(&mut self, level: usize, latest_start: Option<Time>, now: Time) -> Option<SchedRequest> {
        let lv = &self.levels[level];
        // Continue the batch while it is entitled to.
        let mut chosen = None;
        if self.batching < self.params.fifo_batch {
            chosen = lv.dirs[self.last_dir].next_in_sector_order().map(|i| (self.last_dir, i));
        }
        if chosen.is_none() {
            // Start a batch: choose a direction. Reads win unless writes were passed over too often.
            let dir = if !lv.dirs[READ].is_empty() {
                let writes_waiting = !lv.dirs[WRITE].is_empty();
                let starved_enough = writes_waiting && {
                    let s = self.starved;
                    self.starved = self.starved.saturating_add(1);
                    s >= self.params.writes_starved
                };
                if starved_enough {
                    self.starved = 0;
                    WRITE
                } else {
                    READ
                }
            } else if !lv.dirs[WRITE].is_empty() {
                self.starved = 0;
                WRITE
            } else {
                return None;
            };
            let dq = &lv.dirs[dir];
            // An expired deadline, or nothing ahead in sector order: restart from the oldest request.
            let index = if dq.head_expired(self.params.expire_ns[dir], now) {
                dq.fifo_head()
            } else {
                dq.next_in_sector_order().or_else(|| dq.fifo_head())
            }?;
            self.last_dir = dir;
            self.batching = 0;
            chosen = Some((dir, index));
        }
        let (dir, index) = chosen?;
        let dq = &mut self.levels[level].dirs[dir];
        if latest_start.is_some_and(|latest| dq.by_sector[index].inserted > latest) {
            return None;
        }
        self.batching += 1;
        let w = dq.remove(index);
        if self.last_merge == Some((level, dir, w.seq)) {
            self.last_merge = None;
        }
        dq.latest_pos = w.rq.sector;
        let slot = w.slot as usize;
        self.queued_per_slot[slot] = self.queued_per_slot[slot].saturating_sub(1);
        self.in_flight.insert(w.rq.id, level as u8);
        Some(w.rq)
    }

    /// `dd_dispatch_prio_aged_requests`: a BE or IDLE request older than `prio_aging_expire`, when requests
    /// of at least two levels are pending.
    fn dispatch_aged(&mut self, now: Time) -> Option<SchedRequest> {
        let latest_start = now.checked_sub(PRIO_AGING_EXPIRE_NS)?;
        let busy_levels = self.levels.iter().filter(|l| l.pending > 0).count();
        if busy_levels < 2 {
            return None;
        }
        (BE_LEVEL..LEVELS).find_map(|level| self.dispatch_level(level, Some(latest_start), now))
    }
}

impl IoScheduler for MqDeadline {
    fn name(&self) -> &'static str {
        "mq-deadline"
    }
    fn costs(&self) -> SchedCosts {
        // ~0.7 us per request in all (bfq doc), under the one queue-wide lock.
        SchedCosts { insert_ns: 350, dispatch_ns: 300, completed_ns: 50, global_lock: true }
    }
    fn insert(&mut self, hwq: u32, rq: SchedRequest, now: Time) {
        let slot = self.slot(hwq);
        let (li, dir) = (level_of(rq.prio_class), direction(rq.op));
        if rq.mergeable && self.last_merge.is_none() {
            self.last_merge = Some((li, dir, self.next_seq));
        }
        let level = &mut self.levels[li];
        level.pending = level.pending.saturating_add(1);
        level.dirs[dir].insert(Waiting { rq, seq: self.next_seq, inserted: now, slot: slot as u32 });
        self.next_seq += 1;
        self.queued_per_slot[slot] += 1;
    }
    fn merge(&mut self, bio: &SchedRequest, max_sectors: u32) -> Option<ElevatorMerge> {
        // `elv_merge`: the one-hit cache first, either side.
        let cached = self.last_merge.and_then(|(l, d, seq)| {
            let index = self.levels[l].dirs[d].find_seq(seq)?;
            let side = try_merge(&self.levels[l].dirs[d].by_sector[index].rq, bio, max_sectors)?;
            Some((l, d, index, side))
        });
        // Then a request that ends where the bio starts (any level or direction: the hash holds all), then
        // with `front_merges` one of the bio's level and direction that starts where it ends.
        let found = cached
            .or_else(|| {
                self.levels.iter().enumerate().find_map(|(l, level)| {
                    level.dirs.iter().enumerate().find_map(|(d, dq)| {
                        let index = dq.by_sector.iter().position(|w| {
                            w.rq.sector + u64::from(w.rq.sectors) == bio.sector
                                && try_merge(&w.rq, bio, max_sectors) == Some(MergeSide::Back)
                        })?;
                        Some((l, d, index, MergeSide::Back))
                    })
                })
            })
            .or_else(|| {
                if !self.params.front_merges {
                    return None;
                }
                let (l, d) = (level_of(bio.prio_class), direction(bio.op));
                let dq = &self.levels[l].dirs[d];
                let end = bio.sector + u64::from(bio.sectors);
                let at = dq.by_sector.partition_point(|w| w.rq.sector < end);
                let index = (at..dq.by_sector.len())
                    .take_while(|&i| dq.by_sector[i].rq.sector == end)
                    .find(|&i| try_merge(&dq.by_sector[i].rq, bio, max_sectors) == Some(MergeSide::Front))?;
                Some((l, d, index, MergeSide::Front))
            });
        let (l, d, index, side) = found?;
        let dq = &mut self.levels[l].dirs[d];
        let seq = dq.by_sector[index].seq;
        dq.by_sector[index].rq.sectors += bio.sectors;
        if side == MergeSide::Front {
            // `dd_request_merged`: the request moves to its new start in the sort list.
            dq.move_to(index, bio.sector);
        }
        self.last_merge = Some((l, d, seq));
        let index = dq.find_seq(seq)?;
        let rq = &dq.by_sector[index].rq;
        Some(ElevatorMerge { into: rq.id, sector: rq.sector, sectors: rq.sectors })
    }
    fn rename(&mut self, from: ReqId, to: ReqId) {
        for level in &mut self.levels {
            for dq in &mut level.dirs {
                if let Some(w) = dq.by_sector.iter_mut().find(|w| w.rq.id == from) {
                    w.rq.id = to;
                    return;
                }
            }
        }
    }
    fn dispatch(&mut self, _hwq: u32, now: Time) -> Option<SchedRequest> {
        if let Some(rq) = self.dispatch_aged(now) {
            return Some(rq);
        }
        // Highest level first; a level with requests pending (even only in flight) holds back the lower ones.
        for level in 0..LEVELS {
            let rq = self.dispatch_level(level, None, now);
            if rq.is_some() || self.levels[level].pending > 0 {
                return rq;
            }
        }
        None
    }
    fn completed(&mut self, rq: &SchedRequest, _latency_ns: Time, _now: Time) {
        // Requests this scheduler did not dispatch (or already saw complete) are ignored.
        if let Some(level) = self.in_flight.remove(&rq.id) {
            let level = &mut self.levels[level as usize];
            level.pending = level.pending.saturating_sub(1);
        }
    }
    fn queued(&self, hwq: u32) -> usize {
        self.queued_per_slot[self.slot(hwq)]
    }
    fn remove_first(&mut self, hwq: u32, matches: &mut dyn FnMut(&SchedRequest) -> bool) -> Option<SchedRequest> {
        // Only requests inserted for `hwq`, highest level first, each direction in sector order.
        let slot = self.slot(hwq);
        for level in &mut self.levels {
            for dq in &mut level.dirs {
                let Some(at) = dq.by_sector.iter().position(|w| w.slot as usize == slot && matches(&w.rq)) else {
                    continue;
                };
                let w = dq.remove(at);
                if self.last_merge.is_some_and(|(_, _, seq)| seq == w.seq) {
                    self.last_merge = None;
                }
                // It was inserted and will never complete: `dd_queued` counts it no more.
                level.pending = level.pending.saturating_sub(1);
                self.queued_per_slot[slot] = self.queued_per_slot[slot].saturating_sub(1);
                return Some(w.rq);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rq(id: u32, op: Op, sector: u64, prio_class: u8) -> SchedRequest {
        SchedRequest { id: ReqId(id), op, sector, prio_class, ..super::super::test_request() }
    }

    fn drain(s: &mut MqDeadline, now: Time) -> Vec<SchedRequest> {
        let mut out = Vec::new();
        while let Some(r) = s.dispatch(0, now) {
            s.completed(&r, 0, now);
            out.push(r);
        }
        out
    }

    #[test]
    fn reads_preferred_but_writes_get_a_batch_after_two_read_batches() {
        let mut s = MqDeadline::new(1, DeadlineParams::default());
        // Ascending sectors so that every batch runs its full 16 requests.
        for i in 0..100 {
            s.insert(0, rq(i, Op::Read, i as u64 * 8, 1), 0);
            s.insert(0, rq(1000 + i, Op::Write, 1_000_000 + i as u64 * 8, 1), 0);
        }
        let order: Vec<Op> = drain(&mut s, 1).iter().map(|r| r.op).collect();
        assert_eq!(order.len(), 200);
        // Linux starts as if a write batch were running, then serves two read batches per write batch.
        let mut expected = Vec::new();
        for _ in 0..2 {
            expected.extend([Op::Write; 16]);
            expected.extend([Op::Read; 32]);
        }
        assert_eq!(&order[..96], &expected[..]);
        // Never more than two read batches in a row while writes wait.
        let last_write = order.iter().rposition(|&o| o == Op::Write).unwrap();
        let mut run = 0;
        for &o in &order[..last_write] {
            run = if o == Op::Read { run + 1 } else { 0 };
            assert!(run <= (DeadlineParams::default().writes_starved * DeadlineParams::default().fifo_batch) as usize);
        }
        // Reads are preferred: all 100 reads are done before the last write.
        let last_read = order.iter().rposition(|&o| o == Op::Read).unwrap();
        assert!(last_read < last_write);
    }

    /// The tunables reshape the batches: with `fifo_batch` B and `writes_starved` W, a write batch of B
    /// comes after W read batches of B (the first batch is a write's, as Linux starts).
    #[test]
    fn fifo_batch_and_writes_starved_set_the_batch_pattern() {
        for (batch, starved) in [(4u32, 1u32), (1, 3), (8, 0)] {
            let params = DeadlineParams { fifo_batch: batch, writes_starved: starved, ..DeadlineParams::default() };
            let mut s = MqDeadline::new(1, params);
            for i in 0..200 {
                s.insert(0, rq(i, Op::Read, i as u64 * 8, 1), 0);
                s.insert(0, rq(1000 + i, Op::Write, 1_000_000 + i as u64 * 8, 1), 0);
            }
            let order: Vec<Op> = drain(&mut s, 1).iter().map(|r| r.op).collect();
            let mut expected = Vec::new();
            while expected.len() < 60 {
                expected.extend(std::iter::repeat_n(Op::Write, batch as usize));
                expected.extend(std::iter::repeat_n(Op::Read, (batch * starved) as usize));
            }
            assert_eq!(&order[..60], &expected[..60], "fifo_batch {batch}, writes_starved {starved}");
        }
    }

    /// `read_expire` sets when a read's deadline passes.
    #[test]
    fn read_expire_sets_the_read_deadline() {
        let setup = || {
            let params = DeadlineParams { expire_ns: [20 * MS, 5_000 * MS], ..DeadlineParams::default() };
            let mut s = MqDeadline::new(1, params);
            s.insert(0, rq(0, Op::Read, 1_000, 1), 0);
            for i in 1..10 {
                s.insert(0, rq(i, Op::Read, i as u64, 1), 10 * MS);
            }
            s
        };
        assert_eq!(setup().dispatch(0, 19 * MS).unwrap().sector, 1);
        assert_eq!(setup().dispatch(0, 20 * MS).unwrap().sector, 1_000);
    }

    #[test]
    fn batch_is_served_in_sector_order_and_wraps_to_fifo_head() {
        let mut s = MqDeadline::new(1, DeadlineParams::default());
        for (i, sector) in [50u64, 10, 40, 20, 30].into_iter().enumerate() {
            s.insert(0, rq(i as u32, Op::Read, sector, 1), 0);
        }
        let sectors: Vec<u64> = drain(&mut s, 1).iter().map(|r| r.sector).collect();
        assert_eq!(sectors, [10, 20, 30, 40, 50]);
        // The sort order resumes after the last position (50): 60 first, then back to the oldest (5).
        s.insert(0, rq(10, Op::Read, 5, 1), 2);
        s.insert(0, rq(11, Op::Read, 60, 1), 3);
        s.insert(0, rq(12, Op::Read, 7, 1), 4);
        let sectors: Vec<u64> = drain(&mut s, 5).iter().map(|r| r.sector).collect();
        assert_eq!(sectors, [60, 5, 7]);
    }

    #[test]
    fn expired_fifo_head_goes_first() {
        let setup = || {
            let mut s = MqDeadline::new(1, DeadlineParams::default());
            s.insert(0, rq(0, Op::Read, 1_000, 1), 0);
            for i in 1..10 {
                s.insert(0, rq(i, Op::Read, i as u64, 1), 400 * MS);
            }
            s
        };
        // Before the deadline the lowest sector goes first.
        let mut s = setup();
        assert_eq!(s.dispatch(0, 450 * MS).unwrap().sector, 1);
        // After the 500 ms read deadline the oldest request (at sector 1000) goes first.
        let mut s = setup();
        assert_eq!(s.dispatch(0, 500 * MS).unwrap().sector, 1_000);
        // Then the batch wraps to the oldest of the rest.
        assert_eq!(s.dispatch(0, 500 * MS).unwrap().sector, 1);
    }

    #[test]
    fn rt_goes_before_be_and_holds_be_back_while_in_flight() {
        let mut s = MqDeadline::new(1, DeadlineParams::default());
        for i in 0..4 {
            s.insert(0, rq(i, Op::Read, i as u64 * 8, 1), 0);
        }
        s.insert(0, rq(100, Op::Read, 999, 0), 1);
        let first = s.dispatch(0, 2).unwrap();
        assert_eq!(first.id, ReqId(100));
        // The RT request is in flight: BE waits for its completion.
        assert_eq!(s.dispatch(0, 3), None);
        assert_eq!(s.queued(0), 4);
        s.completed(&first, 10, 4);
        assert_eq!(s.dispatch(0, 5).unwrap().prio_class, 1);
    }

    #[test]
    fn aged_be_request_goes_before_rt() {
        let mut s = MqDeadline::new(1, DeadlineParams::default());
        s.insert(0, rq(0, Op::Read, 0, 1), 0);
        let mut id = 1;
        let mut now = 0;
        // RT traffic keeps the RT level pending; BE gets nothing until it is 10 s old.
        while now < PRIO_AGING_EXPIRE_NS {
            s.insert(0, rq(id, Op::Read, id as u64, 0), now);
            let r = s.dispatch(0, now).unwrap();
            assert_eq!(r.prio_class, 0);
            s.insert(0, rq(id + 1, Op::Read, id as u64 + 1, 0), now);
            s.completed(&r, 0, now);
            id += 2;
            now += 100 * MS;
        }
        assert_eq!(s.dispatch(0, now).unwrap().id, ReqId(0));
    }

    #[test]
    fn dispatch_is_queue_wide_and_queued_counts_per_hwq() {
        let mut s = MqDeadline::new(2, DeadlineParams::default());
        s.insert(1, rq(0, Op::Read, 8, 1), 0);
        s.insert(0, rq(1, Op::Read, 16, 1), 0);
        assert_eq!((s.queued(0), s.queued(1)), (1, 1));
        // Hardware queue 0 gets the request inserted for queue 1 (it is first in sector order).
        assert_eq!(s.dispatch(0, 1).unwrap().id, ReqId(0));
        assert_eq!((s.queued(0), s.queued(1)), (1, 0));
        assert_eq!(s.dispatch(1, 1).unwrap().id, ReqId(1));
        assert_eq!((s.queued(0), s.queued(1)), (0, 0));
    }

    #[test]
    fn empty_dispatch_and_unknown_completion_are_harmless() {
        let mut s = MqDeadline::new(0, DeadlineParams::default());
        assert_eq!(s.dispatch(7, 0), None);
        s.completed(&rq(42, Op::Write, 0, 0), 0, 0);
        s.insert(9, rq(1, Op::Write, 0, 7), 0);
        assert_eq!(s.queued(9), 1);
        let r = s.dispatch(3, 1).unwrap();
        s.completed(&r, 1, 2);
        s.completed(&r, 1, 3);
        assert_eq!(s.levels.iter().map(|l| l.pending).sum::<u32>(), 0);
        assert_eq!(s.dispatch(0, 4), None);
    }

    /// The merge `s` makes of bio `bio` (max 256 sectors together), as (into, first sector, sectors).
    fn merge_of(s: &mut MqDeadline, bio: SchedRequest) -> Option<(u32, u64, u32)> {
        s.merge(&bio, 256).map(|m| (m.into.0, m.sector, m.sectors))
    }

    /// `elv_merge`: a bio merges behind the waiting request it follows (the request hash), in front of the
    /// one it precedes only with `front_merges` (`dd_request_merge`), and either way with the last request
    /// merged into or inserted (`q->last_merge`, which `front_merges` does not restrict).
    #[test]
    fn bios_merge_behind_always_and_in_front_with_front_merges() {
        for front_merges in [true, false] {
            let mut s = MqDeadline::new(1, DeadlineParams { front_merges, ..DeadlineParams::default() });
            // The first request inserted (far away) is the one-hit cache; then one at 100..108.
            s.insert(0, rq(0, Op::Read, 1_000, 1), 0);
            s.insert(0, rq(1, Op::Read, 100, 1), 0);
            // Behind request 1: merged either way, and request 1 becomes the cache.
            assert_eq!(merge_of(&mut s, rq(2, Op::Read, 108, 1)), Some((1, 100, 16)));
            // In front of request 0, found by its sector: only with front_merges.
            let front = merge_of(&mut s, rq(3, Op::Read, 992, 1));
            assert_eq!(front, front_merges.then_some((0, 992, 16)), "front_merges {front_merges}");
            // In front of request 1: found by its sector with front_merges, through the cache without.
            assert_eq!(merge_of(&mut s, rq(4, Op::Read, 92, 1)), Some((1, 92, 24)));
        }
    }

    /// A front merge moves the request in sector order: the batch sees it at its new start.
    #[test]
    fn a_front_merged_request_moves_to_its_new_start() {
        let mut s = MqDeadline::new(1, DeadlineParams::default());
        s.insert(0, rq(0, Op::Read, 5_000, 1), 0);
        s.insert(0, rq(1, Op::Read, 200, 1), 0);
        s.insert(0, rq(2, Op::Read, 100, 1), 0);
        assert_eq!(merge_of(&mut s, rq(3, Op::Read, 192, 1)), Some((1, 192, 16)));
        assert_eq!(merge_of(&mut s, rq(4, Op::Read, 184, 1)), Some((1, 184, 24)));
        let order: Vec<u64> = drain(&mut s, 0).iter().map(|r| r.sector).collect();
        assert_eq!(order, [100, 184, 5_000]);
    }

    #[test]
    fn only_like_requests_merge() {
        let mut s = MqDeadline::new(1, DeadlineParams::default());
        s.insert(0, rq(0, Op::Read, 100, 1), 0);
        let behind = rq(1, Op::Read, 108, 1);
        for bio in [
            SchedRequest { op: Op::Write, ..behind },
            SchedRequest { prio_class: 0, ..behind },
            SchedRequest { task: 7, ..behind },
            SchedRequest { mergeable: false, ..behind },
            SchedRequest { sectors: 249, ..behind },
            SchedRequest { sector: 109, ..behind },
        ] {
            assert_eq!(merge_of(&mut s, bio), None, "{bio:?}");
        }
        assert_eq!(merge_of(&mut s, SchedRequest { sectors: 248, ..behind }), Some((0, 100, 256)));
        // A dispatched request takes no more bios.
        assert_eq!(s.dispatch(0, 0).unwrap().sectors, 256);
        assert_eq!(merge_of(&mut s, rq(2, Op::Read, 356, 1)), None);
    }

    #[test]
    fn a_renamed_request_goes_under_its_new_id() {
        let mut s = MqDeadline::new(1, DeadlineParams::default());
        s.insert(0, rq(0, Op::Read, 100, 1), 0);
        s.rename(ReqId(0), ReqId(9));
        let d = s.dispatch(0, 0).unwrap();
        assert_eq!(d.id, ReqId(9));
        s.completed(&d, 0, 1);
        assert_eq!(s.levels[BE_LEVEL].pending, 0);
    }

    #[test]
    fn random_sequences_keep_accounting_and_never_panic() {
        super::super::check_random_sequences(|h| Box::new(MqDeadline::new(h, DeadlineParams::default())));
    }
}
