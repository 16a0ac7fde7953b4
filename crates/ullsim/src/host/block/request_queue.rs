//! One drive's request queue (Linux's `struct request_queue` of a disk): its I/O scheduler instance with the
//! scheduler's queue-wide lock, over the drive's hardware queues. A host with several drives has one each, as
//! Linux gives every disk its own elevator (`elevator_init_mq` per queue): mq-deadline's `dd->lock` and bfq's
//! `bfqd->lock` serialise one drive's requests, never two drives'.

use super::lock::{LineTransfer, SpinLock};
use super::sched::IoScheduler;

pub(super) struct RequestQueue {
    pub(super) sched: Box<dyn IoScheduler>,
    /// The scheduler's queue-wide lock (used if its costs say `global_lock`).
    pub(super) lock: SpinLock,
    /// Requests in the scheduler now.
    pub(super) queued: u64,
    /// Its first hardware queue in the host's numbering; the scheduler numbers the drive's from 0.
    pub(super) first_hwq: u32,
}

impl RequestQueue {
    pub(super) fn new(sched: Box<dyn IoScheduler>, first_hwq: u32, line_transfer: LineTransfer) -> RequestQueue {
        RequestQueue { sched, lock: SpinLock::new(line_transfer), queued: 0, first_hwq }
    }

    /// Hardware queue `hwq` (the host's numbering) as the scheduler numbers it.
    pub(super) fn local(&self, hwq: u32) -> u32 {
        hwq - self.first_hwq
    }
}
