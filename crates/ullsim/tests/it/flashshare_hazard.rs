//! FlashShare's hazard rule (OSDI'18 §3.2, `host.block.bypass_hazard`): a bypassed critical request takes
//! along a queued throughput request to overlapping sectors, merged into one command when both go the same
//! direction, or submitted just before it otherwise.

use crate::common;

use common::{run, scenario_with};
use ullsim::RunResults;

/// A critical QD1 flow and a deep throughput flow on the same core over the same 64 KiB (16 blocks), with a
/// 3-command hardware queue under `none`: the throughput flow's requests wait in blk-mq for tags, and the
/// critical flow's bypassed requests almost always overlap one of them. Both stop after `number_ios`, so the
/// window holds every request.
fn shared_region(critical_rw: &str, bulk_rw: &str, bulk_offset: &str) -> String {
    format!(
        r#"
seed = 3
[run]
duration = "50ms"
check_invariants = true
[device]
preset = "optane-ull"
[device.host_interface]
queue_depth = 4
[host]
io_scheduler = "none"
[host.block]
critical_bypass = true
[[flow]]
name = "critical"
class = "critical"
rw = "{critical_rw}"
bs = "4k"
size = "64k"
number_ios = 300
cpus_allowed = "0"
[[flow]]
name = "bulk"
rw = "{bulk_rw}"
bs = "4k"
offset = "{bulk_offset}"
size = "64k"
ioengine = "io_uring"
iodepth = 32
number_ios = 3000
cpus_allowed = "0"
"#
    )
}

const HAZARD_ON: [&str; 1] = ["host.block.bypass_hazard=true"];

/// Commands the device completed in the window, both classes.
fn device_commands(r: &RunResults) -> u64 {
    r.device.by_class.critical.commands + r.device.by_class.normal.commands
}

/// Every request of both flows completed in the window.
fn assert_all_done(r: &RunResults) {
    assert_eq!((r.flows[0].completed, r.flows[1].completed), (300, 3000));
    assert_eq!(r.flows.iter().map(|f| f.in_flight_at_end).sum::<u64>(), 0);
}

#[test]
fn same_direction_overlaps_merge_into_one_command_and_both_requests_complete() {
    let text = shared_region("randread", "randread", "0");
    let on = run(&scenario_with(&text, &HAZARD_ON));
    let block = &on.host.block;
    println!("merges {} tandems {} bypassed {}", block.hazard_merges, block.hazard_tandems, block.bypassed);
    assert_all_done(&on);
    assert!(block.hazard_merges > 100, "{} of 300 critical reads found a queued overlapping read", block.hazard_merges);
    assert_eq!(block.hazard_tandems, 0, "both flows read");
    // One command per merge carries two requests: the device saw that many fewer commands.
    assert_eq!(device_commands(&on), 3300 - block.hazard_merges);
    // The merged command is the critical request's: its class, and the other flow's requests ride in it.
    assert_eq!(on.device.by_class.critical.commands, 300);
    assert_eq!(on.device.by_class.normal.commands, 3000 - block.hazard_merges);
    // Both flows' requests have latencies through the device.
    for f in &on.flows {
        assert!(
            f.latency_ns.mean > 5_000.0 && f.breakdown_ns.device_service.mean > 1_000.0,
            "{}: {:?}",
            f.name,
            f.latency_ns
        );
    }
    // The search costs CPU on the submitting core, per queued request compared: at 5 µs each, every critical
    // request that found a hazard (at least one comparison) costs the critical task that much more.
    let with_cost = |ns: u32| {
        let cost = format!("host.block.hazard_check_ns={ns}");
        run(&scenario_with(&text, &["host.block.bypass_hazard=true", &cost]))
    };
    let (free, costly) = (with_cost(0), with_cost(5_000));
    let cpu_ns = |r: &RunResults| r.flows[0].cpu_cores * r.window.end_ns.saturating_sub(r.window.start_ns) as f64;
    let found = costly.host.block.hazard_merges;
    println!("critical CPU {} ns, {} ns with a free check, {found} hazards", cpu_ns(&costly), cpu_ns(&free));
    assert!(found > 10 && cpu_ns(&costly) > cpu_ns(&free) + 5_000.0 * found as f64);
}

#[test]
fn different_directions_go_down_in_tandem_as_two_commands() {
    let text = shared_region("randwrite", "randread", "0");
    let on = run(&scenario_with(&text, &HAZARD_ON));
    let block = &on.host.block;
    assert_all_done(&on);
    assert!(block.hazard_tandems > 100, "{} tandems", block.hazard_tandems);
    assert_eq!(block.hazard_merges, 0, "a write never merges with a read");
    // Every request is a command of its own.
    assert_eq!(device_commands(&on), 3300);
    // Each tandem bypasses two requests: the old read, then the critical write (their order at the driver is
    // checked in `host::block::hazard`'s unit tests).
    assert_eq!(block.bypassed, 300 + block.hazard_tandems);
}

