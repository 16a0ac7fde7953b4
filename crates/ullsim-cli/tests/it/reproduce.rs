//! End-to-end tests of `ullsim reproduce`: every reproduction writes the one layout of
//! `ullsim::reproduce::Reproduction` (docs/output.md, "Reproductions") as JSON and as a table, the same
//! seed gives the same bytes, and flags that do not apply are errors naming the flag. The runs are the
//! CI-sized subsets, cut shorter still where only the machinery is checked.

use crate::common;

use common::ullsim;
use serde_json::Value;

/// Checks the layout every reproduction shares: exactly the seven top-level fields, rows of exactly seven
/// fields whose values are finite numbers (paper null or finite), each marked calibrated or predicted with a
/// verdict where it has a paper value, and a score that counts those verdicts; returns the rows.
fn check_layout<'a>(reproduction: &'a Value, name: &str) -> &'a [Value] {
    let top: Vec<&str> = reproduction.as_object().expect("an object").keys().map(String::as_str).collect();
    assert_eq!(top, ["headline", "notes", "options", "paper", "rows", "score", "title"], "{reproduction}");
    assert_eq!(reproduction["paper"], name);
    assert!(reproduction["title"].as_str().is_some_and(|t| !t.is_empty()));
    assert!(reproduction["notes"].as_array().unwrap().iter().all(Value::is_string));
    // Every reproduction records its seed and its --set overrides under the same keys.
    assert!(reproduction["options"]["seed"].is_u64(), "{}", reproduction["options"]);
    assert!(reproduction["options"]["set"].as_array().is_some_and(|s| s.iter().all(Value::is_string)));
    let rows = reproduction["rows"].as_array().expect("rows is an array");
    assert!(!rows.is_empty());
    // No two rows share a figure, a setting and a metric: each is one figure at one setting.
    let mut keys: Vec<String> =
        rows.iter().map(|r| format!("{} {} {}", r["figure"], r["setting"], r["metric"])).collect();
    keys.sort();
    let before = keys.len();
    keys.dedup();
    assert_eq!(keys.len(), before, "rows with the same figure, setting and metric");
    for row in rows {
        let keys: Vec<&str> = row.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["figure", "metric", "paper", "role", "setting", "simulated", "spread", "verdict"], "{row}");
        // A spread is the range of two or more seeds' values, around their mean.
        if !row["spread"].is_null() {
            let (min, max) = (row["spread"]["min"].as_f64().unwrap(), row["spread"]["max"].as_f64().unwrap());
            let simulated = row["simulated"].as_f64().unwrap();
            assert!(row["spread"]["seeds"].as_u64().unwrap() >= 2, "{row}");
            let slack = 1e-9 * simulated.abs().max(1.0);
            assert!(min <= simulated + slack && simulated <= max + slack, "{row}");
        }
        assert!(row["simulated"].as_f64().is_some_and(f64::is_finite), "not a finite result: {row}");
        assert!(row["paper"].is_null() || row["paper"].as_f64().is_some_and(f64::is_finite), "{row}");
        assert!(row["setting"].as_object().unwrap().values().all(Value::is_string), "{row}");
        assert!(row["role"] == "calibrated" || row["role"] == "predicted", "{row}");
        assert_eq!(row["verdict"].is_null(), row["paper"].is_null(), "a verdict exactly where a paper value is: {row}");
    }
    // The score counts the verdicts: the headline's predicted rows, all predicted rows, the calibrated rows.
    let headline: Vec<&str> = reproduction["headline"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(!headline.is_empty() && headline.iter().all(|f| rows.iter().any(|r| r["figure"] == *f)), "{headline:?}");
    let count = |of_headline: bool, verdict: &str| {
        rows.iter()
            .filter(|r| r["role"] == "predicted" && r["verdict"] == verdict)
            .filter(|r| !of_headline || headline.iter().any(|f| r["figure"] == *f))
            .count() as u64
    };
    let score = &reproduction["score"];
    for (part, of_headline) in [("predicted", false), ("headline", true)] {
        let verdicts = ["close", "direction", "off", "far"].map(|v| count(of_headline, v));
        let got = ["close", "direction", "off", "far"].map(|v| score[part][v].as_u64().unwrap());
        assert_eq!(got, verdicts, "{part}: {score}");
        assert_eq!(score[part]["rows"].as_u64().unwrap(), verdicts.iter().sum::<u64>(), "{score}");
    }
    let fitted = rows.iter().filter(|r| r["verdict"] == "fitted").count() as u64;
    let unfitted = rows.iter().filter(|r| r["verdict"] == "unfitted").count() as u64;
    assert_eq!(score["calibrated"]["fitted"].as_u64().unwrap(), fitted, "{score}");
    assert_eq!(score["calibrated"]["rows"].as_u64().unwrap(), fitted + unfitted, "{score}");
    rows
}

