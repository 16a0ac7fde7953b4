//! One drive's request queue (Linux's `struct request_queue` of a disk): its I/O scheduler instance with the
//! scheduler's queue-wide lock, over the drive's hardware queues. A host with several drives has one each, as
//! Linux gives every disk its own elevator (`elevator_init_mq` per queue): mq-deadline's `dd->lock` and bfq's
//! `bfqd->lock` serialise one drive's requests, never two drives'. Its tag sets are sized for its drive: each
//! drive's queue depth gives its hardware queues' driver tags, and the allocation tags follow from it.

use super::lock::{LineTransfer, SpinLock};
use super::sched::IoScheduler;
use crate::engine::Time;

pub(super) struct RequestQueue {
    pub(super) sched: Box<dyn IoScheduler>,
    /// The scheduler's queue-wide lock (used if its costs say `global_lock`).
    pub(super) lock: SpinLock,
    /// Requests in the scheduler now.
    pub(super) queued: u64,
    /// Its first hardware queue in the host's numbering; the scheduler numbers the drive's from 0.
    pub(super) first_hwq: u32,
    /// Allocation tags of each of its hardware queues (`nr_requests`).
    pub(super) alloc_capacity: u32,
    /// Driver tags of each of its hardware queues (commands its drive's submission queue may hold).
    pub(super) driver_capacity: u32,
}

impl RequestQueue {
    pub(super) fn new(
        sched: Box<dyn IoScheduler>,
        first_hwq: u32,
        (alloc_capacity, driver_capacity): (u32, u32),
        line_transfer: LineTransfer,
    ) -> RequestQueue {
        RequestQueue {
            sched,
            lock: SpinLock::new(line_transfer),
            queued: 0,
            first_hwq,
            alloc_capacity,
            driver_capacity,
        }
    }

    /// The scheduler's operation that ran until `at` (under its lock, if `locked`) also did its
    /// state-dependent work ([`IoScheduler::take_work_ns`]): the operation, and the hold, end that much
    /// later.
    pub(super) fn charge_work(&mut self, locked: bool, at: Time) -> Time {
        let work = self.sched.take_work_ns();
        if locked && work > 0 {
            self.lock.extend(work);
        }
        at + work
    }

    /// Hardware queue `hwq` (the host's numbering) as the scheduler numbers it.
    pub(super) fn local(&self, hwq: u32) -> u32 {
        hwq - self.first_hwq
    }
}
