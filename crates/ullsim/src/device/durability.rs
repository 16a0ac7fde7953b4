//! Durability: when an NVMe Flush completes, against the write buffer's destages.
//!
//! Every page the write buffer takes gets a destage number, in the order the buffer took them; its program
//! may finish in any order. A Flush takes a mark when it arrives (the number of destages started so far):
//! the writes acknowledged before it are exactly the destages numbered below the mark, so it completes once
//! no destage below its mark is pending. Destages started after its arrival never hold it up. With power-loss
//! protection the buffer is durable already and a Flush never waits here.

use std::collections::BTreeSet;

use crate::request::ReqId;

pub struct Durability {
    /// The write buffer is backed by power-loss protection (`device.cache.power_loss_protection`).
    power_loss_protection: bool,
    /// Destages started so far: the next destage's number.
    started: u64,
    /// Numbers of the destages whose program has not finished.
    pending: BTreeSet<u64>,
    /// Flushes waiting for destages, with their marks (arrival order is not mark order: commands of
    /// different queues pass the controller in arbitration order).
    waiting: Vec<(u64, ReqId)>,
}

impl Durability {
    pub fn new(power_loss_protection: bool) -> Self {
        Durability { power_loss_protection, started: 0, pending: BTreeSet::new(), waiting: Vec::new() }
    }

    /// Whether a FUA write must wait for its own programs (the buffer is volatile).
    pub fn fua_waits_for_media(&self) -> bool {
        !self.power_loss_protection
    }

    /// A buffered page starts its destage; returns its number (for [`Durability::destaged`]).
    pub fn destage_started(&mut self) -> u64 {
        let n = self.started;
        self.started += 1;
        if !self.power_loss_protection {
            self.pending.insert(n);
        }
        n
    }

    /// The mark of a Flush arriving now: it covers every destage started before.
    pub fn mark(&self) -> u64 {
        self.started
    }

    /// Whether every destage below `mark` is programmed.
    fn durable_below(&self, mark: u64) -> bool {
        self.pending.first().is_none_or(|&oldest| oldest >= mark)
    }

    /// Flush `req` with mark `mark` passed the controller: true when it may complete now, else it waits for
    /// [`Durability::destaged`] to release it.
    pub fn flush(&mut self, req: ReqId, mark: u64) -> bool {
        if self.durable_below(mark) {
            return true;
        }
        self.waiting.push((mark, req));
        false
    }

    /// Destage `n` is programmed; flushes it was the last to hold up are appended to `released`.
    pub fn destaged(&mut self, n: u64, released: &mut Vec<ReqId>) {
        if !self.pending.remove(&n) || self.waiting.is_empty() {
            return;
        }
        let oldest = self.pending.first().copied().unwrap_or(u64::MAX);
        self.waiting.retain(|&(mark, req)| {
            let done = oldest >= mark;
            if done {
                released.push(req);
            }
            !done
        });
    }

    /// Flushes waiting for destages.
    #[cfg(test)]
    pub fn flushes_waiting(&self) -> usize {
        self.waiting.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flush_waits_for_the_destages_before_it_and_no_later_ones() {
        let mut d = Durability::new(false);
        let first: Vec<u64> = (0..3).map(|_| d.destage_started()).collect();
        let mark = d.mark();
        let later = d.destage_started();
        assert!(!d.flush(ReqId(7), mark));
        let mut released = Vec::new();
        d.destaged(first[2], &mut released);
        d.destaged(first[0], &mut released);
        assert!(released.is_empty(), "destage 1 is still pending");
        d.destaged(first[1], &mut released);
        assert_eq!(released, [ReqId(7)], "the later destage {later} does not hold it");
        assert_eq!(d.flushes_waiting(), 0);
        // A flush arriving now waits only for the later destage.
        assert!(!d.flush(ReqId(8), d.mark()));
        d.destaged(later, &mut released);
        assert_eq!(released, [ReqId(7), ReqId(8)]);
        assert!(d.flush(ReqId(9), d.mark()), "nothing pending: immediate");
    }

    #[test]
    fn power_loss_protection_never_waits() {
        let mut d = Durability::new(true);
        d.destage_started();
        assert!(d.flush(ReqId(1), d.mark()));
        assert!(!d.fua_waits_for_media());
        let mut released = Vec::new();
        d.destaged(0, &mut released);
        assert!(released.is_empty());
    }
}
