//! Overload: an open-loop reader offered more than the drive can serve is served near the drive's capacity,
//! however far beyond it the offered load goes, under both host models (issue 29, section 4).
//!
//! On `mqsim-mlc` (a 2 MiB cached mapping table over 476 GiB, so nearly every random read first reads a
//! translation page, and mapping reads go before data reads) a drive that took in every command it was
//! offered served ever less as the offered load grew: the mapping reads of the commands pouring in kept
//! the dies from the data reads of the ones already there. The controller holds at most
//! `device.host_interface.max_fetched_per_queue` commands of a queue (MQSim's Queue_Fetch_Size, 512): the
//! rest wait in the submission queue and create no flash work, so the drive keeps serving what it holds.

use crate::common;

use common::{run, scenario_with};

/// 4 KiB random reads of the whole `mqsim-mlc` drive; 20 ms keeps the 10x run's backlog (~90K requests)
/// under the run's in-flight limit and the test to a few seconds.
const READER: &str = r#"
seed = 1
[run]
duration = "20ms"
[device]
preset = "mqsim-mlc"
[[flow]]
name = "r"
rw = "randread"
bs = "4k"
"#;

/// Offered loads, in multiples of the drive's capacity.
const LOADS: [f64; 5] = [0.5, 1.0, 2.0, 5.0, 10.0];

/// Served IOPS of the reader under `host` with `flow_key` (`iodepth = N` or `rate_iops = X`).
fn served(host: &str, flow_key: &str) -> f64 {
    let s = scenario_with(READER, &[&format!("host.model={host}"), &format!("flow.r.{flow_key}")]);
    run(&s).flows[0].iops
}

/// The drive's capacity as `host` reaches it: closed loop, 1023 outstanding (the Linux driver's default
/// queue of 1024 entries, full).
fn closed_loop_capacity(host: &str) -> f64 {
    served(host, "iodepth=1023")
}

#[test]
fn served_iops_stay_near_capacity_from_half_to_ten_times_capacity_under_both_hosts() {
    let capacity = closed_loop_capacity("device-only");
    let full_capacity = closed_loop_capacity("full");
    println!("capacity: device-only {capacity:.0} IOPS, full host {full_capacity:.0} IOPS");
    assert!(
        (full_capacity - capacity).abs() <= 0.1 * capacity,
        "the hosts disagree on the drive's capacity: {full_capacity:.0} vs {capacity:.0} IOPS"
    );
    for load in LOADS {
        let offered = load * capacity;
        let rate = format!("rate_iops={offered:.1}");
        let (device_only, full) = (served("device-only", &rate), served("full", &rate));
        println!("{load:>4}x ({offered:>9.0} IOPS offered): device-only {device_only:>7.0}, full {full:>7.0} IOPS");
        // What a drive that keeps serving would: all of it below capacity, its capacity above.
        let expected = offered.min(capacity);
        for (host, got) in [("device-only", device_only), ("full", full)] {
            assert!(
                got >= 0.8 * expected,
                "{host} host at {load}x capacity: served {got:.0} IOPS, below 80% of {expected:.0}"
            );
        }
        assert!(
            (device_only - full).abs() <= 0.1 * capacity,
            "at {load}x capacity the hosts disagree: device-only {device_only:.0}, full {full:.0} IOPS"
        );
    }
}

#[test]
fn the_bound_is_checked_and_named() {
    let key = "device.host_interface.max_fetched_per_queue";
    for bad in ["65537", "-1", "1.5", "\"512\""] {
        let message = common::load_error(READER, &[&format!("{key}={bad}")]);
        assert!(message.contains(key), "{bad}: {message}");
    }
    assert!(common::load_error(READER, &[&format!("{key}=70000")]).contains("at most 65536"));
    for good in ["0", "1", "65536"] {
        scenario_with(READER, &[&format!("{key}={good}")]);
    }
}
