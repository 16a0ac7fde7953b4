//! Bad input gets an error, never a panic: every key of the scenario with odd values, through `--set`.

use std::path::Path;

use proptest::prelude::*;
use ullsim::config::presets::PRESETS;
use ullsim::Scenario;

const BASE: &str = r#"
[run]
duration = "200us"
[device]
preset = "mqsim-mlc"
[device.flash]
blocks_per_plane = 64
pages_per_block = 64
[device.ftl]
overprovisioning = 0.15
[[flow]]
name = "a"
rw = "randrw"
bs = "4k"
iodepth = 4
[[flow]]
name = "b"
rw = "write"
bs = "64k"
rate_iops = 5000
"#;

/// Every key a scenario can set: the device keys of a preset, the flow keys, run/host/metrics keys.
fn keys() -> Vec<String> {
    let mut keys = Vec::new();
    let preset: toml::Table = PRESETS[0].toml.parse().unwrap();
    for (section, table) in &preset {
        for key in table.as_table().unwrap().keys() {
            keys.push(format!("device.{section}.{key}"));
        }
    }
    for key in ullsim::config::scenario::FLOW_KEYS {
        keys.push(format!("flow.a.{key}"));
        keys.push(format!("flow.b.{key}"));
    }
    keys.extend(ullsim::config::HostConfig::keys());
    keys.extend(
        ["run.duration", "run.warmup", "metrics.fairness", "metrics.per_job", "device.preset", "seed"]
            .map(String::from),
    );
    keys
}

const VALUES: &[&str] = &[
    "0",
    "1",
    "-1",
    "3",
    "64",
    "100",
    "65536",
    "4294967297",
    "9223372036854775807",
    "0.5",
    "1e308",
    "-0.0",
    "nan",
    "inf",
    "true",
    "\"\"",
    "\"abc\"",
    "\"4k\"",
    "\"4q\"",
    "\"50%\"",
    "\"150%\"",
    "\"1ms\"",
    "\"zipf:1.2\"",
    "\"zoned:50/50:50/50\"",
    "\"4k/50:64k/50\"",
    "\"randread\"",
    "\"critical\"",
    "\"urgent\"",
    "[1, 2]",
    "{ a = 1 }",
    "\"disksim\"",
    "\"sprinkler\"",
    "\"sprinkler-fairness\"",
    "\"flin\"",
    "\"/nonexistent\"",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn odd_values_give_errors_not_panics(
        picks in prop::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>()), 1..4)
    ) {
        let keys = keys();
        let overrides: Vec<String> =
            picks.iter().map(|(k, v)| format!("{}={}", k.get(&keys), v.get(VALUES))).collect();
        match Scenario::from_toml_str(BASE, "fuzz.toml", Path::new("."), &overrides) {
            Err(e) => {
                let message = e.to_string();
                prop_assert!(message.starts_with("fuzz.toml: "), "message does not name the file: {message}");
            }
            Ok(mut scenario) => {
                // Whatever loads must set up and run (or fail cleanly at setup). Only a short stretch is
                // run: the point is that no value panics, not what a long run shows.
                scenario.run.duration.0 = scenario.run.duration.0.min(2_000_000);
                if scenario.run.warmup.0 >= scenario.run.duration.0 {
                    scenario.run.warmup.0 = 0;
                }
                if let Ok(sim) = ullsim::Simulation::new(&scenario) {
                    let _ = sim.run(&mut |_, _| {});
                }
            }
        }
    }
}

/// One open flow on optane-ull over 100 ms: what the tests below change with `--set`-style overrides.
const ONE_FLOW: &str = r#"
[run]
duration = "100ms"
[device]
preset = "optane-ull"
[[flow]]
name = "r"
rw = "randread"
"#;

/// The error loading `text` with `overrides` gives (a panic if it loads).
fn error_of(text: &str, overrides: &[&str]) -> String {
    let overrides: Vec<String> = overrides.iter().map(|o| o.to_string()).collect();
    match Scenario::from_toml_str(text, "s.toml", Path::new("."), &overrides) {
        Ok(_) => panic!("loads: {overrides:?}"),
        Err(e) => e.to_string(),
    }
}

fn assert_mentions(message: &str, needles: &[&str]) {
    for needle in needles {
        assert!(message.contains(needle), "message should mention {needle:?}: {message}");
    }
}

