//! FLIN (Tavakkol et al., ISCA'18): a three-stage transaction scheduler that mitigates the four sources of
//! interference between flows (I/O intensity, access pattern, read/write ratio, GC demand).
//!
//! Per die ("chip" in FLIN; the presets FLIN is run on have one die per chip) there is a host read queue and
//! a host write queue for each NVMe priority class, plus a mapping-read queue and a GC queue.
//!
//! - **Flow intensity.** Each die counts every flow's read and write transactions per epoch
//!   (`flin_epoch_ns`); at the end of an epoch a flow whose count is below `alpha / dies / page_bytes`
//!   (`flin_alpha_read_bytes`, `flin_alpha_write_bytes`) is low-intensity on that die for the next epoch.
//!   A flow is low-intensity on a die until it has been measured there (MQSim starts it high-intensity).
//! - **Slowdown estimates.** A transaction's alone time runs on one virtual clock per flow and die, shared
//!   by the flow's reads and writes (alone, the flow has the die's one queue to itself, so its reads wait
//!   behind its writes and the other way round): `alone_finish = max(now, previous alone_finish) + service
//!   (+ the flow's GC time per page written, for writes)`, `T_alone = alone_finish − enqueued` (its wait
//!   behind its own work plus its service). Its shared time at queue position i is `T_shared = (now −
//!   issue) + die busy remaining + Σ service of entries 0..=i`, where `issue` is when its request arrived at
//!   the device (`Transaction::arrived_at`: the time before the TSU, e.g. waiting for a mapping read, is
//!   part of the request's wait; work no request waits for counts from its enqueue). `S = T_shared /
//!   T_alone`; a flow's slowdown is the mean S of its transactions in the queue, and the queue's fairness
//!   `F = min S_flow / max S_flow` (1 with fewer than two flows).
//! - **Stage 1, fairness-aware insertion.** A queue holds a low-intensity part at its head and a
//!   high-intensity part behind it. A low-intensity flow's transaction goes to the end of the low part, then
//!   to the position ahead of it (within the low part) that maximizes F; a high-intensity one goes to the
//!   tail, and if F < `flin_fairness_threshold` and its flow has the highest slowdown it moves forward to
//!   just behind the low part, stopping behind a transaction of its own flow or a transaction that moved
//!   the same way before (MQSim's barrier); otherwise it goes to the position within the high part that
//!   maximizes F. A moving transaction never passes one of its own flow (but after a flow turns from high
//!   to low intensity its new transactions go ahead of its older ones). Off: FIFO insertion.
//! - **Stage 2, priority-aware arbitration.** A read slot and a write slot per die are filled from the class
//!   queue heads by weighted round robin: a round of 15 turns in which class i (urgent 0 … low 3) has
//!   `2^(3−i)` turns (8/4/2/1), interleaved (turn t belongs to class `trailing_zeros(t + 1)`); an empty
//!   class's turn passes to the next. Off: plain round robin, one turn per class.
//! - **Stage 3, wait-balancing selection.** Proportional wait `PW = T_wait / (T_memory + T_transfer)` for
//!   both slots (`T_wait` from the request's arrival at the device, or from entering the slot with
//!   `flin_stage3_wait = "slot"`; for writes the denominator adds the flow's GC time per page, below); the
//!   write slot is served when its PW is larger, the read slot otherwise. A background destage (its host
//!   write already completed from the write buffer) stalls no one, so its wait counts only from when host
//!   writes began waiting for buffer space (`DispatchView::host_writes_blocked_since`); until then it has
//!   PW 0 and reads go first. (Counting it in full made reads wait a seventeenth of the destage backlog's
//!   age under GC load, with no host request gaining.) Off: the read slot first.
//! - **GC as write-slot work.** GC is paced against host writes as in `fifo` (every host page programmed
//!   on the die owes `gc_pace` GC transactions), but the debt is kept per flow: each flow's programs on the
//!   die earn its own GC credit. When the write slot wins stage 3 and *its* flow owes at least one GC
//!   transaction, the die runs GC instead (the write keeps its slot) and that flow's credit pays for it; a
//!   write of a flow that owes nothing goes ahead, so a low-GC flow's write never runs the GC a high-GC
//!   flow's writes made due. GC thus triggers in proportion to each flow's writes on the die, as the
//!   slides say ("GC cost is charged to flows in proportion to their writes when the write slot triggers
//!   GC"). GC also runs when the die has no host work (paid by the flows in proportion to what they owe).
//!   The die time of every GC batch is then charged to flows by the device in proportion to the host pages
//!   each wrote to the collected plane since its previous job (`CompletionView::gc_charges`,
//!   `device/gc_cost.rs`), which feeds the GC cost estimate ([`GcEstimate`]).
//! - **The one bypass: the hard free-block threshold.** While a plane of the die is at or below the hard
//!   threshold (`DispatchView::gc_urgent`) and GC is queued, GC goes before both slots whatever the flows
//!   owe: host writes would otherwise spend the last free blocks and the drive could run out of space with
//!   GC stuck behind them. The bypass is bounded twice: it lasts only while the threshold is crossed (the
//!   job running on the plane erases a block and lifts it), and after [`URGENT_GC_RUN`] GC batches in a
//!   row one read-slot (or mapping-read) batch goes, since reads spend no free blocks; host writes wait.
//!
//! Mapping reads go before host work (host reads wait for them).
//!
//! Queue walks are bounded: estimates cover the first [`ESTIMATE_WINDOW`] entries of a queue (plus the new
//! one), a fairness reordering tries at most [`REORDER_STEPS`] positions, and a move forward scans at most
//! [`MOVE_SCAN_LIMIT`] entries.

