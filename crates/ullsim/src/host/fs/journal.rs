//! ext4's journal in `data=ordered` mode (JBD2) and FastResponse's file-level journal (fjournaling): what
//! each write puts in the running transaction, and what a commit or an fsync must write, in which order.
//!
//! It decides and counts; the file system turns the plans into bios, waits and the journal thread's work.
//! Facts (Linux fs/ext4, fs/jbd2; FastResponse, ICS'22 §2.1, §3.3 and its kernel code):
//! - one running compound transaction; a commit writes, in order: the data of every file in the
//!   transaction's ordered list (T_D2: ordered mode puts data on disk before the metadata that points to
//!   it), then descriptor blocks and the journaled metadata blocks (T_JD), waits, then the commit block with
//!   PREFLUSH+FUA (T_JC);
//! - every write dirties its inode (size, mtime): the inode table block, shared by 16 inodes of 256 bytes;
//!   a write that allocates blocks also dirties the block bitmap and the group descriptor of its group, and
//!   the file's extent block once its extents no longer fit the 4 slots in the inode;
//! - fjournaling: a critical task's fsync writes a header block (raw inode copies), the file's modified
//!   extent blocks and a commit block (PREFLUSH|FUA) into its own 2048-block area, with no wait for other
//!   files' data and no journal thread; it falls back to a full commit for a directory, for a file with an
//!   uncommitted hard link, before the first full commit, and when the area is full; every full commit
//!   resets the area.

use std::collections::BTreeSet;

/// A metadata block a write dirties.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MetadataBlock {
    /// The inode table block holding inode `inode / INODES_PER_BLOCK`.
    InodeTable(u64),
    /// The block bitmap of a block group.
    BlockBitmap(u64),
    /// The group descriptor block covering a block group.
    GroupDescriptor(u64),
    /// The extent tree block of a file (one per file here: trees deeper than one level are not modeled).
    Extent(u32),
}

/// 256-byte inodes in 4 KiB blocks (mke2fs's default inode size).
pub const INODES_PER_BLOCK: u64 = 16;
/// Block group descriptors per 4 KiB block (64-byte descriptors with the 64bit feature).
pub const DESCRIPTORS_PER_BLOCK: u64 = 64;
/// Extents an inode holds without an extent block (`i_block`: header plus four extents).
pub const EXTENTS_IN_INODE: u32 = 4;
/// Journal block tags per descriptor block (4 KiB, 16-byte tags with csum v3, 12-byte header).
pub const TAGS_PER_DESCRIPTOR: u64 = 254;
/// fjournaling's area, blocks (FastResponse's code).
pub const FILE_JOURNAL_BLOCKS: u64 = 2048;

/// What the journal knows of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileMeta {
    pub file: u32,
    pub inode: u64,
    pub is_dir: bool,
    /// Extents the file has: above [`EXTENTS_IN_INODE`] it has an extent block.
    pub extents: u32,
    /// A hard link to it was made and not committed yet.
    pub uncommitted_link: bool,
}

/// What one write did to the file system's metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteEffect {
    /// The block group it allocated in, if it allocated blocks.
    pub allocated_in_group: Option<u64>,
    /// It left dirty data pages (a buffered write); a direct write leaves none.
    pub dirty_data: bool,
}

/// A full commit by the journal thread, phase by phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitPlan {
    pub tid: u64,
    /// T_D2: files whose dirty data must reach the device first (ordered mode), in file order.
    pub ordered_files: Vec<u32>,
    /// T_JD: descriptor blocks, then the journaled metadata blocks, written to the log; then a wait.
    pub descriptor_blocks: u64,
    pub metadata_blocks: Vec<MetadataBlock>,
    /// T_JC: one commit block, written with PREFLUSH+FUA.
    pub commit_blocks: u64,
}

impl CommitPlan {
    /// Blocks written to the journal's log: descriptors, metadata and the commit block.
    pub fn log_blocks(&self) -> u64 {
        self.descriptor_blocks + self.metadata_blocks.len() as u64 + self.commit_blocks
    }
}

/// Why a critical fsync did not use fjournaling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallback {
    Directory,
    UncommittedHardLink,
    NoFullCommitYet,
    AreaFull,
}

/// What an fsync must do after writing and waiting for the file's own dirty data (T_D1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FsyncPlan {
    /// Nothing of the file is in the running transaction: flush the device's write cache only.
    FlushOnly,
    /// Hand the running transaction to the journal thread and wait for its commit.
    FullCommit { fallback: Option<Fallback> },
    /// fjournaling: in one plug, a header block, the file's modified extent blocks and a commit block
    /// (PREFLUSH|FUA), all by the fsync's own task.
    FileLevel { header_blocks: u64, extent_blocks: u64, commit_blocks: u64 },
}