/// The rows of `figure` and `metric`.
fn rows<'a>(reproduction: &'a Value, figure: &str, metric: &str) -> Vec<&'a Value> {
    let all = reproduction["rows"].as_array().expect("rows is an array");
    all.iter().filter(|r| r["figure"] == figure && r["metric"] == metric).collect()
}

/// The one row of `figure` and `metric` whose setting has every (key, value) of `setting`.
fn row<'a>(reproduction: &'a Value, figure: &str, metric: &str, setting: &[(&str, &str)]) -> &'a Value {
    let found: Vec<&Value> = rows(reproduction, figure, metric)
        .into_iter()
        .filter(|r| setting.iter().all(|(k, v)| r["setting"][*k] == *v))
        .collect();
    assert_eq!(found.len(), 1, "{figure} {metric} {setting:?}: {found:?}");
    found[0]
}

fn simulated(row: &Value) -> f64 {
    row["simulated"].as_f64().expect("a number")
}

fn setting<'a>(row: &'a Value, key: &str) -> &'a str {
    row["setting"][key].as_str().unwrap_or_else(|| panic!("no setting {key} in {row}"))
}

/// `ullsim ARGS... --json -`, parsed.
fn json(args: &[&str]) -> Value {
    let out = ullsim(args.iter().copied().chain(["--json", "-"])).ok();
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", out.stdout))
}

/// Short flin18 runs: only the machinery is checked (the figures need the default lengths).
const FLIN18: [&str; 8] =
    ["reproduce", "flin18", "--mixes", "1", "--duration", "200ms", "--classify-duration", "500ms"];

#[test]
fn reproduce_flin18_classifies_draws_mixes_and_compares_with_the_paper() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("flin18.json");
    let text = ullsim(FLIN18.iter().copied().chain(["--json", file.to_str().unwrap()])).ok();
    let bytes = std::fs::read_to_string(&file).unwrap();
    let report: Value = serde_json::from_str(&bytes).unwrap();
    check_layout(&report, "flin18");
    assert_eq!(report["options"]["mixes_per_category"], 1);
    assert_eq!(report["options"]["classes"], "measured");
    // Every FLIN trace stand-in is classified, by FLIN's 8% rule, beside Table 2's class.
    let classes = rows(&report, "table2", "high_interference");
    assert_eq!(classes.len(), 20, "{classes:?}");
    for c in &classes {
        let busy = simulated(row(&report, "table2", "chip_busy", &[("app", setting(c, "app"))]));
        assert_eq!(simulated(c) == 1.0, busy > 0.08, "{c}");
        assert!(c["paper"] == 0.0 || c["paper"] == 1.0, "Table 2's class: {c}");
    }
    let high = classes.iter().filter(|c| simulated(c) == 1.0).count();
    // Each category either ran one mix under the six variants (three schedulers, three single-stage FLINs)
    // or a note says why it could not be formed.
    let formed = (1..=4).filter(|&n_high| n_high <= high).count();
    assert_eq!(rows(&report, "summary", "mean_fairness").len(), 6 * formed);
    assert_eq!(rows(&report, "ablation", "fairness_x_sprinkler").len(), 4 * formed);
    let notes = |start: &str| {
        report["notes"].as_array().unwrap().iter().filter(|n| n.as_str().unwrap().starts_with(start)).count()
    };
    assert_eq!(notes("skipped:"), 4 - formed);
    let mixes = rows(&report, "mixes", "fairness");
    assert_eq!(mixes.len(), 6 * formed);
    for m in mixes {
        assert!(simulated(m) > 0.0 && simulated(m) <= 1.0, "{m}");
        assert_eq!(setting(m, "mix").split('+').count(), 4, "{m}");
    }
    // A slowdown per flow, or a note that the flow completed nothing (too short a run for its rate).
    assert_eq!(rows(&report, "mixes", "slowdown").len() + notes("no slowdown row for"), 4 * 6 * formed);
    // FLIN against the baselines beside the slides' figures, per formed category.
    for (figure, metric, paper_25) in [
        ("fairness", "fairness_x_sprinkler", 1.8),
        ("fairness", "fairness_x_sprinkler_fairness", 1.3),
        ("weighted_speedup", "ws_gain_over_sprinkler", 0.38),
        ("weighted_speedup", "ws_gain_over_sprinkler_fairness", 0.21),
        ("max_slowdown", "flin_max_slowdown", 80.0),
    ] {
        assert_eq!(rows(&report, figure, metric).len(), formed, "{figure} {metric}");
        assert_eq!(row(&report, figure, metric, &[("category", "25%")])["paper"], paper_25);
    }
    // The table is the same rows.
    assert!(
        text.stdout.starts_with("FLIN (ISCA'18)") && text.stdout.contains("mixes_per_category 1"),
        "{}",
        text.stdout
    );
    for block in ["table2  ", "summary  ", "fairness  ", "weighted_speedup  ", "ablation  ", "mixes  "] {
        assert!(text.stdout.contains(&format!("\n{block}")), "no {block:?} rows in\n{}", text.stdout);
    }
    let line = text.stdout.lines().find(|l| l.contains("category=25%  fairness_x_sprinkler ")).expect("a fairness row");
    assert!(line.contains(" 1.8 "), "the paper's 1.8x beside the simulated: {line}");
    // Same seed, same bytes.
    let again = ullsim(FLIN18.iter().copied().chain(["--json", "-"])).ok();
    assert!(bytes == again.stdout, "two reproductions with the same seed differ");
    ullsim(["reproduce", "flin19"]).fails_with(&["unknown reproduction \"flin19\"", "flin18", "hotstorage23"]);
    ullsim(["reproduce", "flin18", "--duration", "0s"]).fails_with(&["--duration"]);
    ullsim(["reproduce", "flin18", "--load", "0"]).fails_with(&["--load", "expected a rate multiplier > 0"]);
}

