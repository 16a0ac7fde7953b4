//! A set-associative cache of u64 keys with LRU order inside each set, the way controller DRAM caches and
//! mapping tables are organized. Every operation touches one set (one or two cache lines of the machine
//! running the simulator), so it stays cheap at millions of lookups a second.

/// Marks an empty way.
const EMPTY: u64 = u64::MAX;

#[derive(Debug, Clone)]
pub struct SetAssoc {
    ways: usize,
    sets: u64,
    /// `sets * ways` keys; within a set, way 0 is the most recently used.
    keys: Vec<u64>,
    len: u64,
}

/// The set of `key` among `sets`: a multiplicative hash spreads consecutive keys over sets, and
/// multiply-shift maps it onto [0, sets) without a division.
pub(crate) fn set_index(key: u64, sets: u64) -> u64 {
    ((key.wrapping_mul(0x9e37_79b9_7f4a_7c15) as u128 * sets as u128) >> 64) as u64
}

/// Make way `way` of `ways` (most recent first) the most recent: the ways before it move down one. A loop of
/// moves, where `rotate_right` takes a general path that costs more than the few ways of a set.
#[inline]
pub(crate) fn move_to_front<T: Copy>(ways: &mut [T], way: usize) {
    let key = ways[way];
    for w in (1..=way).rev() {
        ways[w] = ways[w - 1];
    }
    ways[0] = key;
}

impl SetAssoc {
    /// A cache of `capacity` entries in sets of `ways` (fewer ways if the capacity is smaller).
    pub fn new(capacity: u64, ways: usize) -> Self {
        let ways = ways.min(capacity as usize).max(1);
        let sets = capacity / ways as u64;
        SetAssoc { ways, sets, keys: vec![EMPTY; (sets as usize) * ways], len: 0 }
    }

    /// Entries it can hold.
    pub fn capacity(&self) -> u64 {
        self.sets * self.ways as u64
    }

    /// Entries it holds.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// First way of `key`'s set.
    fn base(&self, key: u64) -> usize {
        set_index(key, self.sets) as usize * self.ways
    }

    fn find(&self, base: usize, key: u64) -> Option<usize> {
        self.keys[base..base + self.ways].iter().position(|&k| k == key)
    }

    /// Make way `way` of the set at `base` its most recent.
    #[inline]
    fn make_most_recent(&mut self, base: usize, way: usize) {
        move_to_front(&mut self.keys[base..base + self.ways], way);
    }

    /// Is `key` cached? A hit makes it the most recent of its set.
    pub fn touch(&mut self, key: u64) -> bool {
        if self.sets == 0 {
            return false;
        }
        let base = self.base(key);
        match self.find(base, key) {
            Some(way) => {
                self.make_most_recent(base, way);
                true
            }
            None => false,
        }
    }

    /// Is `key` cached (no change to the LRU order)?
    pub fn contains(&self, key: u64) -> bool {
        self.sets > 0 && self.find(self.base(key), key).is_some()
    }

    /// Make `key` the most recent entry of its set, evicting the set's least recent entry if it is full.
    /// With `grow = false` the total may not grow: a key not cached replaces the least recent entry of its
    /// set, and goes nowhere if the set is empty.
    pub fn insert(&mut self, key: u64, grow: bool) {
        if self.sets == 0 {
            return;
        }
        let base = self.base(key);
        let way = match self.find(base, key) {
            Some(way) => way,
            None => {
                // Empty ways sit at the least recent end of a set.
                let occupied = self.keys[base..base + self.ways].iter().take_while(|&&k| k != EMPTY).count();
                let way = if grow {
                    if occupied < self.ways {
                        self.len += 1;
                    }
                    (occupied).min(self.ways - 1)
                } else if occupied > 0 {
                    occupied - 1
                } else {
                    return;
                };
                self.keys[base + way] = key;
                way
            }
        };
        self.make_most_recent(base, way);
    }

    /// Evict the least recent entry of `key`'s set, if the set holds any (to make DRAM room near `key`).
    pub fn evict_near(&mut self, key: u64) {
        if self.sets == 0 {
            return;
        }
        let base = self.base(key);
        let occupied = self.keys[base..base + self.ways].iter().take_while(|&&k| k != EMPTY).count();
        if occupied > 0 {
            self.keys[base + occupied - 1] = EMPTY;
            self.len -= 1;
        }
    }

    /// Drop `key` if cached.
    pub fn remove(&mut self, key: u64) {
        if self.sets == 0 {
            return;
        }
        let base = self.base(key);
        if let Some(way) = self.find(base, key) {
            // Move it to the end of the set and empty it (empty ways stay at the least recent end).
            self.keys[base + way..base + self.ways].rotate_left(1);
            self.keys[base + self.ways - 1] = EMPTY;
            self.len -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same_set_keys(c: &SetAssoc, n: usize) -> Vec<u64> {
        let base = c.base(0);
        (0..100_000u64).filter(|&k| c.base(k) == base).take(n).collect()
    }

    #[test]
    fn lru_within_a_set() {
        let mut c = SetAssoc::new(16, 4); // 4 sets of 4 ways
        let k = same_set_keys(&c, 5);
        for &key in &k[..4] {
            c.insert(key, true);
        }
        assert!(c.touch(k[0]));
        c.insert(k[4], true); // evicts k[1], the least recent
        assert!(!c.contains(k[1]));
        assert!(c.contains(k[0]) && c.contains(k[4]));
        assert_eq!(c.len(), 4);
        c.remove(k[0]);
        assert!(!c.contains(k[0]));
        assert_eq!(c.len(), 3);
        c.insert(k[1], false); // replaces the least recent of k[2], k[3], k[4]: k[2]
        assert!(c.contains(k[1]) && !c.contains(k[2]), "without growth a key replaces");
        assert_eq!(c.len(), 3);
        c.insert(k[2], true);
        assert!(c.contains(k[1]) && c.contains(k[2]) && c.contains(k[3]) && c.contains(k[4]));
        assert_eq!(c.len(), 4);
        let mut empty = SetAssoc::new(16, 4);
        empty.insert(1, false);
        assert!(empty.is_empty(), "an empty set takes nothing without growth");
    }

    #[test]
    fn zero_capacity_holds_nothing() {
        let mut c = SetAssoc::new(0, 8);
        c.insert(1, true);
        assert!(!c.touch(1) && !c.contains(1));
    }
}
