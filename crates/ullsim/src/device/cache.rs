//! The controller's DRAM data cache: a write-back write buffer plus an LRU read cache, at page granularity.
//!
//! A write is complete once its pages are in the buffer; each buffered page is destaged to flash at once
//! (in the background) and stays in DRAM, pinned, until its program finishes; then it is an ordinary clean
//! page. When buffered-but-not-yet-programmed pages fill the cache, new writes wait. Reads that find all
//! their pages in DRAM are served at DRAM speed; read misses fill the cache when `cache_reads` is on.
//! Not modeled: coalescing of overwrites still in the buffer (each host write is programmed), partial-page
//! read-modify-write, and DRAM bandwidth contention.

use rustc_hash::FxHashMap;

use crate::config::device::CacheConfig;
use crate::util::lru::LruSet;

pub struct DataCache {
    enabled: bool,
    cache_reads: bool,
    capacity_pages: usize,
    clean: LruSet,
    /// Buffered pages with programs outstanding, and how many.
    dirty: FxHashMap<u64, u32>,
    pub read_page_lookups: u64,
    pub read_page_hits: u64,
}

impl DataCache {
    pub fn new(cfg: &CacheConfig, page_bytes: u64) -> Self {
        let capacity_pages = if cfg.enabled { (cfg.capacity_bytes.0 / page_bytes) as usize } else { 0 };
        DataCache {
            enabled: cfg.enabled && capacity_pages > 0,
            cache_reads: cfg.cache_reads,
            capacity_pages,
            clean: LruSet::new(capacity_pages),
            dirty: FxHashMap::default(),
            read_page_lookups: 0,
            read_page_hits: 0,
        }
    }

    /// Whether writes are buffered at all.
    pub fn buffers_writes(&self) -> bool {
        self.enabled
    }

    pub fn capacity_pages(&self) -> usize {
        self.capacity_pages
    }

    /// Is `lpa` in DRAM? Counts toward the hit rate; a clean hit refreshes its LRU position.
    pub fn read_lookup(&mut self, lpa: u64) -> bool {
        self.read_page_lookups += 1;
        let hit = self.enabled && (self.dirty.contains_key(&lpa) || self.clean.touch(lpa));
        if hit {
            self.read_page_hits += 1;
        }
        hit
    }

    fn make_room(&mut self) -> bool {
        while self.clean.len() + self.dirty.len() >= self.capacity_pages {
            if self.clean.pop_lru().is_none() {
                return false;
            }
        }
        true
    }

    /// Keep a page just read from flash.
    pub fn fill_after_read(&mut self, lpa: u64) {
        if self.enabled && self.cache_reads && !self.dirty.contains_key(&lpa) && self.make_room() {
            self.clean.insert(lpa);
        }
    }

    /// Can the pages `lpas` all be buffered now?
    pub fn can_buffer(&self, lpas: impl Iterator<Item = u64>) -> bool {
        let new_dirty = lpas.filter(|lpa| !self.dirty.contains_key(lpa)).count();
        self.dirty.len() + new_dirty <= self.capacity_pages
    }

    /// Buffer one page of a host write (call only after `can_buffer`).
    pub fn buffer_write(&mut self, lpa: u64) {
        self.clean.remove(lpa);
        if let Some(n) = self.dirty.get_mut(&lpa) {
            *n += 1;
            return;
        }
        let room = self.make_room();
        debug_assert!(room, "buffer_write without room");
        self.dirty.insert(lpa, 1);
    }

    /// One program of a buffered page finished; the page becomes clean when none remain.
    pub fn destaged(&mut self, lpa: u64) {
        let n = self.dirty.get_mut(&lpa).expect("destage of a page that is not buffered");
        *n -= 1;
        if *n == 0 {
            self.dirty.remove(&lpa);
            if self.cache_reads {
                self.clean.insert(lpa);
            }
        }
    }

    /// Buffered pages still waiting for their program.
    pub fn dirty_pages(&self) -> usize {
        self.dirty.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::units::{Bytes, Nanos};

    fn cache(pages: u64) -> DataCache {
        let cfg = CacheConfig {
            enabled: true,
            capacity_bytes: Bytes(pages * 4096),
            dram_access_ns: Nanos::from_ns(100),
            cache_reads: true,
        };
        DataCache::new(&cfg, 4096)
    }

    #[test]
    fn writes_wait_only_for_dirty_space() {
        let mut c = cache(4);
        assert!(c.can_buffer(0..4));
        for lpa in 0..4 {
            c.buffer_write(lpa);
        }
        assert!(!c.can_buffer(4..5));
        assert!(c.can_buffer(0..2), "rewriting buffered pages needs no room");
        c.destaged(0);
        assert!(c.can_buffer(4..5), "clean pages can be evicted");
        assert!(c.read_lookup(0) && c.read_lookup(3));
        assert!(!c.read_lookup(9));
        assert_eq!((c.read_page_hits, c.read_page_lookups), (2, 3));
    }

    #[test]
    fn read_fills_evict_lru_clean_pages_only() {
        let mut c = cache(2);
        c.buffer_write(7);
        c.fill_after_read(1);
        c.fill_after_read(2); // evicts 1, never the dirty 7
        assert!(!c.read_lookup(1));
        assert!(c.read_lookup(2) && c.read_lookup(7));
    }
}
