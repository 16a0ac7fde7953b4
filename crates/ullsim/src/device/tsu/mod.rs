//! The transaction scheduling unit: per-chip queues of flash transactions and the policy that picks what an
//! idle die does next. One file per policy; add a policy by adding a file and a line in [`make`].

mod fifo;
mod flin;
mod sprinkler;
mod sprinkler_fairness;

use std::collections::VecDeque;

use crate::config::device::TsuConfig;
use crate::engine::Time;

use super::flash::{FlashOp, Timing};
use super::transaction::{Purpose, Transaction, TxArena, TxId};

/// What a scheduler may look at when it picks work.
pub struct DispatchView<'a> {
    pub txs: &'a TxArena,
    pub now: Time,
    /// The die's planes are below the hard GC threshold: reclaiming space comes first.
    pub gc_urgent: bool,
    /// GC transactions the die owes per host page it programs to keep its free space level (0: no GC).
    pub gc_pace: f64,
    /// Gather transactions for several planes of the die into one multi-plane operation.
    pub multiplane: bool,
    /// A multi-plane operation joins only transactions at the same page index within their blocks (see
    /// [`DispatchView::pairs_with`]).
    pub multiplane_same_page: bool,
    pub pages_per_block: u32,
    /// Mapping units per flash page (`Geometry::units_per_page`): transactions on units of the same flash
    /// page join one operation (1: every transaction is a page of its own).
    pub units_per_page: u32,
    /// Since when host writes have been waiting for write-buffer space (`None`: they are not). Until then a
    /// background destage (a program with `req == NONE`, its host write already complete) stalls nobody.
    pub host_writes_blocked_since: Option<Time>,
    /// A program or erase is suspended on the die for reads (`device/suspend.rs`): only a read operation
    /// (mapping or host reads) may start; leave `batch` empty if there is none.
    pub reads_only: bool,
}

impl DispatchView<'_> {
    /// Whether `other` may join `head`'s multi-plane operation as far as page numbers go (planes and the
    /// operation are the caller's to check): always, unless `multiplane_same_page` asks for equal page
    /// indices within the blocks, as MQSim's `issue_command_to_chip` does.
    #[inline(always)]
    pub fn pairs_with(&self, head: TxId, other: TxId) -> bool {
        let page = |tx: TxId| (self.txs[tx].ppa % self.pages_per_block as u64) / self.units_per_page as u64;
        !self.multiplane_same_page || page(head) == page(other)
    }

    /// Whether `other` is on the same flash page as `head` (same plane, units of one page), so the two are
    /// one page read or program. Never when the unit is the page: two transactions on one page are then two
    /// operations (two reads of one page, say).
    #[inline(always)]
    pub fn same_flash_page(&self, head: TxId, other: TxId) -> bool {
        let (a, b) = (&self.txs[head], &self.txs[other]);
        self.units_per_page > 1
            && a.die == b.die
            && a.plane == b.plane
            && a.ppa / self.units_per_page as u64 == b.ppa / self.units_per_page as u64
    }
}

/// What a scheduler learns when a die finishes the batch it was running.
pub struct CompletionView<'a> {
    pub txs: &'a TxArena,
    pub now: Time,
    /// The die time of this batch charged to the flows that caused it, as `(flow, ns)` with distinct flows:
    /// empty unless the batch was garbage collection (see `device/gc_cost.rs`).
    pub gc_charges: &'a [(u32, Time)],
}

/// What every scheduler is built from: the device's shape and timing, and the `[device.tsu]` parameters.
pub struct SchedulerSetup<'a> {
    pub dies: u32,
    pub planes_per_die: u32,
    pub page_bytes: u64,
    pub timing: Timing,
    pub config: &'a TsuConfig,
}

