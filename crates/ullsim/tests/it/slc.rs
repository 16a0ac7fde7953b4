//! The SLC cache (`device.slc`, `tlc-consumer`): a sustained write runs at SLC speed until the region fills and
//! then at the post-cache speed; idleness folds the region empty and restores SLC speed; the region shrinks as
//! the drive fills; the FTL's block accounting holds throughout.
//!
//! The drive is `tlc-consumer` (its dies, planes, channels and timings) with 64 blocks per plane instead of
//! 2,731 (24 GiB raw) and a 512 MiB region (one static and three dynamic SLC blocks per plane), so a run
//! crosses the region in ~100 ms.

use crate::common;

use common::{run, scenario_with};
use ullsim::{RunResults, Scenario};

/// `tlc-consumer` shrunk as the module doc says, fresh (nothing written), with a zero-cost host, then `flows`.
fn small_consumer(duration: &str, flows: &str, extra: &[&str]) -> Scenario {
    let text = format!(
        r#"
seed = 1
[run]
duration = "{duration}"
warmup = "0ms"
check_invariants = true
[metrics]
timeseries_interval = "10ms"
{host}
[device]
preset = "tlc-consumer"
[device.flash]
blocks_per_plane = 64
[device.ftl]
precondition = "none"
[device.cache]
capacity_bytes = "8MiB"
[device.slc]
static_bytes = "128MiB"
dynamic_max_bytes = "384MiB"
{flows}
"#,
        host = common::ZERO_COST_HOST,
    );
    scenario_with(&text, extra)
}

/// One sequential writer of 1 MiB writes at QD4.
const WRITER: &str = "[[flow]]\nname = \"w\"\nrw = \"write\"\nbs = \"1m\"\niodepth = 4\n";

/// Each 10 ms interval of flow `flow`: (bytes written before it ends, bandwidth in it).
fn intervals(r: &RunResults, flow: usize) -> Vec<(f64, f64)> {
    let ts = r.timeseries.as_ref().expect("a time series");
    let seconds = ts.interval_ns as f64 / 1e9;
    let mut written = 0.0;
    ts.flows[flow]
        .bandwidth_bytes_per_s
        .iter()
        .map(|&b| {
            written += b * seconds;
            (written, b)
        })
        .collect()
}

#[test]
fn a_sustained_write_runs_at_slc_speed_until_the_region_fills_then_at_the_post_cache_speed() {
    let s = small_consumer("300ms", WRITER, &[]);
    let (hi, flash) = (&s.device.host_interface, &s.device.flash);
    let planes = (flash.channels * flash.chips_per_channel * flash.dies_per_chip * flash.planes_per_die) as f64;
    // The TLC program rate of every plane (2.33 GB/s): the most a drive without the cache writes.
    let tlc = planes * flash.page_bytes.0 as f64 / (flash.program_ns.0 as f64 / 1e9);
    let r = run(&s);
    let slc = r.device.slc.as_ref().expect("SLC figures");
    let region = slc.region_bytes as f64;
    assert_eq!(region, 512.0 * 1024.0 * 1024.0, "an empty drive has the whole region");
    let buffer = s.device.cache.capacity_bytes.0 as f64;
    let series = intervals(&r, 0);
    for (i, &(written, bandwidth)) in series.iter().enumerate() {
        println!("{:>4} ms: {:6.0} MiB written, {:.3} GB/s", (i + 1) * 10, written / (1 << 20) as f64, bandwidth / 1e9);
    }
    // In the cache: the 5.0 GB/s write path (the SLC programs of 64 planes could take ~8 GB/s), from the
    // second interval (the first holds the queue's start).
    let in_cache: Vec<f64> = series[1..].iter().filter(|(w, _)| *w < 0.95 * region).map(|&(_, b)| b).collect();
    assert!(in_cache.len() >= 8, "~100 ms in the cache: {} intervals", in_cache.len());
    assert!(
        in_cache.iter().all(|&b| b > 0.95 * hi.max_write_bytes_per_s),
        "SLC speed until the region fills: {in_cache:?}"
    );
    // After it (and the write buffer) filled: TLC programs shared with folding, well below the TLC rate.
    let after: Vec<f64> =
        series.iter().filter(|(w, _)| *w > region + buffer + 32e6).map(|&(_, b)| b).collect::<Vec<_>>();
    assert!(after.len() >= 10, "the run goes on after the cache: {} intervals", after.len());
    let post = after.iter().sum::<f64>() / after.len() as f64;
    println!("post-cache mean {:.3} GB/s; TLC program rate {:.3} GB/s", post / 1e9, tlc / 1e9);
    assert!(post > 0.4 * tlc && post < 0.85 * tlc, "post-cache {post:.3e} B/s against TLC {tlc:.3e}");
    // What went where: the region's worth of host pages in SLC, the rest directly to TLC, and folding began.
    // Pages here are the FTL's mapping units (4 KiB in `tlc-consumer`).
    let page = s.device.mapping_unit_bytes() as f64;
    assert_eq!(
        slc.host_pages_slc as f64 * page,
        region,
        "the region's pages, no more (nothing folded before it filled)"
    );
    assert!(slc.host_pages_native > 0 && slc.folded_pages > 0 && slc.blocks_folded > 0, "{slc:?}");

    // Without the cache, the same drive writes at its TLC rate from the start.
    let off = run(&small_consumer("60ms", WRITER, &["device.slc.enabled=false"]));
    assert!(off.device.slc.is_none(), "no SLC figures without the cache");
    let first = intervals(&off, 0)[2].1;
    assert!(first < 1.01 * tlc, "no cache: {first:.3e} B/s, TLC {tlc:.3e}");
}