#[test]
fn reproduce_flin18_with_table2_classes_forms_every_category_from_the_papers_classes() {
    // FLIN's Table 2 marks six traces high-interference, so all four categories form whatever the stand-ins
    // do alone, and every mix has the category's share of those six.
    let args = ["reproduce", "flin18", "--mixes", "1", "--duration", "100ms", "--classify-duration", "200ms"];
    let with_table2: Vec<&str> = args.iter().copied().chain(["--classes", "table2"]).collect();
    let report = json(&with_table2);
    check_layout(&report, "flin18");
    assert_eq!(report["options"]["classes"], "table2");
    let classes = rows(&report, "table2", "high_interference");
    let high: Vec<&str> = classes.iter().filter(|c| simulated(c) == 1.0).map(|c| setting(c, "app")).collect();
    assert_eq!(high, ["exch", "msnfs", "src1-0", "src1-1", "tpcc", "tpce"]);
    for c in &classes {
        assert_eq!(c["paper"], c["simulated"], "{c}");
    }
    let notes = report["notes"].as_array().unwrap();
    assert!(!notes.iter().any(|n| n.as_str().unwrap().starts_with("skipped:")), "{notes:?}");
    for m in rows(&report, "mixes", "fairness") {
        let in_high = setting(m, "mix").split('+').filter(|a| high.contains(a)).count();
        assert_eq!(format!("{}%", in_high * 25), setting(m, "category"), "{m}");
    }
    let text = ullsim(&with_table2).ok();
    assert!(text.stdout.contains("classes table2") && text.stdout.contains("FLIN's Table 2"), "{}", text.stdout);
    ullsim(args.iter().copied().chain(["--classes", "paper"])).fails_with(&[
        "--classes",
        "unknown rule \"paper\"",
        "measured",
        "table2",
    ]);
}

