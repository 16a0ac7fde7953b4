//! FlashShare's two ways to take the storage stack off the application's cores (Zhang et al., OSDI'18 §4.3,
//! §5): the I/O-stack accelerator (XLER, `host.xler`, stack `flashshare-xler`) and a core dedicated to
//! polling (DedCore, `completion = "dedcore"`, stack `flashshare-dedcore`).

use crate::common;

use common::{load_error, run, scenario_with, MIXED};
use ullsim::RunResults;

/// A critical QD1 4 KiB reader on core 0 of `znand-ull`, alone; `extra` adds flows.
fn critical_reader(extra: &str) -> String {
    format!(
        "seed = 1\n[run]\nduration = \"10ms\"\nwarmup = \"1ms\"\n[device]\npreset = \"znand-ull\"\n[[flow]]\nname = \
         \"critical\"\nclass = \"critical\"\nrw = \"randread\"\nbs = \"4k\"\ncpus_allowed = \"0\"\n{extra}"
    )
}

/// Costs unlike the defaults and unlike each other, so that each closed form below checks which ones count.
const COSTS: [&str; 13] = [
    "host.block.submit_ns=230",
    "host.block.complete_ns=170",
    "host.nvme.queue_rq_ns=190",
    "host.nvme.doorbell_ns=110",
    "host.nvme.cqe_ns=130",
    "host.nvme.irq_delivery_ns=450",
    "host.nvme.isr_ns=650",
    "host.xler.submit_ns=310",
    "host.xler.issue_ns=140",
    "host.xler.poll_ns=420",
    "host.xler.complete_ns=90",
    "host.dedcore.notify_ns=870",
    "host.cpu.poll_loop_ns=120",
];

fn under(stack: &str, text: &str, more: &[&str]) -> RunResults {
    let stack = format!("host.stack=\"{stack}\"");
    run(&scenario_with(text, &[&[stack.as_str()][..], &COSTS, more].concat()))
}

/// Mean of breakdown part `part` of flow `f`, ns.
fn part(r: &RunResults, f: usize, part: &str) -> f64 {
    let b = &r.flows[f].breakdown_ns;
    b.parts().iter().find(|(name, _)| *name == part).map(|(_, p)| p.mean).expect("a breakdown part")
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 0.5
}

#[test]
fn xler_replaces_blk_mq_and_the_driver_with_register_writes_and_the_accelerator() {
    let text = critical_reader("");
    let select = under("flashshare-selectisr", &text, &[]);
    let xler = under("flashshare-xler", &text, &[]);
    // SelectISR (with KernelOpt's bypass): block.submit_ns in blk-mq, queue_rq + doorbell in the driver.
    assert!(close(part(&select, 0, "block"), 230.0), "{}", part(&select, 0, "block"));
    assert!(close(part(&select, 0, "driver"), 190.0 + 110.0), "{}", part(&select, 0, "driver"));
    // XLER: no blk-mq at all; the driver's register writes, then the accelerator's command and doorbell.
    assert!(close(part(&xler, 0, "block"), 0.0), "{}", part(&xler, 0, "block"));
    assert!(close(part(&xler, 0, "driver"), 310.0 + 140.0), "{}", part(&xler, 0, "driver"));
    let submission = |r: &RunResults| part(r, 0, "block") + part(r, 0, "driver");
    let saved = (230.0 + 190.0 + 110.0) - (310.0 + 140.0);
    assert!(close(submission(&select) - submission(&xler), saved), "{} vs {}", submission(&select), submission(&xler));
    assert_eq!(xler.host.block.bypassed, 0, "the accelerator's requests never reach blk-mq");
}

