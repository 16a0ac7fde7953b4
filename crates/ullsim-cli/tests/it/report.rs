//! End-to-end tests of the HTML report (`ullsim report`, `ullsim run --html`, `ullsim compare --html`,
//! `ullsim reproduce --html`): one self-contained document that fetches nothing, the charts the results call
//! for, every flow and variant named, the same bytes for the same input, and a clear error for a JSON that is
//! none of the layouts.

use crate::common;

use std::path::Path;

use common::ullsim;

/// A small two-flow scenario; `name` of the first flow is given so that markup in names can be tested.
fn scenario(dir: &Path, reader_name: &str, extra: &str) -> std::path::PathBuf {
    let path = dir.join("two-flows.toml");
    let text = format!(
        "name = \"report test\"\nseed = 3\n\n[run]\nduration = \"20ms\"\nwarmup = \"2ms\"\n\n{extra}\n\n\
         [device]\npreset = \"znand-ull\"\n\n\
         [[flow]]\nname = \"{reader_name}\"\nclass = \"critical\"\nrw = \"randread\"\nbs = \"4k\"\niodepth = 1\n\n\
         [[flow]]\nname = \"writer\"\nrw = \"write\"\nbs = \"128k\"\niodepth = 8\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The page is one HTML document that loads nothing: no URL, no script, no external source or style sheet.
fn assert_self_contained(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>\n"), "not an HTML document: {}", &html[..html.len().min(200)]);
    assert!(html.trim_end().ends_with("</html>"));
    assert_eq!(html.matches("<html").count(), 1, "more than one document");
    for forbidden in ["http://", "https://", "src=", "<script", "<link", "@import", "url(", "href=\"//"] {
        assert!(!html.contains(forbidden), "the report refers to something outside itself: {forbidden:?}");
    }
    assert_eq!(html.matches("<svg").count(), html.matches("</svg>").count(), "an SVG element is not closed");
    for bad_number in ["NaN", "inf\"", "=\"-inf", "=\"inf"] {
        assert!(!html.contains(bad_number), "a chart holds a non-finite number ({bad_number})");
    }
}

/// `ullsim report JSON -o HTML`.
fn report(json: &Path, html: &Path) -> common::Run {
    ullsim(["report".as_ref(), json.as_os_str(), "-o".as_ref(), html.as_os_str()])
}

fn chart_count(html: &str) -> usize {
    html.matches("<svg").count()
}

#[test]
fn run_html_is_self_contained_has_every_chart_and_is_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let path =
        scenario(dir.path(), "reader <&> \\\"one\\\"", "[metrics]\nfairness = true\ntimeseries_interval = \"2ms\"");
    let html_path = dir.path().join("report.html");
    let json_path = dir.path().join("results.json");
    ullsim([
        "run".as_ref(),
        path.as_os_str(),
        "--html".as_ref(),
        html_path.as_os_str(),
        "--json".as_ref(),
        json_path.as_os_str(),
        "-q".as_ref(),
    ])
    .ok();
    let html = read(&html_path);
    assert_self_contained(&html);
    // Latency CDF, breakdown, slowdown, and the three time series (IOPS, latency, queue depth).
    assert_eq!(chart_count(&html), 6, "expected 6 charts");
    for heading in ["Latency CDF", "Where the time goes", "Slowdown and fairness", "Time series", "Device", "Host"] {
        assert!(html.contains(&format!("<h2>{heading}</h2>")), "no section {heading:?}");
    }
    // Every flow is named, its markup escaped (the raw name never appears).
    assert!(html.contains("reader &lt;&amp;&gt; &quot;one&quot;"), "the reader's name is missing or unescaped");
    assert!(!html.contains("reader <&>"), "a flow name went into the page unescaped");
    assert!(html.contains(">writer<"), "the writer is not named");
    // Each flow's CDF has a marker per percentile, min and max (8 each), with its latency in the tooltip.
    assert_eq!(html.matches("<circle").count(), 16, "expected 8 CDF markers per flow");
    assert!(html.contains("writer p99: "), "no tooltip for the writer's p99");
    assert!(
        html.contains("drawn from the reported percentiles"),
        "the CDF's caption does not say what it is drawn from"
    );

    // The same run gives the same bytes; `ullsim report` on its JSON gives the same page.
    let again = dir.path().join("again.html");
    ullsim(["run".as_ref(), path.as_os_str(), "--html".as_ref(), again.as_os_str(), "-q".as_ref()]).ok();
    assert!(read(&again) == html, "two runs of the same scenario gave different reports");
    let from_json = dir.path().join("from-json.html");
    report(&json_path, &from_json).ok();
    assert!(read(&from_json) == html, "ullsim report on the results JSON differs from run --html");
}

#[test]
fn results_without_fairness_or_timeseries_have_only_the_cdf_and_the_breakdown() {
    let dir = tempfile::tempdir().unwrap();
    let path = scenario(dir.path(), "reader", "");
    let html_path = dir.path().join("report.html");
    ullsim(["run".as_ref(), path.as_os_str(), "--html".as_ref(), html_path.as_os_str(), "-q".as_ref()]).ok();
    let html = read(&html_path);
    assert_self_contained(&html);
    assert_eq!(chart_count(&html), 2, "expected the CDF and the breakdown only");
    assert!(!html.contains("<h2>Slowdown and fairness</h2>") && !html.contains("<h2>Time series</h2>"));
    // The breakdown's legend names all nine parts.
    for part in ["syscall", "page cache", "file system", "block layer", "driver", "device queued", "device service"] {
        assert!(html.contains(&format!(">{part}</text>")), "the breakdown's legend lacks {part:?}");
    }
}

#[test]
fn reproduction_report_has_one_section_and_chart_per_figure() {
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("aios19.json");
    let html_path = dir.path().join("aios19.html");
    ullsim([
        "reproduce".as_ref(),
        "aios19".as_ref(),
        "--json".as_ref(),
        json_path.as_os_str(),
        "--html".as_ref(),
        html_path.as_os_str(),
        "-q".as_ref(),
    ])
    .ok();
    let reproduction: serde_json::Value = serde_json::from_str(&read(&json_path)).unwrap();
    let mut figures: Vec<&str> =
        reproduction["rows"].as_array().unwrap().iter().map(|r| r["figure"].as_str().unwrap()).collect();
    figures.dedup();
    figures.sort();
    figures.dedup();
    assert!(figures.len() >= 2, "aios19 should have several figures: {figures:?}");
    let html = read(&html_path);
    assert_self_contained(&html);
    assert_eq!(html.matches("<section class=\"figure\"").count(), figures.len(), "one section per figure");
    assert_eq!(chart_count(&html), figures.len(), "one chart per figure");
    for figure in &figures {
        assert!(html.contains(&format!("<h2>{figure}</h2>")), "no section for figure {figure}");
    }
    // Rows with a paper value draw a paper bar beside the simulated one.
    let with_paper = reproduction["rows"].as_array().unwrap().iter().filter(|r| !r["paper"].is_null()).count();
    assert!(with_paper > 0);
    assert_eq!(html.matches(": paper value ").count(), with_paper, "one paper bar per row with a paper value");

    let again = dir.path().join("again.html");
    report(&json_path, &again).ok();
    assert!(read(&again) == html, "ullsim report on the reproduction JSON differs from reproduce --html");
}

#[test]
fn a_json_that_is_neither_layout_is_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let html_path = dir.path().join("out.html");
    let other = dir.path().join("other.json");
    std::fs::write(&other, "{\"flows\": 3, \"rows\": null}\n").unwrap();
    report(&other, &html_path).fails_with(&[
        "other.json",
        "neither kind of ullsim JSON",
        "expected ullsim results",
        "a comparison (`ullsim compare --json`",
        "a reproduction",
    ]);
    let not_json = dir.path().join("broken.json");
    std::fs::write(&not_json, "{\"flows\": [").unwrap();
    report(&not_json, &html_path).fails_with(&["broken.json", "not valid JSON", "expected ullsim results"]);
    let missing = dir.path().join("missing.json");
    report(&missing, &html_path).fails_with(&["missing.json", "cannot read"]);
    // A results file with a malformed flow says which.
    let bad_flow = dir.path().join("bad-flow.json");
    std::fs::write(&bad_flow, "{\"schema_version\": 3, \"flows\": [{\"name\": \"a\"}]}").unwrap();
    report(&bad_flow, &html_path).fails_with(&["bad-flow.json", "flow a has no `latency_ns`"]);
    // So does a comparison with a malformed variant.
    let bad_variant = dir.path().join("bad-variant.json");
    std::fs::write(
        &bad_variant,
        "{\"vary\": [{\"key\": \"k\", \"values\": [\"1\"]}], \"variants\": [{\"overrides\": {}}]}",
    )
    .unwrap();
    report(&bad_variant, &html_path).fails_with(&["bad-variant.json", "comparison: variants[0].overrides has no `k`"]);
    assert!(!html_path.exists(), "a failed report wrote a file");
}

