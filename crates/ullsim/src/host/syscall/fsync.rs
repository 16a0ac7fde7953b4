//! fsync() and fdatasync() on ext4 in `data=ordered` mode (ext4_sync_file; FastResponse, ICS'22, Fig. 3):
//!
//! 1. write the file's dirty pages and wait for them (T_D1);
//! 2. if the running transaction holds the file's metadata (fdatasync: only metadata that matters for
//!    reading the data back, i.e. an allocation), wake the JBD2 thread to commit it and sleep until it is
//!    done (the commit's T_D2, T_JD and T_JC, and T_Sched: the two hand-offs between the tasks);
//! 3. otherwise send a PREFLUSH so the drive's volatile cache holds nothing of the file;
//! 4. return.

use super::fs_step::FsStep;
use crate::engine::Time;
use crate::host::fs::journal::FsyncPlan;
use crate::host::fs::FileSystem;

/// Where an fsync is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Start,
    WritingData,
    DataDone,
    Committing,
    Flushing,
    Done,
}

/// An fsync (or, with `datasync`, an fdatasync) of `file` by a task of `flow`; `file_level`: FastResponse's
/// fjournaling commits it (a critical task with `host.fs.fjournaling`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fsync {
    pub flow: u32,
    pub file: u32,
    pub datasync: bool,
    pub file_level: bool,
    pub phase: Phase,
    /// A file-level commit was written (its time is the call's T_JC; T_D2, T_JD and T_Sched are gone).
    pub committed_itself: bool,
    /// When the data writes were submitted and how long until they completed (T_D1).
    pub d1_started: Time,
    pub d1_ns: Time,
    /// When a file-level commit was submitted.
    pub commit_started: Time,
}

impl Fsync {
    pub fn new(flow: u32, file: u32, datasync: bool, file_level: bool) -> Fsync {
        Fsync {
            flow,
            file,
            datasync,
            file_level,
            phase: Phase::Start,
            committed_itself: false,
            d1_started: 0,
            d1_ns: 0,
            commit_started: 0,
        }
    }

    /// The next step at `now`; `enter_ns` is the entry and the file system's path.
    pub fn next(&mut self, fs: &mut FileSystem, now: Time, enter_ns: Time) -> FsStep {
        match self.phase {
            Phase::Start => {
                self.phase = Phase::WritingData;
                FsStep::Work(enter_ns)
            }
            Phase::WritingData => {
                self.phase = Phase::DataDone;
                self.d1_started = now;
                let mut bios = Vec::new();
                for (first, count) in fs.dirty_ranges(self.file) {
                    fs.data_bios(self.file, first, count, false, &mut bios);
                }
                if bios.is_empty() {
                    return FsStep::Work(0);
                }
                FsStep::Submit(bios)
            }
            Phase::DataDone => {
                // Wait for the file's writes, the flusher's too (at once when none is in flight); T_D1 is
                // measured when it returns.
                self.phase = Phase::Committing;
                FsStep::WaitFiles(vec![self.file])
            }
            Phase::Committing => {
                self.d1_ns = now - self.d1_started;
                let needs_commit =
                    if self.datasync { fs.journal.allocated(self.file) } else { fs.journal.has_file(self.file) };
                let mut bios = Vec::new();
                if needs_commit {
                    let meta = fs.meta(self.file);
                    match fs.journal.fsync(&meta, self.file_level) {
                        // fjournaling: in one plug, the header and extent blocks, then the commit block
                        // with PREFLUSH|FUA, written by the caller itself; no journal thread.
                        FsyncPlan::FileLevel { header_blocks, extent_blocks, .. } => {
                            self.phase = Phase::Flushing;
                            self.committed_itself = true;
                            self.commit_started = now;
                            fs.counters.file_level_commits += 1;
                            fs.preflush(self.flow, &mut bios);
                            fs.file_journal_bios(self.flow, header_blocks + extent_blocks, &mut bios);
                            return FsStep::Submit(bios);
                        }
                        // A full commit by the journal thread (ext4's path, and fjournaling's fallbacks).
                        FsyncPlan::FullCommit { .. } | FsyncPlan::FlushOnly => {
                            self.phase = Phase::Done;
                            return FsStep::CommitAndWait;
                        }
                    }
                }
                self.phase = Phase::Flushing;
                fs.preflush(self.flow, &mut bios);
                if bios.is_empty() {
                    self.phase = Phase::Done;
                    return FsStep::Work(0);
                }
                FsStep::Submit(bios)
            }
            Phase::Flushing => {
                self.phase = Phase::Done;
                FsStep::WaitBios
            }
            Phase::Done => FsStep::Done,
        }
    }
}
