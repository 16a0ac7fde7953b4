//! Ghost caches (FlashShare §4.2, Fig. 9): tag-only copies of one partition, each reading ahead by a
//! different number of pages, fed the partition's accesses. They hold no data and cost no flash work;
//! each epoch the partition adopts the read-ahead of the ghost that missed least.
//!
//! Each ghost has the partition's sets and, at any time, its ways (`set_ways`, as the split moves), LRU
//! within a set. Memory is fixed at construction: ghosts x sets x (ways - 1) four-byte tags (a partition
//! never has more than all ways but one).

use crate::util::set_assoc::set_index;

/// Marks an empty way. Logical pages fit in 32 bits (the geometry check keeps physical pages below 2^32),
/// so a page at or past this is never cached (a read-ahead past the drive's end).
const EMPTY: u32 = u32::MAX;

pub struct GhostCaches {
    sets: u64,
    /// Tag slots per set (the most ways a partition can have).
    slots: usize,
    /// Ways the partition has now: the ghosts look at the first `ways` slots of a set (most recent first).
    ways: usize,
    /// Pages each ghost reads ahead of a read that missed, ascending.
    granularities: Vec<u32>,
    /// Ghost-major: `granularities.len() x sets x slots` tags.
    tags: Vec<u32>,
    /// Page misses of each ghost this epoch.
    misses: Vec<u64>,
    /// Pages looked up this epoch.
    lookups: u64,
}

impl GhostCaches {
    /// Ghosts of a partition of `sets` sets and at most `slots` ways, one per read-ahead size.
    pub fn new(sets: u64, slots: usize, ways: usize, granularities: &[u32]) -> Self {
        let n = granularities.len();
        GhostCaches {
            sets,
            slots,
            ways: ways.min(slots),
            granularities: granularities.to_vec(),
            tags: vec![EMPTY; n * sets as usize * slots],
            misses: vec![0; n],
            lookups: 0,
        }
    }

    /// The partition now has `ways` ways.
    pub fn set_ways(&mut self, ways: usize) {
        self.ways = ways.min(self.slots);
    }

    /// Ways of `lpa`'s set in `ghost`, most recent first (only the partition's current ways).
    fn set_of(&mut self, ghost: usize, lpa: u32) -> &mut [u32] {
        let set = set_index(lpa as u64, self.sets) as usize;
        let base = (ghost * self.sets as usize + set) * self.slots;
        &mut self.tags[base..base + self.ways]
    }

    /// Is `lpa` in `ghost`? A hit makes it the most recent of its set; a miss puts it there (`insert`).
    fn touch(&mut self, ghost: usize, lpa: u64, insert: bool) -> bool {
        if lpa >= EMPTY as u64 || self.sets == 0 || self.ways == 0 {
            return false;
        }
        let lpa = lpa as u32;
        let set = self.set_of(ghost, lpa);
        match set.iter().position(|&t| t == lpa) {
            Some(way) => {
                set[..=way].rotate_right(1);
                true
            }
            None => {
                if insert {
                    // The least recent tag (or an empty way, which sits at the end) falls out.
                    set.rotate_right(1);
                    set[0] = lpa;
                }
                false
            }
        }
    }

    /// A read looked up pages `first..end`: each ghost counts its misses, and reads ahead if it missed.
    pub fn read(&mut self, first: u64, end: u64) {
        self.lookups += end - first;
        for ghost in 0..self.granularities.len() {
            let mut missed = 0;
            for lpa in first..end {
                missed += !self.touch(ghost, lpa, true) as u64;
            }
            self.misses[ghost] += missed;
            if missed > 0 {
                let ahead = self.granularities[ghost] as u64;
                for lpa in end..end.saturating_add(ahead) {
                    if !self.contains(ghost, lpa) {
                        self.touch(ghost, lpa, true);
                    }
                }
            }
        }
    }

    fn contains(&mut self, ghost: usize, lpa: u64) -> bool {
        lpa < EMPTY as u64 && self.sets > 0 && self.ways > 0 && self.set_of(ghost, lpa as u32).contains(&(lpa as u32))
    }

    /// A page was written: it joins every ghost, as it joins the partition once programmed.
    pub fn written(&mut self, lpa: u64) {
        for ghost in 0..self.granularities.len() {
            self.touch(ghost, lpa, true);
        }
    }

    /// Page misses of each ghost so far this epoch.
    #[cfg(test)]
    pub fn misses(&self) -> &[u64] {
        &self.misses
    }

    /// The read-ahead of the ghost with the fewest misses this epoch (the smallest on a tie: the same
    /// hits for less flash work), or `None` if nothing was read this epoch.
    pub fn best(&self) -> Option<u32> {
        if self.lookups == 0 {
            return None;
        }
        let best = (0..self.misses.len()).min_by_key(|&g| (self.misses[g], self.granularities[g]))?;
        Some(self.granularities[best])
    }

    /// Start a new epoch: the tags stay, the counts restart.
    pub fn new_epoch(&mut self) {
        self.misses.fill(0);
        self.lookups = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZES: [u32; 5] = [0, 4, 16, 64, 128];

    #[test]
    fn a_sequential_stream_picks_the_largest_read_ahead() {
        let mut g = GhostCaches::new(64, 15, 8, &SIZES);
        for first in (0..20_000).step_by(2) {
            g.read(first, first + 2);
        }
        assert_eq!(g.best(), Some(128), "misses {:?}", g.misses());
        assert!(g.misses().windows(2).all(|m| m[0] > m[1]), "more read-ahead, fewer misses: {:?}", g.misses());
    }

    #[test]
    fn a_random_stream_picks_the_smallest_read_ahead() {
        // Random reads of a working set that fits (384 pages in 512 tags) but has no neighbours in it: every
        // page read ahead is useless and pushes a useful one out. (Uniform reads over a region larger than
        // the cache would not do: there every page is as likely as the next, so reading ahead fills the
        // cold cache sooner and costs nothing in misses.)
        let mut g = GhostCaches::new(64, 15, 8, &SIZES);
        let mut x: u64 = 12345;
        for _ in 0..20_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let page = (x >> 33) % 384 * 1000;
            g.read(page, page + 1);
        }
        assert_eq!(g.best(), Some(0), "misses {:?}", g.misses());
        assert!(g.misses().windows(2).all(|m| m[0] < m[1]), "more read-ahead, more misses: {:?}", g.misses());
    }

    #[test]
    fn the_shape_follows_the_partition_and_epochs_restart_the_counts() {
        let mut g = GhostCaches::new(1, 15, 2, &[0]);
        g.read(1, 4); // three pages into two ways: page 1 falls out
        assert_eq!(g.misses(), &[3]);
        g.read(1, 2);
        assert_eq!(g.misses(), &[4], "two ways hold the last two pages only");
        g.set_ways(4);
        g.read(5, 6);
        g.read(1, 2);
        assert_eq!(g.misses(), &[5], "with four ways page 1 stays");
        g.new_epoch();
        assert_eq!((g.misses(), g.best()), (&[0u64][..], None));
        g.read(u32::MAX as u64, u32::MAX as u64 + 1);
        assert_eq!(g.misses(), &[1], "a page past 32 bits is never cached");
    }
}