use std::collections::VecDeque;

mod gc_estimate;
use gc_estimate::GcEstimate;

use super::fifo::{take_batch, MULTIPLANE_WINDOW};
use super::{flow_slot, memory_ns, service_ns};
use super::{CompletionView, DispatchView, SchedulerSetup, TransactionScheduler};
use crate::config::device::Stage3Wait;
use crate::device::flash::{FlashOp, Timing};
use crate::device::transaction::{Purpose, Transaction, TxArena, TxId, NONE};
use crate::engine::Time;
use crate::request::NvmePriority;

/// NVMe priority classes, urgent first.
const CLASSES: usize = 4;
/// Turns in one weighted round robin round: 8 + 4 + 2 + 1.
const WRR_ROUND: usize = 15;
/// Queue entries whose slowdown is estimated at an insertion.
const ESTIMATE_WINDOW: usize = 256;
/// Positions a fairness reordering tries ahead of the insertion point.
const REORDER_STEPS: usize = 64;
/// Entries a move forward scans for its stopping point.
const MOVE_SCAN_LIMIT: usize = 1024;
/// GC batches a die runs in a row past the hard free-block threshold before one read batch may go (a
/// move's read and program, or an erase, is ~1.3-3.8 ms: a read waits at most ~4 of them, ~10 ms, instead
/// of a whole job of hundreds of page moves; GC keeps at least 4/5 of the die).
const URGENT_GC_RUN: u32 = 4;
const READ: usize = 0;
const WRITE: usize = 1;

fn class_index(p: NvmePriority) -> usize {
    match p {
        NvmePriority::Urgent => 0,
        NvmePriority::High => 1,
        NvmePriority::Medium => 2,
        NvmePriority::Low => 3,
    }
}

/// The class whose turn `turn` is in the weighted round robin.
fn wrr_class(turn: usize) -> usize {
    (turn + 1).trailing_zeros() as usize
}

