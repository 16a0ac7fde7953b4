//! `ullsim run --output-format fio-json` (and `--fio-json PATH`): fio's JSON layout, checked against fio's
//! documented schema and against the native JSON of the same run.

use crate::common;

use std::path::{Path, PathBuf};

use common::ullsim;
use serde_json::Value;

/// fio's default percentile list, as its JSON keys them.
const FIO_PERCENTILE_KEYS: [&str; 17] = [
    "1.000000",
    "5.000000",
    "10.000000",
    "20.000000",
    "30.000000",
    "40.000000",
    "50.000000",
    "60.000000",
    "70.000000",
    "80.000000",
    "90.000000",
    "95.000000",
    "99.000000",
    "99.500000",
    "99.900000",
    "99.950000",
    "99.990000",
];

/// A reader at QD1 beside a writer at QD8 (two flows, one direction each, one with two jobs), short.
fn scenario() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples/mixed-znand.toml")
}

const SHORT: [&str; 6] =
    ["--set", "run.duration=30ms", "--set", "metrics.fairness=false", "--set", "flow.writer.numjobs=2"];

fn run_fio_json_stdout(seed: &str) -> String {
    let mut args: Vec<String> = vec!["run".into(), scenario().display().to_string()];
    args.extend(SHORT.iter().map(|a| a.to_string()));
    args.extend(["--seed".into(), seed.into(), "--output-format".into(), "fio-json".into()]);
    ullsim(&args).ok().stdout
}

/// The run's native JSON and fio JSON, both written to files by one run.
fn run_both(seed: &str) -> (Value, Value) {
    let dir = tempfile::tempdir().unwrap();
    let native = dir.path().join("native.json");
    let fio = dir.path().join("fio.json");
    let mut args: Vec<String> = vec!["run".into(), scenario().display().to_string()];
    args.extend(SHORT.iter().map(|a| a.to_string()));
    args.extend(["--seed".into(), seed.into(), "-q".into()]);
    args.extend(["--json".into(), native.display().to_string(), "--fio-json".into(), fio.display().to_string()]);
    let run = ullsim(&args).ok();
    assert!(run.stdout.is_empty(), "-q with both files printed on stdout: {}", run.describe());
    let read = |p: &Path| -> Value { serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap() };
    (read(&native), read(&fio))
}

fn number(v: &Value, what: &str) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{what} is not a number: {v}"))
}

fn close(a: f64, b: f64, relative: f64) -> bool {
    (a - b).abs() <= relative * a.abs().max(b.abs()).max(1.0)
}

/// A latency object in fio's layout, checked for its keys and for consistency; returns its percentiles.
fn check_latency(object: &Value, what: &str) -> Vec<f64> {
    for key in ["min", "max", "mean", "stddev", "N"] {
        assert!(object.get(key).is_some_and(Value::is_number), "{what}.{key} missing or not a number: {object}");
    }
    let (min, max, mean) = (number(&object["min"], what), number(&object["max"], what), number(&object["mean"], what));
    let count = object["N"].as_u64().unwrap_or_else(|| panic!("{what}.N is not a whole number"));
    if count == 0 {
        assert!(object.get("percentile").is_none(), "{what}: percentiles without samples");
        return Vec::new();
    }
    // min and max are the histogram's bucket edges (within 0.1% of the true values), the mean is exact.
    assert!(min * 0.999 <= mean && mean <= max * 1.001, "{what}: mean {mean} not in [{min}, {max}]");
    assert!(number(&object["stddev"], what) >= 0.0, "{what}: negative stddev");
    let percentiles = object["percentile"].as_object().unwrap_or_else(|| panic!("{what} has no percentile map"));
    let mut keys: Vec<&str> = percentiles.keys().map(String::as_str).collect();
    keys.sort_by(|a, b| a.parse::<f64>().unwrap().total_cmp(&b.parse::<f64>().unwrap()));
    assert_eq!(keys, FIO_PERCENTILE_KEYS, "{what}: percentile keys differ from fio's");
    let values: Vec<f64> = FIO_PERCENTILE_KEYS.iter().map(|k| number(&percentiles[*k], what)).collect();
    assert!(values.windows(2).all(|w| w[0] <= w[1]), "{what}: percentiles decrease: {values:?}");
    assert!(values[0] >= min && values[16] <= max, "{what}: percentiles outside [min, max]: {values:?}");
    values
}

