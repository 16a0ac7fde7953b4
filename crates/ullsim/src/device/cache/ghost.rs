//! Ghost caches (FlashShare §4.2, Fig. 9): tag-only copies of one partition, each reading ahead by a
//! different number of pages, fed the partition's accesses. They hold no data and cost no flash work;
//! each epoch the partition adopts the read-ahead of the ghost that missed least.
//!
//! Each ghost has the partition's sets and, at any time, its ways (`set_ways`, as the split moves), LRU
//! within a set. The ghosts sample the address space, as cache simulators do (spatial sampling: SHARDS,
//! Waldspurger et al., FAST'15): in a partition of more than `SAMPLED_SETS` sets, only the pages of one
//! region of `REGION_PAGES` in `sample` (chosen by a hash of the region) are looked up, read ahead and
//! counted, in ghosts of `sets / sample` sets. Regions larger than a read-ahead keep a stream's locality
//! whole, and the smaller ghosts keep the contention of the whole, so the sampled misses estimate the
//! whole's miss ratio and rank the ghosts as it would, at a fraction of the work (a 128-page read-ahead
//! per miss in five ghosts would otherwise cost more than the rest of the simulator). Memory is fixed at
//! construction: ghosts x sampled sets x (ways - 1) four-byte tags (a partition never has more than all
//! ways but one).

use crate::util::set_assoc::{move_to_front, set_index};

/// Marks an empty way. Logical pages fit in 32 bits (the geometry check keeps physical pages below 2^32),
/// so a page at or past this is never cached (a read-ahead past the drive's end).
const EMPTY: u32 = u32::MAX;

/// Sets the ghosts simulate at most: enough that an epoch's accesses give each ghost thousands of samples.
const SAMPLED_SETS: u64 = 1024;
/// Pages of a sampling region: more than the default largest read-ahead (128), so that a stream and what
/// it reads ahead are mostly in one region.
const REGION_PAGES: u64 = 256;
/// Decorrelates the regions' hash from the sets' (both are multiplicative).
const REGION_SALT: u64 = 0x5bd1_e995;

pub struct GhostCaches {
    /// Sets of each ghost: the partition's, divided by `sample`.
    sets: u64,
    /// One region in `sample` is simulated (1: every page).
    sample: u64,
    /// Tag slots per set (the most ways a partition can have).
    slots: usize,
    /// Ways the partition has now: the ghosts look at the first `ways` slots of a set (most recent first).
    ways: usize,
    /// Pages each ghost reads ahead of a read that missed, ascending.
    granularities: Vec<u32>,
    /// Ghost-major: `granularities.len() x sets x slots` tags.
    tags: Vec<u32>,
    /// Page misses of each ghost this epoch (of the sampled sets).
    misses: Vec<u64>,
    /// Pages of the sampled sets looked up this epoch.
    lookups: u64,
    /// Scratch: the sampled pages of a read and of its largest read-ahead, with their sets.
    sampled: Vec<(u64, usize)>,
}

impl GhostCaches {
    /// Ghosts of a partition of `sets` sets and at most `slots` ways, one per read-ahead size.
    pub fn new(sets: u64, slots: usize, ways: usize, granularities: &[u32]) -> Self {
        let n = granularities.len();
        let sample = sets.div_ceil(SAMPLED_SETS).max(1);
        let sets = sets.div_ceil(sample);
        GhostCaches {
            sets,
            sample,
            slots,
            ways: ways.min(slots),
            granularities: granularities.to_vec(),
            tags: vec![EMPTY; n * sets as usize * slots],
            misses: vec![0; n],
            lookups: 0,
            sampled: Vec::new(),
        }
    }

    /// The partition now has `ways` ways.
    pub fn set_ways(&mut self, ways: usize) {
        self.ways = ways.min(self.slots);
    }

    /// The ghosts' set of `lpa`, if its region is sampled.
    fn sampled_set(&self, lpa: u64) -> Option<usize> {
        if lpa >= EMPTY as u64 || self.sets == 0 {
            return None;
        }
        self.region_sampled(lpa / REGION_PAGES).then(|| set_index(lpa, self.sets) as usize)
    }