/// A host transaction in a class queue or slot.
#[derive(Debug, Clone, Copy)]
struct Entry {
    tx: TxId,
    flow: u32,
    plane: u32,
    op: FlashOp,
    /// When its request arrived at the device (`Transaction::arrived_at`): the start of `T_shared` and of
    /// stage 3's `T_wait`.
    arrived_at: Time,
    /// When it entered the TSU: the start of its alone time.
    enqueued_at: Time,
    /// Estimated die time of the transaction alone.
    service: Time,
    /// When the flow's own work on this die would have finished this transaction had it run alone.
    alone_finish: Time,
    /// Moved forward by stage 1: later high-intensity transactions do not pass it.
    barrier: bool,
}

impl Entry {
    fn alone_ns(&self) -> Time {
        (self.alone_finish - self.enqueued_at).max(1)
    }
}

/// One class queue: `entries[..low_len]` is the low-intensity part.
#[derive(Debug, Default)]
struct ClassQueue {
    entries: VecDeque<Entry>,
    low_len: usize,
    total_service: Time,
    /// The flows with entries in the queue and how many each has.
    flows: Vec<(u32, u32)>,
}

impl ClassQueue {
    fn insert(&mut self, index: usize, e: Entry) {
        self.total_service += e.service;
        self.entries.insert(index, e);
        match self.flows.iter_mut().find(|(f, _)| *f == e.flow) {
            Some((_, n)) => *n += 1,
            None => self.flows.push((e.flow, 1)),
        }
    }

    fn remove(&mut self, index: usize) -> Entry {
        if index < self.low_len {
            self.low_len -= 1;
        }
        let e = self.entries.remove(index).expect("index within the queue");
        self.total_service -= e.service;
        let at = self.flows.iter().position(|(f, _)| *f == e.flow).expect("the flow is counted");
        self.flows[at].1 -= 1;
        if self.flows[at].1 == 0 {
            self.flows.swap_remove(at);
        }
        e
    }

    /// Entries of a flow other than `flow` are queued.
    fn has_other_flows(&self, flow: u32) -> bool {
        self.flows.iter().any(|&(f, _)| f != flow)
    }

    /// Move the entry at `from` to `to` (`to <= from`), within the same part.
    fn move_forward(&mut self, from: usize, to: usize) {
        if from != to {
            let e = self.entries.remove(from).expect("index within the queue");
            self.entries.insert(to, e);
        }
    }
}

/// A flow as one die sees it.
#[derive(Debug, Clone, Copy)]
struct FlowOnDie {
    /// Read and write transactions enqueued this epoch.
    epoch_count: [u32; 2],
    /// Low-intensity for reads / writes (classified at the last epoch end).
    low: [bool; 2],
    /// End of the flow's alone virtual clock on the die (one clock: reads and writes alike).
    alone_finish: Time,
    /// GC transactions the flow's host programs on the die made due and its writes have not paid for yet.
    gc_credit: f64,
}

impl Default for FlowOnDie {
    /// A flow not measured yet issued nothing in the last epoch: low-intensity. (MQSim starts every flow
    /// high-intensity; then, when a flow turns low-intensity at the first epoch end, its new transactions
    /// pass its older ones queued in the high-intensity part.)
    fn default() -> Self {
        FlowOnDie { epoch_count: [0; 2], low: [true; 2], alone_finish: 0, gc_credit: 0.0 }
    }
}

/// A transaction stage 2 took from a class queue for stage 3.
#[derive(Debug, Clone, Copy)]
struct Slot {
    entry: Entry,
    /// The class queue it came from (a multi-plane batch joins it from there).
    class: usize,
    /// When it entered the slot.
    since: Time,
}

#[derive(Debug, Default)]
struct FlinDie {
    map_reads: VecDeque<TxId>,
    gc: VecDeque<TxId>,
    /// `[READ | WRITE][class]`.
    queues: [[ClassQueue; CLASSES]; 2],
    /// Entries in the class queues of reads / writes (slots not included).
    in_queues: [usize; 2],
    /// Stage 3's read and write slots.
    slots: [Option<Slot>; 2],
    /// Next weighted-round-robin turn for reads / writes.
    turn: [usize; 2],
    /// GC batches dispatched in a row past the hard free-block threshold.
    urgent_gc_run: u32,
    /// Estimated end of the die's running operation.
    busy_until: Time,
    epoch_end: Time,
    flows: Vec<FlowOnDie>,
}

