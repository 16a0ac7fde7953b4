//! The page cache: which 4 KiB pages of which file are in memory, clean or dirty, in LRU order; Linux's
//! on-demand readahead per file; and the dirty-page accounting that writeback and dirty throttling act on.
//!
//! It holds only state and decisions; the file system turns them into CPU work, bios and flusher wake-ups.
//! Memory is bounded by the cache itself: one slot per cached page (`capacity_pages` at most).
//!
//! What it follows from Linux (mm/filemap.c, mm/readahead.c, mm/page-writeback.c):
//! - reclaim takes the least recently used clean page (one LRU list: no active/inactive split);
//! - dirty pages are never reclaimed; they are written back oldest first (by when they were dirtied);
//! - readahead: a read that misses and starts where the file's previous read ended is sequential and reads
//!   ahead a window that starts at 4x the request (at most `max_readahead_pages`) and doubles on each
//!   further sequential miss; a random miss reads just what was asked ("standalone, small random read").

use std::cell::Cell;
use std::collections::{BTreeSet, HashMap};

use crate::engine::Time;

/// A page of a file: (file number, page index within the file).
pub type PageKey = (u32, u64);

const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Slot {
    key: PageKey,
    /// Neighbours in the list the page is on: the clean LRU list, or the dirty list (dirtied order).
    prev: u32,
    next: u32,
    dirty: bool,
    dirtied_at: Time,
}

/// A doubly linked list threaded through the slots; `head` is the oldest.
#[derive(Debug, Clone, Copy)]
struct List {
    head: u32,
    tail: u32,
    len: u64,
}

impl List {
    const EMPTY: List = List { head: NONE, tail: NONE, len: 0 };
}

/// Per-file readahead state.
#[derive(Debug, Clone, Copy, Default)]
struct Readahead {
    /// The page after the file's last read.
    next_page: u64,
    /// The current window, pages (0 before any sequential read).
    window: u64,
}

/// The sizes the cache works with, in pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageCacheLimits {
    /// Pages memory can hold for the cache.
    pub capacity_pages: u64,
    /// Largest readahead window (Linux: read_ahead_kb = 128 KiB, 32 pages).
    pub max_readahead_pages: u64,
}

/// What a read found: the pages to fetch from the device, as ranges, with the readahead beyond the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadPlan {
    /// Requested pages already cached.
    pub hit_pages: u64,
    /// Missing pages to read, as (first page, count), in file order; readahead pages included.
    pub fetch: Vec<(u64, u64)>,
    /// Of the pages in `fetch`, how many lie beyond the request (readahead).
    pub readahead_pages: u64,
}

/// The page cache.
#[derive(Debug, Clone)]
pub struct PageCache {
    limits: PageCacheLimits,
    index: HashMap<PageKey, u32>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    clean: List,
    dirty: List,
    readahead: HashMap<u32, Readahead>,
    /// Each file's dirty pages, so that one file's are found without a walk over all dirty pages.
    dirty_by_file: HashMap<u32, BTreeSet<u64>>,
    /// Pages visited (the cache's work, for the test that no path grows with the backlog).
    steps: Cell<u64>,
}

impl PageCache {
    pub fn new(limits: PageCacheLimits) -> PageCache {
        PageCache {
            limits,
            index: HashMap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            clean: List::EMPTY,
            dirty: List::EMPTY,
            readahead: HashMap::new(),
            dirty_by_file: HashMap::new(),
            steps: Cell::new(0),
        }
    }

    pub fn cached_pages(&self) -> u64 {
        self.clean.len + self.dirty.len
    }

    pub fn dirty_pages(&self) -> u64 {
        self.dirty.len
    }

    /// Pages visited so far.
    pub fn steps(&self) -> u64 {
        self.steps.get()
    }

    fn step(&self, n: u64) {
        self.steps.set(self.steps.get() + n);
    }

    pub fn is_cached(&self, key: PageKey) -> bool {
        self.index.contains_key(&key)
    }

