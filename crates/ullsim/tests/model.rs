//! Model-level checks: closed-form queueing, conservation laws, determinism, calibration anchors.

mod common;

use common::{run, scenario, scenario_with, SMALL_MLC};

/// A device that is one die behind one channel, with every other stage a pure delay and a host that costs
/// nothing, so the die is an M/D/1 queue under Poisson arrivals.
fn md1_scenario(utilization: f64, service_ns: f64) -> String {
    let rate = utilization / (service_ns / 1e9);
    format!(
        r#"
seed = 7
[run]
duration = "{duration}s"
warmup = "50ms"
{ZERO_COST_HOST}
[device]
preset = "optane-ull"
[device.host_interface]
command_process_ns = 0
pcie_lanes = 16
[device.flash]
channels = 1
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 1
[[flow]]
name = "reader"
rw = "randread"
bs = "4k"
rate_iops = {rate}
rate_process = "poisson"
"#,
        duration = (1_200_000.0 / rate).max(2.0),
        ZERO_COST_HOST = common::ZERO_COST_HOST,
    )
}

#[test]
fn one_die_is_an_md1_queue() {
    // Service time of the die: command + array read + 4 KiB over the channel (optane-ull timings).
    let s = scenario(&md1_scenario(0.5, 1.0));
    let flash = &s.device.flash;
    let xfer = (4096.0 * 1000.0 / (flash.channel_mts * flash.channel_width_bytes as f64)).ceil();
    let service = (flash.command_ns.0 + flash.read_ns.0) as f64 + xfer;
    for rho in [0.3, 0.6, 0.9] {
        let s = scenario(&md1_scenario(rho, service));
        // Everything else is a fixed delay: measure it with one request alone.
        let hi = &s.device.host_interface;
        let pcie = (4096.0 * 1e9 / (hi.pcie_lanes as f64 * hi.pcie_lane_bytes_per_s)).ceil();
        let fixed = (hi.doorbell_ns.0 + hi.command_fetch_ns.0 + hi.completion_ns.0) as f64 + pcie;
        let r = run(&s);
        let flow = &r.flows[0];
        let measured = flow.latency_ns.mean - fixed;
        let md1 = service + rho * service / (2.0 * (1.0 - rho));
        let error = (measured - md1).abs() / md1;
        println!(
            "rho {rho}: die sojourn {measured:.0} ns vs M/D/1 {md1:.0} ns ({:.2}%), {} requests",
            error * 100.0,
            flow.completed
        );
        assert!(flow.completed > 500_000, "too few samples: {}", flow.completed);
        assert!(error < 0.03, "rho {rho}: measured {measured:.0} ns, M/D/1 {md1:.0} ns");
        // No request is faster than the fixed path plus one service (the histogram's min has 0.1% resolution).
        assert!(flow.latency_ns.min as f64 >= (fixed + service) * 0.999);
    }
}

const MIXED: &str = r#"
seed = 3
[run]
duration = "200ms"
warmup = "20ms"
[device]
preset = "znand-ull"
[[flow]]
name = "reader"
class = "critical"
rw = "randread"
bs = "4k"
iodepth = 4
[[flow]]
name = "writer"
rw = "write"
bs = "128k"
iodepth = 8
[[flow]]
name = "poisson"
rw = "randrw"
rwmixread = 70
bssplit = "4k/60:16k/40"
rate_iops = 20000
rate_process = "poisson"
"#;

#[test]
fn littles_law_holds_per_flow() {
    let r = run(&scenario(MIXED));
    for f in &r.flows {
        let lambda = f.iops; // completions per second in the window
        let w = f.latency_ns.mean / 1e9;
        let l = f.mean_in_flight;
        let error = (l - lambda * w).abs() / l;
        println!("{}: L = {l:.3}, lambda W = {:.3}", f.name, lambda * w);
        assert!(error < 0.02, "{}: L = {l}, lambda*W = {}", f.name, lambda * w);
    }
}