fn loads(text: &str, overrides: &[&str]) -> bool {
    let overrides: Vec<String> = overrides.iter().map(|o| o.to_string()).collect();
    Scenario::from_toml_str(text, "s.toml", Path::new("."), &overrides).is_ok()
}

#[test]
fn runtime_zero_is_an_error_saying_to_omit_it() {
    // fio reads runtime = 0 as no limit: here it is an error rather than a silent surprise either way.
    for (runtime, other) in [("flow.r.runtime=0", "flow.r.iodepth=1"), ("flow.r.runtime=\"0ms\"", "flow.r.iodepth=1")] {
        let message = error_of(ONE_FLOW, &[other, runtime]);
        assert_mentions(&message, &["key `flow[0].runtime`", "> 0", "omit runtime", "run.duration"]);
    }
    let cpu = "[device]\npreset = \"optane-ull\"\n[[flow]]\nname = \"hog\"\nioengine = \"cpuio\"\nruntime = 0\n";
    assert_mentions(&error_of(cpu, &[]), &["key `flow[0].runtime`", "> 0"]);
}

#[test]
fn a_rate_that_cannot_issue_before_the_flow_stops_is_an_error() {
    // Linear arrivals: the first comes one gap (1 / rate) after the flow's start; at or past its stop the flow
    // never issues.
    for set in [
        &["flow.r.rate_iops=0.5"][..],
        &["flow.r.rate_iops=10"],
        &["flow.r.rate_iops=20", "flow.r.startdelay=\"50ms\""],
        &["flow.r.rate_iops=20", "flow.r.runtime=\"50ms\""],
        &["flow.r.rate_iops=20", "flow.r.runtime=\"50ms\"", "flow.r.number_ios=1"],
    ] {
        let message = error_of(ONE_FLOW, set);
        assert_mentions(&message, &["key `flow[0].rate_iops` (flow \"r\")", "first arrival", "issue no I/O"]);
    }
    assert_mentions(
        &error_of(ONE_FLOW, &["flow.r.rate_iops=0.5"]),
        &["at 0.5 I/Os per second", "comes 2 s after the flow starts", "active for only 100 ms"],
    );
    assert_mentions(
        &error_of(ONE_FLOW, &["flow.r.rate_iops=25", "flow.r.startdelay=\"10ms\"", "flow.r.runtime=\"30ms\""]),
        &["comes 40 ms after", "active for only 30 ms (from startdelay 10 ms until its runtime ends at 40 ms)"],
    );
    // Random arrivals may come early: only fewer than one expected arrival is an error.
    for process in ["\"poisson\"", "\"onoff\"\nburst_factor = 4"] {
        let text = ONE_FLOW.replace("rw = ", &format!("rate_process = {process}\nrw = "));
        let message = error_of(&text, &["flow.r.rate_iops=5"]);
        assert_mentions(&message, &["key `flow[0].rate_iops`", "expects 0.500 arrivals", "fewer than one"]);
        assert!(loads(&text, &["flow.r.rate_iops=10"]), "{process}: one expected arrival is enough");
    }
    // Just enough: the first linear arrival falls before the stop.
    assert!(loads(ONE_FLOW, &["flow.r.rate_iops=10.001"]));
    assert!(loads(ONE_FLOW, &["flow.r.rate_iops=25", "flow.r.startdelay=\"50ms\""]));
    // An app model's rate is the model's: a sparse tenant (stg-1: 3.7 I/Os per second) may issue nothing.
    let app =
        "[run]\nduration = \"100ms\"\n[device]\npreset = \"flin-eval\"\n[[flow]]\nname = \"a\"\napp = \"flin.stg-1\"\n";
    assert!(loads(app, &[]));
}

#[test]
fn an_empty_or_blank_flow_name_is_an_error() {
    for name in ["\"\"", "\"   \"", "\"\\t\""] {
        let message = error_of(ONE_FLOW, &[&format!("flow.r.name={name}")]);
        assert_mentions(&message, &["key `flow[0].name`", "expected a non-empty name"]);
    }
}

