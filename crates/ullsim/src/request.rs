//! The request record every layer stamps as an I/O passes through it.
//!
//! Requests live in an arena owned by the simulation and are named by a small integer id; events carry ids,
//! never copies. Each layer writes only its own stamps.

use serde::{Deserialize, Serialize};

use crate::engine::Time;

/// Most requests (of all flows) that may have arrived and not completed at once: 262,144. Each costs a few
/// hundred bytes across the layers, so this bounds a run's memory to ~100 MB whatever the offered load; no
/// real host keeps this many I/Os waiting (an NVMe drive holds at most 64K commands per queue).
pub const MAX_IN_FLIGHT: u64 = 1 << 18;

/// What a request asks of the drive: an NVMe Read, Write or Flush command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read,
    Write,
    /// NVMe Flush: make every write completed before it durable. No data and no LBA range (`offset` and
    /// `len` are 0): a 64 B command and a 16 B completion on the link.
    Flush,
}

/// Whether a flow's I/O is latency-critical (the papers' criticality / workload attribute).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", remote = "Self")]
pub enum Criticality {
    Critical,
    #[default]
    Normal,
}

/// NVMe submission-queue priority class (QPRIO), used by weighted round robin arbitration and FLIN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", remote = "Self")]
pub enum NvmePriority {
    Urgent,
    High,
    #[default]
    Medium,
    Low,
}

crate::util::keyword::keyword_serde!(Criticality, NvmePriority);

/// The class a flow's requests carry from the application down to the firmware.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Class {
    pub criticality: Criticality,
    pub priority: NvmePriority,
}

/// Index of a request in the request arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReqId(pub u32);

impl ReqId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Time stamps, in simulated ns, that the layers record; 0 marks a stamp not reached yet.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stamps {
    /// The workload issued the I/O (the application's view of "start").
    pub issued: Time,
    /// The system call and file-system part is done: the bio enters the block layer.
    pub block_entered: Time,
    /// The block layer (and its I/O scheduler) handed the request to the NVMe driver.
    pub driver_entered: Time,
    /// The host wrote the command into the submission queue and rang the doorbell.
    pub submitted: Time,
    /// The command became visible to the controller (doorbell reached the device).
    pub device_arrival: Time,
    /// The controller fetched the command (arbitration won), start of device processing.
    pub device_fetched: Time,
    /// Time the request spent waiting in device-internal queues (transaction queues, write-buffer space),
    /// summed over the critical path the device model tracks.
    pub device_internal_wait: Time,
    /// The completion entry was posted (and the interrupt sent).
    pub device_done: Time,
    /// The host processed the completion (interrupt handler or poll loop) and woke the waiting task.
    pub woken: Time,
    /// The woken task got a CPU again (after the scheduler's delay and the context switch).
    pub running: Time,
    /// The host saw the completion and handed it back to the application.
    pub completed: Time,
    /// Durations, not instants. Of the time from `issued` to `block_entered`: the page cache's work (looking
    /// pages up, allocating the missing ones; a call with no device I/O: copying, a throttled writer's
    /// pause) ...
    pub page_cache_ns: Time,
    /// ... and the file system's own path (ext4's read_iter or write_begin/write_end, the direct-I/O path
    /// that maps blocks and builds the bio).
    pub file_system_ns: Time,
    /// Of the time from `running` to `completed`: the page cache's copy of fetched pages to the user after
    /// a buffered read's wake-up.
    pub page_cache_return_ns: Time,
}

/// One I/O request as it moves through the stack.
#[derive(Debug, Clone)]
pub struct Request {
    /// Index of the flow that issued it.
    pub flow: u32,
    /// The drive it goes to (`nvme0` is 0; `flow.device`).
    pub drive: u32,
    pub op: Op,
    /// Byte offset on the drive.
    pub offset: u64,
    /// Length in bytes (> 0; 0 for a flush).
    pub len: u32,
    /// Force Unit Access (a write only): the drive completes it only once its data is on non-volatile media,
    /// not when it reaches a volatile write cache. Linux's REQ_FUA; NVMe's FUA bit of the Write command.
    pub fua: bool,
    /// Asynchronous writeback from the page cache (not REQ_SYNC): the flusher's writes.
    pub writeback: bool,
    pub class: Class,
    pub stamps: Stamps,
}

impl Request {
    /// Total response time seen by the application.
    pub fn latency(&self) -> Time {
        self.stamps.completed - self.stamps.issued
    }

    /// Synchronous in Linux's sense (`op_is_sync`): reads, and writes that carry REQ_SYNC (direct I/O, fsync's
    /// data and journal writes); the flusher's writeback is not.
    pub fn is_sync(&self) -> bool {
        !self.writeback
    }
}

/// Live requests by id; ids are reused after a request completes, so memory tracks the number in flight.
pub type RequestArena = crate::util::slab::Slab<Request, ReqId>;

impl crate::util::slab::SlabId for ReqId {
    fn from_index(index: u32) -> Self {
        ReqId(index)
    }
    fn index(self) -> usize {
        self.0 as usize
    }
}
