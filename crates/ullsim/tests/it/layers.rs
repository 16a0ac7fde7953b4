//! The crate's top-level modules form layers with no import circle: each module names (`crate::NAME`) only
//! modules beneath it in [`LAYER_ORDER`], the order the crate's docs state (`src/lib.rs`). Comments and
//! unit-test modules do not count: a test may reach across layers.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Bottom to top, as `src/lib.rs` states it.
const LAYER_ORDER: [&str; 13] = [
    "util",
    "engine",
    "request",
    "config",
    "workload",
    "device",
    "metrics",
    "host",
    "load",
    "sim",
    "export",
    "reproduce",
    "calibrate",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file of top-level module `module` (`module.rs` and the folder `module/`).
fn files_of(module: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let single = src().join(format!("{module}.rs"));
    if single.is_file() {
        files.push(single);
    }
    let mut dirs = vec![src().join(module)];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = fs::read_dir(&dir) else { continue };
        for entry in entries.map(|e| e.unwrap().path()) {
            if entry.is_dir() {
                dirs.push(entry);
            } else if entry.extension().is_some_and(|e| e == "rs") {
                files.push(entry);
            }
        }
    }
    files
}

/// The code of `text` without comments and without the unit tests at its end.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines().map(|line| line.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// The top-level modules `module`'s code names.
fn imports_of(module: &str) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    for file in files_of(module) {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let text = code(&fs::read_to_string(&file).unwrap());
        for (at, _) in text.match_indices("crate::") {
            let rest = &text[at + "crate::".len()..];
            let ident: String = rest.chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect();
            if LAYER_ORDER.contains(&ident.as_str()) && ident != module {
                named.insert(ident);
            }
        }
    }
    named
}

#[test]
fn every_top_level_module_has_a_layer() {
    let mut modules: Vec<String> = fs::read_dir(src())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|m| m != "lib" && m != "main")
        .collect();
    modules.sort();
    modules.dedup();
    let mut layered: Vec<String> = LAYER_ORDER.iter().map(|m| m.to_string()).collect();
    layered.sort();
    assert_eq!(modules, layered, "a top-level module is missing from LAYER_ORDER (and src/lib.rs's docs)");
}

#[test]
fn modules_import_only_the_layers_beneath_them() {
    let mut upward = Vec::new();
    for (level, module) in LAYER_ORDER.iter().enumerate() {
        for named in imports_of(module) {
            let their = LAYER_ORDER.iter().position(|m| *m == named).unwrap();
            if their > level {
                upward.push(format!("{module} -> {named}"));
            }
        }
    }
    assert!(upward.is_empty(), "imports against the layer order (an import circle in the making): {upward:?}");
}

#[test]
fn the_crate_docs_state_the_same_order() {
    let lib = fs::read_to_string(src().join("lib.rs")).unwrap();
    // The crate's doc comment as one line of text.
    let docs = lib.lines().filter_map(|l| l.strip_prefix("//!")).map(str::trim).collect::<Vec<_>>().join(" ");
    let stated = LAYER_ORDER.map(|m| format!("[`{m}`]")).join(" < ");
    assert!(docs.contains(&stated), "src/lib.rs should state the layer order as: {stated}");
}

#[test]
fn the_scan_sees_an_upward_import() {
    // The check can fail: the simulation imports the host, so the host may not import the simulation.
    assert!(imports_of("sim").contains("host"));
    assert!(code("use crate::sim::Event; // crate::host").contains("crate::sim"));
    assert!(!code("// use crate::sim::Event;").contains("crate::sim"));
}
