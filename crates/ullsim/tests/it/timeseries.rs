//! Time series (`[metrics] timeseries_interval`): per-interval completions add up to the flows' totals, the
//! device's per-interval queue depth adds up to its window mean, a QD1 reader's IOPS is 1 / latency in every
//! interval, the CSV has its documented header and rows, bad intervals are one error naming the key, and a
//! run's series is the same bytes for the same seed.

use crate::common;

use std::path::Path;

use common::{run, scenario};
use ullsim::metrics::timeseries::CSV_HEADER;
use ullsim::Scenario;

/// A QD1 reader beside a bursty writer on z-nand: the device's queue depth moves with the bursts.
const BURSTY: &str = r#"
[run]
duration = "20ms"
warmup = "2ms"
[metrics]
timeseries_interval = "1ms"
[device]
preset = "znand-ull"
[[flow]]
name = "reader"
rw = "randread"
iodepth = 1
[[flow]]
name = "burst,writer"
rw = "randwrite"
bs = "16k"
iodepth = 16
rate_iops = 20000
rate_process = "onoff"
burst_factor = 4
burst_on = "0.002"
"#;

fn load_error(text: &str) -> String {
    match Scenario::from_toml_str(text, "s.toml", Path::new("."), &[]) {
        Ok(_) => panic!("expected an error for\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn interval_completions_add_up_to_each_flows_completed() {
    let r = run(&scenario(BURSTY));
    let ts = r.timeseries.as_ref().expect("a series was asked for");
    assert_eq!(ts.interval_ns, 1_000_000);
    assert_eq!(ts.start_ns.len(), 18, "18 ms of window in 1 ms intervals");
    assert_eq!(ts.start_ns[0], r.window.start_ns);
    assert_eq!(ts.end_ns, r.window.end_ns);
    for (flow, series) in r.flows.iter().zip(&ts.flows) {
        assert_eq!(series.name, flow.name);
        assert_eq!(series.completed.len(), ts.start_ns.len());
        assert_eq!(series.completed.iter().sum::<u64>(), flow.completed, "flow {}", flow.name);
        assert!(flow.completed > 0, "flow {} completed I/O", flow.name);
        let max = series.max_latency_ns.iter().copied().max().unwrap();
        // The flow's maximum comes from its HDR histogram (3 significant digits); the series' is exact.
        let hdr = flow.latency_ns.max as f64;
        assert!((max as f64 - hdr).abs() <= 1e-3 * hdr, "the largest interval maximum {max} is the flow's {hdr}");
    }
}

#[test]
fn interval_queue_depths_average_to_the_devices_mean_queue_depth() {
    let r = run(&scenario(BURSTY));
    let ts = r.timeseries.as_ref().unwrap();
    let depths = &ts.device.mean_queue_depth;
    let mean = depths.iter().sum::<f64>() / depths.len() as f64;
    let expected = r.device.queue_depth.mean;
    assert!(expected > 0.5, "the bursts fill the device: {expected}");
    assert!((mean - expected).abs() < 1e-9 * expected.max(1.0), "intervals {mean} vs device {expected}");
    assert_eq!(ts.device.max_queue_depth.iter().copied().max().unwrap(), r.device.queue_depth.max);
    for (i, (&m, &max)) in depths.iter().zip(&ts.device.max_queue_depth).enumerate() {
        assert!(m <= max as f64 + 1e-9, "interval {i}: mean {m} above max {max}");
    }
    // The bursts show: some intervals hold many more commands than others.
    let lo = depths.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = depths.iter().copied().fold(0.0, f64::max);
    assert!(hi > 2.0 * lo, "bursty queue depth: {lo} .. {hi}");
}

#[test]
fn a_qd1_readers_interval_iops_is_one_over_its_latency() {
    let text = r#"
[run]
duration = "10ms"
[metrics]
timeseries_interval = "1ms"
[device]
preset = "optane-ull"
[[flow]]
name = "reader"
rw = "randread"
iodepth = 1
"#;
    let r = run(&scenario(text));
    let ts = r.timeseries.as_ref().unwrap();
    let f = &ts.flows[0];
    assert_eq!(f.completed.len(), 10);
    for i in 0..10 {
        let expected = 1e9 / f.mean_latency_ns[i];
        // One I/O straddles each interval boundary: within a couple of I/Os of the interval's count.
        assert!((f.iops[i] - expected).abs() < 0.03 * expected, "interval {i}: {} IOPS vs {expected}", f.iops[i]);
        assert!(f.mean_device_ns[i] > 0.0 && f.mean_device_ns[i] < f.mean_latency_ns[i]);
        assert!(ts.device.max_queue_depth[i] == 1);
    }
}

#[test]
fn a_partial_last_interval_reports_rates_over_its_own_length() {
    let text = BURSTY.replace("duration = \"20ms\"", "duration = \"20.5ms\"");
    let r = run(&scenario(&text));
    let ts = r.timeseries.as_ref().unwrap();
    assert_eq!(ts.start_ns.len(), 19, "18.5 ms of window: 18 whole intervals and a half one");
    let last = ts.start_ns.len() - 1;
    let reader = &ts.flows[0];
    assert!((reader.iops[last] - reader.completed[last] as f64 / 0.5e-3).abs() < 1e-6);
    let weighted: f64 =
        ts.device.mean_queue_depth.iter().enumerate().map(|(i, &d)| d * if i == last { 0.5 } else { 1.0 }).sum::<f64>()
            / 18.5;
    let expected = r.device.queue_depth.mean;
    assert!((weighted - expected).abs() < 1e-9 * expected.max(1.0), "{weighted} vs {expected}");
    for (flow, series) in r.flows.iter().zip(&ts.flows) {
        assert_eq!(series.completed.iter().sum::<u64>(), flow.completed);
    }
}

#[test]
fn the_csv_has_the_documented_header_and_a_row_per_interval_and_flow() {
    let r = run(&scenario(BURSTY));
    let ts = r.timeseries.as_ref().unwrap();
    let mut bytes = Vec::new();
    ts.write_csv(&mut bytes).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "interval_start_ns,interval_end_ns,flow,completed,iops,bandwidth_bytes_per_s,mean_latency_ns,\
         max_latency_ns,mean_device_ns,device_mean_queue_depth,device_max_queue_depth"
    );
    assert_eq!(lines[0], CSV_HEADER);
    assert_eq!(lines.len(), 1 + 18 * 2);
    assert!(lines[1].starts_with("2000000,3000000,reader,"), "{}", lines[1]);
    assert!(lines[2].starts_with("2000000,3000000,\"burst,writer\","), "a name with a comma is quoted: {}", lines[2]);
    let total: u64 = lines[1..]
        .iter()
        .filter(|l| l.contains(",reader,"))
        .map(|l| l.split(',').nth(3).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(total, r.flows[0].completed);
}

#[test]
fn no_interval_means_no_series() {
    let text = BURSTY.replace("timeseries_interval = \"1ms\"", "");
    let r = run(&scenario(&text));
    assert!(r.timeseries.is_none());
    let json = serde_json::to_string(&r).unwrap();
    assert!(!json.contains("timeseries"), "absent from the JSON too");
    let zero = BURSTY.replace("timeseries_interval = \"1ms\"", "timeseries_interval = 0");
    assert!(run(&scenario(&zero)).timeseries.is_none(), "0 is off");
}

#[test]
fn bad_intervals_are_one_error_naming_the_key() {
    for bad in ["timeseries_interval = -1", "timeseries_interval = \"-1ms\"", "timeseries_interval = \"abc\""] {
        let e = load_error(&BURSTY.replace("timeseries_interval = \"1ms\"", bad));
        assert!(e.contains("metrics.timeseries_interval"), "{bad}: {e}");
        assert_eq!(e.lines().count(), 1, "{bad}: one line: {e}");
    }
    // 18 ms in 10 ns intervals: 1.8 million intervals.
    let e = load_error(&BURSTY.replace("timeseries_interval = \"1ms\"", "timeseries_interval = \"10ns\""));
    assert!(e.contains("metrics.timeseries_interval"), "{e}");
    assert!(e.contains("1800000 intervals") && e.contains("1000000"), "{e}");
    assert!(e.contains("at least 18 ns"), "says what would do: {e}");
    // Exactly the maximum is accepted.
    let ok = BURSTY.replace("timeseries_interval = \"1ms\"", "timeseries_interval = \"18ns\"");
    Scenario::from_toml_str(&ok, "s.toml", Path::new("."), &[]).unwrap();
}

#[test]
fn the_same_seed_gives_the_same_series() {
    let a = serde_json::to_string(&run(&scenario(BURSTY)).timeseries).unwrap();
    let b = serde_json::to_string(&run(&scenario(BURSTY)).timeseries).unwrap();
    assert_eq!(a, b);
    let mut csv_a = Vec::new();
    let mut csv_b = Vec::new();
    run(&scenario(BURSTY)).timeseries.unwrap().write_csv(&mut csv_a).unwrap();
    run(&scenario(BURSTY)).timeseries.unwrap().write_csv(&mut csv_b).unwrap();
    assert_eq!(csv_a, csv_b);
}
