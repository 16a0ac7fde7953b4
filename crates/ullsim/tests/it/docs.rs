//! Keeps docs/scenarios.md honest: every device key of every preset, every flow key and every other scenario
//! key must be documented; the preset columns of the device tables must hold the presets' actual values; and
//! the worked example and every scenario in scenarios/ must load from files inside the repository.

use std::path::Path;

use ullsim::config::presets::PRESETS;
use ullsim::config::scenario::FLOW_KEYS;
use ullsim::Scenario;

const DOC: &str = include_str!("../../../../docs/scenarios.md");

/// The other keys of a scenario (ScenarioFile, RunConfig, MetricsConfig, HostConfig in scenario.rs).
const OTHER_KEYS: &[&str] = &[
    "name",
    "description",
    "seed",
    "run.duration",
    "run.warmup",
    "run.check_invariants",
    "run.map_memory_limit",
    "metrics.fairness",
    "metrics.timeseries_interval",
    "metrics.per_job",
    "device.preset",
    "device.count",
    "drives.nvmeN",
    "md.level",
    "md.devices",
    "md.chunk",
];

/// Every `section.key` of a preset's TOML, with its value.
fn preset_keys(preset: &ullsim::config::presets::Preset) -> Vec<(String, toml::Value)> {
    // A preset that names a `base` is that base with its own keys over it.
    let table = ullsim::config::builtin::resolved(PRESETS, preset).expect("presets resolve");
    let mut keys = Vec::new();
    for (section, value) in table {
        let toml::Value::Table(inner) = value else {
            panic!("preset key `{section}` is not in a [section]");
        };
        for (key, value) in inner {
            keys.push((format!("{section}.{key}"), value));
        }
    }
    keys
}

/// The cells of the doc's table row for `key` (the row whose first cell is `key` in backticks).
fn row(key: &str) -> Option<Vec<&'static str>> {
    let start = format!("| `{key}` |");
    let line = DOC.lines().find(|l| l.starts_with(&start))?;
    Some(line.trim().trim_matches('|').split('|').map(str::trim).collect())
}

/// Column index of each preset in the table containing the row for `key`: from that table's header row.
fn preset_columns(key: &str) -> Vec<(&'static str, usize)> {
    let start = format!("| `{key}` |");
    let lines: Vec<&str> = DOC.lines().collect();
    let at = lines.iter().position(|l| l.starts_with(&start)).expect("row exists");
    let header = lines[..at].iter().rev().find(|l| !l.starts_with("| `") && !l.starts_with("|---")).expect("header");
    let cells: Vec<&str> = header.trim().trim_matches('|').split('|').map(str::trim).collect();
    PRESETS
        .iter()
        .map(|p| {
            let column = cells
                .iter()
                .position(|c| *c == p.name)
                .unwrap_or_else(|| panic!("the table holding `{key}` has no column for preset {}", p.name));
            (p.name, column)
        })
        .collect()
}

/// A documented value (as TOML text, optionally in backticks) equals the preset's value; numbers compare as
/// numbers, so `333` and `333.0` are the same.
fn same_value(documented: &str, actual: &toml::Value) -> bool {
    let text = documented.trim().trim_matches('`');
    let Ok(mut parsed) = format!("v = {text}").parse::<toml::Table>() else { return false };
    let documented = parsed.remove("v").expect("parsed");
    let number = |v: &toml::Value| match v {
        toml::Value::Integer(i) => Some(*i as f64),
        toml::Value::Float(f) => Some(*f),
        _ => None,
    };
    match (number(&documented), number(actual)) {
        (Some(a), Some(b)) => a == b,
        _ => &documented == actual,
    }
}

#[test]
fn every_preset_key_is_documented_with_each_presets_value() {
    let mut problems = Vec::new();
    for preset in PRESETS {
        for (key, value) in preset_keys(preset) {
            let full = format!("device.{key}");
            if !DOC.contains(&format!("`{full}`")) {
                problems.push(format!("`{full}` (preset {}) is not mentioned", preset.name));
                continue;
            }
            let Some(cells) = row(&full) else {
                problems.push(format!("`{full}` has no table row starting with | `{full}` |"));
                continue;
            };
            let column = preset_columns(&full).into_iter().find(|(name, _)| *name == preset.name).expect("column").1;
            match cells.get(column) {
                Some(cell) if same_value(cell, &value) => {}
                Some(cell) => {
                    problems.push(format!("`{full}`: doc says {cell} for {}, preset has {value}", preset.name))
                }
                None => problems.push(format!("`{full}`: row has no cell for preset {}", preset.name)),
            }
        }
    }
    assert!(problems.is_empty(), "docs/scenarios.md is out of date:\n{}", problems.join("\n"));
}

#[test]
fn documented_device_keys_exist() {
    let known: Vec<String> = PRESETS.iter().flat_map(preset_keys).map(|(k, _)| format!("device.{k}")).collect();
    let stale: Vec<&str> = DOC
        .lines()
        .filter_map(|l| l.strip_prefix("| `device."))
        .filter_map(|rest| rest.split('`').next())
        .filter(|k| !known.iter().any(|known| known == &format!("device.{k}")))
        .collect();
    assert!(stale.is_empty(), "docs/scenarios.md has rows for device keys no preset has: {stale:?}");
}

