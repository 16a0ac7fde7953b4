//! read() and write() through the page cache (`direct = 0`).
//!
//! - write: enter, the file system's write path with its journal handle and the file's `i_pages` lock
//!   (`host/fs/locks.rs`: on many cores their lines' transfers, and a sleep if the handle starts while a
//!   commit holds the transaction locked), copy the pages in (they become dirty); if dirty pages
//!   are past the background threshold wake the flusher, and past freerun pause the writer as
//!   `balance_dirty_pages` does; return. No device I/O.
//! - read: enter, look the pages up; copy what is cached; fetch the rest (and readahead) with reads, sleep
//!   until they complete, copy; return. The missing pages are allocated and put in the page cache before
//!   the reads go down.
//! - read with AIOS (`O_AIOS`; Lee et al., ATC'19, §4.1): the missing pages come from a per-core pool
//!   already mapped for DMA, the reads go down at once (as LBIO), and the page-cache insertion, the pool's
//!   refill (allocation and mapping) and the deferred unmapping of earlier reads run while the device
//!   works; then it sleeps until the reads complete, copies and returns.

use super::fs_step::FsStep;
use crate::engine::Time;
use crate::host::fs::FileSystem;

/// Where a buffered call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Start,
    /// The pages are copied (a read's or a write's); what is left is returning (a write may pause first).
    Copied,
    /// A write's throttling pause is decided (and taken, if any).
    Paused,
    /// An AIOS read's misses are submitted; then the CPU work it overlaps with them.
    Overlapping,
    /// A read's misses are submitted (and an AIOS read's overlapped work done); then it waits for them.
    Fetching,
    /// A read's misses are in the cache; then it copies.
    Fetched,
}

/// A buffered read or write of `count` pages of `file` from page `first`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Buffered {
    pub write: bool,
    pub file: u32,
    pub first: u64,
    pub count: u64,
    /// The file is open with `O_AIOS`.
    pub aios: bool,
    pub phase: Phase,
    /// A read's misses: pages fetched (readahead included) and the bios they took.
    pub fetched_pages: u64,
    pub fetched_bios: u64,
    /// The call's time in the page cache and in the file system's own path before its reads went down (all
    /// of it for a call with no device I/O), and its copy to the user after them: the request's
    /// `page_cache_ns`, `file_system_ns` and `page_cache_return_ns`.
    pub page_cache_ns: Time,
    pub file_system_ns: Time,
    pub page_cache_return_ns: Time,
}

/// The CPU costs a buffered call pays.
#[derive(Debug, Clone, Copy)]
pub struct BufferedCosts {
    /// Kernel entry.
    pub entry_ns: Time,
    /// The file system's own path (ext4's write_begin/write_end or read_iter).
    pub fs_ns: Time,
    /// Copying one page between the user buffer and the page cache.
    pub page_copy_ns: Time,
    /// Allocating a page and inserting it into the page cache.
    pub page_alloc_ns: Time,
    /// The IOMMU's mapping and unmapping of one command's buffer (0 without an IOMMU).
    pub iommu_ns: Time,
}

/// What a buffered call's program needs from the host besides the file system.
pub struct Context {
    pub now: Time,
    /// The caller's core (the shared locks' lines move to it).
    pub core: u32,
    pub costs: BufferedCosts,
    /// Writeback bandwidth estimate, pages per second, and tasks dirtying pages.
    pub writeback_pages_per_s: f64,
    pub dirtiers: u32,
}

impl BufferedCosts {
    /// Kernel entry and the file system's path: what every call pays first.
    pub fn enter_ns(&self) -> Time {
        self.entry_ns + self.fs_ns
    }
}

impl Buffered {
    /// A buffered read (`write` false) or write of `count` pages of `file` from page `first`.
    pub fn new(write: bool, file: u32, first: u64, count: u64, aios: bool) -> Buffered {
        Buffered {
            write,
            file,
            first,
            count,
            aios,
            phase: Phase::Start,
            fetched_pages: 0,
            fetched_bios: 0,
            page_cache_ns: 0,
            file_system_ns: 0,
            page_cache_return_ns: 0,
        }
    }

