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
//!
//! Which clean pages stay is a [`ReadCachePolicy`] (`read_policy`): `shared` (one LRU for every class,
//! `shared.rs`), `flashshare` (FlashShare's partitioned ways and ghost-cache prefetch, `flashshare.rs`) or
//! `uniform` (the same cache unpartitioned: the read-ahead without the split, FlashShare's Fig. 18 baselines).
//! A policy sees each page's criticality class and may ask for pages to be read ahead of a request;
//! the prefetch reads in flight are kept here (`prefetch.rs`).

mod flashshare;
mod ghost;
mod prefetch;
mod shared;

use rustc_hash::FxHashMap;

use crate::config::device::{BufferSharing, CacheConfig};
use crate::engine::Time;
use crate::request::{Criticality, ReqId};

pub use flashshare::SplitSample;
use prefetch::InFlightPrefetches;

/// Ways per set of the read cache.
pub const WAYS: usize = 16;

/// Criticality classes, as indices: critical 0, normal 1 (the order of the results' `by_class`).
pub const CLASSES: usize = 2;

pub fn class_index(class: Criticality) -> usize {
    (class != Criticality::Critical) as usize
}

/// Which clean pages the read cache keeps, for whom, and what it reads ahead. Pages are logical pages;
/// `class` is a [`class_index`].
pub trait ReadCachePolicy {
    /// Is `lpa` cached for `class`? A hit refreshes its recency.
    fn lookup(&mut self, lpa: u64, class: usize) -> bool;
    /// Is `lpa` cached for `class` (no change)?
    fn contains(&self, lpa: u64, class: usize) -> bool;
    /// Keep clean page `lpa` for `class`. With `grow = false` the pages held may not grow: it replaces a
    /// page, or is not kept.
    fn insert(&mut self, lpa: u64, class: usize, grow: bool);
    /// Drop every copy of `lpa` (it is being rewritten).
    fn remove(&mut self, lpa: u64);
    /// Drop one clean page near `lpa` to give its DRAM to a page `class` is writing.
    fn evict_near(&mut self, lpa: u64, class: usize);
    /// Clean pages held.
    fn pages_held(&self) -> u64;
    /// `class` wrote page `lpa` (an access, for policies that count them).
    fn written(&mut self, _lpa: u64, _class: usize) {}
    /// A read of `class` looked up pages `first..end` at `now` (`missed`: some page was not in DRAM):
    /// how many pages after `end` to read ahead.
    fn read_done(&mut self, _first: u64, _end: u64, _class: usize, _missed: bool, _now: Time) -> u64 {
        0
    }
    /// Epochs ended so far (0 for a policy without epochs).
    fn epochs(&self) -> u64 {
        0
    }
    /// What the policy reports beyond hit rates; `None` keeps the results as they were before policies.
    fn state(&self) -> Option<PolicyState<'_>> {
        None
    }
}

/// A policy's current state, for the results.
pub struct PolicyState<'a> {
    /// Ways of each class's partition (critical, normal).
    pub ways: [u32; CLASSES],
    /// Pages each class reads ahead of a read that missed.
    pub prefetch_pages: [u32; CLASSES],
    /// The split and the prefetch sizes at the end of epochs, oldest first (bounded).
    pub series: &'a [SplitSample],
}

type MakePolicy = fn(&CacheConfig, u64) -> Box<dyn ReadCachePolicy>;

/// Every read-cache policy by its `device.cache.read_policy` name, and how to build one of a capacity in
/// pages.
const POLICIES: &[(&str, MakePolicy)] = &[
    ("shared", |_, pages| Box::new(shared::SharedLru::new(pages, WAYS))),
    ("flashshare", |cfg, pages| Box::new(flashshare::FlashShare::new(cfg, pages, WAYS))),
    ("uniform", |cfg, pages| Box::new(flashshare::FlashShare::uniform(cfg, pages, WAYS))),
];

/// Names `device.cache.read_policy` accepts.
pub fn read_policy_names() -> Vec<&'static str> {
    POLICIES.iter().map(|(name, _)| *name).collect()
}

/// A page buffered for its programs, and who wrote it last.
#[derive(Debug, Clone, Copy)]
struct Buffered {
    programs: u32,
    class: u8,
}

/// Cumulative read-cache counters, per class where it matters.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadCacheCounters {
    pub page_lookups: [u64; CLASSES],
    pub page_hits: [u64; CLASSES],
    /// Flash reads issued to read pages ahead.
    pub prefetch_reads: u64,
    /// Demand pages that found their page being read ahead and waited for it (lookups that missed, but
    /// cost no flash read of their own).
    pub prefetch_joins: u64,
    pub epochs: u64,
}

