//! The page cache: which 4 KiB pages of which file are in memory, clean or dirty, in LRU order; Linux's
//! on-demand readahead per file; and the dirty-page accounting that writeback and dirty throttling act on.
//!
//! It holds only state and decisions; the file system turns them into CPU work, bios and flusher wake-ups.
//! It keeps runs of pages, not pages: a run is pages of one file next to each other in the file and in their
//! list, clean or dirtied at the same time, so its work and memory grow with the runs (a 128 KiB write is
//! one), never with the pages or with other files' dirty backlog; the order of every list is the order
//! page-by-page bookkeeping gives (the tests check it against such a model). The common lookups are hash
//! probes: a miss, or a hit on a one-page run (scattered pages that random reads leave), never searches the
//! ordered map that holds the longer runs. Memory is bounded by the cache itself: at most one run and one
//! bitmap per cached page (`capacity_pages`), one bitmap per 64 pages of long runs.
//!
//! What it follows from Linux (mm/filemap.c, mm/readahead.c, mm/page-writeback.c):
//! - reclaim takes the least recently used clean page (one LRU list: no active/inactive split);
//! - dirty pages are never reclaimed; they are written back oldest first (by when they were dirtied);
//! - readahead: a read that misses and starts where the file's previous read ended is sequential and reads
//!   ahead a window that starts at 4x the request (at most `max_readahead_pages`) and doubles on each
//!   further sequential miss; a random miss reads just what was asked ("standalone, small random read").

use std::cell::Cell;
use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use crate::engine::Time;

/// A page of a file: (file number, page index within the file).
pub type PageKey = (u32, u64);

const NONE: u32 = u32::MAX;

/// A run of pages of one file, consecutive in the file and in the list that holds them (the clean LRU list,
/// or the dirty list in dirtied order), all clean or all dirtied at the same time. The cache keeps runs, not
/// one slot per page, so its work and memory go by runs: a 128 KiB write is one run, not 32 pages.
#[derive(Debug, Clone, Copy)]
struct Run {
    file: u32,
    first: u64,
    count: u64,
    /// Neighbours in the list the run is on.
    prev: u32,
    next: u32,
    dirty: bool,
    /// When its pages were dirtied (0 when clean).
    dirtied_at: Time,
}

impl Run {
    fn end(&self) -> u64 {
        self.first + self.count
    }
}

/// A doubly linked list of runs; `head` is the oldest; `pages` counts the pages of its runs.
#[derive(Debug, Clone, Copy)]
struct List {
    head: u32,
    tail: u32,
    pages: u64,
}

impl List {
    const EMPTY: List = List { head: NONE, tail: NONE, pages: 0 };
}

/// Per-file readahead state.
#[derive(Debug, Clone, Copy, Default)]
struct Readahead {
    /// The page after the file's last read.
    next_page: u64,
    /// The current window, pages (0 before any sequential read).
    window: u64,
}

/// What the cache knows of one file.
#[derive(Debug, Clone, Default)]
struct FilePages {
    /// Its cached runs of one page (the runs of scattered pages, which random reads make) by their page:
    /// a hit on one is one hash probe.
    single_runs: FxHashMap<u64, u32>,
    /// Its cached runs of two pages or more by where they end (the page after their last): the first one
    /// ending after a cached page outside the one-page runs holds it, found in one search. (No run overlaps
    /// another.)
    long_runs: BTreeMap<u64, u32>,
    /// Its dirty pages as maximal runs, first page to end: what fsync and a commit write, found without a
    /// walk over clean runs or other files' pages.
    dirty: BTreeMap<u64, u64>,
    /// Which of its pages are cached, as bitmaps of 64-page chunks: a miss is answered by one hash probe.
    cached: ChunkBitmaps,
    readahead: Readahead,
}

/// A set of pages as one 64-bit bitmap per 64-page chunk that holds any, in a hash map by chunk: membership in
/// one probe and the next member in a range in one probe per chunk of it, where the runs' ordered map needs a
/// tree search (a random read that misses a large cache of scattered pages looks up twice). Memory: one entry
/// per chunk with a cached page, at most one per cached page and one per 64 pages of long runs; the work of an
/// update goes by the pages it adds or drops, which a request bounds.
#[derive(Debug, Clone, Default)]
struct ChunkBitmaps {
    chunks: FxHashMap<u64, u64>,
}

/// Pages per bitmap.
const CHUNK_PAGES: u64 = 64;

impl ChunkBitmaps {
    fn contains(&self, page: u64) -> bool {
        self.chunks.get(&(page / CHUNK_PAGES)).is_some_and(|bits| bits >> (page % CHUNK_PAGES) & 1 == 1)
    }

