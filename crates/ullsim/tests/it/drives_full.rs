//! The full host with several drives: each drive has its own request queue (I/O scheduler and its lock), NVMe
//! queues and interrupt vectors, so flows on different drives meet only where they share cores.

use crate::common::{run, scenario_with};
use ullsim::RunResults;

/// Full host of 4 cores, `optane-ull` drives without latency variability, a 4 KiB random writer `w` at QD8
/// pinned to core 0 and a random reader `r` at QD4 pinned to core 2 (their interrupts go to their own cores).
const PINNED: &str = "seed = 5\n[run]\nduration = \"20ms\"\nwarmup = \"2ms\"\n[host]\ncores = 4\n\
                      [device]\npreset = \"optane-ull\"\n[device.variability]\nenabled = false\n\
                      [[flow]]\nname = \"w\"\nrw = \"randwrite\"\nbs = \"4k\"\niodepth = 8\ncpus_allowed = \"0\"\n\
                      [[flow]]\nname = \"r\"\nrw = \"randread\"\nbs = \"4k\"\niodepth = 4\ncpus_allowed = \"2\"\n";

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap()
}

fn flow_json(results: &RunResults, name: &str) -> String {
    json(results.flows.iter().find(|f| f.name == name).expect("the flow ran"))
}

/// Flow `name` alone on a one-drive host, with the `sets` overrides.
fn alone(name: &str, sets: &[&str]) -> RunResults {
    let s = scenario_with(PINNED, sets);
    let index = s.flows.iter().position(|f| f.name == name).unwrap();
    run(&s.alone(index))
}

/// Under mq-deadline and bfq, whose queue-wide lock serialises a drive's requests, flows pinned to their own
/// cores on their own drives take no lock of the other's: each gets, byte for byte, what it gets alone. On
/// one drive they share the lock (and the drive), and the reader's results change.
#[test]
fn pinned_flows_on_their_own_drives_share_no_scheduler_lock() {
    for scheduler in ["mq-deadline", "bfq", "kyber", "none"] {
        let sched = format!("host.io_scheduler=\"{scheduler}\"");
        let apart = run(&scenario_with(PINNED, &[&sched, "device.count=2", "flow.r.device=nvme1"]));
        for name in ["w", "r"] {
            assert_eq!(flow_json(&apart, name), flow_json(&alone(name, &[&sched]), name), "{scheduler}: flow {name}");
        }
        let together = run(&scenario_with(PINNED, &[&sched]));
        assert_ne!(flow_json(&together, "r"), flow_json(&alone("r", &[&sched]), "r"), "{scheduler}");
        // Each drive's lock is waited for as each flow waits alone (its interrupts and submissions meet on its
        // core); one drive's lock, taken from two cores, is waited for longer.
        let alone_wait: u64 = ["w", "r"].iter().map(|name| alone(name, &[&sched]).host.block.lock_wait_ns).sum();
        assert_eq!(apart.host.block.lock_wait_ns, alone_wait, "{scheduler}");
        if scheduler == "mq-deadline" || scheduler == "bfq" {
            assert!(together.host.block.lock_wait_ns > alone_wait, "{scheduler}: the one drive's lock is shared");
        }
    }
}

/// A full host whose flows all use nvme0 runs the same with spare drives: the other drives' queues and
/// vectors exist and stay idle.
#[test]
fn spare_drives_change_nothing_on_the_full_host() {
    for scheduler in ["mq-deadline", "bfq"] {
        let sched = format!("host.io_scheduler=\"{scheduler}\"");
        let one = run(&scenario_with(PINNED, &[&sched]));
        let three = run(&scenario_with(PINNED, &[&sched, "device.count=3"]));
        assert_eq!(json(&three.flows), json(&one.flows), "{scheduler}");
        assert_eq!(json(&three.device), json(&one.device), "{scheduler}");
        assert_eq!(json(&three.host.block), json(&one.host.block), "{scheduler}");
        assert_eq!(three.devices[1].results.queue_depth.max, 0);
    }
}

/// Each drive's commands complete on its own queues: with flows spread over four drives, every drive serves
/// its flow's reads and the host's interrupt count covers them all.
#[test]
fn flows_on_four_drives_each_keep_their_drive_busy() {
    let sets = [
        "device.count=4",
        "flow.w.rw=randread",
        "flow.w.device=nvme3",
        "flow.r.device=nvme2",
        "host.io_scheduler=\"mq-deadline\"",
    ];
    let r = run(&scenario_with(PINNED, &sets));
    let served: Vec<u64> = r.devices.iter().map(|d| d.results.flash_reads).collect();
    assert_eq!(served[0] + served[1], 0, "{served:?}");
    assert!(served[2] > 0 && served[3] > 0, "{served:?}");
    let completed: u64 = r.flows.iter().map(|f| f.completed).sum();
    assert!(r.host.interrupts > 0 && r.host.interrupts <= completed + 64, "{} for {completed}", r.host.interrupts);
}
