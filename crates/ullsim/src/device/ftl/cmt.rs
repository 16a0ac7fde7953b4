//! Cached mapping table (DFTL-style): map entries cached in controller DRAM. A read whose entry is not
//! cached first reads the translation page holding it. The table is set-associative (8 ways, LRU within a
//! set), as firmware tables are, which keeps a lookup to one cache line of the host running the simulator.
//! Dirty-entry write-back is not modeled.

use super::super::flash::Geometry;
use crate::util::set_assoc::SetAssoc;

/// Ways per set.
const WAYS: usize = 8;

pub struct MappingCache {
    ideal: bool,
    entries: SetAssoc,
    entries_per_translation_page: u64,
    entry_bytes: u32,
    pub hits: u64,
    pub misses: u64,
}

impl MappingCache {
    /// `ideal`: the whole map is in DRAM and every lookup hits.
    pub fn new(ideal: bool, capacity_bytes: u64, entry_bytes: u32, page_bytes: u64) -> Self {
        let capacity = if ideal { 0 } else { capacity_bytes / entry_bytes as u64 };
        MappingCache {
            ideal,
            entries: SetAssoc::new(capacity, WAYS),
            entries_per_translation_page: (page_bytes / entry_bytes as u64).max(1),
            entry_bytes,
            hits: 0,
            misses: 0,
        }
    }

    /// Look up `lpa`'s entry; true on a hit (which makes it the most recent of its set).
    pub fn lookup(&mut self, lpa: u64) -> bool {
        let hit = self.ideal || self.entries.touch(lpa);
        if hit {
            self.hits += 1;
        } else {
            self.misses += 1;
        }
        hit
    }

    /// Cache `lpa`'s entry (after its translation page was read, or because a write just set it); the
    /// least recently used entry of its set makes room.
    pub fn fill(&mut self, lpa: u64) {
        if !self.ideal {
            self.entries.insert(lpa, true);
        }
    }

    /// Bytes a translation read moves over the channel: only the entry needed (a partial-page read).
    pub fn entry_bytes(&self) -> u32 {
        self.entry_bytes
    }

    /// The translation page holding `lpa`'s entry.
    pub fn translation_page(&self, lpa: u64) -> u64 {
        lpa / self.entries_per_translation_page
    }

    /// Where a translation page is stored: spread over dies and planes by a hash. Translation pages are not
    /// allocated in the data area (their space and rewrites are not modeled).
    pub fn translation_page_location(&self, tpage: u64, geometry: &Geometry) -> (u32, u32) {
        let h = tpage.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 17;
        ((h % geometry.dies() as u64) as u32, (tpage % geometry.planes_per_die as u64) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misses_then_hits_after_fill() {
        let mut c = MappingCache::new(false, 8 * 64, 8, 4096); // 64 entries
        assert!(!c.lookup(5));
        c.fill(5);
        assert!(c.lookup(5));
        assert_eq!((c.hits, c.misses), (1, 1));
        assert_eq!(c.translation_page(4096 / 8 * 3 + 1), 3);
    }

    #[test]
    fn ideal_always_hits() {
        let mut c = MappingCache::new(true, 0, 8, 4096);
        assert!(c.lookup(123));
        assert_eq!((c.hits, c.misses), (1, 0));
    }
}