    /// The first member in `[from, end)`, or `end` when there is none: one probe per chunk of the range
    /// (the range is a request's, a few chunks).
    fn next_member(&self, from: u64, end: u64) -> u64 {
        if end <= from {
            return end;
        }
        let (first_chunk, last_chunk) = (from / CHUNK_PAGES, (end - 1) / CHUNK_PAGES);
        for chunk in first_chunk..=last_chunk {
            let Some(&bits) = self.chunks.get(&chunk) else { continue };
            let bits = if chunk == first_chunk { bits & (u64::MAX << (from % CHUNK_PAGES)) } else { bits };
            if bits != 0 {
                return (chunk * CHUNK_PAGES + bits.trailing_zeros() as u64).min(end);
            }
        }
        end
    }

    /// Pages `[first, end)` become members (`on`) or not.
    fn set(&mut self, first: u64, end: u64, on: bool) {
        let mut page = first;
        while page < end {
            let chunk = page / CHUNK_PAGES;
            let to = end.min((chunk + 1) * CHUNK_PAGES);
            let width = to - page;
            let mask = if width == CHUNK_PAGES { u64::MAX } else { ((1u64 << width) - 1) << (page % CHUNK_PAGES) };
            if on {
                *self.chunks.entry(chunk).or_insert(0) |= mask;
            } else if let Some(bits) = self.chunks.get_mut(&chunk) {
                *bits &= !mask;
                if *bits == 0 {
                    self.chunks.remove(&chunk);
                }
            }
            page = to;
        }
    }
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
    runs: Vec<Run>,
    free: Vec<u32>,
    clean: List,
    dirty: List,
    /// By file number (the file system numbers its files from 0).
    files: Vec<FilePages>,
    /// Runs and ranges visited (the cache's work, for the test that no path grows with the backlog).
    steps: Cell<u64>,
}

impl PageCache {
    pub fn new(limits: PageCacheLimits) -> PageCache {
        PageCache {
            limits,
            runs: Vec::new(),
            free: Vec::new(),
            clean: List::EMPTY,
            dirty: List::EMPTY,
            files: Vec::new(),
            steps: Cell::new(0),
        }
    }

    pub fn cached_pages(&self) -> u64 {
        self.clean.pages + self.dirty.pages
    }

    pub fn dirty_pages(&self) -> u64 {
        self.dirty.pages
    }

    /// Runs and ranges visited so far.
    pub fn steps(&self) -> u64 {
        self.steps.get()
    }

    fn step(&self) {
        self.steps.set(self.steps.get() + 1);
    }

    pub fn is_cached(&self, (file, page): PageKey) -> bool {
        self.files.get(file as usize).is_some_and(|f| f.cached.contains(page))
    }

    /// A read of `count` pages of `file` from `first`: counts the hits (and makes them most recently used)
    /// and plans the fetch of the misses plus any readahead, capped at the file's last page `file_pages`.
    /// The fetched pages enter the cache with [`PageCache::insert_clean`] when their reads complete.
    pub fn read(&mut self, file: u32, first: u64, count: u64, file_pages: u64) -> ReadPlan {
        let end = (first + count).min(file_pages);
        let ra = &mut self.file_mut(file).readahead;
        let sequential = first == ra.next_page && first > 0 || first == 0 && ra.window == 0 && count > 0;
        ra.next_page = end;
        let mut hit_pages = 0;
        let mut fetch = Vec::new();
        let mut page = first;
        while page < end {
            match self.lookup(file, page, end) {
                Ok(id) => {
                    let run = self.runs[id as usize];
                    let to = run.end().min(end);
                    hit_pages += to - page;
                    // Hit clean pages become the most recently used, in page order.
                    if !run.dirty {
                        let part = self.isolate(id, page, to);
                        self.unlink(part);
                        self.push_back(part);
                    }
                    page = to;
                }
                Err(to) => {
                    push_range(&mut fetch, page, to - page);
                    page = to;
                }
            }
        }
        let mut readahead_pages = 0;
        if !fetch.is_empty() && sequential {
            // On-demand readahead: the first window is 4x the request, then it doubles, within the maximum.
            let max = self.limits.max_readahead_pages;
            let ra = &mut self.file_mut(file).readahead;
            ra.window = if ra.window == 0 { (4 * count).min(max) } else { (2 * ra.window).min(max) };
            let ahead_end = (end + ra.window.saturating_sub(count)).min(file_pages);
            ra.next_page = ahead_end.max(end);
            let mut page = end;
            while page < ahead_end {
                match self.lookup(file, page, ahead_end) {
                    Ok(id) => page = self.runs[id as usize].end().min(ahead_end),
                    Err(to) => {
                        push_range(&mut fetch, page, to - page);
                        readahead_pages += to - page;
                        page = to;
                    }
                }
            }
        }
        ReadPlan { hit_pages, fetch, readahead_pages }
    }

