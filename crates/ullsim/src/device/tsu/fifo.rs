//! FIFO with reads before writes: the baseline transaction scheduler (MQSim's default TSU).
//!
//! Each chip keeps its queues per die: FIFO across a chip, skipping transactions whose die is busy, is the
//! same as FIFO per die, and per-die queues need no scan. Order of service for an idle die: mapping reads,
//! then user reads, then user writes and garbage collection paced against each other: every host page
//! programmed earns GC the transactions it takes to reclaim that page's space (`gc_pace`, from the victims'
//! valid counts), and GC goes ahead of host writes while it has such credit. Free space then stays near
//! the GC threshold, as in a drive at steady state, instead of running down to the hard threshold. GC goes
//! first unconditionally when one of the die's planes is at or below the hard free-block threshold.
//!
//! Reads before writes is `read_priority = "always"`. Drives whose firmware bounds it (`"bounded"`) let
//! later reads pass the program or erase waiting first on a die at most `read_bypass_limit` times, then
//! run it; `"fifo"` runs reads and writes in arrival order (Wu & He, FAST'12, compare suspension with both
//! baselines: read priority and FIFO).

use std::collections::VecDeque;

use super::{DispatchView, GcCredit, SchedulerSetup, TransactionScheduler};
use crate::config::device::ReadPriority;
use crate::device::flash::FlashOp;
use crate::device::transaction::{Purpose, TxArena, TxId};

/// How far into a queue to look for transactions that can join a multi-plane operation.
pub(super) const MULTIPLANE_WINDOW: usize = 16;

#[derive(Default)]
struct DieQueues {
    map_reads: VecDeque<TxId>,
    user_reads: VecDeque<TxId>,
    gc: VecDeque<TxId>,
    user_writes: VecDeque<TxId>,
    /// GC transactions earned by host writes and not yet spent.
    gc_credit: GcCredit,
    /// Times later reads passed the program or erase now waiting first (bounded read priority).
    bypasses: u32,
}

pub struct Fifo {
    dies: Vec<DieQueues>,
    planes_per_die: u32,
    queued: usize,
    read_priority: ReadPriority,
    /// Most bypasses of a waiting write with `ReadPriority::Bounded` (`ReadPriority::Fifo`: 0).
    bypass_limit: u32,
}

impl Fifo {
    pub fn new(setup: &SchedulerSetup) -> Self {
        let read_priority = setup.config.read_priority;
        Fifo {
            dies: (0..setup.dies).map(|_| DieQueues::default()).collect(),
            planes_per_die: setup.planes_per_die,
            queued: 0,
            read_priority,
            bypass_limit: if read_priority == ReadPriority::Fifo { 0 } else { setup.config.read_bypass_limit },
        }
    }
}

/// Whether the read at the head of `reads` goes before the write at the head of `writes` (both non-empty),
/// counting a bypass when it arrived after the write.
fn read_goes_first(reads: TxId, writes: TxId, view: &DispatchView, bypasses: &mut u32, limit: u32) -> bool {
    if view.txs[reads].enqueued_at <= view.txs[writes].enqueued_at {
        return true; // queued before the write: not a bypass
    }
    if *bypasses < limit {
        *bypasses += 1;
        return true;
    }
    false
}

/// Take the head of `queue` and, if allowed, more transactions of the same operation on other planes
/// (multi-plane), and transactions on other units of the flash pages taken (one page operation each).
#[inline(always)]
pub(super) fn take_batch(queue: &mut VecDeque<TxId>, view: &DispatchView, planes_per_die: u32, batch: &mut Vec<TxId>) {
    let Some(head) = queue.pop_front() else { return };
    let start = batch.len();
    batch.push(head);
    let op = view.txs[head].op;
    let multiplane = view.multiplane && planes_per_die > 1;
    if op == FlashOp::Erase || (!multiplane && view.units_per_page == 1) {
        return;
    }
    let most = planes_per_die as usize * view.units_per_page as usize;
    let mut planes_used: u64 = 1 << view.txs[head].plane;
    let mut i = 0;
    while i < queue.len().min(MULTIPLANE_WINDOW) && batch.len() - start < most {
        let candidate = queue[i];
        let tx = &view.txs[candidate];
        let joins = tx.op == op
            && if planes_used & (1 << tx.plane) == 0 {
                multiplane && view.pairs_with(head, candidate)
            } else {
                view.units_per_page > 1 && batch[start..].iter().any(|&b| view.same_flash_page(b, candidate))
            };
        if joins {
            planes_used |= 1 << tx.plane;
            batch.push(candidate);
            queue.remove(i);
        } else {
            i += 1;
        }
    }
}

