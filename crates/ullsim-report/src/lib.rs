//! Self-contained HTML reports of `ullsim` results and reproductions: one file, inline CSS and inline SVG
//! charts written here in Rust, no JavaScript, no fonts, images or styles fetched from anywhere, so it opens
//! offline in any browser and diffs as text. The same JSON gives the same bytes (no time stamps).
//!
//! [`results_report`] takes the JSON of `ullsim run --json` (docs/output.md), of `ullsim compare --json`
//! ("Comparisons"), of `ullsim reproduce --json` ("Reproductions") or of `ullsim calibrate --json`
//! (docs/calibration.md) and tells them apart by their fields.

mod bars;
mod calibration;
mod cdf;
mod comparison;
mod reproduction;
mod results;
mod svg;

use std::fmt::Write;

use serde_json::Value;

/// What a JSON is, by its top-level fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `ullsim run --json`: `schema_version` and a `flows` array.
    Results,
    /// `ullsim reproduce --json`: `paper`, `title` and a `rows` array.
    Reproduction,
    /// `ullsim compare --json`: a `vary` and a `variants` array.
    Comparison,
    /// `ullsim calibrate --json`: an `outcome` object, a `rows` array and the `preset` text.
    Calibration,
}

/// What the report reads, for error messages.
pub const EXPECTED: &str = "ullsim results (`ullsim run --json`: an object with `schema_version` and a `flows` \
                            array), a comparison (`ullsim compare --json`: an object with `vary` and `variants` \
                            arrays), a reproduction (`ullsim reproduce --json`: an object with `paper`, `title` \
                            and a `rows` array) or a calibration (`ullsim calibrate --json`: an object with \
                            `outcome`, `rows` and `preset`)";

/// Which of the three layouts `json` has, or an error saying what was expected.
pub fn kind(json: &Value) -> Result<Kind, String> {
    let Some(object) = json.as_object() else {
        return Err(format!("not a JSON object; expected {EXPECTED}"));
    };
    if object.get("flows").is_some_and(Value::is_array) && object.contains_key("schema_version") {
        Ok(Kind::Results)
    } else if object.get("rows").is_some_and(Value::is_array)
        && object.get("paper").is_some_and(Value::is_string)
        && object.get("title").is_some_and(Value::is_string)
    {
        Ok(Kind::Reproduction)
    } else if object.get("variants").is_some_and(Value::is_array) && object.get("vary").is_some_and(Value::is_array) {
        Ok(Kind::Comparison)
    } else if object.get("rows").is_some_and(Value::is_array)
        && object.get("outcome").is_some_and(Value::is_object)
        && object.get("preset").is_some_and(Value::is_string)
    {
        Ok(Kind::Calibration)
    } else {
        Err(format!("neither kind of ullsim JSON; expected {EXPECTED}"))
    }
}

/// The HTML report of a results, comparison, reproduction or calibration JSON: a whole document, or an error
/// saying what the JSON lacks.
pub fn results_report(json: &Value) -> Result<String, String> {
    match kind(json)? {
        Kind::Results => results::report(json),
        Kind::Comparison => comparison::report(json),
        Kind::Reproduction => reproduction::report(json),
        Kind::Calibration => calibration::report(json),
    }
}

/// The page around `body`: title, inline style sheet, no scripts.
fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\n{STYLE}</style>\n\
         </head>\n<body>\n{body}</body>\n</html>\n",
        escape(title)
    )
}

const STYLE: &str =
    "body { font-family: sans-serif; margin: 2em auto; max-width: 1100px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; }