/// The running transaction.
#[derive(Debug, Clone, Default)]
struct Transaction {
    tid: u64,
    ordered: BTreeSet<u32>,
    metadata: BTreeSet<MetadataBlock>,
    /// Files with any metadata in it.
    files: BTreeSet<u32>,
    /// Files with an extent block in it.
    extent_files: BTreeSet<u32>,
    allocated: BTreeSet<u32>,
}

/// ext4's journal and FastResponse's file-level journal.
#[derive(Debug, Clone, Default)]
pub struct Journal {
    running: Transaction,
    full_commits: u64,
    file_area_used: u64,
}

impl Journal {
    pub fn new() -> Journal {
        Journal::default()
    }

    /// Full commits so far.
    pub fn full_commits(&self) -> u64 {
        self.full_commits
    }

    /// Blocks of fjournaling's area in use.
    pub fn file_area_used(&self) -> u64 {
        self.file_area_used
    }

    /// The running transaction holds a block allocation of `file` (what fdatasync must commit).
    pub fn allocated(&self, file: u32) -> bool {
        self.running.allocated.contains(&file)
    }

    /// The running transaction holds anything.
    pub fn has_any_file(&self) -> bool {
        !self.running.files.is_empty()
    }

    /// The running transaction holds metadata of `file`.
    pub fn has_file(&self, file: u32) -> bool {
        self.running.files.contains(&file)
    }

    /// Record a write to `meta`'s file: its inode block always (size, mtime), and with an allocation the
    /// group's bitmap and descriptor and, past the inode's extent slots, the file's extent block.
    pub fn note_write(&mut self, meta: &FileMeta, effect: WriteEffect) {
        let t = &mut self.running;
        t.files.insert(meta.file);
        t.metadata.insert(MetadataBlock::InodeTable(meta.inode / INODES_PER_BLOCK));
        if let Some(group) = effect.allocated_in_group {
            t.allocated.insert(meta.file);
            t.metadata.insert(MetadataBlock::BlockBitmap(group));
            t.metadata.insert(MetadataBlock::GroupDescriptor(group / DESCRIPTORS_PER_BLOCK));
            if meta.extents > EXTENTS_IN_INODE {
                t.metadata.insert(MetadataBlock::Extent(meta.file));
                t.extent_files.insert(meta.file);
            }
        }
        if effect.dirty_data {
            t.ordered.insert(meta.file);
        }
    }

    /// Close the running transaction and plan its commit; a new transaction starts, and fjournaling's
    /// area is free again.
    pub fn commit(&mut self) -> CommitPlan {
        let t = std::mem::take(&mut self.running);
        self.running.tid = t.tid + 1;
        self.full_commits += 1;
        self.file_area_used = 0;
        let metadata_blocks: Vec<MetadataBlock> = t.metadata.into_iter().collect();
        CommitPlan {
            tid: t.tid,
            ordered_files: t.ordered.into_iter().collect(),
            descriptor_blocks: (metadata_blocks.len() as u64).div_ceil(TAGS_PER_DESCRIPTOR).max(1),
            metadata_blocks,
            commit_blocks: 1,
        }
    }

