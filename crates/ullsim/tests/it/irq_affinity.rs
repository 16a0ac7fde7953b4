//! Interrupt affinity (`host.nvme.irq_cpus`, issue 31 §4): where the queues' interrupts run.

use crate::common;

use common::{load_error, run, scenario_with};

/// A QD1 reader pinned to core 1 of 2, `optane-ull`.
const PINNED_READER: &str = "seed = 1\n[run]\nduration = \"20ms\"\nwarmup = \"2ms\"\n[host]\ncores = 2\n[device]\n\
    preset = \"optane-ull\"\n[[flow]]\nname = \"r\"\nrw = \"randread\"\nbs = \"4k\"\niodepth = 1\ncpus_allowed = \"1\"\n";

/// By default the queue's interrupt runs on the core that submits to it: core 0 stays idle. Sent to core 0,
/// the handlers run there (its kernel time), the reader is woken across cores from idle, and each I/O takes
/// longer; naming the default core explicitly gives the same bytes as the default.
#[test]
fn interrupts_run_where_irq_cpus_sends_them() {
    let default = run(&scenario_with(PINNED_READER, &[]));
    let on_core_0 = run(&scenario_with(PINNED_READER, &["host.nvme.irq_cpus=\"0\""]));
    let on_core_1 = run(&scenario_with(PINNED_READER, &["host.nvme.irq_cpus=\"1\""]));
    let kernel = |r: &ullsim::RunResults, core: usize| r.host.cores[core].kernel;
    let mean = |r: &ullsim::RunResults| r.flows[0].latency_ns.mean;
    println!(
        "core 0 kernel share: {:.3} default, {:.3} with irq_cpus = 0; mean {:.0} / {:.0} ns",
        kernel(&default, 0),
        kernel(&on_core_0, 0),
        mean(&default),
        mean(&on_core_0)
    );
    assert_eq!(kernel(&default, 0), 0.0, "nothing runs on core 0 by default");
    assert!(kernel(&on_core_0, 0) > 0.1, "the handlers run on core 0");
    assert!(mean(&on_core_0) > mean(&default) + 1_000.0, "a cross-core wake-up from idle costs the reader");
    let json = |r: &ullsim::RunResults| serde_json::to_string(r).expect("results serialize");
    assert_eq!(json(&default), json(&on_core_1), "the default is the submitting core");
}

/// A core the host does not have, or a malformed list, is an error naming the key.
#[test]
fn irq_cpus_must_name_the_hosts_cores() {
    for (value, needle) in [("\"2\"", "core 2 does not exist"), ("\"a\"", "expected core numbers")] {
        let message = load_error(PINNED_READER, &[&format!("host.nvme.irq_cpus={value}")]);
        assert!(message.contains("host.nvme.irq_cpus") && message.contains(needle), "{message}");
    }
}

/// An interrupt that completes another core's request first pulls the lines its submission wrote
/// (`host.cpu.remote_completion_lines` × `cache_line_transfer_ns`): at QD1 every I/O takes that much longer;
/// on the submitting core (the default) nothing moves, whatever the count.
#[test]
fn completing_another_cores_request_moves_its_lines() {
    let at = |sets: &[&str]| run(&scenario_with(PINNED_READER, sets)).flows[0].latency_ns.mean;
    let remote = ["host.nvme.irq_cpus=\"0\"", "host.cpu.cache_line_transfer_ns=50"];
    let free = at(&[&remote[..], &["host.cpu.remote_completion_lines=0"]].concat());
    let paid = at(&[&remote[..], &["host.cpu.remote_completion_lines=8"]].concat());
    let expected = 8.0 * 50.0;
    assert!((paid - free - expected).abs() < 0.05 * expected, "{paid} - {free} vs {expected}");
    let local = |lines: &str| at(&[&format!("host.cpu.remote_completion_lines={lines}")]);
    assert_eq!(local("0"), local("8"));
}

/// Two drives, a QD1 reader on each pinned to cores 1 and 2 of 4: by default each drive's interrupts run on
/// its reader's core; `irq_cpus_by_drive` sends nvme0's to core 0 and nvme1's to core 3, and only those cores
/// then run handlers (kernel time on otherwise idle cores). An empty entry keeps `irq_cpus` for that drive.
#[test]
fn each_drive_sends_its_interrupts_where_its_list_says() {
    let text = "seed = 1\n[run]\nduration = \"10ms\"\nwarmup = \"1ms\"\n[host]\ncores = 4\n[device]\n\
        preset = \"optane-ull\"\ncount = 2\n[[flow]]\nname = \"a\"\nrw = \"randread\"\nbs = \"4k\"\niodepth = 1\n\
        cpus_allowed = \"1\"\n[[flow]]\nname = \"b\"\nrw = \"randread\"\nbs = \"4k\"\niodepth = 1\n\
        cpus_allowed = \"2\"\ndevice = \"nvme1\"\n";
    let kernel = |r: &ullsim::RunResults| r.host.cores.iter().map(|c| c.kernel).collect::<Vec<f64>>();
    let default = kernel(&run(&scenario_with(text, &[])));
    assert_eq!((default[0], default[3]), (0.0, 0.0), "{default:?}");
    let pinned = kernel(&run(&scenario_with(text, &["host.nvme.irq_cpus_by_drive=[\"0\", \"3\"]"])));
    assert!(pinned[0] > 0.05 && pinned[3] > 0.05, "{pinned:?}");
    // nvme0's entry empty: its vectors follow irq_cpus (core 3 too), nvme1's its own (core 3).
    let mixed =
        kernel(&run(&scenario_with(text, &["host.nvme.irq_cpus=\"3\"", "host.nvme.irq_cpus_by_drive=[\"\", \"3\"]"])));
    assert!(mixed[0] == 0.0 && mixed[3] > 1.2 * pinned[3], "both drives' handlers on core 3: {mixed:?} vs {pinned:?}");
    for (sets, needle) in [
        (&["host.nvme.irq_cpus_by_drive=[\"0\", \"1\", \"2\"]"][..], "at most one CPU list per drive"),
        (&["host.nvme.irq_cpus_by_drive=[\"0\", \"7\"]"][..], "entry 1 (nvme1)"),
    ] {
        let message = load_error(text, sets);
        assert!(message.contains("host.nvme.irq_cpus_by_drive") && message.contains(needle), "{message}");
    }
}
