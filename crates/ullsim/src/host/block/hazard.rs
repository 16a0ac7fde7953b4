//! FlashShare's hazard rule for bypassed latency-critical requests (OSDI'18 §3.2, `host.block.bypass_hazard`).
//!
//! A critical request that goes around the scheduler could overtake a throughput request to the same sectors
//! that is still queued in blk-mq. So before bypassing, blk-mq searches the requests of the submitting core's
//! hardware queues that have not reached the driver (dispatch list, scheduler, tag waiters) for a non-critical
//! one that overlaps the new one, and takes it out. The same direction: the two become one request covering
//! both extents. The other direction: the old one goes down first and the new one right after it, in tandem.
//! The caller builds the merged request (it owns request ids) and submits with [`BlockLayer::submit_hazard_merge`]
//! or [`BlockLayer::submit_hazard_tandem`].

use super::{BlockLayer, Caller, Dispatched};
use crate::engine::Time;
use crate::host::block::sched::SchedRequest;
use crate::request::Op;

/// A queued request a bypassed critical request must not overtake, taken out of the block layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hazard {
    /// Same direction, and together within the size limit: one request spanning `sectors` from `sector`
    /// carries both.
    Merge { old: SchedRequest, sector: u64, sectors: u32 },
    /// The other direction (or too large together): `old` goes down first, then the new request.
    Tandem { old: SchedRequest },
}

/// `queued` is a request the critical `new` must not overtake: not critical itself, with sectors (not a flush)
/// that overlap `new`'s.
fn conflicts(queued: &SchedRequest, new: &SchedRequest) -> bool {
    !queued.critical && queued.op != Op::Flush && queued.sector < end(new) && new.sector < end(queued)
}

/// The sector after `r`'s last.
fn end(r: &SchedRequest) -> u64 {
    r.sector.saturating_add(u64::from(r.sectors))
}

impl BlockLayer {
    /// The hazard check for critical `new`, about to be bypassed, from `at` on the submitting `core`: search the
    /// requests of hardware queues `hwqs` (the core's) not yet at the driver, in the order they would reach it
    /// (dispatch list, scheduler, tag waiters), for one that conflicts, and take the first out of the block
    /// layer, giving back its allocation tag (a waiter taking it may dispatch, into `out`, with `driver_ns`
    /// each). `max_sectors` bounds a merge. Each request compared costs `hazard_check_ns`; the scheduler's
    /// part runs under its queue-wide lock, if it has one. Nothing happens with `bypass_hazard` off.
    pub fn take_hazard(
        &mut self,
        new: &SchedRequest,
        hwqs: &[u32],
        caller: Caller,
        max_sectors: u32,
        at: Time,
        out: &mut Vec<Dispatched>,
    ) -> (Time, Option<Hazard>) {
        if !self.bypass_hazard || new.op == Op::Flush {
            return (at, None);
        }
        let mut t = at;
        for &hwq in hwqs {
            let (after, taken) = self.take_conflicting(new, hwq, caller.core, t);
            t = after;
            let Some(old) = taken else { continue };
            if let Some(tag_hwq) = old.tag_of {
                // A waiter taking the freed tag may go to the driver at once.
                let (after_tag, handed_over) = self.free_alloc_tag(tag_hwq, caller.core, t);
                t = if handed_over { self.run_queue(tag_hwq, caller, after_tag, out) } else { after_tag };
            }
            return (t, Some(hazard_of(old.rq, new, max_sectors)));
        }
        (t, None)
    }

    /// Submit `merged`, a bypassed critical request that now also covers a hazard's old request, around the
    /// scheduler ([`Self::submit_bypass`]).
    pub fn submit_hazard_merge(
        &mut self,
        merged: SchedRequest,
        hwq: u32,
        caller: Caller,
        at: Time,
        out: &mut Vec<Dispatched>,
    ) -> Time {
        self.results.hazard_merges += 1;
        self.submit_bypass(merged, hwq, caller, at, out)
    }

    /// Submit a hazard's `old` request and then critical `new` around the scheduler onto `hwq`'s dispatch
    /// list, in that order, so that the driver gets `old` first.
    pub fn submit_hazard_tandem(
        &mut self,
        old: SchedRequest,
        new: SchedRequest,
        hwq: u32,
        caller: Caller,
        at: Time,
        out: &mut Vec<Dispatched>,
    ) -> Time {
        self.results.hazard_tandems += 1;
        let t = at + self.submit_ns;
        self.push_bypassed(old, hwq, t);
        self.push_bypassed(new, hwq, t);
        self.run_queue(hwq, caller, t, out)
    }

