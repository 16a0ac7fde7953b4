//! The controller's front end (issue 30, section 1): command slots shared by every submission queue, held
//! from fetch to completion, and firmware cores processing fetched commands in parallel.

use crate::common;

use common::{run, scenario_with, ONE_DIE_HALF_WRITTEN};

/// A QD128 writer to the free upper half of a one-die drive with a 256 KiB write buffer (32 pages: most of its
/// writes wait for buffer space, freed one program at a time), beside a QD1 reader of the written lower half,
/// each on its own submission queue. A second-long run: a write waits ~100 ms.
fn writer_and_reader() -> String {
    format!(
        r#"
seed = 1
[run]
duration = "1s"
warmup = "200ms"
[host]
model = "device-only"
{ONE_DIE_HALF_WRITTEN}
[device.cache]
capacity_bytes = "256KiB"
destage_limit_pages_per_plane = 0
[[flow]]
name = "writer"
rw = "randwrite"
bs = "4k"
iodepth = 128
offset = "55%"
[[flow]]
name = "reader"
rw = "randread"
bs = "4k"
iodepth = 1
size = "45%"
"#
    )
}

/// (reader p50 ns, reader mean time before the device served it ns, writer IOPS) with `slots` command slots.
fn with_slots(slots: u32) -> (u64, f64, f64) {
    let s = scenario_with(&writer_and_reader(), &[&format!("device.controller.command_slots={slots}")]);
    let r = run(&s);
    let reader = &r.flows[1];
    (reader.latency_ns.p50, reader.breakdown_ns.device_queued.mean, r.flows[0].iops)
}

#[test]
fn writes_waiting_for_buffer_space_in_every_slot_make_a_read_wait_in_its_queue() {
    let (free_p50, free_queued, free_writes) = with_slots(0);
    let (roomy_p50, _, _) = with_slots(1024);
    let (held_p50, held_queued, held_writes) = with_slots(64);
    println!("reader p50: no bound {free_p50} ns, 1024 slots {roomy_p50} ns, 64 slots {held_p50} ns");
    println!(
        "reader queued: {free_queued:.0} vs {held_queued:.0} ns; writer {free_writes:.0} vs {held_writes:.0} IOPS"
    );
    assert_eq!(roomy_p50, free_p50, "more slots than commands: no change");
    // With 64 slots and 128 writes outstanding, the writes waiting for buffer space hold every slot: the read
    // is fetched only when a write completes (one program of the single die frees buffer space for it), and
    // then waits for that die like the writes do.
    assert!(held_p50 > 5 * free_p50, "reader p50 {held_p50} ns with 64 slots vs {free_p50} ns without");
    assert!(held_queued > 5.0 * free_queued, "the wait is in the queues: {held_queued:.0} vs {free_queued:.0} ns");
    // The writer is bound by the die either way.
    assert!((held_writes - free_writes).abs() <= 0.2 * free_writes, "{held_writes:.0} vs {free_writes:.0} IOPS");
}

/// A QD64 reader on optane-ull whose controller, at 20 us a command and no spread, is the bottleneck.
const CONTROLLER_BOUND: &str = r#"
seed = 1
[run]
duration = "200ms"
warmup = "2ms"
[host]
model = "device-only"
[device]
preset = "optane-ull"
[device.variability]
enabled = false
[device.host_interface]
command_process_ns = 20000
[[flow]]
name = "reader"
rw = "randread"
bs = "4k"
iodepth = 64
"#;

#[test]
fn firmware_cores_multiply_a_controller_bound_drives_iops() {
    let iops = |cores: u32| {
        let s = scenario_with(CONTROLLER_BOUND, &[&format!("device.controller.firmware_cores={cores}")]);
        run(&s).flows[0].iops
    };
    for cores in [1, 2, 4] {
        // Each core: one command per 20 us. The window counts the requests that arrived in it and completed:
        // the last ~64 of the 200 ms run (QD64) finish after it, a 0.6-2.6% shortfall.
        let expected = cores as f64 * 1e9 / 20_000.0;
        let got = iops(cores);
        println!("{cores} cores: {got:.0} IOPS (closed form {expected:.0})");
        assert!(got <= expected && got >= 0.96 * expected, "{cores} cores: {got:.0} IOPS, expected {expected:.0}");
    }
}

#[test]
fn the_keys_are_checked_and_named() {
    let text = writer_and_reader();
    for (key, bad, says) in [
        ("device.controller.firmware_cores", "0", ">= 1"),
        ("device.controller.firmware_cores", "65", "64"),
        ("device.controller.command_slots", "2000000", "1048576"),
        ("device.controller.command_slots", "-1", "0"),
    ] {
        let message = common::load_error(&text, &[&format!("{key}={bad}")]);
        assert!(message.contains(key) && message.contains(says), "{key}={bad}: {message}");
    }
}
