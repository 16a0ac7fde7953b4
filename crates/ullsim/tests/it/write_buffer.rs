//! The write buffer shared by every flow or split equally among them (`device.cache.write_buffer_sharing`).

use crate::common;

use common::{run, scenario_with, ONE_DIE_HALF_WRITTEN};

/// One die, one plane (8 KiB pages), a 16-page write buffer, no garbage collection: a QD32 writer keeps
/// more programs pending than the buffer holds, and a 200 IOPS writer writes one page now and then.
fn light_beside_heavy_writer() -> String {
    format!(
        r#"
seed = 5
[run]
duration = "1s"
warmup = "50ms"
{ONE_DIE_HALF_WRITTEN}
[device.cache]
capacity_bytes = "128KiB"
[[flow]]
name = "heavy"
rw = "randwrite"
offset = "55%"
bs = "8k"
iodepth = 32
[[flow]]
name = "light"
rw = "randwrite"
offset = "55%"
bs = "8k"
rate_iops = 200
rate_process = "poisson"
"#
    )
}

#[test]
fn a_split_buffer_keeps_a_light_writer_at_dram_speed_beside_a_heavy_one() {
    let shared = run(&scenario_with(&light_beside_heavy_writer(), &[]));
    let split = run(&scenario_with(&light_beside_heavy_writer(), &["device.cache.write_buffer_sharing=per-flow"]));
    let s = scenario_with(&light_beside_heavy_writer(), &[]);
    let program = s.device.flash.program_ns.0 as f64;
    for r in [&shared, &split] {
        assert_eq!(r.device.gc_count, 0, "no GC: only programs hold buffer space");
        assert!(r.flows[1].completed > 150, "{}", r.flows[1].completed);
    }

    // Shared: the heavy writer keeps the buffer full, so every light write queues behind the heavy
    // writer's waiting writes for programs to finish: at least one program on average.
    assert!(shared.flows[1].latency_ns.mean > program, "{}", shared.flows[1].latency_ns.mean);
    // Split: the light writer's 8 pages are its own. Its programs still queue at the die behind the heavy
    // writer's (8 pending, ~13 ms), so a Poisson burst now and then fills its part, but most writes
    // complete once their data is in DRAM, far below one program, and the mean falls tenfold.
    let light = &split.flows[1].latency_ns;
    assert!((light.p50 as f64) < program / 10.0, "p50 {} vs program {program}", light.p50);
    assert!(
        light.mean < shared.flows[1].latency_ns.mean / 10.0,
        "{} vs {}",
        light.mean,
        shared.flows[1].latency_ns.mean
    );

    // The heavy writer is bound by the die either way: its throughput barely changes (it loses the light
    // writer's programs, the same in both runs, and half the buffer, which the die drains at one rate).
    let (heavy_shared, heavy_split) = (shared.flows[0].iops, split.flows[0].iops);
    assert!((heavy_split / heavy_shared - 1.0).abs() < 0.05, "{heavy_split} vs {heavy_shared}");
    assert!(split.flows[0].latency_ns.mean > program, "the heavy writer still waits for its programs");
}

#[test]
fn split_buffer_runs_are_deterministic() {
    let set = ["device.cache.write_buffer_sharing=per-flow"];
    let a = run(&scenario_with(&light_beside_heavy_writer(), &set));
    let b = run(&scenario_with(&light_beside_heavy_writer(), &set));
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
}
