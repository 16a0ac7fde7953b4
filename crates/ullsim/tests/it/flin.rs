//! FLIN's workloads: the `flin.*` app models run end to end at their Table 2 rates, read ratios and sizes, and
//! the alone runs of `fairness` classify flows as FLIN does (high-interference: run alone, the flow keeps the
//! dies busy more than 8% of the time). Both on scenarios/examples/flin-mix.toml (1 s of flin-eval).

use crate::common;

use std::path::Path;
use std::sync::OnceLock;

use common::run;
use ullsim::metrics::fairness::HIGH_INTERFERENCE_DIE_BUSY;
use ullsim::workload::app::flin::{TraceCharacteristics, TABLE2};
use ullsim::{RunResults, Scenario};

fn flin_mix() -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples/flin-mix.toml");
    Scenario::load(&path, &[]).unwrap_or_else(|e| panic!("{e}"))
}

/// The Table 2 row of the flow named after it.
fn table_row(flow: &str) -> &'static TraceCharacteristics {
    TABLE2.iter().find(|t| t.name == flow).unwrap_or_else(|| panic!("no Table 2 row for flow {flow}"))
}

/// The mix and its results (shared run and alone runs), run once for both tests.
fn shared_and_alone() -> &'static (Scenario, RunResults) {
    static RESULTS: OnceLock<(Scenario, RunResults)> = OnceLock::new();
    RESULTS.get_or_init(|| {
        let scenario = flin_mix();
        let results = run(&scenario);
        (scenario, results)
    })
}

#[test]
fn alone_runs_report_die_busy_and_classify_flows_as_flins_table() {
    let (scenario, results) = shared_and_alone();
    for flow in &results.flows {
        let alone = flow.alone.as_ref().expect("fairness is on");
        let row = table_row(&flow.name);
        println!(
            "{:<6} alone: die busy {:.4}, all chips busy {:.4} -> {}; FLIN's Table 2: {}",
            flow.name,
            alone.die_busy,
            alone.all_chips_busy,
            if alone.high_interference { "high" } else { "low" },
            if row.high_interference { "high" } else { "low" }
        );
        assert!((0.0..=1.0).contains(&alone.die_busy));
        assert_eq!(alone.high_interference, alone.die_busy > HIGH_INTERFERENCE_DIE_BUSY);
        assert!((0.0..=alone.die_busy).contains(&alone.all_chips_busy), "all chips busy at once <= die busy");
        assert_eq!(alone.high_interference, row.high_interference, "{}: die busy {}", flow.name, alone.die_busy);
    }
    // die_busy is the alone run's own die utilization, and that run is the flow by itself.
    let tpcc = scenario.flows.iter().position(|f| f.name == "tpcc").unwrap();
    let by_itself = run(&scenario.alone(tpcc));
    let alone = results.flows[tpcc].alone.as_ref().unwrap();
    assert_eq!(alone.die_busy, by_itself.device.die_utilization.mean);
    assert_eq!(alone.iops, by_itself.flows[0].iops);
    // The flows together keep the dies busier than the busiest alone.
    assert!(results.device.die_utilization.mean > alone.die_busy);
}

#[test]
fn app_models_run_at_their_table_rates_read_ratios_and_sizes() {
    let (scenario, results) = shared_and_alone();
    let window_s = (results.window.end_ns - results.window.start_ns) as f64 / 1e9;
    assert_eq!(scenario.run.warmup.0, 100_000_000);
    for flow in &results.flows {
        let row = table_row(&flow.name);
        // Open loop, far from saturation: completions in the window are the Poisson arrivals in it, less
        // the few still in flight at the end. Four standard deviations.
        let expected = row.rate_iops() * window_s;
        let n = flow.completed as f64;
        assert!(
            (n - expected).abs() < 4.0 * expected.sqrt() + 50.0,
            "{}: {n} completed, {expected} expected",
            flow.name
        );
        let read = flow.read.as_ref().expect("every flin app reads");
        let write = flow.write.as_ref().expect("every flin app writes");
        let read_share = read.completed as f64 / n;
        let sd = (row.read_ratio * (1.0 - row.read_ratio) / n).sqrt();
        assert!((read_share - row.read_ratio).abs() < 4.0 * sd + 0.005, "{}: read share {read_share}", flow.name);
        // Sizes are two neighbouring sector multiples: one size's deviation from the mean is at most 512 B,
        // and its standard deviation at most 256 B.
        for (what, op, kib) in [("read", read, row.read_kib), ("write", write, row.write_kib)] {
            let mean_bytes = op.bandwidth_bytes_per_s / op.iops;
            let tolerance = (4.0 * 256.0 / (op.completed as f64).sqrt()).min(512.0);
            println!(
                "{:<6} {what}: {:.1} B per request, table {:.1} B (+- {tolerance:.0})",
                flow.name,
                mean_bytes,
                kib * 1024.0
            );
            assert!(
                (mean_bytes - kib * 1024.0).abs() <= tolerance,
                "{} {what}: {mean_bytes} B vs {kib} KiB",
                flow.name
            );
        }
    }
}

