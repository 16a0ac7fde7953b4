//! What the file system did in a run: its counters (commits, journal blocks, writeback, throttling, the
//! shared locks' waits), reported in the results' `host.fs`.

use serde::Serialize;

/// The file system's cumulative counts (reported over the window as `host.fs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FsCounters {
    /// Pages buffered reads found in the page cache, and pages they read from the device (readahead
    /// included, also counted apart).
    pub read_hit_pages: u64,
    pub read_miss_pages: u64,
    pub readahead_pages: u64,
    /// Pages buffered writes dirtied (a page dirty already is not counted again).
    pub dirtied_pages: u64,
    /// Pages the flusher wrote back (asynchronous), and pages fsync and the journal's ordered mode wrote.
    pub writeback_pages: u64,
    pub sync_data_pages: u64,
    /// Journal commits, and the blocks they wrote to the log (descriptors, metadata, commit blocks; and
    /// fjournaling's header, extent and commit blocks).
    pub journal_commits: u64,
    /// fsyncs fjournaling committed by themselves (`host.fs.fjournaling`); the others fell back to a full
    /// commit.
    pub file_level_commits: u64,
    pub journal_blocks: u64,
    /// Time writers were paused by dirty throttling, summed over writers, ns.
    pub throttled_ns: u64,
    /// AIOS: bios sent as LBIO commands, and bios that found their core's LBIO ring full and took the
    /// block layer instead.
    pub lbio_commands: u64,
    pub lbio_ring_full: u64,
    /// CPU time tasks spent on the shared locks and lines ([`locks`]): transfers and spinning, ns.
    pub lock_wait_ns: u64,
    /// Writes whose journal handle found the running transaction locked by a commit, and the time they
    /// slept until it was switched, ns.
    pub locked_handle_waits: u64,
    pub locked_handle_wait_ns: u64,
    /// The page cache's work: pages (or runs of pages) it visited. Not reported (it measures the simulator,
    /// not the simulated host): the test that no path slows with the dirty backlog reads it.
    #[serde(skip)]
    pub page_cache_steps: u64,
}

impl FsCounters {
    /// The counts since `before`.
    pub fn since(&self, before: &FsCounters) -> FsCounters {
        FsCounters {
            read_hit_pages: self.read_hit_pages - before.read_hit_pages,
            read_miss_pages: self.read_miss_pages - before.read_miss_pages,
            readahead_pages: self.readahead_pages - before.readahead_pages,
            dirtied_pages: self.dirtied_pages - before.dirtied_pages,
            writeback_pages: self.writeback_pages - before.writeback_pages,
            sync_data_pages: self.sync_data_pages - before.sync_data_pages,
            journal_commits: self.journal_commits - before.journal_commits,
            file_level_commits: self.file_level_commits - before.file_level_commits,
            journal_blocks: self.journal_blocks - before.journal_blocks,
            throttled_ns: self.throttled_ns - before.throttled_ns,
            lbio_commands: self.lbio_commands - before.lbio_commands,
            lbio_ring_full: self.lbio_ring_full - before.lbio_ring_full,
            lock_wait_ns: self.lock_wait_ns - before.lock_wait_ns,
            locked_handle_waits: self.locked_handle_waits - before.locked_handle_waits,
            locked_handle_wait_ns: self.locked_handle_wait_ns - before.locked_handle_wait_ns,
            page_cache_steps: self.page_cache_steps - before.page_cache_steps,
        }
    }
}
