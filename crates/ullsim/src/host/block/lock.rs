//! A kernel spinlock shared by cores (Linux's queued spinlock, kernel/locking/qspinlock.c), as the block
//! layer's queue-wide scheduler locks are (`dd->lock` in block/mq-deadline.c, `bfqd->lock` in
//! block/bfq-iosched.c).
//!
//! Acquisitions are served one at a time in the order they are made (the MCS queue is FIFO), each holding
//! the lock for its operation's time. The lock word lives in one cache line, so an acquisition by another
//! core than the last holder first moves that line:
//! - the lock was free: the acquirer's atomic (`queued_spin_lock`'s cmpxchg) pulls the line from the last
//!   holder's core: one transfer;
//! - the lock was held (the acquirer queued): its own `xchg_tail` took the line while the holder ran, so the
//!   holder's release (`queued_spin_unlock`'s store) must take it back and the queue head's
//!   `atomic_cond_read_acquire` on the lock word then pulls it again: two transfers on the critical path
//!   between one holder and the next. The MCS hand-off to the next waiter (`set_locked`, then
//!   `arch_mcs_spin_unlock_contended(&next->locked)`) is written by the new holder just after it takes the
//!   lock, so the next waiter becomes the queue head while the lock is held, off that path.
//!
//! On one core every acquisition finds the line where it is: the lock costs exactly its hold times, as a
//! plain FCFS server. The wait, transfers included, is CPU time of the caller (it spins).

use crate::config::host::CpuConfig;
use crate::engine::Time;

/// What moving a cache line between two cores costs: `within_ns` inside a group of `group_cores` cores that
/// share a last-level cache (a Zen CCX, a socket), `across_ns` between groups (`host.cpu.cores_per_cache_group`,
/// `cache_line_transfer_ns`, `cache_line_transfer_across_ns`). One group: every pair costs `within_ns`.
#[derive(Debug, Clone, Copy)]
pub struct LineTransfer {
    pub within_ns: Time,
    pub across_ns: Time,
    /// Cores per group; 0: all cores are one group.
    pub group_cores: u32,
}

impl LineTransfer {
    /// One group: every transfer costs `ns`.
    pub fn uniform(ns: Time) -> LineTransfer {
        LineTransfer { within_ns: ns, across_ns: ns, group_cores: 0 }
    }

    /// The host's transfer costs (`host.cpu.cache_line_transfer_ns`, `cache_line_transfer_across_ns`,
    /// `cores_per_cache_group`).
    pub fn of(cpu: &CpuConfig) -> LineTransfer {
        LineTransfer {
            within_ns: cpu.cache_line_transfer_ns.0,
            across_ns: cpu.cache_line_transfer_across_ns.0,
            group_cores: cpu.cores_per_cache_group,
        }
    }

    /// Moving a line from core `from` to core `to` (different cores).
    pub fn ns(&self, from: u32, to: u32) -> Time {
        if self.group_cores == 0 || from / self.group_cores == to / self.group_cores {
            self.within_ns
        } else {
            self.across_ns
        }
    }
}

/// The state of one lock.
#[derive(Debug, Clone)]
pub struct SpinLock {
    /// Moving a cache line from one core to another.
    transfer: LineTransfer,
    /// The lock is free from then.
    free_at: Time,
    /// The core that held it last (whose cache holds the lock word), if any did.
    holder: Option<u32>,
}

/// One acquisition: the caller holds the lock from `start` to `end` and spun for `waited` before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    pub start: Time,
    pub end: Time,
    pub waited: Time,
}

impl SpinLock {
    /// A free lock no core has held, with `transfer` for a cache line between cores.
    pub fn new(transfer: LineTransfer) -> SpinLock {
        SpinLock { transfer, free_at: 0, holder: None }
    }

    /// `core` wants the lock at `at` for `hold`: it waits its turn, pays the lock word's transfers (none
    /// when it held the lock last) and holds it.
    pub fn acquire(&mut self, core: u32, at: Time, hold: Time) -> Held {
        let queued = self.free_at > at;
        // Both transfers of a queued acquisition are between the last holder's core and this one.
        let moves = match self.holder {
            Some(last) if last != core => (1 + Time::from(queued)) * self.transfer.ns(last, core),
            _ => 0,
        };
        let start = at.max(self.free_at) + moves;
        self.free_at = start + hold;
        self.holder = Some(core);
        Held { start, end: start + hold, waited: start - at }
    }

    /// The last acquisition holds the lock `by` longer (work its holder found only once it held it).
    pub fn extend(&mut self, by: Time) {
        self.free_at += by;
    }

    /// The core that held the lock last, if any did.
    pub fn last_holder(&self) -> Option<u32> {
        self.holder
    }
}

/// A cache line every core updates with single atomics and no lock (a reader's `read_lock` on an rwlock
/// word, `atomic_inc` of a counter): each update by another core than the last one first pulls the line
/// (one transfer); updates are served one at a time, so one that arrives while another core's pull is
/// under way waits for it. One core alone never pays anything.
#[derive(Debug, Clone)]
pub struct SharedLine {
    transfer: LineTransfer,
    /// The line is on `owner`'s core from then.
    ready_at: Time,
    owner: Option<u32>,
}

impl SharedLine {
    /// A line no core has touched.
    pub fn new(transfer: LineTransfer) -> SharedLine {
        SharedLine { transfer, ready_at: 0, owner: None }
    }