/// Per-flow slowdown sums over the entries of a queue being evaluated (scratch reused across insertions).
#[derive(Debug, Default)]
struct Estimates {
    /// `T_shared` of the entries `0..shared.len()`.
    shared: Vec<Time>,
    sum: Vec<f64>,
    count: Vec<u32>,
    /// Flows with `count > 0`.
    present: Vec<u32>,
}

fn slowdown(shared: Time, alone: Time) -> f64 {
    shared as f64 / alone.max(1) as f64
}

impl Estimates {
    fn reset(&mut self) {
        for &f in &self.present {
            self.sum[f as usize] = 0.0;
            self.count[f as usize] = 0;
        }
        self.present.clear();
        self.shared.clear();
    }

    fn add(&mut self, flow: u32, s: f64) {
        if *flow_slot(&mut self.count, flow) == 0 {
            self.present.push(flow);
        }
        self.count[flow as usize] += 1;
        *flow_slot(&mut self.sum, flow) += s;
    }

    /// Estimate the first `ESTIMATE_WINDOW` entries of `q` (and the entry at `extra`, if beyond them) at
    /// `now` with the die busy for `busy_ns` more. Returns `T_shared` of the entry at `extra`.
    fn compute(&mut self, q: &ClassQueue, now: Time, busy_ns: Time, extra: usize) -> Time {
        self.reset();
        let mut ahead = busy_ns;
        for e in q.entries.iter().take(ESTIMATE_WINDOW) {
            ahead += e.service;
            let shared = now - e.arrived_at + ahead;
            self.shared.push(shared);
            self.add(e.flow, slowdown(shared, e.alone_ns()));
        }
        if extra < self.shared.len() {
            return self.shared[extra];
        }
        let e = &q.entries[extra];
        let before = if extra + 1 == q.entries.len() {
            q.total_service - e.service
        } else {
            q.entries.iter().take(extra).map(|x| x.service).sum()
        };
        let shared = now - e.arrived_at + busy_ns + before + e.service;
        self.add(e.flow, slowdown(shared, e.alone_ns()));
        shared
    }

    fn mean(&self, flow: u32) -> f64 {
        self.sum[flow as usize] / self.count[flow as usize] as f64
    }

    /// `min S_flow / max S_flow` over the flows present, and the largest mean.
    fn fairness(&self) -> (f64, f64) {
        if self.present.len() < 2 {
            return (1.0, self.present.first().map_or(0.0, |&f| self.mean(f)));
        }
        let (mut min, mut max) = (f64::MAX, 0.0f64);
        for &f in &self.present {
            let m = self.mean(f);
            min = min.min(m);
            max = max.max(m);
        }
        (if max > 0.0 { min / max } else { 1.0 }, max)
    }

    fn replace(&mut self, flow: u32, old: f64, new: f64) {
        self.sum[flow as usize] += new - old;
    }
}

pub struct Flin {
    dies: Vec<FlinDie>,
    planes_per_die: u32,
    timing: Timing,
    epoch_ns: Time,
    /// Transactions per die per epoch below which a flow is low-intensity, for reads / writes.
    alpha_per_die: [f64; 2],
    fairness_threshold: f64,
    stage1: bool,
    stage2: bool,
    stage3: bool,
    stage3_wait: Stage3Wait,
    gc: GcEstimate,
    estimates: Estimates,
    queued: usize,
}