    /// Pages read from the device enter the cache clean, most recently used, reclaiming the least recently
    /// used clean pages when full. Returns how many pages were reclaimed. Pages already cached are left as
    /// they are.
    pub fn insert_clean(&mut self, file: u32, first: u64, count: u64) -> u64 {
        let (mut page, end, mut reclaimed) = (first, first + count, 0);
        while page < end {
            match self.lookup(file, page, end) {
                Ok(id) => page = self.runs[id as usize].end().min(end),
                Err(to) => {
                    reclaimed += self.insert_new(file, page, to - page, None);
                    page = to;
                }
            }
        }
        reclaimed
    }

    /// A buffered write of `count` pages of `file` from `first` at `now`: the pages become dirty (cached ones
    /// in place, new ones allocated). Returns how many pages were newly dirtied.
    pub fn write(&mut self, file: u32, first: u64, count: u64, now: Time) -> u64 {
        let (mut page, end, mut newly) = (first, first + count, 0);
        while page < end {
            let to = match self.lookup(file, page, end) {
                Ok(id) => {
                    let run = self.runs[id as usize];
                    let to = run.end().min(end);
                    if run.dirty {
                        // Dirty already: keeps its place and its first dirtying time.
                        page = to;
                        continue;
                    }
                    let part = self.isolate(id, page, to);
                    self.unlink(part);
                    let r = &mut self.runs[part as usize];
                    (r.dirty, r.dirtied_at) = (true, now);
                    self.push_back(part);
                    to
                }
                Err(to) => {
                    self.insert_new(file, page, to - page, Some(now));
                    to
                }
            };
            self.mark_dirty(file, page, to);
            newly += to - page;
            page = to;
        }
        newly
    }

    /// When the oldest dirty page was dirtied, if any page is dirty.
    pub fn oldest_dirty_at(&self) -> Option<Time> {
        (self.dirty.head != NONE).then(|| self.runs[self.dirty.head as usize].dirtied_at)
    }

    /// Up to `max_pages` dirty pages to write back, oldest first, with those dirtied at or before
    /// `dirtied_by` only; sorted by file and page and merged into ranges (the flusher writes each inode's
    /// pages in offset order). The pages stay dirty until [`PageCache::mark_clean`].
    pub fn writeback_batch(&self, max_pages: u64, dirtied_by: Time) -> Vec<(u32, u64, u64)> {
        let mut pieces = Vec::new();
        let (mut id, mut taken) = (self.dirty.head, 0);
        while id != NONE && taken < max_pages {
            self.step();
            let run = &self.runs[id as usize];
            if run.dirtied_at > dirtied_by {
                break;
            }
            let n = run.count.min(max_pages - taken);
            pieces.push((run.file, run.first, n));
            taken += n;
            id = run.next;
        }
        pieces.sort_unstable();
        let mut out: Vec<(u32, u64, u64)> = Vec::new();
        for (file, first, n) in pieces {
            match out.last_mut() {
                Some((f, start, count)) if *f == file && *start + *count == first => *count += n,
                _ => out.push((file, first, n)),
            }
        }
        out
    }

    /// `file`'s dirty pages as ranges (first page, count), in page order.
    pub fn dirty_ranges(&self, file: u32) -> Vec<(u64, u64)> {
        self.dirty_ranges_below(file, u64::MAX)
    }

    /// `file`'s dirty pages below page `end` as ranges (first page, count), in page order.
    pub fn dirty_ranges_below(&self, file: u32, end: u64) -> Vec<(u64, u64)> {
        let Some(f) = self.files.get(file as usize) else { return Vec::new() };
        f.dirty
            .range(..end)
            .map(|(&first, &run_end)| {
                self.step();
                (first, run_end.min(end) - first)
            })
            .collect()
    }

