//! FlashShare's read cache (OSDI'18 §4.2, Figs. 8 and 9): the DRAM is split into two partitions with the
//! same sets and different numbers of ways, one for latency-critical reads and one for the rest; each epoch
//! the ways are re-divided in proportion to the two classes' accesses in the epoch just ended, and each
//! partition reads ahead by the size its best ghost cache found (`ghost.rs`).
//!
//! Ways `0..critical_ways` of every set belong to the critical partition, the others to the normal one. A
//! page belongs to the class that filled it: a class finds only its own pages, fills only its own ways
//! (the least recent line of them, an empty one first), and a page of one class may sit in a way the split
//! has handed to the other. Such a page stays readable by the class that filled it ("read-only", the
//! paper's words) until the new owner fills that line; its old owner cannot write into it any more.
//!
//! `uniform` is the same cache with one partition for both classes (the paper's uni-no, uni-128 and uni-dyn
//! of Fig. 18, by the read-ahead sizes given): every page is every class's, the ways are never re-divided,
//! and one set of ghosts picks the read-ahead for all reads.

use super::ghost::GhostCaches;
use super::{PolicyState, ReadCachePolicy, CLASSES};
use crate::config::device::CacheConfig;
use crate::engine::Time;
use crate::util::set_assoc::set_index;

/// The most samples of the way split kept: when full, every other one is dropped and only every other
/// epoch is sampled from then on, so the series spans the whole run in bounded memory.
pub const MAX_SPLIT_SAMPLES: usize = 512;

const EMPTY: u64 = u64::MAX;

/// The split and the read-ahead sizes at the end of one epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct SplitSample {
    pub at_ns: Time,
    pub critical_ways: u32,
    pub normal_ways: u32,
    pub critical_prefetch_pages: u32,
    pub normal_prefetch_pages: u32,
}

pub struct FlashShare {
    sets: u64,
    ways: usize,
    /// The page of each of the `sets x ways` lines (`EMPTY`: none). Apart from the lines' other fields, so
    /// a lookup scans a set's pages in two cache lines of the machine, not six.
    lpas: Vec<u64>,
    /// When each line was last filled or hit (a per-cache counter): LRU order.
    used: Vec<u64>,
    /// The class that filled each line.
    classes: Vec<u8>,
    len: u64,
    clock: u64,
    /// Ways of the critical partition (at least one, at most `ways - 1`).
    critical_ways: usize,
    /// Accesses (pages looked up by reads, pages written) that end an epoch.
    epoch_accesses: u64,
    /// Accesses of each class this epoch.
    accesses: [u64; CLASSES],
    /// Each partition's ghosts.
    ghosts: [GhostCaches; CLASSES],
    /// Pages each partition reads ahead of a read that missed.
    prefetch_pages: [u32; CLASSES],
    epochs: u64,
    series: Vec<SplitSample>,
    /// Every `sample_every`-th epoch is sampled into `series`.
    sample_every: u64,
    /// Two partitions (`flashshare`) or one for both classes (`uniform`).
    split: bool,
}

impl FlashShare {
    /// A cache of `capacity_pages` pages in sets of `ways` ways (fewer if the cache is smaller). With fewer
    /// than two ways there is nothing to split: the configuration check rejects that.
    pub fn new(cfg: &CacheConfig, capacity_pages: u64, ways: usize) -> Self {
        Self::build(cfg, capacity_pages, ways, true)
    }

    /// The `uniform` cache: one partition of every way, shared by both classes, with the ghost-cache
    /// read-ahead.
    pub fn uniform(cfg: &CacheConfig, capacity_pages: u64, ways: usize) -> Self {
        Self::build(cfg, capacity_pages, ways, false)
    }