#[test]
fn idleness_folds_the_region_empty_and_restores_slc_speed() {
    // "a" writes 640 MiB (more than the 512 MiB region: it ends exhausted, writing TLC directly) and stops at
    // ~0.23 s; "b" starts at 1.5 s. After fold_idle_ns (100 ms) of idleness the drive folds every full SLC
    // block (~0.3 s of TLC programs) and host writes may use SLC again, so "b" writes at SLC speed.
    let flows = format!("{WRITER}number_ios = 640\n{WRITER}startdelay = \"1.5s\"\nnumber_ios = 256\n")
        .replacen("name = \"w\"", "name = \"a\"", 1)
        .replacen("name = \"w\"", "name = \"b\"", 1);
    let b_speed = |r: &RunResults| {
        let ts = r.timeseries.as_ref().unwrap();
        let active: Vec<f64> = ts.flows[1].bandwidth_bytes_per_s.iter().copied().filter(|&b| b > 0.0).collect();
        // Its whole intervals (the first and last are partly idle).
        active[1..active.len() - 1].iter().sum::<f64>() / (active.len() - 2) as f64
    };
    // "b" ends at ~1.555 s: the run stops before its own idle fold (1.655 s) would start.
    let r = run(&small_consumer("1.62s", &flows, &[]));
    let slc = r.device.slc.as_ref().unwrap();
    println!("{slc:?}; b at {:.3} GB/s", b_speed(&r) / 1e9);
    assert!(b_speed(&r) > 0.95 * 5.0e9, "b writes at SLC speed after the idle fold: {:.3e}", b_speed(&r));
    // Everything "a" put in SLC was folded before "b" began (it then rewrites a's first 256 MiB, in SLC).
    let a_in_slc = 512 * 1024 * 1024 / 16384;
    assert!(slc.folded_pages >= a_in_slc, "{} folded of {a_in_slc}", slc.folded_pages);
    assert_eq!(slc.used_bytes, 256 * 1024 * 1024, "only b's data is left in SLC at the end");

    // With a 10 s idle delay nothing folds in the pause: "b" finds the region exhausted and writes TLC.
    let never = run(&small_consumer("1.62s", &flows, &["device.slc.fold_idle_ns=10000000000"]));
    println!("no idle fold: b at {:.3} GB/s, {:?}", b_speed(&never) / 1e9, never.device.slc);
    assert!(b_speed(&never) < 0.6 * 5.0e9, "b without an idle fold: {:.3e}", b_speed(&never));
}

#[test]
fn a_region_exhausted_at_time_0_takes_no_host_write_until_the_drive_idles() {
    // `precondition_slc_exhausted` (what the probe's write jobs start from): the writer goes to TLC from its
    // first page, as after the cache filled in the test above.
    let exhausted = ["device.ftl.precondition_slc_exhausted=true"];
    let s = small_consumer("60ms", WRITER, &exhausted);
    let flash = &s.device.flash;
    let planes = (flash.channels * flash.chips_per_channel * flash.dies_per_chip * flash.planes_per_die) as f64;
    let tlc = planes * flash.page_bytes.0 as f64 / (flash.program_ns.0 as f64 / 1e9);
    let r = run(&s);
    let slc = r.device.slc.as_ref().expect("SLC figures");
    assert_eq!(slc.host_pages_slc, 0, "an exhausted region takes no host page: {slc:?}");
    assert!(slc.host_pages_native > 0, "{slc:?}");
    let series = intervals(&r, 0);
    // (an interval may hold a little more than the program rate: the write buffer evens it out; SLC speed is
    // the 5 GB/s write path)
    let mean = series[2..].iter().map(|&(_, b)| b).sum::<f64>() / (series.len() - 2) as f64;
    assert!(mean < 1.01 * tlc, "TLC speed from the start: {mean:.3e} B/s against {tlc:.3e}: {series:?}");
    assert!(series[2..].iter().all(|&(_, b)| b < 1.1 * tlc), "no interval at SLC speed: {series:?}");

    // Idle from time 0 for longer than `fold_idle_ns` (100 ms): the region is usable again when the writer
    // starts at 150 ms, and it writes in SLC.
    let late = format!("{WRITER}startdelay = \"150ms\"\n");
    let r = run(&small_consumer("200ms", &late, &exhausted));
    let slc = r.device.slc.as_ref().expect("SLC figures");
    assert!(slc.host_pages_slc > 0 && slc.host_pages_native == 0, "{slc:?}");
}

