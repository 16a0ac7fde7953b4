//! End-to-end tests of the `ullsim` command: run, validate, presets and bench as a user would call them, on the
//! example scenarios in scenarios/examples/ and on broken inputs written into temporary directories.
//!
//! Every run is short (examples take well under a wall second in release; the default scenario is cut to 40 ms
//! of simulated time), so the whole file stays within a few seconds of `cargo test --profile quick`.

use crate::common;

use std::path::{Path, PathBuf};

use common::{example, examples_dir, ullsim};
use serde_json::Value;

/// The example scenarios, each of which must exist and has its own test below.
const EXAMPLES: [&str; 6] = [
    "randread-optane.toml",
    "mixed-znand.toml",
    "gc-randwrite.toml",
    "trace-tpcc.toml",
    "zipf-open-loop.toml",
    "flin-mix.toml",
];

/// The device presets `ullsim presets` must list.
const PRESETS: [&str; 6] = ["optane-ull", "optane-900p", "znand-ull", "mqsim-mlc", "tlc-enterprise", "flin-eval"];

/// Keeps the built-in default scenario (300 ms, and every flow run alone too) short.
const SHORT_DEFAULT: &str = "run.duration=40ms";

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}\n{text}", path.display()))
}

/// Runs `ullsim run SCENARIO ARGS... -q --json FILE` and returns the parsed JSON (stdout must stay empty).
fn run_json(scenario: Option<&Path>, args: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results.json");
    let mut all: Vec<String> = vec!["run".into()];
    if let Some(s) = scenario {
        all.push(s.display().to_string());
    }
    all.extend(args.iter().map(|a| a.to_string()));
    all.extend(["-q".into(), "--json".into(), out.display().to_string()]);
    let run = ullsim(&all).ok();
    assert!(run.stdout.is_empty(), "--quiet --json FILE printed on stdout: {}", run.describe());
    read_json(&out)
}

/// `value[path]` for a dot-separated `path`, or a panic naming the path if any part is missing or null.
fn at<'a>(value: &'a Value, path: &str) -> &'a Value {
    let mut v = value;
    for part in path.split('.') {
        v = &v[part];
        assert!(!v.is_null(), "JSON has no `{path}` (or it is null) in {value}");
    }
    v
}

fn num(value: &Value, path: &str) -> f64 {
    let v = at(value, path);
    v.as_f64().unwrap_or_else(|| panic!("JSON `{path}` should be a number, found {v}"))
}

fn uint(value: &Value, path: &str) -> u64 {
    let v = at(value, path);
    v.as_u64().unwrap_or_else(|| panic!("JSON `{path}` should be a whole number >= 0, found {v}"))
}

fn text<'a>(value: &'a Value, path: &str) -> &'a str {
    let v = at(value, path);
    v.as_str().unwrap_or_else(|| panic!("JSON `{path}` should be a string, found {v}"))
}

fn flow<'a>(results: &'a Value, name: &str) -> &'a Value {
    results["flows"]
        .as_array()
        .expect("`flows` is an array")
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("no flow named {name:?} in the results"))
}

