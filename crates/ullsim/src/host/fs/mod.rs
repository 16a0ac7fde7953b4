//! The file-system layer above the block layer: ext4 in `data=ordered` mode with its page cache, writeback
//! and JBD2 journal, for flows that use files (`direct = 0`, `fsync`, `fdatasync`). Direct I/O without a
//! sync call still pays a flat `host.cpu.fs_submit_ns` and goes straight to the block layer.
//!
//! - [`page_cache`]: pages in memory, clean or dirty, LRU reclaim, readahead;
//! - [`writeback`]: when the flusher writes back and how long a writer is throttled;
//! - [`journal`]: what a write puts in the running transaction, what a commit or an fsync writes;
//! - [`FsCounters`] (`counters.rs`): what it did, for the results;
//! - [`locks`]: the journal's lines and the files' `i_pages` locks that the writers' cores share;
//! - [`FileSystem`] (here): the files of each flow, laid out on the device, and the bios the calls and
//!   kernel threads (`host/syscall/`, [`jbd2`], [`flusher`]) submit.

mod counters;
pub mod flusher;
pub mod jbd2;
pub mod journal;
pub mod locks;
pub mod page_cache;
pub mod writeback;

use crate::config::host::FsConfig;
use crate::config::scenario::FlowSpec;
use crate::engine::Time;
use crate::host::block::LineTransfer;
use crate::request::Op;
pub use counters::FsCounters;
use journal::{FileMeta, Journal, WriteEffect};
use locks::FsLocks;
use page_cache::{PageCache, PageCacheLimits};
use writeback::WritebackPolicy;

/// The page size (and ext4's block size).
pub const PAGE_BYTES: u64 = 4096;
/// Largest bio the file system builds (the block layer splits further at `max_sectors_kb`).
const MAX_BIO_PAGES: u64 = 256;
/// ext4's largest extent: 32,768 blocks (128 MiB).
const EXTENT_PAGES: u64 = 32_768;
/// Blocks per ext4 block group (32,768 4 KiB blocks: 128 MiB).
const GROUP_PAGES: u64 = 32_768;
/// The journal's size (mke2fs: 128 MiB for file systems up to 128 GiB, 1 GiB above; the model takes
/// 128 MiB), at the end of the device. Its blocks are written round the log.
const JOURNAL_PAGES: u64 = 32_768;
/// fjournaling's area, just before the journal.
const FILE_JOURNAL_PAGES: u64 = journal::FILE_JOURNAL_BLOCKS;

/// A bio the file system submits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bio {
    /// The flow whose file (or whose fsync) it serves: its queue set and the device's per-flow counts.
    pub flow: u32,
    pub op: Op,
    pub offset: u64,
    pub len: u32,
    pub fua: bool,
    /// Asynchronous writeback (not REQ_SYNC): the flusher's.
    pub writeback: bool,
    /// The file pages it carries, for the page cache when it completes (`u32::MAX`: journal blocks).
    pub file: u32,
    pub first_page: u64,
}

/// One file.
#[derive(Debug, Clone, Copy)]
struct File {
    flow: u32,
    /// Device byte offset of its first block (files are laid out contiguously, as ext4 places a file
    /// written or preallocated in one go).
    start: u64,
    pages: u64,
    /// Pages allocated so far: a write beyond allocates (an append); the file's size grows with it.
    allocated: u64,
    meta: FileMeta,
}

/// How a flow uses files.
#[derive(Debug, Clone, Copy)]
struct FlowFiles {
    buffered: bool,
    first_file: u32,
    files: u32,
    file_bytes: u64,
    region_start: u64,
}

/// The file system of the host.
pub struct FileSystem {
    pub cache: PageCache,
    pub policy: WritebackPolicy,
    pub journal: Journal,
    pub locks: FsLocks,
    files: Vec<File>,
    flows: Vec<Option<FlowFiles>>,
    /// Next block of the journal's log.
    log_head: u64,
    journal_start: u64,
    /// Whether the device has a volatile write cache (Linux sends PREFLUSH and FUA only then).
    volatile_cache: bool,
    pub counters: FsCounters,
}

