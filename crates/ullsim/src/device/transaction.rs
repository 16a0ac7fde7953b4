//! Flash transactions: the page-sized units of work the FTL hands to the transaction scheduler.

use crate::engine::Time;
use crate::request::NvmePriority;

use super::flash::FlashOp;

/// Why a transaction exists; schedulers use it to pick queues, results to attribute work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Reads a host request is waiting for.
    UserRead,
    /// Host data written to flash (a write-buffer destage, or a write the host waits for without a cache).
    UserWrite,
    /// Reading a translation page after a cached-mapping-table miss.
    MapRead,
    /// Garbage collection: moving a valid page (read, then program) or erasing the victim block.
    Gc,
}

/// Index of a transaction in the [`TxArena`].
pub type TxId = u32;
/// Marker for "no request" / "no link".
pub const NONE: u32 = u32::MAX;

/// One page-level flash operation.
#[derive(Debug, Clone)]
pub struct Transaction {
    pub op: FlashOp,
    pub purpose: Purpose,
    /// Request waiting for it (`NONE` for background work).
    pub req: u32,
    /// Flow that caused it (`NONE` for GC and mapping work that no flow owns yet).
    pub flow: u32,
    pub priority: NvmePriority,
    pub die: u32,
    /// Plane within the die.
    pub plane: u32,
    /// Physical page (for erase: the first page of the block).
    pub ppa: u64,
    /// Logical page (reads/writes).
    pub lpa: u64,
    /// Bytes moved over the channel for this page.
    pub bytes: u32,
    /// When the host request it serves arrived at the device (rang its doorbell): where a scheduler counts
    /// the request's wait from. Work no request waits for (GC, mapping reads, destages) has its enqueue time.
    pub arrived_at: Time,
    pub enqueued_at: Time,
    pub dispatched_at: Time,
    /// Intrusive link: the next transaction waiting on the same mapping read, the GC job index, or the buffer
    /// partition of a page the write buffer held at time 0 (`buffer_preload.rs`).
    pub link: u32,
    /// A write-buffer destage's number (see `durability.rs`); 0 for every other transaction.
    pub destage: u64,
}

/// Transactions by id, reused after completion, so steady state allocates nothing.
pub type TxArena = crate::util::slab::Slab<Transaction, TxId>;
