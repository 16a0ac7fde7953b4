//! Hosts with several drives (`device.count`, `flow.device`): each drive its own state, seed stream, queues and
//! results; one drive's results unchanged by the others.

use crate::common::{flow_json, json, load_error, run, scenario_with, small_consumer_writer};
use ullsim::config::drives::MD_VOLUME;
use ullsim::config::md::MdConfig;
use ullsim::config::target::Storage;
use ullsim::config::units::{Bytes, SizeOrPercent};
use ullsim::engine::EventQueue;
use ullsim::request::Op;
use ullsim::workload::{NewIo, Workload, WorkloadEvent};
use ullsim::RunResults;

/// Device-only host, `optane-ull` drives without their latency variability (in-place media: no GC, no random
/// placement, so a drive's seed stream changes nothing), a 4 KiB random writer `w` at QD8 and a random reader `r`
/// at QD4.
const TWO_FLOWS: &str = "seed = 3\n[run]\nduration = \"20ms\"\nwarmup = \"2ms\"\n[host]\nmodel = \"device-only\"\n\
                         [device]\npreset = \"optane-ull\"\n[device.variability]\nenabled = false\n\
                         [[flow]]\nname = \"w\"\nrw = \"randwrite\"\nbs = \"4k\"\niodepth = 8\n\
                         [[flow]]\nname = \"r\"\nrw = \"randread\"\nbs = \"4k\"\niodepth = 4\n";

/// Flow `name` of `text` alone on a one-drive host.
fn alone(text: &str, name: &str) -> RunResults {
    let s = scenario_with(text, &[]);
    let index = s.flows.iter().position(|f| f.name == name).unwrap();
    run(&s.alone(index))
}

#[test]
fn a_flow_on_each_of_two_drives_gets_what_it_gets_alone_on_one() {
    let apart = run(&scenario_with(TWO_FLOWS, &["device.count=2", "flow.r.device=nvme1"]));
    for name in ["w", "r"] {
        assert_eq!(flow_json(&apart, name), flow_json(&alone(TWO_FLOWS, name), name), "flow {name}");
    }
    // The comparison can fail: on one drive the writer slows the reader down.
    let together = run(&scenario_with(TWO_FLOWS, &["device.count=2"]));
    assert_ne!(flow_json(&together, "r"), flow_json(&alone(TWO_FLOWS, "r"), "r"));
    let shared = &together.flows[1];
    let own = &apart.flows[1];
    assert!(shared.latency_ns.mean > own.latency_ns.mean, "{} vs {}", shared.latency_ns.mean, own.latency_ns.mean);
}

/// On a drive with random preconditioning and GC (its seed streams matter), the first drive of two draws what
/// a host's only drive draws: a flow on it, and the drive, give the same bytes.
#[test]
fn the_first_drive_of_several_is_the_only_drive_of_one() {
    let text = small_consumer_writer("30ms", 16);
    let base = ["host.model=device-only", "device.slc.enabled=false"];
    let one = run(&scenario_with(&text, &base));
    let first = run(&scenario_with(&text, &[&base[..], &["device.count=2"]].concat()));
    assert!(one.device.gc_pages_programmed > 0, "GC ran, so the drive's draws matter");
    assert_eq!(json(&first.flows), json(&one.flows));
    assert_eq!(json(&first.device), json(&one.device));
    assert_eq!(json(&first.devices[0].results), json(&one.device));
}

/// The second drive draws from a stream of its own: with the drive's latency variability on, the same flow on
/// it sees other latencies than on the first drive, of the same distribution.
#[test]
fn the_other_drives_draw_their_own() {
    let on = ["device.variability.enabled=true", "device.count=2"];
    let first = run(&scenario_with(TWO_FLOWS, &on));
    let second = run(&scenario_with(TWO_FLOWS, &[&on[..], &["flow.w.device=nvme1", "flow.r.device=nvme1"]].concat()));
    for (a, b) in first.flows.iter().zip(&second.flows) {
        assert_ne!(json(a), json(b), "flow {}", a.name);
        let (a, b) = (a.latency_ns.mean, b.latency_ns.mean);
        assert!((a / b - 1.0).abs() < 0.02, "{a} vs {b}");
    }
}

