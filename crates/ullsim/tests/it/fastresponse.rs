//! FastResponse's block-layer mechanisms (ICS'22): non-critical requests split at a smaller size, and
//! critical requests around the plug and the I/O scheduler.

use crate::common;

use common::{big_reader as one_reader, load_error, run, scenario_with};

#[test]
fn noncritical_requests_split_at_their_own_limit_and_critical_ones_do_not() {
    let split = ["host.block.noncritical_max_sectors_kb=32"];
    let normal = run(&scenario_with(&one_reader("normal"), &split));
    let critical = run(&scenario_with(&one_reader("critical"), &split));
    assert_eq!(normal.device.queue_depth.max, 4, "a normal 128 KiB read becomes four 32 KiB commands");
    assert_eq!(critical.device.queue_depth.max, 1, "a critical one keeps max_sectors_kb (1280 KiB)");
    assert!(normal.flows[0].completed > 100 && critical.flows[0].completed > 100);
}

#[test]
fn critical_requests_bypass_the_scheduler_and_go_ahead_of_its_work() {
    // The bulk reader moves to the critical reader's core, so the same hardware queue, whose submission queue
    // holds only 4 commands: at QD64 it keeps mq-deadline full and the queue busy.
    let shared_queue = [
        "run.duration=0.05",
        "run.warmup=0.005",
        "host.io_scheduler=mq-deadline",
        "device.host_interface.queue_depth=5",
        "flow.bulk.iodepth=64",
        "flow.bulk.cpus_allowed=\"0\"",
    ];
    let through = run(&scenario_with(TWO_CLASSES, &shared_queue));
    let bypass = run(&scenario_with(TWO_CLASSES, &[&shared_queue[..], &["host.block.critical_bypass=true"]].concat()));
    let (c_through, c_bypass) = (&through.flows[0], &bypass.flows[0]);
    // Every critical request went around the scheduler (one may still be in flight at the window's end),
    // and none of the bulk reader's did.
    let bypassed = bypass.host.block.bypassed;
    assert!(bypassed == c_bypass.completed || bypassed == c_bypass.completed + 1, "{bypassed} bypassed");
    assert_eq!(through.host.block.bypassed, 0);
    // Its block-layer time is the submission cost alone (host.block.submit_ns = 200 ns): no scheduler insert
    // or dispatch, no lock. Only a request that finds all four slots of the submission queue taken by the
    // bulk reader waits for a driver tag, which bypassing the scheduler does not remove; that is rare.
    let block = c_bypass.breakdown_ns.block.mean;
    assert!((200.0..202.0).contains(&block), "block-layer mean {block} ns");
    assert!(c_through.breakdown_ns.block.mean > 400.0, "{}", c_through.breakdown_ns.block.mean);
    // Waiting on the dispatch list ahead of the scheduler's 64 bulk requests, its tail shrinks.
    assert!(
        c_bypass.latency_ns.p99_9 < c_through.latency_ns.p99_9,
        "p99.9 {} with bypass vs {} through mq-deadline",
        c_bypass.latency_ns.p99_9,
        c_through.latency_ns.p99_9
    );
    let (p99_bypass, p99_through) = (c_bypass.latency_ns.p99, c_through.latency_ns.p99);
    assert!(p99_bypass < p99_through, "p99 {p99_bypass} with bypass vs {p99_through}");
    assert!(c_bypass.latency_ns.mean < c_through.latency_ns.mean);
}

#[test]
fn bad_split_size_names_the_key() {
    for bad in ["3", "6", "2048"] {
        let err = load_error(&one_reader("normal"), &[&format!("host.block.noncritical_max_sectors_kb={bad}")]);
        assert!(err.contains("host.block.noncritical_max_sectors_kb"), "{err}");
    }
}

/// A critical QD1 reader beside a normal QD8 reader, each on its own core.
const TWO_CLASSES: &str = r#"
seed = 1
[run]
duration = "20ms"
warmup = "2ms"
check_invariants = true
[device]
preset = "optane-ull"
[[flow]]
name = "critical"
class = "critical"
rw = "randread"
bs = "4k"
iodepth = 1
cpus_allowed = "0"
[[flow]]
name = "bulk"
rw = "randread"
bs = "4k"
iodepth = 8
cpus_allowed = "1"
"#;

#[test]
fn every_stack_loads_runs_and_is_overridable() {
    for stack in ullsim::config::stacks::names() {
        let s = scenario_with(TWO_CLASSES, &[&format!("host.stack={stack}")]);
        assert_eq!(s.host.stack, stack);
        let r = run(&s);
        assert_eq!(r.scenario.stack, stack);
        assert!(r.flows.iter().all(|f| f.completed > 100), "{stack}");
    }
    // A stack's keys are defaults: the scenario's own keys win.
    let s = scenario_with(TWO_CLASSES, &["host.stack=selectisr", "host.completion=interrupt"]);
    assert_eq!((s.host.completion.as_str(), s.host.block.critical_bypass), ("interrupt", true));
    let err = load_error(TWO_CLASSES, &["host.stack=fast"]);
    assert!(err.contains("host.stack") && err.contains("selectisr"), "{err}");
}