/// A transaction scheduling policy (MQSim's TSU, Sprinkler, FLIN...). Flows are the scenario's flow indices,
/// carried by every host transaction (`Transaction::flow`; GC and mapping work carry `NONE`), so a policy
/// keeps per-flow state in vectors indexed by flow (`flow_slot`).
pub trait TransactionScheduler {
    fn name(&self) -> &'static str;
    /// Queue a transaction (already translated to a die and plane; `enqueued_at` is now).
    fn enqueue(&mut self, id: TxId, txs: &TxArena);
    /// `die` is idle: push the transactions it should execute together into `batch` (same flash operation,
    /// distinct planes of the die), or leave `batch` empty if it has nothing to do.
    fn dispatch(&mut self, die: u32, view: &DispatchView, batch: &mut Vec<TxId>);
    /// The batch `die` was running finished (called before its transactions are released, and only if
    /// `wants_completions`). Policies that account service or garbage collection per flow hook in here.
    fn completed(&mut self, _die: u32, _batch: &[TxId], _view: &CompletionView) {}
    /// Whether the device should call `completed`, with the batch's GC time split over the flows. Off by
    /// default, so a policy that needs neither costs nothing per operation.
    fn wants_completions(&self) -> bool {
        false
    }
    /// Transactions waiting (not yet dispatched).
    fn queued(&self) -> usize;
    /// Whether `die` has host or mapping reads queued (`device.flash.chip_reads_first` offers such a die
    /// its chip first). Policies that do not say are never asked first.
    fn reads_waiting(&self, _die: u32) -> bool {
        false
    }
    /// GC pacing credit of `die` (`GcCredit`), for the timed preconditioning to carry into time 0
    /// (`device/timed_precondition.rs`); `None` from a policy that keeps none per die.
    fn gc_credit(&self, _die: u32) -> Option<f64> {
        None
    }
    /// Set `die`'s GC pacing credit (what `gc_credit` gave).
    fn set_gc_credit(&mut self, _die: u32, _credit: f64) {}
}

/// Names accepted by `device.tsu.scheduler`.
pub fn scheduler_names() -> &'static [&'static str] {
    &["fifo", "sprinkler", "sprinkler-fairness", "flin"]
}

/// Build the scheduler called `setup.config.scheduler`; `None` for an unknown name.
pub fn make(setup: &SchedulerSetup) -> Option<Box<dyn TransactionScheduler>> {
    Some(match setup.config.scheduler.as_str() {
        "fifo" => Box::new(fifo::Fifo::new(setup)),
        "sprinkler" => Box::new(sprinkler::Sprinkler::new(setup)),
        "sprinkler-fairness" => Box::new(sprinkler_fairness::SprinklerFairness::new(setup)),
        "flin" => Box::new(flin::Flin::new(setup)),
        _ => return None,
    })
}

/// Array time of an operation (sense, program or erase), without command cycles or data transfer.
pub fn memory_ns(timing: &Timing, op: FlashOp) -> Time {
    match op {
        FlashOp::Read => timing.read_ns,
        FlashOp::Program => timing.program_ns,
        FlashOp::Erase => timing.erase_ns,
    }
}

/// Estimated die time of one transaction run on its own: command cycles, array time and its data over the
/// channel (no wait for the channel).
pub fn service_ns(timing: &Timing, tx: &Transaction) -> Time {
    timing.command_ns + memory_ns(timing, tx.op) + timing.transfer_ns(tx.bytes as u64)
}

/// GC paced against host writes, shared by the schedulers: every host page program dispatched on the die
/// earns GC `gc_pace` transactions of credit, every GC transaction dispatched spends one, and GC goes before
/// host writes while the credit is at least 1. The credit is dropped whenever the die has no GC queued.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct GcCredit(f64);

impl GcCredit {
    /// Credit now, in GC transactions.
    pub fn get(self) -> f64 {
        self.0
    }

    /// Credit of `transactions` GC transactions.
    pub fn of(transactions: f64) -> Self {
        GcCredit(transactions)
    }

    /// Whether GC goes before host writes now; `gc_waiting`: the die has GC work queued.
    pub fn gc_first(&mut self, gc_waiting: bool) -> bool {
        if !gc_waiting {
            self.0 = 0.0; // nothing owed when nothing is waiting
        }
        self.0 >= 1.0
    }

    /// A batch of `count` transactions for `purpose` was dispatched on the die.
    pub fn dispatched(&mut self, purpose: Purpose, count: usize, gc_pace: f64) {
        match purpose {
            Purpose::Gc => self.0 = (self.0 - count as f64).max(0.0),
            Purpose::UserWrite => self.0 += count as f64 * gc_pace,
            _ => {}
        }
    }
}

