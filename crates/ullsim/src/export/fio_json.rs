//! A run's results in fio's JSON output layout (`fio --output-format=json`), so that tools written for fio
//! read simulated results: one job per flow, or per task of a flow with per-job results (`flows[].jobs`),
//! with fio's `read`, `write`, `trim` and `sync` sections, its latency statistics (`lat_ns`, `clat_ns`, with
//! `percentile` keyed like fio's, "99.990000"), its IOPS and bandwidth sample statistics, its latency
//! distribution (`latency_ns`, `latency_us`, `latency_ms`) and its CPU figures. What each field is filled
//! from, and what is left out, is in docs/output.md ("fio-json").

use serde_json::{json, Map, Value};

use crate::config::Scenario;
use crate::host::CpuUse;
use crate::metrics::fio_stats::{LatencyBuckets, LAT_KEYS_MS, LAT_KEYS_NS, LAT_KEYS_US};
use crate::metrics::{LatencyDistribution, OpResult, FIO_PERCENTILES};
use crate::sim::RunResults;

/// What the `fio version` field says.
pub fn fio_version() -> String {
    format!("ullsim-{}", env!("CARGO_PKG_VERSION"))
}

/// `results` (of a run of `scenario`, whose flows name the jobs' options) in fio's JSON layout.
pub fn fio_json(scenario: &Scenario, results: &RunResults) -> Value {
    let run_window_ns = results.window.end_ns.saturating_sub(results.window.start_ns);
    // Every entry (one per flow, or per job of a flow recorded per job) with its ops, CPU and latency buckets.
    let mut entries: Vec<(Entry, [Option<&OpResult>; 3], CpuUse, &LatencyBuckets)> = Vec::new();
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
            Some(per_job) => entries.extend(per_job.iter().map(|j| {
                let cpu = CpuUse {
                    cpu_cores: j.cpu_cores,
                    cpu_user_cores: j.cpu_user_cores,
                    context_switches: j.context_switches,
                };
                let entry = Entry { options: entry.options.clone(), ..entry };
                (entry, [j.read.as_ref(), j.write.as_ref(), j.flush.as_ref()], cpu, &j.latency_buckets)
            })),
            None => {
                let cpu = CpuUse {
                    cpu_cores: flow.cpu_cores,
                    cpu_user_cores: flow.cpu_user_cores,
                    context_switches: flow.context_switches,
                };
                entries.push((
                    entry,
                    [flow.read.as_ref(), flow.write.as_ref(), flow.flush.as_ref()],
                    cpu,
                    &flow.latency_buckets,
                ));
            }
        }
    }
    // All entries are one group (groupid 0): its aggregate bandwidth per direction, for bw_agg.
    let group = [0, 1].map(|d| {
        let mut ops = entries.iter().filter_map(|(e, ops, _, _)| ops[d].map(|op| (e.runtime_ms, op)));
        group_aggregate(&mut ops)
    });
    let jobs: Vec<Value> =
        entries.iter().map(|(entry, ops, cpu, buckets)| entry.write(*ops, *cpu, buckets, group)).collect();
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
    /// `group`: the group's aggregate bandwidth of reads and of writes (see [`group_aggregate`]).
    fn write(
        &self,
        [read, write, flush]: [Option<&OpResult>; 3],
        cpu: CpuUse,
        buckets: &LatencyBuckets,
        group: [u64; 2],
    ) -> Value {
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
        let percent = buckets.percentages();
        let (ns, rest) = percent.split_at(LAT_KEYS_NS.len());
        let (us, ms) = rest.split_at(LAT_KEYS_US.len());
        let map = |keys: &[&str], values: &[f64]| -> Map<String, Value> {
            keys.iter().zip(values).map(|(k, v)| (k.to_string(), json!(v))).collect()
        };
        json!({
            "jobname": self.name,
            "groupid": 0,
            "error": 0,
            "job options": self.options,
            "read": direction(read, self.runtime_ms, group[0]),
            "write": direction(write, self.runtime_ms, group[1]),
            "trim": direction(None, self.runtime_ms, 0),
            "sync": sync,
            "job_runtime": self.runtime_ms,
            "usr_cpu": cores_to_percent(cpu.cpu_user_cores),
            "sys_cpu": cores_to_percent((cpu.cpu_cores - cpu.cpu_user_cores).max(0.0)),
            "ctx": cpu.context_switches,
            "latency_ns": map(&LAT_KEYS_NS, ns),
            "latency_us": map(&LAT_KEYS_US, us),
            "latency_ms": map(&LAT_KEYS_MS, ms),
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

/// A group's aggregate bandwidth in one direction, bytes/s, as fio computes it (stat.c,
/// `__show_run_stats`): the bytes of all its jobs x 1000 / the longest of their runtimes in ms (integer); 0
/// when none ran. `ops`: each job's runtime (ms) and its result in that direction.
fn group_aggregate(ops: &mut dyn Iterator<Item = (u64, &OpResult)>) -> u64 {
    let (bytes, max_run) = ops.fold((0u64, 0u64), |(b, r), (run, op)| (b + op.detail.bytes, r.max(run)));
    if max_run == 0 {
        0
    } else {
        (bytes as u128 * 1000 / max_run as u128) as u64
    }
}

/// fio's `bw_agg` (stat.c, `convert_agg_kbytes_percent`): the job's mean bandwidth sample (KiB/s, truncated
/// to an integer) as a percentage of the group's aggregate (`group_bytes_per_s` / 1024), at most 100; 100
/// when the aggregate is 1024 B/s or less.
fn bw_agg(mean_kib: f64, group_bytes_per_s: u64) -> f64 {
    if group_bytes_per_s > 1024 {
        (mean_kib as i64 as f64 * 100.0 / (group_bytes_per_s as f64 / 1024.0)).min(100.0)
    } else {
        100.0
    }
}

/// One direction's section (`read`, `write`, `trim`); all zeros when it completed nothing, as fio writes it.
/// `group_bytes_per_s`: the group's aggregate bandwidth in that direction.
fn direction(op: Option<&OpResult>, runtime_ms: u64, group_bytes_per_s: u64) -> Value {
    let Some(op) = op else {
        let none = distribution(&LatencyDistribution::default());
        return json!({
            "io_bytes": 0, "io_kbytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0, "total_ios": 0,
            "clat_ns": none, "lat_ns": none,
            "bw_min": 0, "bw_max": 0, "bw_agg": 0.0, "bw_mean": 0.0, "bw_dev": 0.0, "bw_samples": 0,
            "iops_min": 0, "iops_max": 0, "iops_mean": 0.0, "iops_stddev": 0.0, "iops_samples": 0,
        });
    };
    let bw = op.detail.intervals.bw_samples();
    let iops = op.detail.intervals.iops_samples();
    // With no samples fio writes zeros, bw_agg too.
    let agg = if bw.samples == 0 { 0.0 } else { bw_agg(bw.mean, group_bytes_per_s) };
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
        "bw_min": bw.min,
        "bw_max": bw.max,
        "bw_agg": agg,
        "bw_mean": bw.mean,
        "bw_dev": bw.stddev,
        "bw_samples": bw.samples,
        "iops_min": iops.min,
        "iops_max": iops.max,
        "iops_mean": iops.mean,
        "iops_stddev": iops.stddev,
        "iops_samples": iops.samples,
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
    fn bw_agg_is_fios() {
        // Mean 1000.9 KiB/s (truncated to 1000) of a group at 2000 KiB/s: 50%.
        assert_eq!(bw_agg(1000.9, 2000 * 1024), 50.0);
        assert_eq!(bw_agg(3000.0, 2000 * 1024), 100.0);
        assert_eq!(bw_agg(1.0, 1024), 100.0);
    }

    #[test]
    fn runtime_rounds_to_whole_milliseconds() {
        assert_eq!(ns_to_ms(40_000_000), 40);
        assert_eq!(ns_to_ms(1_499_999), 1);
        assert_eq!(ns_to_ms(1_500_000), 2);
        assert_eq!(ns_to_ms(0), 0);
    }
}
