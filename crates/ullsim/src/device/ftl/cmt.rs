//! Cached mapping table (DFTL-style): map entries cached in controller DRAM. A read whose entry is not
//! cached first reads the translation page holding it. The table is set-associative (8 ways, LRU within a
//! set), as firmware tables are, which keeps a lookup to one cache line of the host running the simulator.
//! Dirty-entry write-back is not modeled.

use super::super::flash::Geometry;

/// Ways per set.
const WAYS: usize = 8;
/// Marks an empty way.
const EMPTY: u64 = u64::MAX;

/// The set of `lpa` among `sets`: a multiplicative hash spreads consecutive pages over sets, like a firmware
/// hash table, and multiply-shift maps it onto [0, sets) without a division.
fn set_index(lpa: u64, sets: u64) -> u64 {
    ((lpa.wrapping_mul(0x9e37_79b9_7f4a_7c15) as u128 * sets as u128) >> 64) as u64
}

pub struct MappingCache {
    ideal: bool,
    /// `sets * WAYS` cached logical page numbers; within a set, way 0 is the most recently used.
    ways: Vec<u64>,
    sets: u64,
    entries_per_translation_page: u64,
    entry_bytes: u32,
    pub hits: u64,
    pub misses: u64,
}

impl MappingCache {
    /// `ideal`: the whole map is in DRAM and every lookup hits.
    pub fn new(ideal: bool, capacity_bytes: u64, entry_bytes: u32, page_bytes: u64) -> Self {
        let entries = if ideal { 0 } else { capacity_bytes / entry_bytes as u64 };
        let sets = entries / WAYS as u64;
        MappingCache {
            ideal,
            ways: vec![EMPTY; (sets as usize) * WAYS],
            sets,
            entries_per_translation_page: (page_bytes / entry_bytes as u64).max(1),
            entry_bytes,
            hits: 0,
            misses: 0,
        }
    }

    fn set_of(&mut self, lpa: u64) -> &mut [u64] {
        let start = set_index(lpa, self.sets) as usize * WAYS;
        &mut self.ways[start..start + WAYS]
    }

    /// Look up `lpa`'s entry; true on a hit (which makes it the most recent of its set).
    pub fn lookup(&mut self, lpa: u64) -> bool {
        let hit = self.ideal || {
            if self.sets == 0 {
                false
            } else {
                let set = self.set_of(lpa);
                match set.iter().position(|&k| k == lpa) {
                    Some(way) => {
                        set[..=way].rotate_right(1);
                        true
                    }
                    None => false,
                }
            }
        };
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
        if self.ideal || self.sets == 0 {
            return;
        }
        let set = self.set_of(lpa);
        let way = set.iter().position(|&k| k == lpa).unwrap_or(WAYS - 1);
        set[..=way].rotate_right(1);
        set[0] = lpa;
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
    fn hits_after_fill_and_evicts_lru_within_a_set() {
        let mut c = MappingCache::new(false, 8 * 8 * 4, 8, 4096); // 4 sets of 8 ways
        assert!(!c.lookup(5));
        c.fill(5);
        assert!(c.lookup(5));
        // Fill one set beyond its ways: the least recently used entry leaves.
        let same_set: Vec<u64> = (0..10_000u64).filter(|&l| set_index(l, 4) == set_index(5, 4)).take(9).collect();
        for &l in &same_set {
            c.fill(l);
        }
        assert!(!c.lookup(same_set[0]) || same_set[0] == 5);
        assert!(c.lookup(same_set[8]));
        assert_eq!(c.translation_page(4096 / 8 * 3 + 1), 3);
    }

    #[test]
    fn ideal_always_hits() {
        let mut c = MappingCache::new(true, 0, 8, 4096);
        assert!(c.lookup(123));
        assert_eq!((c.hits, c.misses), (1, 0));
    }
}