#[test]
fn the_dynamic_part_shrinks_as_the_drive_fills() {
    // Region at setup for fills 0 to 100%: the static 128 MiB plus, per plane, one SLC block per native
    // block of unmapped logical pages, at most three.
    let region_at = |fill: f64| {
        let s = small_consumer(
            "1ms",
            "[[flow]]\nname = \"r\"\nrw = \"randread\"\n",
            &["device.ftl.precondition=sequential", &format!("device.ftl.precondition_fill={fill}")],
        );
        run(&s).device.slc.unwrap().region_bytes
    };
    let mib = 1024 * 1024;
    let regions: Vec<u64> = [0.0, 0.5, 0.95, 0.97, 1.0].iter().map(|&f| region_at(f)).collect();
    println!("{:?} MiB", regions.iter().map(|r| r / mib).collect::<Vec<_>>());
    assert_eq!(regions[0], 512 * mib, "empty: static + dynamic maximum");
    assert_eq!(regions[1], 512 * mib, "half full: 29 native blocks per plane free, the dynamic part is capped");
    assert!(regions.windows(2).all(|w| w[0] >= w[1]), "never grows with the fill: {regions:?}");
    assert!(regions[2] < 512 * mib && regions[3] < regions[2], "shrinks near full: {regions:?}");
    assert_eq!(regions[4], 128 * mib, "full: the static part only");
}

#[test]
fn overwrites_of_cached_data_keep_the_block_accounting_and_the_map_exact() {
    // Random 16 KiB overwrites of a 300 MiB range, on an empty and on a randomly filled drive: pages in SLC go
    // stale, folding moves only the valid ones, GC collects native blocks; run.check_invariants checks the map and every block's state at the end
    // (a break fails the run).
    let flows = "[[flow]]\nname = \"w\"\nrw = \"randwrite\"\nbs = \"16k\"\niodepth = 16\nsize = \"300MiB\"\n";
    for (precondition, fill) in [("none", "0.0"), ("random", "0.9")] {
        // A randomly preconditioned drive starts at garbage collection's threshold: GC runs within the run.
        let s = small_consumer(
            "600ms",
            flows,
            &[&format!("device.ftl.precondition={precondition}"), &format!("device.ftl.precondition_fill={fill}")],
        );
        let r = run(&s);
        let slc = r.device.slc.as_ref().unwrap();
        println!("fill {fill}: {slc:?}, GC erased {}", r.device.gc_count);
        assert!(slc.host_pages_slc > 0 && slc.folded_pages > 0, "fill {fill}: {slc:?}");
        if precondition == "random" {
            assert!(r.device.gc_count > slc.blocks_folded, "a nearly full drive also collects TLC blocks");
        }
    }
}

#[test]
fn bad_slc_keys_are_errors_naming_the_key() {
    let base = "[device]\npreset = \"tlc-consumer\"\n[[flow]]\nname = \"r\"\nrw = \"read\"\n";
    for (set, key, says) in [
        ("device.preset=optane-ull", "device.slc.enabled", "page mapping"),
        ("device.slc.bits_per_cell=1", "device.slc.bits_per_cell", "2 or more bits"),
        ("device.slc.bits_per_cell=5", "device.slc.bits_per_cell", "1 (SLC) to 4"),
        ("device.slc.fold_threshold=0", "device.slc.fold_threshold", "(0, 1]"),
        ("device.slc.fold_threshold=1.5", "device.slc.fold_threshold", "(0, 1]"),
        ("device.slc.fold_idle_ns=0", "device.slc.fold_idle_ns", "1 us to 10 s"),
        ("device.slc.program_ns=\"11s\"", "device.slc.program_ns", "at most 10 s"),
        ("device.slc.static_bytes=\"100GB\"", "device.ftl.overprovisioning", "SLC cache's static part"),
    ] {
        // The Optane preset lacks nothing but page mapping: turn its cache on.
        let extra: &[&str] = if set.contains("optane") {
            &[set, "device.slc.enabled=true", "device.slc.bits_per_cell=3"]
        } else {
            &[set]
        };
        let e = common::load_error(base, extra);
        assert!(e.contains(key) && e.contains(says), "{set}: {e}");
    }
}