/// fio's latency distribution keys (`latency_ns`, `latency_us`, `latency_ms`), each a bucket's upper bound
/// (exclusive) in the map's unit: (map, keys, ns per unit).
const LATENCY_MAPS: [(&str, &[&str], f64); 3] = [
    ("latency_ns", &["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"], 1.0),
    ("latency_us", &["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"], 1e3),
    ("latency_ms", &["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000"], 1e6),
];

/// A job's latency distribution maps, checked for fio's keys, summing to 100% (with I/Os) and against the
/// clat percentiles of its one direction (`clat`: (percent, value in ns)).
fn check_latency_maps(job: &Value, clat: &[(f64, f64)], what: &str) {
    // (upper bound in ns, or infinity; percent), in order.
    let mut buckets: Vec<(f64, f64)> = Vec::new();
    for (map, keys, unit) in LATENCY_MAPS {
        let object = job[map].as_object().unwrap_or_else(|| panic!("{what}: no {map}: {job}"));
        let mut found: Vec<&str> = object.keys().map(String::as_str).collect();
        let mut expected = keys.to_vec();
        found.sort();
        expected.sort();
        assert_eq!(found, expected, "{what}: {map} keys differ from fio's");
        for key in keys {
            let bound = key.parse::<f64>().map_or(f64::INFINITY, |k| k * unit);
            buckets.push((bound, number(&object[*key], &format!("{what}.{map}.{key}"))));
        }
    }
    let sum: f64 = buckets.iter().map(|b| b.1).sum();
    if clat.is_empty() {
        assert_eq!(sum, 0.0, "{what}: a latency distribution without I/Os");
        return;
    }
    // fio writes a non-empty bucket under 0.01% as 0.01: at most 32 x 0.01 above 100.
    assert!((99.999..=100.33).contains(&sum), "{what}: latency maps sum to {sum}%");
    // The share of latencies under each bound brackets the percentiles (HDR values within 0.1%).
    let mut below = 0.0;
    for (bound, percent) in buckets {
        below += percent;
        for &(p, value) in clat {
            if bound <= value * 0.998 {
                assert!(below <= p + 0.35, "{what}: {below}% under {bound} ns, but p{p} is {value} ns");
            }
            if bound > value * 1.001 {
                assert!(below >= p - 0.35, "{what}: {below}% under {bound} ns, but p{p} is {value} ns");
            }
        }
    }
}

/// What each fio job stands for in the native JSON: (flow, its results or one of its jobs' `flows[].jobs`),
/// in order: a flow with per-job results has one fio job per job.
fn native_entries(native: &Value) -> Vec<(&Value, &Value)> {
    let mut entries = Vec::new();
    for flow in native["flows"].as_array().unwrap() {
        match flow.get("jobs").and_then(Value::as_array) {
            Some(jobs) => entries.extend(jobs.iter().map(|job| (flow, job))),
            None => entries.push((flow, flow)),
        }
    }
    entries
}