/// Checks what every result must satisfy: the documented fields exist with the right types, percentiles are
/// ordered, IOPS agree with completions over each flow's window (inside the run's), and the per-layer
/// breakdown adds up to the latency.
fn check_results(results: &Value, preset: &str, flow_names: &[&str]) {
    assert_eq!(uint(results, "schema_version"), 4);
    assert!(!text(results, "scenario.name").is_empty());
    uint(results, "scenario.seed");
    assert_eq!(text(results, "scenario.preset"), preset);
    let (start, end) = (uint(results, "window.start_ns"), uint(results, "window.end_ns"));
    assert!(start < end, "empty measurement window {start}..{end}");

    let flows = results["flows"].as_array().expect("`flows` is an array");
    let names: Vec<&str> = flows.iter().map(|f| f["name"].as_str().expect("flows[].name is a string")).collect();
    assert_eq!(names, flow_names, "flow names in order");
    let mut completed_in_window = 0;
    for f in flows {
        let name = f["name"].as_str().unwrap();
        let completed = uint(f, "completed");
        assert!(completed > 0, "flow {name} completed nothing");
        completed_in_window += completed;
        let iops = num(f, "iops");
        assert!(iops > 0.0 && iops.is_finite(), "flow {name}: iops {iops}");
        let (flow_start, flow_end) = (uint(f, "window.start_ns"), uint(f, "window.end_ns"));
        assert!(start <= flow_start && flow_start < flow_end && flow_end <= end, "flow {name}: window {}", f["window"]);
        let window_s = (flow_end - flow_start) as f64 / 1e9;
        let expected_iops = completed as f64 / window_s;
        assert!(
            (iops - expected_iops).abs() <= 1e-6 * expected_iops,
            "flow {name}: iops {iops} but {completed} completions in {window_s} s"
        );
        let bw = num(f, "bandwidth_bytes_per_s");
        assert!(bw >= 512.0 * iops, "flow {name}: {bw} B/s is less than 512 B per I/O at {iops} IOPS");
        let lat = &f["latency_ns"];
        let [mean, p50, p90, p99, p99_9, p99_99, p99_999, min, max] =
            ["mean", "p50", "p90", "p99", "p99_9", "p99_99", "p99_999", "min", "max"].map(|k| num(lat, k));
        assert!(min > 0.0, "flow {name}: latency min {min}");
        let ordered = [min, p50, p90, p99, p99_9, p99_99, p99_999, max];
        assert!(ordered.windows(2).all(|w| w[0] <= w[1]), "flow {name}: percentiles out of order: {lat}");
        assert!(min <= mean && mean <= max, "flow {name}: mean {mean} outside [{min}, {max}]");
        // Every request records the time it spent in each layer: the layers' means add up to the mean latency.
        let breakdown = f["breakdown_ns"].as_object().expect("breakdown_ns is an object");
        assert!(!breakdown.is_empty());
        let layers: f64 = breakdown.values().map(|layer| num(layer, "mean")).sum();
        assert!((layers - mean).abs() <= 1e-6 * mean + 1.0, "flow {name}: layers sum to {layers} ns, mean {mean}");
        let in_flight = num(f, "mean_in_flight");
        assert!(in_flight >= 0.0, "flow {name}: mean_in_flight {in_flight}");
        // Reads and writes split the completions.
        let by_op: u64 =
            ["read", "write"].iter().filter(|k| !f[**k].is_null()).map(|k| uint(&f[*k], "completed")).sum();
        assert_eq!(by_op, completed, "flow {name}: read + write completions");
    }
    assert!(uint(results, "requests_completed") >= completed_in_window);
    assert!(uint(results, "events") > 0);

    let device = &results["device"];
    assert_eq!(text(device, "preset"), preset);
    assert!(uint(device, "logical_capacity_bytes") > 0);
    uint(device, "gc_count");
    match &device["write_amplification"] {
        Value::Null => {}
        v => {
            let wa = v.as_f64().expect("device.write_amplification is a number or null");
            assert!((1.0..100.0).contains(&wa), "write amplification {wa}");
        }
    }
    for key in ["die_utilization", "channel_utilization"] {
        let (mean, max) = (num(&device[key], "mean"), num(&device[key], "max"));
        assert!(0.0 <= mean && mean <= max + 1e-9 && max <= 1.0 + 1e-9, "device.{key}: mean {mean}, max {max}");
    }
    // Each core's time splits into user, kernel, polling and idle; the device-only host has no cores.
    let cores = results["host"]["cores"].as_array().expect("host.cores is an array");
    match text(results, "host.model") {
        "full" => assert!(!cores.is_empty()),
        "device-only" => assert!(cores.is_empty() && uint(results, "host.interrupts") == 0),
        other => panic!("host.model {other:?}"),
    }
    for c in cores {
        let parts: f64 = ["user", "kernel", "poll", "idle"].iter().map(|k| num(c, k)).sum();
        assert!((parts - 1.0).abs() < 1e-6, "core time parts sum to {parts}: {c}");
    }
    let watts = num(&results["energy"], "mean_watts");
    assert!(watts > 0.0 && watts.is_finite(), "energy.mean_watts {watts}");
}

fn p(path: &Path) -> &str {
    path.to_str().expect("test paths are UTF-8")
}

fn write_file(dir: &Path, name: &str, contents: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

/// A small valid scenario to break in one place.
const BASE: &str = r#"
[run]
duration = "10ms"

[device]
preset = "optane-ull"

[[flow]]
name = "reader"
rw = "randread"
bs = "4k"
iodepth = 1
"#;

// ---- the default scenario ------------------------------------------------------------------------------------

#[test]
fn default_run_prints_a_table_of_both_flows_and_writes_json() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("default.json");
    let run = ullsim(["run", "--set", SHORT_DEFAULT, "--json", json.to_str().unwrap()]).ok();
    assert!(run.stdout.contains("IOPS"), "no table header: {}", run.describe());
    for name in ["reader", "writer"] {
        assert!(run.stdout.lines().any(|l| l.starts_with(name)), "table has no row for {name}: {}", run.describe());
    }
    let results = read_json(&json);
    check_results(&results, "znand-ull", &["reader", "writer"]);
    // The default asks for fairness: every flow also ran alone.
    for name in ["reader", "writer"] {
        assert!(num(flow(&results, name), "slowdown") > 0.0);
        assert!(num(flow(&results, name), "alone.iops") > 0.0);
    }
    assert!(num(&results, "fairness.max_slowdown") >= 1.0);
}

#[test]
fn json_to_stdout_prints_only_json() {
    let run = ullsim(["run", "--set", SHORT_DEFAULT, "--json", "-"]).ok();
    let results: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("stdout is not only JSON ({e}): {}", run.describe()));
    check_results(&results, "znand-ull", &["reader", "writer"]);
    assert!(!run.stdout.contains("where the time goes"), "the table leaked into the JSON output");
}

// ---- the example scenarios -----------------------------------------------------------------------------------

/// Every scenario file in scenarios/examples/, sorted.
fn all_examples() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(examples_dir())
        .expect("scenarios/examples exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    found.sort();
    found
}

#[test]
fn every_example_has_a_header_and_validates() {
    let found = all_examples();
    for name in EXAMPLES {
        assert!(found.contains(&example(name)), "missing example {name}");
    }
    for path in &found {
        let text = std::fs::read_to_string(path).unwrap();
        assert!(text.starts_with("# "), "{} should open with a comment saying what it shows", path.display());
        let run = ullsim(["validate", p(path)]).ok();
        assert!(run.stdout.starts_with(&format!("{}: ok (", path.display())), "{}", run.describe());
        assert_eq!(run.stdout.lines().count(), 1, "{}", run.describe());
    }
    // validate reads traces to the end.
    let run = ullsim(["validate", p(&example("trace-tpcc.toml"))]).ok();
    assert!(run.stdout.contains("6999 trace records"), "{}", run.describe());
}

