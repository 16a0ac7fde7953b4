use super::*;
use crate::config::units::{Bytes, Nanos};

const CRITICAL: usize = 0;
const NORMAL: usize = 1;

/// A FlashShare cache of `pages` pages (16 pages: one set of 16 ways) with an epoch of `epoch` accesses.
fn cache(pages: u64, epoch: u32, prefetch_pages: &[u32]) -> FlashShare {
    FlashShare::new(&config(pages, epoch, prefetch_pages), pages, 16)
}

fn config(pages: u64, epoch: u32, prefetch_pages: &[u32]) -> CacheConfig {
    CacheConfig {
        enabled: true,
        capacity_bytes: Bytes(pages * 4096),
        dram_access_ns: Nanos::from_ns(100),
        cache_reads: true,
        write_buffer_sharing: crate::config::device::BufferSharing::Shared,
        destage_limit_pages_per_plane: 0,
        power_loss_protection: false,
        read_policy: "flashshare".into(),
        flashshare_epoch_accesses: epoch,
        flashshare_prefetch_pages: prefetch_pages.to_vec(),
    }
}

/// `n` one-page reads of `class` (pages from `first` on), each closing with `read_done`.
fn reads(c: &mut FlashShare, class: usize, first: u64, n: u64) {
    for lpa in first..first + n {
        let hit = c.lookup(lpa, class);
        c.read_done(lpa, lpa + 1, class, !hit, 0);
    }
}

#[test]
fn ways_are_redivided_by_each_epochs_accesses() {
    let mut c = cache(16, 16, &[0]);
    assert_eq!(c.state().unwrap().ways, [8, 8], "the first epoch splits evenly");
    reads(&mut c, CRITICAL, 0, 12);
    reads(&mut c, NORMAL, 100, 4);
    // 12 of 16 accesses were critical: round(16 x 12 / 16) = 12 ways.
    assert_eq!(c.state().unwrap().ways, [12, 4]);
    reads(&mut c, CRITICAL, 0, 3);
    for lpa in 200..213 {
        c.written(lpa, NORMAL); // writes count as accesses too
    }
    reads(&mut c, NORMAL, 100, 0);
    assert_eq!(c.state().unwrap().ways, [12, 4], "an epoch ends at a read");
    c.read_done(100, 100, NORMAL, false, 7);
    // 3 of 16: round(3) = 3 ways.
    assert_eq!(c.state().unwrap().ways, [3, 13]);
    reads(&mut c, NORMAL, 100, 16);
    assert_eq!(c.state().unwrap().ways, [1, 15], "a class without accesses keeps one way");
    let series = &c.state().unwrap().series;
    assert_eq!(series.iter().map(|s| s.critical_ways).collect::<Vec<_>>(), [12, 3, 1]);
    assert_eq!(series[1].at_ns, 7);
}

#[test]
fn a_handed_over_way_stays_readable_by_its_old_owner_until_the_new_owner_fills_it() {
    let mut c = cache(16, 16, &[0]);
    for lpa in 0..8 {
        c.insert(lpa, CRITICAL, true); // the critical half: ways 0..8
    }
    assert!((0..8).all(|lpa| c.contains(lpa, CRITICAL) && !c.contains(lpa, NORMAL)), "a class sees its own pages");
    reads(&mut c, NORMAL, 100, 16); // all accesses normal: critical keeps one way
    assert_eq!(c.state().unwrap().ways, [1, 15]);
    assert!((0..8).all(|lpa| c.lookup(lpa, CRITICAL)), "ways 1..8 are normal's now, but still readable");
    // The normal partition fills its empty ways (8..16) first, then the least recent line of its ways: the
    // critical pages in ways 1..8, least recently used first (all were just hit, in order 0..8).
    for lpa in 200..208 {
        c.insert(lpa, NORMAL, true);
    }
    assert!((0..8).all(|lpa| c.contains(lpa, CRITICAL)), "empty ways went first");
    c.insert(208, NORMAL, true);
    assert!(!c.contains(1, CRITICAL) && c.contains(2, CRITICAL), "the new owner wrote over page 1's way");
    // The critical class may no longer write into a handed-over way: its fills replace its one way only.
    c.insert(50, CRITICAL, true);
    assert!(!c.contains(0, CRITICAL) && c.contains(50, CRITICAL));
    assert!((2..8).all(|lpa| c.contains(lpa, CRITICAL)), "its read-only pages stay");
    assert_eq!(c.pages_held(), 16);
    c.remove(3);
    assert!(!c.contains(3, CRITICAL));
    assert_eq!(c.pages_held(), 15);
}