    /// Is region `region` (of `REGION_PAGES` pages) in the sample?
    fn region_sampled(&self, region: u64) -> bool {
        self.sample == 1 || set_index(region ^ REGION_SALT, self.sample) == 0
    }

    /// Put the sampled pages of `first..end` in `out` with their sets, in order: region by region, so a
    /// region outside the sample costs one hash, not one per page.
    fn sampled_pages(&self, first: u64, end: u64, out: &mut Vec<(u64, usize)>) {
        let end = end.min(EMPTY as u64);
        if self.sets == 0 {
            return;
        }
        let mut start = first;
        while start < end {
            let region = start / REGION_PAGES;
            let region_end = (region + 1).saturating_mul(REGION_PAGES).min(end);
            if self.region_sampled(region) {
                out.extend((start..region_end).map(|lpa| (lpa, set_index(lpa, self.sets) as usize)));
            }
            start = region_end;
        }
    }

    /// Ways of set `set` in `ghost`, most recent first (only the partition's current ways).
    fn set_of(&mut self, ghost: usize, set: usize) -> &mut [u32] {
        let base = (ghost * self.sets as usize + set) * self.slots;
        &mut self.tags[base..base + self.ways]
    }

    /// Is `lpa` (of sampled set `set`) in `ghost`? A hit makes it the most recent of its set; a miss puts it
    /// there (`insert`).
    fn touch(&mut self, ghost: usize, set: usize, lpa: u64, insert: bool) -> bool {
        if self.ways == 0 {
            return false;
        }
        let lpa = lpa as u32;
        let ways = self.set_of(ghost, set);
        match ways.iter().position(|&t| t == lpa) {
            Some(way) => {
                move_to_front(ways, way);
                true
            }
            None => {
                if insert {
                    // The least recent tag (or an empty way, which sits at the end) falls out.
                    let last = ways.len() - 1;
                    ways[last] = lpa;
                    move_to_front(ways, last);
                }
                false
            }
        }
    }

    /// A read looked up pages `first..end`: each ghost counts its misses, and reads ahead if it missed (the
    /// sampled pages only).
    pub fn read(&mut self, first: u64, end: u64) {
        let largest = self.granularities.iter().copied().max().unwrap_or(0) as u64;
        let mut sampled = std::mem::take(&mut self.sampled);
        sampled.clear();
        self.sampled_pages(first, end.saturating_add(largest), &mut sampled);
        let demand = sampled.partition_point(|&(lpa, _)| lpa < end);
        self.lookups += demand as u64;
        for ghost in 0..self.granularities.len() {
            let mut missed = 0;
            for &(lpa, set) in &sampled[..demand] {
                missed += !self.touch(ghost, set, lpa, true) as u64;
            }
            self.misses[ghost] += missed;
            // A ghost reads ahead if the read missed in it (a read outside the sample is not simulated).
            if missed > 0 {
                let ahead_end = end.saturating_add(self.granularities[ghost] as u64);
                for &(lpa, set) in sampled[demand..].iter().take_while(|&&(lpa, _)| lpa < ahead_end) {
                    if !self.contains(ghost, set, lpa) {
                        self.touch(ghost, set, lpa, true);
                    }
                }
            }
        }
        self.sampled = sampled;
    }

    fn contains(&mut self, ghost: usize, set: usize, lpa: u64) -> bool {
        self.ways > 0 && self.set_of(ghost, set).contains(&(lpa as u32))
    }

    /// A page was written: it joins every ghost, as it joins the partition once programmed.
    pub fn written(&mut self, lpa: u64) {
        let Some(set) = self.sampled_set(lpa) else { return };
        for ghost in 0..self.granularities.len() {
            self.touch(ghost, set, lpa, true);
        }
    }

    /// Page misses of each ghost so far this epoch.
    #[cfg(test)]
    pub fn misses(&self) -> &[u64] {
        &self.misses
    }

