//! The controller's DRAM data cache: a write-back write buffer plus an LRU read cache, at page granularity.
//!
//! A write is complete once its pages are in the buffer; each buffered page is destaged to flash at once
//! (in the background) and stays in DRAM until its program finishes; then it joins the read cache. Every
//! pending program holds a page of buffer space, so when programs-in-waiting fill the cache, new writes
//! wait: the buffer bounds the work queued for flash. The read cache is set-associative (16 ways, LRU within
//! a set), as controller caches are, and uses the DRAM the write buffer leaves free. Reads that find all
//! their pages in DRAM are served at DRAM speed; read misses fill the cache when `cache_reads` is on.
//! Not modeled: coalescing of overwrites still in the buffer (each host write is programmed), partial-page
//! read-modify-write, and DRAM bandwidth contention.
//!
//! The write buffer is one pool (`shared`) or split equally among the run's flows (`per-flow`, MQSim's
//! EQUAL_PARTITIONING): then a flow's pending programs are bounded by its own part, so a heavy writer fills
//! only its part and other flows' writes still complete at DRAM speed. The read cache is shared either way.
//!
//! `destage_limit_pages_per_plane` (MQSim's back-pressure depth) bounds each partition's pending programs
//! further, whatever the buffer's size: writes then wait in front of the cache as soon as that much data is
//! on its way to flash.

use rustc_hash::FxHashMap;

use crate::config::device::{BufferSharing, CacheConfig};
use crate::util::set_assoc::SetAssoc;

/// Ways per set of the read cache.
const WAYS: usize = 16;

pub struct DataCache {
    enabled: bool,
    cache_reads: bool,
    capacity_pages: usize,
    /// Pages held for reading, set-associative with LRU inside a set.
    clean: SetAssoc,
    /// Buffered pages with programs outstanding, and how many: a pool, so a write never waits for a
    /// particular set.
    dirty: FxHashMap<u64, u32>,
    /// Programs outstanding (the sum over `dirty`): each holds a page of buffer space.
    pending_programs: usize,
    /// Programs outstanding per write-buffer partition (one partition when shared, one per flow when split).
    pending_by_partition: Vec<usize>,
    /// Pages of buffer space each partition may hold for programs outstanding.
    partition_pages: usize,
    /// Most programs outstanding at once so far.
    max_pending_programs: usize,
    pub read_page_lookups: u64,
    pub read_page_hits: u64,
}

impl DataCache {
    /// A cache for a run of `flows` flows (the number of write-buffer partitions when split per flow) on a
    /// drive of `planes` planes (`destage_limit_pages_per_plane` is per plane).
    pub fn new(cfg: &CacheConfig, page_bytes: u64, planes: u32, flows: usize) -> Self {
        let capacity_pages = if cfg.enabled { (cfg.capacity_bytes.0 / page_bytes) as usize } else { 0 };
        let partitions = match cfg.write_buffer_sharing {
            BufferSharing::Shared => 1,
            BufferSharing::PerFlow => flows.max(1),
        };
        // MQSim's back-pressure limit: a partition's data on its way to flash, whatever the buffer's size.
        let destage_limit = match cfg.destage_limit_pages_per_plane {
            0 => usize::MAX,
            per_plane => per_plane as usize * planes as usize,
        };
        DataCache {
            enabled: cfg.enabled && capacity_pages > 0,
            cache_reads: cfg.cache_reads,
            capacity_pages,
            clean: SetAssoc::new(capacity_pages as u64, WAYS),
            dirty: FxHashMap::default(),
            pending_programs: 0,
            pending_by_partition: vec![0; partitions],
            partition_pages: (capacity_pages / partitions).min(destage_limit),
            max_pending_programs: 0,
            read_page_lookups: 0,
            read_page_hits: 0,
        }
    }

    /// Whether writes are buffered at all.
    pub fn buffers_writes(&self) -> bool {
        self.enabled
    }

    /// The write-buffer partition a flow's writes use.
    pub fn partition(&self, flow: u32) -> usize {
        if self.pending_by_partition.len() == 1 {
            0
        } else {
            assert!((flow as usize) < self.pending_by_partition.len(), "flow {flow} has no write-buffer partition");
            flow as usize
        }
    }

    /// Write-buffer partitions (1 when shared).
    pub fn partitions(&self) -> usize {
        self.pending_by_partition.len()
    }

    /// Pages of buffer space one partition holds: a larger write is not buffered.
    pub fn partition_pages(&self) -> usize {
        self.partition_pages
    }

    /// Is `lpa` in DRAM? Counts toward the hit rate; a hit refreshes its LRU position.
    pub fn read_lookup(&mut self, lpa: u64) -> bool {
        self.read_page_lookups += 1;
        let hit = self.enabled && (self.clean.touch(lpa) || (!self.dirty.is_empty() && self.dirty.contains_key(&lpa)));
        if hit {
            self.read_page_hits += 1;
        }
        hit
    }

    /// Keep a clean page in the read cache, within the DRAM buffered writes leave free.
    fn keep(&mut self, lpa: u64) {
        let room = (self.clean.len() as usize + self.pending_programs) < self.capacity_pages;
        self.clean.insert(lpa, room);
    }

