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
//! - **Slowdown estimates.** A transaction's alone time runs on a per-die, per-flow virtual clock of the
//!   flow's own work: `alone_finish = max(now, previous alone_finish) + service (+ the flow's GC share per
//!   page written, for writes)`, `T_alone = alone_finish − enqueued`. Its shared time at queue position i is
//!   `T_shared = (now − enqueued) + die busy remaining + Σ service of entries 0..=i`. `S = T_shared /
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
//!   both slots (for writes the denominator adds the flow's GC share per page); the write slot is served
//!   when its PW is larger, the read slot otherwise. When the write slot wins and paced GC is due (the same
//!   credit as `fifo`), the die runs GC instead: the write "triggers" it. GC die time is charged to flows in
//!   proportion to their writes (the device's `CompletionView::gc_charges`), and each flow's GC time per
//!   page it writes enters its writes' alone time and PW. A background destage (its host write already
//!   completed from the write buffer) stalls no one, so its wait counts only from when host writes began
//!   waiting for buffer space (`DispatchView::host_writes_blocked_since`); until then it has PW 0 and
//!   reads go first. (Counting it in full made reads wait a seventeenth of the destage backlog's age under
//!   GC load, with no host request gaining.) Off: the read slot first (GC as above).
//!
//! As in `fifo`, GC goes before everything while the die is at the hard free-block threshold, then mapping
//! reads before host work.
//!
//! Queue walks are bounded: estimates cover the first [`ESTIMATE_WINDOW`] entries of a queue (plus the new
//! one), a fairness reordering tries at most [`REORDER_STEPS`] positions, and a move forward scans at most
//! [`MOVE_SCAN_LIMIT`] entries.

use std::collections::VecDeque;

use super::fifo::{take_batch, MULTIPLANE_WINDOW};
use super::{flow_slot, memory_ns, service_ns, take_before_host_work};
use super::{CompletionView, DispatchView, GcCredit, SchedulerSetup, TransactionScheduler};
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
    /// End of the flow's alone virtual clock for reads / writes.
    alone_finish: [Time; 2],
}