    /// Written back: the pages turn clean (most recently used). Pages not dirty are left as they are.
    pub fn mark_clean(&mut self, file: u32, first: u64, count: u64) {
        let (mut page, end) = (first, first + count);
        while page < end {
            match self.lookup(file, page, end) {
                Ok(id) => {
                    let run = self.runs[id as usize];
                    let to = run.end().min(end);
                    if run.dirty {
                        let part = self.isolate(id, page, to);
                        self.unlink(part);
                        let r = &mut self.runs[part as usize];
                        (r.dirty, r.dirtied_at) = (false, 0);
                        self.push_back(part);
                    }
                    page = to;
                }
                Err(next) => page = next,
            }
        }
        self.mark_not_dirty(file, first, end);
    }

    /// Check the lists against the files' runs and dirty ranges (for tests and `run.check_invariants`).
    pub fn check_invariants(&self) -> Result<(), String> {
        let (clean_pages, clean_runs, dirty_pages, dirty_runs) = self.check_lists()?;
        let cached = clean_pages + dirty_pages;
        if cached > self.limits.capacity_pages.max(dirty_pages) {
            return Err(format!(
                "page cache: {cached} pages cached, {dirty_pages} of them dirty, in room for {}",
                self.limits.capacity_pages
            ));
        }
        self.check_runs(clean_runs + dirty_runs)
    }

    /// Walk both lists: (clean pages, clean runs, dirty pages, dirty runs).
    fn check_lists(&self) -> Result<(u64, u64, u64, u64), String> {
        let walk = |list: List, dirty: bool| -> Result<(u64, u64), String> {
            let (mut pages, mut runs, mut id, mut prev) = (0, 0, list.head, NONE);
            while id != NONE {
                let r = &self.runs[id as usize];
                if r.dirty != dirty || r.prev != prev || r.count == 0 || self.filed(r) != Some(id) {
                    return Err(format!("page cache: run {id} ({r:?}) is misplaced"));
                }
                (prev, id, pages, runs) = (id, r.next, pages + r.count, runs + 1);
            }
            if prev != list.tail || pages != list.pages {
                return Err(format!("page cache: a list holds {pages} pages but records {}", list.pages));
            }
            Ok((pages, runs))
        };
        let (clean_pages, clean_runs) = walk(self.clean, false)?;
        let (dirty_pages, dirty_runs) = walk(self.dirty, true)?;
        Ok((clean_pages, clean_runs, dirty_pages, dirty_runs))
    }

    /// The files' runs: as many as the lists hold (`listed`), none overlapping, their dirty ranges exactly
    /// the dirty runs merged.
    fn check_runs(&self, listed: u64) -> Result<(), String> {
        let indexed: usize = self.files.iter().map(|f| f.single_runs.len() + f.long_runs.len()).sum();
        if listed != indexed as u64 {
            return Err(format!("page cache: {listed} runs listed, {indexed} runs indexed"));
        }
        for (file, f) in self.files.iter().enumerate() {
            let mut filed: Vec<(u64, u32)> = f.single_runs.iter().map(|(&page, &id)| (page + 1, id)).collect();
            filed.extend(f.long_runs.iter().map(|(&end, &id)| (end, id)));
            filed.sort_unstable();
            let mut dirty: Vec<(u64, u64)> = Vec::new();
            let mut end = 0;
            for &(run_end, id) in &filed {
                let r = &self.runs[id as usize];
                if r.end() != run_end || r.first < end || (r.count == 1) != f.single_runs.contains_key(&r.first) {
                    return Err(format!(
                        "page cache: file {file}'s run ending at page {run_end} overlaps or is misfiled"
                    ));
                }
                end = r.end();
                if r.dirty {
                    match dirty.last_mut() {
                        Some((_, e)) if *e == r.first => *e = r.end(),
                        _ => dirty.push((r.first, r.end())),
                    }
                }
            }
            if !f.dirty.iter().map(|(&a, &b)| (a, b)).eq(dirty.iter().copied()) {
                return Err(format!("page cache: file {file}'s dirty ranges {:?}, its dirty runs {dirty:?}", f.dirty));
            }
            let mut cached = ChunkBitmaps::default();
            for &(_, id) in &filed {
                let r = &self.runs[id as usize];
                cached.set(r.first, r.end(), true);
            }
            if cached.chunks != f.cached.chunks {
                return Err(format!("page cache: file {file}'s bitmaps of cached pages differ from its runs"));
            }
        }
        Ok(())
    }

    fn file_mut(&mut self, file: u32) -> &mut FilePages {
        let i = file as usize;
        if self.files.len() <= i {
            self.files.resize_with(i + 1, FilePages::default);
        }
        &mut self.files[i]
    }

