//! `ullsim calibrate --html`: the calibration's report beside its JSON, from a small simulated probe (two
//! result files, few I/Os per simulated job: seconds).

use std::path::Path;

use crate::common::ullsim;

/// Simulates a short probe of optane-ull into `dir` and calibrates optane-900p from two of its files,
/// writing `fit.json` and `fit.html`.
fn calibrate_with_report(dir: &Path) {
    let probe = dir.join("probe");
    ullsim(["probe", "-o", probe.to_str().unwrap(), "--simulate", "optane-ull", "--qd", "1,16", "--numjobs", "1"]).ok();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let args = [
        "calibrate".to_string(),
        s(&probe.join("randread-4k-qd.json")),
        s(&probe.join("randread-large.json")),
        "--base".into(),
        "optane-900p".into(),
        "--ios".into(),
        "300".into(),
        "-o".into(),
        s(&dir.join("fit.toml")),
        "--json".into(),
        s(&dir.join("fit.json")),
        "--html".into(),
        s(&dir.join("fit.html")),
    ];
    ullsim(args).ok();
}

#[test]
fn calibrate_html_draws_every_row_of_the_json_by_family() {
    let dir = tempfile::tempdir().unwrap();
    calibrate_with_report(dir.path());
    let html = std::fs::read_to_string(dir.path().join("fit.html")).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("fit.json")).unwrap()).unwrap();
    let rows = json["rows"].as_array().unwrap();
    assert!(rows.len() >= 4, "{json}");
    // One chart per family (rw, block size, direction), each row's measured mean a point in it.
    let mut families: Vec<String> = Vec::new();
    for row in rows {
        let bs = row["shape"]["block_size"].as_u64().unwrap() / 1024;
        let family =
            format!("<h3>{} {bs} KiB ({})</h3>", row["rw"].as_str().unwrap(), row["direction"].as_str().unwrap());
        if !families.contains(&family) {
            families.push(family);
        }
        let source = row["source"].as_str().unwrap();
        let point = format!("<title>measured {source}, iodepth {}, ", row["shape"]["iodepth"]);
        assert!(html.contains(&point), "{point} is not drawn");
        assert!(html.contains(&format!("<title>simulated {source}, ")), "{source}: no simulated point");
    }
    assert!(families.len() >= 2, "{families:?}");
    for family in &families {
        assert!(html.contains(family.as_str()), "no {family}");
    }
    assert_eq!(html.matches("<h3>").count(), families.len());
    assert_eq!(html.matches("<svg").count(), families.len());
    // The parameters and the preset file are in it, and no script or fetched resource.
    for parameter in json["outcome"]["parameters"].as_array().unwrap() {
        assert!(html.contains(parameter["key"].as_str().unwrap()));
    }
    assert!(html.contains("base = &quot;optane-900p&quot;"));
    assert!(!html.contains("<script") && !html.contains("http"));
    // One generator: `ullsim report` of the JSON writes the same bytes.
    let again = dir.path().join("again.html");
    ullsim(["report", dir.path().join("fit.json").to_str().unwrap(), again.to_str().unwrap()]).ok();
    assert_eq!(std::fs::read_to_string(again).unwrap(), html);
}

#[test]
fn calibrate_html_to_a_directory_that_does_not_exist_fails_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let probe = dir.path().join("probe");
    ullsim(["probe", "-o", probe.to_str().unwrap(), "--simulate", "optane-ull", "--qd", "1", "--numjobs", "1"]).ok();
    let html = dir.path().join("missing").join("fit.html");
    ullsim([
        "calibrate",
        probe.join("randread-4k-qd.json").to_str().unwrap(),
        "--ios",
        "100",
        "-o",
        dir.path().join("fit.toml").to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ])
    .fails_with(&["missing/fit.html"]);
}