#[test]
fn reproduce_flin18_applies_set_overrides_to_every_run() {
    let plain = json(&FLIN18);
    let set = ["--set", "device.flash.program_suspend=true", "--set", "device.flash.erase_suspend=true"];
    let suspended = json(&FLIN18.iter().copied().chain(set).collect::<Vec<_>>());
    assert_eq!(
        suspended["options"]["set"],
        serde_json::json!(["device.flash.program_suspend=true", "device.flash.erase_suspend=true"])
    );
    assert_ne!(
        rows(&plain, "mixes", "slowdown"),
        rows(&suspended, "mixes", "slowdown"),
        "the overrides changed no run"
    );
    let text = ullsim(FLIN18.iter().copied().chain(set)).ok();
    assert!(text.stdout.contains("device.flash.program_suspend=true"), "{}", text.stdout);
    ullsim(FLIN18.iter().copied().chain(["--set", "device.flash.suspend_nope=1"]))
        .fails_with(&["device.flash.suspend_nope", "unknown field"]);
}

#[test]
fn reproduce_hotstorage23_subset_has_every_figure_and_none_ahead_of_bfq() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hotstorage23.json");
    let text = ullsim(["reproduce", "hotstorage23", "--json", file.to_str().unwrap()]).ok();
    let bytes = std::fs::read_to_string(&file).unwrap();
    let report: Value = serde_json::from_str(&bytes).unwrap();
    let all = check_layout(&report, "hotstorage23");
    assert_eq!(report["options"]["all"], false);
    assert_eq!(report["options"]["depths"], serde_json::json!([1, 16, 128]));
    // Table 1: 2 completions x 2 directions x 4 schedulers, each beside the paper's median.
    let medians = rows(&report, "table1", "median_latency_us");
    assert_eq!(medians.len(), 16);
    assert!(medians.iter().all(|r| r["paper"].is_number()));
    assert_eq!(rows(&report, "table1", "diff_vs_none_pct").len(), 12);
    assert_eq!(rows(&report, "table1", "polled_saving_us").len(), 8);
    // The baseline the platform's costs hold: none with interrupts, both directions, within 10% of the paper.
    for rw in ["randread", "randwrite"] {
        let base = row(
            &report,
            "table1",
            "median_latency_us",
            &[("completion", "interrupt"), ("rw", rw), ("scheduler", "none")],
        );
        assert_eq!((&base["role"], &base["verdict"]), (&Value::from("calibrated"), &Value::from("fitted")), "{base}");
    }
    // The paper's ordering at QD1: none's median below bfq's, in every column.
    for completion in ["interrupt", "polled"] {
        for rw in ["randread", "randwrite"] {
            let median = |scheduler| {
                let setting = [("completion", completion), ("rw", rw), ("scheduler", scheduler)];
                simulated(row(&report, "table1", "median_latency_us", &setting))
            };
            assert!(median("none") < median("bfq"), "{completion} {rw}: none {} bfq {}", median("none"), median("bfq"));
        }
    }
    // Figs. 1-4: 3 directions x 3 depths x 4 schedulers, and none against the best per (rw, depth).
    for (figure, metric, claim) in [
        ("fig1", "iops", "iops_vs_best"),
        ("fig2", "iops", "iops_vs_best"),
        ("fig3", "joules_per_million_ios", "energy_vs_best"),
        ("fig4", "joules_per_million_ios", "energy_vs_best"),
    ] {
        assert_eq!(rows(&report, figure, metric).len(), 36, "{figure}");
        let claims = rows(&report, figure, claim);
        assert_eq!(claims.len(), 9, "{figure}");
        assert!(claims.iter().all(|c| c["paper"] == 1.0 && setting(c, "scheduler") == "none"), "{figure}");
    }
    // None is the best or tied at one io_uring job's QD16 reads (the CPU is the limit there).
    let claim = row(&report, "fig1", "iops_vs_best", &[("rw", "randread"), ("iodepth", "16")]);
    assert!(simulated(claim) > 0.99, "{claim}");
    // Fig. 5: db_bench readrandom, 3 depths x 4 schedulers, IOPS and energy.
    assert_eq!(rows(&report, "fig5a", "iops").len(), 12);
    assert_eq!(rows(&report, "fig5b", "joules_per_million_ios").len(), 12);
    assert_eq!(rows(&report, "fig5a", "iops_vs_best").len(), 3);
    assert_eq!(rows(&report, "fig3_fig4", "max_energy_saving_vs_bfq_j")[0]["paper"], 200.0);
    assert_eq!(rows(&report, "sec6", "load_minus_idle_w")[0]["paper"], 52.0);
    let figures: std::collections::BTreeSet<&str> = all.iter().map(|r| r["figure"].as_str().unwrap()).collect();
    assert_eq!(figures.len(), 9, "{figures:?}");
    // The table prints every figure's block.
    assert!(text.stdout.starts_with("HotStorage'23"), "{}", text.stdout);
    for figure in &figures {
        assert!(text.stdout.contains(&format!("\n{figure}  ")), "no {figure} rows in\n{}", text.stdout);
    }
    // Same seed, same bytes; another seed differs.
    assert!(ullsim(["reproduce", "hotstorage23", "--json", "-"]).ok().stdout == bytes, "same seed, other bytes");
    let other = json(&["reproduce", "hotstorage23", "--seed", "2"]);
    assert_eq!(other["options"]["seed"], 2);
    assert_ne!(other["rows"], report["rows"]);
}

