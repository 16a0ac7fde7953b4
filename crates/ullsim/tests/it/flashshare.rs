//! FlashShare's kernel and controller mechanisms (Zhang et al., OSDI'18): the dual submission queue per core
//! with the urgent class, and the arbiter that serves it first but drains a starving throughput queue.

use crate::common;

use common::{run, scenario_with};

/// A critical QD1 reader on core 0 and a throughput reader with `iodepth` outstanding on core 1, submitting
/// `batch` at a time: their own submission queues.
fn two_readers(iodepth: u32, batch: u32) -> String {
    format!(
        "seed = 1\n[run]\nduration = \"10ms\"\nwarmup = \"1ms\"\n[device]\npreset = \"znand-ull\"\n[[flow]]\nname = \
         \"critical\"\nclass = \"critical\"\nrw = \"randread\"\nbs = \"4k\"\ncpus_allowed = \"0\"\n[[flow]]\nname = \
         \"bulk\"\nrw = \"randread\"\nbs = \"4k\"\nioengine = \"io_uring\"\niodepth = {iodepth}\niodepth_batch_submit = {batch}\ncpus_allowed = \"1\"\n"
    )
}

const FLASHSHARE: [&str; 2] = ["host.nvme.dual_sq=true", "device.host_interface.arbiter=\"flashshare\""];

#[test]
fn the_critical_queue_is_fetched_first() {
    // Round robin makes a critical command wait for the throughput queue's turn; FlashShare's urgent queue
    // goes first, so only the command being fetched is ahead of it.
    let text = two_readers(6, 1);
    let rr = run(&scenario_with(&text, &[]));
    let fs = run(&scenario_with(&text, &FLASHSHARE));
    let queued = |r: &ullsim::sim::RunResults, f: usize| r.flows[f].breakdown_ns.device_queued.mean;
    assert!(queued(&fs, 0) < 0.6 * queued(&rr, 0), "critical queued {} vs {} ns", queued(&fs, 0), queued(&rr, 0));
    assert!(queued(&fs, 1) > queued(&rr, 1), "bulk queued {} vs {} ns", queued(&fs, 1), queued(&rr, 1));
    // Without the dual queue nothing is urgent: the arbiter is round robin.
    let fs_single = run(&scenario_with(&text, &FLASHSHARE[1..]));
    assert_eq!(queued(&fs_single, 0), queued(&rr, 0));
    // The two queues of a core share its completion queue: no more interrupts than with one.
    assert!(
        fs.host.interrupts <= rr.host.interrupts + rr.host.interrupts / 20,
        "{} vs {}",
        fs.host.interrupts,
        rr.host.interrupts
    );
}

#[test]
fn a_throughput_queue_past_the_drain_threshold_is_served_before_the_critical_one() {
    // A throughput reader that keeps its queue deep: the drain serves it first whenever it holds 8, so the
    // critical reader waits behind drains. With a drain threshold the queue never reaches, it does not.
    let text = two_readers(64, 16);
    let drained = run(&scenario_with(&text, &FLASHSHARE));
    let never = run(&scenario_with(
        &text,
        &[
            &FLASHSHARE[..],
            &[
                "device.host_interface.flashshare_drain_entries=100000",
                "device.host_interface.flashshare_drain_wait_ns=1000000000",
            ],
        ]
        .concat(),
    ));
    let queued = |r: &ullsim::sim::RunResults| r.flows[0].breakdown_ns.device_queued.mean;
    assert!(queued(&drained) > 4.0 * queued(&never), "{} vs {} ns", queued(&drained), queued(&never));
    // Either way the throughput reader keeps the drive busy.
    assert!(drained.flows[1].iops > 0.9 * never.flows[1].iops);
}

#[test]
fn flashshares_stacks_set_firmware_keys_under_the_scenarios_and_over_the_presets() {
    let text = two_readers(6, 1);
    let load = |overrides: &[&str]| scenario_with(&text, overrides);
    // znand-ull's preset says round robin and the shared cache; KernelOpt says otherwise.
    let preset = load(&[]);
    assert_eq!(
        (preset.device.host_interface.arbiter.as_str(), preset.device.cache.read_policy.as_str()),
        ("round-robin", "shared")
    );
    let kernelopt = load(&["host.stack=\"flashshare-kernelopt\""]);
    assert_eq!(kernelopt.device.host_interface.arbiter, "flashshare");
    assert_eq!(kernelopt.device.cache.read_policy, "flashshare");
    assert!(kernelopt.host.nvme.dual_sq && kernelopt.host.block.critical_bypass);
    // The scenario's own device keys win over the stack's; the preset's other keys stay.
    let own = load(&["host.stack=\"flashshare-kernelopt\"", "device.host_interface.arbiter=\"round-robin\""]);
    assert_eq!(
        (own.device.host_interface.arbiter.as_str(), own.device.cache.read_policy.as_str()),
        ("round-robin", "flashshare")
    );
    assert_eq!(own.device.host_interface.queue_depth, preset.device.host_interface.queue_depth);
    // SelectISR adds polling for critical completions.
    let select = load(&["host.stack=\"flashshare-selectisr\""]);
    assert_eq!(select.host.completion, "select-isr");
}