impl Flin {
    pub fn new(setup: &SchedulerSetup) -> Self {
        let cfg = setup.config;
        let per_die = |bytes: u64| bytes as f64 / setup.dies as f64 / setup.page_bytes as f64;
        Flin {
            dies: (0..setup.dies).map(|_| FlinDie { epoch_end: cfg.flin_epoch_ns.0, ..FlinDie::default() }).collect(),
            planes_per_die: setup.planes_per_die,
            timing: setup.timing,
            epoch_ns: cfg.flin_epoch_ns.0,
            alpha_per_die: [per_die(cfg.flin_alpha_read_bytes.0), per_die(cfg.flin_alpha_write_bytes.0)],
            fairness_threshold: cfg.flin_fairness_threshold,
            stage1: cfg.flin_stage1,
            stage2: cfg.flin_stage2,
            stage3: cfg.flin_stage3,
            stage3_wait: cfg.flin_stage3_wait,
            gc: GcEstimate::new(cfg.flin_epoch_ns.0),
            estimates: Estimates::default(),
            queued: 0,
        }
    }

    /// Close the epochs of `die` that ended by `now`: classify its flows by their counts.
    fn roll_epoch(&mut self, die: usize, now: Time) {
        let d = &mut self.dies[die];
        if now < d.epoch_end {
            return;
        }
        let epochs = (now - d.epoch_end) / self.epoch_ns + 1;
        d.epoch_end += epochs * self.epoch_ns;
        for f in &mut d.flows {
            for kind in [READ, WRITE] {
                // Counts belong to the epoch that just ended only if no whole epoch passed since.
                let count = if epochs == 1 { f.epoch_count[kind] } else { 0 };
                f.low[kind] = (count as f64) < self.alpha_per_die[kind];
                f.epoch_count[kind] = 0;
            }
        }
    }

    fn enqueue_host(&mut self, id: TxId, tx: &Transaction) {
        let die = tx.die as usize;
        let now = tx.enqueued_at;
        self.roll_epoch(die, now);
        self.gc.roll(now);
        let kind = if tx.purpose == Purpose::UserWrite { WRITE } else { READ };
        let service = service_ns(&self.timing, tx);
        let gc_share = if kind == WRITE { self.gc.per_page(tx.flow) } else { 0 };
        if kind == WRITE {
            self.gc.host_write(tx.flow, tx.lpa);
        }
        let d = &mut self.dies[die];
        let flow = flow_slot(&mut d.flows, tx.flow);
        flow.epoch_count[kind] += 1;
        let alone_finish = flow.alone_finish.max(now) + service + gc_share;
        flow.alone_finish = alone_finish;
        let low = flow.low[kind];
        let entry = Entry {
            tx: id,
            flow: tx.flow,
            plane: tx.plane,
            op: tx.op,
            arrived_at: tx.arrived_at,
            enqueued_at: now,
            service,
            alone_finish,
            barrier: false,
        };
        let busy_ns = d.busy_until.saturating_sub(now);
        d.in_queues[kind] += 1;
        let q = &mut d.queues[kind][class_index(tx.priority)];
        if self.stage1 {
            insert_fair(q, entry, low, now, busy_ns, self.fairness_threshold, &mut self.estimates);
        } else {
            q.insert(q.entries.len(), entry);
        }
    }

    /// Stage 2: take the next class queue head for the read or write slot.
    fn arbitrate(d: &mut FlinDie, kind: usize, weighted: bool, now: Time) -> Option<Slot> {
        if d.in_queues[kind] == 0 {
            return None;
        }
        let turns = if weighted { WRR_ROUND } else { CLASSES };
        let mut turn = d.turn[kind];
        for _ in 0..turns {
            let class = if weighted { wrr_class(turn) } else { turn };
            turn = if turn + 1 == turns { 0 } else { turn + 1 };
            if !d.queues[kind][class].entries.is_empty() {
                d.turn[kind] = turn;
                d.in_queues[kind] -= 1;
                return Some(Slot { entry: d.queues[kind][class].remove(0), class, since: now });
            }
        }
        unreachable!("{} entries counted in empty class queues", d.in_queues[kind]);
    }