impl Default for FlowOnDie {
    /// A flow not measured yet issued nothing in the last epoch: low-intensity. (MQSim starts every flow
    /// high-intensity; then, when a flow turns low-intensity at the first epoch end, its new transactions
    /// pass its older ones queued in the high-intensity part.)
    fn default() -> Self {
        FlowOnDie { epoch_count: [0; 2], low: [true; 2], alone_finish: [0; 2] }
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
    gc_credit: GcCredit,
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
            let shared = now - e.enqueued_at + ahead;
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
        let shared = now - e.enqueued_at + busy_ns + before + e.service;
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
    /// Per flow: GC die time charged to it and host pages it has written (for its GC time per page).
    gc_ns: Vec<Time>,
    pages_written: Vec<u64>,
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
            gc_ns: Vec::new(),
            pages_written: Vec::new(),
            estimates: Estimates::default(),
            queued: 0,
        }
    }

    /// GC die time charged to `flow` per host page it wrote so far.
    fn gc_per_page(&self, flow: u32) -> Time {
        let gc = self.gc_ns.get(flow as usize).copied().unwrap_or(0);
        let pages = self.pages_written.get(flow as usize).copied().unwrap_or(0);
        gc / pages.max(1)
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
        let kind = if tx.purpose == Purpose::UserWrite { WRITE } else { READ };
        let service = service_ns(&self.timing, tx);
        let gc_share = if kind == WRITE { self.gc_per_page(tx.flow) } else { 0 };
        if kind == WRITE {
            *flow_slot(&mut self.pages_written, tx.flow) += 1;
        }
        let d = &mut self.dies[die];
        let flow = flow_slot(&mut d.flows, tx.flow);
        flow.epoch_count[kind] += 1;
        let alone_finish = flow.alone_finish[kind].max(now) + service + gc_share;
        flow.alone_finish[kind] = alone_finish;
        let low = flow.low[kind];
        let entry = Entry {
            tx: id,
            flow: tx.flow,
            plane: tx.plane,
            op: tx.op,
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
            Stage3Wait::Queue => e.enqueued_at,
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
        let gc = if e.op == FlashOp::Program { self.gc_per_page(e.flow) } else { 0 };
        // T_memory + T_transfer: the service estimate without the command cycles.
        let cost = e.service - self.timing.command_ns + gc;
        view.now.saturating_sub(waiting_since) as f64 / cost.max(1) as f64
    }

    /// Serve slot `kind`: its transaction plus, for a multi-plane command, others of its class queue.
    fn take_slot(&mut self, die: usize, kind: usize, view: &DispatchView, batch: &mut Vec<TxId>) {
        let d = &mut self.dies[die];
        let Slot { entry: head, class, .. } = d.slots[kind].take().expect("slot is filled");
        batch.push(head.tx);
        if !view.multiplane || self.planes_per_die == 1 {
            return;
        }
        let q = &mut d.queues[kind][class];
        let mut planes_used: u64 = 1 << head.plane;
        let mut i = 0;
        while i < q.entries.len().min(MULTIPLANE_WINDOW) && batch.len() < self.planes_per_die as usize {
            let e = q.entries[i];
            if e.op == head.op && planes_used & (1 << e.plane) == 0 {
                planes_used |= 1 << e.plane;
                batch.push(q.remove(i).tx);
                d.in_queues[kind] -= 1;
            } else {
                i += 1;
            }
        }
    }

    /// Estimated die time of `batch`: command, array time, and all its data over the channel.
    fn batch_ns(&self, batch: &[TxId], txs: &TxArena) -> Time {
        let first = &txs[batch[0]];
        let bytes: u64 = batch.iter().map(|&t| txs[t].bytes as u64).sum();
        self.timing.command_ns + memory_ns(&self.timing, first.op) + self.timing.transfer_ns(bytes)
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
        let planes = self.planes_per_die;
        let d = &mut self.dies[die];
        let gc_first = d.gc_credit.gc_first(!d.gc.is_empty());
        if view.reads_only {
            // A program or erase is suspended for reads: mapping reads, then the read slot, nothing else.
            if !take_before_host_work(&mut d.gc, &mut d.map_reads, view, planes, batch) {
                if d.slots[READ].is_none() {
                    d.slots[READ] = Self::arbitrate(d, READ, self.stage2, now);
                }
                if d.slots[READ].is_some() {
                    self.take_slot(die, READ, view, batch);
                }
            }
        } else if !take_before_host_work(&mut d.gc, &mut d.map_reads, view, planes, batch) {
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
            let no_host_work = d.slots[READ].is_none() && d.slots[WRITE].is_none();
            if !d.gc.is_empty() && (no_host_work || (serve_write && gc_first)) {
                take_batch(&mut d.gc, view, planes, batch);
            } else if serve_write {
                self.take_slot(die, WRITE, view, batch);
            } else if !no_host_work {
                self.take_slot(die, READ, view, batch);
            }
        }
        if let Some(&first) = batch.first() {
            let busy = self.batch_ns(batch, view.txs);
            let d = &mut self.dies[die];
            d.gc_credit.dispatched(view.txs[first].purpose, batch.len(), view.gc_pace);
            d.busy_until = now + busy;
        }
        self.queued -= batch.len();
    }

    fn wants_completions(&self) -> bool {
        true
    }

    fn completed(&mut self, _die: u32, _batch: &[TxId], view: &CompletionView) {
        for &(flow, ns) in view.gc_charges {
            *flow_slot(&mut self.gc_ns, flow) += ns;
        }
    }

    fn queued(&self) -> usize {
        self.queued
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{add, build, config, dispatch, next, tx, view};
    use super::*;
    use crate::config::device::TsuConfig;
    use crate::config::units::Bytes;
    use crate::engine::{MS, US};

    fn flin(cfg: impl FnOnce(&mut TsuConfig)) -> Box<dyn TransactionScheduler> {
        let mut c = config("flin");
        cfg(&mut c);
        build(&c, 1, 1)
    }

    fn flows_of(txs: &TxArena, ids: &[TxId]) -> Vec<u32> {
        ids.iter().map(|&t| txs[t].flow).collect()
    }

    /// Dispatch until the die has nothing left, one time step each; the flows served, in order.
    fn drain(s: &mut dyn TransactionScheduler, txs: &TxArena, from: Time) -> Vec<u32> {
        let mut served = Vec::new();
        for step in 0.. {
            let batch = next(s, txs, 0, from + step);
            if batch.is_empty() {
                break;
            }
            served.extend(flows_of(txs, &batch));
        }
        served
    }

    #[test]
    fn stage1_a_low_intensity_flow_overtakes_a_high_intensity_backlog() {
        // One die, 8 KiB pages: a flow is low-intensity for reads below 4 reads per 10 ms epoch.
        let low_below_4 = |c: &mut TsuConfig| c.flin_alpha_read_bytes = Bytes(4 * 8192);
        for stage1 in [true, false] {
            let mut txs = TxArena::default();
            let mut s = flin(|c| {
                low_below_4(c);
                c.flin_stage1 = stage1;
            });
            // Epoch 0: flow 0 reads 10 pages, flow 1 one.
            for i in 0..10 {
                add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, i, 0, i as Time));
            }
            add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 10, 1, 10));
            assert_eq!(drain(s.as_mut(), &txs, 100).len(), 11);
            // Epoch 1: flow 0 (high-intensity) queues a backlog, then flow 1 (low-intensity) one read.
            for i in 0..8 {
                add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 20 + i, 0, 10 * MS + i as Time));
            }
            add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 30, 1, 10 * MS + 10));
            let order = drain(s.as_mut(), &txs, 10 * MS + 20);
            if stage1 {
                assert_eq!(order[0], 1, "the light flow's read goes to the head: {order:?}");
            } else {
                assert_eq!(order[8], 1, "FIFO insertion: behind the backlog: {order:?}");
            }
        }
    }

    #[test]
    fn stage1_the_most_slowed_down_high_intensity_flow_moves_ahead_and_sets_a_barrier() {
        // alpha 0: after the first epoch every flow is high-intensity. Flow 0 queues 20 reads; flow 1's
        // single read has an estimated slowdown of ~21 against flow 0's ~1: F < 0.6, so it jumps to the
        // head (barrier). Flow 2's read then jumps too, but stops behind flow 1's.
        let mut txs = TxArena::default();
        let mut s = flin(|c| c.flin_alpha_read_bytes = Bytes(0));
        let at = 10 * MS;
        for i in 0..20 {
            add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, i, 0, at));
        }
        add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 20, 1, at));
        add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 21, 2, at));
        let order = drain(s.as_mut(), &txs, at + 1);
        assert_eq!(&order[..3], &[1, 2, 0], "{order:?}");
    }

    #[test]
    fn stage2_serves_classes_8_4_2_1_when_all_are_backlogged_and_round_robin_when_off() {
        for (stage2, expected) in [(true, [8, 4, 2, 1]), (false, [4, 4, 4, 3])] {
            let mut txs = TxArena::default();
            let mut s = flin(|c| c.flin_stage2 = stage2);
            let classes = [NvmePriority::Urgent, NvmePriority::High, NvmePriority::Medium, NvmePriority::Low];
            for (flow, &priority) in classes.iter().enumerate() {
                for i in 0..20 {
                    let mut t = tx(Purpose::UserRead, 0, 0, flow as u32 * 100 + i, flow as u32, 0);
                    t.priority = priority;
                    add(s.as_mut(), &mut txs, t);
                }
            }
            let mut served = [0; 4];
            for step in 0..15 {
                let batch = next(s.as_mut(), &txs, 0, 1 + step);
                assert_eq!(batch.len(), 1);
                served[class_index(txs[batch[0]].priority)] += 1;
            }
            assert_eq!(served, expected, "stage 2 {stage2}");
        }
    }

    #[test]
    fn stage3_serves_the_write_only_when_it_waited_proportionally_longer() {
        let read_and_write = |stage3: bool, write_at: Time, read_at: Time, now: Time| {
            let mut txs = TxArena::default();
            let mut s = flin(|c| c.flin_stage3 = stage3);
            add(s.as_mut(), &mut txs, tx(Purpose::UserWrite, 0, 0, 1, 0, write_at));
            add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 2, 1, read_at));
            let first = next(s.as_mut(), &txs, 0, now);
            txs[first[0]].purpose
        };
        // The write waited 10 ms (PW = 10 ms / 1.32 ms = 7.5), the read 1 us (PW = 0.01): write first.
        assert_eq!(read_and_write(true, 0, 10 * MS, 10 * MS + US), Purpose::UserWrite);
        // Both waited 50 us: PW 0.04 for the write, 0.5 for the read: read first.
        assert_eq!(read_and_write(true, 0, 0, 50 * US), Purpose::UserRead);
        // Stage 3 off: reads first however long the write waited.
        assert_eq!(read_and_write(false, 0, 10 * MS, 10 * MS + US), Purpose::UserRead);
    }

    #[test]
    fn stage3_wait_counts_from_the_queue_or_from_the_slot() {
        // A write and two reads queued at 0; the die dispatches at 10 ms and again at 12 ms.
        let order = |wait: Stage3Wait| {
            let mut txs = TxArena::default();
            let mut s = flin(|c| c.flin_stage3_wait = wait);
            add(s.as_mut(), &mut txs, tx(Purpose::UserWrite, 0, 0, 1, 0, 0));
            add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 2, 1, 0));
            add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 3, 1, 0));
            [10 * MS, 12 * MS].map(|now| txs[next(s.as_mut(), &txs, 0, now)[0]].purpose)
        };
        // From the queue: at 10 ms the write has waited 10 ms (PW 7.6), the read 10 ms too (PW 100): the
        // read; at 12 ms the second read has PW 120 against the write's 9.1: the read again.
        assert_eq!(order(Stage3Wait::Queue), [Purpose::UserRead, Purpose::UserRead]);
        // From the slot: both entered their slots at 10 ms (PW 0 each: the read); at 12 ms the write has
        // sat 2 ms in its slot (PW 1.5) and the second read just entered it (PW 0): the write.
        assert_eq!(order(Stage3Wait::Slot), [Purpose::UserRead, Purpose::UserWrite]);
    }

    #[test]
    fn stage3_a_background_destage_stalls_nobody_until_host_writes_wait_for_the_buffer() {
        // A destage (req NONE: its host write completed from the write buffer) queued at 0 and a read that
        // waited 1 us, dispatched at 10 ms.
        let first = |blocked_since: Option<Time>| {
            let mut txs = TxArena::default();
            let mut s = flin(|_| {});
            add(s.as_mut(), &mut txs, tx(Purpose::UserWrite, 0, 0, NONE, 0, 0));
            add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 2, 1, 10 * MS - US));
            let view = DispatchView { host_writes_blocked_since: blocked_since, ..view(&txs, 10 * MS) };
            txs[dispatch(s.as_mut(), 0, &view)[0]].purpose
        };
        // Buffer has room: the destage's 10 ms wait delays no one, the read goes first.
        assert_eq!(first(None), Purpose::UserRead);
        // Host writes wait for buffer space since 9 ms: the destage counts 1 ms (PW 0.76 > the read's 0.013).
        assert_eq!(first(Some(9 * MS)), Purpose::UserWrite);
        // ... since 9.999 ms: 1 us of stall (PW 0.0008) against the read's 0.013: the read.
        assert_eq!(first(Some(10 * MS - US)), Purpose::UserRead);
    }

    #[test]
    fn stage3_a_winning_write_slot_triggers_due_gc_and_a_flows_gc_share_lowers_its_writes_pw() {
        let purpose_at = |s: &mut dyn TransactionScheduler, txs: &TxArena, now: Time| {
            txs[dispatch(s, 0, &DispatchView { gc_pace: 1.0, ..view(txs, now) })[0]].purpose
        };
        let mut txs = TxArena::default();
        let mut s = flin(|_| {});
        add(s.as_mut(), &mut txs, tx(Purpose::UserWrite, 0, 0, 1, 0, 0));
        add(s.as_mut(), &mut txs, tx(Purpose::UserWrite, 0, 0, 2, 0, 0));
        add(s.as_mut(), &mut txs, tx(Purpose::Gc, 0, 0, NONE, 0, 0));
        // No credit yet: the write goes; it earns GC one transaction (gc_pace 1), so the next time the
        // write slot wins, GC runs instead and the write keeps its slot.
        assert_eq!(purpose_at(s.as_mut(), &txs, 10), Purpose::UserWrite);
        assert_eq!(purpose_at(s.as_mut(), &txs, 20), Purpose::Gc);
        assert_eq!(purpose_at(s.as_mut(), &txs, 30), Purpose::UserWrite);

        // A write that waited 2 ms (PW 1.5) beats a read that waited 120 us (PW 1.2)...
        let write_vs_read = |gc_ns: Time| {
            let mut txs = TxArena::default();
            let mut s = flin(|_| {});
            let view = CompletionView { txs: &txs, now: 0, gc_charges: &[(0, gc_ns)] };
            s.completed(0, &[], &view);
            add(s.as_mut(), &mut txs, tx(Purpose::UserWrite, 0, 0, 1, 0, 0));
            add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 2, 1, 1880 * US));
            txs[next(s.as_mut(), &txs, 0, 2 * MS)[0]].purpose
        };
        assert_eq!(write_vs_read(0), Purpose::UserWrite);
        // ... unless its flow was charged 1 ms of GC per page written (PW 2 / 2.3 = 0.86): its own GC is
        // part of its service, not interference.
        assert_eq!(write_vs_read(MS), Purpose::UserRead);
    }

    #[test]
    fn slowdown_and_fairness_estimates_follow_the_formulas() {
        let entry = |flow: u32, enqueued_at: Time, alone_finish: Time| Entry {
            tx: 0,
            flow,
            plane: 0,
            op: FlashOp::Read,
            enqueued_at,
            service: 100,
            alone_finish,
            barrier: false,
        };
        let mut q = ClassQueue::default();
        q.insert(0, entry(0, 900, 1000)); // T_shared = 100 + 50 + 100 = 250, T_alone = 100: S = 2.5
        q.insert(1, entry(1, 1000, 1100)); // T_shared = 0 + 50 + 200 = 250, T_alone = 100: S = 2.5
        q.insert(2, entry(0, 950, 1100)); // T_shared = 50 + 50 + 300 = 400, T_alone = 150: S = 8/3
        let mut est = Estimates::default();
        let shared = est.compute(&q, 1000, 50, 2);
        assert_eq!(shared, 400);
        assert_eq!(est.shared, vec![250, 250, 400]);
        let flow0 = (2.5 + 8.0 / 3.0) / 2.0;
        assert!((est.mean(0) - flow0).abs() < 1e-12);
        assert!((est.mean(1) - 2.5).abs() < 1e-12);
        let (fairness, max) = est.fairness();
        assert!((fairness - 2.5 / flow0).abs() < 1e-12, "F = min S / max S: {fairness}");
        assert!((max - flow0).abs() < 1e-12);
        // Moving the last entry (flow 0) ahead of entry 1 (flow 1) would give S = 2 and 3.5, F = 0.64:
        // less fair, so it stays (and it may not pass entry 0, of its own flow).
        assert_eq!(best_position(&q, &mut est, 2, shared, 0), 2);

        // [flow 0, flow 0, flow 1], all just queued, nothing running: S = 1, 1, 3 (F = 1/3). One step
        // ahead: S = 1, 1.5 | 2 (F = 1.25 / 2 = 0.625); two steps: 2, 1.5 | 1 (F = 1 / 1.75 = 0.57).
        let mut q = ClassQueue::default();
        q.insert(0, entry(0, 1000, 1100));
        q.insert(1, entry(0, 1000, 1200));
        q.insert(2, entry(1, 1000, 1100));
        let shared = est.compute(&q, 1000, 0, 2);
        assert_eq!(est.fairness().0, 1.0 / 3.0);
        assert_eq!(best_position(&q, &mut est, 2, shared, 0), 1);
    }
}