#[test]
fn a_flow_on_nvme1_leaves_nvme0_idle() {
    let one = run(&scenario_with(TWO_FLOWS, &["flow.w.rw=randread"]));
    let two = run(&scenario_with(
        TWO_FLOWS,
        &["flow.w.rw=randread", "device.count=2", "flow.w.device=nvme1", "flow.r.device=nvme1"],
    ));
    let names: Vec<&str> = two.devices.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["nvme0", "nvme1"]);
    let (idle, busy) = (&two.devices[0].results, &two.devices[1].results);
    assert_eq!((idle.busy, idle.queue_depth.max, idle.die_utilization.max), (0.0, 0, 0.0));
    assert!(busy.busy > 0.5 && busy.queue_depth.max > 0);
    // `device` is the first drive's.
    assert_eq!(json(&two.device), json(idle));
    // Everything nvme1 did is what the only drive did with the same flows; nvme0 adds its idle power.
    assert_eq!(json(busy), json(&one.device));
    assert_eq!(json(&two.flows), json(&one.flows));
    let power = ullsim::config::host::PowerConfig::default();
    let added = two.energy.mean_watts - one.energy.mean_watts;
    assert!((added - power.device_idle_w).abs() < 1e-9, "{added} W");
}

#[test]
fn one_drive_reports_no_devices_list_and_several_drives_run_the_same_twice() {
    let one = serde_json::to_value(run(&scenario_with(TWO_FLOWS, &[]))).unwrap();
    assert!(one.get("devices").is_none() && one.get("device").is_some());
    let s = scenario_with(TWO_FLOWS, &["device.count=3", "flow.r.device=nvme2"]);
    let (a, b) = (run(&s), run(&s));
    assert_eq!(json(&a), json(&b));
    let value = serde_json::to_value(&a).unwrap();
    assert_eq!(value["devices"].as_array().unwrap().len(), 3);
    assert_eq!(value["devices"][2]["name"], "nvme2");
    assert_eq!(value["devices"][2]["preset"], "optane-ull");
}

#[test]
fn bad_drive_counts_and_names_are_errors_naming_the_key() {
    for (set, key, says) in [
        ("device.count=0", "device.count", "expected 1 to 64 drives"),
        ("device.count=65", "device.count", "expected 1 to 64 drives"),
        ("device.count=\"two\"", "device.count", "a whole number from 1 to 64"),
        ("flow.r.device=nvme1", "flow[1].device", "the only drive is \"nvme0\" (device.count = 1)"),
        ("flow.r.device=sda", "flow[1].device", "found \"sda\""),
        ("flow.r.device=2", "flow[1].device", "invalid type"),
    ] {
        let message = load_error(TWO_FLOWS, &[set]);
        assert!(message.contains(&format!("key `{key}`")) && message.contains(says), "{set}: {message}");
    }
    let message = load_error(TWO_FLOWS, &["device.count=2", "flow.r.device=nvme2"]);
    assert!(message.contains("\"nvme0\" to \"nvme1\" (device.count = 2)"), "{message}");
}

/// Device-only host of 4 `optane-ull` drives (variability off), one 4 KiB random reader `r` at QD1 on the list
/// nvme0 to nvme2: tests set the rest.
const LIST: &str = "seed = 5\n[run]\nduration = \"20ms\"\nwarmup = \"0ms\"\n[host]\nmodel = \"device-only\"\n\
                    [device]\npreset = \"optane-ull\"\ncount = 4\n[device.variability]\nenabled = false\n\
                    [[flow]]\nname = \"r\"\nrw = \"randread\"\nbs = \"4k\"\ndevice = \"nvme0:nvme1:nvme2\"\n";

/// The first `n` I/Os (and syncs) the workload of `text` with `overrides` issues, its flows' I/Os completing at
/// once in issue order.
fn new_ios(text: &str, overrides: &[&str], n: usize) -> Vec<NewIo> {
    let s = scenario_with(text, overrides);
    workload_ios(&s.flows, &s.storage().unwrap(), n)
}

fn workload_ios(flows: &[ullsim::config::FlowSpec], storage: &Storage, n: usize) -> Vec<NewIo> {
    let mut workload = Workload::new(flows, 5, storage, u64::MAX, std::path::Path::new(".")).unwrap();
    let mut q: EventQueue<WorkloadEvent> = EventQueue::new();
    let mut out: Vec<NewIo> = Vec::new();
    workload.handle(WorkloadEvent::Start { flow: 0 }, &mut q, &mut out);
    let mut done = 0;
    while out.len() < n {
        let io = out[done];
        workload.on_complete(io.flow, io.job, io.op, &mut q, &mut out);
        done += 1;
    }
    out.truncate(n);
    out
}

fn drives(ios: &[NewIo]) -> Vec<u32> {
    ios.iter().map(|io| io.drive).collect()
}

