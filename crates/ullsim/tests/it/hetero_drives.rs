//! Heterogeneous drives (`[drives.nvmeN]`): each drive its own preset or keys, its own capacity and queue
//! depth; a flow on a drive gets what it gets on a one-drive host of that drive's configuration.

use crate::common::{flow_json, json, load_error, run, scenario_with};
use ullsim::config::target::Target;
use ullsim::RunResults;

/// Device-only host, a 4 KiB random reader `a` at QD8 and a random writer `b` at QD4, drives without latency
/// variability: `optane-ull` in the `[device]`, whatever the drive tables make of them.
const TWO_FLOWS: &str = "seed = 3\n[run]\nduration = \"20ms\"\nwarmup = \"2ms\"\ncheck_invariants = true\n\
                         [host]\nmodel = \"device-only\"\n\
                         [device]\npreset = \"optane-ull\"\n[device.variability]\nenabled = false\n\
                         [[flow]]\nname = \"a\"\nrw = \"randread\"\nbs = \"4k\"\niodepth = 8\n\
                         [[flow]]\nname = \"b\"\nrw = \"randwrite\"\nbs = \"4k\"\niodepth = 4\n";

/// Flow `name` of `text` alone on a one-drive host of `sets`.
fn alone(text: &str, name: &str, sets: &[&str]) -> RunResults {
    let s = scenario_with(text, sets);
    let index = s.flows.iter().position(|f| f.name == name).unwrap();
    run(&s.alone(index))
}

/// A `tlc-consumer` shrunk to 64 blocks per plane (a short preconditioning; too few for its SLC cache, so
/// without), without variability, as the scenario's `[device]`.
const CONSUMER: [&str; 4] = [
    "device.preset=tlc-consumer",
    "device.variability.enabled=false",
    "device.flash.blocks_per_plane=64",
    "device.slc.enabled=false",
];

/// nvme0 a `tlc-consumer` (it draws the scenario's seed, as a one-drive host's drive does), nvme1 an
/// `optane-ull` without variability (in-place media and no variability: its own seed stream changes nothing),
/// a flow on each: each flow gets, byte for byte, what it gets alone on a one-drive host of its drive's preset;
/// and both ways of giving a drive its preset (a table in the file, `--set`) agree.
#[test]
fn a_flow_on_each_drive_gets_what_it_gets_alone_on_a_drive_of_that_preset() {
    let text = format!(
        "{TWO_FLOWS}[drives.nvme0]\npreset = \"tlc-consumer\"\n[drives.nvme0.variability]\nenabled = false\n\
         [drives.nvme0.flash]\nblocks_per_plane = 64\n[drives.nvme0.slc]\nenabled = false\n"
    )
    .replace("[[flow]]\nname = \"b\"", "[[flow]]\nname = \"b\"\ndevice = \"nvme1\"");
    let both = run(&scenario_with(&text, &["device.count=2"]));
    assert_eq!(flow_json(&both, "a"), flow_json(&alone(TWO_FLOWS, "a", &CONSUMER), "a"));
    assert_eq!(flow_json(&both, "b"), flow_json(&alone(TWO_FLOWS, "b", &[]), "b"));
    let presets: Vec<&str> = both.devices.iter().map(|d| d.results.preset.as_str()).collect();
    assert_eq!(presets, ["tlc-consumer", "optane-ull"]);
    assert_eq!(both.scenario.preset, "tlc-consumer", "the scenario's preset is nvme0's");
    // The same drives given with --set.
    let set = [
        "device.count=2",
        "drives.nvme0.preset=tlc-consumer",
        "drives.nvme0.variability.enabled=false",
        "drives.nvme0.flash.blocks_per_plane=64",
        "drives.nvme0.slc.enabled=false",
        "flow.b.device=nvme1",
    ];
    assert_eq!(json(&run(&scenario_with(TWO_FLOWS, &set))), json(&both));
    // The comparison can fail: a tlc-consumer reader is slower than an optane-ull one.
    let optane = alone(TWO_FLOWS, "a", &[]);
    assert!(both.flows[0].latency_ns.mean > 2.0 * optane.flows[0].latency_ns.mean);
}