th { background: #f3f3f3; } td.text, th.text { text-align: left; } td:not(.text) { white-space: nowrap; }
figure { margin: 1em 0; } figcaption { font-size: 0.9em; color: #555; max-width: 900px; }
svg { display: block; max-width: 100%; height: auto; }
.warning { color: #a40000; }
";

/// A finite number, or `None` (absent, null, not a number).
pub(crate) fn number(value: &Value) -> Option<f64> {
    value.as_f64().filter(|v| v.is_finite())
}

/// `text` with the characters HTML and XML give a meaning replaced by entities.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A number to four significant digits without trailing zeros (large ones whole), as the terminal tables.
pub(crate) fn format_number(value: f64) -> String {
    if !value.is_finite() {
        return "-".to_string();
    }
    if value == 0.0 {
        return "0".to_string();
    }
    let magnitude = value.abs().log10().floor() as i32;
    let decimals = (3 - magnitude).clamp(0, 12) as usize;
    let mut text = format!("{value:.decimals$}");
    if text.contains('.') {
        text = text.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    if text == "-0" {
        text = "0".to_string();
    }
    text
}

/// A duration in nanoseconds in the unit that suits it: ns, µs, ms or s.
pub(crate) fn format_ns(ns: f64) -> String {
    let abs = ns.abs();
    if abs >= 1e9 {
        format!("{} s", format_number(ns / 1e9))
    } else if abs >= 1e6 {
        format!("{} ms", format_number(ns / 1e6))
    } else if abs >= 1e3 {
        format!("{} µs", format_number(ns / 1e3))
    } else {
        format!("{} ns", format_number(ns))
    }
}

/// A JSON value as table text: numbers to four significant digits, strings as they are, null as `-`.
pub(crate) fn format_value(value: &Value) -> String {
    match value {
        Value::Null => "-".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => n.as_u64().map(|u| u.to_string()).unwrap_or_else(|| format_number(n.as_f64().unwrap_or(f64::NAN))),
        },
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// An HTML table with a header row; a column is left-aligned text when its flag in `text_columns` is set.
pub(crate) fn table(header: &[&str], rows: &[Vec<String>], text_columns: &[bool]) -> String {
    let class = |i: usize| if text_columns.get(i).copied().unwrap_or(false) { " class=\"text\"" } else { "" };
    let mut out = String::from("<table>\n<tr>");
    for (i, h) in header.iter().enumerate() {
        let _ = write!(out, "<th{}>{}</th>", class(i), escape(h));
    }
    out.push_str("</tr>\n");
    for row in rows {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let _ = write!(out, "<td{}>{}</td>", class(i), escape(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

/// Every scalar under `value` as (dotted key, text) pairs, in the JSON's key order; arrays are left out
/// (their items are reported by their own tables).
pub(crate) fn flatten(prefix: &str, value: &Value, out: &mut Vec<Vec<String>>) {
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                let name = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
                flatten(&name, item, out);
            }
        }
        Value::Array(_) => {}
        scalar => out.push(vec![prefix.to_string(), format_value(scalar)]),
    }
}

/// `text` cut to fit `width` pixels, with an ellipsis where it was cut (the table has it whole).
pub(crate) fn shortened(text: &str, width: f64) -> String {
    if svg::text_width(text) <= width {
        return text.to_string();
    }
    let keep = ((width / svg::text_width("m")) as usize).saturating_sub(1);
    text.chars().take(keep).chain(['…']).collect()
}

/// A figure: the chart and its caption.
pub(crate) fn figure(svg: &str, caption: &str) -> String {
    format!("<figure>\n{svg}<figcaption>{}</figcaption>\n</figure>\n", escape(caption))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_have_four_significant_digits() {
        assert_eq!(format_number(12.455), "12.46");
        assert_eq!(format_number(465066.66), "465067");
        assert_eq!(format_number(1.0), "1");
        assert_eq!(format_number(0.000123456), "0.0001235");
        assert_eq!(format_number(-3.5), "-3.5");
        assert_eq!(format_ns(16103.0), "16.1 µs");
        assert_eq!(format_ns(1311000.0), "1.311 ms");
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(escape("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;");
    }

    #[test]
    fn tells_the_layouts_apart() {
        let results = serde_json::json!({"schema_version": 3, "flows": []});
        let reproduction = serde_json::json!({"paper": "x", "title": "t", "rows": []});
        assert_eq!(kind(&results), Ok(Kind::Results));
        assert_eq!(kind(&reproduction), Ok(Kind::Reproduction));
        assert_eq!(kind(&serde_json::json!({"vary": [], "variants": []})), Ok(Kind::Comparison));
        let calibration = serde_json::json!({"outcome": {}, "rows": [], "preset": ""});
        assert_eq!(kind(&calibration), Ok(Kind::Calibration));
        assert!(kind(&serde_json::json!({"flows": 1})).unwrap_err().contains("expected ullsim results"));
        assert!(kind(&serde_json::json!([1])).is_err());
    }
}

#[cfg(test)]
mod report_tests {
    use serde_json::json;

    use super::results_report;

    fn summary(scale: u64) -> serde_json::Value {
        json!({"mean": 1.5 * scale as f64, "p50": scale, "p90": 2 * scale, "p99": 3 * scale, "p99_9": 4 * scale,
               "p99_99": 4 * scale, "p99_999": 4 * scale, "min": scale / 2, "max": 5 * scale})
    }

    fn flow(name: &str, latency: serde_json::Value) -> serde_json::Value {
        json!({"name": name, "class": "normal", "priority": "medium", "completed": 0, "iops": 0.0,
               "bandwidth_bytes_per_s": 0.0, "latency_ns": latency, "breakdown_ns": {}})
    }

    /// Holds no number a browser cannot draw.
    fn assert_finite(html: &str) {
        assert!(!html.contains("NaN") && !html.contains("inf"), "{html}");
    }

    #[test]
    fn a_flow_that_completed_nothing_is_named_but_not_drawn() {
        let results = json!({"schema_version": 3, "flows": [flow("idle", summary(0)), flow("busy", summary(10_000))]});
        let html = results_report(&results).unwrap();
        assert_finite(&html);
        assert!(html.contains("Not drawn (no completed request): idle."));
        assert_eq!(html.matches("<svg").count(), 2);
    }

    #[test]
    fn results_with_no_flow_or_no_latency_still_make_a_page() {
        let html = results_report(&json!({"schema_version": 3, "flows": []})).unwrap();
        assert_finite(&html);
        assert!(html.contains("there is no latency to draw"));
        let html = results_report(&json!({"schema_version": 3, "flows": [flow("idle", summary(0))]})).unwrap();
        assert_finite(&html);
    }

    #[test]
    fn a_results_flow_without_a_name_is_an_error_saying_which() {
        let error = results_report(&json!({"schema_version": 3, "flows": [{"latency_ns": {}}]})).unwrap_err();
        assert!(error.contains("flows[0] has no `name`"), "{error}");
    }

    #[test]
    fn reproduction_rows_with_negative_zero_and_missing_paper_values_draw() {
        let reproduction = json!({"paper": "p", "title": "T", "options": {"seed": 1, "apps": ["a", "b"]}, "notes": ["n"],
        "rows": [
            {"figure": "f1", "setting": {"x": "1"}, "metric": "gain_pct", "paper": -5.0, "simulated": 3.0},
            {"figure": "f1", "setting": {"x": "2"}, "metric": "gain_pct", "paper": 0.0, "simulated": 0.0},
            {"figure": "f2", "setting": {}, "metric": "iops", "paper": null, "simulated": 1e6}
        ]});
        let html = results_report(&reproduction).unwrap();
        assert_finite(&html);
        assert_eq!(html.matches("<section class=\"figure\"").count(), 2);
        assert_eq!(html.matches("<svg").count(), 2);
        assert!(html.contains("[&quot;a&quot;,&quot;b&quot;]"), "list options are shown");
        let error = results_report(&json!({"paper": "p", "title": "T", "rows": [{"figure": "f", "simulated": "x"}]}))
            .unwrap_err();
        assert!(error.contains("rows[0] has no finite `simulated` number"), "{error}");
        // Written before roles: no score line, "-" for role and verdict.
        assert!(!html.contains("Score (rows") && html.contains("<td class=\"text\">-</td><td class=\"text\">-</td>"));
    }

    #[test]
    fn a_reproduction_shows_its_score_and_each_rows_role_and_verdict() {
        let tally = json!({"rows": 2, "close": 1, "direction": 1, "off": 0, "far": 0});
        let reproduction = json!({"paper": "p", "title": "T", "options": {}, "notes": [],
        "rows": [
            {"figure": "f1", "setting": {"stack": "vanilla"}, "metric": "mean_us", "paper": 10.0, "simulated": 10.5,
             "role": "calibrated", "verdict": "fitted"},
            {"figure": "f1", "setting": {"stack": "new"}, "metric": "mean_cut_pct", "paper": 30.0, "simulated": 50.0,
             "role": "predicted", "verdict": "direction", "spread": {"min": 40.0, "max": 60.0, "seeds": 3}}
        ],
        "headline": ["f1"],
        "score": {"predicted": tally, "headline": tally, "calibrated": {"rows": 1, "fitted": 1}}});
        let html = results_report(&reproduction).unwrap();
        assert!(
            html.contains(
                "headline 2 (close 1, direction 1, off 0, far 0); all predicted 2 (close 1, \
                               direction 1, off 0, far 0); calibrated 1 (within 10%: 1)"
            ),
            "{html}"
        );
        assert!(html.contains("<td class=\"text\">calibrated</td><td class=\"text\">fitted</td>"), "{html}");
        assert!(html.contains("<td class=\"text\">predicted</td><td class=\"text\">direction</td>"), "{html}");
        assert!(html.contains("<th>spread over seeds</th>"), "{html}");
        assert!(html.contains(">[40, 60]/3</td>"), "the seeds' range is shown: {html}");
    }
}