pub struct DataCache {
    enabled: bool,
    cache_reads: bool,
    capacity_pages: usize,
    /// Pages held for reading, as the policy keeps them.
    clean: Box<dyn ReadCachePolicy>,
    policy_name: &'static str,
    /// Buffered pages with programs outstanding: a pool, so a write never waits for a particular set.
    dirty: FxHashMap<u64, Buffered>,
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
    counters: ReadCacheCounters,
    /// Some page of the read being looked up missed (reset by `read_done`).
    request_missed: bool,
    prefetches: InFlightPrefetches,
}

impl DataCache {
    /// A cache for a run of `flows` flows (the number of write-buffer partitions when split per flow) on a
    /// drive of `planes` planes (`destage_limit_pages_per_plane` is per plane). Errors name the key at fault.
    pub fn new(cfg: &CacheConfig, page_bytes: u64, planes: u32, flows: usize) -> Result<Self, String> {
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
        let (policy_name, make) = POLICIES
            .iter()
            .find(|(name, _)| *name == cfg.read_policy)
            .ok_or_else(|| format!("device.cache.read_policy: unknown policy \"{}\"", cfg.read_policy))?;
        Ok(DataCache {
            enabled: cfg.enabled && capacity_pages > 0,
            cache_reads: cfg.cache_reads,
            capacity_pages,
            clean: make(cfg, capacity_pages as u64),
            policy_name,
            dirty: FxHashMap::default(),
            pending_programs: 0,
            pending_by_partition: vec![0; partitions],
            partition_pages: (capacity_pages / partitions).min(destage_limit),
            max_pending_programs: 0,
            read_page_lookups: 0,
            read_page_hits: 0,
            counters: ReadCacheCounters::default(),
            request_missed: false,
            prefetches: InFlightPrefetches::default(),
        })
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

    /// Is `lpa` in DRAM for a read of `class`? Counts toward the hit rate; a hit refreshes its recency.
    pub fn read_lookup(&mut self, lpa: u64, class: Criticality) -> bool {
        let class = class_index(class);
        self.read_page_lookups += 1;
        self.counters.page_lookups[class] += 1;
        let hit = self.enabled
            && (self.clean.lookup(lpa, class) || (!self.dirty.is_empty() && self.dirty.contains_key(&lpa)));
        if hit {
            self.read_page_hits += 1;
            self.counters.page_hits[class] += 1;
        } else {
            self.request_missed = true;
        }
        hit
    }

    /// A read of `class` looked up its pages `first..end` at `now`: the pages to read ahead of it (the
    /// caller reads those that `wants_prefetch`).
    pub fn read_done(&mut self, first: u64, end: u64, class: Criticality, now: Time) -> std::ops::Range<u64> {
        let missed = std::mem::take(&mut self.request_missed);
        if !self.enabled || !self.cache_reads {
            return end..end;
        }
        let pages = self.clean.read_done(first, end, class_index(class), missed, now);
        self.counters.epochs = self.clean.epochs();
        end..end.saturating_add(pages)
    }

    /// Keep a clean page in the read cache, within the DRAM buffered writes leave free.
    fn keep(&mut self, lpa: u64, class: usize) {
        let room = (self.clean.pages_held() as usize + self.pending_programs) < self.capacity_pages;
        self.clean.insert(lpa, class, room);
    }

    /// Keep a page just read from flash for a read of `class`.
    pub fn fill_after_read(&mut self, lpa: u64, class: Criticality) {
        if self.enabled && self.cache_reads && !self.dirty.contains_key(&lpa) {
            self.keep(lpa, class_index(class));
        }
    }

    /// Should `lpa` be read ahead for `class`: not in DRAM and not being read ahead already?
    pub fn wants_prefetch(&self, lpa: u64, class: Criticality) -> bool {
        !self.clean.contains(lpa, class_index(class)) && !self.dirty.contains_key(&lpa) && !self.prefetches.has(lpa)
    }

    /// A flash read of `lpa` ahead of reads of `class` started.
    pub fn prefetch_started(&mut self, lpa: u64, class: Criticality) {
        self.counters.prefetch_reads += 1;
        self.prefetches.start(lpa, class_index(class));
    }

    /// If `lpa` is being read ahead, let read `req` wait for it instead of reading it again.
    pub fn join_prefetch(&mut self, lpa: u64, req: ReqId) -> bool {
        let joined = self.prefetches.join(lpa, req);
        self.counters.prefetch_joins += joined as u64;
        joined
    }

    /// The read ahead of `lpa` finished: keep the page (unless rewritten meanwhile) and return the reads
    /// that waited for it.
    pub fn prefetch_done(&mut self, lpa: u64) -> Vec<ReqId> {
        let done = self.prefetches.finish(lpa);
        if !done.stale {
            self.fill_after_read(lpa, if done.class == 0 { Criticality::Critical } else { Criticality::Normal });
        }
        done.waiters
    }

    /// Can a write of `pages` pages be buffered in `partition` now? Every pending program holds a page of
    /// its partition's space.
    pub fn can_buffer(&self, partition: usize, pages: usize) -> bool {
        self.pending_by_partition[partition] + pages <= self.partition_pages
    }

    /// Buffer one page of a host write of `class` in `partition` (call only after `can_buffer`); its
    /// program is now pending.
    pub fn buffer_write(&mut self, lpa: u64, partition: usize, class: Criticality) {
        let class = class_index(class);
        self.clean.remove(lpa);
        self.clean.written(lpa, class);
        self.prefetches.rewritten(lpa);
        let buffered = self.dirty.entry(lpa).or_insert(Buffered { programs: 0, class: class as u8 });
        buffered.programs += 1;
        buffered.class = class as u8;
        self.pending_programs += 1;
        self.max_pending_programs = self.max_pending_programs.max(self.pending_programs);
        self.pending_by_partition[partition] += 1;
        // The buffered page takes DRAM from the read cache: evict a clean page (from the same set, the
        // cheapest stand-in for the LRU one) while clean pages and pending programs exceed the capacity.
        if self.clean.pages_held() as usize + self.pending_programs > self.capacity_pages {
            self.clean.evict_near(lpa, class);
        }
    }

    /// One program of a page buffered in `partition` finished; with none left the page becomes a clean
    /// cached page of the class that wrote it last.
    pub fn destaged(&mut self, lpa: u64, partition: usize) {
        let b = self.dirty.get_mut(&lpa).expect("destage of a page that is not buffered");
        b.programs -= 1;
        let (left, class) = (b.programs, b.class as usize);
        self.pending_programs -= 1;
        self.pending_by_partition[partition] -= 1;
        if left == 0 {
            self.dirty.remove(&lpa);
            if self.cache_reads {
                self.keep(lpa, class);
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

    /// Cumulative per-class counters.
    pub fn counters(&self) -> ReadCacheCounters {
        self.counters
    }

    /// `device.cache.read_policy`.
    pub fn policy_name(&self) -> &'static str {
        self.policy_name
    }

    /// The policy's state, if it reports one.
    pub fn policy_state(&self) -> Option<PolicyState<'_>> {
        self.clean.state()
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
        policy_cache(pages, write_buffer_sharing, flows, "shared")
    }

    fn config(pages: u64, write_buffer_sharing: BufferSharing, policy: &str) -> CacheConfig {
        CacheConfig {
            enabled: true,
            capacity_bytes: Bytes(pages * 4096),
            dram_access_ns: Nanos::from_ns(100),
            cache_reads: true,
            write_buffer_sharing,
            destage_limit_pages_per_plane: 0,
            power_loss_protection: false,
            read_policy: policy.into(),
            flashshare_epoch_accesses: 1024,
            flashshare_prefetch_pages: vec![0, 4, 16, 64, 128],
        }
    }

    fn policy_cache(pages: u64, write_buffer_sharing: BufferSharing, flows: usize, policy: &str) -> DataCache {
        DataCache::new(&config(pages, write_buffer_sharing, policy), 4096, 1, flows).unwrap()
    }

    const NORMAL: Criticality = Criticality::Normal;
    const CRITICAL: Criticality = Criticality::Critical;

    #[test]
    fn pending_programs_bound_the_buffer() {
        let mut c = cache(64);
        assert!(c.can_buffer(0, 32));
        for lpa in 0..32 {
            c.buffer_write(lpa, 0, NORMAL);
            c.buffer_write(lpa, 0, NORMAL); // a rewrite: a second program
        }
        assert_eq!(c.pending_programs(), 64);
        assert!(!c.can_buffer(0, 1), "every pending program holds a page, rewrites too");
        c.destaged(0, 0);
        assert!(c.can_buffer(0, 1));
        assert!(c.read_lookup(5, NORMAL), "pages waiting for their program are read from DRAM");
        assert!(!c.read_lookup(1000, NORMAL));
        assert_eq!((c.read_page_hits, c.read_page_lookups), (1, 2));
    }

    #[test]
    fn reads_use_the_dram_writes_leave_free() {
        let mut c = cache(16); // one set of 16 ways
        for lpa in 0..16 {
            c.buffer_write(lpa, 0, NORMAL);
        }
        c.fill_after_read(100, NORMAL);
        assert!(!c.read_lookup(100, NORMAL), "no DRAM left for reads");
        c.destaged(3, 0);
        c.destaged(4, 0);
        assert!(c.read_lookup(3, NORMAL) && c.read_lookup(4, NORMAL), "programmed pages stay cached");
        c.fill_after_read(100, NORMAL); // DRAM is full: it replaces page 3, the least recently read clean page
        assert!(c.read_lookup(100, NORMAL) && !c.read_lookup(3, NORMAL) && c.read_lookup(4, NORMAL));
    }

    #[test]
    fn a_split_buffer_bounds_each_flow_by_its_own_part() {
        let mut c = split_cache(64, BufferSharing::PerFlow, 4);
        assert_eq!((c.partitions(), c.partition_pages()), (4, 16));
        let part = c.partition(2);
        for lpa in 0..16 {
            assert!(c.can_buffer(part, 1));
            c.buffer_write(lpa, part, NORMAL);
        }
        assert!(!c.can_buffer(part, 1), "flow 2's part is full");
        assert!(c.can_buffer(c.partition(0), 16), "flow 0's part is untouched");
        c.destaged(7, part);
        assert!(c.can_buffer(part, 1) && !c.can_buffer(part, 2));
        assert_eq!(c.pending_programs(), 15);

        let shared = split_cache(64, BufferSharing::Shared, 4);
        assert_eq!((shared.partitions(), shared.partition_pages(), shared.partition(3)), (1, 64, 0));
    }

    #[test]
    fn an_unknown_policy_is_refused_by_name() {
        let bad = config(16, BufferSharing::Shared, "lru");
        let err = DataCache::new(&bad, 4096, 1, 1).err().expect("unknown policy");
        assert!(err.contains("device.cache.read_policy") && err.contains("lru"), "{err}");
        assert_eq!(read_policy_names(), ["shared", "flashshare", "uniform"]);
    }

    #[test]
    fn the_shared_policy_reads_nothing_ahead_and_ignores_the_class() {
        let mut c = cache(64);
        c.fill_after_read(7, CRITICAL);
        assert!(c.read_lookup(7, NORMAL), "one LRU for every class");
        assert!(!c.read_lookup(8, NORMAL));
        assert!(c.read_done(8, 9, NORMAL, 0).is_empty());
        assert!(c.policy_state().is_none() && c.policy_name() == "shared");
        let counters = c.counters();
        assert_eq!((counters.page_lookups, counters.page_hits), ([0, 2], [0, 1]));
    }

    #[test]
    fn a_read_ahead_fills_the_cache_for_its_class_and_lets_reads_wait_for_it() {
        let mut c = policy_cache(4096, BufferSharing::Shared, 1, "flashshare");
        assert!(!c.read_lookup(10, NORMAL));
        assert!(c.read_done(10, 11, NORMAL, 0).is_empty(), "the first ghost size (0) until an epoch ends");
        assert!(c.wants_prefetch(11, NORMAL));
        c.prefetch_started(11, NORMAL);
        c.prefetch_started(12, NORMAL);
        assert!(!c.wants_prefetch(11, NORMAL), "already on its way");
        assert!(!c.read_lookup(11, NORMAL) && c.join_prefetch(11, ReqId(3)), "a read waits for it");
        assert!(c.read_done(11, 12, NORMAL, 0).is_empty());
        assert_eq!(c.prefetch_done(11), vec![ReqId(3)]);
        assert!(c.read_lookup(11, NORMAL) && !c.read_lookup(11, CRITICAL), "kept for its class only");
        c.buffer_write(12, 0, NORMAL); // rewritten while being read ahead: the old data is dropped
        c.destaged(12, 0);
        assert!(c.prefetch_done(12).is_empty());
        assert!(c.read_lookup(12, NORMAL), "the written page, not the stale read");
        let counters = c.counters();
        assert_eq!((counters.prefetch_reads, counters.prefetch_joins), (2, 1));
        assert!(c.policy_state().is_some());
    }
}