#[test]
fn a_round_robin_flow_sends_its_ios_to_its_drives_in_turn_as_fio_does() {
    // fio's default: the next file after every I/O.
    assert_eq!(drives(&new_ios(LIST, &[], 9)), [0, 1, 2, 0, 1, 2, 0, 1, 2]);
    // In list order, whatever the drives' numbers.
    assert_eq!(drives(&new_ios(LIST, &["flow.r.device=nvme3:nvme1"], 4)), [3, 1, 3, 1]);
    // roundrobin:4 switches every 4 I/Os.
    let ios = new_ios(LIST, &["flow.r.file_service_type=roundrobin:4"], 14);
    assert_eq!(drives(&ios), [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 0, 0]);
    // Each job has its turn of its own: with two jobs at QD1, each job's I/Os go 0, 1, 2, ...
    let ios = new_ios(LIST, &["flow.r.numjobs=2"], 12);
    for job in 0..2 {
        let own: Vec<u32> = ios.iter().filter(|io| io.job == job).map(|io| io.drive).collect();
        assert_eq!(own, [0, 1, 2, 0, 1, 2], "job {job}");
    }
    // The random offsets are the flow's as on one drive: the drives are files of the same size.
    let one = new_ios(LIST, &["flow.r.device=nvme0"], 30);
    let offsets = |ios: &[NewIo]| ios.iter().map(|io| io.offset).collect::<Vec<_>>();
    assert_eq!(offsets(&new_ios(LIST, &[], 30)), offsets(&one));
    assert!(drives(&one).iter().all(|&d| d == 0));
}

#[test]
fn a_random_file_service_spreads_ios_over_the_drives() {
    let n = 6000;
    let ios = new_ios(LIST, &["flow.r.file_service_type=random"], n);
    let mut counts = [0usize; 3];
    ios.iter().for_each(|io| counts[io.drive as usize] += 1);
    // Binomial(6000, 1/3): sd ~37; 5 sd.
    assert!(counts.iter().all(|&c| c.abs_diff(n / 3) < 185), "{counts:?}");
    // Not in turn: some I/O goes to the drive of the one before it.
    assert!(ios.windows(2).any(|w| w[0].drive == w[1].drive));
    // random:8 keeps each draw for 8 I/Os.
    let ios = new_ios(LIST, &["flow.r.file_service_type=random:8"], 800);
    assert!(ios.chunks(8).all(|run| run.iter().all(|io| io.drive == run[0].drive)));
}

#[test]
fn a_sequential_flow_on_a_list_gives_each_drive_a_contiguous_stream() {
    let ios = new_ios(LIST, &["flow.r.rw=read", "flow.r.offset=1m"], 300);
    for drive in 0..3 {
        let offsets: Vec<u64> = ios.iter().filter(|io| io.drive == drive).map(|io| io.offset).collect();
        assert_eq!(offsets, (0..100).map(|i| (1 << 20) + i * 4096).collect::<Vec<_>>(), "drive {drive}");
    }
    // "sequential" finishes a drive's region before it moves on, and starts over after the last.
    let ios = new_ios(LIST, &["flow.r.rw=read", "flow.r.size=64k", "flow.r.file_service_type=sequential"], 52);
    let expected: Vec<(u32, u64)> = (0..52).map(|i| ((i / 16 % 3) as u32, (i % 16) as u64 * 4096)).collect();
    assert_eq!(ios.iter().map(|io| (io.drive, io.offset)).collect::<Vec<_>>(), expected);
    // Round robin over regions of 64 KiB: each drive's stream wraps at its end, all together.
    let ios = new_ios(LIST, &["flow.r.rw=read", "flow.r.size=64k"], 96);
    let expected: Vec<(u32, u64)> = (0..96).map(|i| ((i % 3) as u32, (i / 3 % 16) as u64 * 4096)).collect();
    assert_eq!(ios.iter().map(|io| (io.drive, io.offset)).collect::<Vec<_>>(), expected);
}

/// fio gives a sync its file as any other I/O (`get_next_file`): on a list it goes where the job's next I/O
/// would, and takes that turn.
#[test]
fn a_flush_goes_to_the_drive_of_the_jobs_next_turn() {
    let ios = new_ios(LIST, &["flow.r.rw=randwrite", "flow.r.flush_every=3"], 12);
    let seen: Vec<(Op, u32)> = ios.iter().map(|io| (io.op, io.drive)).collect();
    let (w, f) = (Op::Write, Op::Flush);
    assert_eq!(seen, [(w, 0), (w, 1), (w, 2), (f, 0), (w, 1), (w, 2), (w, 0), (f, 1), (w, 2), (w, 0), (w, 1), (f, 2)]);
}