    /// Stage 3's proportional wait of a slot's transaction. A background destage (a program whose host write
    /// already completed from the write buffer) stalls nobody until host writes wait for buffer space, so
    /// its wait counts from then: balancing reads against it would slow reads and speed up no one.
    fn proportional_wait(&self, slot: &Slot, view: &DispatchView) -> f64 {
        let e = &slot.entry;
        let start = match self.stage3_wait {
            Stage3Wait::Queue => e.arrived_at,
            Stage3Wait::Slot => slot.since,
        };
        let waiting_since = if e.op == FlashOp::Program && view.txs[e.tx].req == NONE {
            match view.host_writes_blocked_since {
                Some(blocked) => blocked.max(start),
                None => return 0.0,
            }
        } else {
            start
        };
        let gc = if e.op == FlashOp::Program { self.gc.per_page(e.flow) } else { 0 };
        // T_memory + T_transfer: the service estimate without the command cycles.
        let cost = e.service - self.timing.command_ns + gc;
        view.now.saturating_sub(waiting_since) as f64 / cost.max(1) as f64
    }

    /// Serve slot `kind`: its transaction plus, for a multi-plane command, others of its class queue.
    fn take_slot(&mut self, die: usize, kind: usize, view: &DispatchView, batch: &mut Vec<TxId>) {
        let d = &mut self.dies[die];
        let Slot { entry: head, class, .. } = d.slots[kind].take().expect("slot is filled");
        batch.push(head.tx);
        let multiplane = view.multiplane && self.planes_per_die > 1;
        if !multiplane && view.units_per_page == 1 {
            return;
        }
        let q = &mut d.queues[kind][class];
        let mut planes_used: u64 = 1 << head.plane;
        let most = self.planes_per_die as usize * view.units_per_page as usize;
        let mut i = 0;
        while i < q.entries.len().min(MULTIPLANE_WINDOW) && batch.len() < most {
            let e = q.entries[i];
            let joins = e.op == head.op
                && if planes_used & (1 << e.plane) == 0 {
                    multiplane && view.pairs_with(head.tx, e.tx)
                } else {
                    view.units_per_page > 1 && batch.iter().any(|&b| view.same_flash_page(b, e.tx))
                };
            if joins {
                planes_used |= 1 << e.plane;
                batch.push(q.remove(i).tx);
                d.in_queues[kind] -= 1;
            } else {
                i += 1;
            }
        }
    }

    /// Stages 2 and 3 with GC as write-slot work: fill the slots, pick one by proportional wait, and run GC
    /// in place of the write when the write's flow owes GC on this die (or when there is no host work).
    fn select(&mut self, die: usize, view: &DispatchView, batch: &mut Vec<TxId>) {
        let (now, planes) = (view.now, self.planes_per_die);
        let d = &mut self.dies[die];
        for kind in [READ, WRITE] {
            if d.slots[kind].is_none() {
                d.slots[kind] = Self::arbitrate(d, kind, self.stage2, now);
            }
        }
        let d = &self.dies[die];
        let serve_write = match (&d.slots[READ], &d.slots[WRITE]) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(r), Some(w)) => self.stage3 && self.proportional_wait(w, view) > self.proportional_wait(r, view),
        };
        let d = &mut self.dies[die];
        if d.slots[READ].is_none() && d.slots[WRITE].is_none() {
            if !d.gc.is_empty() {
                // An idle die collects: whoever owes pays, in proportion to what each owes.
                take_batch(&mut d.gc, view, planes, batch);
                pay_in_proportion(&mut d.flows, batch.len());
            }
        } else if serve_write {
            let writer = d.slots[WRITE].as_ref().expect("the write slot is filled").entry.flow;
            let credit = &mut flow_slot(&mut d.flows, writer).gc_credit;
            if !d.gc.is_empty() && *credit >= 1.0 {
                // The write triggers the GC its own flow's writes made due; it keeps its slot.
                take_batch(&mut d.gc, view, planes, batch);
                let credit = &mut d.flows[writer as usize].gc_credit;
                *credit = (*credit - batch.len() as f64).max(0.0);
            } else {
                self.take_slot(die, WRITE, view, batch);
            }
        } else {
            self.take_slot(die, READ, view, batch);
        }
    }

    /// Estimated die time of `batch`: command, array time, and all its data over the channel.
    fn batch_ns(&self, batch: &[TxId], txs: &TxArena) -> Time {
        let first = &txs[batch[0]];
        let bytes: u64 = batch.iter().map(|&t| txs[t].bytes as u64).sum();
        self.timing.command_ns + memory_ns(&self.timing, first.op) + self.timing.transfer_ns(bytes)
    }
}