#[test]
fn example_randread_optane_is_the_calibration_anchor() {
    let results = run_json(Some(&example("randread-optane.toml")), &[]);
    check_results(&results, "optane-ull", &["reader"]);
    let reader = flow(&results, "reader");
    let mean = num(reader, "latency_ns.mean");
    // Calibration target ~12.5 us end to end with the default host; allow the model some slack.
    assert!((11_000.0..=14_000.0).contains(&mean), "QD1 4 KB read on optane-ull takes {mean} ns");
    // QD1 closed loop: one I/O always in flight, so IOPS x latency = 1 (Little's law).
    let little = num(reader, "iops") * mean / 1e9;
    assert!((0.98..=1.01).contains(&little), "IOPS x mean latency = {little}");
    assert!(reader["write"].is_null(), "a read-only flow reported writes");
    assert_eq!(num(reader, "bandwidth_bytes_per_s") / num(reader, "iops"), 4096.0);
    assert_eq!(uint(&results, "device.gc_count"), 0, "in-place media has no GC");
}

#[test]
fn example_mixed_znand_shows_the_writer_slowing_the_reader() {
    let results = run_json(Some(&example("mixed-znand.toml")), &[]);
    check_results(&results, "znand-ull", &["reader", "writer"]);
    let reader = flow(&results, "reader");
    let (shared, alone) = (num(reader, "latency_ns.mean"), num(reader, "alone.latency_ns.mean"));
    assert!(shared > 2.0 * alone, "reader mean {shared} ns beside the writer vs {alone} ns alone");
    assert!(num(reader, "slowdown") > 2.0);
    assert_eq!(
        num(flow(&results, "writer"), "bandwidth_bytes_per_s") / num(flow(&results, "writer"), "iops"),
        131072.0
    );
}

#[test]
fn example_gc_randwrite_collects_garbage_and_amplifies_writes() {
    let results = run_json(Some(&example("gc-randwrite.toml")), &[]);
    check_results(&results, "mqsim-mlc", &["writer"]);
    let gc = uint(&results, "device.gc_count");
    let wa = num(&results, "device.write_amplification");
    assert!(gc > 0, "no garbage collection");
    assert!(wa > 1.5, "write amplification {wa}");
    assert!(uint(&results, "device.gc_pages_programmed") > 0);
    assert!(flow(&results, "writer")["read"].is_null());
}

#[test]
fn example_trace_tpcc_replays_the_whole_trace() {
    let results = run_json(Some(&example("trace-tpcc.toml")), &[]);
    check_results(&results, "flin-eval", &["tpcc"]);
    let tpcc = flow(&results, "tpcc");
    // tpcc-small.trace: 6,999 records, 4,381 reads (type 1) and 2,618 writes (type 0); no warm-up.
    assert_eq!(uint(tpcc, "completed"), 6999);
    assert_eq!(uint(tpcc, "read.completed"), 4381);
    assert_eq!(uint(tpcc, "write.completed"), 2618);
    assert_eq!(uint(&results, "requests_completed"), 6999);
    // The run ends when the trace has drained, long before the 1 s duration.
    assert!(uint(&results, "window.end_ns") < 500_000_000);
}

#[test]
fn example_zipf_open_loop_keeps_its_rate_beside_a_closed_loop_writer() {
    let results = run_json(Some(&example("zipf-open-loop.toml")), &[]);
    check_results(&results, "tlc-enterprise", &["reader", "writer"]);
    let (reader, writer) = (flow(&results, "reader"), flow(&results, "writer"));
    // Open loop: arrivals come at rate_iops whatever the drive does.
    let iops = num(reader, "iops");
    assert!((19_000.0..=21_000.0).contains(&iops), "open-loop reader at {iops} IOPS, asked for 20000");
    // Closed loop: iodepth I/Os always outstanding.
    let depth = num(writer, "mean_in_flight");
    assert!((7.9..=8.0).contains(&depth), "closed-loop writer keeps {depth} I/Os in flight, asked for 8");
    assert_eq!(num(reader, "bandwidth_bytes_per_s") / iops, 4096.0);
    assert_eq!(num(writer, "bandwidth_bytes_per_s") / num(writer, "iops"), 65536.0);
}

#[test]
fn example_flin_mix_shows_each_flows_alone_die_busy_and_class() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("flin-mix.json");
    let run = ullsim(["run", p(&example("flin-mix.toml")), "--json", json.to_str().unwrap()]).ok();
    let results = read_json(&json);
    let names = ["tpcc", "tpce", "wsrch", "fin1"];
    check_results(&results, "flin-eval", &names);
    let lines: Vec<&str> = run.stdout.lines().collect();
    for name in names {
        let busy = num(flow(&results, name), "alone.die_busy");
        let high = at(flow(&results, name), "alone.high_interference").as_bool().expect("a bool");
        // FLIN's Table 2 puts tpcc and tpce in the high-interference class, wsrch and fin1 in the low one.
        assert_eq!(high, ["tpcc", "tpce"].contains(&name), "{name}: die busy {busy}");
        assert_eq!(high, busy > 0.08);
        // The (alone) row under the flow's row says the same.
        let row = lines.iter().position(|l| l.starts_with(&format!("{name} "))).expect("a row per flow");
        let alone = lines[row + 1];
        let class = if high { "high-interference" } else { "low-interference" };
        assert!(alone.starts_with("  (alone)") && alone.ends_with(class), "{}", run.describe());
        let percent = alone.split("die busy ").nth(1).and_then(|t| t.split('%').next()).expect("die busy N%");
        let shown: f64 = percent.parse().unwrap();
        assert!((shown - busy * 100.0).abs() <= 0.05, "{name}: table {shown}%, JSON {busy}");
    }
}

// ---- determinism and overrides -------------------------------------------------------------------------------