/// FLIN's stage 3 balances the waits of reads and writes that hosts wait for. A destage from the write
/// buffer has no host waiting (its write already completed), so under GC load — `flin.tpcc` alone on a
/// `flin-eval` 92% full, garbage collection from the start at write amplification ~4.3, the write buffer
/// never full — FLIN must not make reads wait for destages: its reads' mean stays with Sprinkler's (0.68 ms;
/// it was 16.8 ms when the destages' whole wait counted).
#[test]
fn stage3_does_not_make_reads_wait_for_destages_no_host_waits_for() {
    let read_mean_ns = |scheduler: &str| {
        let text = format!(
            "[run]\nduration = \"10s\"\n[device]\npreset = \"flin-eval\"\n[device.ftl]\nideal_map = true\nprecondition_fill = 0.92\n\
             [device.tsu]\nscheduler = \"{scheduler}\"\n[[flow]]\nname = \"tpcc\"\napp = \"flin.tpcc\"\n"
        );
        let scenario = Scenario::from_toml_str(&text, "gc-load", Path::new("."), &[]).unwrap();
        let results = run(&scenario);
        assert!(results.device.gc_count > 0, "{scheduler}: GC never ran, the test needs it");
        results.flows[0].read.as_ref().expect("reads completed").latency_ns.mean
    };
    let (sprinkler, flin) = (read_mean_ns("sprinkler"), read_mean_ns("flin"));
    println!("tpcc read mean under GC load: sprinkler {sprinkler:.0} ns, flin {flin:.0} ns");
    assert!(flin < sprinkler * 1.05, "flin {flin:.0} ns against sprinkler {sprinkler:.0} ns");
}

/// exch's mean read latency and slowdown in scenarios/examples/flin-write-overload.toml (2 s) under `scheduler`
/// with stage 3's wait counted from `wait`.
fn overload_exch(scheduler: &str, wait: &str) -> (f64, f64) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples/flin-write-overload.toml");
    let set = [format!("device.tsu.scheduler={scheduler}"), format!("device.tsu.flin_stage3_wait={wait}")];
    let scenario = Scenario::load(&path, &set).unwrap_or_else(|e| panic!("{e}"));
    let results = run(&scenario);
    let exch = results.flows.iter().find(|f| f.name == "exch").unwrap();
    (exch.read.as_ref().unwrap().latency_ns.mean, exch.slowdown.unwrap())
}

#[test]
fn stage3_from_the_queue_makes_reads_wait_behind_an_overloaded_writers_backlog_and_from_the_slot_less() {
    let (sprinkler, _) = overload_exch("sprinkler", "queue");
    let (queue, queue_slowdown) = overload_exch("flin", "queue");
    let (slot, slot_slowdown) = overload_exch("flin", "slot");
    println!("exch reads: sprinkler {sprinkler:.0} ns, flin from the queue {queue:.0} ns, from the slot {slot:.0} ns");
    // Reads first (Sprinkler) vs balancing proportional waits against a backlog hundreds of ms old.
    assert!(queue > 4.0 * sprinkler, "flin (queue) {queue} vs sprinkler {sprinkler}");
    assert!(slot < queue / 2.0 && slot_slowdown < queue_slowdown, "slot {slot} vs queue {queue}");
}

/// Calibrated from baseline (issue 32): every stand-in alone is in its Table 2 class under FLIN's rule (mean
/// die busy above 8%), under Sprinkler on the setup `ullsim reproduce flin18` classifies on (flin-eval, 70%
/// occupancy, ideal map), here 10 s instead of 60 s. exch, src1-0 and src1-1 are High only because their
/// models replay a burst of the trace (`segment_factor`): at Table 2's means they keep the dies 6.7%, 1.6%
/// and 0.14% busy. Every class is also kept with a margin, so a small change of the model shows here first.
#[test]
fn every_stand_in_alone_is_in_its_table2_class() {
    use rayon::prelude::*;
    use ullsim::reproduce::flin18::{scenario_text, VARIANTS};
    let busy: Vec<(&str, bool, f64)> = TABLE2
        .par_iter()
        .map(|t| {
            let text = scenario_text(&[t.name], &VARIANTS[0], 10_000_000_000, 1.0);
            let scenario = Scenario::from_toml_str(&text, t.name, Path::new("."), &[]).unwrap();
            (t.name, t.high_interference, run(&scenario).device.die_utilization.mean)
        })
        .collect();
    for (name, high, die_busy) in busy {
        println!("{name:<7} alone: die busy {die_busy:.4}; Table 2: {}", if high { "High" } else { "Low" });
        assert_eq!(die_busy > HIGH_INTERFERENCE_DIE_BUSY, high, "{name}: die busy {die_busy}");
        // Margin: a High trace at least 5% above the line, a Low one at least 50% below it.
        let margin = if high {
            die_busy / HIGH_INTERFERENCE_DIE_BUSY - 1.0
        } else {
            1.0 - die_busy / HIGH_INTERFERENCE_DIE_BUSY
        };
        assert!(margin > if high { 0.05 } else { 0.5 }, "{name}: die busy {die_busy} too close to the 8% line");
    }
}