#[test]
fn reproduce_hotstorage23_takes_duration_and_set_and_rejects_flin18s_flags() {
    let base = ["reproduce", "hotstorage23", "--duration", "10ms"];
    let polled = json(&base.iter().copied().chain(["--set", "host.completion=poll"]).collect::<Vec<_>>());
    assert_eq!(polled["options"]["figure_duration_ns"], 10_000_000);
    assert_eq!(polled["options"]["set"], serde_json::json!(["host.completion=poll"]));
    let plain = json(&base);
    let median = |r: &Value| {
        let setting = [("completion", "interrupt"), ("rw", "randread"), ("scheduler", "none")];
        simulated(row(r, "table1", "median_latency_us", &setting))
    };
    assert!(median(&polled) < median(&plain) - 3.0, "polling every request saves the interrupt path");
    for (flag, value) in [("--mixes", "2"), ("--classify-duration", "1s"), ("--load", "2"), ("--classes", "table2")] {
        ullsim(["reproduce", "hotstorage23", flag, value]).fails_with(&[flag, "not used by hotstorage23"]);
    }
    ullsim(["reproduce", "hotstorage23", "--duration", "5ms"]).fails_with(&["--duration", "warm-up"]);
    ullsim(["reproduce", "hotstorage23", "--duration", "0"]).fails_with(&["--duration: expected a duration > 0"]);
    ullsim(["reproduce", "hotstorage23", "--set", "host.io_scheduler=bfq"])
        .fails_with(&["--set host.io_scheduler=bfq: hotstorage23 sets host.io_scheduler itself"]);
    ullsim(["reproduce", "hotstorage23", "--set", "device.flash.nope=1"])
        .fails_with(&["hotstorage23", "device.flash.nope"]);
}