#[test]
fn xler_completes_by_the_accelerators_interrupt_with_the_drivers_own_work() {
    // Against KernelOpt, where the critical reader's completions are interrupts too: the accelerator adds
    // its polling delay, and its driver's work replaces the NVMe entry's and blk-mq's.
    let text = critical_reader("");
    let kernelopt = under("flashshare-kernelopt", &text, &[]);
    let xler = under("flashshare-xler", &text, &[]);
    let diff = part(&xler, 0, "completion") - part(&kernelopt, 0, "completion");
    assert!(close(diff, 420.0 + 90.0 - 130.0 - 170.0), "completion {diff} ns more under XLER");
    // The task sleeps, so its wake-up and context switch remain.
    assert!(close(part(&xler, 0, "cpu_wait"), part(&kernelopt, 0, "cpu_wait")));
    assert!(part(&xler, 0, "cpu_wait") >= 1_400.0);
    // One accelerator interrupt per completion.
    let done = xler.flows[0].completed as f64;
    let interrupts = xler.host.interrupts as f64;
    assert!((interrupts - done).abs() < 0.02 * done, "{interrupts} interrupts for {done} completions");
}

#[test]
fn under_xler_the_critical_core_does_not_spin() {
    let text = critical_reader("");
    let select = under("flashshare-selectisr", &text, &[]);
    let xler = under("flashshare-xler", &text, &[]);
    // SelectISR's task spins on core 0 through the device time; XLER's sleeps and the accelerator polls.
    assert!(select.host.cores[0].poll > 0.8, "{:?}", select.host.cores[0]);
    assert_eq!(xler.host.cores[0].poll, 0.0, "{:?}", xler.host.cores[0]);
    assert!(xler.flows[0].cpu_cores < 0.3 * select.flows[0].cpu_cores);
    assert!(xler.host.busy_cores < 0.5, "{}", xler.host.busy_cores);
}

#[test]
fn dedcore_polls_on_the_last_core_and_wakes_the_task_across_cores() {
    let text = critical_reader("");
    let dedcore = under("flashshare-dedcore", &text, &[]);
    let cores = &dedcore.host.cores;
    assert_eq!(cores.len(), 4);
    // The last core spins all the time: polling, but for the completion work it does (kernel).
    let last = &cores[3];
    assert!(last.poll + last.kernel > 0.999 && last.poll > 0.8 && last.kernel > 0.0, "{last:?}");
    assert_eq!((last.user, last.context_switches), (0.0, 0), "no task runs there");
    // The critical task's core does not spin.
    assert_eq!(cores[0].poll, 0.0, "{:?}", cores[0]);
    // Noticed within a poll loop, completed there (entry, blk-mq), then the cross-core notification and the
    // wake-up, before the task's return and reap (100 + 100); the task's core leaves idle and switches.
    let completion = 120.0 + 130.0 + 170.0 + 870.0 + 300.0 + 100.0 + 100.0;
    assert!(close(part(&dedcore, 0, "completion"), completion), "{}", part(&dedcore, 0, "completion"));
    assert!(close(part(&dedcore, 0, "cpu_wait"), 1_700.0 + 1_400.0), "{}", part(&dedcore, 0, "cpu_wait"));
    // No interrupt for the critical reader's completions.
    assert_eq!(dedcore.host.interrupts, 0);
}

