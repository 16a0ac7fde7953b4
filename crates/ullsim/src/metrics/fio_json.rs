//! A run's results in fio's JSON output layout (`fio --output-format=json`), so that tools written for fio
//! read simulated results: one job per flow, with fio's `read`, `write`, `trim` and `sync` sections, its
//! latency statistics (`lat_ns`, `clat_ns`, with `percentile` keyed like fio's, "99.990000") and its CPU
//! figures. What each field is filled from, and what is left out, is in docs/output.md ("fio-json").

use serde_json::{json, Map, Value};

use super::{LatencyDistribution, OpResult, FIO_PERCENTILES};
use crate::config::Scenario;
use crate::sim::RunResults;

/// What the `fio version` field says.
pub fn fio_version() -> String {
    format!("ullsim-{}", env!("CARGO_PKG_VERSION"))
}

/// `results` (of a run of `scenario`, whose flows name the jobs' options) in fio's JSON layout.
pub fn fio_json(scenario: &Scenario, results: &RunResults) -> Value {
    let run_window_ns = results.window.end_ns.saturating_sub(results.window.start_ns);
    let jobs: Vec<Value> = results
        .flows
        .iter()
        .zip(&scenario.flows)
        .map(|(flow, spec)| {
            let flow_window_ns = flow.window.end_ns.saturating_sub(flow.window.start_ns);
            let runtime_ms = ns_to_ms(flow_window_ns);
            // The flow's CPU is over the run's window; fio's percentages are over the job's runtime.
            let cores_to_percent = |cores: f64| cores * run_window_ns as f64 / flow_window_ns.max(1) as f64 * 100.0;
            let sync = match &flow.flush {
                Some(flush) => json!({
                    "total_ios": flush.completed,
                    "lat_ns": distribution(&flush.detail.latency),
                }),
                None => json!({ "total_ios": 0, "lat_ns": distribution(&LatencyDistribution::default()) }),
            };
            json!({
                "jobname": flow.name,
                "groupid": 0,
                "error": 0,
                "job options": job_options(spec),
                "read": direction(flow.read.as_ref(), runtime_ms),
                "write": direction(flow.write.as_ref(), runtime_ms),
                "trim": direction(None, runtime_ms),
                "sync": sync,
                "job_runtime": runtime_ms,
                "usr_cpu": cores_to_percent(flow.cpu_user_cores),
                "sys_cpu": cores_to_percent((flow.cpu_cores - flow.cpu_user_cores).max(0.0)),
                "ctx": flow.context_switches,
            })
        })
        .collect();
    json!({
        "fio version": fio_version(),
        "global options": {
            "scenario": results.scenario.name,
            "seed": results.scenario.seed.to_string(),
            "device_preset": results.scenario.preset,
            "host_stack": results.scenario.stack,
        },
        "jobs": jobs,
    })
}

/// Whole milliseconds, rounded to nearest (fio's `runtime` is whole ms).
fn ns_to_ms(ns: u64) -> u64 {
    (ns + 500_000) / 1_000_000
}

/// The flow's keys as set in the scenario, as fio writes a job's options: every value a string. `numjobs`
/// is always there (1 when unset), as the one job stands for all of the flow's tasks.
fn job_options(spec: &crate::config::scenario::FlowSpec) -> Value {
    let mut options = Map::new();
    if let Ok(Value::Object(keys)) = serde_json::to_value(spec) {
        for (key, value) in keys {
            let text = match value {
                Value::Null => continue,
                Value::String(s) => s,
                Value::Bool(b) => if b { "1" } else { "0" }.to_string(),
                other => other.to_string(),
            };
            if key != "name" {
                options.insert(key, Value::String(text));
            }
        }
    }
    options.entry("numjobs").or_insert_with(|| Value::String("1".to_string()));
    Value::Object(options)
}

/// One direction's section (`read`, `write`, `trim`); all zeros when it completed nothing, as fio writes it.
fn direction(op: Option<&OpResult>, runtime_ms: u64) -> Value {
    let Some(op) = op else {
        let none = distribution(&LatencyDistribution::default());
        return json!({
            "io_bytes": 0, "io_kbytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0, "total_ios": 0,
            "clat_ns": none, "lat_ns": none,
        });
    };
    let bw_bytes = op.bandwidth_bytes_per_s.round() as u64;
    let after_submission = op.detail.after_submission.clone().unwrap_or_default();
    json!({
        "io_bytes": op.detail.bytes,
        "io_kbytes": op.detail.bytes / 1024,
        "bw_bytes": bw_bytes,
        "bw": bw_bytes / 1024,
        "iops": op.iops,
        "runtime": runtime_ms,
        "total_ios": op.completed,
        "clat_ns": distribution(&after_submission),
        "lat_ns": distribution(&op.detail.latency),
    })
}

/// fio's key for a percentile: `%f`, e.g. "99.990000".
pub fn percentile_key(percent: f64) -> String {
    format!("{percent:.6}")
}

/// A latency object as fio writes one: `min`, `max`, `mean`, `stddev`, `N`, and `percentile` when there
/// were samples (fio leaves it out otherwise).
fn distribution(d: &LatencyDistribution) -> Value {
    let mut object = json!({
        "min": d.min,
        "max": d.max,
        "mean": d.mean,
        "stddev": d.stddev,
        "N": d.count,
    });
    if d.count > 0 {
        let percentiles: Map<String, Value> =
            FIO_PERCENTILES.iter().zip(&d.percentiles).map(|(&p, &v)| (percentile_key(p), json!(v))).collect();
        object["percentile"] = Value::Object(percentiles);
    }
    object
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_keys_are_formatted_like_fio() {
        let keys: Vec<String> = FIO_PERCENTILES.iter().map(|&p| percentile_key(p)).collect();
        assert_eq!(keys[0], "1.000000");
        assert_eq!(keys[13], "99.500000");
        assert_eq!(keys[16], "99.990000");
    }

    #[test]
    fn runtime_rounds_to_whole_milliseconds() {
        assert_eq!(ns_to_ms(40_000_000), 40);
        assert_eq!(ns_to_ms(1_499_999), 1);
        assert_eq!(ns_to_ms(1_500_000), 2);
        assert_eq!(ns_to_ms(0), 0);
    }
}