/// scenarios/flin18/over-capacity-tpcc.toml (flin.tpcc at ten times its rate, over flin-eval's capacity, beside
/// prxy-0, dev and wsrch; per-flow submission queues; 1 s: the 256 MiB buffer is full before the end, at 0.5 s
/// not yet) with `set`.
fn over_capacity(set: &[&str]) -> RunResults {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/flin18/over-capacity-tpcc.toml");
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    run(&Scenario::load(&path, &set).unwrap_or_else(|e| panic!("{e}")))
}

/// A flow's slowdown and mean read and write latency (ns; 0 without completions of that kind).
fn slowdown_read_write(results: &RunResults, name: &str) -> (f64, f64, f64) {
    let flow = results.flows.iter().find(|f| f.name == name).unwrap();
    let mean = |d: &Option<ullsim::metrics::OpResult>| d.as_ref().map_or(0.0, |d| d.latency_ns.mean);
    (flow.slowdown.unwrap(), mean(&flow.read), mean(&flow.write))
}

/// Where an over-capacity flow's backlog sits (docs/validation.md). With the write buffer, the light flows'
/// writes wait for buffer space in one arrival-order queue ahead of every flash scheduler: the write-heavy
/// prxy-0 is slowed hundreds-fold (Sprinkler's ">500x" of FLIN's evaluation) under Sprinkler and FLIN alike,
/// and dev's writes wait far longer than its reads, which the 512-command fetch bound per queue keeps a few
/// transactions behind tpcc's on each chip. Without the buffer the writes reach the chip queues, and there
/// FLIN's stage 1 puts the light flows' writes ahead of tpcc's: prxy-0's slowdown falls by more than half;
/// and with stage 3's wait counted from the slot, FLIN is the fairer by far.
#[test]
fn an_over_capacity_flows_backlog_holds_light_writes_before_the_flash_scheduler() {
    let buffered = |s: &str| over_capacity(&[&format!("device.tsu.scheduler={s}")]);
    let direct = |s: &str, wait: &str| {
        over_capacity(&[
            &format!("device.tsu.scheduler={s}"),
            "device.cache.enabled=false",
            &format!("device.tsu.flin_stage3_wait={wait}"),
        ])
    };
    let (sprinkler, flin) = (buffered("sprinkler"), buffered("flin"));
    let (sprinkler_direct, flin_direct, flin_slot) =
        (direct("sprinkler", "queue"), direct("flin", "queue"), direct("flin", "slot"));
    let s_prxy = slowdown_read_write(&sprinkler, "prxy-0").0;
    let (_, s_dev_read, s_dev_write) = slowdown_read_write(&sprinkler, "dev");
    let f_prxy = slowdown_read_write(&flin, "prxy-0").0;
    let (sd_prxy, fd_prxy) =
        (slowdown_read_write(&sprinkler_direct, "prxy-0").0, slowdown_read_write(&flin_direct, "prxy-0").0);
    let fairness = |r: &RunResults| r.fairness.as_ref().expect("fairness is on").fairness;
    let (sd_fair, slot_fair) = (fairness(&sprinkler_direct), fairness(&flin_slot));
    println!(
        "prxy-0 slowdown: buffered sprinkler {s_prxy:.0}x flin {f_prxy:.0}x; unbuffered sprinkler {sd_prxy:.1}x \
         flin {fd_prxy:.1}x; dev under sprinkler: reads {s_dev_read:.0} ns, writes {s_dev_write:.0} ns; \
         unbuffered fairness: sprinkler {sd_fair:.4}, flin (wait from the slot) {slot_fair:.4}"
    );
    assert!(s_prxy > 500.0 && f_prxy > 500.0, "sprinkler {s_prxy}x, flin {f_prxy}x");
    assert!(f_prxy > 0.5 * s_prxy, "FLIN cannot reorder the buffer's queue: {f_prxy}x vs {s_prxy}x");
    assert!(s_dev_write > 5.0 * s_dev_read, "dev writes {s_dev_write} ns vs reads {s_dev_read} ns");
    assert!(fd_prxy < 0.5 * sd_prxy, "unbuffered: flin {fd_prxy}x vs sprinkler {sd_prxy}x");
    assert!(slot_fair > 2.0 * sd_fair, "unbuffered fairness: flin (slot) {slot_fair} vs sprinkler {sd_fair}");
}
