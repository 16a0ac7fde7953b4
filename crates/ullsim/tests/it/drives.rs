//! Hosts with several drives (`device.count`, `flow.device`): each drive its own state, seed stream, queues and
//! results; one drive's results unchanged by the others.

use crate::common::{load_error, run, scenario_with, small_consumer_writer};
use ullsim::RunResults;

/// Device-only host, `optane-ull` drives without their latency variability (in-place media: no GC, no random
/// placement, so a drive's seed stream changes nothing), a 4 KiB random writer `w` at QD8 and a random reader `r`
/// at QD4.
const TWO_FLOWS: &str = "seed = 3\n[run]\nduration = \"20ms\"\nwarmup = \"2ms\"\n[host]\nmodel = \"device-only\"\n\
                         [device]\npreset = \"optane-ull\"\n[device.variability]\nenabled = false\n\
                         [[flow]]\nname = \"w\"\nrw = \"randwrite\"\nbs = \"4k\"\niodepth = 8\n\
                         [[flow]]\nname = \"r\"\nrw = \"randread\"\nbs = \"4k\"\niodepth = 4\n";

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap()
}

/// The results of flow `name` of `results`, as JSON.
fn flow_json(results: &RunResults, name: &str) -> String {
    json(results.flows.iter().find(|f| f.name == name).expect("the flow ran"))
}

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