#[test]
fn select_isr_polls_critical_requests_and_interrupts_the_rest() {
    let vanilla = run(&scenario_with(TWO_CLASSES, &[]));
    let select = run(&scenario_with(TWO_CLASSES, &["host.stack=selectisr"]));
    // Polled: no interrupt, no wake-up, no context switch for the critical reader.
    let (v, s) = (&vanilla.flows[0].breakdown_ns, &select.flows[0].breakdown_ns);
    assert_eq!(s.cpu_wait.mean, 0.0);
    assert!(s.completion.mean < v.completion.mean / 2.0, "{} vs {}", s.completion.mean, v.completion.mean);
    // The ~4.5 us of interrupt, wake-up and context switch go; the device, busy with the bulk reader, takes
    // some back as the critical reader submits more often.
    assert!((v.completion.mean + v.cpu_wait.mean) - (s.completion.mean + s.cpu_wait.mean) > 4_000.0);
    assert!(select.flows[0].latency_ns.mean < vanilla.flows[0].latency_ns.mean);
    // The bulk reader's requests still raise interrupts; the critical reader's never do.
    let bulk_completions = select.flows[1].completed;
    let interrupts = select.host.interrupts;
    // (Up to two queue depths of slack: interrupts and completions are counted at the window's edges.)
    assert!(interrupts > 0 && interrupts <= bulk_completions + 16, "{interrupts} interrupts, {bulk_completions} bulk");
    assert!(vanilla.host.interrupts > bulk_completions, "under vanilla every request interrupts");
    // And its core spins while it waits.
    assert!(select.flows[0].cpu_cores > 0.9, "{}", select.flows[0].cpu_cores);
}

#[test]
fn the_device_sees_each_commands_class() {
    let r = run(&scenario_with(TWO_CLASSES, &[]));
    let (critical, normal) = (&r.device.by_class.critical, &r.device.by_class.normal);
    // Every request of a flow is a command of its class (up to two queue depths straddle the window's edges:
    // flows count requests issued after the warm-up, the device commands completed after it).
    assert!(critical.commands.abs_diff(r.flows[0].completed) <= 1, "{} vs {}", critical.commands, r.flows[0].completed);
    assert!(normal.commands.abs_diff(r.flows[1].completed) <= 16, "{} vs {}", normal.commands, r.flows[1].completed);
    // The device's time per class is the flows' device time less the doorbell's trip (submitted ->
    // device_arrival), which the flows count as device time.
    let doorbell = r.flows[0].breakdown_ns.device_queued.mean + r.flows[0].breakdown_ns.device_service.mean;
    let gap = doorbell - critical.mean_device_ns;
    println!("critical: {critical:?}, flow device time {doorbell:.0} ns");
    assert!((250.0..350.0).contains(&gap), "flow device time {doorbell:.0} vs device's {:.0}", critical.mean_device_ns);
    let none = run(&scenario_with(TWO_CLASSES, &["flow.critical.class=\"normal\""]));
    assert_eq!(none.device.by_class.critical.commands, 0);
}

#[test]
fn a_commit_for_a_critical_fsync_sends_its_journal_blocks_as_critical() {
    // FastResponse passes the attribute through the stack: under B-Opt "T_D1, T_JD and T_JC are reduced" as
    // critical requests (§4.4). A critical WAL alone: each fsync writes its page (D1) and the journal thread
    // its log (descriptor and metadata block in one command, then the commit block), all critical; a
    // normal WAL's are all normal.
    let by_class = |class: &str| {
        let r = run(&scenario_with(
            common::WAL,
            &["host.stack=\"fastresponse-b\"", &format!("flow.wal.class=\"{class}\"")],
        ));
        let fsyncs = r.flows[0].flush.as_ref().expect("fsyncs").completed;
        let c = &r.device.by_class;
        (fsyncs, c.critical.commands, c.normal.commands)
    };
    let (fsyncs, critical, normal) = by_class("critical");
    assert!(fsyncs > 200, "{fsyncs}");
    // (Commands and fsyncs are both counted over the window: one may be in flight at either end.)
    assert!(critical.abs_diff(3 * fsyncs) <= 6 && normal == 0, "{fsyncs} fsyncs: {critical} critical, {normal} normal");
    let (fsyncs, critical, normal) = by_class("normal");
    assert!(critical == 0 && normal.abs_diff(3 * fsyncs) <= 6, "{fsyncs} fsyncs: {critical} critical, {normal} normal");
}
