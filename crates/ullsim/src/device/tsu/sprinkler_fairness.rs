//! Sprinkler + Fairness: Sprinkler with per-flow time budgets, after Jun & Shin's workload-aware budget
//! compensation (NVMSA'15), which FLIN (ISCA'18) uses as its stronger baseline. The implementation is
//! inferred (see docs/model.md):
//!
//! - Every flow has a budget of die time per epoch (`device.tsu.flow_budget_ns`, or with 0 the dies' time of
//!   an epoch, `budget_epoch_ns × dies`, shared equally by the flows seen so far).
//! - A flow is charged, at dispatch, the estimated die time of each of its transactions (command + array
//!   read or program + its data over the channel), and, when a GC operation finishes, the share of that GC
//!   die time the device charges it (`CompletionView::gc_charges`).
//! - An idle die serves the flow with the most budget left among those with host work queued on it (lowest
//!   flow on ties): that flow's reads if it has any there, else its writes (GC goes first when paced GC is
//!   due, as in Sprinkler); the command is the flow's oldest transaction there, joined FARO-style by one
//!   transaction from every other plane (the same request first, then the same flow, then the oldest).
//! - Each epoch every budget is refilled: a debt (negative budget) carries over, which is the compensation,
//!   while unspent budget does not accumulate (a budget never exceeds one epoch's worth).
//!
//! The scheduler stays work-conserving: a flow out of budget is still served when no other flow has work
//! on the die (FLIN reports that its Sprinkler+Fairness leaves resources idle; we do not model throttling).

use super::sprinkler::Pools;
use super::{flow_slot, service_ns, CompletionView, DispatchView, SchedulerSetup, TransactionScheduler};
use crate::device::flash::Timing;
use crate::device::transaction::{TxArena, TxId, NONE};
use crate::engine::Time;

/// Per-flow die-time budgets refilled every epoch.
#[derive(Debug)]
pub(super) struct Budgets {
    epoch_ns: Time,
    /// Fixed budget per flow per epoch, or 0 for an equal share of `epoch_die_ns`.
    flow_budget_ns: Time,
    /// Die time of the whole device in one epoch.
    epoch_die_ns: Time,
    /// End of the current epoch.
    epoch_end: Time,
    /// Budget left per flow (negative: in debt).
    left: Vec<i64>,
    /// The budget given at the last refill (what a newly seen flow starts with).
    refill: i64,
}

impl Budgets {
    pub fn new(epoch_ns: Time, flow_budget_ns: Time, dies: u32) -> Self {
        let mut b = Budgets {
            epoch_ns,
            flow_budget_ns,
            epoch_die_ns: epoch_ns * dies as Time,
            epoch_end: epoch_ns,
            left: Vec::new(),
            refill: 0,
        };
        b.refill = b.per_flow();
        b
    }

    fn per_flow(&self) -> i64 {
        if self.flow_budget_ns > 0 {
            self.flow_budget_ns as i64
        } else {
            (self.epoch_die_ns / self.left.len().max(1) as Time) as i64
        }
    }

    /// Note a flow (a newly seen one starts with a full budget).
    pub fn see(&mut self, flow: u32) {
        if flow as usize >= self.left.len() {
            let refill = self.refill;
            self.left.resize(flow as usize + 1, refill);
        }
    }

    /// Refill every budget for each epoch boundary passed by `now`.
    pub fn roll(&mut self, now: Time) {
        if now < self.epoch_end {
            return;
        }
        let epochs = (now - self.epoch_end) / self.epoch_ns + 1;
        self.epoch_end += epochs * self.epoch_ns;
        self.refill = self.per_flow();
        let gain = self.refill.saturating_mul(epochs as i64);
        for left in &mut self.left {
            *left = ((*left).min(0).saturating_add(gain)).min(self.refill);
        }
    }

    pub fn charge(&mut self, flow: u32, ns: Time) {
        *flow_slot(&mut self.left, flow) -= ns as i64;
    }

    pub fn left(&self, flow: u32) -> i64 {
        self.left.get(flow as usize).copied().unwrap_or(self.refill)
    }
}

pub struct SprinklerFairness {
    pools: Pools,
    budgets: Budgets,
    timing: Timing,
}

impl SprinklerFairness {
    pub fn new(setup: &SchedulerSetup) -> Self {
        let cfg = setup.config;
        SprinklerFairness {
            pools: Pools::new(setup.dies, setup.planes_per_die),
            budgets: Budgets::new(cfg.budget_epoch_ns.0, cfg.flow_budget_ns.0, setup.dies),
            timing: setup.timing,
        }
    }
}