    /// Search hardware queue `hwq` from `at` for a request conflicting with `new` and take the first out of
    /// where it waits; returns when the search ends and what it took.
    fn take_conflicting(&mut self, new: &SchedRequest, hwq: u32, core: u32, at: Time) -> (Time, Option<Taken>) {
        let h = hwq as usize;
        let check_ns = self.hazard_check_ns;
        // The dispatch list: requests the scheduler gave up (holding a tag) and bypassed ones (holding none).
        let list = &self.dispatch_lists[h];
        let position = list.iter().position(|r| conflicts(r, new));
        let mut t = at + check_ns * position.map_or(list.len(), |p| p + 1) as u64;
        if let Some(rq) = position.and_then(|p| self.dispatch_lists[h].remove(p)) {
            let entry = self.inflight.get_mut(rq.id.index()).and_then(Option::take);
            let tag_of = entry.filter(|e| !e.bypassed).map(|e| e.hwq);
            return (t, Some(Taken { rq, tag_of }));
        }
        // The scheduler's queue, under its lock.
        let q = self.queue_of(hwq);
        let local = self.queues[q].local(hwq);
        if self.queues[q].sched.queued(local) > 0 {
            let mut compared = 0u64;
            let removed = self.queues[q].sched.remove_first(local, &mut |r| {
                compared += 1;
                conflicts(r, new)
            });
            t = self.sched_op(q, core, t, check_ns * compared);
            if let Some(rq) = removed {
                self.queues[q].queued -= 1;
                let entry = self.inflight.get_mut(rq.id.index()).and_then(Option::take);
                return (t, Some(Taken { rq, tag_of: Some(entry.map_or(hwq, |e| e.hwq)) }));
            }
        }
        // Requests still waiting for a tag hold none.
        let waiters = &self.tag_waiters[h];
        let position = waiters.iter().position(|r| conflicts(r, new));
        t += check_ns * position.map_or(waiters.len(), |p| p + 1) as u64;
        let taken = position.and_then(|p| self.tag_waiters[h].remove(p)).map(|rq| Taken { rq, tag_of: None });
        (t, taken)
    }
}

/// A request taken out by the hazard check, with the hardware queue whose allocation tag it held, if any.
#[derive(Debug, Clone, Copy)]
struct Taken {
    rq: SchedRequest,
    tag_of: Option<u32>,
}

