//! The MQSim-compatible behaviours (docs/model.md, "MQSim-compatible mode"), each pinned on its own with a
//! closed form or an invariant it must keep (and that the real behaviour breaks, so the check is not
//! vacuous), then the `mqsim-compat` preset end to end.

use crate::common;

use common::{run, scenario, scenario_with, ZERO_COST_HOST};
use ullsim::RunResults;

/// One channel of `chips` chips x `dies` dies x `planes` planes, an ideal map, no cache, full of data: every
/// read is a flash read. Append flows.
fn small_drive(chips: u32, dies: u32, planes: u32) -> String {
    small_drive_with(chips, dies, planes, "")
}

/// [`small_drive`] with more `[device.flash]` keys.
fn small_drive_with(chips: u32, dies: u32, planes: u32, flash: &str) -> String {
    format!(
        r#"
seed = 3
[run]
duration = "50ms"
[device]
preset = "mqsim-mlc"
[device.flash]
channels = 1
chips_per_channel = {chips}
dies_per_chip = {dies}
planes_per_die = {planes}
blocks_per_plane = 64
pages_per_block = 64
{flash}
[device.ftl]
ideal_map = true
overprovisioning = 0.15
precondition = "sequential"
precondition_fill = 1.0
[device.cache]
enabled = false
{ZERO_COST_HOST}
"#
    )
}

const READER_QD32: &str = "\n[[flow]]\nname = \"r\"\nrw = \"randread\"\nbs = \"4k\"\niodepth = 32\n";

fn iops(r: &RunResults) -> f64 {
    r.flows[0].iops
}

#[test]
fn one_die_per_chip_never_overlaps_two_dies_of_a_chip_and_halves_a_two_die_chip() {
    let text = format!("{}{READER_QD32}", small_drive(1, 2, 1));
    let interleaved = run(&scenario(&text));
    let one = run(&scenario_with(&text, &["device.flash.one_die_per_chip=true"]));
    assert_eq!(interleaved.device.max_busy_dies_per_chip, 2, "the check sees overlap when dies interleave");
    assert_eq!(one.device.max_busy_dies_per_chip, 1, "two dies of one chip were busy at once");
    // One die at a time: each 4 KB read holds the chip for command + sense + its data over the channel.
    let per_read_ns = 100.0 + 75_000.0 + (4096.0_f64 * 1000.0 / 333.0).ceil();
    let expected = 1e9 / per_read_ns;
    assert!(
        (iops(&one) / expected - 1.0).abs() < 0.02,
        "one die per chip: {} IOPS, expected {expected:.0}",
        iops(&one)
    );
    assert!(iops(&interleaved) > 1.8 * iops(&one), "two interleaved dies: {} IOPS", iops(&interleaved));
}

#[test]
fn round_robin_channels_put_command_cycles_on_the_bus() {
    // Four chips with a short sense and long command cycles: the channel binds. First come first served,
    // only data holds the bus; with round-robin turns a die starts only on an idle bus and its command
    // cycles hold it, so every read costs the bus command + transfer.
    let text = format!("{}{READER_QD32}", small_drive_with(4, 1, 1, "read_ns = 1000\ncommand_ns = 5000"));
    let transfer_ns = (4096.0_f64 * 1000.0 / 333.0).ceil();
    let fcfs = run(&scenario(&text));
    let rr = run(&scenario_with(&text, &["device.flash.channel_arbitration=round-robin"]));
    let (fcfs_bound, rr_bound) = (1e9 / transfer_ns, 1e9 / (5000.0 + transfer_ns));
    assert!((iops(&fcfs) / fcfs_bound - 1.0).abs() < 0.02, "fcfs: {} IOPS, bus bound {fcfs_bound:.0}", iops(&fcfs));
    assert!((iops(&rr) / rr_bound - 1.0).abs() < 0.02, "round robin: {} IOPS, bus bound {rr_bound:.0}", iops(&rr));
    // The four chips share the bus evenly.
    let u = &rr.device.die_utilization;
    assert!(u.max - u.mean < 0.02, "die utilization mean {} max {}", u.mean, u.max);
}

