//! The transaction scheduling unit: per-chip queues of flash transactions and the policy that picks what an
//! idle die does next. One file per policy; add a policy by adding a file and a line in [`make`].

mod fifo;

use crate::engine::Time;

use super::transaction::{TxArena, TxId};

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
}

/// A transaction scheduling policy (MQSim's TSU, Sprinkler, FLIN...).
pub trait TransactionScheduler {
    fn name(&self) -> &'static str;
    /// Queue a transaction (already translated to a die and plane).
    fn enqueue(&mut self, id: TxId, txs: &TxArena);
    /// `die` is idle: push the transactions it should execute together into `batch` (same flash operation,
    /// distinct planes of the die), or leave `batch` empty if it has nothing to do.
    fn dispatch(&mut self, die: u32, view: &DispatchView, batch: &mut Vec<TxId>);
    /// Transactions waiting (not yet dispatched).
    fn queued(&self) -> usize;
}

/// Names accepted by `device.tsu.scheduler`.
pub fn scheduler_names() -> &'static [&'static str] {
    &["fifo"]
}

/// Build the scheduler called `name` for a device with `dies` dies.
pub fn make(name: &str, dies: u32, planes_per_die: u32) -> Option<Box<dyn TransactionScheduler>> {
    match name {
        "fifo" => Some(Box::new(fifo::Fifo::new(dies, planes_per_die))),
        _ => None,
    }
}