#[test]
fn fio_json_follows_fios_schema_and_the_native_results() {
    let (native, fio) = run_both("7");
    assert_eq!(fio["fio version"], Value::String(format!("ullsim-{}", env!("CARGO_PKG_VERSION"))));
    assert_eq!(fio["global options"]["seed"], "7");
    let jobs = fio["jobs"].as_array().expect("jobs is an array");
    let entries = native_entries(&native);
    // The reader's one job, the writer's two (fio output turns metrics.per_job on: the native JSON has them).
    assert_eq!(native["flows"][1]["jobs"].as_array().map(Vec::len), Some(2), "the writer's jobs");
    assert_eq!(jobs.len(), entries.len(), "one fio job per task");
    assert_eq!(jobs.len(), 3);
    for (job, (flow, stats)) in jobs.iter().zip(entries) {
        let name = flow["name"].as_str().unwrap();
        assert_eq!(job["jobname"], flow["name"]);
        for key in ["groupid", "error", "job_runtime", "usr_cpu", "sys_cpu", "ctx"] {
            assert!(job.get(key).is_some_and(Value::is_number), "{name}: {key} missing: {job}");
        }
        let window_ms = (number(&flow["window"]["end_ns"], "end") - number(&flow["window"]["start_ns"], "start")) / 1e6;
        assert_eq!(number(&job["job_runtime"], "job_runtime"), window_ms.round());
        // CPU: user + system is the flow's cpu_cores, as a percentage of its runtime (the windows agree here).
        let mut clat_percentiles = Vec::new();
        for direction in ["read", "write"] {
            if let Some(p) = job[direction]["clat_ns"]["percentile"].as_object() {
                clat_percentiles.extend(FIO_PERCENTILE_KEYS.map(|k| (k.parse::<f64>().unwrap(), number(&p[k], k))));
            }
        }
        check_latency_maps(job, &clat_percentiles, name);
        let cpu = number(&job["usr_cpu"], "usr_cpu") + number(&job["sys_cpu"], "sys_cpu");
        assert!(close(cpu, number(&stats["cpu_cores"], "cpu_cores") * 100.0, 1e-9), "{name}: cpu {cpu}");
        assert!(number(&job["usr_cpu"], "usr_cpu") > 0.0 && number(&job["sys_cpu"], "sys_cpu") > 0.0);
        assert_eq!(job["ctx"], stats["context_switches"]);
        assert!(job["ctx"].as_u64().unwrap() > 0, "{name}: no context switches at all?");
        for direction in ["read", "write", "trim"] {
            let section = &job[direction];
            let what = format!("{name}.{direction}");
            for key in ["io_bytes", "io_kbytes", "bw_bytes", "bw", "iops", "runtime", "total_ios", "clat_ns", "lat_ns"]
            {
                assert!(section.get(key).is_some(), "{what}: {key} missing: {section}");
            }
            // Runs shorter than fio's 500 ms sampling interval: no samples, and fio's zeros.
            for key in ["iops_min", "iops_max", "iops_mean", "iops_stddev", "iops_samples"].iter().chain(&[
                "bw_min",
                "bw_max",
                "bw_agg",
                "bw_mean",
                "bw_dev",
                "bw_samples",
            ]) {
                assert_eq!(section.get(*key).and_then(Value::as_f64), Some(0.0), "{what}: {key}: {section}");
            }
            let clat = check_latency(&section["clat_ns"], &format!("{what}.clat_ns"));
            let lat = check_latency(&section["lat_ns"], &format!("{what}.lat_ns"));
            let bw_bytes = section["bw_bytes"].as_u64().unwrap();
            assert_eq!(section["bw"].as_u64().unwrap(), bw_bytes / 1024, "{what}: bw is not bw_bytes / 1024");
            assert_eq!(section["io_kbytes"].as_u64().unwrap(), section["io_bytes"].as_u64().unwrap() / 1024);
            let total = number(&section["total_ios"], "total_ios");
            let native_op = stats.get(direction).filter(|v| !v.is_null());
            let Some(op) = native_op else {
                assert_eq!(total, 0.0, "{what}: I/Os the native JSON does not have");
                continue;
            };
            // Same numbers as the native JSON, in fio's layout.
            assert_eq!(section["total_ios"], op["completed"], "{what}");
            assert_eq!(section["iops"], op["iops"], "{what}");
            assert_eq!(section["bw_bytes"].as_f64().unwrap(), number(&op["bandwidth_bytes_per_s"], "bw").round());
            let latency = &op["latency_ns"];
            for (fio_key, native_key) in [("min", "min"), ("max", "max"), ("mean", "mean")] {
                assert_eq!(section["lat_ns"][fio_key], latency[native_key], "{what}.lat_ns.{fio_key}");
            }
            assert_eq!(section["lat_ns"]["N"], op["completed"], "{what}");
            assert_eq!(section["clat_ns"]["N"], op["completed"], "{what}");
            for (key, native_key) in [
                ("50.000000", "p50"),
                ("90.000000", "p90"),
                ("99.000000", "p99"),
                ("99.900000", "p99_9"),
                ("99.990000", "p99_99"),
            ] {
                assert_eq!(section["lat_ns"]["percentile"][key], latency[native_key], "{what}.lat_ns[{key}]");
            }
            // iops x runtime = total_ios (runtime is whole ms).
            let runtime_s = number(&section["runtime"], "runtime") / 1e3;
            assert!(close(number(&section["iops"], "iops") * runtime_s, total, 0.02), "{what}: iops x runtime");
            // bytes / runtime = bandwidth.
            assert!(close(number(&section["io_bytes"], "io_bytes") / runtime_s, bw_bytes as f64, 0.02), "{what}: bw");
            // Submission to completion is part of issue to completion.
            assert!(number(&section["clat_ns"]["mean"], "clat") < number(&section["lat_ns"]["mean"], "lat"));
            assert!(clat.iter().zip(&lat).all(|(c, l)| c <= l), "{what}: a clat percentile above lat's");
        }
    }
    // The writer runs two jobs: each has the flow's options, as fio's clones of a job.
    assert_eq!(jobs[1]["job options"]["numjobs"], "2");
    assert_eq!(jobs[1]["job options"], jobs[2]["job options"]);
    assert_eq!(jobs[0]["job options"]["numjobs"], "1");
    assert_eq!(jobs[0]["job options"]["rw"], "randread");
}

