//! fsync() and fdatasync() on ext4 in `data=ordered` mode (ext4_sync_file; FastResponse, ICS'22, Fig. 3):
//!
//! 1. write the file's dirty pages and wait for them (T_D1);
//! 2. if the running transaction holds the file's metadata (fdatasync: only metadata that matters for
//!    reading the data back, i.e. an allocation), wake the JBD2 thread to commit it and sleep until it is
//!    done (the commit's T_D2, T_JD and T_JC, and T_Sched: the two hand-offs between the tasks);
//! 3. otherwise send a PREFLUSH so the drive's volatile cache holds nothing of the file;
//! 4. return.
//!
//! AIOS's fsync (`O_AIOS`; Lee et al., ATC'19, §4.3) does not wait in step 1: it submits the data and, if a
//! commit is needed, hands it to the journal thread at once, which overlaps the journal writes with the
//! data (`host/fs/jbd2.rs`). T_D1 is then the submission alone.

use super::fs_step::FsStep;
use crate::engine::Time;
use crate::host::fs::journal::FsyncPlan;
use crate::host::fs::FileSystem;

/// Where an fsync is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Start,
    WritingData,
    /// AIOS: the data is submitted, not waited for; commit at once.
    Handing,
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
    /// The file is open with `O_AIOS`.
    pub aios: bool,
    pub phase: Phase,
    /// AIOS: the journal thread committed with the data still in flight; nothing is left once it is done.
    pub committed_async: bool,
    /// A file-level commit was written (its time is the call's T_JC; T_D2, T_JD and T_Sched are gone).
    pub committed_itself: bool,
    /// When the data writes were submitted and how long until they completed (T_D1).
    pub d1_started: Time,
    pub d1_ns: Time,
    /// When a file-level commit was submitted.
    pub commit_started: Time,
}

impl Fsync {
    pub fn new(flow: u32, file: u32, datasync: bool, file_level: bool, aios: bool) -> Fsync {
        Fsync {
            flow,
            file,
            datasync,
            file_level,
            aios,
            phase: Phase::Start,
            committed_async: false,
            committed_itself: false,
            d1_started: 0,
            d1_ns: 0,
            commit_started: 0,
        }
    }

    /// Whether the running transaction holds what the call must make durable (fdatasync: only metadata
    /// that matters for reading the data back, i.e. an allocation).
    fn needs_commit(&self, fs: &FileSystem) -> bool {
        if self.datasync {
            fs.journal.allocated(self.file)
        } else {
            fs.journal.has_file(self.file)
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
                self.phase = if self.aios { Phase::Handing } else { Phase::DataDone };
                self.d1_started = now;
                let mut bios = Vec::new();
                for (first, count) in fs.dirty_ranges(self.file) {
                    fs.data_bios(self.file, first, count, false, &mut bios);
                }
                if bios.is_empty() {
                    return FsStep::Work(0);
                }
                FsStep::submit(bios)
            }
            Phase::Handing => {
                self.d1_ns = now - self.d1_started;
                if self.needs_commit(fs) && !self.file_level {
                    self.committed_async = true;
                    self.phase = Phase::DataDone;
                    return FsStep::CommitAndWait(Some(self.file));
                }
                // No commit to overlap (or fjournaling's own): as ext4 does, from the wait on.
                self.phase = Phase::Committing;
                FsStep::WaitFiles(vec![self.file])
            }
            Phase::DataDone => {
                // Wait for the file's writes, the flusher's too (at once when none is in flight); T_D1 is
                // measured when it returns.
                self.phase = Phase::Committing;
                FsStep::WaitFiles(vec![self.file])
            }
            Phase::Committing if self.committed_async => {
                // Released by the commit, which waited for the data too.
                self.phase = Phase::Done;
                FsStep::Done
            }
            Phase::Committing => {
                self.d1_ns = now - self.d1_started;
                let mut bios = Vec::new();
                if self.needs_commit(fs) {
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
                            return FsStep::submit(bios);
                        }
                        // A full commit by the journal thread (ext4's path, and fjournaling's fallbacks).
                        FsyncPlan::FullCommit { .. } | FsyncPlan::FlushOnly => {
                            self.phase = Phase::Done;
                            return FsStep::CommitAndWait(None);
                        }
                    }
                }
                self.phase = Phase::Flushing;
                fs.preflush(self.flow, &mut bios);
                if bios.is_empty() {
                    self.phase = Phase::Done;
                    return FsStep::Work(0);
                }
                FsStep::submit(bios)
            }
            Phase::Flushing => {
                self.phase = Phase::Done;
                FsStep::WaitBios
            }
            Phase::Done => FsStep::Done,
        }
    }
}