#[test]
fn durations_and_sizes_beyond_64_bits_are_errors_naming_the_key_and_the_largest() {
    const LONGEST: &str = "at most 18446744073.709551615 s";
    for (set, key, expected) in [
        ("run.duration=\"18446744073.709551616s\"", "run.duration", LONGEST),
        ("run.duration=\"18446744074s\"", "run.duration", LONGEST),
        ("run.duration=\"307445734.6m\"", "run.duration", LONGEST),
        ("run.duration=18446744074", "run.duration", LONGEST),
        ("run.duration=1e300", "run.duration", LONGEST),
        ("flow.r.runtime=18446744074", "flow[0].runtime", LONGEST),
        ("flow.r.thinktime=18446744073709552", "flow[0].thinktime", LONGEST),
        ("device.flash.read_ns=\"18446744073709551616ns\"", "device.flash.read_ns", LONGEST),
        ("flow.r.size=\"16777216TiB\"", "flow[0].size", "at most 18446744073709551615 bytes"),
        ("flow.r.bs=\"18446744073709551616\"", "flow[0].bs", "at most 18446744073709551615 bytes"),
    ] {
        assert_mentions(&error_of(ONE_FLOW, &[set]), &[&format!("key `{key}`"), expected]);
    }
    // The exact limits are exact: 2^64 - 1 ns is a duration (though not a run's), 2^64 - 1 bytes a size.
    assert_mentions(
        &error_of(ONE_FLOW, &["run.duration=\"18446744073.709551615s\""]),
        &["key `run.duration`", "at most a year (31536000 s)", "18446744073.71 s"],
    );
    assert!(loads(ONE_FLOW, &["flow.r.runtime=\"18446744073.709551615s\""]));
    assert_mentions(&error_of(ONE_FLOW, &["flow.r.size=\"18446744073709551615\""]), &["flow[0].size", "capacity"]);
    // A simulated year is the longest run.
    assert!(loads(ONE_FLOW, &["run.duration=\"525600m\""]));
    assert_mentions(&error_of(ONE_FLOW, &["run.duration=\"525601m\""]), &["key `run.duration`", "at most a year"]);
}