/// The other way round: a `tlc-consumer` on nvme1 (it draws a stream of its own, with no variability and a
/// sequentially preconditioned drive it draws nothing) serves its flow as a one-drive host of it does.
#[test]
fn a_second_drive_of_another_preset_serves_as_a_one_drive_host_of_it() {
    let sets = [
        "device.count=2",
        "drives.nvme1.preset=tlc-consumer",
        "drives.nvme1.variability.enabled=false",
        "drives.nvme1.flash.blocks_per_plane=64",
        "drives.nvme1.slc.enabled=false",
    ];
    let s = scenario_with(TWO_FLOWS, &[&sets[..], &["flow.a.device=nvme1"]].concat());
    assert_eq!(s.drive_config(1).preset, "tlc-consumer");
    assert_eq!(s.device.preset, "optane-ull");
    let both = run(&s);
    assert_eq!(flow_json(&both, "a"), flow_json(&alone(TWO_FLOWS, "a", &CONSUMER), "a"));
    assert_eq!(flow_json(&both, "b"), flow_json(&alone(TWO_FLOWS, "b", &[]), "b"));
    assert_eq!(both.devices[1].results.preset, "tlc-consumer");
}

/// A drive table without `preset` starts from the scenario's merged `[device]` (its preset, file keys and
/// `--set`s) and changes only its own keys; one with `preset` starts from that preset, not from `[device]`'s
/// keys; drives without a table are the `[device]`, also when nvme0 has one.
#[test]
fn a_drive_table_starts_from_the_device_or_from_its_preset() {
    let s = scenario_with(
        TWO_FLOWS,
        &[
            "device.count=3",
            "device.flash.read_ns=5000",
            "drives.nvme1.flash.channels=4",
            "drives.nvme0.preset=znand-ull",
        ],
    );
    let (base, one, zero) = (s.drive_config(2), s.drive_config(1), s.drive_config(0));
    assert_eq!((base.preset.as_str(), base.flash.read_ns.0, base.variability.enabled), ("optane-ull", 5000, false));
    assert_eq!((one.preset.as_str(), one.flash.read_ns.0, one.variability.enabled), ("optane-ull", 5000, false));
    assert_eq!(one.flash.channels, 4);
    assert_ne!(base.flash.channels, 4);
    let znand = scenario_with(TWO_FLOWS, &["device.preset=znand-ull"]);
    assert_eq!(zero.preset, "znand-ull");
    assert_eq!(zero.flash.read_ns, znand.device.flash.read_ns, "not [device]'s read_ns");
    assert!(zero.variability.enabled, "the preset's variability, not [device]'s");
    assert_eq!(s.device.preset, "znand-ull", "scenario.device is nvme0's");
    assert_eq!(s.device.count, 3);
    assert!(s.drive_configs().all(|d| d.count == 3));
}

/// A stack's firmware keys are every drive's firmware policy: they go under a drive table's own keys and over
/// its preset's, as under `[device]`.
#[test]
fn a_stacks_firmware_keys_apply_to_every_drive() {
    let sets =
        ["host.model=full", "host.stack=flashshare-cacheopt", "device.count=3", "drives.nvme1.preset=tlc-consumer"];
    let s = scenario_with(TWO_FLOWS, &sets);
    assert!(s.drive_configs().all(|d| d.cache.read_policy == "flashshare"));
    assert_eq!(s.drive_config(1).preset, "tlc-consumer");
    let own = scenario_with(TWO_FLOWS, &[&sets[..], &["drives.nvme1.cache.read_policy=\"uniform\""]].concat());
    assert_eq!(own.drive_config(1).cache.read_policy, "uniform", "the drive's own key over the stack's");
    assert_eq!(own.drive_config(2).cache.read_policy, "flashshare");
}