#[test]
fn reproduce_fastresponse22_writes_every_figure_and_ld_bounds_the_device_queue() {
    // The CI-sized subset: TeraSort and Bayes, 400 ms after a 500 ms warm-up (`--all` runs every app).
    let text = ullsim(["reproduce", "fastresponse22"]).ok();
    assert!(text.stdout.contains("fig12") && text.stdout.contains("simulated"), "{}", text.stdout);
    let r = json(&["reproduce", "fastresponse22"]);
    check_layout(&r, "fastresponse22");
    // Every app under every stack has its three latency rows and Fig. 15's four parts beside Bayes.
    for app in ["terasort", "bayes"] {
        for stack in ["vanilla", "selectisr", "b-opt", "bs-opt"] {
            for metric in ["mean_us", "p99_us", "p99_9_us"] {
                assert!(simulated(row(&r, "fig12", metric, &[("app", app), ("stack", stack)])) > 5.0);
            }
        }
    }
    for metric in ["t_fs_us", "t_blk_us", "t_dev_us", "t_sched_us"] {
        assert_eq!(rows(&r, "fig15a", metric).len(), 4, "{metric}");
    }
    // Fig. 16's mechanism: TeraSort's bursts fill the device under Vanilla to its 160 outstanding requests
    // (calibrated: the paper's "past 160") plus readrandom's gets; LD's 8 tokens hold the non-critical
    // commands to 8, plus at most one get of each of readrandom's 4 threads.
    assert!(simulated(row(&r, "fig16", "max_queue_depth", &[("stack", "vanilla")])) > 160.0);
    assert!(simulated(row(&r, "fig16", "max_queue_depth", &[("stack", "b-opt")])) <= 12.0);
    // Fig. 14: the open-loop apps lose no throughput to throttling (the paper: at most 6%).
    assert!(simulated(row(&r, "fig14a", "max_loss_pct", &[("app", "all")])) <= 6.0);
    // Fig. 19 has a row per token count and rate of the subset.
    assert_eq!(rows(&r, "fig19a", "p99_us").len(), 2);
    // The write path: fillsync beside each app under five stacks; BSJ-Opt's own commit leaves no T_D2,
    // T_JD or T_Sched and makes fsync faster than under Vanilla.
    for app in ["terasort", "bayes"] {
        let fsync = |stack: &str| simulated(row(&r, "fig13", "mean_us", &[("app", app), ("stack", stack)]));
        assert!(fsync("bsj-opt") < fsync("vanilla"), "{app}: {} vs {}", fsync("bsj-opt"), fsync("vanilla"));
    }
    for metric in ["t_d2_us", "t_jd_us", "t_sched_us"] {
        assert!(simulated(row(&r, "fig15b", metric, &[("app", "bayes"), ("stack", "bsj-opt")])) < 0.5, "{metric}");
    }
    assert_eq!(rows(&r, "fig15b", "t_d1_us").len(), 5);
    // Fig. 14(b): the apps lose no throughput beside fillsync either. Fig. 18: SelectISR's polling keeps a
    // core busy for readrandom; BSJ-Opt's interrupts leave most of it idle.
    assert_eq!(rows(&r, "fig14b", "throughput_vs_vanilla").len(), 8);
    assert!(simulated(row(&r, "fig14b", "max_loss_pct", &[("app", "all")])) <= 6.0);
    let cpu = |bench, stack| simulated(row(&r, "fig18", "cpu_pct", &[("bench", bench), ("stack", stack)]));
    assert!(cpu("readrandom", "selectisr") > 95.0 && cpu("readrandom", "bsj-opt") < 80.0);
    assert_eq!(rows(&r, "fig18", "requests_per_s").len(), 4);
    assert_eq!(rows(&r, "fig19b", "mean_us").len(), 2);
    // Same seed, same bytes; another seed, other bytes.
    assert_eq!(json(&["reproduce", "fastresponse22"]), r, "two reproductions with the same seed differ");
    assert_ne!(json(&["reproduce", "fastresponse22", "--seed", "2"])["rows"], r["rows"]);
    ullsim(["reproduce", "fastresponse22", "--mixes", "2"])
        .fails_with(&["--mixes: not used by fastresponse22", "--all, --duration, --seed and --set"]);
    ullsim(["reproduce", "fastresponse22", "--duration", "0s"]).fails_with(&["--duration"]);
    // Too short for Bayes to finish a request: a clear error, never a NaN row passed off as a result.
    ullsim(["reproduce", "fastresponse22", "--duration", "20ms"]).fails_with(&[
        "fig14a",
        "not a finite number",
        "a longer --duration",
    ]);
    ullsim(["reproduce", "fastresponse22", "--set", "host.nope=1"]).fails_with(&["fastresponse22", "host.nope"]);
    // Its runs have different flows: a --set naming a flow goes to the runs that have it (db_bench's clock on
    // the read path's readrandom changes the read rows), and one naming a flow no run has is an error.
    // (Not shorter than the subset's 400 ms: the apps' bursts come ~0.3 s apart, and a run without one has
    // no throughput to compare.)
    let short = ["reproduce", "fastresponse22", "--duration", "400ms"];
    let submit = json(&[&short[..], &["--set", "flow.readrandom.latency_from=submit"]].concat());
    assert_ne!(submit["rows"], json(&short)["rows"], "the override reached no run");
    ullsim([&short[..], &["--set", "flow.readrandomx.latency_from=submit"]].concat())
        .fails_with(&["flow.readrandomx", "no run of this reproduction has a flow named"]);
}