#[test]
fn same_page_multiplane_joins_only_equal_page_numbers() {
    // Random reads over two-plane dies pair often, at any page numbers, unless asked for equal ones.
    let reads = format!("{}{READER_QD32}", small_drive(1, 1, 2));
    let any = run(&scenario(&reads));
    let same = run(&scenario_with(&reads, &["device.tsu.multiplane_same_page=true"]));
    assert!(any.device.mixed_page_multiplane_ops > 100, "the check sees mixed pages: {:?}", any.device.multiplane_ops);
    assert_eq!(same.device.mixed_page_multiplane_ops, 0, "a multi-plane batch joined different page numbers");
    assert!(same.device.multiplane_ops < any.device.multiplane_ops / 4);
    // Sequential writes fill the planes' open blocks in step: they still pair, at equal page numbers.
    for scheduler in ["fifo", "sprinkler", "flin"] {
        let writes =
            format!("{}\n[[flow]]\nname = \"w\"\nrw = \"write\"\nbs = \"64k\"\niodepth = 8\n", small_drive(1, 1, 2));
        let r = run(&scenario_with(
            &writes,
            &["device.tsu.multiplane_same_page=true", &format!("device.tsu.scheduler={scheduler}")],
        ));
        assert_eq!(r.device.mixed_page_multiplane_ops, 0, "{scheduler}");
        assert!(r.device.multiplane_ops > 50, "{scheduler}: writes should still pair: {}", r.device.multiplane_ops);
    }
}

#[test]
fn the_destage_limit_caps_write_data_on_its_way_to_flash_at_planes_x_page() {
    // A 16 MiB buffer in front of 2 dies x 2 planes of 8 KiB pages: the limit of one page per plane is
    // 32 KiB in flight to flash, and a sequential writer of single pages hits it at once (a write of more
    // pages than the limit would not be buffered at all).
    let text = format!(
        "{}\n[device.cache]\nenabled = true\ncapacity_bytes = \"16MiB\"\n\n[[flow]]\nname = \"w\"\nrw = \"write\"\nbs = \"8k\"\niodepth = 32\n",
        small_drive(1, 2, 2)
    )
    .replacen("[device.cache]\nenabled = false\n", "", 1);
    let unlimited = run(&scenario(&text));
    let limited = run(&scenario_with(&text, &["device.cache.destage_limit_pages_per_plane=1"]));
    let cap = 4 * 8192;
    assert_eq!(limited.device.max_destaging_bytes, cap, "the limit is planes x page, and it is reached");
    assert!(unlimited.device.max_destaging_bytes > 16 * cap, "{}", unlimited.device.max_destaging_bytes);
    // Writes now wait in front of the cache for programs: the writer's mean latency is flash-bound.
    assert!(limited.flows[0].latency_ns.mean > unlimited.flows[0].latency_ns.mean);
}

#[test]
fn the_new_keys_are_checked_and_named() {
    let text = format!("{}{READER_QD32}", small_drive(1, 1, 1));
    for (set, key) in [
        ("device.cache.destage_limit_pages_per_plane=70000", "device.cache.destage_limit_pages_per_plane"),
        ("device.flash.channel_arbitration=\"lottery\"", "device.flash.channel_arbitration"),
        ("device.host_interface.pcie_link_service=\"tdm\"", "device.host_interface.pcie_link_service"),
        ("device.flash.one_die_per_chip=1", "device.flash.one_die_per_chip"),
        ("device.flash.chip_reads_first=\"yes\"", "device.flash.chip_reads_first"),
        ("device.ftl.precondition=\"mqsim\"", "device.ftl.precondition"),
    ] {
        let overrides = vec![set.to_string()];
        let err = ullsim::Scenario::from_toml_str(&text, "t", std::path::Path::new("."), &overrides)
            .map(|s| ullsim::run_scenario(&s).map(|_| ()).map_err(|e| e.to_string()))
            .map_err(|e| e.to_string());
        let message = match err {
            Err(m) | Ok(Err(m)) => m,
            Ok(Ok(())) => panic!("{set} was accepted"),
        };
        assert!(message.contains(key), "{set}: {message}");
    }
}

/// 4 KB random reads at QD32 over half of a full preset, 100 ms.
fn qd32_on(preset: &str) -> RunResults {
    run(&scenario(&format!(
        "seed = 11\n[run]\nduration = \"100ms\"\nwarmup = \"10ms\"\n[device]\npreset = \"{preset}\"\n[device.ftl]\nprecondition_fill = 0.75\n{ZERO_COST_HOST}{READER_QD32}size = \"50%\"\n"
    )))
}