#[test]
fn without_room_a_page_replaces_one_of_its_partition_or_is_not_kept() {
    let mut c = cache(16, 16, &[0]);
    c.insert(1, NORMAL, false);
    assert!(!c.contains(1, NORMAL) && c.is_empty_for_tests(), "an empty partition takes nothing without room");
    c.insert(1, NORMAL, true);
    c.insert(2, NORMAL, false);
    assert!(c.contains(2, NORMAL) && !c.contains(1, NORMAL), "it replaced the partition's only page");
    c.insert(3, CRITICAL, true);
    c.evict_near(3, NORMAL);
    assert!(c.contains(3, CRITICAL) && !c.contains(2, NORMAL), "a writer's own partition gives DRAM first");
    c.evict_near(3, NORMAL);
    assert!(c.is_empty_for_tests(), "then the other's");
}

#[test]
fn the_ghost_that_misses_least_sets_the_read_ahead() {
    // A sequential reader: after an epoch the partition reads 128 pages ahead of a miss.
    let mut c = cache(4096, 1024, &[0, 4, 16, 64, 128]);
    assert_eq!(c.read_done(0, 2, NORMAL, true, 0), 0, "the first size until an epoch ends");
    for first in (2..2048).step_by(2) {
        let missed = !c.lookup(first, NORMAL) | !c.lookup(first + 1, NORMAL);
        c.read_done(first, first + 2, NORMAL, missed, 0);
    }
    assert_eq!(c.state().unwrap().prefetch_pages, [0, 128]);
    assert_eq!(c.read_done(5000, 5002, NORMAL, true, 0), 128, "a read that missed reads 128 pages ahead");
    assert_eq!(c.read_done(5002, 5004, NORMAL, false, 0), 0, "a read that hit reads nothing ahead");

    // A random reader of scattered pages that fit in its half of the cache: reading ahead only pushes
    // them out, the smallest size wins.
    let mut c = cache(4096, 4096, &[0, 4, 16, 64, 128]);
    let mut x: u64 = 99;
    for _ in 0..4096 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let lpa = (x >> 33) % 1024 * 1000;
        let hit = c.lookup(lpa, CRITICAL);
        c.read_done(lpa, lpa + 1, CRITICAL, !hit, 0);
    }
    assert_eq!(c.epochs(), 1);
    assert_eq!(c.state().unwrap().prefetch_pages, [0, 0]);
}

#[test]
fn the_split_series_stays_bounded_and_spans_the_run() {
    let mut c = cache(16, 16, &[0]);
    for epoch in 0..3 * MAX_SPLIT_SAMPLES as u64 {
        for _ in 0..16 {
            c.lookup(1, CRITICAL);
        }
        c.read_done(1, 1, CRITICAL, false, epoch);
    }
    let series = c.state().unwrap().series;
    assert!(series.len() <= MAX_SPLIT_SAMPLES && series.len() > MAX_SPLIT_SAMPLES / 4, "{}", series.len());
    assert_eq!(series[0].at_ns, 0);
    assert!(series.last().unwrap().at_ns >= 3 * MAX_SPLIT_SAMPLES as u64 - 4, "{:?}", series.last());
    assert!(series.windows(2).all(|w| w[1].at_ns - w[0].at_ns == series[1].at_ns), "evenly spaced");
}

#[test]
fn the_uniform_cache_shares_every_way_and_one_read_ahead_between_the_classes() {
    let mut c = FlashShare::uniform(&config(16, 16, &[0, 4]), 16, 16);
    assert_eq!(c.state().unwrap().ways, [16, 16]);
    // A page one class filled is the other's too.
    c.insert(5, NORMAL, true);
    assert!(c.lookup(5, CRITICAL));
    // All 16 ways take pages of one class: none is kept back for the other.
    for lpa in 100..116 {
        c.insert(lpa, CRITICAL, true);
    }
    assert!(c.contains(100, NORMAL) && c.contains(115, NORMAL) && !c.contains(5, NORMAL), "LRU over every way");
    // Epochs never re-divide; a sequential stream of either class picks the larger read-ahead for both.
    for epoch in 0..4 {
        reads(&mut c, if epoch % 2 == 0 { NORMAL } else { CRITICAL }, 1000 + 16 * epoch, 16);
    }
    let state = c.state().unwrap();
    assert_eq!(state.ways, [16, 16]);
    assert_eq!(state.prefetch_pages, [4, 4]);
    assert!(state.series.iter().all(|s| s.critical_ways == 16 && s.normal_ways == 16));
}
