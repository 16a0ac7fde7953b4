//! Timed preconditioning (`device.ftl.precondition_timed_writes`, `device/timed_precondition.rs`): the drive
//! overwrites its data, timed, before time 0, and carries its state (GC jobs half done, writes still queued,
//! busy dies, GC credit) into the run. gc.rs checks what it is for (gc-randwrite steady from its first
//! millisecond); these check that what it carries over is consistent.

use crate::common;

use common::{load_error, run, scenario_with, SMALL_MLC};

/// SMALL_MLC and a random writer of `number_ios` page writes; with [`FULL`].
fn writer(number_ios: u64) -> String {
    format!(
        "[run]\nduration = \"20s\"\ncheck_invariants = true\n{SMALL_MLC}[[flow]]\nname = \"w\"\nrw = \"randwrite\"\n\
         bs = \"8k\"\niodepth = 16\nnumber_ios = {number_ios}\n"
    )
}

/// The drive full and randomly overwritten, its write cache off (every write programs its own page).
const FULL: [&str; 3] =
    ["device.ftl.precondition=random-gc-due", "device.ftl.precondition_fill=1.0", "device.cache.enabled=false"];

/// `FULL` and `more` overrides.
fn with(more: &[&str]) -> Vec<String> {
    FULL.iter().chain(more).map(|s| s.to_string()).collect()
}

/// Jobs carried half done finish (their pending moves are exactly the pages left: one too many and a plane's
/// GC would never end, so its writes would stop; one too few and the FTL would erase valid data), the map
/// stays a bijection (`check_invariants`), and the writes left in flight at time 0 finish during the run
/// without counting as the run's host data: the drive programs exactly the flow's pages.
#[test]
fn carried_state_is_consistent_and_only_the_flows_writes_count() {
    let ios = 2_000;
    let text = writer(ios);
    for timed in ["device.ftl.precondition_timed_writes=0", "device.ftl.precondition_timed_writes=8"] {
        let overrides = with(&[timed, "device.ftl.precondition_timed_depth=16"]);
        let r = run(&scenario_with(&text, &overrides.iter().map(String::as_str).collect::<Vec<_>>()));
        let (d, w) = (&r.device, &r.flows[0]);
        println!(
            "{timed}: {} IOPS, WA {:.2}, {} erases, {} host pages",
            w.iops,
            d.write_amplification.unwrap_or(0.0),
            d.gc_count,
            d.host_pages_programmed
        );
        assert_eq!(w.completed, ios, "{timed}: every write completes");
        assert_eq!(d.host_pages_programmed, ios, "{timed}: only the flow's pages are host data");
        // ~470 IOPS at write amplification ~6 on this 2-die drive: a GC job on each plane every ~0.1 s.
        assert!(d.gc_count > 50, "{timed}: {} erases", d.gc_count);
        assert!(d.write_amplification.expect("writes") > 1.5, "{timed}");
    }
}

/// The same seed gives the same bytes, and another seed another run (the timed writes draw from the seed's
/// own stream).
#[test]
fn timed_preconditioning_is_deterministic() {
    let text = writer(500);
    let json = |seed: &str| {
        let overrides = with(&["device.ftl.precondition_timed_writes=4", seed]);
        let scenario = scenario_with(&text, &overrides.iter().map(String::as_str).collect::<Vec<_>>());
        serde_json::to_string(&run(&scenario)).expect("results serialize")
    };
    assert_eq!(json("seed=5"), json("seed=5"));
    assert_ne!(json("seed=5"), json("seed=6"));
}