#[test]
fn no_hazard_when_the_regions_do_not_overlap() {
    let text = shared_region("randread", "randread", "1m");
    let on = run(&scenario_with(&text, &HAZARD_ON));
    assert_all_done(&on);
    assert_eq!((on.host.block.hazard_merges, on.host.block.hazard_tandems), (0, 0));
    assert_eq!(device_commands(&on), 3300);
    // Only the check's CPU time differs from running without it.
    let off = run(&scenario_with(&text, &["host.block.hazard_check_ns=0"]));
    let free = run(&scenario_with(&text, &["host.block.bypass_hazard=true", "host.block.hazard_check_ns=0"]));
    assert_eq!(serde_json::to_string(&off.flows).unwrap(), serde_json::to_string(&free.flows).unwrap());
}

#[test]
fn key_off_changes_nothing_and_the_counters_stay_zero() {
    // Off, the check neither runs nor costs: the cost key alone changes no result.
    let text = shared_region("randread", "randread", "0");
    let off = run(&scenario_with(&text, &[]));
    let off_costly = run(&scenario_with(&text, &["host.block.hazard_check_ns=1000"]));
    assert_eq!(serde_json::to_string(&off).unwrap(), serde_json::to_string(&off_costly).unwrap());
    assert_eq!((off.host.block.hazard_merges, off.host.block.hazard_tandems), (0, 0));
    assert_eq!(device_commands(&off), 3300);
}

#[test]
fn other_schedulers_keep_tags_conserved_with_hazards() {
    // check_invariants checks the tags after every event; the scheduler's forgetting the removed request
    // shows as every request completing.
    for scheduler in ["mq-deadline", "kyber", "bfq", "ld"] {
        let text = shared_region("randread", "randwrite", "0");
        let set = format!("host.io_scheduler=\"{scheduler}\"");
        let r = run(&scenario_with(&text, &["host.block.bypass_hazard=true", &set, "host.block.nr_requests=8"]));
        assert_all_done(&r);
        let hazards = r.host.block.hazard_merges + r.host.block.hazard_tandems;
        assert!(hazards > 10, "{scheduler}: {hazards} hazards");
    }
}

#[test]
fn flashshares_stacks_check_hazards_across_the_cores_two_submission_queues() {
    // With the dual SQ a critical request goes to its core's urgent queue, where no throughput request
    // waits: the check searches every queue of the core.
    let text = shared_region("randread", "randwrite", "0");
    let s = scenario_with(&text, &["host.stack=\"flashshare-kernelopt\""]);
    assert!(s.host.block.bypass_hazard && s.host.nvme.dual_sq);
    let r = run(&s);
    assert_all_done(&r);
    assert!(r.host.block.hazard_tandems > 100, "{:?}", r.host.block);
    // SelectISR adds polling on top (there the critical task spins on the core the throughput flow shares,
    // so the throughput flow rarely has requests queued when a critical one comes).
    let s = scenario_with(&text, &["host.stack=\"flashshare-selectisr\""]);
    assert!(s.host.block.bypass_hazard && s.host.nvme.dual_sq);
    // The stacks FastResponse evaluated keep Linux's blk-mq.
    for stack in ["selectisr", "fastresponse-b", "fastresponse"] {
        let s = scenario_with(&text, &[&format!("host.stack=\"{stack}\"")]);
        assert!(!s.host.block.bypass_hazard, "{stack}");
    }
}

#[test]
fn split_pieces_and_plug_carriers_taken_along_complete_their_own_requests() {
    let text = shared_region("randread", "randread", "0");
    // The throughput flow's 64 KiB reads are split into 16 KiB pieces: a piece merged into a critical
    // command completes its parent with its last piece.
    let split = [
        "host.block.bypass_hazard=true",
        "flow.bulk.bs=64k",
        "host.block.noncritical_max_sectors_kb=16",
        "run.duration=\"1s\"",
    ];
    let r = run(&scenario_with(&text, &split));
    assert_all_done(&r);
    assert!(r.host.block.hazard_merges > 50, "{:?}", r.host.block);
    // Sequential reads submitted 16 at a time merge in the plug into carriers with riders: a carrier merged
    // into a critical command completes every rider.
    let plugged = ["host.block.bypass_hazard=true", "flow.bulk.rw=read", "flow.bulk.iodepth_batch_submit=16"];
    let r = run(&scenario_with(&text, &plugged));
    assert_all_done(&r);
    assert!(r.host.block.merges > 1000 && r.host.block.hazard_merges > 0, "{:?}", r.host.block);
}
