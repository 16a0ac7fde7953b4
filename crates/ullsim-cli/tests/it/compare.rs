//! End-to-end tests of `ullsim compare`: the product of several `--vary`, its order, determinism, the table,
//! bad `--vary` inputs, the cap on variants, a key both varied and set, and the progress bar on a terminal.
//! Every variant is a 5 ms run on optane-ull, so each test takes well under a second.

use std::path::PathBuf;
use std::process::Output;

use serde_json::Value;

/// Two closed-loop flows on a ULL drive, run for 5 ms of simulated time.
const SCENARIO: &str = r#"
name = "compare-test"

[run]
duration = "5ms"

[device]
preset = "optane-ull"

[[flow]]
name = "reader"
rw = "randread"
bs = "4k"
iodepth = 1

[[flow]]
name = "writer"
rw = "randwrite"
bs = "4k"
iodepth = 2
"#;

/// A temporary directory holding `scenario.toml` (removed on drop).
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().expect("cannot create a temporary directory");
        std::fs::write(dir.path().join("scenario.toml"), SCENARIO).expect("cannot write the scenario");
        Fixture { dir }
    }

    fn scenario(&self) -> String {
        self.file("scenario.toml").display().to_string()
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `ullsim compare SCENARIO ARGS...`.
    fn compare(&self, args: &[&str]) -> Output {
        std::process::Command::new(env!("CARGO_BIN_EXE_ullsim"))
            .arg("compare")
            .arg(self.scenario())
            .args(args)
            .env_remove("RUST_BACKTRACE")
            .output()
            .expect("cannot start the ullsim binary")
    }

    /// `ullsim compare SCENARIO ARGS... --json -`, which must succeed; returns stdout (only JSON).
    fn json_bytes(&self, args: &[&str]) -> Vec<u8> {
        let out = self.compare(&[args, &["--json", "-"]].concat());
        assert!(out.status.success(), "compare failed: {}", show(&out));
        out.stdout
    }

    fn json(&self, args: &[&str]) -> Value {
        let bytes = self.json_bytes(args);
        serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("stdout is not only JSON ({e}): {bytes:?}"))
    }
}