    /// What an fsync of `meta`'s file does next. `file_level`: the caller is critical and the stack has
    /// fjournaling. A file-level commit reserves its blocks in the area at once.
    pub fn fsync(&mut self, meta: &FileMeta, file_level: bool) -> FsyncPlan {
        if !self.has_file(meta.file) {
            return FsyncPlan::FlushOnly;
        }
        if !file_level {
            return FsyncPlan::FullCommit { fallback: None };
        }
        let extent_blocks = u64::from(self.running.extent_files.contains(&meta.file));
        let need = 1 + extent_blocks + 1;
        let fallback = if meta.is_dir {
            Some(Fallback::Directory)
        } else if meta.uncommitted_link {
            Some(Fallback::UncommittedHardLink)
        } else if self.full_commits == 0 {
            Some(Fallback::NoFullCommitYet)
        } else if self.file_area_used + need > FILE_JOURNAL_BLOCKS {
            Some(Fallback::AreaFull)
        } else {
            None
        };
        if fallback.is_some() {
            return FsyncPlan::FullCommit { fallback };
        }
        self.file_area_used += need;
        FsyncPlan::FileLevel { header_blocks: 1, extent_blocks, commit_blocks: 1 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(file: u32, inode: u64) -> FileMeta {
        FileMeta { file, inode, is_dir: false, extents: 1, uncommitted_link: false }
    }

    const BUFFERED_APPEND: WriteEffect = WriteEffect { allocated_in_group: Some(3), dirty_data: true };

    #[test]
    fn a_commit_writes_every_files_data_then_metadata_then_the_commit_block() {
        let mut j = Journal::new();
        let (wal, other, far) = (file(1, 17), file(2, 18), file(3, 400));
        j.note_write(&wal, BUFFERED_APPEND);
        j.note_write(&other, BUFFERED_APPEND);
        j.note_write(&far, WriteEffect { allocated_in_group: None, dirty_data: false });
        assert_eq!(j.fsync(&wal, false), FsyncPlan::FullCommit { fallback: None });
        let plan = j.commit();
        // T_D2: the other file's data too (the compound transaction); the direct writer has none.
        assert_eq!(plan.ordered_files, vec![1, 2]);
        // Inodes 17 and 18 share an inode table block; group 3's bitmap and descriptor; inode 400's block.
        assert_eq!(
            plan.metadata_blocks,
            vec![
                MetadataBlock::InodeTable(1),
                MetadataBlock::InodeTable(25),
                MetadataBlock::BlockBitmap(3),
                MetadataBlock::GroupDescriptor(0),
            ]
        );
        assert_eq!((plan.descriptor_blocks, plan.commit_blocks, plan.log_blocks()), (1, 1, 6));
        // The next transaction starts empty: an fsync with nothing new only flushes.
        assert_eq!(j.fsync(&wal, false), FsyncPlan::FlushOnly);
        assert_eq!(j.commit().tid, plan.tid + 1);
    }

    #[test]
    fn many_metadata_blocks_need_more_descriptors_and_extent_blocks_appear_past_four_extents() {
        let mut j = Journal::new();
        for f in 0..300u32 {
            j.note_write(
                &file(f, u64::from(f) * INODES_PER_BLOCK),
                WriteEffect { allocated_in_group: None, dirty_data: false },
            );
        }
        assert_eq!(j.commit().descriptor_blocks, 2, "300 inode blocks need two descriptors of 254 tags");
        let fragmented = FileMeta { extents: 5, ..file(9, 9) };
        j.note_write(&fragmented, BUFFERED_APPEND);
        assert!(j.commit().metadata_blocks.contains(&MetadataBlock::Extent(9)));
    }

    #[test]
    fn fjournaling_commits_the_file_alone_and_falls_back_as_fastresponse_does() {
        let mut j = Journal::new();
        let wal = FileMeta { extents: 6, ..file(1, 5) };
        j.note_write(&wal, BUFFERED_APPEND);
        // Before any full commit: fall back.
        assert_eq!(j.fsync(&wal, true), FsyncPlan::FullCommit { fallback: Some(Fallback::NoFullCommitYet) });
        j.commit();
        j.note_write(&wal, BUFFERED_APPEND);
        assert_eq!(j.fsync(&wal, true), FsyncPlan::FileLevel { header_blocks: 1, extent_blocks: 1, commit_blocks: 1 });
        assert_eq!(j.file_area_used(), 3);
        for (meta, why) in [
            (FileMeta { is_dir: true, ..wal }, Fallback::Directory),
            (FileMeta { uncommitted_link: true, ..wal }, Fallback::UncommittedHardLink),
        ] {
            assert_eq!(j.fsync(&meta, true), FsyncPlan::FullCommit { fallback: Some(why) });
        }
        // Fill the area: with 3 of its 2048 blocks used, 681 more commits of 3 blocks fit (2046), then it falls
        // back; the full commit empties it.
        for _ in 0..681 {
            assert!(matches!(j.fsync(&wal, true), FsyncPlan::FileLevel { .. }));
        }
        assert_eq!(j.file_area_used(), 2046);
        assert_eq!(j.fsync(&wal, true), FsyncPlan::FullCommit { fallback: Some(Fallback::AreaFull) });
        j.commit();
        assert_eq!(j.file_area_used(), 0);
        // A file with no extent block writes two blocks.
        let small = file(2, 6);
        j.note_write(&small, BUFFERED_APPEND);
        assert_eq!(
            j.fsync(&small, true),
            FsyncPlan::FileLevel { header_blocks: 1, extent_blocks: 0, commit_blocks: 1 }
        );
    }
}