impl TransactionScheduler for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }

    fn enqueue(&mut self, id: TxId, txs: &TxArena) {
        let tx = &txs[id];
        let q = &mut self.dies[tx.die as usize];
        match tx.purpose {
            Purpose::MapRead => q.map_reads.push_back(id),
            Purpose::UserRead => q.user_reads.push_back(id),
            Purpose::Gc => q.gc.push_back(id),
            Purpose::UserWrite => q.user_writes.push_back(id),
        }
        self.queued += 1;
    }

    fn dispatch(&mut self, die: u32, view: &DispatchView, batch: &mut Vec<TxId>) {
        let q = &mut self.dies[die as usize];
        if view.reads_only {
            // A program or erase is suspended for reads: mapping reads, then host reads, nothing else.
            let queue = if q.map_reads.is_empty() { &mut q.user_reads } else { &mut q.map_reads };
            take_batch(queue, view, self.planes_per_die, batch);
            self.queued -= batch.len();
            return;
        }
        let gc_first = q.gc_credit.gc_first(!q.gc.is_empty());
        let writes_first = !view.gc_urgent && self.read_priority != ReadPriority::Always && {
            let read = q.map_reads.front().or(q.user_reads.front());
            let write =
                if gc_first { q.gc.front().or(q.user_writes.front()) } else { q.user_writes.front().or(q.gc.front()) };
            match (read, write) {
                (Some(&r), Some(&w)) => !read_goes_first(r, w, view, &mut q.bypasses, self.bypass_limit),
                _ => false,
            }
        };
        let order: [&mut VecDeque<TxId>; 4] = if view.gc_urgent {
            [&mut q.gc, &mut q.map_reads, &mut q.user_reads, &mut q.user_writes]
        } else if writes_first && gc_first {
            [&mut q.gc, &mut q.user_writes, &mut q.map_reads, &mut q.user_reads]
        } else if writes_first {
            [&mut q.user_writes, &mut q.gc, &mut q.map_reads, &mut q.user_reads]
        } else if gc_first {
            [&mut q.map_reads, &mut q.user_reads, &mut q.gc, &mut q.user_writes]
        } else {
            [&mut q.map_reads, &mut q.user_reads, &mut q.user_writes, &mut q.gc]
        };
        for queue in order {
            if !queue.is_empty() {
                take_batch(queue, view, self.planes_per_die, batch);
                break;
            }
        }
        if let Some(&first) = batch.first() {
            let purpose = view.txs[first].purpose;
            if matches!(purpose, Purpose::Gc | Purpose::UserWrite) {
                q.bypasses = 0; // the write waiting first went (or none waited): the next one starts afresh
            }
            q.gc_credit.dispatched(purpose, batch.len(), view.gc_pace);
        }
        self.queued -= batch.len();
    }

    fn queued(&self) -> usize {
        self.queued
    }

    fn reads_waiting(&self, die: u32) -> bool {
        let q = &self.dies[die as usize];
        !q.map_reads.is_empty() || !q.user_reads.is_empty()
    }

    fn gc_credit(&self, die: u32) -> Option<f64> {
        Some(self.dies[die as usize].gc_credit.get())
    }

    fn set_gc_credit(&mut self, die: u32, credit: f64) {
        self.dies[die as usize].gc_credit = GcCredit::of(credit);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{add, build, config, next, tx};
    use super::*;
    use crate::device::transaction::Purpose::{UserRead, UserWrite};

    /// A `fifo` scheduler of one single-plane die with `priority` and `limit`.
    fn scheduler(priority: ReadPriority, limit: u32) -> Box<dyn TransactionScheduler> {
        let mut cfg = config("fifo");
        cfg.read_priority = priority;
        cfg.read_bypass_limit = limit;
        build(&cfg, 1, 1)
    }

    /// Queue one write at time 0, then `reads` reads at 1, 2, ...: the order the die serves them in, as
    /// 'w' and 'r'.
    fn order(priority: ReadPriority, limit: u32, reads: u32) -> String {
        let mut s = scheduler(priority, limit);
        let mut txs = TxArena::default();
        let write = add(s.as_mut(), &mut txs, tx(UserWrite, 0, 0, 0, 0, 0));
        for i in 0..reads {
            add(s.as_mut(), &mut txs, tx(UserRead, 0, 0, 1 + i, 1, 1 + i as u64));
        }
        let mut served = String::new();
        loop {
            let batch = next(s.as_mut(), &txs, 0, 100);
            let Some(&first) = batch.first() else { break };
            served.push(if first == write { 'w' } else { 'r' });
        }
        served
    }

    #[test]
    fn reads_always_first_pass_a_waiting_write_every_time() {
        assert_eq!(order(ReadPriority::Always, 0, 5), "rrrrrw");
    }

    #[test]
    fn bounded_read_priority_lets_reads_pass_a_write_at_most_the_limit() {
        assert_eq!(order(ReadPriority::Bounded, 2, 5), "rrwrrr");
        assert_eq!(order(ReadPriority::Bounded, 0, 3), "wrrr", "limit 0: no read passes the write");
        assert_eq!(order(ReadPriority::Bounded, 9, 3), "rrrw", "fewer reads than the limit");
    }

    #[test]
    fn fifo_serves_in_arrival_order_and_a_read_queued_first_is_not_a_bypass() {
        assert_eq!(order(ReadPriority::Fifo, 7, 3), "wrrr", "the limit is ignored: arrival order");
        let mut s = scheduler(ReadPriority::Fifo, 0);
        let mut txs = TxArena::default();
        let read = add(s.as_mut(), &mut txs, tx(UserRead, 0, 0, 1, 1, 0));
        let write = add(s.as_mut(), &mut txs, tx(UserWrite, 0, 0, 2, 0, 5));
        assert_eq!(next(s.as_mut(), &txs, 0, 10), [read]);
        assert_eq!(next(s.as_mut(), &txs, 0, 10), [write]);
    }

    #[test]
    fn the_bypass_count_starts_afresh_for_each_waiting_write() {
        let mut s = scheduler(ReadPriority::Bounded, 1);
        let mut txs = TxArena::default();
        let w1 = add(s.as_mut(), &mut txs, tx(UserWrite, 0, 0, 0, 0, 0));
        let w2 = add(s.as_mut(), &mut txs, tx(UserWrite, 0, 0, 1, 0, 0));
        let reads: Vec<TxId> =
            (0..4).map(|i| add(s.as_mut(), &mut txs, tx(UserRead, 0, 0, 2 + i, 1, 1 + i as u64))).collect();
        let served: Vec<TxId> = (0..6).map(|_| next(s.as_mut(), &txs, 0, 100)[0]).collect();
        assert_eq!(served, [reads[0], w1, reads[1], w2, reads[2], reads[3]]);
    }

    /// Units of one flash page queued on a plane join one operation (with or without multi-plane), units of
    /// another page of the plane do not; with one unit per page, two transactions on a page stay two.
    #[test]
    fn units_of_one_flash_page_join_one_batch() {
        let mut txs = TxArena::default();
        let mut queue = VecDeque::new();
        // Plane 0: units 8..11 (page 2) with unit 12 (page 3) among them; plane 1: unit 100.
        for (plane, ppa) in [(0, 8), (0, 9), (0, 12), (1, 100), (0, 10), (0, 11)] {
            let mut t = tx(UserWrite, 0, plane, 0, 0, 0);
            t.ppa = ppa;
            queue.push_back(txs.insert(t));
        }
        let ppas = |batch: &[TxId]| batch.iter().map(|&t| txs[t].ppa).collect::<Vec<_>>();
        let take = |units_per_page: u32, multiplane: bool| {
            let v = DispatchView { units_per_page, multiplane, ..super::super::testing::view(&txs, 0) };
            let (mut q, mut batch) = (queue.clone(), Vec::new());
            take_batch(&mut q, &v, 2, &mut batch);
            ppas(&batch)
        };
        assert_eq!(take(4, false), [8, 9, 10, 11], "one page's units");
        assert_eq!(take(4, true), [8, 9, 100, 10, 11], "and another plane's page (multi-plane)");
        assert_eq!(take(1, false), [8], "one unit per page: no joining");
        assert_eq!(take(1, true), [8, 100], "multi-plane only");
        // Two transactions on the very same unit (two reads of one page) join only when units are smaller.
        let same: Vec<TxId> = (0..2)
            .map(|_| {
                let mut t = tx(UserRead, 0, 0, 0, 0, 0);
                t.ppa = 5;
                txs.insert(t)
            })
            .collect();
        let mut q: VecDeque<TxId> = same.iter().copied().collect();
        let mut batch = Vec::new();
        take_batch(&mut q, &DispatchView { multiplane: false, ..super::super::testing::view(&txs, 0) }, 2, &mut batch);
        assert_eq!(batch.len(), 1);
    }
}
