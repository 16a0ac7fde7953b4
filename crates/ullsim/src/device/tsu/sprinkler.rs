//! Sprinkler (Jung & Kandemir, HPCA'14): resource-driven scheduling with FARO over-commitment.
//!
//! Every outstanding transaction waits in its die's pool, queued per plane, and an idle die takes work from
//! any of them, out of order across I/Os: it gathers one transaction from every plane that has one (the
//! largest multi-plane command the pool allows, where `fifo` only looks 16 deep into one queue behind its
//! head). Among equally large commands it prefers the one holding most transactions of a single I/O, so
//! whole requests finish sooner: the anchor is the plane head whose request has transactions near the head
//! of most other planes (oldest first on ties), and every other plane gives a transaction of the anchor's
//! request if one is among its first [`FARO_WINDOW`], else its oldest. Reads go before writes, as in MQSim's
//! out-of-order TSU; mapping reads first, and garbage collection as in `fifo` (first when urgent, otherwise
//! paced against host writes).
//!
//! Not modelled: Sprinkler's channel-level round robin over chips (the model starts an idle die at once and
//! its channel transfers are first come, first served), and die interleaving beyond the model's per-die
//! multi-plane commands.

use std::collections::VecDeque;

use super::fifo::take_batch;
use super::{flow_slot, take_before_host_work, DispatchView, GcCredit, SchedulerSetup, TransactionScheduler};
use crate::device::transaction::{Purpose, TxArena, TxId, NONE};

/// How deep into another plane's queue to look for a transaction of the anchor's request (or flow).
pub(super) const FARO_WINDOW: usize = 16;
/// How deep into each plane's queue to look for the oldest transaction of a chosen flow.
pub(super) const FLOW_SCAN_LIMIT: usize = 256;

/// A transaction waiting in a plane queue, with what choosing it needs (no arena look-up while scanning).
#[derive(Debug, Clone, Copy)]
pub(super) struct Waiting {
    /// Arrival order in the scheduler.
    seq: u64,
    tx: TxId,
    req: u32,
    flow: u32,
}

/// Host transactions of one kind (reads or writes) of a die, one FIFO per plane.
#[derive(Debug, Default)]
pub(super) struct PlaneQueues {
    planes: Vec<VecDeque<Waiting>>,
    len: usize,
}

impl PlaneQueues {
    fn new(planes: u32) -> Self {
        PlaneQueues { planes: (0..planes).map(|_| VecDeque::new()).collect(), len: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn remove(&mut self, plane: usize, index: usize) -> Waiting {
        self.len -= 1;
        self.planes[plane].remove(index).expect("index within the plane queue")
    }

    /// Planes other than `plane` holding a transaction of request `req` among their first `FARO_WINDOW`.
    fn planes_with_request(&self, plane: usize, req: u32) -> usize {
        if req == NONE {
            return 0;
        }
        (self.planes.iter().enumerate())
            .filter(|&(q, queue)| q != plane && queue.iter().take(FARO_WINDOW).any(|w| w.req == req))
            .count()
    }

    /// Sprinkler's anchor: the plane head whose request spans most other planes, oldest first on ties.
    fn anchor(&self) -> (usize, usize) {
        let mut best: Option<(usize, usize, u64)> = None; // (plane, score, seq)
        for (p, queue) in self.planes.iter().enumerate() {
            let Some(head) = queue.front() else { continue };
            let score = self.planes_with_request(p, head.req);
            if best.is_none_or(|(_, s, seq)| score > s || (score == s && head.seq < seq)) {
                best = Some((p, score, head.seq));
            }
        }
        (best.expect("anchor() on an empty pool").0, 0)
    }

    /// The oldest transaction of `flow` among the first `FLOW_SCAN_LIMIT` of each plane queue.
    fn oldest_of_flow(&self, flow: u32) -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize, u64)> = None;
        for (p, queue) in self.planes.iter().enumerate() {
            if let Some(i) = queue.iter().take(FLOW_SCAN_LIMIT).position(|w| w.flow == flow) {
                if best.is_none_or(|(_, _, seq)| queue[i].seq < seq) {
                    best = Some((p, i, queue[i].seq));
                }
            }
        }
        best.map(|(p, i, _)| (p, i))
    }
}

/// One die's waiting work.
#[derive(Debug)]
pub(super) struct DiePool {
    map_reads: VecDeque<TxId>,
    gc: VecDeque<TxId>,
    reads: PlaneQueues,
    writes: PlaneQueues,
    gc_credit: GcCredit,
    /// Per flow: host reads and writes queued on the die.
    flow_queued: Vec<[u32; 2]>,
}

impl DiePool {
    /// Host reads and writes of `flow` queued on the die.
    pub fn queued_of(&self, flow: u32) -> [u32; 2] {
        self.flow_queued.get(flow as usize).copied().unwrap_or([0, 0])
    }

    /// Flows with host work queued on the die, in flow order.
    pub fn flows_waiting(&self) -> impl Iterator<Item = u32> + '_ {
        (self.flow_queued.iter().enumerate()).filter(|(_, q)| q[0] + q[1] > 0).map(|(f, _)| f as u32)
    }
}

