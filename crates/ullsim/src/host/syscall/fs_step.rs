//! The steps of the file-system calls ([`super::buffered`], [`super::fsync`]) and of the file system's
//! kernel threads (`host/fs/jbd2.rs`, `host/fs/flusher.rs`), which the host's runner carries out.

use crate::engine::Time;
use crate::host::fs::Bio;

/// What a task running file-system code does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FsStep {
    /// CPU work in the kernel.
    Work(Time),
    /// CPU work in the kernel (`cpu_ns`: entry, page allocation), then submit `bios` (their CPU cost is the
    /// block layer's and the driver's, or LBIO's), then go on.
    Submit { cpu_ns: Time, bios: Vec<Bio> },
    /// Sleep until every bio this task submitted has completed (go on at once if none is in flight).
    WaitBios,
    /// ... and every write in flight to these files, whoever submitted it (`filemap_fdatawait`).
    WaitFiles(Vec<u32>),
    /// Wake the journal thread to commit the running transaction, and sleep until it wakes this task. With
    /// the file of an AIOS fsync whose data writes are still in flight: the commit overlaps them.
    CommitAndWait(Option<u32>),
    /// Sleep for this long (a throttled writer's pause).
    Pause(Time),
    /// Sleep until woken (a kernel thread with nothing to do), or until the given time.
    Idle(Option<Time>),
    /// The call is over: its application request completes.
    Done,
}

impl FsStep {
    /// Submit `bios` with no CPU work before them.
    pub fn submit(bios: Vec<Bio>) -> FsStep {
        FsStep::Submit { cpu_ns: 0, bios }
    }
}
