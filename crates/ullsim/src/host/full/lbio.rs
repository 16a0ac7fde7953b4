//! AIOS's light-weight block I/O (LBIO; Lee et al., ATC'19, §4.2, code skkucsl/aios `block/lbio.c`): a file
//! system bio of a flow that opened its files with `O_AIOS` becomes one NVMe command, straight to the
//! submitting core's queue: no plug, no scheduler, no merging or splitting, no request or tag allocation,
//! and no block-layer completion. Its descriptor comes from a per-core ring of [`LBIO_PER_CORE`]; a read's
//! pages come from a pool mapped for DMA in advance, so it skips the IOMMU mapping on submission and
//! defers the unmapping out of the completion (the read program pays both while the device works).

use super::*;

/// Descriptors in each core's LBIO ring (AIOS's `NR_LBIO_PER_CPU`; the index is the NVMe command id).
pub(super) const LBIO_PER_CORE: u32 = 1024;

impl FullHost {
    /// Submit LBIO `req` to hardware queue `hwq` from `at`: the driver's command and the doorbell, each
    /// command its own. Returns when the submitting core is done.
    pub(super) fn submit_lbio(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        req: ReqId,
        hwq: u32,
        at: Time,
    ) -> Time {
        let premapped = requests[req].op == Op::Read;
        let driver_ns = if premapped { self.nvme.premapped_submit_ns } else { self.nvme.submit_ns };
        let doorbell = at + driver_ns;
        self.ring_one(q, requests, devices, Dispatched { id: req, hwq, at, done: doorbell }, doorbell);
        doorbell
    }

    /// The driver's work on `req`'s completion entry: an LBIO read's unmapping is deferred; the
    /// accelerator's driver has its own.
    pub(super) fn cqe_ns_of(&self, requests: &RequestArena, req: ReqId) -> Time {
        if let Some(ns) = self.xler_complete_ns(req) {
            ns
        } else if self.reqs[req.index()].lbio && requests[req].op == Op::Read {
            self.nvme.premapped_cqe_ns
        } else {
            self.nvme.cqe_ns
        }
    }
}