/// `gc_transactions` of GC ran on a die without a write triggering it (idle die, or past the hard
/// threshold): take them off the flows' GC debts in proportion to each debt.
fn pay_in_proportion(flows: &mut [FlowOnDie], gc_transactions: usize) {
    let owed: f64 = flows.iter().map(|f| f.gc_credit).sum();
    if owed > 0.0 {
        let keep = (1.0 - gc_transactions as f64 / owed).max(0.0);
        flows.iter_mut().for_each(|f| f.gc_credit *= keep);
    }
}

/// Stage 1: insert `e` into `q`.
fn insert_fair(q: &mut ClassQueue, e: Entry, low: bool, now: Time, busy_ns: Time, f_thr: f64, est: &mut Estimates) {
    if !q.has_other_flows(e.flow) {
        // Alone in the queue: fairness is 1 wherever it goes and it may not pass its own flow.
        let pos = if low { q.low_len } else { q.entries.len() };
        q.insert(pos, e);
        q.low_len += usize::from(low);
        return;
    }
    if low {
        let pos = q.low_len;
        q.insert(pos, e);
        q.low_len += 1;
        let shared = est.compute(q, now, busy_ns, pos);
        let to = best_position(q, est, pos, shared, 0);
        q.move_forward(pos, to);
        return;
    }
    let pos = q.entries.len();
    q.insert(pos, e);
    let shared = est.compute(q, now, busy_ns, pos);
    let (fairness, max_mean) = est.fairness();
    if fairness < f_thr && est.mean(e.flow) >= max_mean {
        let floor = q.low_len.max(pos.saturating_sub(MOVE_SCAN_LIMIT));
        let mut to = pos;
        while to > floor && q.entries[to - 1].flow != e.flow && !q.entries[to - 1].barrier {
            to -= 1;
        }
        q.entries[pos].barrier = true;
        q.move_forward(pos, to);
    } else {
        let floor = q.low_len;
        let to = best_position(q, est, pos, shared, floor);
        q.move_forward(pos, to);
    }
}

/// The position at or ahead of `pos` (not before `floor`, at most `REORDER_STEPS` ahead, not passing a
/// transaction of the same flow or a barrier) where the entry at `pos` gives the queue the highest fairness;
/// `pos` itself unless another position is strictly fairer. `shared`: the entry's `T_shared` at `pos`;
/// `est` holds the estimates with it at `pos`.
fn best_position(q: &ClassQueue, est: &mut Estimates, pos: usize, shared: Time, floor: usize) -> usize {
    let x = q.entries[pos];
    let (mut best_fairness, _) = est.fairness();
    let mut best = pos;
    let mut x_shared = shared;
    let mut x_s = slowdown(x_shared, x.alone_ns());
    let floor = floor.max(pos.saturating_sub(REORDER_STEPS));
    let mut k = pos;
    while k > floor {
        let y = q.entries[k - 1];
        if y.flow == x.flow || y.barrier {
            break;
        }
        // x moves ahead of y: x waits y's service less, y waits x's more.
        x_shared -= y.service;
        let new_x_s = slowdown(x_shared, x.alone_ns());
        est.replace(x.flow, x_s, new_x_s);
        x_s = new_x_s;
        if let Some(&y_shared) = est.shared.get(k - 1) {
            est.shared[k - 1] = y_shared + x.service;
            let (old, new) = (slowdown(y_shared, y.alone_ns()), slowdown(y_shared + x.service, y.alone_ns()));
            est.replace(y.flow, old, new);
        }
        k -= 1;
        let (fairness, _) = est.fairness();
        if fairness > best_fairness {
            best_fairness = fairness;
            best = k;
        }
    }
    best
}