#[test]
fn every_request_completes_once_and_bytes_are_conserved() {
    // Half full: reads hit flash, writes find room without much garbage collection.
    let text = format!(
        r#"{SMALL_MLC}
[run]
duration = "10s"
check_invariants = true
[[flow]]
name = "reads"
rw = "randread"
bs = "8k"
iodepth = 16
number_ios = 20000
[[flow]]
name = "writes"
rw = "randwrite"
bssplit = "4k/50:64k/50"
iodepth = 4
number_ios = 1000
"#
    );
    let r = run(&scenario_with(&text, &["device.ftl.precondition=sequential", "device.ftl.precondition_fill=0.5"]));
    let reads = &r.flows[0];
    let writes = &r.flows[1];
    assert_eq!(reads.completed, 20_000);
    assert_eq!(writes.completed, 1_000);
    assert_eq!(r.requests_completed, 21_000);
    // The run ends when the last request completes, before the 10 s limit.
    assert!(r.window.end_ns < 10_000_000_000);
    let seconds = (r.window.end_ns - r.window.start_ns) as f64 / 1e9;
    let read_bytes = (reads.bandwidth_bytes_per_s * seconds).round() as u64;
    assert_eq!(read_bytes, 20_000 * 8192, "bytes read");
    let write_bytes = (writes.bandwidth_bytes_per_s * seconds).round() as u64;
    assert!(write_bytes > 1_000 * 4096 && write_bytes < 1_000 * 65536);
    assert_eq!(write_bytes % 4096, 0);
}

#[test]
fn same_seed_same_bytes_different_seed_different_bytes() {
    let json = |seed: &str| serde_json::to_string(&run(&scenario_with(MIXED, &[seed]))).unwrap();
    let a = json("seed=3");
    let b = json("seed=3");
    let c = json("seed=4");
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn optane_qd1_read_matches_hotstorage_table1() {
    // HotStorage'23 Table 1: fio io_uring, none, 4 KB QD1 random read median 12.52 us; the device part is
    // ~6.5 us (the rest is the default host's 2 + 4 us).
    let r = run(&scenario(
        r#"
[run]
duration = "200ms"
[device]
preset = "optane-ull"
[[flow]]
name = "qd1"
rw = "randread"
bs = "4k"
"#,
    ));
    let f = &r.flows[0];
    let p50_us = f.latency_ns.p50 as f64 / 1000.0;
    assert!((p50_us - 12.52).abs() / 12.52 < 0.10, "p50 {p50_us} us");
    let device_us = (f.breakdown_ns.device_queued.mean + f.breakdown_ns.device_service.mean) / 1000.0;
    assert!((5.5..7.5).contains(&device_us), "device part {device_us} us");
}

#[test]
fn znand_qd1_read_is_in_the_z_ssd_range() {
    // Samsung Z-SSD: 12-20 us 4 KB reads (shared/reference/ssd.md).
    let r = run(&scenario(
        r#"
[run]
duration = "100ms"
[device]
preset = "znand-ull"
[[flow]]
name = "qd1"
rw = "randread"
bs = "4k"
"#,
    ));
    let mean_us = r.flows[0].latency_ns.mean / 1000.0;
    assert!((12.0..20.0).contains(&mean_us), "mean {mean_us} us");
}

#[test]
fn latency_breakdown_adds_up() {
    let r = run(&scenario(MIXED));
    for f in &r.flows {
        let b = &f.breakdown_ns;
        let sum = common::breakdown_sum(b);
        assert!((sum - f.latency_ns.mean).abs() < 1.0, "{}: parts {sum} vs latency {}", f.name, f.latency_ns.mean);
        let l = &f.latency_ns;
        assert!(l.min <= l.p50 && l.p50 <= l.p90 && l.p90 <= l.p99 && l.p99 <= l.p99_9 && l.p99_9 <= l.max);
    }
}

#[test]
fn queue_pairs_bound_what_the_device_sees() {
    // Two QD8 flows; SQs of 5 entries hold 4 commands each (NVMe keeps one slot empty).
    let text = r#"
[run]
duration = "20ms"
[device]
preset = "optane-ull"
[device.host_interface]
queue_depth = 5
[[flow]]
name = "a"
rw = "randread"
iodepth = 8
[[flow]]
name = "b"
rw = "randread"
iodepth = 8
"#;
    let own = run(&scenario(text));
    let shared = run(&scenario_with(text, &["host.queue_pairs=1"]));
    assert_eq!(own.device.queue_depth.max, 8, "one 4-slot queue per flow");
    assert_eq!(shared.device.queue_depth.max, 4, "both flows behind one 4-slot queue");
    assert!(shared.flows[0].latency_ns.mean > own.flows[0].latency_ns.mean);
}
