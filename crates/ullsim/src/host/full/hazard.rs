//! FlashShare's hazard rule on the full host's side (`host.block.bypass_hazard`, `BlockLayer::take_hazard`):
//! a bypassed critical request that finds an overlapping queued request either carries it in one command
//! (same direction) or goes down right behind it (tandem). The old request may be another job's, a piece of
//! a split request, a plug merge's carrier or a file-system bio: it completes through its own path.

use super::*;
use crate::host::block::Hazard;

impl FullHost {
    /// Submit `rq` (bound for `hwq`, from `core`) to the block layer from `at`, around the scheduler with
    /// `bypass`; a bypassed critical request goes through the hazard check first. `max_sectors` bounds a
    /// hazard merge. Returns when the submitting core is done.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn submit_rq(
        &mut self,
        requests: &mut RequestArena,
        rq: SchedRequest,
        hwq: u32,
        core: u32,
        bypass: bool,
        max_sectors: u32,
        at: Time,
        out: &mut Vec<Dispatched>,
    ) -> Time {
        let caller = self.nvme.caller(core);
        if !(bypass && rq.critical) {
            return self.block.submit_via(rq, hwq, caller, at, bypass, out);
        }
        let searched = &self.core_hwqs[(hwq / self.nvme.hw_queues_per_drive()) as usize][core as usize];
        let (t, hazard) = self.block.take_hazard(&rq, searched, caller, max_sectors, at, out);
        match hazard {
            None => self.block.submit_bypass(rq, hwq, caller, t, out),
            Some(Hazard::Tandem { old }) => {
                // On the critical request's queue, just ahead of it, so that the driver sees it first.
                self.reqs[old.id.index()].hwq = hwq;
                self.block.submit_hazard_tandem(old, rq, hwq, caller, t, out)
            }
            Some(Hazard::Merge { old, sector, sectors }) => {
                let id = self.hazard_carrier(requests, rq.id, old.id, sector, sectors);
                let merged = SchedRequest { id, sector, sectors, ..rq };
                self.block.submit_hazard_merge(merged, hwq, caller, t, out)
            }
        }
    }

    /// A command for critical `new` and the queued `old` merged into it, spanning `sectors` from `sector`: a
    /// request of its own (neither original's extent changes), completed and waited for as `new` is.
    fn hazard_carrier(
        &mut self,
        requests: &mut RequestArena,
        new: ReqId,
        old: ReqId,
        sector: u64,
        sectors: u32,
    ) -> ReqId {
        let lead = &requests[new];
        let merged = Request {
            offset: sector * 512,
            len: sectors * 512,
            // Either one's FUA covers the whole command, so the old write keeps its durability.
            fua: lead.fua || requests[old].fua,
            stamps: Stamps { issued: lead.stamps.issued, ..Stamps::default() },
            ..lead.clone()
        };
        let id = requests.insert(merged);
        let lead = self.reqs[new.index()];
        *self.req_mut(id) = HostReq {
            job: lead.job,
            hwq: lead.hwq,
            mode: lead.mode,
            hazard_merged: Some((new, old)),
            ..HostReq::default()
        };
        id
    }

    /// The hazard merge's command `carrier` of `new` and `old` completed: each takes its driver, device and
    /// completion stamps and completes through its own path (its job, its split parent, its riders, the file
    /// system), the queued one first.
    pub(super) fn hazard_merge_done(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        carrier: ReqId,
        new: ReqId,
        old: ReqId,
    ) {
        let lower = requests[carrier].stamps;
        requests.remove(carrier);
        for original in [old, new] {
            copy_lower_stamps(&lower, &mut requests[original].stamps);
            self.request_done(q, requests, original);
        }
    }
}
