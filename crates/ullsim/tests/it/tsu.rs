//! Transaction schedulers end to end on FLIN's SSD (`flin-eval`): a light reader beside a heavy reader.

use crate::common;

use common::{run, scenario_with, SMALL_MLC};

/// A QD1 8 KiB random reader beside a QD64 64 KiB random reader, 100 ms, with alone runs for slowdowns.
const LIGHT_BESIDE_HEAVY: &str = r#"
seed = 5
[run]
duration = "100ms"
warmup = "10ms"
[metrics]
fairness = true
[device]
preset = "flin-eval"
[[flow]]
name = "light"
rw = "randread"
bs = "8k"
iodepth = 1
[[flow]]
name = "heavy"
rw = "randread"
bs = "64k"
iodepth = 64
"#;

const SCHEDULERS: [&str; 4] = ["fifo", "sprinkler", "sprinkler-fairness", "flin"];

fn light_slowdown(scheduler: &str) -> f64 {
    let r = run(&scenario_with(LIGHT_BESIDE_HEAVY, &[&format!("device.tsu.scheduler={scheduler}")]));
    r.flows[0].slowdown.expect("fairness is on")
}

#[test]
fn every_scheduler_completes_the_mix_deterministically() {
    for scheduler in SCHEDULERS {
        let s = scenario_with(LIGHT_BESIDE_HEAVY, &[&format!("device.tsu.scheduler={scheduler}")]);
        let a = run(&s);
        for f in &a.flows {
            assert!(f.completed > 50, "{scheduler}: flow {} completed {}", f.name, f.completed);
            assert!(f.slowdown.is_some(), "{scheduler}: flow {} has no slowdown", f.name);
        }
        let b = run(&s);
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&b).unwrap(),
            "{scheduler}: same seed, different results"
        );
    }
}

#[test]
fn flin_slows_the_light_flow_down_less_than_sprinkler() {
    // Sprinkler serves the dies' reads in arrival order, so the light flow's reads wait behind the heavy
    // flow's backlog; FLIN's stage 1 moves them ahead where that makes the queue fairer.
    let sprinkler = light_slowdown("sprinkler");
    let flin = light_slowdown("flin");
    println!("light flow slowdown: sprinkler {sprinkler:.2}, flin {flin:.2}");
    assert!(flin < 0.75 * sprinkler, "flin {flin} vs sprinkler {sprinkler}");
    // Stage 1 is what does it: without it FLIN orders reads like Sprinkler.
    let r = run(&scenario_with(LIGHT_BESIDE_HEAVY, &["device.tsu.scheduler=flin", "device.tsu.flin_stage1=false"]));
    let without_stage1 = r.flows[0].slowdown.unwrap();
    assert!(without_stage1 > 0.9 * sprinkler, "without stage 1: {without_stage1} vs sprinkler {sprinkler}");
}

/// The small MLC drive of the other tests (full at GC steady state: each plane collects garbage once its host
/// block fills) with a reader and two writers at 600 and 200 random 8 KiB writes per second, for 2 s: a
/// plane's first GC is charged to the writes since the start, which the planes' part-filled host blocks make
/// a few pages on some planes, so a second holds too few of each plane's jobs for the 3 : 1 to show.
fn gc_mix() -> String {
    format!(
        r#"seed = 2
{SMALL_MLC}
[run]
duration = "2s"
check_invariants = true
[[flow]]
name = "reader"
rw = "randread"
bs = "8k"
iodepth = 1
[[flow]]
name = "writer"
rw = "randwrite"
bs = "8k"
rate_iops = 600
[[flow]]
name = "writer2"
rw = "randwrite"
bs = "8k"
rate_iops = 200
"#
    )
}

#[test]
fn gc_is_charged_to_the_flows_that_write_in_proportion_to_their_writes() {
    let mix = gc_mix();
    let one_writer = &mix[..mix.find("[[flow]]\nname = \"writer2\"").expect("writer2")];
    for scheduler in SCHEDULERS {
        // One writer: it is charged all the GC, the reader none.
        let r = run(&scenario_with(one_writer, &[&format!("device.tsu.scheduler={scheduler}")]));
        assert!(r.device.gc_count > 0 && r.device.gc_busy_ns > 0, "{scheduler}: no GC ran");
        assert_eq!(r.flows[0].gc_busy_ns, 0, "{scheduler}: the reader caused no GC");
        assert_eq!(r.flows[1].gc_busy_ns, r.device.gc_busy_ns, "{scheduler}: the writer is charged all the GC");
    }
    // Two writers at 600 and 200 pages/s: charged about 3 : 1, also under FLIN, whose write slot triggers
    // GC per flow (each flow's writes pay for the GC they made due).
    for scheduler in ["fifo", "flin"] {
        let r = run(&scenario_with(&mix, &[&format!("device.tsu.scheduler={scheduler}")]));
        let ratio = r.flows[1].gc_busy_ns as f64 / r.flows[2].gc_busy_ns as f64;
        println!("{scheduler}: GC charged 600 : 200 IOPS writers: {ratio:.2} (GC busy {} ns)", r.device.gc_busy_ns);
        assert!((2.5..3.5).contains(&ratio), "{scheduler}: ratio {ratio}");
        assert_eq!(r.flows[1].gc_busy_ns + r.flows[2].gc_busy_ns, r.device.gc_busy_ns);
    }
}