    fn build(cfg: &CacheConfig, capacity_pages: u64, ways: usize, split: bool) -> Self {
        let ways = ways.min(capacity_pages as usize).max(2);
        let sets = capacity_pages / ways as u64;
        // Unsplit, "critical" (class 0) stands for both classes and owns every way.
        let critical_ways = if split { ways / 2 } else { ways };
        let sizes = &cfg.flashshare_prefetch_pages;
        // A split partition has at most ways - 1 ways (the other keeps one); an unsplit one has them all.
        let slots = if split { ways - 1 } else { ways };
        let ghosts = [critical_ways, ways - critical_ways].map(|w| GhostCaches::new(sets, slots, w, sizes));
        let start = sizes.first().copied().unwrap_or(0);
        FlashShare {
            sets,
            ways,
            lpas: vec![EMPTY; sets as usize * ways],
            used: vec![0; sets as usize * ways],
            classes: vec![0; sets as usize * ways],
            len: 0,
            clock: 0,
            critical_ways,
            epoch_accesses: cfg.flashshare_epoch_accesses.max(1) as u64,
            accesses: [0; CLASSES],
            ghosts,
            prefetch_pages: [start; CLASSES],
            epochs: 0,
            series: Vec::new(),
            sample_every: 1,
            split,
        }
    }

    /// Each class's ways and read-ahead: unsplit, both classes see every way and the one read-ahead.
    fn classes_view(&self) -> ([u32; CLASSES], [u32; CLASSES]) {
        if self.split {
            ([self.critical_ways as u32, (self.ways - self.critical_ways) as u32], self.prefetch_pages)
        } else {
            ([self.ways as u32; CLASSES], [self.prefetch_pages[0]; CLASSES])
        }
    }

    /// The partition a class uses: its own when split, the one partition otherwise.
    fn part(&self, class: usize) -> usize {
        if self.split {
            class
        } else {
            0
        }
    }

    #[cfg(test)]
    fn is_empty_for_tests(&self) -> bool {
        self.len == 0
    }

    /// The ways `class` owns now.
    fn owned(&self, class: usize) -> std::ops::Range<usize> {
        if class == 0 {
            0..self.critical_ways
        } else {
            self.critical_ways..self.ways
        }
    }

    /// First line of `lpa`'s set.
    fn base(&self, lpa: u64) -> usize {
        set_index(lpa, self.sets) as usize * self.ways
    }

    fn find(&self, base: usize, lpa: u64, class: usize) -> Option<usize> {
        (base..base + self.ways).find(|&i| self.lpas[i] == lpa && self.classes[i] as usize == class)
    }

    /// The least recent line among `ways` of the set at `base` that holds a page (`EMPTY` lines skipped).
    fn least_recent(&self, base: usize, ways: std::ops::Range<usize>) -> Option<usize> {
        ways.map(|w| base + w).filter(|&i| self.lpas[i] != EMPTY).min_by_key(|&i| self.used[i])
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// End the epoch at `now`: re-divide the ways by this epoch's accesses and adopt each partition's best
    /// read-ahead.
    fn end_epoch(&mut self, now: Time) {
        let [critical, normal] = self.accesses;
        let total = critical + normal;
        if total > 0 && self.split {
            // Rounded share of the ways; each class keeps one way, so neither partition ever disappears
            // (the paper states no floor; a class with no way could not even hit its read-only pages' set).
            let share = (2 * self.ways as u64 * critical + total) / (2 * total);
            self.critical_ways = (share as usize).clamp(1, self.ways - 1);
        }
        for class in 0..CLASSES {
            let ways = self.owned(class).len();
            let ghosts = &mut self.ghosts[class];
            if let Some(best) = ghosts.best() {
                self.prefetch_pages[class] = best;
            }
            ghosts.new_epoch();
            ghosts.set_ways(ways);
        }
        self.accesses = [0; CLASSES];
        if self.epochs.is_multiple_of(self.sample_every) {
            let (ways, prefetch_pages) = self.classes_view();
            self.series.push(SplitSample {
                at_ns: now,
                critical_ways: ways[0],
                normal_ways: ways[1],
                critical_prefetch_pages: prefetch_pages[0],
                normal_prefetch_pages: prefetch_pages[1],
            });
            if self.series.len() > MAX_SPLIT_SAMPLES {
                // Keep the samples of every other sampled epoch (the first included), and sample half as often.
                let mut keep = false;
                self.series.retain(|_| {
                    keep = !keep;
                    keep
                });
                self.sample_every *= 2;
            }
        }
        self.epochs += 1;
    }
}

impl ReadCachePolicy for FlashShare {
    fn lookup(&mut self, lpa: u64, class: usize) -> bool {
        let class = self.part(class);
        self.accesses[class] += 1;
        if self.sets == 0 {
            return false;
        }
        match self.find(self.base(lpa), lpa, class) {
            Some(i) => {
                self.used[i] = self.tick();
                true
            }
            None => false,
        }
    }

