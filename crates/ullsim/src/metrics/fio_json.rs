//! A run's results in fio's JSON output layout (`fio --output-format=json`), so that tools written for fio
//! read simulated results: one job per flow, or per task of a flow with per-job results (`flows[].jobs`),
//! with fio's `read`, `write`, `trim` and `sync` sections, its latency statistics (`lat_ns`, `clat_ns`, with
//! `percentile` keyed like fio's, "99.990000") and its CPU figures. What each field is filled from, and what
//! is left out, is in docs/output.md ("fio-json").

use serde_json::{json, Map, Value};

use super::{LatencyDistribution, OpResult, FIO_PERCENTILES};
use crate::config::Scenario;
use crate::host::CpuUse;
use crate::sim::RunResults;

/// What the `fio version` field says.
pub fn fio_version() -> String {
    format!("ullsim-{}", env!("CARGO_PKG_VERSION"))
}

/// `results` (of a run of `scenario`, whose flows name the jobs' options) in fio's JSON layout.
pub fn fio_json(scenario: &Scenario, results: &RunResults) -> Value {
    let run_window_ns = results.window.end_ns.saturating_sub(results.window.start_ns);
    let mut jobs: Vec<Value> = Vec::new();
    for (flow, spec) in results.flows.iter().zip(&scenario.flows) {
        let flow_window_ns = flow.window.end_ns.saturating_sub(flow.window.start_ns);
        let entry = Entry {
            name: &flow.name,
            options: job_options(spec),
            runtime_ms: ns_to_ms(flow_window_ns),
            windows_ns: (run_window_ns, flow_window_ns),
        };
        match &flow.jobs {
            // One entry per job, as fio writes a job's clones without group_reporting.
            Some(per_job) => jobs.extend(per_job.iter().map(|j| {
                let cpu = CpuUse {
                    cpu_cores: j.cpu_cores,
                    cpu_user_cores: j.cpu_user_cores,
                    context_switches: j.context_switches,
                };
                entry.write([j.read.as_ref(), j.write.as_ref(), j.flush.as_ref()], cpu)
            })),
            None => {
                let cpu = CpuUse {
                    cpu_cores: flow.cpu_cores,
                    cpu_user_cores: flow.cpu_user_cores,
                    context_switches: flow.context_switches,
                };
                jobs.push(entry.write([flow.read.as_ref(), flow.write.as_ref(), flow.flush.as_ref()], cpu));
            }
        }
    }
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

/// What the `jobs[]` entries of one flow share.
struct Entry<'a> {
    name: &'a str,
    options: Value,
    runtime_ms: u64,
    /// The run's window and the flow's.
    windows_ns: (u64, u64),
}

impl Entry<'_> {
    /// The `jobs[]` entry of the flow's (or one of its jobs') reads, writes, flushes and CPU.
    fn write(&self, [read, write, flush]: [Option<&OpResult>; 3], cpu: CpuUse) -> Value {
        // The CPU is over the run's window; fio's percentages are over the job's runtime.
        let (run_ns, flow_ns) = self.windows_ns;
        let cores_to_percent = |cores: f64| cores * run_ns as f64 / flow_ns.max(1) as f64 * 100.0;
        let sync = match flush {
            Some(flush) => json!({
                "total_ios": flush.completed,
                "lat_ns": distribution(&flush.detail.latency),
            }),
            None => json!({ "total_ios": 0, "lat_ns": distribution(&LatencyDistribution::default()) }),
        };
        json!({
            "jobname": self.name,
            "groupid": 0,
            "error": 0,
            "job options": self.options,
            "read": direction(read, self.runtime_ms),
            "write": direction(write, self.runtime_ms),
            "trim": direction(None, self.runtime_ms),
            "sync": sync,
            "job_runtime": self.runtime_ms,
            "usr_cpu": cores_to_percent(cpu.cpu_user_cores),
            "sys_cpu": cores_to_percent((cpu.cpu_cores - cpu.cpu_user_cores).max(0.0)),
            "ctx": cpu.context_switches,
        })
    }
}

/// Whole milliseconds, rounded to nearest (fio's `runtime` is whole ms).
fn ns_to_ms(ns: u64) -> u64 {
    (ns + 500_000) / 1_000_000
}

/// The flow's keys as set in the scenario, as fio writes a job's options: every value a string. `numjobs`
/// is always there (1 when unset).
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
