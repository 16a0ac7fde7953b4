//! FlashShare's SSD cache (`device.cache.read_policy = "flashshare"`): partitions re-divided by the
//! classes' accesses, ghost caches choosing the read-ahead, and what a run reports about them.

use crate::common;

use common::{load_error, run, scenario_with};

/// A latency-critical 4 KiB random reader (QD1) over 64 MiB beside a 16 KiB sequential reader (QD4) on
/// `znand-ull` with a 64 MiB cache (2 KiB pages: 2048 sets of 16 ways).
const TWO_READERS: &str = r#"
seed = 3
[run]
duration = "200ms"
warmup = "40ms"
[device]
preset = "znand-ull"
[device.cache]
capacity_bytes = "64MiB"
flashshare_epoch_accesses = 16384
[[flow]]
name = "online"
class = "critical"
rw = "randread"
bs = "4k"
size = "64MiB"
iodepth = 1
[[flow]]
name = "offline"
rw = "read"
bs = "16k"
offset = "1GiB"
iodepth = 4
"#;

const FLASHSHARE: &str = "device.cache.read_policy=flashshare";
const NO_PREFETCH: &str = "device.cache.flashshare_prefetch_pages=[0]";

#[test]
fn a_sequential_reader_hits_more_with_read_ahead_and_the_ghosts_choose_the_largest() {
    let without = run(&scenario_with(TWO_READERS, &[FLASHSHARE, NO_PREFETCH]));
    let with = run(&scenario_with(TWO_READERS, &[FLASHSHARE]));
    let (a, b) = (without.device.read_cache.as_ref().unwrap(), with.device.read_cache.as_ref().unwrap());
    assert_eq!((a.prefetch_reads, a.normal.prefetch_pages), (0, 0));
    // Sequential 16 KiB reads are 8 pages: no read-ahead, no hit; 128 pages ahead, most pages are in DRAM
    // (or on their way) before their read arrives.
    assert_eq!(a.normal.read_page_hits, 0);
    let hit_rate = b.normal.hit_rate.unwrap();
    assert!(hit_rate > 0.6, "{hit_rate}");
    assert_eq!(b.normal.prefetch_pages, 128, "the ghost reading 128 pages ahead misses least");
    assert!(b.split_series.iter().skip(1).all(|s| s.normal_prefetch_pages == 128), "{:?}", b.split_series);
    assert!(b.prefetch_reads > b.normal.read_page_lookups / 2, "read-ahead costs flash reads: {}", b.prefetch_reads);
    // The sequential reader's pages come from DRAM: it runs faster.
    assert!(with.flows[1].iops > without.flows[1].iops, "{} vs {}", with.flows[1].iops, without.flows[1].iops);
    // The device's overall hit rate is the two classes' together.
    let lookups = b.critical.read_page_lookups + b.normal.read_page_lookups;
    let hits = b.critical.read_page_hits + b.normal.read_page_hits;
    assert!((with.device.cache_hit_rate.unwrap() - hits as f64 / lookups as f64).abs() < 1e-12);
}

#[test]
fn the_ways_follow_the_classes_accesses() {
    let r = run(&scenario_with(TWO_READERS, &[FLASHSHARE]));
    let rc = r.device.read_cache.as_ref().unwrap();
    // The sequential reader looks up about ten times the critical reader's pages: 16 x 1/11 rounds to 1.
    let share =
        rc.critical.read_page_lookups as f64 / (rc.critical.read_page_lookups + rc.normal.read_page_lookups) as f64;
    assert!(share < 0.1, "{share}");
    assert_eq!((rc.critical.ways, rc.normal.ways), (1, 15));
    assert!(rc.epochs >= 5 && rc.split_series.len() as u64 == rc.epochs, "{} {:?}", rc.epochs, rc.split_series);
    assert!(rc.split_series.windows(2).all(|w| w[0].at_ns < w[1].at_ns));
    assert!(rc.split_series.iter().all(|s| s.critical_ways + s.normal_ways == 16));

    // Slow the sequential reader to 1000 reads/s (8000 pages/s) against ~50000 critical pages/s: the split
    // turns around.
    let r = run(&scenario_with(TWO_READERS, &[FLASHSHARE, "flow.offline.rate_iops=1000"]));
    let rc = r.device.read_cache.as_ref().unwrap();
    let share =
        rc.critical.read_page_lookups as f64 / (rc.critical.read_page_lookups + rc.normal.read_page_lookups) as f64;
    let expected = (16.0 * share).round() as u32;
    assert!(
        (13..=15).contains(&rc.critical.ways) && rc.critical.ways.abs_diff(expected) <= 1,
        "{} vs {share}",
        rc.critical.ways
    );
}

#[test]
fn the_shared_policy_reports_nothing_new() {
    let r = run(&scenario_with(TWO_READERS, &[]));
    assert!(r.device.read_cache.is_none());
    let json = serde_json::to_string(&r).unwrap();
    assert!(!json.contains("read_cache") && !json.contains("split_series"));
}

#[test]
fn flashshare_runs_are_deterministic() {
    let a = run(&scenario_with(TWO_READERS, &[FLASHSHARE]));
    let b = run(&scenario_with(TWO_READERS, &[FLASHSHARE]));
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
}

#[test]
fn bad_values_are_refused_at_their_key() {
    for (set, key) in [
        ("device.cache.read_policy=lru", "device.cache.read_policy"),
        ("device.cache.read_policy=1", "device.cache.read_policy"),
        ("device.cache.flashshare_epoch_accesses=0", "device.cache.flashshare_epoch_accesses"),
        ("device.cache.flashshare_epoch_accesses=-5", "device.cache.flashshare_epoch_accesses"),
        ("device.cache.flashshare_prefetch_pages=[]", "device.cache.flashshare_prefetch_pages"),
        ("device.cache.flashshare_prefetch_pages=[16, 4]", "device.cache.flashshare_prefetch_pages"),
        ("device.cache.flashshare_prefetch_pages=[0, 5000]", "device.cache.flashshare_prefetch_pages"),
        ("device.cache.flashshare_prefetch_pages=4", "device.cache.flashshare_prefetch_pages"),
    ] {
        let err = load_error(TWO_READERS, &[set]);
        assert!(err.contains(&format!("`{key}`")), "{set}: {err}");
    }
    // A flashshare cache of one page has no two partitions.
    let err = load_error(TWO_READERS, &[FLASHSHARE, "device.cache.capacity_bytes=\"2KiB\""]);
    assert!(err.contains("`device.cache.capacity_bytes`"), "{err}");
}
