//! `ullsim calibrate`: a small probe set of a simulated drive fitted end to end (table, preset file that
//! runs, JSON), and its bad input: a file that is not fio's, contradictory files, one file only, an output
//! that exists.

use std::path::{Path, PathBuf};

use crate::common::ullsim;

/// The QD1 and QD16 4 KiB random reads (and the other read files) of `device`, simulated into `dir`.
fn probe(dir: &Path, device: &str) -> Vec<PathBuf> {
    let out = dir.to_str().unwrap();
    ullsim(["probe", "-o", out, "--simulate", device, "--qd", "1,16", "--numjobs", "1", "--duration", "10ms"]).ok();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json") && !p.to_string_lossy().contains("DESTRUCTIVE"))
        .collect();
    files.sort();
    files
}

fn args<'a>(files: &'a [PathBuf], rest: &[&'a str]) -> Vec<String> {
    let mut all = vec!["calibrate".to_string()];
    all.extend(files.iter().map(|f| f.to_string_lossy().into_owned()));
    all.extend(rest.iter().map(|s| s.to_string()));
    all
}

#[test]
fn calibrate_prints_the_fit_and_writes_a_preset_that_runs() {
    let dir = tempfile::tempdir().unwrap();
    let files = probe(&dir.path().join("probe"), "optane-900p");
    let preset = dir.path().join("mydrive.toml");
    let json = dir.path().join("fit.json");
    let run = ullsim(args(
        &files,
        &[
            "--base",
            "optane-ull",
            "--ios",
            "300",
            "--set",
            "device.cache.dram_access_ns=300",
            "--set",
            "device.ftl.gc_policy=\"random\"",
            "-o",
            preset.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    ))
    .ok();
    // The table: every job of the input, measured beside simulated.
    for job in ["randread-4k-qd1", "randread-4k-qd16", "read-128k-qd32"] {
        assert!(run.stdout.contains(job), "{job} in the table: {}", run.stdout);
    }
    assert!(run.stdout.contains("device.flash.read_ns"), "{}", run.stdout);
    // No write job: what it would decide is said to be left at the base's.
    let text = std::fs::read_to_string(&preset).unwrap();
    assert!(text.contains("base = \"optane-ull\""), "{text}");
    assert!(text.contains("device.flash.program_ns (no job measures it)"), "{text}");
    // A device key given with --set is part of the drive fitted: the preset keeps it, even one of a choice
    // the fit makes when it is none of the choice's values (it is left out of the fit, and said so).
    assert!(text.contains("[cache]\ndram_access_ns = 300  # given: --set"), "{text}");
    assert!(text.contains("gc_policy = \"random\"  # given: --set"), "{text}");
    assert!(
        run.stderr.contains("device.ftl.gc_policy: the base's \"random\" is none of the values the fit chooses among"),
        "{}",
        run.stderr
    );
    assert!(
        text.lines().filter(|l| l.contains("# fitted from:")).all(|l| l.contains("randread") || l.contains("read-")),
        "{text}"
    );
    // The JSON has the rows and the preset's text.
    let value: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(value["preset"].as_str().unwrap(), text);
    assert!(value["rows"].as_array().unwrap().len() >= 3, "{value}");
    // The preset is a device: a run on it works.
    ullsim([
        "run",
        "--set",
        &format!("device.preset={}", preset.display()),
        "--set",
        "run.duration=5ms",
        "--set",
        "run.warmup=0",
    ])
    .ok();
    // It does not overwrite.
    ullsim(args(&files, &["--base", "optane-ull", "--ios", "300", "-o", preset.to_str().unwrap()]))
        .fails_with(&["mydrive.toml", "exists"]);
}

#[test]
fn calibrate_rejects_what_is_not_a_measurement() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.toml");
    let out = out.to_str().unwrap();
    // Not fio's JSON.
    let bogus = dir.path().join("bogus.json");
    std::fs::write(&bogus, r#"{"hello": 1}"#).unwrap();
    ullsim(["calibrate", bogus.to_str().unwrap(), "-o", out]).fails_with(&["bogus.json", "not fio"]);
    // A scenario file is not a preset: the new preset could not name it as its base.
    let scenario = dir.path().join("scenario.toml");
    std::fs::write(&scenario, "[device]\npreset = \"optane-ull\"\n").unwrap();
    let files_a = probe(&dir.path().join("a"), "optane-ull");
    ullsim(args(&files_a, &["--base", scenario.to_str().unwrap(), "-o", out]))
        .fails_with(&["scenario.toml", "not a preset"]);
    // Two drives' results of the same shapes: contradictory.
    let files_b = probe(&dir.path().join("b"), "tlc-enterprise");
    let both: Vec<PathBuf> = files_a.iter().chain(&files_b).cloned().collect();
    ullsim(args(&both, &["--ios", "300", "-o", out])).fails_with(&[
        "contradictory",
        "a/randread-4k",
        "b/randread-4k",
        "apart",
    ]);
    assert!(!Path::new(out).exists(), "no preset after an error");
    // One file: fitted, with a warning that says what it cannot fit.
    let one = [files_a.iter().find(|f| f.to_string_lossy().contains("randread-4k-qd")).unwrap().clone()];
    let run = ullsim(args(&one, &["--base", "optane-ull", "--ios", "300", "-o", out])).ok();
    assert!(run.stderr.contains("one results file"), "{}", run.stderr);
}
