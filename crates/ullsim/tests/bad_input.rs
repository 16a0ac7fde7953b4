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