/// Full host, one core, 200 µs reads (the core keeps up): a QD16 reader on a drive with `queue_depth = 5` has
/// at most 4 commands in it (its hardware queue's driver tags), while the same reader on a 1024-deep drive
/// beside it keeps 16 there; the
/// tags balance at the end (`check_invariants` runs `check_tags`). The device-only host's queue slots follow
/// each drive's depth likewise.
#[test]
fn each_drive_keeps_its_own_queue_depth() {
    for (model, scheduler) in [("full", "none"), ("full", "mq-deadline"), ("device-only", "none")] {
        let sets = [
            &format!("host.model={model}"),
            "host.cores=1",
            &format!("host.io_scheduler=\"{scheduler}\""),
            "device.count=2",
            "device.flash.read_ns=200000",
            "flow.a.iodepth=16",
            "flow.b.rw=randread",
            "flow.b.iodepth=16",
            "flow.b.device=nvme1",
        ];
        let deep = run(&scenario_with(TWO_FLOWS, &sets));
        let shallow =
            run(&scenario_with(TWO_FLOWS, &[&sets[..], &["drives.nvme1.host_interface.queue_depth=5"]].concat()));
        let max = |r: &RunResults, d: usize| r.devices[d].results.queue_depth.max;
        assert_eq!((max(&deep, 0), max(&deep, 1)), (16, 16), "{model} {scheduler}");
        assert_eq!((max(&shallow, 0), max(&shallow, 1)), (16, 4), "{model} {scheduler}");
        if scheduler == "mq-deadline" {
            // nr_requests' default is 2 × min(depth, 128) per drive: 8 on the shallow drive, so its reader waits
            // for allocation tags; 256 on the deep one, so no one waits.
            assert_eq!(deep.host.block.tag_waits, 0);
            assert!(shallow.host.block.tag_waits > 0);
        }
    }
}

/// md's members must hold as much (in whole chunks): drives of other capacities are an error at `md.devices`;
/// drives of equal capacity but other timings stripe.
#[test]
fn md_over_drives_of_unequal_capacity_is_an_error() {
    let md = "\n[md]\nlevel = 0\n";
    let text = format!("{TWO_FLOWS}{md}").replace("[host]\nmodel = \"device-only\"\n", "");
    let sets = ["device.count=2", "flow.a.device=md0"];
    let message = load_error(&text, &[&sets[..], &["drives.nvme1.preset=tlc-consumer"]].concat());
    assert!(message.contains("key `md.devices`: the members hold different capacities"), "{message}");
    assert!(message.contains("nvme0") && message.contains("nvme1"), "{message}");
    let message = load_error(&text, &[&sets[..], &["drives.nvme1.flash.blocks_per_plane=100"]].concat());
    assert!(message.contains("key `md.devices`"), "{message}");
    // Equal capacity, other timing: one volume of both.
    let s = scenario_with(&text, &[&sets[..], &["drives.nvme1.flash.read_ns=20000"]].concat());
    let storage = s.storage().unwrap();
    assert_eq!(storage.capacity(&Target::Md), 2 * (storage.drive_bytes[0] / (512 << 10) * (512 << 10)));
    // A list of the equal drives is fine beside an unequal third.
    let listed = ["device.count=3", "drives.nvme2.preset=tlc-consumer", "md.devices=\"nvme0:nvme1\""];
    scenario_with(&text, &[&sets[..], &listed[..]].concat());
}

/// A flow on a list of drives of different capacities addresses the smallest's (its region is the same range
/// on each drive).
#[test]
fn a_list_flows_region_is_on_its_smallest_drive() {
    let s = scenario_with(TWO_FLOWS, &["device.count=2", "drives.nvme1.flash.blocks_per_plane=100"]);
    let storage = s.storage().unwrap();
    let (big, small) = (storage.drive_bytes[0], storage.drive_bytes[1]);
    assert!(small < big, "{small} vs {big}");
    assert_eq!(storage.capacity(&Target::Drives(vec![0, 1])), small);
    assert_eq!(storage.capacity(&Target::Drives(vec![1, 0])), small);
    assert_eq!(storage.capacity(&Target::Drives(vec![0])), big);
    // An offset that fits the big drive but not the small one is refused on the list.
    let offset = format!("flow.a.offset={}", small + (1 << 20));
    scenario_with(TWO_FLOWS, &["device.count=2", "drives.nvme1.flash.blocks_per_plane=100", &offset]);
    let message = load_error(
        TWO_FLOWS,
        &["device.count=2", "drives.nvme1.flash.blocks_per_plane=100", &offset, "flow.a.device=nvme0:nvme1"],
    );
    assert!(message.contains("flow[0].offset"), "{message}");
}