    /// The read-ahead of the ghost with the fewest misses this epoch, or `None` if nothing was read this
    /// epoch. Ghosts whose misses are within sampling noise of the fewest (two standard deviations of a
    /// Poisson count, 2 sqrt(m)) tie, and a tie goes to the smallest read-ahead: the same hits for less
    /// flash work. Without this, reads with no reuse (every ghost missing almost always) would adopt
    /// whichever size the noise favoured, often the largest, and read it ahead of every miss.
    pub fn best(&self) -> Option<u32> {
        if self.lookups == 0 {
            return None;
        }
        let fewest = *self.misses.iter().min()?;
        let noise = 2.0 * (fewest as f64).sqrt();
        (0..self.misses.len())
            .filter(|&g| self.misses[g] as f64 <= fewest as f64 + noise)
            .map(|g| self.granularities[g])
            .min()
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

    /// `reads` one-page reads of `pages` pages drawn at random, 1,000 pages apart (no neighbours).
    fn scattered_reads(g: &mut GhostCaches, reads: u32, pages: u64) {
        let mut x: u64 = 12345;
        for _ in 0..reads {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let page = (x >> 33) % pages * 1000;
            g.read(page, page + 1);
        }
    }

    #[test]
    fn a_random_stream_picks_the_smallest_read_ahead() {
        // Random reads of a working set that fits (384 pages in 512 tags) but has no neighbours in it: every
        // page read ahead is useless and pushes a useful one out. (Uniform reads over a region larger than
        // the cache would not do: there every page is as likely as the next, so reading ahead fills the
        // cold cache sooner and costs nothing in misses.)
        let mut g = GhostCaches::new(64, 15, 8, &SIZES);
        scattered_reads(&mut g, 20_000, 384);
        assert_eq!(g.best(), Some(0), "misses {:?}", g.misses());
        assert!(g.misses().windows(2).all(|m| m[0] < m[1]), "more read-ahead, more misses: {:?}", g.misses());
    }

    #[test]
    fn large_partitions_are_sampled_and_still_rank_the_ghosts() {
        // 49,152 sets (znand-ull's cache) are sampled down to 1,024; a sequential stream still picks the
        // largest read-ahead and a scattered one the smallest.
        let mut g = GhostCaches::new(49_152, 15, 8, &SIZES);
        assert_eq!((g.sample, g.sets), (48, 1024));
        assert_eq!(g.tags.len(), SIZES.len() * 1024 * 15);
        for first in (0..400_000).step_by(2) {
            g.read(first, first + 2);
        }
        assert_eq!(g.best(), Some(128), "misses {:?}", g.misses());
        let mut g = GhostCaches::new(49_152, 15, 8, &SIZES);
        scattered_reads(&mut g, 400_000, 300_000);
        assert_eq!(g.best(), Some(0), "misses {:?}", g.misses());
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
        assert_eq!((g.misses(), g.best()), (&[0u64][..], None), "a page past 32 bits is never looked up");
    }

    #[test]
    fn region_by_region_sampling_takes_the_pages_one_by_one_sampling_does() {
        for sets in [1, 64, 49_152] {
            let mut sampled = 0;
            let g = GhostCaches::new(sets, 15, 8, &SIZES);
            for (first, end) in [
                (0, 1),
                (255, 257),
                (1_000, 1_300),
                (70_000, 71_000),
                (3, 40_000),
                (EMPTY as u64 - 300, EMPTY as u64 + 9),
            ] {
                let mut by_region = Vec::new();
                g.sampled_pages(first, end, &mut by_region);
                let by_page: Vec<(u64, usize)> =
                    (first..end).filter_map(|lpa| Some((lpa, g.sampled_set(lpa)?))).collect();
                assert_eq!(by_region, by_page, "{sets} sets, pages {first}..{end}");
                sampled += by_page.len();
            }
            assert!(sampled > 0, "{sets} sets: some pages are sampled");
        }
    }
}