    /// `core` updates the line at `at`: how long it waits for it (0 when the line is its own already).
    pub fn touch(&mut self, core: u32, at: Time) -> Time {
        let done = match self.owner {
            Some(last) if last != core => at.max(self.ready_at) + self.transfer.ns(last, core),
            _ => at,
        };
        self.ready_at = self.ready_at.max(done);
        self.owner = Some(core);
        done - at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cores` cores each ask for the lock as soon as their last hold ended (round robin, back to back).
    /// Returns the acquisitions served per second of the last `rounds` rounds.
    fn back_to_back(cores: u32, hold: Time, transfer: Time, rounds: u32) -> f64 {
        let mut lock = SpinLock::new(LineTransfer::uniform(transfer));
        let mut ready = vec![0; cores as usize];
        let (mut first, mut last) = (0, 0);
        for round in 0..rounds + 1 {
            for c in 0..cores {
                let h = lock.acquire(c, ready[c as usize], hold);
                ready[c as usize] = h.end;
                if round == 1 && c == 0 {
                    first = h.start;
                }
                last = h.end;
            }
        }
        // From the first acquisition of round 1 to the end of the last one: rounds x cores holds.
        f64::from(rounds * cores) * 1e9 / (last - first) as f64
    }

    /// n >= 2 contenders always queued behind another core: each acquisition costs hold + 2 transfers, so
    /// the lock serves 1 / (h + t) with the hand-off t = 2 transfers.
    #[test]
    fn contended_throughput_is_one_over_hold_plus_handoff() {
        let (h, x) = (700, 40);
        for n in [2, 4, 10, 16] {
            let served = back_to_back(n, h, x, 1000);
            let expected = 1e9 / (h + 2 * x) as f64;
            assert!((served - expected).abs() / expected < 1e-3, "n = {n}: {served} vs {expected}");
        }
    }

    /// One core alone pays exactly its holds, whatever the transfer cost: the old FCFS server.
    #[test]
    fn one_core_pays_exactly_its_holds() {
        let mut lock = SpinLock::new(LineTransfer::uniform(1_000));
        let mut t = 5;
        for hold in [350, 300, 50, 350] {
            let h = lock.acquire(3, t, hold);
            assert_eq!(h, Held { start: t, end: t + hold, waited: 0 });
            t = h.end + 7;
        }
        // It waits for its own earlier hold (e.g. an interrupt on its core) without any transfer.
        let a = lock.acquire(3, t, 100);
        assert_eq!(lock.acquire(3, t + 10, 100), Held { start: a.end, end: a.end + 100, waited: a.end - t - 10 });
    }

    /// A free lock last held by another core costs one transfer; a queued acquisition two.
    #[test]
    fn transfers_by_case() {
        let mut lock = SpinLock::new(LineTransfer::uniform(40));
        assert_eq!(lock.acquire(0, 0, 100).start, 0, "never held: the line is nobody's");
        assert_eq!(lock.acquire(1, 1_000, 100), Held { start: 1_040, end: 1_140, waited: 40 });
        assert_eq!(lock.acquire(2, 1_100, 100), Held { start: 1_220, end: 1_320, waited: 120 });
        assert_eq!(lock.last_holder(), Some(2));
    }

    /// A shared line costs one transfer per update by another core than the last, none on one core, and an
    /// update arriving during another core's pull waits for that pull.
    #[test]
    fn a_shared_line_costs_a_transfer_per_change_of_core() {
        let mut line = SharedLine::new(LineTransfer::uniform(40));
        assert_eq!(line.touch(0, 100), 0, "nobody's line");
        assert_eq!(line.touch(0, 200), 0, "its own");
        assert_eq!(line.touch(1, 300), 40);
        // Core 2 asks 10 ns into core 1's pull: it waits for it (30 ns) and pulls in turn.
        assert_eq!(line.touch(2, 310), 30 + 40);
        // Two cores alternating, well apart: exactly one transfer each.
        let total: Time = (0..100).map(|i| line.touch(i % 2, 1_000 + 1_000 * Time::from(i))).sum();
        assert_eq!(total, 100 * 40);
        let mut alone = SharedLine::new(LineTransfer::uniform(1_000));
        assert_eq!((0..50).map(|i| alone.touch(3, i)).sum::<Time>(), 0);
    }

    /// With groups of 4 cores, a transfer inside a group costs `within_ns` and one between groups
    /// `across_ns`; back to back, cores of one group serve 1 / (h + 2 within), and once the contenders span
    /// two groups every hand-off in the round robin that crosses pays the dearer transfer, so throughput falls.
    #[test]
    fn transfers_between_groups_cost_more() {
        let groups = LineTransfer { within_ns: 20, across_ns: 100, group_cores: 4 };
        assert_eq!((groups.ns(0, 3), groups.ns(3, 4), groups.ns(5, 7)), (20, 100, 20));
        let mut lock = SpinLock::new(groups);
        lock.acquire(0, 0, 100);
        assert_eq!(lock.acquire(5, 1_000, 100).start, 1_100, "free, from another group: one dear transfer");
        let rate = |cores: u32| {
            let mut lock = SpinLock::new(groups);
            let mut ready = vec![0; cores as usize];
            let mut end = 0;
            for _ in 0..1000 {
                for c in 0..cores {
                    end = lock.acquire(c, ready[c as usize], 700).end;
                    ready[c as usize] = end;
                }
            }
            f64::from(1000 * cores) * 1e9 / end as f64
        };
        let (four, eight) = (rate(4), rate(8));
        assert!((four - 1e9 / 740.0).abs() / four < 2e-3, "one group: {four}");
        // Cores 0-7 in turn: hand-offs 3->4 and 7->0 cross, the other six stay inside.
        let expected = 8.0 * 1e9 / (8.0 * 700.0 + 6.0 * 40.0 + 2.0 * 200.0);
        assert!((eight - expected).abs() / eight < 2e-3, "two groups: {eight} vs {expected}");
        assert!(eight < four);
    }
}