/// What to do with `old`, taken out for `new`: merge when they go the same direction and together fit
/// `max_sectors` (Linux's merges respect the request size limit too), else tandem.
fn hazard_of(old: SchedRequest, new: &SchedRequest, max_sectors: u32) -> Hazard {
    let sector = old.sector.min(new.sector);
    match u32::try_from(end(&old).max(end(new)) - sector) {
        Ok(sectors) if old.op == new.op && sectors <= max_sectors => Hazard::Merge { old, sector, sectors },
        _ => Hazard::Tandem { old },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::host::BlockConfig;
    use crate::request::ReqId;

    const DRIVER_NS: Time = 100;
    /// Calls from core 0.
    const CALLER: Caller = Caller { core: 0, driver_ns: DRIVER_NS, sq_locked_ns: 0 };

    /// A block layer under `none` with one hardware queue of one command, the hazard check on at 50 ns.
    fn one_slot_layer() -> BlockLayer {
        let cfg = BlockConfig { bypass_hazard: true, ..BlockConfig::default() };
        BlockLayer::new(&cfg, "none", 1, 1, crate::host::block::LineTransfer::uniform(40)).expect("none exists")
    }

    fn rq(id: u32, op: Op, sector: u64, critical: bool) -> SchedRequest {
        SchedRequest {
            id: ReqId(id),
            op,
            sector,
            flow: u32::from(critical),
            critical,
            ..crate::host::block::sched::test_request()
        }
    }

    /// Request 0 holds the only driver tag and request 1 (a read of sectors 8..16) waits for a tag.
    fn busy_queue() -> BlockLayer {
        let mut b = one_slot_layer();
        let mut out = Vec::new();
        b.submit(rq(0, Op::Read, 0, false), 0, CALLER, 0, &mut out);
        b.submit(rq(1, Op::Read, 8, false), 0, CALLER, 10, &mut out);
        assert_eq!(out.iter().map(|d| d.id).collect::<Vec<_>>(), [ReqId(0)]);
        assert_eq!(b.tag_waiters[0].len(), 1);
        b
    }

    #[test]
    fn an_overlapping_read_merges_into_one_request_spanning_both() {
        let mut b = busy_queue();
        let new = rq(2, Op::Read, 12, true);
        let (t, hazard) = b.take_hazard(&new, &[0], CALLER, 2560, 100, &mut Vec::new());
        // One request compared (the tag waiter) at 50 ns.
        assert_eq!(t, 150);
        let old = rq(1, Op::Read, 8, false);
        assert_eq!(hazard, Some(Hazard::Merge { old, sector: 8, sectors: 12 }));
        assert!(b.tag_waiters[0].is_empty());
        b.check_tags().unwrap();
        // Too large together: tandem instead.
        let mut b = busy_queue();
        let (_, hazard) = b.take_hazard(&new, &[0], CALLER, 8, 100, &mut Vec::new());
        assert_eq!(hazard, Some(Hazard::Tandem { old }));
    }

    #[test]
    fn tandem_sends_the_old_request_to_the_driver_before_the_new_one() {
        let mut b = busy_queue();
        let new = rq(2, Op::Write, 8, true);
        let mut out = Vec::new();
        let (t, hazard) = b.take_hazard(&new, &[0], CALLER, 2560, 100, &mut out);
        let Some(Hazard::Tandem { old }) = hazard else { panic!("expected a tandem, got {hazard:?}") };
        assert_eq!(old.id, ReqId(1));
        b.submit_hazard_tandem(old, new, 0, CALLER, t, &mut out);
        b.check_tags().unwrap();
        assert!(out.is_empty(), "the one driver tag is taken");
        // Each completion frees the tag for the next on the dispatch list: old first, then new.
        b.complete(ReqId(0), CALLER, 1_000, &mut out);
        b.check_tags().unwrap();
        b.complete(out[0].id, CALLER, 2_000, &mut out);
        b.check_tags().unwrap();
        assert_eq!(out.iter().map(|d| d.id).collect::<Vec<_>>(), [ReqId(1), ReqId(2)]);
        assert!(out[0].at < out[1].at);
        let r = b.results();
        assert_eq!((r.hazard_tandems, r.hazard_merges, r.bypassed), (1, 0, 2));
        // Every tag comes back.
        b.complete(ReqId(2), CALLER, 3_000, &mut out);
        b.check_tags().unwrap();
        assert_eq!((b.alloc_tags[0], b.driver_tags[0]), (1, 1));
    }

    #[test]
    fn a_request_taken_from_the_scheduler_gives_its_tag_to_the_next_waiter() {
        // A bypassed critical request holds the one driver tag, so the next request stays in the scheduler
        // holding the one allocation tag, and another waits for that tag.
        let mut b = one_slot_layer();
        let mut out = Vec::new();
        b.submit_bypass(rq(0, Op::Read, 1_000, true), 0, CALLER, 0, &mut out);
        b.submit(rq(1, Op::Read, 0, false), 0, CALLER, 10, &mut out);
        b.submit(rq(2, Op::Read, 500, false), 0, CALLER, 20, &mut out);
        assert_eq!((b.queues[0].sched.queued(0), b.tag_waiters[0].len()), (1, 1));
        let (_, hazard) = b.take_hazard(&rq(3, Op::Write, 4, true), &[0], CALLER, 2560, 100, &mut out);
        assert!(matches!(hazard, Some(Hazard::Tandem { old }) if old.id == ReqId(1)));
        // Request 2 took the freed tag and now waits in the scheduler.
        assert_eq!((b.queues[0].sched.queued(0), b.tag_waiters[0].len()), (1, 0));
        b.check_tags().unwrap();
    }

    #[test]
    fn no_hazard_without_overlap_with_critical_ones_or_with_the_key_off() {
        let mut b = busy_queue();
        // Adjacent is not overlapping.
        let (t, hazard) = b.take_hazard(&rq(2, Op::Read, 16, true), &[0], CALLER, 2560, 100, &mut Vec::new());
        assert_eq!((t, hazard), (150, None));
        // Queued critical requests are never taken.
        let mut b = one_slot_layer();
        let mut out = Vec::new();
        b.submit_bypass(rq(0, Op::Read, 0, true), 0, CALLER, 0, &mut out);
        b.submit_bypass(rq(1, Op::Read, 8, true), 0, CALLER, 0, &mut out);
        let (_, hazard) = b.take_hazard(&rq(2, Op::Read, 8, true), &[0], CALLER, 2560, 100, &mut out);
        assert_eq!(hazard, None);
        // Off: no search, no cost.
        let mut b = busy_queue();
        b.bypass_hazard = false;
        let (t, hazard) = b.take_hazard(&rq(2, Op::Read, 8, true), &[0], CALLER, 2560, 100, &mut Vec::new());
        assert_eq!((t, hazard), (100, None));
    }
}