    /// The run that holds `page` of `file`, or else where the next run of the file starts, at most `end`.
    fn lookup(&self, file: u32, page: u64, end: u64) -> Result<u32, u64> {
        self.step();
        let Some(f) = self.files.get(file as usize) else { return Err(end) };
        if !f.cached.contains(page) {
            // A miss: the next run starts at the next cached page.
            return Err(f.cached.next_member(page + 1, end));
        }
        if let Some(&id) = f.single_runs.get(&page) {
            return Ok(id);
        }
        let (_, &id) = f.long_runs.range(page + 1..).next().expect("a cached page lies in a run");
        Ok(id)
    }

    /// Where run `r` is filed in its file's index, if it is.
    fn filed(&self, r: &Run) -> Option<u32> {
        let f = self.files.get(r.file as usize)?;
        if r.count == 1 { f.single_runs.get(&r.first) } else { f.long_runs.get(&r.end()) }.copied()
    }

    /// File run `id` in its file's index, by its pages now.
    fn file_run(&mut self, id: u32) {
        let r = self.runs[id as usize];
        let f = &mut self.files[r.file as usize];
        if r.count == 1 {
            f.single_runs.insert(r.first, id);
        } else {
            f.long_runs.insert(r.end(), id);
        }
    }

    /// Take run `id` out of its file's index (before its pages change).
    fn unfile_run(&mut self, id: u32) {
        let r = self.runs[id as usize];
        let f = &mut self.files[r.file as usize];
        if r.count == 1 {
            f.single_runs.remove(&r.first);
        } else {
            f.long_runs.remove(&r.end());
        }
    }

    /// `count` new pages of `file` from `first`, none of them cached, enter the cache: dirtied at `dirtied`,
    /// or clean. Each takes a free page, or reclaims the least recently used clean page when the cache is
    /// full, one page after another as Linux allocates them; returns how many pages were reclaimed. With
    /// every page dirty the cache grows past its capacity (dirty throttling keeps writers from getting there).
    fn insert_new(&mut self, file: u32, first: u64, count: u64, dirtied: Option<Time>) -> u64 {
        let (mut page, end, mut reclaimed) = (first, first + count, 0);
        while page < end {
            self.step();
            let want = end - page;
            let cached = self.cached_pages();
            let take = if cached < self.limits.capacity_pages {
                want.min(self.limits.capacity_pages - cached)
            } else if self.clean.head == NONE {
                // Nothing to reclaim: dirty pages all go in; a clean page goes in and is the next victim.
                if dirtied.is_some() {
                    want
                } else {
                    1
                }
            } else {
                let head = self.runs[self.clean.head as usize];
                if dirtied.is_none() && self.clean.head == self.clean.tail && head.file == file && head.end() == page {
                    // The clean list is one run that these pages continue: each new page reclaims the run's
                    // oldest, so the run slides on by `want` pages.
                    let id = self.clean.head;
                    self.unfile_run(id);
                    let cached = &mut self.files[file as usize].cached;
                    // (With more new pages than the run holds, the first new ones are gone too.)
                    cached.set(head.first, head.first + want, false);
                    cached.set(page.max(head.first + want), end, true);
                    self.runs[id as usize].first += want;
                    self.file_run(id);
                    reclaimed += want;
                    break;
                }
                let take = want.min(head.count);
                self.reclaim(take);
                reclaimed += take;
                take
            };
            let id = self.alloc(Run {
                file,
                first: page,
                count: take,
                prev: NONE,
                next: NONE,
                dirty: dirtied.is_some(),
                dirtied_at: dirtied.unwrap_or(0),
            });
            self.file_mut(file).cached.set(page, page + take, true);
            self.file_run(id);
            self.push_back(id);
            page += take;
        }
        reclaimed
    }

    /// Reclaim the `n` least recently used clean pages, all of the clean list's first run or its start.
    fn reclaim(&mut self, n: u64) {
        let id = self.clean.head;
        let run = self.runs[id as usize];
        self.files[run.file as usize].cached.set(run.first, run.first + n, false);
        self.unfile_run(id);
        if n == run.count {
            self.unlink(id);
            self.free.push(id);
        } else {
            let r = &mut self.runs[id as usize];
            (r.first, r.count) = (r.first + n, r.count - n);
            self.clean.pages -= n;
            self.file_run(id);
        }
    }

    /// Split run `id` at page `at` (inside it); the new run, from `at`, follows it in its list.
    fn split(&mut self, id: u32, at: u64) -> u32 {
        let run = self.runs[id as usize];
        self.unfile_run(id);
        self.runs[id as usize].count = at - run.first;
        let new = self.alloc(Run { first: at, count: run.end() - at, prev: id, ..run });
        if run.next == NONE {
            self.list_of(run.dirty).tail = new;
        } else {
            self.runs[run.next as usize].prev = new;
        }
        self.runs[id as usize].next = new;
        self.file_run(id);
        self.file_run(new);
        new
    }