fn show(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The named flow's `field` in one variant's results.
fn flow_field(variant: &Value, flow: &str, field: &str) -> f64 {
    let flows = variant["results"]["flows"].as_array().expect("results.flows is an array");
    let f = flows.iter().find(|f| f["name"] == flow).unwrap_or_else(|| panic!("no flow {flow} in {variant}"));
    f.pointer(field).and_then(Value::as_f64).unwrap_or_else(|| panic!("flow {flow} has no number at {field}"))
}

fn variants(report: &Value) -> &Vec<Value> {
    report["variants"].as_array().expect("`variants` is an array")
}

#[test]
fn two_vary_keys_run_their_product_in_order() {
    let fx = Fixture::new();
    let bytes = fx.json_bytes(&[
        "--vary",
        "flow.reader.iodepth=1,4",
        "--vary",
        "device.flash.read_ns=1300, 5000",
        "--seed",
        "3",
    ]);
    let text = String::from_utf8(bytes).unwrap();
    let report: Value = serde_json::from_str(&text).unwrap();
    // Each variant's overrides keep --vary order (serde_json's Value would sort them, so look at the text).
    let overrides: Vec<&str> = text.split("\"overrides\": {").skip(1).map(|t| &t[..t.find('}').unwrap()]).collect();
    for o in &overrides {
        let (depth, read) = (o.find("\"flow.reader.iodepth\"").unwrap(), o.find("\"device.flash.read_ns\"").unwrap());
        assert!(depth < read, "overrides out of --vary order: {o}");
    }
    assert_eq!(report["scenario"], "compare-test");
    assert_eq!(
        report["vary"],
        serde_json::json!([
            {"key": "flow.reader.iodepth", "values": ["1", "4"]},
            {"key": "device.flash.read_ns", "values": ["1300", "5000"]},
        ])
    );
    let vs = variants(&report);
    // The first --vary varies slowest.
    let expected = [("1", "1300"), ("1", "5000"), ("4", "1300"), ("4", "5000")];
    assert_eq!(vs.len(), expected.len(), "2 x 2 values should give 4 variants");
    assert_eq!(overrides.len(), vs.len());
    for (v, (depth, read_ns)) in vs.iter().zip(expected) {
        assert_eq!(v["overrides"].as_object().map(|o| o.len()), Some(2), "{}", v["overrides"]);
        assert_eq!(v["overrides"]["flow.reader.iodepth"], depth);
        assert_eq!(v["overrides"]["device.flash.read_ns"], read_ns);
        assert_eq!(v["results"]["scenario"]["seed"], 3, "--seed applies to every variant");
        assert_eq!(v["results"]["scenario"]["preset"], "optane-ull");
    }
    let iops = |i: usize| flow_field(&vs[i], "reader", "/iops");
    let mean = |i: usize| flow_field(&vs[i], "reader", "/latency_ns/mean");
    // A deeper queue raises a closed-loop reader's IOPS at either media speed...
    assert!(iops(2) > 2.5 * iops(0), "iodepth 4 gave {} IOPS, iodepth 1 {}", iops(2), iops(0));
    assert!(iops(3) > 2.5 * iops(1), "iodepth 4 gave {} IOPS, iodepth 1 {}", iops(3), iops(1));
    // ...and slower media reads raise its latency: at depth 1 by about the 3.7 us added; at depth 4 by less,
    // since the reader's own CPU (one task submitting and reaping four I/Os) hides part of it.
    let added = mean(1) - mean(0);
    assert!((2_500.0..=5_000.0).contains(&added), "read_ns 1300 -> 5000 added {added} ns to the mean at depth 1");
    let added = mean(3) - mean(2);
    assert!((500.0..=5_000.0).contains(&added), "read_ns 1300 -> 5000 added {added} ns to the mean at depth 4");
}

#[test]
fn same_inputs_give_identical_json_matching_ullsim_run() {
    let fx = Fixture::new();
    let args = ["--vary", "flow.reader.iodepth=1,2", "--vary", "flow.writer.iodepth=1,3", "--set", "seed=5"];
    let first = fx.json_bytes(&args);
    let second = fx.json_bytes(&args);
    assert!(first == second, "two runs of the same comparison gave different JSON");
    // --json FILE writes the same bytes as --json -.
    let path = fx.file("compare.json");
    let out = fx.compare(&[&args[..], &["--quiet", "--json", path.to_str().unwrap()]].concat());
    assert!(out.status.success() && out.stdout.is_empty(), "--quiet --json FILE: {}", show(&out));
    assert!(std::fs::read(&path).unwrap() == first, "--json FILE and --json - differ");
    // Each variant's results are exactly what `ullsim run` gives with the same overrides.
    let report: Value = serde_json::from_slice(&first).unwrap();
    let last = &variants(&report)[3];
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_ullsim"))
        .args(["run", &fx.scenario(), "--set", "seed=5", "--set", "flow.reader.iodepth=2"])
        .args(["--set", "flow.writer.iodepth=3", "--json", "-"])
        .output()
        .unwrap();
    assert!(run.status.success(), "ullsim run failed: {}", show(&run));
    let alone: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(last["results"], alone, "the last variant differs from `ullsim run` with its overrides");
}

#[test]
fn table_has_one_row_per_variant_and_flow_in_order() {
    let fx = Fixture::new();
    let path = fx.file("table.json");
    let out = fx.compare(&["--vary", "flow.reader.iodepth=1,4,2", "--json", path.to_str().unwrap()]);
    assert!(out.status.success(), "compare failed: {}", show(&out));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let mut lines = stdout.lines();
    let header = lines.next().unwrap();
    assert!(header.contains("compare-test") && header.contains("flow.reader.iodepth"), "header: {header}");
    let columns = lines.find(|l| !l.is_empty()).unwrap();
    let names: Vec<&str> = columns.split_whitespace().collect();
    assert_eq!(names, ["variant", "flow", "IOPS", "MB/s", "mean", "us", "p50", "p99", "p99.9", "max"]);
    let rows: Vec<(&str, &str)> = lines
        .map(|l| {
            let mut cells = l.split_whitespace();
            (cells.next().unwrap(), cells.next().unwrap())
        })
        .collect();
    let mut expected = Vec::new();
    for depth in ["1", "4", "2"] {
        for flow in ["reader", "writer"] {
            expected.push((format!("flow.reader.iodepth={depth}"), flow));
        }
    }
    let expected: Vec<(&str, &str)> = expected.iter().map(|(v, f)| (v.as_str(), *f)).collect();
    assert_eq!(rows, expected, "table rows out of order:\n{stdout}");
    // The file was written too, with the same three variants.
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(variants(&report).len(), 3);
}

#[test]
fn commas_inside_quotes_and_braces_do_not_split_values() {
    let fx = Fixture::new();
    // A quoted string holding a comma, then a bare word.
    let report = fx.json(&["--vary", r#"name="a, b",plain"#]);
    let names: Vec<&Value> = variants(&report).iter().map(|v| &v["results"]["scenario"]["name"]).collect();
    assert_eq!(names, ["a, b", "plain"]);
    assert_eq!(variants(&report)[0]["overrides"]["name"], r#""a, b""#, "overrides keep the text as given");
    // Inline tables holding commas: the whole [run] table, two ways.
    let report = fx.json(&["--vary", r#"run={ duration = "5ms", warmup = "1ms" },{ duration = "4ms" }"#]);
    let windows: Vec<(f64, f64)> = variants(&report)
        .iter()
        .map(|v| {
            let w = &v["results"]["window"];
            (w["start_ns"].as_f64().unwrap(), w["end_ns"].as_f64().unwrap())
        })
        .collect();
    assert_eq!(windows, [(1e6, 5e6), (0.0, 4e6)]);
}

/// Asserts a clean failure: exit code 1, nothing on stdout, one `error: ` line holding every needle.
fn assert_fails_with(out: &Output, needles: &[&str]) {
    assert_eq!(out.status.code(), Some(1), "expected exit code 1: {}", show(out));
    assert!(out.stdout.is_empty(), "a failed comparison printed on stdout: {}", show(out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "bad input made ullsim panic: {}", show(out));
    assert_eq!(stderr.lines().count(), 1, "expected one error line: {}", show(out));
    assert!(stderr.starts_with("error: "), "stderr should start with \"error: \": {}", show(out));
    for needle in needles {
        assert!(stderr.contains(needle), "stderr should mention {needle:?}: {}", show(out));
    }
}

#[test]
fn bad_vary_inputs_fail_with_one_line_and_no_output() {
    let fx = Fixture::new();
    let json = fx.file("never.json");
    let cases: [(&[&str], &[&str]); 7] = [
        (&["--vary", "flow.reader.iodepth"], &["--vary flow.reader.iodepth:", "no `=`", "KEY=V1,V2"]),
        (&["--vary", "=1,2"], &["--vary =1,2:", "empty key"]),
        (&["--vary", "flow.reader.iodepth="], &["--vary flow.reader.iodepth=:", "no values"]),
        (
            &["--vary", "flow.reader.iodepth=1,,4"],
            &["--vary flow.reader.iodepth=1,,4:", r#"value 2 of 3 (between "1" and "4") is empty"#],
        ),
        (&["--vary", "flow.reader.iodepth=[1,2"], &["--vary flow.reader.iodepth=[1,2:", "missing `]`"]),
        // A value that fails to load names the variant; the valid variant before it never runs.
        (
            &["--vary", "flow.reader.iodepth=1", "--vary", "device.preset=optane-ull,nosuch"],
            &["--vary flow.reader.iodepth=1 device.preset=nosuch:", "unknown preset \"nosuch\""],
        ),
        (&["--vary", "flow.nosuch.iodepth=2"], &["--vary flow.nosuch.iodepth=2:", "no flow named \"nosuch\""]),
    ];
    for (args, needles) in cases {
        let out = fx.compare(&[args, &["--json", json.to_str().unwrap()]].concat());
        assert_fails_with(&out, needles);
        assert!(!json.exists(), "{args:?} failed but wrote {}", json.display());
    }
    let out = fx.compare(&["--vary", "flow.reader.iodepth=1", "--vary", "flow.reader.iodepth=2"]);
    assert_fails_with(&out, &["--vary flow.reader.iodepth:", "already varied"]);
}

#[test]
fn vary_is_required() {
    let out = Fixture::new().compare(&["--set", "seed=2"]);
    assert!(!out.status.success() && out.stdout.is_empty(), "compare without --vary: {}", show(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--vary"), "{}", show(&out));
}

#[test]
fn bad_set_is_reported_once_without_naming_a_variant() {
    let out = Fixture::new().compare(&["--vary", "flow.reader.iodepth=1,2", "--set", "flow.reader.nokey=1"]);
    assert_fails_with(&out, &["scenario.toml", "nokey"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("--vary"), "a bad --set was blamed on a variant: {stderr}");
}

/// `compare --timeseries FILE` writes every variant's series, labelled by a leading `variant` column.
#[test]
fn compare_timeseries_labels_each_variants_rows() {
    let fx = Fixture::new();
    let csv = fx.file("series.csv");
    let out = fx.compare(&[
        "--vary",
        "flow.reader.iodepth=1,4",
        "--set",
        "metrics.timeseries_interval=1ms",
        "--timeseries",
        csv.to_str().unwrap(),
        "-q",
    ]);
    assert!(out.status.success(), "compare failed: {}", show(&out));
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("variant,interval_start_ns,interval_end_ns,flow,"), "{text}");
    assert_eq!(lines.len(), 1 + 2 * 5 * 2, "2 variants x 5 intervals x 2 flows: {text}");
    assert!(lines[1].starts_with("flow.reader.iodepth=1,0,1000000,reader,"), "{text}");
    assert!(lines.last().unwrap().starts_with("flow.reader.iodepth=4,4000000,5000000,writer,"), "{text}");
}

#[test]
fn a_flow_with_flushes_gets_its_flush_row_in_every_variant() {
    let fx = Fixture::new();
    let out =
        fx.compare(&["--set", "flow.writer.flush_every=1", "--vary", "device.cache.power_loss_protection=true,false"]);
    assert!(out.status.success(), "{}", show(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let flush_rows: Vec<&str> = text.lines().filter(|l| l.contains("(flushes)")).collect();
    assert_eq!(flush_rows.len(), 2, "{text}");
    assert!(flush_rows[0].starts_with("device.cache.power_loss_protection=true"), "{text}");
}

#[test]
fn more_variants_than_the_maximum_is_one_error_naming_the_count() {
    let fx = Fixture::new();
    let json = fx.file("never.json");
    let values = |n: u32| (1..=n).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    let (reader, writer) =
        (format!("flow.reader.iodepth={}", values(101)), format!("flow.writer.iodepth={}", values(100)));
    let out = fx.compare(&["--vary", &reader, "--vary", &writer, "--json", json.to_str().unwrap()]);
    assert_fails_with(&out, &["--vary: 101 x 100 values make 10100 variants", "the maximum is 10000"]);
    assert!(!json.exists(), "a refused comparison wrote {}", json.display());
    // A product past any integer is refused as fast, without building it.
    let huge: Vec<String> = (0..12).map(|i| format!("--vary=run.k{i}={}", values(1000))).collect();
    let huge: Vec<&str> = huge.iter().map(String::as_str).collect();
    assert_fails_with(&fx.compare(&huge), &["1000 x 1000", "make 1000000000000000000000000000000000000 variants"]);
    // The maximum itself is documented where --help and docs/output.md say it.
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_ullsim")).args(["compare", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("at most 10000 variants"), "{}", show(&help));
    let docs = include_str!("../../../../docs/output.md");
    assert!(docs.contains("**At most 10,000 variants** (`MAX_VARIANTS`"), "docs/output.md lost the maximum");
}

#[test]
fn a_key_both_varied_and_set_is_one_error_naming_it() {
    let fx = Fixture::new();
    let out = fx.compare(&["--vary", "flow.reader.iodepth=1,2", "--set", "flow.reader.iodepth=4"]);
    assert_fails_with(
        &out,
        &[
            "--vary flow.reader.iodepth=1,2:",
            "flow.reader.iodepth is both varied (--vary) and fixed (--set flow.reader.iodepth=4)",
        ],
    );
    // A varied table would replace a key set inside it just as silently.
    let out = fx.compare(&["--vary", r#"run={ duration = "5ms" },{ duration = "4ms" }"#, "--set", "run.warmup=1ms"]);
    assert_fails_with(&out, &["run is both varied (--vary) and fixed (--set run.warmup=1ms, a key inside it)"]);
    // A varied key inside a set table overrides that one key of it: fine.
    let report = fx.json(&["--set", r#"run={ duration = "4ms" }"#, "--vary", "run.warmup=0ms,1ms"]);
    let starts: Vec<&Value> = variants(&report).iter().map(|v| &v["results"]["window"]["start_ns"]).collect();
    assert_eq!(starts, [0, 1_000_000]);
}

/// `compare ARGS... -q` in a terminal (util-linux's `script` gives it one) with the bar due at once; what the
/// terminal showed.
fn compare_in_a_terminal(fx: &Fixture, args: &[&str]) -> String {
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let mut command = vec![quote(env!("CARGO_BIN_EXE_ullsim")), "compare".into(), quote(&fx.scenario())];
    command.extend(args.iter().map(|a| quote(a)));
    command.push("-q".into());
    let out = std::process::Command::new("script")
        .args(["-qec", &command.join(" "), "/dev/null"])
        .env("ULLSIM_PROGRESS_DELAY_MS", "0")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("cannot start `script` (util-linux) to give ullsim a terminal");
    assert!(out.status.success(), "compare in a terminal failed: {}", show(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn progress_is_shown_on_a_terminal_only() {
    let fx = Fixture::new();
    let terminal = compare_in_a_terminal(&fx, &["--vary", "flow.reader.iodepth=1,2,3"]);
    for needle in ["/3 variants checked", "3/3 variants run"] {
        assert!(terminal.contains(needle), "no {needle:?} on the terminal: {terminal:?}");
    }
    // Standard error a pipe: no bar, however soon it is due.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ullsim"))
        .args(["compare", &fx.scenario(), "--vary", "flow.reader.iodepth=1,2,3", "-q"])
        .env("ULLSIM_PROGRESS_DELAY_MS", "0")
        .output()
        .unwrap();
    assert!(out.status.success() && out.stderr.is_empty() && out.stdout.is_empty(), "{}", show(&out));
    // A delay that is not a number is an error naming the variable.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ullsim"))
        .args(["compare", &fx.scenario(), "--vary", "flow.reader.iodepth=1"])
        .env("ULLSIM_PROGRESS_DELAY_MS", "soon")
        .output()
        .unwrap();
    assert_fails_with(&out, &["ULLSIM_PROGRESS_DELAY_MS=soon", "milliseconds"]);
}