#[test]
fn mqsim_compat_is_deterministic_and_reads_slower_than_mqsim_mlc_at_qd32() {
    let compat = qd32_on("mqsim-compat");
    let again = qd32_on("mqsim-compat");
    assert_eq!(serde_json::to_string(&compat).unwrap(), serde_json::to_string(&again).unwrap());
    let mlc = qd32_on("mqsim-mlc");
    println!("QD32 4 KB random reads: mqsim-mlc {:.0} IOPS, mqsim-compat {:.0} IOPS", iops(&mlc), iops(&compat));
    // MQSim reads fewer IOPS than a drive that interleaves dies and pairs any pages (docs/validation.md).
    assert!(iops(&compat) < 0.9 * iops(&mlc));
    assert_eq!(compat.device.max_busy_dies_per_chip, 1);
    assert_eq!(compat.device.mixed_page_multiplane_ops, 0);
}

#[test]
fn chip_reads_first_bounds_a_read_behind_writes_to_one_program() {
    // One chip of two dies, one die at a time, no cache: a QD1 reader beside a writer that keeps both dies'
    // write queues full. With reads first, a read waits at most for the program running when it arrives
    // (on either die), then takes the chip: its latency is under one program plus one read. Without it the
    // freed chip goes to the other die in turn, which may start another program first.
    let reader = "\n[[flow]]\nname = \"r\"\nrw = \"randread\"\nbs = \"4k\"\niodepth = 1\n";
    let writer = "\n[[flow]]\nname = \"w\"\nrw = \"randwrite\"\nbs = \"8k\"\niodepth = 16\n";
    let text = format!("{}{reader}{writer}", small_drive(1, 2, 1));
    let on = ["device.flash.one_die_per_chip=true", "device.flash.chip_reads_first=true"];
    let turns = run(&scenario_with(&text, &on[..1]));
    let first = run(&scenario_with(&text, &on));
    let transfer = |bytes: f64| (bytes * 1000.0 / 333.0).ceil();
    let program_ns = 100.0 + transfer(8192.0) + 750_000.0;
    let read_ns = 100.0 + 75_000.0 + transfer(4096.0);
    // The device's own path (doorbell, fetch, link, completion) adds a few microseconds.
    let bound = program_ns + read_ns + 20_000.0;
    let max = |r: &RunResults| r.flows[0].latency_ns.max as f64;
    println!("max read: reads first {} ns, turns {} ns; bound {bound}", max(&first), max(&turns));
    assert!(max(&first) < bound, "reads first: max read {} ns, bound {bound}", max(&first));
    assert!(max(&turns) > program_ns + bound / 2.0, "turns: max read {} ns should pass a second program", max(&turns));
    assert_eq!(first.device.max_busy_dies_per_chip, 1);
    assert!(first.flows[1].iops > 0.9 * turns.flows[1].iops, "the writer keeps the chip busy either way");
}

#[test]
fn a_streaming_precondition_gives_a_sequential_writer_gc_without_moves() {
    // MQSim's state for a streaming flow: used blocks all valid or all stale, the free pool at the GC
    // threshold. GC runs at once, and since the writer empties whole blocks in order, every victim is
    // stale: write amplification exactly 1. The random steady state collects part-valid blocks instead.
    let text = format!(
        "{}\n[[flow]]\nname = \"w\"\nrw = \"write\"\nbs = \"128k\"\niodepth = 8\n",
        small_drive(1, 1, 2).replace("duration = \"50ms\"", "duration = \"300ms\"")
    );
    let streaming = run(&scenario_with(&text, &["device.ftl.precondition=streaming"]));
    let random = run(&scenario_with(&text, &["device.ftl.precondition=random"]));
    let d = &streaming.device;
    println!(
        "streaming: GC {} blocks, WA {:?}; random: GC {}, WA {:?}",
        d.gc_count, d.write_amplification, random.device.gc_count, random.device.write_amplification
    );
    assert!(d.gc_count >= 2, "GC should run from the start: {} blocks", d.gc_count);
    assert_eq!((d.gc_pages_programmed, d.write_amplification), (0, Some(1.0)), "a victim held valid pages");
    let wa = random.device.write_amplification.unwrap_or(0.0);
    assert!(random.device.gc_count >= 1 && wa > 1.05, "random steady state: GC {}, WA {wa}", random.device.gc_count);
}