    /// Kernel entry, the file system's path and `page_cache_ns` of page-cache work, as one step's CPU time
    /// (the two last counted as the call's).
    fn enter(&mut self, cx: &Context, page_cache_ns: Time) -> Time {
        self.file_system_ns += cx.costs.fs_ns;
        self.page_cache_ns += page_cache_ns;
        cx.costs.enter_ns() + page_cache_ns
    }

    /// The next step; `wake_flusher` is set when the flusher should start background writeback.
    pub fn next(&mut self, fs: &mut FileSystem, cx: &Context, wake_flusher: &mut bool) -> FsStep {
        match (self.write, self.phase) {
            (true, Phase::Start) => {
                if let Some(until) = fs.locks.locked_until(cx.core, cx.now) {
                    // ext4_dirty_inode's handle finds the running transaction T_LOCKED: it sleeps in
                    // wait_transaction_locked until the commit switches it, and tries again.
                    let wait = until - cx.now;
                    fs.counters.locked_handle_waits += 1;
                    fs.counters.locked_handle_wait_ns += wait;
                    self.file_system_ns += wait;
                    return FsStep::Pause(wait);
                }
                self.phase = Phase::Copied;
                let handle = fs.locks.start_and_stop_handle(cx.core, cx.now);
                let dirty = fs.locks.i_pages(self.file, cx.core, cx.now + handle);
                fs.counters.lock_wait_ns += handle + dirty;
                fs.write(self.file, self.first, self.count, true, cx.now);
                self.file_system_ns += handle;
                FsStep::Work(self.enter(cx, self.count * cx.costs.page_copy_ns + dirty) + handle)
            }
            (true, Phase::Copied) => {
                let dirty = fs.cache.dirty_pages();
                *wake_flusher = dirty > fs.policy.background_pages;
                let pause = fs.policy.writer_pause_ns(dirty, self.count, cx.writeback_pages_per_s, cx.dirtiers);
                self.phase = Phase::Paused;
                fs.counters.throttled_ns += pause;
                // balance_dirty_pages: the page cache's time, though the writer sleeps through it.
                self.page_cache_ns += pause;
                if pause > 0 {
                    FsStep::Pause(pause)
                } else {
                    FsStep::Done
                }
            }
            (true, _) => FsStep::Done,
            (false, Phase::Start) => {
                let plan = fs.cache.read(self.file, self.first, self.count, fs.file_pages(self.file));
                let fetched: u64 = plan.fetch.iter().map(|r| r.1).sum();
                fs.counters.read_hit_pages += plan.hit_pages;
                fs.counters.read_miss_pages += fetched;
                fs.counters.readahead_pages += plan.readahead_pages;
                if plan.fetch.is_empty() {
                    self.phase = Phase::Copied;
                    return FsStep::Work(self.enter(cx, self.count * cx.costs.page_copy_ns));
                }
                let mut bios = Vec::new();
                for (first, count) in plan.fetch {
                    fs.read_bios(self.file, first, count, &mut bios);
                }
                self.fetched_pages = fetched;
                self.fetched_bios = bios.len() as u64;
                if self.aios {
                    // The pool's pages are mapped already: the reads go down first.
                    self.phase = Phase::Overlapping;
                    return FsStep::Submit { cpu_ns: self.enter(cx, 0), bios };
                }
                self.phase = Phase::Fetching;
                FsStep::Submit { cpu_ns: self.enter(cx, fetched * cx.costs.page_alloc_ns), bios }
            }
            (false, Phase::Overlapping) => {
                // While the device works: the pages into the page cache, the pool refilled and mapped, and
                // the deferred unmapping of as many commands done.
                self.phase = Phase::Fetching;
                FsStep::Work(self.fetched_pages * cx.costs.page_alloc_ns + self.fetched_bios * cx.costs.iommu_ns)
            }
            (false, Phase::Fetching) => {
                self.phase = Phase::Fetched;
                FsStep::WaitBios
            }
            (false, Phase::Fetched) => {
                self.phase = Phase::Copied;
                self.page_cache_return_ns = self.count * cx.costs.page_copy_ns;
                FsStep::Work(self.page_cache_return_ns)
            }
            (false, Phase::Copied | Phase::Paused) => FsStep::Done,
        }
    }
}