fn json_bytes(scenario: &Path, args: &[&str], dir: &Path, file: &str) -> Vec<u8> {
    let out = dir.join(file);
    let mut all = vec!["run", scenario.to_str().unwrap(), "-q", "--json", out.to_str().unwrap()];
    all.extend_from_slice(args);
    ullsim(&all).ok();
    std::fs::read(&out).unwrap()
}

#[test]
fn same_scenario_and_seed_give_identical_json_and_another_seed_differs() {
    let dir = tempfile::tempdir().unwrap();
    // A Poisson/zipf scenario, and the fairness scenario whose alone runs execute in parallel threads.
    let cases: [(&str, &[&str]); 2] =
        [("zipf-open-loop.toml", &[]), ("mixed-znand.toml", &["--set", "run.duration=30ms"])];
    for (name, args) in cases {
        let scenario = example(name);
        let first = json_bytes(&scenario, args, dir.path(), "first.json");
        let second = json_bytes(&scenario, args, dir.path(), "second.json");
        assert!(first == second, "{name}: two runs with the same seed gave different JSON");
        let mut with_seed: Vec<&str> = args.to_vec();
        with_seed.extend(["--seed", "2"]);
        let other = json_bytes(&scenario, &with_seed, dir.path(), "seed2.json");
        assert!(first != other, "{name}: --seed 2 gave the same bytes");
        let (a, b): (Value, Value) = (serde_json::from_slice(&first).unwrap(), serde_json::from_slice(&other).unwrap());
        assert_eq!(uint(&b, "scenario.seed"), 2);
        assert_ne!(a["flows"], b["flows"], "{name}: --seed 2 changed only the seed field, not the results");
    }
}

#[test]
fn set_iodepth_raises_the_iops_of_a_closed_loop_flow() {
    let scenario = example("randread-optane.toml");
    let dir = tempfile::tempdir().unwrap();
    let qd1 = run_json(Some(&scenario), &[]);
    let by_index = json_bytes(&scenario, &["--set", "flow.0.iodepth=8"], dir.path(), "index.json");
    let qd8: Value = serde_json::from_slice(&by_index).unwrap();
    let (iops1, iops8) = (num(flow(&qd1, "reader"), "iops"), num(flow(&qd8, "reader"), "iops"));
    assert!(iops8 > 4.0 * iops1, "iodepth 8 gave {iops8} IOPS, iodepth 1 {iops1}");
    assert!(num(flow(&qd8, "reader"), "mean_in_flight") > 7.9);
    // A flow can be addressed by name as well as by index: same run, same bytes.
    let by_name = json_bytes(&scenario, &["--set", "flow.reader.iodepth=8"], dir.path(), "name.json");
    assert!(by_index == by_name, "flow.0.iodepth and flow.reader.iodepth gave different results");
}

#[test]
fn set_host_model_device_only_takes_the_host_out_of_the_latency() {
    let scenario = example("randread-optane.toml");
    let full = run_json(Some(&scenario), &[]);
    let device_only = run_json(Some(&scenario), &["--set", "host.model=device-only"]);
    check_results(&device_only, "optane-ull", &["reader"]);
    assert_eq!(text(&device_only, "host.model"), "device-only");
    assert_eq!(text(&full, "host.model"), "full");
    let reader = flow(&device_only, "reader");
    for part in ["syscall", "page_cache", "file_system", "block", "driver", "completion", "cpu_wait"] {
        assert_eq!(num(reader, &format!("breakdown_ns.{part}.mean")), 0.0, "device-only {part}");
    }
    assert_eq!(num(reader, "cpu_cores"), 0.0);
    // optane-ull's QD1 read: ~6.5 us in the device (its mean, with the drive's own spread), 12.5 us through
    // the default host.
    let (alone, stacked) = (num(reader, "latency_ns.mean"), num(flow(&full, "reader"), "latency_ns.mean"));
    assert!((6_300.0..6_700.0).contains(&alone), "device-only QD1 read {alone} ns");
    assert!(stacked - alone > 5_000.0, "the host adds {} ns", stacked - alone);
    // The terminal table says which host ran, and the same seed gives the same bytes.
    let table = ullsim(["run", p(&scenario), "--set", "host.model=device-only"]).ok();
    assert!(table.stdout.contains("host: device-only (no host time"), "{}", table.describe());
    let dir = tempfile::tempdir().unwrap();
    let args = ["--set", "host.model=device-only", "--set", "flow.reader.iodepth=8"];
    let first = json_bytes(&scenario, &args, dir.path(), "first.json");
    assert!(first == json_bytes(&scenario, &args, dir.path(), "second.json"), "device-only runs differ");
}

#[test]
fn set_host_model_to_an_unknown_value_fails_naming_the_key_and_the_values() {
    ullsim(["run", p(&example("randread-optane.toml")), "--set", "host.model=mqsim"]).fails_with(&[
        "--set host.model=mqsim",
        "key `host.model`",
        r#"found "mqsim", expected one of "full", "device-only""#,
    ]);
}

#[test]
fn set_flash_read_time_changes_read_latency() {
    let scenario = example("randread-optane.toml");
    let fixed = ["--set", "device.variability.enabled=false"];
    let base = num(flow(&run_json(Some(&scenario), &fixed), "reader"), "latency_ns.mean");
    let slow_args = [&fixed[..], &["--set", "device.flash.read_ns=10000"]].concat();
    let slow = num(flow(&run_json(Some(&scenario), &slow_args), "reader"), "latency_ns.mean");
    // optane-ull reads its media in 0.63 us; 10 us adds 9.37 us to every QD1 read.
    assert!((8_900.0..=9_900.0).contains(&(slow - base)), "read_ns 630 -> 10000 moved the mean from {base} to {slow}");
}