    /// A read of `count` pages of `file` from `first`: counts the hits (and makes them most recently used)
    /// and plans the fetch of the misses plus any readahead, capped at the file's last page `file_pages`.
    /// The fetched pages enter the cache with [`PageCache::insert_clean`] when their reads complete.
    pub fn read(&mut self, file: u32, first: u64, count: u64, file_pages: u64) -> ReadPlan {
        let end = (first + count).min(file_pages);
        let ra = self.readahead.entry(file).or_default();
        let sequential = first == ra.next_page && first > 0 || first == 0 && ra.window == 0 && count > 0;
        ra.next_page = end;
        let mut hit_pages = 0;
        let mut missing = Vec::new();
        for page in first..end {
            self.step(1);
            match self.index.get(&(file, page)) {
                Some(&slot) => {
                    hit_pages += 1;
                    if !self.slots[slot as usize].dirty {
                        self.unlink(slot);
                        self.push_clean(slot);
                    }
                }
                None => missing.push(page),
            }
        }
        let mut readahead_pages = 0;
        if !missing.is_empty() && sequential {
            // On-demand readahead: the first window is 4x the request, then it doubles, within the maximum.
            let ra = self.readahead.get_mut(&file).expect("inserted above");
            let max = self.limits.max_readahead_pages;
            ra.window = if ra.window == 0 { (4 * count).min(max) } else { (2 * ra.window).min(max) };
            let ahead_end = (end + ra.window.saturating_sub(count)).min(file_pages);
            for page in end..ahead_end {
                self.steps.set(self.steps.get() + 1);
                if !self.index.contains_key(&(file, page)) {
                    missing.push(page);
                    readahead_pages += 1;
                }
            }
            ra.next_page = ahead_end.max(end);
        }
        ReadPlan { hit_pages, fetch: ranges(&missing), readahead_pages }
    }

    /// Pages read from the device enter the cache clean, most recently used, reclaiming the least recently
    /// used clean pages when full. Returns how many pages were reclaimed. Pages already cached are left as
    /// they are.
    pub fn insert_clean(&mut self, file: u32, first: u64, count: u64) -> u64 {
        let mut reclaimed = 0;
        for page in first..first + count {
            self.step(1);
            if self.index.contains_key(&(file, page)) {
                continue;
            }
            reclaimed += self.make_room();
            let slot = self.alloc(Slot { key: (file, page), prev: NONE, next: NONE, dirty: false, dirtied_at: 0 });
            self.push_clean(slot);
        }
        reclaimed
    }

    /// A buffered write of `count` pages of `file` from `first` at `now`: the pages become dirty (cached ones
    /// in place, new ones allocated). Returns how many pages were newly dirtied.
    pub fn write(&mut self, file: u32, first: u64, count: u64, now: Time) -> u64 {
        let mut newly = 0;
        for page in first..first + count {
            self.step(1);
            let slot = match self.index.get(&(file, page)) {
                Some(&slot) if self.slots[slot as usize].dirty => continue,
                Some(&slot) => {
                    self.unlink(slot);
                    slot
                }
                None => {
                    self.make_room();
                    self.alloc(Slot { key: (file, page), prev: NONE, next: NONE, dirty: false, dirtied_at: 0 })
                }
            };
            let s = &mut self.slots[slot as usize];
            s.dirty = true;
            s.dirtied_at = now;
            self.push_dirty(slot);
            self.dirty_by_file.entry(file).or_default().insert(page);
            newly += 1;
        }
        newly
    }

    /// When the oldest dirty page was dirtied, if any page is dirty.
    pub fn oldest_dirty_at(&self) -> Option<Time> {
        (self.dirty.head != NONE).then(|| self.slots[self.dirty.head as usize].dirtied_at)
    }

    /// Up to `max_pages` dirty pages to write back, oldest first, with those dirtied at or before
    /// `dirtied_by` only; sorted by file and page and merged into ranges (the flusher writes each inode's
    /// pages in offset order). The pages stay dirty until [`PageCache::mark_clean`].
    pub fn writeback_batch(&self, max_pages: u64, dirtied_by: Time) -> Vec<(u32, u64, u64)> {
        let mut pages = Vec::new();
        let mut slot = self.dirty.head;
        while slot != NONE && (pages.len() as u64) < max_pages {
            let s = &self.slots[slot as usize];
            if s.dirtied_at > dirtied_by {
                break;
            }
            pages.push(s.key);
            self.step(1);
            slot = s.next;
        }
        pages.sort_unstable();
        let mut out: Vec<(u32, u64, u64)> = Vec::new();
        for (file, page) in pages {
            match out.last_mut() {
                Some((f, first, count)) if *f == file && *first + *count == page => *count += 1,
                _ => out.push((file, page, 1)),
            }
        }
        out
    }

