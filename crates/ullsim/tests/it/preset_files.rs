//! User preset files (`device.preset = "path/to/file.toml"`, issue 34): resolved against the scenario's
//! directory, chained by `base`, checked as built-in presets are, and reported as the user wrote them.

use std::path::Path;

use ullsim::Scenario;

use crate::common::{json, run};

const FLOW: &str = "[[flow]]\nname = \"r\"\nrw = \"randread\"\nbs = \"4k\"\niodepth = 4\n";

/// A scenario named `t` of 20 ms whose `[device]` is `device` (its keys, without the header).
fn scenario_text(device: &str) -> String {
    format!("name = \"t\"\n[run]\nduration = \"20ms\"\n[device]\n{device}\n{FLOW}")
}

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `text` loaded as the scenario file `dir/scenario.toml`, with `overrides`.
fn load(dir: &Path, text: &str, overrides: &[&str]) -> Result<Scenario, String> {
    write(dir, "scenario.toml", text);
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Scenario::load(&dir.join("scenario.toml"), &overrides).map_err(|e| e.to_string())
}

/// Results as JSON without the one field that differs by design: the preset as written.
fn results_without_preset(scenario: &Scenario) -> String {
    let mut value: serde_json::Value = serde_json::from_str(&json(&run(scenario))).unwrap();
    for section in ["scenario", "device"] {
        if let Some(preset) = value.get_mut(section).and_then(|s| s.get_mut("preset")) {
            *preset = serde_json::Value::Null;
        }
    }
    value.to_string()
}

#[test]
fn a_preset_file_beside_the_scenario_runs_as_the_same_keys_inline() {
    let dir = tempfile::tempdir().unwrap();
    // The whole of optane-ull, written out as a file, with one key changed.
    let optane = ullsim::config::presets::find("optane-ull").unwrap().toml;
    let file_text = optane.replace("read_ns = 630                    # calibrated", "read_ns = 900 # calibrated");
    assert_ne!(file_text, optane, "the key to change is in the preset");
    write(dir.path(), "drives/mine.toml", &file_text);
    let from_file = load(dir.path(), &scenario_text("preset = \"drives/mine.toml\""), &[]).unwrap();
    assert_eq!(from_file.device.preset, "drives/mine.toml", "the preset as the user wrote it");
    let inline = scenario_text("preset = \"optane-ull\"\n[device.flash]\nread_ns = 900");
    let inline = Scenario::from_toml_str(&inline, "t", Path::new("."), &[]).unwrap();
    assert_eq!(results_without_preset(&from_file), results_without_preset(&inline));
    // The changed key is felt: the file is not ignored.
    let plain = Scenario::from_toml_str(&scenario_text("preset = \"optane-ull\""), "t", Path::new("."), &[]).unwrap();
    assert_ne!(results_without_preset(&from_file), results_without_preset(&plain));
    let results = json(&run(&from_file));
    assert!(results.contains("\"preset\":\"drives/mine.toml\""), "{results}");
}

#[test]
fn a_file_with_a_built_in_base_overrides_one_key_and_chains_through_files() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "p/slow.toml",
        "# slow: optane-ull with slower media\nbase = \"optane-ull\"\n[flash]\nread_ns = \"2us\"\n",
    );
    // A file on a file: paths in `base` are relative to the file naming them.
    write(dir.path(), "q/slower.toml", "base = \"../p/slow.toml\"\n[host_interface]\ncommand_process_ns = 2500\n");
    let slow = load(dir.path(), &scenario_text("preset = \"p/slow.toml\""), &[]).unwrap();
    assert_eq!(slow.device.flash.read_ns.0, 2000);
    let optane = Scenario::from_toml_str(&scenario_text("preset = \"optane-ull\""), "t", Path::new("."), &[]).unwrap();
    assert_eq!(slow.device.flash.program_ns.0, optane.device.flash.program_ns.0, "the rest is the base's");
    let slower = load(dir.path(), &scenario_text("preset = \"q/slower.toml\""), &[]).unwrap();
    assert_eq!((slower.device.flash.read_ns.0, slower.device.host_interface.command_process_ns.0), (2000, 2500));
    // The scenario's own keys still go over the file's.
    let own = load(dir.path(), &scenario_text("preset = \"p/slow.toml\"\n[device.flash]\nread_ns = 700"), &[]).unwrap();
    assert_eq!(own.device.flash.read_ns.0, 700);
    // A drive table names a file too.
    let drives = scenario_text("preset = \"optane-ull\"\ncount = 2\n[drives.nvme1]\npreset = \"p/slow.toml\"");
    let drives = load(dir.path(), &drives, &[]).unwrap();
    assert_eq!((drives.drive_config(0).flash.read_ns.0, drives.drive_config(1).flash.read_ns.0), (630, 2000));
    assert_eq!(drives.drive_config(1).preset, "p/slow.toml");
}

