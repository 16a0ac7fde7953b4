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
    keys.extend(["run.duration", "run.warmup", "metrics.fairness", "device.preset", "seed"].map(String::from));
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