#[test]
fn an_md_flow_addresses_the_volume_and_its_requests_carry_the_sentinel() {
    let s = scenario_with(LIST, &[]);
    let drive_bytes = s.device.logical_capacity_bytes();
    let md = MdConfig { level: 0, devices: Some("nvme0:nvme1".into()), chunk: Bytes(64 << 10) };
    let drive_bytes = vec![drive_bytes; 4];
    let storage = Storage { md: Some(md.raid0(&drive_bytes).unwrap()), drive_bytes };
    let drive_bytes = storage.drive_bytes[0];
    let volume = storage.md.as_ref().unwrap().capacity();
    assert_eq!(volume, 2 * (drive_bytes / (64 << 10) * (64 << 10)));
    let mut flow = s.flows[0].clone();
    flow.device = Some("md0".into());
    flow.offset = Some(SizeOrPercent::Percent(50.0));
    let ios = workload_ios(std::slice::from_ref(&flow), &storage, 2000);
    assert!(ios.iter().all(|io| io.drive == MD_VOLUME));
    // The region is the volume's second half: offsets beyond one drive's capacity.
    assert!(ios.iter().all(|io| io.offset >= volume / 2 && io.offset + u64::from(io.len) <= volume));
    assert!(ios.iter().any(|io| io.offset > drive_bytes));
    // A flush of an md flow goes to the volume too.
    flow.rw = Some(ullsim::config::scenario::RwMode::Randwrite);
    flow.flush_every = Some(2);
    let ios = workload_ios(std::slice::from_ref(&flow), &storage, 9);
    assert!(ios.iter().any(|io| io.op == Op::Flush) && ios.iter().all(|io| io.drive == MD_VOLUME));
}

#[test]
fn a_device_only_flow_on_four_drives_reads_each_equally() {
    let s =
        scenario_with(LIST, &["flow.r.device=nvme0:nvme1:nvme2:nvme3", "flow.r.iodepth=8", "flow.r.number_ios=4002"]);
    let results = run(&s);
    assert_eq!(results.flows[0].completed, 4002);
    let reads: Vec<u64> = results.devices.iter().map(|d| d.results.flash_reads).collect();
    let (low, high) = (reads.iter().min().unwrap(), reads.iter().max().unwrap());
    assert!(*low > 0 && high - low <= 1, "{reads:?}");
    // Each drive serves the flow through a queue of its own: the four share the load, so the flow's latency is
    // one drive's at a quarter of the depth.
    let one = run(&scenario_with(LIST, &["flow.r.device=nvme0", "flow.r.iodepth=8", "flow.r.number_ios=4002"]));
    assert!(
        results.flows[0].latency_ns.mean < one.flows[0].latency_ns.mean,
        "{} vs {}",
        results.flows[0].latency_ns.mean,
        one.flows[0].latency_ns.mean
    );
}

#[test]
fn bad_targets_md_tables_and_file_service_types_are_errors_naming_the_key() {
    let md = "\n[md]\nlevel = 0\n";
    let with_md = format!("{LIST}{md}");
    for (text, set, key, says) in [
        (LIST, "flow.r.device=nvme0:nvme4", "flow[0].device", "in the list \"nvme0:nvme4\""),
        (LIST, "flow.r.device=nvme0:nvme1:nvme0", "flow[0].device", "\"nvme0\" is listed twice"),
        (LIST, "flow.r.device=md0", "flow[0].device", "the scenario has no [md] table"),
        (&with_md, "flow.r.device=md0", "flow[0].device", "host.model = \"device-only\" has no host"),
        (&with_md, "md.level=1", "md.level", "expected 0"),
        (&with_md, "md.level=\"raid0\"", "md.level", "from 0 to 0"),
        (&with_md, "md.chunk=6k", "md.chunk", "multiple of 4 KiB"),
        (&with_md, "md.chunk=0", "md.chunk", "multiple of 4 KiB"),
        (&with_md, "md.devices=nvme1:nvme4", "md.devices", "found \"nvme4\""),
        (&with_md, "md.devices=nvme1:nvme1", "md.devices", "listed twice"),
        (LIST, "flow.r.file_service_type=rr", "flow[0].file_service_type", "expected \"roundrobin\""),
        (LIST, "flow.r.file_service_type=roundrobin:0", "flow[0].file_service_type", "from 1"),
        (LIST, "flow.r.file_service_type=zipf", "flow[0].file_service_type", "not modeled"),
    ] {
        let message = load_error(text, &[set]);
        assert!(message.contains(&format!("key `{key}`")) && message.contains(says), "{set}: {message}");
    }
    let message = load_error(LIST, &["flow.r.device=nvme1", "flow.r.file_service_type=random"]);
    assert!(message.contains("key `flow[0].file_service_type`") && message.contains("only to a flow on a list"));
    // A list is for synthetic flows (a file-system flow stays on nvme0).
    let message = load_error(LIST, &["flow.r.rw=randwrite", "flow.r.direct=0", "flow.r.ioengine=psync"]);
    assert!(message.contains("key `flow[0].device`") && message.contains("target nvme0"), "{message}");
    // [md] alone loads, with mdadm's default chunk over all the drives.
    let s = scenario_with(&with_md, &[]);
    let volume = s.storage().unwrap().md.unwrap();
    assert_eq!((volume.members(), volume.chunk()), (&[0, 1, 2, 3][..], 512 << 10));
}