/// The per-die pools and the dispatch rule Sprinkler and Sprinkler+Fairness share.
pub(super) struct Pools {
    dies: Vec<DiePool>,
    planes_per_die: u32,
    next_seq: u64,
    queued: usize,
}

impl Pools {
    pub fn new(dies: u32, planes_per_die: u32) -> Self {
        Pools {
            dies: (0..dies)
                .map(|_| DiePool {
                    map_reads: VecDeque::new(),
                    gc: VecDeque::new(),
                    reads: PlaneQueues::new(planes_per_die),
                    writes: PlaneQueues::new(planes_per_die),
                    gc_credit: GcCredit::default(),
                    flow_queued: Vec::new(),
                })
                .collect(),
            planes_per_die,
            next_seq: 0,
            queued: 0,
        }
    }

    pub fn queued(&self) -> usize {
        self.queued
    }

    pub fn enqueue(&mut self, id: TxId, txs: &TxArena) {
        let tx = &txs[id];
        let pool = &mut self.dies[tx.die as usize];
        let waiting = Waiting { seq: self.next_seq, tx: id, req: tx.req, flow: tx.flow };
        self.next_seq += 1;
        match tx.purpose {
            Purpose::MapRead => pool.map_reads.push_back(id),
            Purpose::Gc => pool.gc.push_back(id),
            Purpose::UserRead | Purpose::UserWrite => {
                assert_ne!(tx.flow, NONE, "host transactions carry their flow");
                let kind = (tx.purpose == Purpose::UserWrite) as usize;
                let queues = if kind == 0 { &mut pool.reads } else { &mut pool.writes };
                queues.planes[tx.plane as usize].push_back(waiting);
                queues.len += 1;
                flow_slot(&mut pool.flow_queued, tx.flow)[kind] += 1;
            }
        }
        self.queued += 1;
    }

    /// Fill `batch` for idle `die`. `favoured(pool)` names the flow whose host work goes first (Sprinkler
    /// + Fairness), or `None` for plain Sprinkler (reads first, then writes).
    pub fn dispatch(
        &mut self,
        die: u32,
        view: &DispatchView,
        batch: &mut Vec<TxId>,
        favoured: impl FnOnce(&DiePool) -> Option<u32>,
    ) {
        let planes = self.planes_per_die;
        let pool = &mut self.dies[die as usize];
        let gc_first = pool.gc_credit.gc_first(!pool.gc.is_empty());
        if !take_before_host_work(&mut pool.gc, &mut pool.map_reads, view, planes, batch) {
            let flow = favoured(pool);
            let serve_reads = match flow {
                Some(f) => pool.queued_of(f)[0] > 0,
                None => !pool.reads.is_empty(),
            };
            if view.reads_only {
                // A program or erase is suspended for reads: the favoured flow's reads, else anyone's.
                if !pool.reads.is_empty() {
                    let flow = flow.filter(|_| serve_reads);
                    take_faro(&mut pool.reads, &mut pool.flow_queued, 0, flow, view, planes, batch);
                }
            } else if serve_reads {
                take_faro(&mut pool.reads, &mut pool.flow_queued, 0, flow, view, planes, batch);
            } else if !pool.gc.is_empty() && (gc_first || pool.writes.is_empty()) {
                take_batch(&mut pool.gc, view, planes, batch);
            } else if !pool.writes.is_empty() {
                take_faro(&mut pool.writes, &mut pool.flow_queued, 1, flow, view, planes, batch);
            }
        }
        if let Some(&first) = batch.first() {
            pool.gc_credit.dispatched(view.txs[first].purpose, batch.len(), view.gc_pace);
        }
        self.queued -= batch.len();
    }
}

/// FARO over-commitment on one kind of host work: an anchor (the oldest transaction of `flow` if given and
/// found, else Sprinkler's anchor), then one transaction from every other plane that has one, preferring the
/// anchor's request, then the anchor's flow when a flow is favoured, then the oldest.
fn take_faro(
    queues: &mut PlaneQueues,
    flow_queued: &mut [[u32; 2]],
    kind: usize,
    flow: Option<u32>,
    view: &DispatchView,
    planes_per_die: u32,
    batch: &mut Vec<TxId>,
) {
    let (plane, index) = flow.and_then(|f| queues.oldest_of_flow(f)).unwrap_or_else(|| queues.anchor());
    let anchor = queues.remove(plane, index);
    let mut take = |w: Waiting, queues: &mut PlaneQueues, plane: usize, batch: &mut Vec<TxId>| {
        flow_queued[w.flow as usize][kind] -= 1;
        batch.push(w.tx);
        // With mapping units smaller than the page, the other units of a taken page go with it.
        let mut i = 0;
        while view.units_per_page > 1 && i < queues.planes[plane].len().min(FARO_WINDOW) {
            if view.same_flash_page(w.tx, queues.planes[plane][i].tx) {
                let unit = queues.remove(plane, i);
                flow_queued[unit.flow as usize][kind] -= 1;
                batch.push(unit.tx);
            } else {
                i += 1;
            }
        }
    };
    take(anchor, queues, plane, batch);
    if !view.multiplane || planes_per_die == 1 {
        return;
    }
    for other in 0..queues.planes.len() {
        if other == plane || queues.planes[other].is_empty() {
            continue;
        }
        // Only transactions that may pair with the anchor (page numbers, `DispatchView::pairs_with`) count.
        let window = || queues.planes[other].iter().take(FARO_WINDOW).map(|w| (w, view.pairs_with(anchor.tx, w.tx)));
        let index = (anchor.req != NONE)
            .then(|| window().position(|(w, pairs)| pairs && w.req == anchor.req))
            .flatten()
            .or_else(|| flow.and_then(|f| window().position(|(w, pairs)| pairs && w.flow == f)))
            .or_else(|| window().position(|(_, pairs)| pairs));
        if let Some(index) = index {
            let w = queues.remove(other, index);
            take(w, queues, other, batch);
        }
    }
    debug_assert!(batch.len() <= (planes_per_die * view.units_per_page) as usize);
}