/// Each bad drive table gives one error naming its key and what was expected.
#[test]
fn bad_drive_tables_name_their_key() {
    let count = "device.count=4";
    for (set, key, expected) in [
        (
            "drives.nvme9.preset=tlc-consumer",
            "drives.nvme9",
            "the drives are \"nvme0\" to \"nvme3\" (device.count = 4)",
        ),
        ("drives.sda.flash.channels=2", "drives.sda", "the host has no drive \"sda\""),
        ("drives.nvme01.preset=tlc-consumer", "drives.nvme01", "the host has no drive \"nvme01\""),
        ("drives.nvme1.count=2", "drives.nvme1.count", "counted in device.count"),
        ("drives.nvme1.preset=nope", "drives.nvme1.preset", "unknown preset \"nope\""),
        ("drives.nvme1.preset=3", "drives.nvme1.preset", "expected a preset name"),
        ("drives.nvme1.flash.channels=0", "drives.nvme1.flash.channels", "expected a whole number >= 1"),
        (
            "drives.nvme2.flash.channels=\"x\"",
            "drives.nvme2.flash.channels",
            "expected a whole number from 1 to 4294967295",
        ),
        ("drives.nvme1.flash.planes_per_die=-1", "drives.nvme1.flash.planes_per_die", "from 1 to 64"),
        ("drives.nvme1.flash.colour=1", "drives.nvme1.flash.colour", "unknown field `colour`"),
        ("drives.nvme1=3", "drives.nvme1", "expected a table of device keys"),
        ("drives=3", "drives", "expected a table of drive tables"),
    ] {
        let message = load_error(TWO_FLOWS, &[count, set]);
        assert!(message.contains(&format!("key `{key}`: ")), "{set}: {message}");
        assert!(message.contains(expected), "{set}: {message}");
        assert_eq!(message.lines().count(), 1, "{message}");
    }
    // Without another drive, nvme1 is no drive of the host.
    let message = load_error(TWO_FLOWS, &["drives.nvme1.preset=tlc-consumer"]);
    assert!(message.contains("the only drive is \"nvme0\""), "{message}");
}

/// Without drive tables, nothing changes: an empty `[drives]` is none, and every drive is the `[device]`.
#[test]
fn an_empty_drives_table_is_no_drive_table() {
    let text = format!("{TWO_FLOWS}[drives]\n");
    let with = run(&scenario_with(&text, &["device.count=2", "flow.b.device=nvme1"]));
    let without = run(&scenario_with(TWO_FLOWS, &["device.count=2", "flow.b.device=nvme1"]));
    assert_eq!(json(&with), json(&without));
}

/// `run.map_memory_limit` bounds the drives' maps together, each drive's most its own: the note before a run
/// appears exactly when their sum is over the limit.
#[test]
fn the_map_memory_estimate_sums_each_drives_own() {
    use ullsim::device::Device;
    let sets = ["device.count=3", "drives.nvme1.preset=tlc-consumer", "drives.nvme2.preset=mqsim-mlc"];
    let s = scenario_with(TWO_FLOWS, &sets);
    let each: Vec<u64> = s.drive_configs().map(Device::map_bytes_at_most).collect();
    assert!(each[1] > 0 && each[2] > 0 && each[1] != each[2], "{each:?}");
    let most: u64 = each.iter().sum();
    let limit = |bytes: u64| format!("run.map_memory_limit={bytes}");
    assert_eq!(ullsim::map_memory_note(&scenario_with(TWO_FLOWS, &[&sets[..], &[&limit(most)]].concat())), None);
    let note = ullsim::map_memory_note(&scenario_with(TWO_FLOWS, &[&sets[..], &[&limit(most - 1)]].concat()))
        .expect("the drives' maps together are over the limit");
    assert!(note.starts_with("with 3 drives, each with a map of its own"), "{note}");
    assert!(note.contains("logical pages of the drives together"), "{note}");
}
