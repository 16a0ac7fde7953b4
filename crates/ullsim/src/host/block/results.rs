//! What the block layer did in a run: its counters, reported in the results' `host.block`.

use serde::Serialize;

/// Block-layer counters.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BlockResults {
    pub io_scheduler: String,
    /// Requests that had to wait for an allocation tag.
    pub tag_waits: u64,
    /// Time callers spent waiting for the scheduler's queue-wide lock, ns, the lock word's moves between
    /// cores included; and for an NVMe submission queue's lock where several cores share the queue.
    pub lock_wait_ns: u64,
    /// Most requests queued in the scheduler at once (over the whole run, warm-up included).
    pub max_sched_queued: u64,
    /// Plugs flushed with at least one request in them.
    pub plug_flushes: u64,
    /// Bios merged into a plugged request, or a request waiting in the scheduler (mq-deadline), instead of
    /// becoming requests of their own.
    pub merges: u64,
    /// Critical requests that went around the scheduler (`host.block.critical_bypass`).
    pub bypassed: u64,
    /// Bypassed critical requests merged with a queued request of the same direction that overlapped them
    /// (`host.block.bypass_hazard`): one command for both.
    pub hazard_merges: u64,
    /// Bypassed critical requests that found an overlapping queued request of the other direction and took it
    /// along ahead of themselves.
    pub hazard_tandems: u64,
}

impl BlockResults {
    /// Nothing counted yet, under the scheduler named `io_scheduler`.
    pub fn zero(io_scheduler: &str) -> BlockResults {
        BlockResults {
            io_scheduler: io_scheduler.to_string(),
            tag_waits: 0,
            lock_wait_ns: 0,
            max_sched_queued: 0,
            plug_flushes: 0,
            merges: 0,
            bypassed: 0,
            hazard_merges: 0,
            hazard_tandems: 0,
        }
    }

    /// The counts since the snapshot `before` (the maximum stays the whole run's).
    pub fn since(&self, before: &BlockResults) -> BlockResults {
        BlockResults {
            io_scheduler: self.io_scheduler.clone(),
            tag_waits: self.tag_waits - before.tag_waits,
            lock_wait_ns: self.lock_wait_ns - before.lock_wait_ns,
            max_sched_queued: self.max_sched_queued,
            plug_flushes: self.plug_flushes - before.plug_flushes,
            merges: self.merges - before.merges,
            bypassed: self.bypassed - before.bypassed,
            hazard_merges: self.hazard_merges - before.hazard_merges,
            hazard_tandems: self.hazard_tandems - before.hazard_tandems,
        }
    }
}