impl FileSystem {
    /// Files for every flow that uses them; `capacity` is the device's logical size; `line` moves a cache
    /// line between cores.
    pub fn new(
        flows: &[FlowSpec],
        capacity: u64,
        cfg: &FsConfig,
        volatile_cache: bool,
        line: LineTransfer,
    ) -> FileSystem {
        let cache_pages = (cfg.memory_bytes.0 / PAGE_BYTES).max(1);
        let policy = WritebackPolicy {
            background_pages: cache_pages * u64::from(cfg.dirty_background_ratio) / 100,
            limit_pages: cache_pages * u64::from(cfg.dirty_ratio) / 100,
            expire_ns: u64::from(cfg.dirty_expire_centisecs) * 10_000_000,
            interval_ns: u64::from(cfg.dirty_writeback_centisecs) * 10_000_000,
            ..WritebackPolicy::linux_defaults(cache_pages)
        };
        let mut files = Vec::new();
        let mut flow_files = Vec::new();
        for (flow, spec) in flows.iter().enumerate() {
            if !spec.uses_files() {
                flow_files.push(None);
                continue;
            }
            let (region_start, region_len) = spec.region(capacity);
            let count = spec.nrfiles.unwrap_or(1).max(1);
            let file_bytes = spec.filesize.map_or(region_len / u64::from(count), |b| b.0) / PAGE_BYTES * PAGE_BYTES;
            let first_file = files.len() as u32;
            // Files a flow only writes start empty and grow (fio creates them; an application's output);
            // a flow that reads finds its files laid out before the run, as fio lays them out.
            let starts_full = !spec.writes_only();
            for i in 0..count {
                let pages = (file_bytes / PAGE_BYTES).max(1);
                let id = files.len() as u32;
                files.push(File {
                    flow: flow as u32,
                    start: region_start + u64::from(i) * file_bytes,
                    pages,
                    allocated: if starts_full { pages } else { 0 },
                    // Inodes of one flow's files are neighbours (created together), after the root's.
                    meta: FileMeta {
                        file: id,
                        inode: 12 + u64::from(id),
                        is_dir: false,
                        extents: pages.div_ceil(EXTENT_PAGES) as u32,
                        uncommitted_link: false,
                    },
                });
            }
            flow_files.push(Some(FlowFiles {
                buffered: !spec.is_direct(),
                first_file,
                files: count,
                file_bytes: file_bytes.max(PAGE_BYTES),
                region_start,
            }));
        }
        FileSystem {
            cache: PageCache::new(PageCacheLimits { capacity_pages: cache_pages, max_readahead_pages: 32 }),
            policy,
            journal: Journal::new(),
            locks: FsLocks::new(line),
            files,
            flows: flow_files,
            log_head: 0,
            journal_start: (capacity / PAGE_BYTES).saturating_sub(JOURNAL_PAGES) * PAGE_BYTES,
            volatile_cache,
            counters: FsCounters::default(),
        }
    }

    /// The flow reads and writes through the page cache.
    pub fn is_buffered(&self, flow: u32) -> bool {
        self.flows[flow as usize].is_some_and(|f| f.buffered)
    }

    /// The file and its pages that device bytes `[offset, offset + len)` of `flow`'s region fall in
    /// (cut at the file's end).
    pub fn locate(&self, flow: u32, offset: u64, len: u32) -> (u32, u64, u64) {
        let f = self.flows[flow as usize].expect("a flow that uses files");
        let rel = offset.saturating_sub(f.region_start);
        let index = (rel / f.file_bytes).min(u64::from(f.files) - 1) as u32;
        let file = f.first_file + index;
        let pages = self.files[file as usize].pages;
        let first = (rel - u64::from(index) * f.file_bytes) / PAGE_BYTES;
        let first = first.min(pages - 1);
        let count = u64::from(len).div_ceil(PAGE_BYTES).clamp(1, pages - first);
        (file, first, count)
    }

    /// Pages of `file`.
    pub fn file_pages(&self, file: u32) -> u64 {
        self.files[file as usize].pages
    }

    /// A write of `count` pages of `file` from `first` at `now`. Every
    /// write dirties the inode (size, mtime) in the running transaction. A buffered write only dirties pages:
    /// ext4's delayed allocation allocates their blocks when they are written back ([`FileSystem::data_bios`]).
    /// A direct write past the allocated size allocates at once.
    pub fn write(&mut self, file: u32, first: u64, count: u64, buffered: bool, now: Time) {
        let meta = self.files[file as usize].meta;
        self.journal.note_write(&meta, WriteEffect { allocated_in_group: None, dirty_data: false });
        if buffered {
            self.counters.dirtied_pages += self.cache.write(file, first, count, now);
        } else {
            self.allocate(file, first + count, false);
        }
    }

    /// `file`'s blocks up to page `end` are allocated (if they were not): the block bitmap and group
    /// descriptor join the running transaction, and with `ordered` data the file joins its ordered list
    /// (`data=ordered`: the commit writes and waits for the data before the metadata that points to it).
    fn allocate(&mut self, file: u32, end: u64, ordered: bool) {
        let f = &mut self.files[file as usize];
        if end <= f.allocated {
            return;
        }
        let group = (f.start / PAGE_BYTES + f.allocated) / GROUP_PAGES;
        f.allocated = end;
        let meta = f.meta;
        self.journal.note_write(&meta, WriteEffect { allocated_in_group: Some(group), dirty_data: ordered });
    }