/// The fio JSON of a short run of the scenario with `set` (`--set` values).
fn fio_json_with(set: &[&str]) -> Value {
    let mut args: Vec<String> = vec!["run".into(), scenario().display().to_string()];
    args.extend(["--set", "run.duration=20ms", "--set", "metrics.fairness=false"].map(String::from));
    for s in set {
        args.extend(["--set".to_string(), s.to_string()]);
    }
    args.extend(["--output-format", "fio-json"].map(String::from));
    serde_json::from_str(&ullsim(&args).ok().stdout).expect("one JSON document")
}

fn jobnames(fio: &Value) -> Vec<&str> {
    fio["jobs"].as_array().unwrap().iter().map(|j| j["jobname"].as_str().unwrap()).collect()
}

#[test]
fn a_flow_of_three_jobs_is_three_fio_jobs_unless_group_reporting() {
    let three = fio_json_with(&["flow.writer.numjobs=3"]);
    assert_eq!(jobnames(&three), ["reader", "writer", "writer", "writer"], "one entry per task");
    let writers = &three["jobs"].as_array().unwrap()[1..];
    assert!(writers.iter().all(|j| j["groupid"] == 0 && j["job options"]["numjobs"] == "3"));
    // Each task's own numbers: they differ, and add up to the group's.
    let ios: Vec<u64> = writers.iter().map(|j| j["write"]["total_ios"].as_u64().unwrap()).collect();
    assert!(ios.iter().all(|&n| n > 0), "{ios:?}");
    let ctx: Vec<u64> = writers.iter().map(|j| j["ctx"].as_u64().unwrap()).collect();
    assert!(ctx.iter().all(|&n| n > 0), "{ctx:?}");

    let grouped = fio_json_with(&["flow.writer.numjobs=3", "flow.writer.group_reporting=true"]);
    assert_eq!(jobnames(&grouped), ["reader", "writer"], "group_reporting: one entry for the group");
    let group = &grouped["jobs"][1];
    assert_eq!(group["job options"]["group_reporting"], "1");
    assert_eq!(group["write"]["total_ios"].as_u64().unwrap(), ios.iter().sum::<u64>(), "the same run, grouped");
    assert_eq!(group["ctx"].as_u64().unwrap(), ctx.iter().sum::<u64>());
    let usr = |jobs: &[Value]| jobs.iter().map(|j| j["usr_cpu"].as_f64().unwrap()).sum::<f64>();
    assert!(close(usr(writers), usr(std::slice::from_ref(group)), 1e-9));

    // One job per flow: one entry each, with or without group_reporting.
    assert_eq!(jobnames(&fio_json_with(&[])), ["reader", "writer"]);
    assert_eq!(jobnames(&fio_json_with(&["flow.writer.group_reporting=true"])), ["reader", "writer"]);
}

#[test]
fn fio_json_is_deterministic_and_alone_on_stdout() {
    let first = run_fio_json_stdout("3");
    assert_eq!(first, run_fio_json_stdout("3"), "same seed, different bytes");
    // Standard output is the JSON document and nothing else (no table after it).
    let parsed: Value = serde_json::from_str(&first).expect("stdout is one JSON document");
    assert!(parsed["jobs"].is_array());
    assert_ne!(first, run_fio_json_stdout("4"), "the seed changes nothing?");
}

#[test]
fn conflicting_output_flags_are_one_clear_error() {
    let path = scenario().display().to_string();
    ullsim(["run", &path, "--output-format", "fio-json", "--json", "-"]).fails_with(&["standard output"]);
    ullsim(["run", &path, "--output-format", "json", "--fio-json", "-"]).fails_with(&["standard output"]);
    ullsim(["run", &path, "--json", "-", "--fio-json", "-"]).fails_with(&["standard output"]);
    ullsim(["run", &path, "--output-format", "fio-json", "--fio-json", "x.json"]).fails_with(&["--fio-json"]);
    ullsim(["run", &path, "--output-format", "csv"]).rejects_arguments_with(&["csv", "fio-json"]);
}