#[test]
fn a_set_preset_file_is_relative_to_the_current_directory() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "slow.toml", "base = \"optane-ull\"\n[flash]\nread_ns = \"2us\"\n");
    // Beside the scenario, but `--set` paths are the command line's: relative to where it runs.
    let error = load(dir.path(), &scenario_text("preset = \"optane-ull\""), &["device.preset=slow.toml"]).unwrap_err();
    assert!(
        error.contains("--set device.preset=slow.toml") && error.contains("cannot read preset file slow.toml"),
        "{error}"
    );
    let absolute = format!("device.preset={}", dir.path().join("slow.toml").display());
    let loaded = load(dir.path(), &scenario_text("preset = \"optane-ull\""), &[&absolute]).unwrap();
    assert_eq!(loaded.device.flash.read_ns.0, 2000);
}

#[test]
fn bad_preset_files_are_errors_naming_the_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let error = |device: &str| load(dir.path(), &scenario_text(device), &[]).unwrap_err();
    // Missing: the scenario's key and the path tried.
    let missing = error("preset = \"nope/mine.toml\"");
    assert!(missing.contains("key `device.preset`") && missing.contains("nope/mine.toml"), "{missing}");
    // An unknown key: the file and the key.
    write(dir.path(), "bad.toml", "base = \"optane-ull\"\n[flash]\nread_nss = 3\n");
    let bad = error("preset = \"bad.toml\"");
    assert!(bad.contains("preset file") && bad.contains("bad.toml") && bad.contains("key `flash.read_nss`"), "{bad}");
    // A value of the wrong type.
    write(dir.path(), "typed.toml", "base = \"optane-ull\"\n[flash]\nread_ns = \"fast\"\n");
    let typed = error("preset = \"typed.toml\"");
    assert!(typed.contains("typed.toml") && typed.contains("key `flash.read_ns`"), "{typed}");
    // A cycle of bases.
    write(dir.path(), "a.toml", "base = \"b.toml\"\n");
    write(dir.path(), "b.toml", "base = \"./a.toml\"\n");
    let cycle = error("preset = \"a.toml\"");
    assert!(cycle.contains("cycle") && cycle.contains("a.toml -> ") && cycle.contains("b.toml"), "{cycle}");
    // An unknown built-in base, and a file without a base that leaves keys out.
    write(dir.path(), "unknown.toml", "base = \"optane-ul\"\n");
    let unknown = error("preset = \"unknown.toml\"");
    assert!(
        unknown.contains("unknown.toml") && unknown.contains("key `base`") && unknown.contains("\"optane-ul\""),
        "{unknown}"
    );
    write(dir.path(), "partial.toml", "[flash]\nread_ns = 3000\n");
    let partial = error("preset = \"partial.toml\"");
    assert!(partial.contains("partial.toml") && partial.contains("missing field"), "{partial}");
    // A name that is no path is still a built-in's, with the way to a file said.
    let name = error("preset = \"mine\"");
    assert!(name.contains("unknown preset \"mine\"") && name.contains("file's path"), "{name}");
}