    /// The file's journal facts.
    pub fn meta(&self, file: u32) -> FileMeta {
        self.files[file as usize].meta
    }

    /// Bios that write `file`'s dirty pages `[first, first + count)` back (for `writeback`: asynchronously).
    /// The pages are clean from now on (Linux's "under writeback"; a write meanwhile dirties them again), and
    /// blocks not allocated yet are allocated now (delayed allocation), their data ordered.
    pub fn data_bios(&mut self, file: u32, first: u64, count: u64, writeback: bool, out: &mut Vec<Bio>) {
        self.cache.mark_clean(file, first, count);
        self.allocate(file, first + count, true);
        if writeback {
            self.counters.writeback_pages += count;
        } else {
            self.counters.sync_data_pages += count;
        }
        self.page_bios(file, first, count, Op::Write, writeback, out);
    }

    /// Dirty page ranges of `file` whose blocks are allocated (what a commit's ordered-data phase writes).
    pub fn allocated_dirty_ranges(&self, file: u32) -> Vec<(u64, u64)> {
        self.cache.dirty_ranges_below(file, self.files[file as usize].allocated)
    }

    /// Bios that read `file`'s pages `[first, first + count)`.
    pub fn read_bios(&self, file: u32, first: u64, count: u64, out: &mut Vec<Bio>) {
        self.page_bios(file, first, count, Op::Read, false, out);
    }

    fn page_bios(&self, file: u32, first: u64, count: u64, op: Op, writeback: bool, out: &mut Vec<Bio>) {
        let f = &self.files[file as usize];
        let mut page = first;
        while page < first + count {
            let n = (first + count - page).min(MAX_BIO_PAGES);
            out.push(Bio {
                flow: f.flow,
                op,
                offset: f.start + page * PAGE_BYTES,
                len: (n * PAGE_BYTES) as u32,
                fua: false,
                writeback,
                file,
                first_page: page,
            });
            page += n;
        }
    }

    /// Every dirty page range of `file`, as (first page, count).
    pub fn dirty_ranges(&self, file: u32) -> Vec<(u64, u64)> {
        self.cache.dirty_ranges(file)
    }

    /// `blocks` journal blocks written at the log's head for `flow`, as one bio per contiguous run (with
    /// `fua`: the commit block).
    pub fn log_bios(&mut self, flow: u32, blocks: u64, fua: bool, out: &mut Vec<Bio>) {
        self.counters.journal_blocks += blocks;
        let mut left = blocks;
        while left > 0 {
            let run = left.min(JOURNAL_PAGES - self.log_head).min(MAX_BIO_PAGES);
            out.push(Bio {
                flow,
                op: Op::Write,
                offset: self.journal_start + self.log_head * PAGE_BYTES,
                len: (run * PAGE_BYTES) as u32,
                fua: fua && self.volatile_cache,
                writeback: false,
                file: u32::MAX,
                first_page: 0,
            });
            self.log_head = (self.log_head + run) % JOURNAL_PAGES;
            left -= run;
        }
    }

    /// FastResponse's file-level commit for `flow`: `blocks` header and extent blocks, then the commit block
    /// with FUA, written to the fjournaling area where the last file-level commit ended (the area restarts
    /// after each full commit; `journal.rs` decides when it is full).
    pub fn file_journal_bios(&mut self, flow: u32, blocks: u64, out: &mut Vec<Bio>) {
        let used = self.journal.file_area_used();
        let area_start = self.journal_start.saturating_sub(FILE_JOURNAL_PAGES * PAGE_BYTES);
        // `journal.fsync` already counted these blocks: they end at `used`.
        let first = used.saturating_sub(blocks + 1);
        self.counters.journal_blocks += blocks + 1;
        for (i, fua) in [(first, false), (first + blocks, true)] {
            let n = if fua { 1 } else { blocks };
            if n == 0 {
                continue;
            }
            out.push(Bio {
                flow,
                op: Op::Write,
                offset: area_start + i * PAGE_BYTES,
                len: (n * PAGE_BYTES) as u32,
                fua: fua && self.volatile_cache,
                writeback: false,
                file: u32::MAX,
                first_page: 0,
            });
        }
    }

    /// A PREFLUSH before a commit block, when the device has a volatile cache to flush.
    pub fn preflush(&self, flow: u32, out: &mut Vec<Bio>) {
        if self.volatile_cache {
            out.push(Bio {
                flow,
                op: Op::Flush,
                offset: 0,
                len: 0,
                fua: false,
                writeback: false,
                file: u32::MAX,
                first_page: 0,
            });
        }
    }
}