impl TransactionScheduler for SprinklerFairness {
    fn name(&self) -> &'static str {
        "sprinkler-fairness"
    }

    fn enqueue(&mut self, id: TxId, txs: &TxArena) {
        let flow = txs[id].flow;
        if flow != NONE {
            self.budgets.see(flow);
        }
        self.pools.enqueue(id, txs);
    }

    fn dispatch(&mut self, die: u32, view: &DispatchView, batch: &mut Vec<TxId>) {
        self.budgets.roll(view.now);
        let budgets = &self.budgets;
        self.pools.dispatch(die, view, batch, |pool| {
            // Most budget left wins; `max_by_key` keeps the last maximum, so compare reversed flow ids to
            // keep the lowest flow on ties.
            pool.flows_waiting().max_by_key(|&f| (budgets.left(f), std::cmp::Reverse(f)))
        });
        for &tx in batch.iter() {
            let t = &view.txs[tx];
            if t.flow != NONE {
                self.budgets.charge(t.flow, service_ns(&self.timing, t));
            }
        }
    }

    fn wants_completions(&self) -> bool {
        true
    }

    fn completed(&mut self, _die: u32, _batch: &[TxId], view: &CompletionView) {
        for &(flow, ns) in view.gc_charges {
            self.budgets.charge(flow, ns);
        }
    }

    fn queued(&self) -> usize {
        self.pools.queued()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{add, build, config, next, tx};
    use super::*;
    use crate::device::transaction::Purpose;
    use crate::engine::MS;

    fn charge_gc(s: &mut dyn TransactionScheduler, txs: &TxArena, flow: u32, ns: Time) {
        s.completed(0, &[], &CompletionView { txs, now: 0, gc_charges: &[(flow, ns)] });
    }

    #[test]
    fn serves_the_flow_with_more_budget_left_first_and_refills_each_epoch() {
        let mut txs = TxArena::default();
        let mut s = build(&config("sprinkler-fairness"), 1, 1);
        let old = add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 1, 0, 0));
        let young = add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 2, 1, 0));
        // Flow 0 is charged 1 ms of GC: flow 1 has more budget left and goes first although younger.
        charge_gc(s.as_mut(), &txs, 0, MS);
        assert_eq!(next(s.as_mut(), &txs, 0, MS), vec![young]);
        assert_eq!(next(s.as_mut(), &txs, 0, MS + 1), vec![old]);
        // Both reads were charged; flow 0 still has less left. After the 10 ms epoch both are refilled to
        // the full budget (neither is in debt), and the tie goes to the lower flow.
        let b0 = add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 3, 1, 2 * MS));
        let a0 = add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 4, 0, 2 * MS));
        assert_eq!(next(s.as_mut(), &txs, 0, 10 * MS), vec![a0]);
        assert_eq!(next(s.as_mut(), &txs, 0, 10 * MS + 1), vec![b0]);
    }

    #[test]
    fn a_flow_out_of_budget_waits_while_another_has_work() {
        // Flow 0 has two reads queued first, flow 1 one later: once flow 0 is charged more, flow 1 goes
        // between them (budgets, not arrival order, decide among flows).
        let mut txs = TxArena::default();
        let mut s = build(&config("sprinkler-fairness"), 1, 1);
        let a = add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 1, 0, 0));
        let a2 = add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 2, 0, 0));
        let b = add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 3, 1, 0));
        assert_eq!(next(s.as_mut(), &txs, 0, 1), vec![a], "equal budgets: lowest flow");
        assert_eq!(next(s.as_mut(), &txs, 0, 2), vec![b], "flow 0 was charged for its read");
        assert_eq!(next(s.as_mut(), &txs, 0, 3), vec![a2]);
    }

    #[test]
    fn budgets_carry_debt_but_not_surplus_across_epochs() {
        let mut b = Budgets::new(10 * MS, 5 * MS, 1);
        b.see(0);
        b.see(1);
        b.charge(0, 12 * MS);
        b.charge(1, 2 * MS);
        b.roll(9 * MS);
        assert_eq!((b.left(0), b.left(1)), (-7 * MS as i64, 3 * MS as i64), "no refill within the epoch");
        b.roll(10 * MS);
        assert_eq!(b.left(0), -2 * MS as i64, "a debt is paid back from the next budget");
        assert_eq!(b.left(1), 5 * MS as i64, "unspent budget does not accumulate");
        b.roll(35 * MS); // two more epoch ends (20 and 30 ms)
        assert_eq!(b.left(0), 5 * MS as i64);
        // With flow_budget_ns = 0 the dies' time of an epoch is shared by the flows seen.
        let mut auto = Budgets::new(10 * MS, 0, 4);
        auto.see(0);
        auto.see(1);
        auto.roll(10 * MS);
        assert_eq!(auto.left(1), 20 * MS as i64);
    }
}