#[test]
fn seed_flag_and_set_seed_agree() {
    let scenario = example("zipf-open-loop.toml");
    let dir = tempfile::tempdir().unwrap();
    let flag = json_bytes(&scenario, &["--seed", "7"], dir.path(), "flag.json");
    let set = json_bytes(&scenario, &["--set", "seed=7"], dir.path(), "set.json");
    assert!(flag == set, "--seed 7 and --set seed=7 gave different results");
}

// ---- presets and bench ---------------------------------------------------------------------------------------

#[test]
fn presets_lists_all_five() {
    let run = ullsim(["presets"]).ok();
    for name in PRESETS {
        assert!(run.stdout.lines().any(|l| l.starts_with(name)), "preset {name} not listed: {}", run.describe());
    }
}

#[test]
fn presets_name_prints_that_presets_toml() {
    let run = ullsim(["presets", "mqsim-mlc"]).ok();
    assert_eq!(run.stdout, include_str!("../../../ullsim/src/config/presets/mqsim-mlc.toml"));
    assert!(run.stdout.contains("[flash]") && run.stdout.contains("blocks_per_plane = 2048"));
}

#[test]
fn presets_unknown_name_fails_naming_the_valid_ones() {
    let mut needles = vec!["\"nope\""];
    needles.extend(PRESETS);
    ullsim(["presets", "nope"]).fails_with(&needles);
}

/// `ullsim platforms` lists the papers' machines and prints one as written; a scenario that names one runs on
/// it and says so in its results.
#[test]
fn platforms_lists_each_platform_prints_one_and_runs_on_it() {
    let run = ullsim(["platforms"]).ok();
    for name in ["hotstorage23-xeon", "fastresponse22-inspur", "flashshare18-gem5", "flin18-mqsim"] {
        assert!(run.stdout.lines().any(|l| l.starts_with(name)), "platform {name} not listed: {}", run.describe());
    }
    let one = ullsim(["platforms", "flashshare18-gem5"]).ok();
    assert_eq!(one.stdout, include_str!("../../../ullsim/src/config/platforms/flashshare18-gem5.toml"));
    ullsim(["platforms", "nope"]).fails_with(&["unknown platform \"nope\"", "flin18-mqsim"]);
    let scenario = example("randread-optane.toml");
    let on = |platform: &str| -> Value {
        let set = format!("host.platform={platform}");
        let out = ullsim(["run", p(&scenario), "--set", &set, "--set", "run.duration=20ms", "--json", "-"]).ok();
        serde_json::from_str(&out.stdout).unwrap()
    };
    let inspur = on("fastresponse22-inspur");
    assert_eq!(inspur["scenario"]["platform"], "fastresponse22-inspur");
    assert_eq!(inspur["host"]["cores"].as_array().map(Vec::len), Some(16), "one entry per core");
    let mqsim = on("flin18-mqsim");
    assert_eq!(mqsim["host"]["model"], "device-only", "{}", mqsim["host"]);
    // Without one, the results name none.
    let plain = ullsim(["run", p(&scenario), "--set", "run.duration=20ms", "--json", "-"]).ok();
    let plain: Value = serde_json::from_str(&plain.stdout).unwrap();
    assert!(plain["scenario"].get("platform").is_none(), "{}", plain["scenario"]);
}

#[test]
fn stacks_lists_each_stack_and_prints_one() {
    let run = ullsim(["stacks"]).ok();
    for name in ["vanilla", "selectisr"] {
        assert!(run.stdout.lines().any(|l| l.starts_with(name)), "stack {name} not listed: {}", run.describe());
    }
    let one = ullsim(["stacks", "selectisr"]).ok();
    assert_eq!(one.stdout, include_str!("../../../ullsim/src/config/stacks/selectisr.toml"));
    ullsim(["stacks", "nope"]).fails_with(&["\"nope\"", "vanilla", "selectisr"]);
    // A stack with a base prints the base's keys too, resolved.
    let bsj = ullsim(["stacks", "fastresponse"]).ok();
    for key in ["base = \"fastresponse-bs\"", "fjournaling = true", "ld_depth = 8", "cpu_scheduler = \"fastresponse\""]
    {
        assert!(bsj.stdout.contains(key), "{key} missing from:\n{}", bsj.stdout);
    }
    // compare puts stacks side by side.
    let scenario = example("randread-optane.toml");
    let side = ullsim(["compare", p(&scenario), "--vary", "host.stack=vanilla,selectisr", "--json", "-"]).ok();
    let v: Value = serde_json::from_str(&side.stdout).unwrap();
    assert_eq!(v["variants"].as_array().map(Vec::len), Some(2), "{}", side.describe());
}

#[test]
fn bench_unknown_case_fails_naming_the_valid_ones() {
    ullsim(["bench", "--case", "nope"]).fails_with(&["unknown case \"nope\"", "randread-qd32"]);
}

// ---- bad input: exit code 1, one message on stderr, no panic, nothing on stdout ------------------------------

#[test]
fn unknown_key_in_a_scenario_is_named_with_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "s.toml", &BASE.replace("iodepth = 1", "iodepth = 1\nqueue_depht = 4"));
    ullsim(["run", p(&path)]).fails_with(&["s.toml", "flow[0].queue_depht", "unknown field"]);
    ullsim(["validate", p(&path)]).fails_with(&["flow[0].queue_depht"]);
    let path = write_file(dir.path(), "d.toml", &BASE.replace("[device]", "[device]\nflash.read_nss = 5"));
    ullsim(["run", p(&path)]).fails_with(&["device.flash.read_nss"]);
}