/// The fio JSON of a 1.2 s run of randread-optane (QD1 4 KB reads, a 1.195 s window) with `set`.
fn sampled_run(set: &[&str]) -> Value {
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples/randread-optane.toml");
    let mut args: Vec<String> = vec!["run".into(), scenario.display().to_string()];
    args.extend(["--set", "run.duration=1200ms"].map(String::from));
    for s in set {
        args.extend(["--set".to_string(), s.to_string()]);
    }
    args.extend(["--output-format", "fio-json"].map(String::from));
    serde_json::from_str(&ullsim(&args).ok().stdout).expect("one JSON document")
}

/// A job's read section: its IOPS and bandwidth samples checked against fio's definitions; its bw_agg.
fn check_samples(job: &Value) -> f64 {
    let read = &job["read"];
    let n = |key: &str| number(&read[key], key);
    let runtime_ms = number(&job["job_runtime"], "job_runtime");
    // One sample per whole 500 ms of the runtime (every interval completed reads).
    let samples = (runtime_ms / 500.0).floor();
    assert_eq!(samples, 2.0);
    assert_eq!(n("iops_samples"), samples, "{read}");
    assert_eq!(n("bw_samples"), samples, "{read}");
    assert!(n("iops_min") <= n("iops_mean") && n("iops_mean") <= n("iops_max"), "{read}");
    assert!(n("bw_min") <= n("bw_mean") && n("bw_mean") <= n("bw_max"), "{read}");
    // The samples cover all but the last 195 ms of the window, at a steady rate: their mean is the iops.
    assert!(close(n("iops_mean"), n("iops"), 0.02), "iops_mean {} vs iops {}", n("iops_mean"), n("iops"));
    assert!(close(n("bw_mean"), n("bw"), 0.02), "bw_mean {} vs bw {}", n("bw_mean"), n("bw"));
    // Two samples: the sample standard deviation (n - 1) is their difference / sqrt(2).
    let two = (n("iops_max") - n("iops_min")) / 2f64.sqrt();
    assert!((n("iops_stddev") - two).abs() <= 1e-9 * two.max(1.0), "iops_stddev {} vs {two}", n("iops_stddev"));
    let two = (n("bw_max") - n("bw_min")) / 2f64.sqrt();
    assert!((n("bw_dev") - two).abs() <= 1e-9 * two.max(1.0), "bw_dev {} vs {two}", n("bw_dev"));
    // 4 KB reads: KiB/s = 4 x IOPS, sample by sample.
    assert_eq!(n("bw_min"), 4.0 * n("iops_min"));
    assert_eq!(n("bw_max"), 4.0 * n("iops_max"));
    n("bw_agg")
}

#[test]
fn iops_and_bandwidth_samples_follow_fio() {
    let fio = sampled_run(&[]);
    let jobs = fio["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1);
    // Alone in its group: its share of the group's bandwidth is ~100%.
    let agg = check_samples(&jobs[0]);
    assert!(agg <= 100.0 && agg > 98.0, "bw_agg {agg}");
    let clat: Vec<(f64, f64)> = FIO_PERCENTILE_KEYS
        .map(|k| (k.parse::<f64>().unwrap(), number(&jobs[0]["read"]["clat_ns"]["percentile"][k], k)))
        .to_vec();
    check_latency_maps(&jobs[0], &clat, "reader");
    // No writes: the write section's samples are fio's zeros.
    assert_eq!(jobs[0]["write"]["iops_samples"], 0);
    assert_eq!(jobs[0]["write"]["bw_agg"], 0.0);
}

#[test]
fn each_job_has_its_own_samples_and_share_of_the_group() {
    let fio = sampled_run(&["flow.reader.numjobs=2"]);
    let jobs = fio["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2, "one entry per job");
    let shares: Vec<f64> = jobs.iter().map(check_samples).collect();
    // Two like jobs: about half of the group's bandwidth each.
    assert!(shares.iter().all(|s| (45.0..=55.0).contains(s)), "bw_agg {shares:?}");
    assert!(close(shares.iter().sum(), 100.0, 0.02), "bw_agg {shares:?}");
    for (i, job) in jobs.iter().enumerate() {
        let clat: Vec<(f64, f64)> = FIO_PERCENTILE_KEYS
            .map(|k| (k.parse::<f64>().unwrap(), number(&job["read"]["clat_ns"]["percentile"][k], k)))
            .to_vec();
        check_latency_maps(job, &clat, &format!("job {i}"));
    }
}