    fn contains(&self, lpa: u64, class: usize) -> bool {
        let class = self.part(class);
        self.sets > 0 && self.find(self.base(lpa), lpa, class).is_some()
    }

    fn insert(&mut self, lpa: u64, class: usize, grow: bool) {
        let class = self.part(class);
        if self.sets == 0 {
            return;
        }
        let base = self.base(lpa);
        let line = match self.find(base, lpa, class) {
            Some(i) => i,
            None => {
                let owned = self.owned(class);
                let empty = owned.clone().map(|w| base + w).find(|&i| self.lpas[i] == EMPTY);
                let victim = match (grow, empty) {
                    (true, Some(i)) => {
                        self.len += 1;
                        i
                    }
                    // Without room to grow the page replaces one (the least recent of the partition's ways,
                    // read-only pages of the other class included), or is not kept.
                    _ => match self.least_recent(base, owned) {
                        Some(i) => i,
                        None => return,
                    },
                };
                self.lpas[victim] = lpa;
                self.classes[victim] = class as u8;
                victim
            }
        };
        self.used[line] = self.tick();
    }

    fn remove(&mut self, lpa: u64) {
        if self.sets == 0 {
            return;
        }
        let base = self.base(lpa);
        for i in base..base + self.ways {
            if self.lpas[i] == lpa {
                self.lpas[i] = EMPTY;
                self.len -= 1;
            }
        }
    }

    fn evict_near(&mut self, lpa: u64, class: usize) {
        let class = self.part(class);
        if self.sets == 0 {
            return;
        }
        let base = self.base(lpa);
        // The writer's own partition gives the DRAM first; if it holds nothing there, the other's.
        if let Some(i) = self.least_recent(base, self.owned(class)).or_else(|| self.least_recent(base, 0..self.ways)) {
            self.lpas[i] = EMPTY;
            self.len -= 1;
        }
    }

    fn pages_held(&self) -> u64 {
        self.len
    }

    fn written(&mut self, lpa: u64, class: usize) {
        let class = self.part(class);
        self.accesses[class] += 1;
        self.ghosts[class].written(lpa);
    }

    fn read_done(&mut self, first: u64, end: u64, class: usize, missed: bool, now: Time) -> u64 {
        let class = self.part(class);
        self.ghosts[class].read(first, end);
        let ahead = if missed { self.prefetch_pages[class] as u64 } else { 0 };
        // Epochs close at a read's end, so a read's pages count in one epoch.
        if self.accesses.iter().sum::<u64>() >= self.epoch_accesses {
            self.end_epoch(now);
        }
        ahead
    }

    fn epochs(&self) -> u64 {
        self.epochs
    }

    fn state(&self) -> Option<PolicyState<'_>> {
        let (ways, prefetch_pages) = self.classes_view();
        Some(PolicyState { ways, prefetch_pages, series: &self.series })
    }
}

#[cfg(test)]
#[path = "flashshare_tests.rs"]
mod tests;