/// Plain Sprinkler.
pub struct Sprinkler {
    pools: Pools,
}

impl Sprinkler {
    pub fn new(setup: &SchedulerSetup) -> Self {
        Sprinkler { pools: Pools::new(setup.dies, setup.planes_per_die) }
    }
}

impl TransactionScheduler for Sprinkler {
    fn name(&self) -> &'static str {
        "sprinkler"
    }

    fn enqueue(&mut self, id: TxId, txs: &TxArena) {
        self.pools.enqueue(id, txs);
    }

    fn dispatch(&mut self, die: u32, view: &DispatchView, batch: &mut Vec<TxId>) {
        self.pools.dispatch(die, view, batch, |_| None);
    }

    fn queued(&self) -> usize {
        self.pools.queued()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{add, build, config, dispatch, next, tx, view};
    use super::*;

    #[test]
    fn gathers_a_multi_plane_command_from_different_requests_beyond_fifos_window() {
        // Twenty reads (requests 0..20) wait on plane 0, then request 99 reads plane 1. FIFO looks only 16
        // deep behind its head; Sprinkler takes one transaction from every plane that has one.
        let mut txs = TxArena::default();
        let mut sprinkler = build(&config("sprinkler"), 1, 2);
        let mut fifo = build(&config("fifo"), 1, 2);
        let mut sprinkler_txs = Vec::new();
        for req in 0..20 {
            let t = tx(Purpose::UserRead, 0, 0, req, 0, 0);
            sprinkler_txs.push(add(sprinkler.as_mut(), &mut txs, t.clone()));
            add(fifo.as_mut(), &mut txs, t);
        }
        let t = tx(Purpose::UserRead, 0, 1, 99, 1, 0);
        let late = add(sprinkler.as_mut(), &mut txs, t.clone());
        add(fifo.as_mut(), &mut txs, t);
        assert_eq!(next(fifo.as_mut(), &txs, 0, 1).len(), 1, "fifo: plane 1's read is outside its window");
        let batch = next(sprinkler.as_mut(), &txs, 0, 1);
        assert_eq!(batch, vec![sprinkler_txs[0], late], "oldest read of plane 0 plus plane 1's read");
        assert_ne!(txs[batch[0]].req, txs[batch[1]].req);
        assert_eq!(sprinkler.queued(), 19);
    }

    #[test]
    fn prefers_transactions_of_the_same_request_on_ties() {
        // Plane 1 holds B (oldest) then A2; plane 0 holds A1. Every choice is a two-plane command; the one
        // finishing request A goes first, although B is older.
        let mut txs = TxArena::default();
        let mut s = build(&config("sprinkler"), 1, 2);
        let b = add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 1, 2, 0, 0));
        let a1 = add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 1, 0, 0));
        let a2 = add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 1, 1, 0, 0));
        assert_eq!(next(s.as_mut(), &txs, 0, 1), vec![a1, a2]);
        assert_eq!(next(s.as_mut(), &txs, 0, 2), vec![b]);
        assert!(next(s.as_mut(), &txs, 0, 3).is_empty());
        assert_eq!(s.queued(), 0);
    }

    #[test]
    fn reads_before_writes_mapping_reads_first_and_urgent_gc_before_all() {
        let mut txs = TxArena::default();
        let mut s = build(&config("sprinkler"), 1, 1);
        let write = add(s.as_mut(), &mut txs, tx(Purpose::UserWrite, 0, 0, 1, 0, 0));
        let gc = add(s.as_mut(), &mut txs, tx(Purpose::Gc, 0, 0, NONE, 0, 0));
        let read = add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 2, 0, 0));
        let map = add(s.as_mut(), &mut txs, tx(Purpose::MapRead, 0, 0, NONE, 0, 0));
        assert_eq!(dispatch(s.as_mut(), 0, &DispatchView { gc_urgent: true, ..view(&txs, 1) }), vec![gc]);
        assert_eq!(next(s.as_mut(), &txs, 0, 2), vec![map]);
        assert_eq!(next(s.as_mut(), &txs, 0, 3), vec![read]);
        assert_eq!(next(s.as_mut(), &txs, 0, 4), vec![write]);
    }
}