#[test]
fn bad_unit_is_reported_with_the_key_and_value() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "s.toml", &BASE.replace("bs = \"4k\"", "bs = \"4q\""));
    ullsim(["run", p(&path)]).fails_with(&["flow[0].bs", "\"4q\""]);
    let path = write_file(dir.path(), "d.toml", &BASE.replace("\"10ms\"", "\"10 parsecs\""));
    ullsim(["run", p(&path)]).fails_with(&["run.duration", "10 parsecs"]);
}

#[test]
fn impossible_geometry_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "s.toml", &format!("{BASE}\n[device.flash]\nchannels = 0\n"));
    ullsim(["run", p(&path)]).fails_with(&["device.flash.channels", ">= 1"]);
    let path = write_file(dir.path(), "p.toml", &format!("{BASE}\n[device.flash]\npage_bytes = 3000\n"));
    ullsim(["run", p(&path)]).fails_with(&["device.flash.page_bytes", "power of two"]);
    // The same through --set.
    let path = write_file(dir.path(), "ok.toml", BASE);
    ullsim(["run", p(&path), "--set", "device.flash.page_bytes=3000"]).fails_with(&["device.flash.page_bytes"]);
}

#[test]
fn unknown_preset_in_a_scenario_names_the_valid_ones() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "s.toml", &BASE.replace("optane-ull", "optane-ulll"));
    let mut needles = vec!["device.preset", "\"optane-ulll\""];
    needles.extend(PRESETS);
    ullsim(["run", p(&path)]).fails_with(&needles);
}

#[test]
fn missing_scenario_file_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no-such-scenario.toml");
    ullsim(["run", p(&path)]).fails_with(&["no-such-scenario.toml", "cannot read scenario file"]);
    ullsim(["validate", p(&path)]).fails_with(&["no-such-scenario.toml"]);
}

#[test]
fn malformed_set_is_reported() {
    let scenario = example("randread-optane.toml");
    let s = scenario.to_str().unwrap();
    ullsim(["run", s, "--set", "run.duration"]).fails_with(&["--set run.duration", "key.path=value"]);
    ullsim(["run", "--set", "flow.reader.iodepth"]).fails_with(&["built-in default", "key.path=value"]);
    ullsim(["run", s, "--set", "=5"]).fails_with(&["bad key path"]);
}

#[test]
fn set_on_a_missing_flow_is_reported() {
    let scenario = example("randread-optane.toml");
    let s = scenario.to_str().unwrap();
    ullsim(["run", s, "--set", "flow.7.iodepth=2"]).fails_with(&["flow.7.iodepth=2", "no flow with index 7"]);
    ullsim(["run", s, "--set", "flow.nobody.iodepth=2"]).fails_with(&["no flow named \"nobody\""]);
}

#[test]
fn malformed_trace_line_names_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    write_file(dir.path(), "bad.trace", "0 0 100 8 1\n1000 0 200 8 0\n2000 0 abc 8 1\n3000 0 300 8 1\n");
    let path = write_file(
        dir.path(),
        "s.toml",
        "[device]\npreset = \"optane-ull\"\n[[flow]]\nname = \"t\"\ntrace = \"bad.trace\"\nformat = \"disksim\"\n",
    );
    ullsim(["run", p(&path)]).fails_with(&["bad.trace:3:", "\"abc\""]);
    ullsim(["validate", p(&path)]).fails_with(&["bad.trace:3:", "\"abc\""]);
}

#[test]
fn missing_trace_file_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(
        dir.path(),
        "s.toml",
        "[device]\npreset = \"optane-ull\"\n[[flow]]\nname = \"t\"\ntrace = \"nofile.trace\"\nformat = \"disksim\"\n",
    );
    ullsim(["run", p(&path)]).fails_with(&["nofile.trace", "cannot read trace"]);
    ullsim(["validate", p(&path)]).fails_with(&["nofile.trace", "cannot read trace"]);
}

#[test]
fn flow_with_both_rw_and_trace_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    write_file(dir.path(), "ok.trace", "0 0 100 8 1\n");
    let path = write_file(
        dir.path(),
        "s.toml",
        &BASE.replace("bs = \"4k\"\n", "trace = \"ok.trace\"\nformat = \"disksim\"\n"),
    );
    ullsim(["run", p(&path)]).fails_with(&["flow[0].trace", "not both"]);
}

#[test]
fn warmup_not_shorter_than_duration_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(
        dir.path(),
        "s.toml",
        &BASE.replace("duration = \"10ms\"", "duration = \"10ms\"\nwarmup = \"10ms\""),
    );
    ullsim(["run", p(&path)]).fails_with(&["run.warmup", "shorter than run.duration"]);
    let ok = write_file(dir.path(), "ok.toml", BASE);
    ullsim(["run", p(&ok), "--set", "run.warmup=1s"]).fails_with(&["run.warmup"]);
}

#[test]
fn invalid_toml_reports_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "s.toml", "name = \"x\"\n[run\nduration = 1\n");
    ullsim(["run", p(&path)]).fails_with(&["s.toml", "invalid TOML", "line 2"]);
}

/// A scenario replaying `trace` (a file in `dir`) in `format` beside a closed-loop reader, as flow 1 "tpcc".
fn trace_scenario(dir: &Path, trace: &str, format: &str) -> PathBuf {
    let text = format!(
        "[run]\nduration = \"10ms\"\n[device]\npreset = \"optane-ull\"\n[[flow]]\nname = \"reader\"\n\
         rw = \"randread\"\n[[flow]]\nname = \"tpcc\"\ntrace = \"{trace}\"\nformat = \"{format}\"\n"
    );
    write_file(dir, "s.toml", &text)
}

