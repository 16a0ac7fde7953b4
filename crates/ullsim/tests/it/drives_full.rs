//! The full host with several drives: each drive has its own request queue (I/O scheduler and its lock), NVMe
//! queues and interrupt vectors, so flows on different drives meet only where they share cores.

use crate::common::{flow_json, json, run, scenario_with};
use ullsim::RunResults;

/// Full host of 4 cores, `optane-ull` drives without latency variability, a 4 KiB random writer `w` at QD8
/// pinned to core 0 and a random reader `r` at QD4 pinned to core 2 (their interrupts go to their own cores).
const PINNED: &str = "seed = 5\n[run]\nduration = \"20ms\"\nwarmup = \"2ms\"\n[host]\ncores = 4\n\
                      [device]\npreset = \"optane-ull\"\n[device.variability]\nenabled = false\n\
                      [[flow]]\nname = \"w\"\nrw = \"randwrite\"\nbs = \"4k\"\niodepth = 8\ncpus_allowed = \"0\"\n\
                      [[flow]]\nname = \"r\"\nrw = \"randread\"\nbs = \"4k\"\niodepth = 4\ncpus_allowed = \"2\"\n";

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

/// Full host, four `optane-ull` drives without variability, an md RAID-0 of 64 KiB chunks over them, and one
/// reader on it.
const MD: &str = "seed = 2\n[run]\nduration = \"10ms\"\nwarmup = \"1ms\"\n[host]\ncores = 4\n\
                  [device]\npreset = \"optane-ull\"\ncount = 4\n[device.variability]\nenabled = false\n\
                  [md]\nlevel = 0\nchunk = \"64KiB\"\n\
                  [[flow]]\nname = \"r\"\nrw = \"randread\"\nbs = \"4k\"\niodepth = 4\ndevice = \"md0\"\n";

/// Flash reads per drive.
fn reads(r: &RunResults) -> Vec<u64> {
    r.devices.iter().map(|d| d.results.flash_reads).collect()
}

/// md maps volume chunk `c` to member `c mod n` (md's order): reads confined to one chunk reach only its
/// member, whatever the members' order.
#[test]
fn md_sends_a_chunk_to_its_member() {
    for (chunk, devices, member) in
        [(3, None, 3), (5, None, 1), (3, Some("nvme2:nvme0:nvme3:nvme1"), 1), (4, Some("nvme2:nvme0:nvme3:nvme1"), 2)]
    {
        let mut sets = vec![format!("flow.r.offset={}", chunk * 65_536), "flow.r.size=65536".to_string()];
        if let Some(list) = devices {
            sets.push(format!("md.devices=\"{list}\""));
        }
        let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
        let served = reads(&run(&scenario_with(MD, &sets)));
        for (drive, &n) in served.iter().enumerate() {
            assert_eq!(n > 0, drive == member, "chunk {chunk} of {devices:?}: {served:?}");
        }
    }
}

/// A request across chunks is split at their boundaries, a piece to each member: aligned 256 KiB reads on 64 KiB
/// chunks give every drive a quarter of each request (the same flash reads on each), also when the pieces are
/// split again at `max_sectors_kb`, and each request completes once, with its last piece.
#[test]
fn md_splits_a_request_across_chunks_over_the_members() {
    for (bs, max_sectors_kb) in [("256k", 1280), ("256k", 32), ("1m", 128)] {
        let r = run(&scenario_with(
            MD,
            &[&format!("flow.r.bs={bs}"), &format!("host.block.max_sectors_kb={max_sectors_kb}")],
        ));
        // Equal but for the pieces in flight at the window's edges (4 requests of at most 64 flash reads each).
        let served = reads(&r);
        let (low, high) = (*served.iter().min().unwrap(), *served.iter().max().unwrap());
        assert!(low > 1_000 && high - low <= 4 * 64, "{bs}, {max_sectors_kb}: {served:?}");
        let flow = &r.flows[0];
        assert!(flow.completed > 50, "{bs}: {}", flow.completed);
        // Each completed request was counted once, with all its bytes.
        let bytes = flow.bandwidth_bytes_per_s * flow.window.seconds();
        let request = if bs == "1m" { 1 << 20 } else { 256 << 10 } as f64;
        assert!((bytes / request - flow.completed as f64).abs() < 1e-6, "{bs}: {bytes} bytes");
    }
}

/// Each piece pays md's pass (`block.md_submit_ns`): a 4 KiB read within a chunk one pass, so at QD1 its
/// latency grows by exactly the change of that cost.
#[test]
fn md_charges_its_pass_per_piece() {
    let at = |ns: u64| {
        let sets = ["flow.r.iodepth=1", &format!("host.block.md_submit_ns={ns}")];
        run(&scenario_with(MD, &sets)).flows[0].latency_ns.mean
    };
    let (cheap, dear) = (at(0), at(1_000));
    assert!((dear - cheap - 1_000.0).abs() < 20.0, "{cheap} -> {dear}");
}