impl TransactionScheduler for Flin {
    fn name(&self) -> &'static str {
        "flin"
    }

    fn enqueue(&mut self, id: TxId, txs: &TxArena) {
        let tx = &txs[id];
        match tx.purpose {
            Purpose::MapRead => self.dies[tx.die as usize].map_reads.push_back(id),
            Purpose::Gc => self.dies[tx.die as usize].gc.push_back(id),
            Purpose::UserRead | Purpose::UserWrite => {
                assert_ne!(tx.flow, NONE, "host transactions carry their flow");
                self.enqueue_host(id, tx);
            }
        }
        self.queued += 1;
    }

    fn dispatch(&mut self, die: u32, view: &DispatchView, batch: &mut Vec<TxId>) {
        let now = view.now;
        let die = die as usize;
        self.roll_epoch(die, now);
        self.gc.roll(now);
        let planes = self.planes_per_die;
        let d = &mut self.dies[die];
        if d.gc.is_empty() {
            // Nothing owed when nothing is waiting (as `GcCredit`): debts do not pile up between jobs.
            d.flows.iter_mut().for_each(|f| f.gc_credit = 0.0);
        }
        let urgent = view.gc_urgent && !d.gc.is_empty() && !view.reads_only;
        if urgent && d.urgent_gc_run < URGENT_GC_RUN {
            take_batch(&mut d.gc, view, planes, batch);
        } else if !d.map_reads.is_empty() {
            take_batch(&mut d.map_reads, view, planes, batch);
        } else if view.reads_only || urgent {
            // A program or erase is suspended for reads, or GC ran its bounded turn past the hard
            // threshold: the read slot, else (urgent) GC again. Host writes wait.
            if d.slots[READ].is_none() {
                d.slots[READ] = Self::arbitrate(d, READ, self.stage2, now);
            }
            if d.slots[READ].is_some() {
                self.take_slot(die, READ, view, batch);
            } else if urgent {
                take_batch(&mut d.gc, view, planes, batch);
            }
        } else {
            self.select(die, view, batch);
        }
        if let Some(&first) = batch.first() {
            let busy = self.batch_ns(batch, view.txs);
            let d = &mut self.dies[die];
            d.busy_until = now + busy;
            match view.txs[first].purpose {
                Purpose::Gc if urgent => {
                    // Bypassed GC still pays off what the flows owe, in proportion.
                    d.urgent_gc_run += 1;
                    pay_in_proportion(&mut d.flows, batch.len());
                }
                _ => d.urgent_gc_run = 0,
            }
            if view.txs[first].purpose == Purpose::UserWrite {
                for &t in batch.iter() {
                    flow_slot(&mut d.flows, view.txs[t].flow).gc_credit += view.gc_pace;
                }
            }
        }
        self.queued -= batch.len();
    }

    fn wants_completions(&self) -> bool {
        true
    }

    fn completed(&mut self, _die: u32, _batch: &[TxId], view: &CompletionView) {
        self.gc.roll(view.now);
        for &(flow, ns) in view.gc_charges {
            self.gc.charge(flow, ns);
        }
    }

    fn queued(&self) -> usize {
        self.queued
    }
}

#[cfg(test)]
mod tests;