#[test]
fn a_trace_without_records_is_one_error_in_validate_and_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut cases: Vec<(&str, &str, &str)> =
        ["disksim", "msr", "spc", "fio-iolog", "blkparse"].map(|format| (format, "", "the file is empty")).into();
    cases.extend([
        ("disksim", "# a comment\n\n", "only blank lines and comments"),
        ("fio-iolog", "fio version 3 iolog\n", "only the header"),
        ("msr", "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n", "only a header"),
        ("blkparse", "  8,0  0  1  0.000000502  697  D  WS 3417056 + 8 [kjournald]\n", "blkparse: no Q events"),
    ]);
    for (format, text, reason) in cases {
        write_file(dir.path(), "t.trace", text);
        let scenario = trace_scenario(dir.path(), "t.trace", format);
        for command in ["validate", "run"] {
            ullsim([command, p(&scenario)]).fails_with(&[
                "s.toml: key `flow[1].trace` (flow \"tpcc\"): ",
                "t.trace: trace has no read or write records (",
                reason,
            ]);
        }
    }
}

#[test]
fn validate_and_run_name_the_scenario_and_flow_of_a_bad_trace_line_before_simulating() {
    let dir = tempfile::tempdir().unwrap();
    // The bad line comes after the run's end (10 ms): a run that read the trace only as it replays it would
    // never see it (or, in a longer run, only seconds into it).
    write_file(dir.path(), "bad.trace", "0 0 100 8 1\n5000000000 0 200 8 0\n5000001000 0 abc 8 1\n");
    let scenario = trace_scenario(dir.path(), "bad.trace", "disksim");
    for command in ["validate", "run"] {
        ullsim([command, p(&scenario)]).fails_with(&["s.toml: key `flow[1].trace` (flow \"tpcc\"): ", "bad.trace:3: "]);
    }
}

#[test]
fn a_set_of_a_bad_value_is_named_rather_than_the_scenario() {
    ullsim(["run", "--set", "flow.reader.iodepth=abc"]).fails_with(&[
        "--set flow.reader.iodepth=abc: key `flow[0].iodepth`: invalid type: string \"abc\", expected a whole number",
    ]);
    ullsim(["run", "--set", "flow.reader.rw=0"])
        .fails_with(&["--set flow.reader.rw=0: key `flow[0].rw`: found 0 (an integer), expected one of \"read\""]);
}

#[test]
fn negative_numbers_for_number_flags_are_errors_about_the_value() {
    let whole = "expected a whole number from 0 to 18446744073709551615";
    ullsim(["run", "--seed", "-1"]).rejects_arguments_with(&["'-1' for '--seed", whole]);
    ullsim(["compare", "--vary", "flow.reader.iodepth=1,2", "--seed", "-1"]).rejects_arguments_with(&[whole]);
    ullsim(["reproduce", "flin18", "--seed", "-1"]).rejects_arguments_with(&["'-1' for '--seed", whole]);
    ullsim(["reproduce", "flin18", "--mixes", "-1"]).rejects_arguments_with(&["'-1' for '--mixes", whole]);
    ullsim(["run", "--seed", "18446744073709551616"]).rejects_arguments_with(&[whole]);
    ullsim(["reproduce", "flin18", "--load", "-1"]).fails_with(&["--load: expected a rate multiplier > 0, got -1"]);
    ullsim(["reproduce", "flin18", "--duration", "-1s"]).fails_with(&["--duration: expected a duration", "\"-1s\""]);
}

#[test]
fn a_scenario_that_is_too_large_or_not_a_file_is_rejected_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    ullsim(["validate", p(dir.path())]).fails_with(&["is a directory; expected a scenario file"]);
    let large = write_file(dir.path(), "large.toml", &format!("# {}\n", "x".repeat(16 << 20)));
    ullsim(["run", p(&large)]).fails_with(&["large.toml: scenario file is 16777219 bytes", "16777216 bytes (16 MiB)"]);
    // No length to check: the read stops past the limit.
    #[cfg(unix)]
    ullsim(["validate", "/dev/zero"]).fails_with(&["/dev/zero: scenario file is more than 16777216 bytes long"]);
}

// ---- known library bugs, reported to the lead; un-ignore once fixed --------------------------------------------

#[test]
fn trace_errors_are_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    write_file(dir.path(), "bad.trace", "0 0 100 8 1\n1000 0 200 8 0\n2000 0 abc 8 1\n");
    let bad =
        "[device]\npreset = \"optane-ull\"\n[[flow]]\nname = \"t\"\ntrace = \"bad.trace\"\nformat = \"disksim\"\n";
    let bad = write_file(dir.path(), "bad.toml", bad);
    let missing =
        write_file(dir.path(), "missing.toml", &std::fs::read_to_string(&bad).unwrap().replace("bad.", "no."));
    for (command, scenario, repeated) in
        [("run", &bad, "bad.trace:3:"), ("validate", &missing, "No such file or directory")]
    {
        let run = ullsim([command, p(scenario)]).fails_with(&[repeated]);
        assert_eq!(run.stderr.matches(repeated).count(), 1, "message repeats itself: {}", run.describe());
    }
}

#[test]
fn gc_randwrite_with_the_write_cache_keeps_completing_writes() {
    let scenario = example("gc-randwrite.toml");
    let completed = |duration: &str| {
        let results = run_json(
            Some(&scenario),
            &["--set", "device.cache.enabled=true", "--set", "run.warmup=0", "--set", duration],
        );
        uint(flow(&results, "writer"), "completed")
    };
    let (early, late) = (completed("run.duration=50ms"), completed("run.duration=200ms"));
    assert!(late > early, "no write completed between 50 ms and 200 ms ({early} -> {late})");
}