/// What cannot take timed writes is an error naming the key and what it needs.
#[test]
fn timed_preconditioning_refuses_what_it_cannot_do() {
    let text = writer(100);
    let on = "device.ftl.precondition_timed_writes=4";
    for (overrides, needle) in [
        (vec![on, "device.ftl.precondition=none"], "precondition other than \"none\""),
        (vec![on, "device.ftl.precondition_fill=0"], "precondition_fill above 0"),
        (vec![on, "device.ftl.mapping=in-place"], "page mapping"),
        (vec!["device.ftl.precondition_timed_writes=1025"], "from 0 to 1024"),
        (vec!["device.ftl.precondition_timed_depth=0"], "from 1 to 65536"),
    ] {
        let overrides = with(&overrides);
        let message = load_error(&text, &overrides.iter().map(String::as_str).collect::<Vec<_>>());
        let key = if overrides.iter().any(|o| o.starts_with("device.ftl.precondition_timed_depth=0")) {
            "device.ftl.precondition_timed_depth"
        } else {
            "device.ftl.precondition_timed_writes"
        };
        assert!(message.contains(key) && message.contains(needle), "{overrides:?}: {message}");
    }
}

/// On a drive with an SLC cache (a shrunk `tlc-consumer`: 64 blocks per plane, a 512 MiB region), sustained
/// writing before time 0 leaves the cache as a sustained writer finds it: used up, so the run's random writes
/// go straight to TLC (folding keeps what it frees until the drive idles), where without the timed writes
/// they fill the 128 MiB static part first. The map and the blocks stay consistent (`check_invariants`).
#[test]
fn timed_writes_leave_an_slc_cache_used_up() {
    let text = common::small_consumer_writer("100ms", 32);
    let slc_pages = |timed: &str| {
        let overrides = [
            "device.ftl.precondition_fill=0.5",
            "device.cache.capacity_bytes=8MiB",
            "device.slc.static_bytes=128MiB",
            "device.slc.dynamic_max_bytes=384MiB",
            timed,
        ];
        let r = run(&scenario_with(&text, &overrides));
        let slc = r.device.slc.expect("the drive has an SLC cache");
        (slc.host_pages_slc, slc.host_pages_native)
    };
    let (fresh_slc, _) = slc_pages("device.ftl.precondition_timed_writes=0");
    let (used_slc, used_native) = slc_pages("device.ftl.precondition_timed_writes=2");
    assert!(fresh_slc > 4_000, "without timed writes the static part takes the first writes: {fresh_slc} pages");
    assert_eq!(used_slc, 0, "after sustained writing, writes go to TLC ({used_native} pages did)");
    assert!(used_native > 4_000, "{used_native} pages written to TLC");
}

/// Under the per-flow schedulers the timed writes are a flow of their own (the slot after the run's), before
/// time 0 and while they finish after it: with two writers of the run beside them, every scheduler finishes
/// each writer's I/Os, programs exactly their pages as host data, keeps the map a bijection
/// (`check_invariants`), and gives the same bytes for the same seed.
#[test]
fn timed_preconditioning_runs_under_every_scheduler() {
    let ios = 600;
    let text = format!(
        "{}[[flow]]\nname = \"w2\"\nrw = \"randwrite\"\nbs = \"8k\"\niodepth = 4\nnumber_ios = {ios}\n",
        writer(ios)
    );
    for scheduler in ["fifo", "sprinkler", "sprinkler-fairness", "flin"] {
        let scheduler_key = format!("device.tsu.scheduler={scheduler}");
        let overrides = with(&["device.ftl.precondition_timed_writes=8", &scheduler_key]);
        let scenario = scenario_with(&text, &overrides.iter().map(String::as_str).collect::<Vec<_>>());
        let r = run(&scenario);
        let d = &r.device;
        println!("{scheduler}: WA {:.2}, {} erases", d.write_amplification.unwrap_or(0.0), d.gc_count);
        for flow in &r.flows {
            assert_eq!(flow.completed, ios, "{scheduler}: {} completes its writes", flow.name);
        }
        assert_eq!(d.host_pages_programmed, 2 * ios, "{scheduler}: only the flows' pages are host data");
        assert!(d.gc_count > 20, "{scheduler}: GC runs ({} erases)", d.gc_count);
        let again = serde_json::to_string(&run(&scenario)).expect("results serialize");
        assert_eq!(serde_json::to_string(&r).expect("results serialize"), again, "{scheduler}: same seed, same bytes");
    }
}
