//! Garbage collection a real controller could do: a plane's GC job holds at most `gc_read_ahead` moved pages
//! between their read and their program.

use crate::common;

use common::{run, scenario_with, SMALL_MLC};

/// A random writer on a small full drive: with the bound, GC reads are its programs plus at most the
/// buffer's pages per plane (and pages the host overwrote before their turn are never read); without it
/// (MQSim's way), every valid page of each victim is read at once, far ahead of the programs.
#[test]
fn gc_reads_stay_within_the_gc_buffer_of_each_plane() {
    let text = format!(
        "[run]\nduration = \"300ms\"\ncheck_invariants = true\n{SMALL_MLC}[[flow]]\nname = \"w\"\nrw = \"randwrite\"\nbs = \
         \"8k\"\niodepth = 16\n"
    );
    let planes = 4; // 2 channels x 1 chip x 1 die x 2 planes
    let bounded = run(&scenario_with(&text, &["device.ftl.gc_read_ahead=2"]));
    let d = &bounded.device;
    assert!(d.gc_pages_programmed > 500, "GC must run: {} pages moved", d.gc_pages_programmed);
    // A write-only flow on an ideal map: every flash read is a GC read.
    assert!(
        d.flash_reads <= d.gc_pages_programmed + 2 * planes,
        "{} GC reads for {} GC programs",
        d.flash_reads,
        d.gc_pages_programmed
    );
    let unbounded = run(&scenario_with(&text, &["device.ftl.gc_read_ahead=0"]));
    let u = &unbounded.device;
    println!(
        "bounded: {} reads / {} GC programs, {} IOPS; unbounded: {} reads / {} GC programs, {} IOPS",
        d.flash_reads,
        d.gc_pages_programmed,
        bounded.flows[0].iops,
        u.flash_reads,
        u.gc_pages_programmed,
        unbounded.flows[0].iops
    );
    assert!(u.flash_reads > u.gc_pages_programmed + 2 * planes, "MQSim's way reads whole victims ahead");
}

/// Steady-state write amplification of uniform random page writes under greedy GC against Desnoyers'
/// closed form for greedy at large blocks, A = (1 + ρ) / (2ρ) (P. Desnoyers, "Analytic modeling of SSD write
/// performance", SYSTOR 2012), at the drive's effective over-provisioning: the spare space left for data
/// once each plane keeps its `soft` free blocks (GC's trigger) and about one block's worth of open blocks,
/// ρ = ((blocks − soft − 1) × pages − logical pages) / logical pages. Measured over seconds 100–300, after
/// the writer has rewritten the drive twice; 64-page blocks sit within ~10% of the large-block formula
/// (their valid counts vary more, which greedy exploits).
#[test]
fn greedy_gc_write_amplification_matches_the_closed_form_at_the_effective_over_provisioning() {
    // 2 channels x 1 chip x 1 die x 2 planes of 256 blocks x 64 pages (8 KiB), cache off, ideal map.
    let text = r#"
[run]
duration = "300s"
warmup = "100s"
[device]
preset = "mqsim-mlc"
[device.flash]
channels = 2
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 2
blocks_per_plane = 256
pages_per_block = 64
[device.ftl]
ideal_map = true
gc_policy = "greedy"
[device.cache]
enabled = false
[[flow]]
name = "w"
rw = "randwrite"
bs = "8k"
iodepth = 16
"#;
    let (blocks, pages) = (256.0f64, 64.0f64);
    for op in [0.15, 0.25] {
        let r = run(&scenario_with(text, &[&format!("device.ftl.overprovisioning={op}")]));
        let soft = (0.05 * blocks).ceil().max(2.0);
        let logical = blocks * pages * (1.0 - op);
        let rho = ((blocks - soft - 1.0) * pages - logical) / logical;
        let closed_form = (1.0 + rho) / (2.0 * rho);
        let wa = r.device.write_amplification.expect("writes");
        println!("op {op}: rho_eff {rho:.3}, WA {wa:.3}, closed form {closed_form:.3}");
        assert!(r.device.host_pages_programmed as f64 > 1.5 * logical * 4.0, "the window must rewrite the drive");
        assert!((wa / closed_form - 1.0).abs() < 0.15, "op {op}: WA {wa:.3} vs {closed_form:.3}");
    }
}

/// scenarios/examples/gc-randwrite.toml with `overrides`.
fn gc_randwrite(seed: u64, overrides: &[&str]) -> ullsim::Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples/gc-randwrite.toml");
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let mut s = ullsim::Scenario::load(&path, &overrides).unwrap_or_else(|e| panic!("{e}"));
    s.seed = seed;
    s
}

/// Mean IOPS and write amplification of gc-randwrite over seeds 1-4 for the window `overrides` give.
fn gc_randwrite_means(overrides: &[&str]) -> (f64, f64) {
    const SEEDS: u64 = 4;
    let (mut iops, mut wa) = (0.0, 0.0);
    for seed in 1..=SEEDS {
        let r = run(&gc_randwrite(seed, overrides));
        iops += r.flows[0].iops / SEEDS as f64;
        wa += r.device.write_amplification.expect("writes") / SEEDS as f64;
    }
    (iops, wa)
}

/// gc-randwrite's drive is at its steady state from its first millisecond: the count-only precondition
/// leaves every block as sustained writing does, and the timed writes before time 0
/// (`device.ftl.precondition_timed_writes`) put each plane at its own point of its GC cycle, with its last
/// writes still queued. So a 50 ms run with no warm-up measures the IOPS and write amplification of seconds
/// 2-3 within 20% (means over four seeds: a single 50 ms window of the steady state itself scatters by
/// ~±12%). Without the timed writes, every plane starts in the same phase of its cycle, and the first 50 ms
/// run at ~1.9x the IOPS of seconds 2-3 (next test).
#[test]
fn gc_randwrite_is_at_its_steady_state_from_the_first_millisecond() {
    let (first_iops, first_wa) = gc_randwrite_means(&["run.warmup=0", "run.duration=0.05"]);
    let (iops, wa) = gc_randwrite_means(&["run.warmup=2", "run.duration=3"]);
    println!("first 50 ms: {first_iops:.0} IOPS, WA {first_wa:.2}; seconds 2-3: {iops:.0} IOPS, WA {wa:.2}");
    assert!((first_iops / iops - 1.0).abs() < 0.2, "{first_iops:.0} IOPS over 50 ms, {iops:.0} later");
    assert!((first_wa / wa - 1.0).abs() < 0.2, "write amplification {first_wa:.2} over 50 ms, {wa:.2} later");
}

/// The timed writes are what does it: with the count-only precondition alone (the same blocks, every plane
/// with GC due), each die's first host writes go before GC and every plane's GC runs in step, so the first
/// 50 ms measure over half again the IOPS of seconds 2-3.
#[test]
fn gc_randwrite_without_the_timed_writes_starts_in_step() {
    let off = "device.ftl.precondition_timed_writes=0";
    let (first_iops, _) = gc_randwrite_means(&[off, "run.warmup=0", "run.duration=0.05"]);
    let (iops, _) = gc_randwrite_means(&[off, "run.warmup=2", "run.duration=3"]);
    println!("without timed writes: first 50 ms {first_iops:.0} IOPS; seconds 2-3 {iops:.0} IOPS");
    assert!(first_iops > 1.5 * iops, "{first_iops:.0} IOPS over 50 ms, {iops:.0} later");
}