#[test]
fn compare_html_puts_the_variants_side_by_side_and_report_makes_the_same_page() {
    let dir = tempfile::tempdir().unwrap();
    let path = scenario(dir.path(), "reader", "");
    let json_path = dir.path().join("compare.json");
    let html_path = dir.path().join("compare.html");
    let utf8 = |p: &Path| p.to_str().expect("temporary paths are UTF-8").to_string();
    let vary = ["--vary", "flow.reader.iodepth=1,4,16", "--vary", "host.io_scheduler=none,bfq"];
    let files = ["--json".to_string(), utf8(&json_path), "--html".to_string(), utf8(&html_path)];
    ullsim(
        ["compare".to_string(), utf8(&path), "-q".to_string()].into_iter().chain(vary.map(String::from)).chain(files),
    )
    .ok();
    let html = read(&html_path);
    assert_self_contained(&html);
    let headings = ["Variants", "IOPS", "Latency", "Latency CDF", "Where the time goes"];
    assert!(headings.iter().all(|h| html.contains(&format!("<h2>{h}</h2>"))), "a section is missing");
    // IOPS, mean and p99 latency, one CDF per flow (six variants fit one chart), one breakdown per flow.
    assert_eq!(chart_count(&html), 6, "expected 6 charts");
    // Every variant is named in every chart of every flow (by the keys' last parts), in --vary order.
    for depth in ["1", "4", "16"] {
        for scheduler in ["none", "bfq"] {
            let variant = format!("iodepth={depth} io_scheduler={scheduler}");
            for flow in ["reader", "writer"] {
                for tooltip in [format!("{variant}, {flow}: "), format!("{variant}, {flow}: p99 latency ")] {
                    assert!(html.contains(&tooltip), "no bar {tooltip:?}");
                }
                assert!(html.contains(&format!("{variant}: syscall ")), "no breakdown of {variant}");
            }
            assert_eq!(html.matches(&format!("{variant} p99: ")).count(), 2, "{variant}'s CDF in each flow's chart");
        }
    }
    // A CDF per variant and flow, a marker per percentile, min and max.
    assert_eq!(html.matches("<circle").count(), 6 * 2 * 8);
    // The table has a row per variant and flow, with the varied keys whole.
    assert!(html.contains("<th class=\"text\">flow.reader.iodepth</th><th class=\"text\">host.io_scheduler</th>"));
    assert_eq!(html.matches("<td class=\"text\">writer</td>").count(), 6);

    // `ullsim report` on the comparison's JSON gives the same page, the output named either way.
    for args in [vec!["out.html"], vec!["-o", "out.html"]] {
        let out = dir.path().join("out.html");
        let _ = std::fs::remove_file(&out);
        let mut command: Vec<std::ffi::OsString> = vec!["report".into(), json_path.clone().into()];
        command.extend(args.iter().map(|a| if *a == "out.html" { out.clone().into() } else { a.into() }));
        ullsim(&command).ok();
        assert!(read(&out) == html, "ullsim report {args:?} on the comparison JSON differs from compare --html");
    }
    ullsim(["report", &utf8(&json_path)]).rejects_arguments_with(&["<HTML>"]);
}