#[test]
fn reproduce_aios19_compares_both_stacks_on_every_workload_and_aios_is_ahead() {
    // The CI-sized subset: 4 KiB and 64 KiB fio jobs, the RocksDB, Filebench and OLTP models, 100 ms each.
    let text = ullsim(["reproduce", "aios19"]).ok();
    assert!(text.stdout.contains("abstract") && text.stdout.contains("single-digit"), "{}", text.stdout);
    let r = json(&["reproduce", "aios19"]);
    check_layout(&r, "aios19");
    for bs in ["4k", "64k"] {
        for op in ["randread", "write+fsync"] {
            let latency =
                |stack| simulated(row(&r, "fio", "latency_mean_us", &[("bs", bs), ("op", op), ("stack", stack)]));
            assert!(latency("aios") < latency("vanilla"), "{bs} {op}");
            assert!(simulated(row(&r, "fio", "latency_cut_pct", &[("bs", bs), ("op", op)])) > 5.0, "{bs} {op}");
        }
    }
    for (figure, bench) in [
        ("rocksdb", "readrandom"),
        ("rocksdb", "fillsync"),
        ("rocksdb", "readwhilewriting"),
        ("filebench-oltp", "varmail"),
        ("filebench-oltp", "oltp"),
    ] {
        assert!(simulated(row(&r, figure, "ops_gain_pct", &[("bench", bench)])) > 5.0, "{bench}");
    }
    // The abstract's ranges: six rows with the paper's bounds, the lowest below the highest.
    let abstract_rows = rows(&r, "abstract", "fio_latency_cut_min_pct");
    assert_eq!(abstract_rows[0]["paper"], 15.0);
    for name in ["fio_latency_cut", "rocksdb_ops_gain", "filebench_oltp_ops_gain"] {
        let lo = simulated(row(&r, "abstract", &format!("{name}_min_pct"), &[]));
        let hi = simulated(row(&r, "abstract", &format!("{name}_max_pct"), &[]));
        assert!(0.0 < lo && lo <= hi, "{name}: {lo} {hi}");
    }
    assert_eq!(json(&["reproduce", "aios19"]), r, "two reproductions with the same seed differ");
    ullsim(["reproduce", "aios19", "--load", "2"]).fails_with(&["--load: not used by aios19"]);
    ullsim(["reproduce", "aios19", "--set", "host.fs.aios=maybe"]).fails_with(&["aios19", "host.fs.aios"]);
}

#[test]
fn reproduce_flashshare18_runs_every_stack_beside_each_offline_app_and_the_mechanisms_act() {
    // The CI-sized subset: Apache beside Index and PageRank, 300 ms after a 100 ms warm-up (`--all` runs
    // every pair of Table 3).
    let text = ullsim(["reproduce", "flashshare18"]).ok();
    assert!(text.stdout.contains("fig11") && text.stdout.contains("simulated"), "{}", text.stdout);
    let r = json(&["reproduce", "flashshare18"]);
    check_layout(&r, "flashshare18");
    let stacks = ["vanilla", "cacheopt", "kernelopt", "selectisr", "xler", "dedcore"];
    for offline in ["index", "pr"] {
        for stack in stacks {
            let s = [("online", "ap"), ("offline", offline), ("stack", stack)];
            // Apache's response is its CPU (Table 3's instructions) plus one 24 KB read: more than the CPU.
            let mean = simulated(row(&r, "fig11", "mean_us", &s));
            let io = simulated(row(&r, "fig11", "io_mean_us", &s));
            assert!(mean > 700.0 && io > 3.0 && io < mean, "{offline} {stack}: {mean} {io}");
            assert!(simulated(row(&r, "fig12", "p99_us", &s)) >= mean * 0.99, "{offline} {stack}");
        }
    }
    // The averages carry the paper's reductions beside the simulated ones.
    let average = row(&r, "fig11", "mean_vs_vanilla", &[("online", "average"), ("stack", "xler")]);
    assert_eq!(average["paper"], 0.78);
    assert_eq!(rows(&r, "fig12", "p99_vs_vanilla").len(), 2 * 5 + 4);
    assert_eq!(rows(&r, "fig13", "mean_vs_dedcore").len(), 1);
    // Fig. 15(b): polling takes the interrupt, the wake-up and the context switch out of a critical I/O's
    // completion; Fig. 16(d): fewer context switches.
    assert!(simulated(row(&r, "fig15b", "io_completion_cut_us", &[("stack", "selectisr")])) > 1.0);
    assert!(simulated(row(&r, "fig16d", "context_switches_ratio", &[])) < 1.0);
    // XLER: the accelerator takes critical requests around blk-mq.
    assert_eq!(simulated(row(&r, "fig15b", "block_layer_us", &[("stack", "xler")])), 0.0);
    // Fig. 14: the offline apps lose little (the paper: at most 4%).
    assert!(simulated(row(&r, "fig14", "worst_loss_pct", &[("offline", "all")])) < 5.0);
    // Fig. 18: the offline apps read mostly in sequence, so reading ahead raises the hit rate a cache without
    // it cannot have; Apache's random reads do not hit.
    for offline in ["index", "pr"] {
        let hit = |design| simulated(row(&r, "fig18", "hit_rate", &[("offline", offline), ("design", design)]));
        assert!(hit("uni-128") > hit("uni-no") + 0.2 && hit("split-thr") > hit("uni-no") + 0.1, "{offline}");
        assert!(hit("split-lat") < 0.05, "{offline}");
    }
    // Fig. 19: the split gives each class a share of the ways.
    let share = simulated(row(&r, "fig19", "critical_cache_share", &[("offline", "pr")]));
    assert!(share > 0.0 && share < 1.0, "{share}");
    // The baseline the platform (flashshare18-gem5) and the app models are calibrated to, each within 10% of
    // the paper: Apache alone at 400 requests a second (§1, p99 0.8 ms) and, beside Index under Vanilla, the
    // block layer's 39 us and the SSD access's 29 us (Fig. 15(b)).
    let alone = [("offline", "alone"), ("rate", "400"), ("stack", "vanilla")];
    let vanilla = [("offline", "index"), ("stack", "vanilla")];
    for (figure, metric, setting) in [
        ("load_curve", "p99_us", &alone[..]),
        ("fig15b", "block_layer_us", &vanilla[..]),
        ("fig15b", "ssd_access_us", &vanilla[..]),
    ] {
        let base = row(&r, figure, metric, setting);
        assert_eq!((&base["role"], &base["verdict"]), (&Value::from("calibrated"), &Value::from("fitted")), "{base}");
    }
    assert_eq!(json(&["reproduce", "flashshare18"]), r, "two reproductions with the same seed differ");
    ullsim(["reproduce", "flashshare18", "--classes", "table2"]).fails_with(&["--classes: not used by flashshare18"]);
    ullsim(["reproduce", "flashshare18", "--set", "device.cache.read_policy=lru"])
        .fails_with(&["flashshare18", "device.cache.read_policy"]);
}