#[test]
fn every_flow_key_and_scenario_key_is_documented() {
    let missing: Vec<&str> = FLOW_KEYS.iter().copied().filter(|k| row(k).is_none()).collect();
    assert!(missing.is_empty(), "flow keys without a table row (| `key` |) in docs/scenarios.md: {missing:?}");
    let missing: Vec<&str> = OTHER_KEYS.iter().copied().filter(|k| !DOC.contains(&format!("`{k}`"))).collect();
    assert!(missing.is_empty(), "scenario keys not mentioned in docs/scenarios.md: {missing:?}");
    let host_keys = ullsim::config::HostConfig::keys();
    let missing: Vec<&String> = host_keys.iter().filter(|k| row(k).is_none()).collect();
    assert!(missing.is_empty(), "host keys without a table row (| `key` |) in docs/scenarios.md: {missing:?}");
}

#[test]
fn flow_key_list_matches_the_loader() {
    // An unknown key's error message lists every field serde accepts: compare with FLOW_KEYS.
    let text = "[device]\npreset = \"optane-ull\"\n[[flow]]\nname = \"f\"\nrw = \"read\"\nnot_a_key = 1\n";
    let message = Scenario::from_toml_str(text, "t", Path::new("."), &[]).expect_err("unknown key").to_string();
    let listed = message.split("expected one of ").nth(1).unwrap_or_else(|| panic!("unexpected message: {message}"));
    let fields: Vec<&str> = listed.split(", ").map(|f| f.trim().trim_matches('`')).collect();
    assert_eq!(fields, FLOW_KEYS, "FlowSpec's fields changed: update FLOW_KEYS and docs/scenarios.md");
}

#[test]
fn worked_example_loads() {
    let marker = DOC.find("<!-- worked-example").expect("docs/scenarios.md marks its worked example");
    let after = &DOC[marker..];
    let start = after.find("```toml\n").expect("a toml block follows the marker") + "```toml\n".len();
    let block = &after[start..];
    let text = &block[..block.find("```").expect("the block ends")];
    let scenario = Scenario::from_toml_str(text, "worked example", Path::new("."), &[])
        .unwrap_or_else(|e| panic!("the worked example in docs/scenarios.md does not load: {e}"));
    assert_eq!(scenario.flows.len(), 3);
}

#[test]
fn every_app_model_is_documented_with_its_keys() {
    use ullsim::workload::app::{self, flin};
    let mut problems = Vec::new();
    for name in app::names() {
        let model = app::find(&name).expect("listed names resolve");
        let Some(cells) = row(&name) else {
            problems.push(format!("`{name}` has no table row starting with | `{name}` |"));
            continue;
        };
        let mut expected = vec![
            (7, model.rwmixread.to_string()),
            (8, format!("`\"{}\"`", model.bssplit)),
            (9, model.rate_iops.map_or("closed loop".into(), |rate| format!("{rate:.1}"))),
        ];
        if let Some(p) = model.percentage_random {
            expected.push((10, p.to_string()));
        }
        for (key, cpu) in [("thinktime_spin", model.thinktime_spin), ("response_cpu", model.response_cpu)] {
            if let Some(cpu) = cpu {
                expected.push((11, format!("`{key}` {:.3}", cpu.0 as f64 / 1e3)));
            }
        }
        for (column, want) in expected {
            if cells.get(column) != Some(&want.as_str()) {
                problems.push(format!("`{name}`: column {column} says {:?}, the model has {want}", cells.get(column)));
            }
        }
        if let Some(t) = flin::TABLE2.iter().find(|t| format!("flin.{}", t.name) == name) {
            let class = if t.high_interference { "High" } else { "Low" };
            if cells.get(6) != Some(&class) {
                problems.push(format!("`{name}`: interference column says {:?}, TABLE2 has {class}", cells.get(6)));
            }
        }
    }
    assert!(problems.is_empty(), "docs/scenarios.md's app table is out of date:\n{}", problems.join("\n"));
}

/// Every scenario file under `dir`, recursively, sorted.
fn scenario_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            files.extend(scenario_files(&path));
        } else if path.extension().is_some_and(|e| e == "toml") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// A fresh clone holds everything its scenarios need: each one loads (which opens its traces) and names no
/// file outside the repository.
#[test]
fn every_scenario_loads_from_files_inside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root");
    let files = scenario_files(&root.join("scenarios"));
    assert!(files.len() >= 15, "found only {} scenarios", files.len());
    for path in files {
        let scenario = Scenario::load(&path, &[]).unwrap_or_else(|e| panic!("{e}"));
        for flow in scenario.flows.iter().filter_map(|f| f.trace.as_ref()) {
            let trace = scenario.base_dir.join(flow).canonicalize().unwrap_or_else(|e| panic!("{e}"));
            assert!(
                trace.starts_with(&root),
                "{}: trace {} is outside the repository",
                path.display(),
                trace.display()
            );
        }
    }
}

#[test]
fn output_md_names_the_current_results_schema_version() {
    let output = include_str!("../../../../docs/output.md");
    let version = ullsim::sim::RESULTS_SCHEMA_VERSION;
    for said in [format!("currently `{version}`"), format!("currently **{version}**")] {
        assert!(output.contains(&said), "docs/output.md should say \"{said}\" (RESULTS_SCHEMA_VERSION)");
    }
}

/// docs/calibration.md's table of what a calibration fits has a row for every parameter the fit has, in
/// the fit's order (keys under `device.` without it).
#[test]
fn every_fitted_parameter_has_a_row_in_the_calibration_guide_in_order() {
    let guide = include_str!("../../../../docs/calibration.md");
    let mut last = 0;
    for knob in ullsim::calibrate::knobs::KNOBS {
        let name = knob.key.strip_prefix("device.").unwrap_or(knob.key);
        let row = format!("\n| `{name}`");
        let at = guide.find(&row).unwrap_or_else(|| panic!("docs/calibration.md has no row for {name}"));
        assert!(at > last, "docs/calibration.md: the row of {name} is out of the fit's order");
        last = at;
    }
}