    /// Keep a page just read from flash.
    pub fn fill_after_read(&mut self, lpa: u64) {
        if self.enabled && self.cache_reads && !self.dirty.contains_key(&lpa) {
            self.keep(lpa);
        }
    }

    /// Can a write of `pages` pages be buffered in `partition` now? Every pending program holds a page of
    /// its partition's space.
    pub fn can_buffer(&self, partition: usize, pages: usize) -> bool {
        self.pending_by_partition[partition] + pages <= self.partition_pages
    }

    /// Buffer one page of a host write in `partition` (call only after `can_buffer`); its program is now
    /// pending.
    pub fn buffer_write(&mut self, lpa: u64, partition: usize) {
        self.clean.remove(lpa);
        *self.dirty.entry(lpa).or_insert(0) += 1;
        self.pending_programs += 1;
        self.max_pending_programs = self.max_pending_programs.max(self.pending_programs);
        self.pending_by_partition[partition] += 1;
        // The buffered page takes DRAM from the read cache: evict a clean page (from the same set, the
        // cheapest stand-in for the LRU one) while clean pages and pending programs exceed the capacity.
        if self.clean.len() as usize + self.pending_programs > self.capacity_pages {
            self.clean.evict_near(lpa);
        }
    }

    /// One program of a page buffered in `partition` finished; with none left the page becomes a clean
    /// cached page.
    pub fn destaged(&mut self, lpa: u64, partition: usize) {
        let n = self.dirty.get_mut(&lpa).expect("destage of a page that is not buffered");
        *n -= 1;
        self.pending_programs -= 1;
        self.pending_by_partition[partition] -= 1;
        if *n == 0 {
            self.dirty.remove(&lpa);
            if self.cache_reads {
                self.keep(lpa);
            }
        }
    }

    /// Most programs of buffered pages outstanding at once so far.
    pub fn max_pending_programs(&self) -> usize {
        self.max_pending_programs
    }

    /// Programs of buffered pages not finished yet.
    pub fn pending_programs(&self) -> usize {
        self.pending_programs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::units::{Bytes, Nanos};

    fn cache(pages: u64) -> DataCache {
        split_cache(pages, BufferSharing::Shared, 1)
    }

    fn split_cache(pages: u64, write_buffer_sharing: BufferSharing, flows: usize) -> DataCache {
        let cfg = CacheConfig {
            enabled: true,
            capacity_bytes: Bytes(pages * 4096),
            dram_access_ns: Nanos::from_ns(100),
            cache_reads: true,
            write_buffer_sharing,
            destage_limit_pages_per_plane: 0,
            power_loss_protection: false,
        };
        DataCache::new(&cfg, 4096, 1, flows)
    }

    #[test]
    fn pending_programs_bound_the_buffer() {
        let mut c = cache(64);
        assert!(c.can_buffer(0, 32));
        for lpa in 0..32 {
            c.buffer_write(lpa, 0);
            c.buffer_write(lpa, 0); // a rewrite: a second program
        }
        assert_eq!(c.pending_programs(), 64);
        assert!(!c.can_buffer(0, 1), "every pending program holds a page, rewrites too");
        c.destaged(0, 0);
        assert!(c.can_buffer(0, 1));
        assert!(c.read_lookup(5), "pages waiting for their program are read from DRAM");
        assert!(!c.read_lookup(1000));
        assert_eq!((c.read_page_hits, c.read_page_lookups), (1, 2));
    }

    #[test]
    fn reads_use_the_dram_writes_leave_free() {
        let mut c = cache(16); // one set of 16 ways
        for lpa in 0..16 {
            c.buffer_write(lpa, 0);
        }
        c.fill_after_read(100);
        assert!(!c.read_lookup(100), "no DRAM left for reads");
        c.destaged(3, 0);
        c.destaged(4, 0);
        assert!(c.read_lookup(3) && c.read_lookup(4), "programmed pages stay cached");
        c.fill_after_read(100); // DRAM is full: it replaces page 3, the least recently read clean page
        assert!(c.read_lookup(100) && !c.read_lookup(3) && c.read_lookup(4));
    }

    #[test]
    fn a_split_buffer_bounds_each_flow_by_its_own_part() {
        let mut c = split_cache(64, BufferSharing::PerFlow, 4);
        assert_eq!((c.partitions(), c.partition_pages()), (4, 16));
        let part = c.partition(2);
        for lpa in 0..16 {
            assert!(c.can_buffer(part, 1));
            c.buffer_write(lpa, part);
        }
        assert!(!c.can_buffer(part, 1), "flow 2's part is full");
        assert!(c.can_buffer(c.partition(0), 16), "flow 0's part is untouched");
        c.destaged(7, part);
        assert!(c.can_buffer(part, 1) && !c.can_buffer(part, 2));
        assert_eq!(c.pending_programs(), 15);

        let shared = split_cache(64, BufferSharing::Shared, 4);
        assert_eq!((shared.partitions(), shared.partition_pages(), shared.partition(3)), (1, 64, 0));
    }
}