/// What every policy serves before host work: GC while the die is at its hard free-block threshold, then
/// mapping reads (host reads wait for them). Returns whether it filled `batch`.
pub(super) fn take_before_host_work(
    gc: &mut VecDeque<TxId>,
    map_reads: &mut VecDeque<TxId>,
    view: &DispatchView,
    planes_per_die: u32,
    batch: &mut Vec<TxId>,
) -> bool {
    if view.gc_urgent && !gc.is_empty() && !view.reads_only {
        fifo::take_batch(gc, view, planes_per_die, batch);
    } else if !map_reads.is_empty() {
        fifo::take_batch(map_reads, view, planes_per_die, batch);
    }
    !batch.is_empty()
}

/// A per-flow vector that grows on first use of a flow (flows are small dense indices).
pub(super) fn flow_slot<T: Default + Clone>(v: &mut Vec<T>, flow: u32) -> &mut T {
    let i = flow as usize;
    if i >= v.len() {
        v.resize(i + 1, T::default());
    }
    &mut v[i]
}

/// Helpers for the schedulers' unit tests: hand-built transactions on a small device.
#[cfg(test)]
pub(super) mod testing {
    use super::*;
    use crate::device::transaction::NONE;
    use crate::request::NvmePriority;

    /// The `[device.tsu]` table of the `flin-eval` preset (every parameter at its default), as `scheduler`.
    pub fn config(scheduler: &str) -> TsuConfig {
        let preset: toml::Table = crate::config::presets::find("flin-eval").expect("preset").toml.parse().unwrap();
        let mut cfg: TsuConfig = preset["tsu"].clone().try_into().expect("a valid [tsu] table");
        cfg.scheduler = scheduler.to_string();
        cfg
    }

    /// flin-eval's flash timing: read 75 us, program 1.3 ms, erase 3.8 ms, 333 MT/s x 8 bit.
    pub fn timing() -> Timing {
        Timing {
            read_ns: 75_000,
            program_ns: 1_300_000,
            erase_ns: 3_800_000,
            command_ns: 100,
            channel_ns_per_byte: 1000.0 / 333.0,
        }
    }

    /// A scheduler from `cfg` for `dies` dies of `planes` planes with 8 KiB pages.
    pub fn build(cfg: &TsuConfig, dies: u32, planes: u32) -> Box<dyn TransactionScheduler> {
        make(&SchedulerSetup { dies, planes_per_die: planes, page_bytes: 8192, timing: timing(), config: cfg })
            .expect("a known scheduler")
    }

    /// An 8 KiB host read (`Purpose::UserRead`) or program (`Purpose::UserWrite`), or GC / mapping work.
    pub fn tx(purpose: Purpose, die: u32, plane: u32, req: u32, flow: u32, at: Time) -> Transaction {
        let op = if purpose == Purpose::UserWrite { FlashOp::Program } else { FlashOp::Read };
        Transaction {
            op,
            purpose,
            req,
            flow: if matches!(purpose, Purpose::Gc | Purpose::MapRead) { NONE } else { flow },
            priority: NvmePriority::Medium,
            die,
            plane,
            ppa: 0,
            lpa: 0,
            bytes: 8192,
            arrived_at: at,
            enqueued_at: at,
            dispatched_at: 0,
            link: NONE,
            destage: 0,
        }
    }

    /// Insert `t` in the arena and queue it.
    pub fn add(s: &mut dyn TransactionScheduler, txs: &mut TxArena, t: Transaction) -> TxId {
        let id = txs.insert(t);
        s.enqueue(id, txs);
        id
    }

    /// The view of a die at `now` with no GC pressure, multi-plane on, host writes not blocked: tests
    /// change what they need with `DispatchView { field, ..view(txs, now) }`.
    pub fn view(txs: &TxArena, now: Time) -> DispatchView<'_> {
        DispatchView {
            txs,
            now,
            gc_urgent: false,
            gc_pace: 0.0,
            multiplane: true,
            multiplane_same_page: false,
            pages_per_block: 64,
            units_per_page: 1,
            host_writes_blocked_since: None,
            reads_only: false,
        }
    }

    /// Dispatch die `die` seeing `view` and return the batch.
    pub fn dispatch(s: &mut dyn TransactionScheduler, die: u32, view: &DispatchView) -> Vec<TxId> {
        let mut batch = Vec::new();
        s.dispatch(die, view, &mut batch);
        batch
    }

    /// Dispatch die `die` at `now` with the default [`view`] and return the batch.
    pub fn next(s: &mut dyn TransactionScheduler, txs: &TxArena, die: u32, now: Time) -> Vec<TxId> {
        dispatch(s, die, &view(txs, now))
    }
}