/// The README's sample output is what `ullsim run` prints on the built-in default today (all but the wall
/// time, which is not reproducible).
#[test]
fn the_readme_sample_output_matches_a_fresh_default_run() {
    let readme = include_str!("../../../../README.md");
    let start = readme.find("default: 4 KB reader beside").expect("README shows the default run");
    let sample = &readme[start..start + readme[start..].find("```").expect("sample ends")];
    let run = ullsim(["run"]).ok();
    let strip_wall = |line: &str| line.split(" events, ").next().unwrap_or(line).to_string();
    let printed: Vec<String> = run.stdout.lines().map(strip_wall).collect();
    for line in sample.lines().map(strip_wall) {
        assert!(printed.contains(&line), "README line not in a fresh run: {line:?}\n{}", run.describe());
    }
}

/// The block of docs/scenarios.md that follows the line starting with `marker`.
fn scenarios_doc_block(marker: &str) -> &'static str {
    let doc = include_str!("../../../../docs/scenarios.md");
    let at = doc.find(marker).unwrap_or_else(|| panic!("docs/scenarios.md has no {marker:?}"));
    let fence = at + doc[at..].find("```").expect("a block follows the marker");
    let start = fence + doc[fence..].find('\n').expect("the fence line ends") + 1;
    &doc[start..start + doc[start..].find("```").expect("the block ends")]
}

/// docs/scenarios.md's worked example shows what `ullsim run` prints on it today (all but the wall time), and
/// the figure it quotes of a variation (interrupts instead of polling) is that variation's.
#[test]
fn the_worked_example_output_in_the_scenarios_doc_matches_a_fresh_run() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_file(dir.path(), "example.toml", scenarios_doc_block("<!-- worked-example: "));
    let sample = scenarios_doc_block("<!-- worked-example-output");
    let run = ullsim(["run", p(&scenario)]).ok();
    let strip_wall = |line: &str| line.split(" events, ").next().unwrap_or(line).to_string();
    let printed: Vec<String> = run.stdout.lines().map(strip_wall).collect();
    let sample: Vec<String> = sample.lines().map(strip_wall).collect();
    assert_eq!(sample, printed, "docs/scenarios.md's worked example output is not a fresh run's:\n{}", run.describe());
    let interrupts = run_json(Some(&scenario), &["--set", "flow.kv-get.hipri=false"]);
    let mean_us = num(flow(&interrupts, "kv-get"), "latency_ns.mean") / 1000.0;
    let prose = include_str!("../../../../docs/scenarios.md").split_whitespace().collect::<Vec<_>>().join(" ");
    let said = format!("`--set flow.kv-get.hipri=false` (interrupts: `kv-get`'s mean {mean_us:.1} µs)");
    assert!(prose.contains(&said), "docs/scenarios.md should say {said:?}");
}

// ---- --timeseries ------------------------------------------------------------------------------------------

/// `run --timeseries FILE` writes the documented header and one row per interval and flow, the same bytes for
/// the same seed; the JSON carries the same series.
#[test]
fn run_timeseries_writes_a_csv_row_per_interval_and_flow() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_file(dir.path(), "s.toml", BASE);
    let csv = |name: &str| {
        let path = dir.path().join(name);
        let json = dir.path().join(format!("{name}.json"));
        ullsim([
            "run",
            p(&scenario),
            "--set",
            "metrics.timeseries_interval=2ms",
            "--timeseries",
            p(&path),
            "-q",
            "--json",
            p(&json),
        ])
        .ok();
        (std::fs::read_to_string(&path).unwrap(), read_json(&json))
    };
    let (text, results) = csv("a.csv");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "interval_start_ns,interval_end_ns,flow,completed,iops,bandwidth_bytes_per_s,mean_latency_ns,\
         max_latency_ns,mean_device_ns,device_mean_queue_depth,device_max_queue_depth"
    );
    assert_eq!(lines.len(), 1 + 5, "10 ms in 2 ms intervals, one flow: {text}");
    assert!(lines[1].starts_with("0,2000000,reader,"), "{text}");
    assert!(lines[5].starts_with("8000000,10000000,reader,"), "{text}");
    let completed: u64 = lines[1..].iter().map(|l| l.split(',').nth(3).unwrap().parse::<u64>().unwrap()).sum();
    assert_eq!(completed, uint(flow(&results, "reader"), "completed"));
    assert_eq!(uint(&results, "timeseries.interval_ns"), 2_000_000);
    assert_eq!(at(&results, "timeseries.start_ns").as_array().unwrap().len(), 5);
    assert_eq!(csv("b.csv").0, text, "same seed, same bytes");
}

#[test]
fn timeseries_without_an_interval_or_with_a_bad_one_is_one_error_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_file(dir.path(), "s.toml", BASE);
    let csv = dir.path().join("out.csv");
    ullsim(["run", p(&scenario), "--timeseries", p(&csv)]).fails_with(&["--timeseries", "metrics.timeseries_interval"]);
    for bad in ["0", "-1ms", "abc"] {
        let set = format!("metrics.timeseries_interval={bad}");
        ullsim(["run", p(&scenario), "--set", &set, "--timeseries", p(&csv)])
            .fails_with(&["metrics.timeseries_interval"]);
    }
    ullsim(["run", p(&scenario), "--set", "metrics.timeseries_interval=1ns"]).fails_with(&[
        "metrics.timeseries_interval",
        "10000000 intervals",
        "1000000",
    ]);
    assert!(!csv.exists(), "no file is written for a run that failed");
}