#[test]
fn a_value_of_another_type_or_an_unknown_word_names_it_and_every_word() {
    const RW: &str = r#"expected one of "read", "write", "randread", "randwrite", "readwrite", "rw", "randrw""#;
    for (set, key, found, expected) in [
        ("flow.r.rw=0", "flow[0].rw", "found 0 (an integer)", RW),
        ("flow.r.rw=\"RandRead\"", "flow[0].rw", "found \"RandRead\"", RW),
        ("flow.r.rw=[1]", "flow[0].rw", "found an array", RW),
        ("flow.r.rw={ a = 1 }", "flow[0].rw", "found a table", RW),
        ("flow.r.class=true", "flow[0].class", "found true (a boolean)", r#"expected one of "critical", "normal""#),
        ("flow.r.prio=1.5", "flow[0].prio", "found 1.5 (a float)", r#""urgent", "high", "medium", "low""#),
        ("flow.r.prioclass=0", "flow[0].prioclass", "found 0 (an integer)", r#""rt", "be", "idle""#),
        ("flow.r.format=3", "flow[0].format", "found 3", r#""disksim", "msr", "spc", "fio-iolog", "blkparse""#),
        ("flow.r.ioengine=1", "flow[0].ioengine", "found 1", r#""psync", "pvsync2", "libaio", "io_uring", "cpuio""#),
        ("flow.r.rate_process=2", "flow[0].rate_process", "found 2", r#""linear", "poisson", "onoff""#),
        ("flow.r.cpus_allowed_policy=0", "flow[0].cpus_allowed_policy", "found 0", r#""shared", "split""#),
        ("device.ftl.mapping=0", "device.ftl.mapping", "found 0", r#""page", "in-place""#),
        ("device.ftl.precondition=false", "device.ftl.precondition", "found false", r#""none", "sequential""#),
        ("device.cache.write_buffer_sharing=1", "device.cache.write_buffer_sharing", "found 1", r#""per-flow""#),
        ("device.tsu.flin_stage3_wait=1", "device.tsu.flin_stage3_wait", "found 1", r#""queue", "slot""#),
    ] {
        assert_mentions(&error_of(ONE_FLOW, &[set]), &[&format!("key `{key}`: {found}"), expected]);
    }
}

#[test]
fn an_error_at_a_key_a_set_gave_names_that_set() {
    // A type error, an unknown key and a check after loading, each at the key the --set gave.
    for (set, rest) in [
        ("flow.r.iodepth=abc", "key `flow[0].iodepth`: invalid type: string \"abc\", expected a whole number"),
        ("flow.0.queue_depth=4", "key `flow[0].queue_depth`: unknown field"),
        ("flow.r.startdelay=1", "key `flow[0].startdelay` (flow \"r\"): the flow would start after run.duration"),
        ("device.preset=nope", "key `device.preset`: unknown preset \"nope\""),
        ("run.duration=\"1 parsec\"", "key `run.duration`: expected a duration like"),
    ] {
        let message = error_of(ONE_FLOW, &[set]);
        assert!(message.starts_with(&format!("s.toml: --set {set}: {rest}")), "{message}");
    }
    // The built-in default scenario, as `ullsim run --set flow.reader.iodepth=abc` loads it.
    let message = Scenario::builtin_default(&["flow.reader.iodepth=abc".into()]).unwrap_err().to_string();
    assert!(message.contains("--set flow.reader.iodepth=abc: key `flow[0].iodepth`: invalid type"), "{message}");
    // Of two --set of the key, the later (which wins) is named; a --set of a whole table covers its keys.
    let message = error_of(ONE_FLOW, &["flow.r.iodepth=2", "flow.r.iodepth=-2"]);
    assert!(message.starts_with("s.toml: --set flow.r.iodepth=-2: key `flow[0].iodepth`"), "{message}");
    let message = error_of(ONE_FLOW, &["device.flash={ read_ns = \"x\" }"]);
    assert!(message.starts_with("s.toml: --set device.flash={ read_ns = \"x\" }: key `device.flash.read_ns`"));
    // An error the file made is the file's, even beside a --set of another key.
    let message = error_of(&ONE_FLOW.replace("randread", "randrd"), &["flow.r.iodepth=2"]);
    assert!(message.starts_with("s.toml: key `flow[0].rw`: found \"randrd\""), "{message}");
}

#[test]
fn huge_input_is_quoted_short() {
    let huge = "x".repeat(10 << 20);
    for (text, needles) in [
        // An invalid TOML line of 10 MB: a window of it around the error's column.
        (format!("name = \"a\"\n{huge} = = 1\n"), &["invalid TOML at line 2, column 1048576", "xxx = = 1"][..]),
        (format!("{ONE_FLOW}rwmixread = {huge}\n"), &["invalid TOML at line 9"]),
        // Values and keys serde and the checks quote.
        (ONE_FLOW.replace("randread", &huge), &["key `flow[0].rw`: found \"xxxx"]),
        (
            ONE_FLOW.replace("\"r\"", &format!("\"{huge}\"")) + "[[flow]]\nname = \"" + &huge + "\"\nrw = \"read\"\n",
            &["key `flow[1].name`", "is used twice"],
        ),
        (format!("{ONE_FLOW}{huge} = 1\n"), &["unknown field `xxx"]),
        (ONE_FLOW.replace("optane-ull", &huge), &["unknown preset \"xxx"]),
        (ONE_FLOW.replace("rw = \"randread\"", &format!("rw = \"read\"\nbs = \"{huge}\"")), &["flow[0].bs"]),
        (ONE_FLOW.replace("\"100ms\"", &format!("\"{huge}\"")), &["run.duration"]),
    ] {
        let message = error_of(&text, &[]);
        assert!(message.len() < 1000, "{} bytes: {}...", message.len(), message.chars().take(1000).collect::<String>());
        assert_mentions(&message, needles);
    }
}

#[test]
fn gc_thresholds_beyond_one_are_errors_or_ignored_never_overflows() {
    // A page-mapped drive names the key; an in-place drive (no GC) ignores the thresholds, and sets up.
    for value in ["inf", "1e308", "2"] {
        let set = format!("device.ftl.gc_hard_threshold={value}");
        assert_mentions(&error_of(BASE, &[&set]), &["key `device.ftl.gc_hard_threshold`"]);
        let set = [set.clone()];
        let in_place = Scenario::from_toml_str(ONE_FLOW, "s.toml", Path::new("."), &set).unwrap();
        ullsim::Simulation::new(&in_place).unwrap();
    }
}