    /// The part `[from, to)` of run `id` (which holds both ends) as a run of its own.
    fn isolate(&mut self, id: u32, from: u64, to: u64) -> u32 {
        let id = if self.runs[id as usize].first < from { self.split(id, from) } else { id };
        if self.runs[id as usize].end() > to {
            self.split(id, to);
        }
        id
    }

    /// Pages `[first, end)` of `file` are dirty.
    fn mark_dirty(&mut self, file: u32, first: u64, end: u64) {
        self.file_mut(file);
        let (steps, dirty) = (&self.steps, &mut self.files[file as usize].dirty);
        let (mut lo, mut hi) = (first, end);
        if let Some((&start, &stop)) = dirty.range(..=first).next_back() {
            if stop >= first {
                (lo, hi) = (start, hi.max(stop));
            }
        }
        while let Some((&start, &stop)) = dirty.range(lo..=hi).next() {
            steps.set(steps.get() + 1);
            dirty.remove(&start);
            hi = hi.max(stop);
        }
        dirty.insert(lo, hi);
    }

    /// Pages `[first, end)` of `file` are not dirty.
    fn mark_not_dirty(&mut self, file: u32, first: u64, end: u64) {
        let steps = &self.steps;
        let Some(f) = self.files.get_mut(file as usize) else { return };
        let dirty = &mut f.dirty;
        if let Some((&start, &stop)) = dirty.range(..first).next_back() {
            if stop > first {
                dirty.insert(start, first);
                if stop > end {
                    dirty.insert(end, stop);
                    return;
                }
            }
        }
        while let Some((&start, &stop)) = dirty.range(first..end).next() {
            steps.set(steps.get() + 1);
            dirty.remove(&start);
            if stop > end {
                dirty.insert(end, stop);
            }
        }
    }

    fn alloc(&mut self, run: Run) -> u32 {
        match self.free.pop() {
            Some(id) => {
                self.runs[id as usize] = run;
                id
            }
            None => {
                self.runs.push(run);
                (self.runs.len() - 1) as u32
            }
        }
    }

    fn list_of(&mut self, dirty: bool) -> &mut List {
        if dirty {
            &mut self.dirty
        } else {
            &mut self.clean
        }
    }

    fn unlink(&mut self, id: u32) {
        let Run { prev, next, dirty, count, .. } = self.runs[id as usize];
        if prev != NONE {
            self.runs[prev as usize].next = next;
        }
        if next != NONE {
            self.runs[next as usize].prev = prev;
        }
        let list = self.list_of(dirty);
        if list.head == id {
            list.head = next;
        }
        if list.tail == id {
            list.tail = prev;
        }
        list.pages -= count;
    }

    /// Put run `id` (filed under its file) at the end of its list, merged into the last run if it continues
    /// it (same file, the next pages, the same dirtying time).
    fn push_back(&mut self, id: u32) {
        let run = self.runs[id as usize];
        let list = self.list_of(run.dirty);
        let tail = list.tail;
        list.pages += run.count;
        if tail != NONE {
            let last = self.runs[tail as usize];
            if last.file == run.file && last.end() == run.first && last.dirtied_at == run.dirtied_at {
                // The last run takes this one's pages.
                self.unfile_run(id);
                self.unfile_run(tail);
                self.runs[tail as usize].count += run.count;
                self.file_run(tail);
                self.free.push(id);
                return;
            }
            self.runs[tail as usize].next = id;
        }
        let list = self.list_of(run.dirty);
        if list.head == NONE {
            list.head = id;
        }
        list.tail = id;
        let r = &mut self.runs[id as usize];
        (r.prev, r.next) = (tail, NONE);
    }
}

