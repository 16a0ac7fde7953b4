//! FIFO with reads before writes: the baseline transaction scheduler (MQSim's default TSU).
//!
//! Each chip keeps its queues per die: FIFO across a chip, skipping transactions whose die is busy, is the
//! same as FIFO per die, and per-die queues need no scan. Order of service for an idle die: mapping reads,
//! then user reads, then user writes and garbage collection paced against each other: every host page
//! programmed earns GC the transactions it takes to reclaim that page's space (`gc_pace`, from the victims'
//! valid counts), and GC goes ahead of host writes while it has such credit. Free space then stays near
//! the GC threshold, as in a drive at steady state, instead of running down to the hard threshold. GC goes
//! first unconditionally when one of the die's planes is at or below the hard free-block threshold.

use std::collections::VecDeque;

use super::{DispatchView, GcCredit, TransactionScheduler};
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
}

pub struct Fifo {
    dies: Vec<DieQueues>,
    planes_per_die: u32,
    queued: usize,
}

impl Fifo {
    pub fn new(dies: u32, planes_per_die: u32) -> Self {
        Fifo { dies: (0..dies).map(|_| DieQueues::default()).collect(), planes_per_die, queued: 0 }
    }
}

/// Take the head of `queue` and, if allowed, more transactions of the same operation on other planes.
#[inline(always)]
pub(super) fn take_batch(queue: &mut VecDeque<TxId>, view: &DispatchView, planes_per_die: u32, batch: &mut Vec<TxId>) {
    let Some(head) = queue.pop_front() else { return };
    batch.push(head);
    let op = view.txs[head].op;
    if !view.multiplane || planes_per_die == 1 || op == FlashOp::Erase {
        return;
    }
    let mut planes_used: u64 = 1 << view.txs[head].plane;
    let mut i = 0;
    while i < queue.len().min(MULTIPLANE_WINDOW) && batch.len() < planes_per_die as usize {
        let candidate = queue[i];
        let tx = &view.txs[candidate];
        if tx.op == op && planes_used & (1 << tx.plane) == 0 && view.pairs_with(head, candidate) {
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
        let order: [&mut VecDeque<TxId>; 4] = if view.gc_urgent {
            [&mut q.gc, &mut q.map_reads, &mut q.user_reads, &mut q.user_writes]
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
            q.gc_credit.dispatched(view.txs[first].purpose, batch.len(), view.gc_pace);
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
}