/// `reproduce all` runs every paper's subset and ends with one scorecard whose lines are the papers' scores;
/// the options only some papers take are refused, as is --html.
#[test]
fn reproduce_all_runs_every_paper_and_prints_one_scorecard() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("all.json");
    let out = ullsim(["reproduce", "all", "--json", path.to_str().unwrap()]).ok();
    let card: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let names = ["aios19", "fastresponse22", "flashshare18", "flin18", "hotstorage23"];
    let reproductions = card["reproductions"].as_array().expect("reproductions");
    let scorecard = card["scorecard"].as_array().expect("scorecard");
    assert_eq!(reproductions.len(), names.len());
    assert_eq!(scorecard.len(), names.len());
    for ((name, reproduction), line) in names.iter().zip(reproductions).zip(scorecard) {
        check_layout(reproduction, name);
        assert_eq!(line["paper"], *name);
        assert_eq!(line["score"], reproduction["score"]);
        assert_eq!(line["headline_figures"], reproduction["headline"]);
        // The table's line for the paper: its headline rows, then close, direction, off and far.
        let cells: Vec<String> = out
            .stdout
            .lines()
            .find(|l| l.starts_with(name) && !l.contains('('))
            .unwrap_or_else(|| panic!("no scorecard line for {name}: {}", out.stdout))
            .split_whitespace()
            .map(str::to_string)
            .collect();
        let h = &line["score"]["headline"];
        let want: Vec<String> =
            ["rows", "close", "direction", "off", "far"].iter().map(|k| h[*k].to_string()).collect();
        assert_eq!(cells[1..6], want[..], "{name}: {cells:?}");
    }
    assert!(out.stdout.contains("\nscorecard: predicted rows"), "{}", out.stdout);
    for (flag, value) in [("--duration", "10ms"), ("--mixes", "1"), ("--load", "2")] {
        ullsim(["reproduce", "all", flag, value]).fails_with(&[&format!("{flag}: not used by `reproduce all`")]);
    }
    ullsim(["reproduce", "all", "--html", dir.path().join("x.html").to_str().unwrap()])
        .fails_with(&["--html: `reproduce all` writes no report"]);
}