/// Append the range `(first, count)` to ascending `ranges`, merged into the last if it continues it.
fn push_range(ranges: &mut Vec<(u64, u64)>, first: u64, count: u64) {
    match ranges.last_mut() {
        Some((start, n)) if *start + *n == first => *n += count,
        _ => ranges.push((first, count)),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

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

    /// Page-by-page bookkeeping, as the kernel keeps it (one entry per page in each list): the reference the
    /// runs must match in every answer.
    struct PerPage {
        capacity: u64,
        /// Oldest first.
        clean: Vec<PageKey>,
        dirty: Vec<(PageKey, Time)>,
        /// Per file: (page after the last read, window).
        readahead: HashMap<u32, (u64, u64)>,
    }

    impl PerPage {
        fn cached(&self, key: PageKey) -> bool {
            self.clean.contains(&key) || self.dirty.iter().any(|&(k, _)| k == key)
        }

        /// Reclaim the least recently used clean page if full (with none clean, the cache grows).
        fn make_room(&mut self) -> u64 {
            if (self.clean.len() + self.dirty.len()) as u64 >= self.capacity && !self.clean.is_empty() {
                self.clean.remove(0);
                return 1;
            }
            0
        }

        fn insert_clean(&mut self, file: u32, first: u64, count: u64) -> u64 {
            let mut reclaimed = 0;
            for key in (first..first + count).map(|p| (file, p)) {
                if !self.cached(key) {
                    reclaimed += self.make_room();
                    self.clean.push(key);
                }
            }
            reclaimed
        }

        fn write(&mut self, file: u32, first: u64, count: u64, now: Time) -> u64 {
            let mut newly = 0;
            for key in (first..first + count).map(|p| (file, p)) {
                if self.dirty.iter().any(|&(k, _)| k == key) {
                    continue;
                }
                match self.clean.iter().position(|&k| k == key) {
                    Some(i) => drop(self.clean.remove(i)),
                    None => drop(self.make_room()),
                }
                self.dirty.push((key, now));
                newly += 1;
            }
            newly
        }

        fn mark_clean(&mut self, file: u32, first: u64, count: u64) {
            for key in (first..first + count).map(|p| (file, p)) {
                if let Some(i) = self.dirty.iter().position(|&(k, _)| k == key) {
                    self.dirty.remove(i);
                    self.clean.push(key);
                }
            }
        }

        /// Hits become most recently used in page order; misses and the readahead window as ranges.
        fn read(&mut self, file: u32, first: u64, count: u64, file_pages: u64) -> ReadPlan {
            let end = (first + count).min(file_pages);
            let (next_page, window) = self.readahead.get(&file).copied().unwrap_or((0, 0));
            let sequential = first == next_page && first > 0 || first == 0 && window == 0 && count > 0;
            let (mut hit_pages, mut missing) = (0, Vec::new());
            for key in (first..end).map(|p| (file, p)) {
                if let Some(i) = self.clean.iter().position(|&k| k == key) {
                    let key = self.clean.remove(i);
                    self.clean.push(key);
                }
                if self.cached(key) {
                    hit_pages += 1;
                } else {
                    missing.push(key.1);
                }
            }
            let (mut next_page, mut window, mut readahead_pages) = (end, window, 0);
            if !missing.is_empty() && sequential {
                let max = 32;
                window = if window == 0 { (4 * count).min(max) } else { (2 * window).min(max) };
                let ahead_end = (end + window.saturating_sub(count)).min(file_pages);
                for page in (end..ahead_end).filter(|&p| !self.cached((file, p))) {
                    missing.push(page);
                    readahead_pages += 1;
                }
                next_page = ahead_end.max(end);
            }
            self.readahead.insert(file, (next_page, window));
            let mut fetch = Vec::new();
            for page in missing {
                push_range(&mut fetch, page, 1);
            }
            ReadPlan { hit_pages, fetch, readahead_pages }
        }

        fn writeback_batch(&self, max_pages: u64, dirtied_by: Time) -> Vec<(u32, u64, u64)> {
            let mut pages: Vec<PageKey> = self
                .dirty
                .iter()
                .take_while(|&&(_, at)| at <= dirtied_by)
                .take(max_pages as usize)
                .map(|&(k, _)| k)
                .collect();
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

        fn dirty_ranges_below(&self, file: u32, end: u64) -> Vec<(u64, u64)> {
            let mut pages: Vec<u64> =
                self.dirty.iter().filter(|&&((f, p), _)| f == file && p < end).map(|&((_, p), _)| p).collect();
            pages.sort_unstable();
            let mut out = Vec::new();
            for page in pages {
                push_range(&mut out, page, 1);
            }
            out
        }
    }

    #[test]
    fn runs_answer_every_call_as_page_by_page_bookkeeping_does() {
        // Small files and a small cache, so that runs split, merge, slide and get reclaimed all the time.
        let (files, file_pages) = (3u32, 48u64);
        for (case, capacity) in [(0, 40u64), (1, 12), (2, 100), (3, 5)] {
            let mut runs = cache(capacity);
            let mut pages = PerPage { capacity, clean: Vec::new(), dirty: Vec::new(), readahead: HashMap::new() };
            let mut rng = crate::engine::stream_rng(case, "page-cache-runs");
            for now in 1..4_000u64 {
                let file = rng.random_range(0..files);
                let first = rng.random_range(0..file_pages);
                let count = rng.random_range(1..=12u64);
                let what = format!("case {case}, call {now}");
                match rng.random_range(0..6) {
                    0 => {
                        let plan = runs.read(file, first, count, file_pages);
                        assert_eq!(plan, pages.read(file, first, count, file_pages), "{what}: read");
                        for (f, n) in plan.fetch {
                            assert_eq!(runs.insert_clean(file, f, n), pages.insert_clean(file, f, n), "{what}");
                        }
                    }
                    1 => assert_eq!(runs.insert_clean(file, first, count), pages.insert_clean(file, first, count)),
                    2 | 3 => {
                        let now = now / 4;
                        assert_eq!(runs.write(file, first, count, now), pages.write(file, first, count, now), "{what}");
                    }
                    4 => {
                        runs.mark_clean(file, first, count);
                        pages.mark_clean(file, first, count);
                    }
                    _ => {
                        let (max, by) = (rng.random_range(1..40u64), rng.random_range(0..now / 4 + 2));
                        let batch = runs.writeback_batch(max, by);
                        assert_eq!(batch, pages.writeback_batch(max, by), "{what}: writeback");
                        for (f, first, n) in batch {
                            runs.mark_clean(f, first, n);
                            pages.mark_clean(f, first, n);
                        }
                    }
                }
                // (Not the capacity: pages dirtied in a full cache and then cleaned stay over it, as in Linux
                // until reclaim; dirty throttling keeps a run from getting there.)
                let (_, clean_runs, _, dirty_runs) = runs.check_lists().unwrap_or_else(|e| panic!("{what}: {e}"));
                runs.check_runs(clean_runs + dirty_runs).unwrap_or_else(|e| panic!("{what}: {e}"));
                let oldest = pages.dirty.first().map(|&(_, at)| at);
                assert_eq!((runs.oldest_dirty_at(), runs.dirty_pages()), (oldest, pages.dirty.len() as u64), "{what}");
                assert_eq!(runs.cached_pages(), (pages.clean.len() + pages.dirty.len()) as u64, "{what}");
                let below = rng.random_range(0..file_pages + 1);
                assert_eq!(runs.dirty_ranges_below(file, below), pages.dirty_ranges_below(file, below), "{what}");
                assert_eq!(runs.dirty_ranges(file), pages.dirty_ranges_below(file, u64::MAX), "{what}");
                for page in 0..file_pages {
                    assert_eq!(runs.is_cached((file, page)), pages.cached((file, page)), "{what}: page {page}");
                }
            }
        }
    }

    #[test]
    fn scattered_pages_are_one_page_runs_found_by_hash_and_a_long_run_stays_in_the_ordered_map() {
        let mut c = cache(20_000);
        c.insert_clean(0, 0, 100);
        let mut rng = crate::engine::stream_rng(3, "page-cache-scattered");
        let mut pages = Vec::new();
        for _ in 0..5_000 {
            let page = rng.random_range(1_000..1_000_000u64);
            if c.insert_clean(0, page, 1) == 0 && !pages.contains(&page) {
                pages.push(page);
            }
        }
        let f = &c.files[0];
        assert_eq!(f.long_runs.len(), 1, "only the 100 pages are a run of more than one page");
        assert_eq!(f.single_runs.len(), pages.len());
        // The bitmaps answer every miss; every scattered page hits.
        for &page in &pages {
            let plan = c.read(0, page, 1, 1_000_000);
            assert_eq!((plan.hit_pages, plan.fetch.len()), (1, 0), "page {page}");
        }
        assert_eq!(c.read(0, 50, 100, 1_000_000).fetch, [(100, 50)]);
        c.check_invariants().unwrap();
    }

    #[test]
    fn a_long_sequential_write_is_one_run_and_a_commit_finds_its_ranges_in_a_few_steps() {
        let mut c = cache(1 << 20);
        // 4,096 writes of 32 pages: one run, one dirty range; a second file's backlog costs the first nothing.
        for i in 0..4_096 {
            c.write(1, i * 32, 32, i);
            c.write(2, i * 32, 32, 0);
        }
        let before = c.steps();
        assert_eq!(c.dirty_ranges(2), [(0, 4_096 * 32)]);
        assert_eq!(c.dirty_ranges_below(1, 100), [(0, 100)]);
        assert!(c.steps() - before <= 2, "{} steps", c.steps() - before);
        c.check_invariants().unwrap();
    }
}
