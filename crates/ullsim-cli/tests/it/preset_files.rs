//! `ullsim presets --path DIR [NAME]`: the user's preset files listed and printed as the built-ins are.

use crate::common::ullsim;

#[test]
fn presets_path_lists_the_files_and_prints_one_with_its_base() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mine.toml"),
        "# mine: optane-ull, slower\nbase = \"optane-ull\"\n[flash]\nread_ns = 900\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("other.toml"), "# other: a second drive\nbase = \"znand-ull\"\n").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "# not a preset\n").unwrap();
    let dir_arg = dir.path().to_str().unwrap();
    let list = ullsim(["presets", "--path", dir_arg]).ok().stdout;
    let rows: Vec<&str> = list.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(rows.len(), 2, "{list}");
    assert!(rows[0].starts_with("mine ") && rows[0].ends_with("mine: optane-ull, slower"), "{list}");
    assert!(rows[1].starts_with("other ") && rows[1].ends_with("other: a second drive"), "{list}");
    let one = ullsim(["presets", "--path", dir_arg, "mine"]).ok().stdout;
    assert!(one.starts_with("# mine: optane-ull, slower\nbase = \"optane-ull\""), "{one}");
    assert!(one.contains("# Every key of mine, with those of its base optane-ull:"), "{one}");
    assert!(one.contains("read_ns = 900") && one.contains("command_process_ns = 1800"), "{one}");
    // The base's keys come as comments: the output is one valid preset to copy (its tables not repeated).
    for (what, text) in [("mine", one.clone()), ("optane-900p", ullsim(["presets", "optane-900p"]).ok().stdout)] {
        let (_, every_key) = text.split_once("# Every key of").unwrap_or_else(|| panic!("{what}: {text}"));
        assert!(every_key.lines().skip(1).all(|l| l.starts_with('#')), "{what}: {every_key}");
        assert!(every_key.contains("# [flash]"), "{what}: {every_key}");
    }
    ullsim(["presets", "--path", dir_arg, "nope"]).fails_with(&["no preset file \"nope.toml\"", "\"mine\""]);
    ullsim(["presets", "--path", &format!("{dir_arg}/missing")]).fails_with(&["cannot list preset files"]);
    // The built-in catalogue is as it was.
    let builtins = ullsim(["presets"]).ok().stdout;
    assert!(builtins.starts_with("optane-ull ") && !builtins.contains("mine"), "{builtins}");
}

#[test]
fn a_scenario_naming_a_preset_file_runs_and_reports_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("drives")).unwrap();
    std::fs::write(dir.path().join("drives/mine.toml"), "base = \"optane-ull\"\n").unwrap();
    let scenario = dir.path().join("s.toml");
    std::fs::write(
        &scenario,
        "[run]\nduration = \"5ms\"\n[device]\npreset = \"drives/mine.toml\"\n[[flow]]\nname = \"r\"\nrw = \"randread\"\n",
    )
    .unwrap();
    // Run from elsewhere: the path is the scenario's.
    let out = ullsim(["run", scenario.to_str().unwrap()]).ok().stdout;
    assert!(out.contains("device drives/mine.toml"), "{out}");
    let fio = ullsim(["run", scenario.to_str().unwrap(), "--output-format", "fio-json"]).ok().stdout;
    assert!(fio.contains("\"device_preset\": \"drives/mine.toml\""), "{fio}");
}