#[test]
fn dedcore_leaves_the_other_cores_to_the_tasks() {
    // Four CPU burners on a 4-core host: under DedCore they share three cores, none runs on the last.
    let text = "seed = 1\n[run]\nduration = \"10ms\"\n[device]\npreset = \"znand-ull\"\n[[flow]]\nname = \"burn\"\n\
                ioengine = \"cpuio\"\ncpuload = 100\nnumjobs = 4\n";
    let dedcore = under("flashshare-dedcore", text, &[]);
    let kernelopt = under("flashshare-kernelopt", text, &[]);
    let cores = &dedcore.host.cores;
    assert!(cores[..3].iter().all(|c| c.user > 0.99) && cores[3].user == 0.0, "{cores:?}");
    assert!((dedcore.flows[0].cpu_cores - 3.0).abs() < 0.01, "{}", dedcore.flows[0].cpu_cores);
    assert!((kernelopt.flows[0].cpu_cores - 4.0).abs() < 0.01, "{}", kernelopt.flows[0].cpu_cores);
    // With nothing to complete, the polling core only spins.
    assert_eq!((cores[3].poll, cores[3].kernel), (1.0, 0.0));
    // A flow may not name the polling core; a 1-core host has none to give.
    let err =
        load_error(&critical_reader(""), &["host.stack=\"flashshare-dedcore\"", "flow.critical.cpus_allowed=\"2-3\""]);
    assert!(err.contains("cpus_allowed") && err.contains("dedcore"), "{err}");
    let err = load_error(&critical_reader(""), &["host.stack=\"flashshare-dedcore\"", "host.cores=1"]);
    assert!(err.contains("host.completion") && err.contains("2 or more"), "{err}");
}

#[test]
fn non_critical_requests_take_the_same_path_under_both() {
    // A normal-class reader alone: neither mechanism touches its requests.
    let text = critical_reader("").replace("class = \"critical\"\n", "");
    let flow = |r: &RunResults| serde_json::to_string(&r.flows).unwrap();
    let select = under("flashshare-selectisr", &text, &[]);
    let xler = under("flashshare-xler", &text, &[]);
    assert_eq!(flow(&select), flow(&xler));
    let kernelopt = under("flashshare-kernelopt", &text, &[]);
    let dedcore = under("flashshare-dedcore", &text, &[]);
    assert_eq!(flow(&kernelopt), flow(&dedcore));
    assert_eq!(select.host.interrupts, xler.host.interrupts);
}

#[test]
fn same_seed_same_bytes_and_the_keys_off_change_nothing() {
    for stack in ["flashshare-xler", "flashshare-dedcore"] {
        let s = scenario_with(MIXED, &[&format!("host.stack=\"{stack}\"")]);
        assert_eq!(serde_json::to_string(&run(&s)).unwrap(), serde_json::to_string(&run(&s)).unwrap(), "{stack}");
    }
    // With XLER off and another completion policy, their costs are never read.
    let plain = run(&scenario_with(MIXED, &[]));
    let costs_only = run(&scenario_with(
        MIXED,
        &["host.xler.enabled=false", "host.xler.submit_ns=9999", "host.dedcore.notify_ns=7777"],
    ));
    assert_eq!(serde_json::to_string(&plain).unwrap(), serde_json::to_string(&costs_only).unwrap());
}

#[test]
fn bad_xler_and_dedcore_keys_are_errors_naming_them() {
    let text = critical_reader("");
    let err = load_error(&text, &["host.xler.submit_ns=\"2s\""]);
    assert!(err.contains("host.xler.submit_ns"), "{err}");
    let err = load_error(&text, &["host.dedcore.notify_ns=\"5s\""]);
    assert!(err.contains("host.dedcore.notify_ns"), "{err}");
    let err = load_error(&text, &["host.xler.cam = true"]);
    assert!(err.contains("cam"), "{err}");
}

#[test]
fn the_stacks_build_on_selectisr_and_kernelopt() {
    let text = critical_reader("");
    let xler = scenario_with(&text, &["host.stack=\"flashshare-xler\""]);
    assert!(xler.host.xler.enabled && xler.host.nvme.dual_sq && xler.host.block.critical_bypass);
    assert_eq!(xler.host.completion, "select-isr");
    let dedcore = scenario_with(&text, &["host.stack=\"flashshare-dedcore\""]);
    assert!(!dedcore.host.xler.enabled && dedcore.host.nvme.dual_sq && dedcore.host.block.critical_bypass);
    assert_eq!(dedcore.host.completion, "dedcore");
    for s in [&xler, &dedcore] {
        assert_eq!(s.device.host_interface.arbiter, "flashshare");
        assert_eq!(s.device.cache.read_policy, "flashshare");
    }
}