    /// `file`'s dirty pages as ranges (first page, count), in page order.
    pub fn dirty_ranges(&self, file: u32) -> Vec<(u64, u64)> {
        let mut out: Vec<(u64, u64)> = Vec::new();
        for &page in self.dirty_by_file.get(&file).into_iter().flatten() {
            self.step(1);
            match out.last_mut() {
                Some((first, count)) if *first + *count == page => *count += 1,
                _ => out.push((page, 1)),
            }
        }
        out
    }

    /// Written back: the pages turn clean (most recently used). Pages not dirty are left as they are.
    pub fn mark_clean(&mut self, file: u32, first: u64, count: u64) {
        for page in first..first + count {
            self.step(1);
            if let Some(&slot) = self.index.get(&(file, page)) {
                if self.slots[slot as usize].dirty {
                    self.unlink(slot);
                    self.slots[slot as usize].dirty = false;
                    self.push_clean(slot);
                    if let Some(pages) = self.dirty_by_file.get_mut(&file) {
                        pages.remove(&page);
                        if pages.is_empty() {
                            self.dirty_by_file.remove(&file);
                        }
                    }
                }
            }
        }
    }

    /// Check the lists against the index (for tests and `run.check_invariants`).
    pub fn check_invariants(&self) -> Result<(), String> {
        let count = |list: List, dirty: bool| -> Result<u64, String> {
            let (mut n, mut slot, mut prev) = (0, list.head, NONE);
            while slot != NONE {
                let s = &self.slots[slot as usize];
                if s.dirty != dirty || s.prev != prev || self.index.get(&s.key) != Some(&slot) {
                    return Err(format!("page cache: slot {slot} ({:?}) is misplaced", s.key));
                }
                (prev, slot, n) = (slot, s.next, n + 1);
            }
            if prev != list.tail || n != list.len {
                return Err(format!("page cache: a list holds {n} pages but records {}", list.len));
            }
            Ok(n)
        };
        let cached = count(self.clean, false)? + count(self.dirty, true)?;
        if cached != self.index.len() as u64 || cached > self.limits.capacity_pages.max(self.dirty.len) {
            return Err(format!("page cache: {cached} pages listed, {} indexed", self.index.len()));
        }
        let by_file: u64 = self.dirty_by_file.values().map(|p| p.len() as u64).sum();
        if by_file != self.dirty.len {
            return Err(format!("page cache: {by_file} dirty pages by file, {} on the dirty list", self.dirty.len));
        }
        Ok(())
    }

    /// Reclaim the least recently used clean page if the cache is full; returns 1 if it did. With every
    /// page dirty the cache grows past its capacity (dirty throttling keeps writers from getting there).
    fn make_room(&mut self) -> u64 {
        if self.cached_pages() < self.limits.capacity_pages || self.clean.head == NONE {
            return 0;
        }
        let victim = self.clean.head;
        self.unlink(victim);
        self.index.remove(&self.slots[victim as usize].key);
        self.free.push(victim);
        1
    }

    fn alloc(&mut self, slot: Slot) -> u32 {
        let id = match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = slot;
                id
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as u32
            }
        };
        self.index.insert(slot.key, id);
        id
    }

    fn list_of(&mut self, dirty: bool) -> &mut List {
        if dirty {
            &mut self.dirty
        } else {
            &mut self.clean
        }
    }

    fn unlink(&mut self, slot: u32) {
        let Slot { prev, next, dirty, .. } = self.slots[slot as usize];
        if prev != NONE {
            self.slots[prev as usize].next = next;
        }
        if next != NONE {
            self.slots[next as usize].prev = prev;
        }
        let list = self.list_of(dirty);
        if list.head == slot {
            list.head = next;
        }
        if list.tail == slot {
            list.tail = prev;
        }
        list.len -= 1;
    }

    fn push_back(&mut self, slot: u32, dirty: bool) {
        let tail = self.list_of(dirty).tail;
        let s = &mut self.slots[slot as usize];
        (s.prev, s.next) = (tail, NONE);
        if tail != NONE {
            self.slots[tail as usize].next = slot;
        }
        let list = self.list_of(dirty);
        if list.head == NONE {
            list.head = slot;
        }
        list.tail = slot;
        list.len += 1;
    }

    fn push_clean(&mut self, slot: u32) {
        self.push_back(slot, false);
    }

    fn push_dirty(&mut self, slot: u32) {
        self.push_back(slot, true);
    }
}

/// Sorted page numbers as (first, count) runs.
fn ranges(pages: &[u64]) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for &page in pages {
        match out.last_mut() {
            Some((first, count)) if *first + *count == page => *count += 1,
            _ => out.push((page, 1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use rand::RngExt;

    use super::*;

    fn cache(capacity_pages: u64) -> PageCache {
        PageCache::new(PageCacheLimits { capacity_pages, max_readahead_pages: 32 })
    }

    #[test]
    fn a_miss_is_fetched_then_hits_and_the_lru_clean_page_is_reclaimed() {
        let mut c = cache(3);
        let plan = c.read(0, 10, 2, 1000);
        assert_eq!((plan.hit_pages, plan.fetch.clone(), plan.readahead_pages), (0, vec![(10, 2)], 0), "random");
        assert_eq!(c.insert_clean(0, 10, 2), 0);
        assert_eq!(c.read(0, 10, 1, 1000).hit_pages, 1, "page 10 is now the most recently used");
        c.insert_clean(0, 50, 1);
        assert_eq!(c.insert_clean(0, 60, 1), 1, "full: one page reclaimed");
        assert!(c.is_cached((0, 10)) && !c.is_cached((0, 11)), "the LRU page (11) went, not the one just read");
        c.check_invariants().unwrap();
    }

    #[test]
    fn sequential_misses_read_ahead_in_a_doubling_window() {
        let mut c = cache(1000);
        // First read at the start of the file: a 4x window (4 pages asked, 16 fetched).
        let plan = c.read(0, 0, 4, 1000);
        assert_eq!((plan.fetch.clone(), plan.readahead_pages), (vec![(0, 16)], 12));
        c.insert_clean(0, 0, 16);
        // Reads inside the window hit; the next miss where the last read ended doubles the window.
        for first in [4, 8, 12] {
            assert_eq!(c.read(0, first, 4, 1000).hit_pages, 4);
        }
        let plan = c.read(0, 16, 4, 1000);
        assert_eq!((plan.fetch.clone(), plan.readahead_pages), (vec![(16, 32)], 28), "window 32 (the maximum)");
        // Readahead stops at the end of the file.
        let mut c = cache(1000);
        assert_eq!(c.read(1, 0, 4, 10).fetch, vec![(0, 10)]);
    }

    #[test]
    fn writes_dirty_pages_that_write_back_oldest_first_in_offset_order_and_are_never_reclaimed() {
        let mut c = cache(4);
        assert_eq!(c.write(0, 7, 1, 100), 1);
        assert_eq!(c.write(0, 5, 2, 200), 2);
        assert_eq!(c.write(0, 5, 1, 300), 0, "already dirty: keeps its first dirtying time");
        assert_eq!(c.oldest_dirty_at(), Some(100));
        assert_eq!(c.writeback_batch(10, 150), vec![(0, 7, 1)], "only what was dirtied by 150");
        assert_eq!(c.writeback_batch(10, 1000), vec![(0, 5, 3)], "merged into one range in offset order");
        // Clean pages are reclaimed for new ones, dirty ones never.
        c.insert_clean(1, 0, 3);
        assert_eq!((c.cached_pages(), c.dirty_pages()), (4, 3), "only one clean page fits beside three dirty");
        assert!(c.is_cached((1, 2)) && !c.is_cached((1, 0)), "the newest clean page stays");
        c.mark_clean(0, 5, 3);
        assert_eq!(c.dirty_pages(), 0);
        c.check_invariants().unwrap();
    }

    #[test]
    fn uniform_reads_over_a_larger_working_set_hit_in_proportion_to_the_cache() {
        // LRU under the independent reference model with uniform popularity: the steady-state hit ratio is
        // capacity / working set.
        let (capacity, working_set) = (2_000u64, 8_000u64);
        let mut c = cache(capacity);
        let mut rng = crate::engine::stream_rng(7, "page-cache-test");
        let mut warm = |c: &mut PageCache, n: u64| -> u64 {
            let mut hits = 0;
            for _ in 0..n {
                let page = rng.random_range(1..working_set);
                let plan = c.read(0, page, 1, working_set);
                hits += plan.hit_pages;
                for (first, count) in plan.fetch {
                    c.insert_clean(0, first, count);
                }
            }
            hits
        };
        warm(&mut c, 50_000);
        let n = 200_000;
        let ratio = warm(&mut c, n) as f64 / n as f64;
        let expected = capacity as f64 / (working_set - 1) as f64;
        assert!((ratio - expected).abs() < 0.01, "hit ratio {ratio}, closed form {expected}");
        assert_eq!(c.cached_pages(), capacity);
        c.check_invariants().unwrap();
    }
}
