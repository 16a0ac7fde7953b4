//! The report of a calibration (`ullsim calibrate --json`, docs/calibration.md): per job family (one fio
//! `rw` and block size, the jobs varying iodepth and numjobs) and direction, latency against IOPS, the
//! measured points beside the simulated ones with the fitted values (mean solid, p99 dashed); then the
//! parameters (base, fitted, verdict, the jobs they were fitted from), the warnings and the preset file.

use std::fmt::Write;

use serde_json::Value;

use crate::svg::{colour, Chart, Scale};
use crate::{escape, figure, format_ns, format_number, format_value, number, page, table};

/// A job's figures in one direction.
#[derive(Clone, Copy, Debug)]
struct Figures {
    iops: f64,
    mean_ns: f64,
    p99_ns: Option<f64>,
}

/// One row of the fit table: a job's direction, measured and (unless the simulation failed) simulated.
#[derive(Debug)]
struct Point {
    source: String,
    iodepth: u64,
    numjobs: u64,
    measured: Figures,
    simulated: Option<Figures>,
}

impl Point {
    /// How the job differs from the others of its family.
    fn depth(&self) -> String {
        let jobs = if self.numjobs == 1 { "job" } else { "jobs" };
        format!("iodepth {}, {} {jobs}", self.iodepth, self.numjobs)
    }
}

/// The jobs of one `rw`, block size and direction.
#[derive(Debug)]
struct Family {
    rw: String,
    block_size: u64,
    direction: String,
    points: Vec<Point>,
}

impl Family {
    fn title(&self) -> String {
        format!("{} {} ({})", self.rw, bytes(self.block_size), self.direction)
    }
}

/// A block size as fio users write it: 4 KiB, 128 KiB, 1 MiB (bytes when not a whole KiB).
fn bytes(size: u64) -> String {
    if size >= 1 << 20 && size.is_multiple_of(1 << 20) {
        format!("{} MiB", size >> 20)
    } else if size >= 1 << 10 && size.is_multiple_of(1 << 10) {
        format!("{} KiB", size >> 10)
    } else {
        format!("{size} B")
    }
}

fn figures(value: &Value, what: &str) -> Result<Figures, String> {
    let required = |key: &str| number(&value[key]).ok_or_else(|| format!("{what} has no finite `{key}`"));
    Ok(Figures { iops: required("iops")?, mean_ns: required("mean_ns")?, p99_ns: number(&value["p99_ns"]) })
}

/// The rows of the calibration grouped into families, in the order the rows first name them.
fn families(rows: &[Value]) -> Result<Vec<Family>, String> {
    let mut families: Vec<Family> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let name = format!("rows[{i}]");
        let text = |key: &str| row[key].as_str().ok_or_else(|| format!("{name} has no `{key}` text"));
        let whole = |key: &str| row["shape"][key].as_u64().ok_or_else(|| format!("{name} has no `shape.{key}`"));
        let (rw, direction, block_size) = (text("rw")?, text("direction")?, whole("block_size")?);
        let simulated = match &row["simulated"] {
            Value::Null => None,
            value => Some(figures(value, &format!("{name}.simulated"))?),
        };
        let point = Point {
            source: text("source")?.to_string(),
            iodepth: whole("iodepth")?,
            numjobs: whole("numjobs")?,
            measured: figures(&row["measured"], &format!("{name}.measured"))?,
            simulated,
        };
        match families.iter_mut().find(|f| f.rw == rw && f.block_size == block_size && f.direction == direction) {
            Some(family) => family.points.push(point),
            None => families.push(Family {
                rw: rw.to_string(),
                block_size,
                direction: direction.to_string(),
                points: vec![point],
            }),
        }
    }
    for family in &mut families {
        // The curve runs from the lightest load to the heaviest.
        family.points.sort_by_key(|p| (p.iodepth * p.numjobs, p.numjobs));
    }
    Ok(families)
}

/// Draws one side (measured or simulated) of a family's chart: the mean as a solid line, the p99 dashed;
/// measured points are circles, simulated ones squares, so the two tell apart in grey-scale print too.
fn draw_side(chart: &mut Chart, x: &Scale, y: &Scale, family: &Family, measured: bool) {
    let (side, fill) = if measured { ("measured", colour(0)) } else { ("simulated", colour(1)) };
    let points: Vec<(&Point, Figures)> = family
        .points
        .iter()
        .filter_map(|p| if measured { Some((p, p.measured)) } else { p.simulated.map(|s| (p, s)) })
        .collect();
    for (p99, dash) in [(false, ""), (true, r#" stroke-dasharray="6 4""#)] {
        let mut line = Vec::new();
        for (point, f) in &points {
            let Some(latency) = (if p99 { f.p99_ns } else { Some(f.mean_ns) }) else { continue };
            let (px, py) = (chart.x(x, f.iops), chart.y(y, latency));
            line.push((px, py));
            let tooltip = format!(
                "{side} {}, {}: {} IOPS, {} {}",
                point.source,
                point.depth(),
                format_number(f.iops),
                if p99 { "p99" } else { "mean" },
                format_ns(latency)
            );
            let radius = if p99 { 2.5 } else { 3.5 };
            if measured {
                chart.circle(px, py, radius, fill, Some(&tooltip));
            } else {
                chart.rect(px - radius, py - radius, 2.0 * radius, 2.0 * radius, fill, Some(&tooltip));
            }
        }
        chart.polyline(&line, fill, dash);
    }
}

/// The chart of a family: latency (log) against IOPS.
fn family_chart(family: &Family) -> Option<String> {
    let all = || family.points.iter().flat_map(|p| [Some(p.measured), p.simulated]).flatten();
    let y = Scale::log_of(all().flat_map(|f| [Some(f.mean_ns), f.p99_ns]).flatten())?;
    let x = Scale::linear_from_zero(all().map(|f| f.iops));
    let mut chart = Chart::new(900.0, 360.0, 80.0, 40.0, 0.0, 45.0);
    let legend = [
        ("measured: mean (circles, solid), p99 (dashed)".to_string(), colour(0)),
        ("simulated with the fitted values: mean (squares, solid), p99 (dashed)".to_string(), colour(1)),
    ];
    chart.top = chart.legend(&legend) + 8.0;
    chart.y_axis_ticks(&y, format_ns, "latency (log scale)");
    chart.x_axis(&x, format_number, "IOPS");
    draw_side(&mut chart, &x, &y, family, true);
    draw_side(&mut chart, &x, &y, family, false);
    Some(chart.finish(&format!("{}: latency against IOPS, measured and simulated", family.title())))
}

/// The family's points as a table (the chart's numbers, and what a reader without SVG sees).
fn family_table(family: &Family) -> String {
    let cell = |v: Option<f64>, f: fn(f64) -> String| v.map_or("-".to_string(), f);
    let rows: Vec<Vec<String>> = family
        .points
        .iter()
        .map(|p| {
            let s = p.simulated;
            vec![
                p.source.clone(),
                p.iodepth.to_string(),
                p.numjobs.to_string(),
                format_number(p.measured.iops),
                cell(s.map(|s| s.iops), format_number),
                format_ns(p.measured.mean_ns),
                cell(s.map(|s| s.mean_ns), format_ns),
                cell(p.measured.p99_ns, format_ns),
                cell(s.and_then(|s| s.p99_ns), format_ns),
            ]
        })
        .collect();
    table(&["job", "iodepth", "numjobs", "IOPS", "IOPS sim", "mean", "mean sim", "p99", "p99 sim"], &rows, &[true])
}

fn parameters_table(parameters: &[Value]) -> Result<String, String> {
    let mut rows = Vec::new();
    for (i, p) in parameters.iter().enumerate() {
        let key = p["key"].as_str().ok_or_else(|| format!("outcome.parameters[{i}] has no `key`"))?;
        let verdict = p["verdict"].as_str().unwrap_or("-");
        // A choice's value is its index: its text is what the preset writes.
        let shown = |text: &str, value: &str| match p[text].as_str() {
            Some(text) if text.starts_with('"') || text == "true" || text == "false" => text.to_string(),
            _ => format_value(&p[value]),
        };
        let fitted = if verdict == "fitted" { shown("text", "value") } else { "-".to_string() };
        let from: Vec<String> = p["from"].as_array().into_iter().flatten().map(format_value).collect();
        let verdict = match verdict {
            "no_data" => "no data: no job measures it",
            "flat" => "not binding: the jobs do not depend on it",
            other => other,
        };
        rows.push(vec![
            key.to_string(),
            shown("base_text", "base"),
            fitted,
            verdict.to_string(),
            if from.is_empty() { "-".to_string() } else { from.join(", ") },
        ]);
    }
    Ok(table(&["parameter", "base", "fitted", "verdict", "from"], &rows, &[true, false, false, true, true]))
}

/// The HTML report of a calibration's JSON.
pub fn report(json: &Value) -> Result<String, String> {
    let base = json["base"].as_str().ok_or("a calibration without a `base` text")?;
    let rows = json["rows"].as_array().ok_or("a calibration without a `rows` array")?;
    let parameters =
        json["outcome"]["parameters"].as_array().ok_or("a calibration without an `outcome.parameters` array")?;
    let families = families(rows)?;
    let mut body = String::new();
    let _ = writeln!(body, "<h1>Calibration over {}</h1>", escape(base));
    let files: Vec<String> = json["files"].as_array().into_iter().flatten().map(format_value).collect();
    let _ = writeln!(
        body,
        "<p>Fitted from {} ({} jobs' directions); error {} before, {} after the fit, {} simulations of the jobs.</p>",
        escape(&files.join(", ")),
        rows.len(),
        format_value(&json["outcome"]["error_before"]),
        format_value(&json["outcome"]["error_after"]),
        format_value(&json["outcome"]["evaluations"]),
    );
    body.push_str("<h2>Latency against IOPS, by job family</h2>\n");
    for family in &families {
        let _ = writeln!(body, "<h3>{}</h3>", escape(&family.title()));
        match family_chart(family) {
            Some(svg) => body.push_str(&figure(
                &svg,
                "Each point a job of this family (iodepth × numjobs rising along the line); measured as fio \
                 reported it, simulated with the fitted values. Mean solid, p99 dashed; latency on a log scale.",
            )),
            None => body.push_str("<p>No latency to draw.</p>\n"),
        }
        body.push_str(&family_table(family));
    }
    body.push_str("<h2>Parameters</h2>\n");
    body.push_str(&parameters_table(parameters)?);
    body.push_str("<h2>Warnings</h2>\n");
    let warnings: Vec<String> = json["warnings"].as_array().into_iter().flatten().map(format_value).collect();
    if warnings.is_empty() {
        body.push_str("<p>None.</p>\n");
    } else {
        body.push_str("<ul class=\"warning\">\n");
        for warning in &warnings {
            let _ = writeln!(body, "<li>{}</li>", escape(warning));
        }
        body.push_str("</ul>\n");
    }
    if let Some(preset) = json["preset"].as_str() {
        let _ = writeln!(body, "<h2>The preset file</h2>\n<pre>{}</pre>", escape(preset));
    }
    Ok(page(&format!("ullsim calibration over {base}"), &body))
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::report;

    fn row(source: &str, rw: &str, bs: u64, qd: u64, jobs: u64, direction: &str, iops: f64) -> Value {
        let figures = json!({"iops": iops, "mean_ns": 1e9 / iops * qd as f64, "p99_ns": 2e9 / iops * qd as f64});
        let simulated = json!({"iops": iops * 0.9, "mean_ns": 1.1e9 / iops * qd as f64, "p99_ns": null});
        json!({"source": source, "rw": rw, "direction": direction, "decides": [],
               "shape": {"pattern": "random", "read_percent": 100, "block_size": bs, "iodepth": qd, "numjobs": jobs},
               "measured": figures, "simulated": simulated})
    }

    fn calibration(rows: Vec<Value>) -> Value {
        json!({"base": "optane-900p", "enabled": [], "files": ["a.json"], "rows": rows,
               "warnings": ["a.json: w <1>: ran 5 ms"], "preset": "base = \"optane-900p\"\n# a < b & c\n",
               "outcome": {"error_before": 0.9, "error_after": 0.5, "evaluations": 10, "parameters": [
                   {"key": "device.flash.read_ns", "base": 630.0, "value": 700.0, "verdict": "fitted",
                    "from": ["a.json: qd1"]},
                   {"key": "device.flash.program_ns", "base": 4490.0, "value": 4490.0, "verdict": "no_data",
                    "from": []},
                   {"key": "device.flash.channel_arbitration", "base": 0.0, "value": 1.0, "verdict": "fitted",
                    "text": "\"round-robin\"", "base_text": "\"fcfs\"", "from": ["a.json: qd16"]}]}})
    }

    #[test]
    fn families_group_by_rw_block_size_and_direction_and_every_row_is_drawn() {
        let rows = vec![
            row("a.json: r4k-qd16", "randread", 4096, 16, 1, "read", 400e3),
            row("a.json: r128k-qd1", "randread", 131072, 1, 1, "read", 14e3),
            row("a.json: r4k-qd1", "randread", 4096, 1, 1, "read", 80e3),
            row("a.json: r4k-qd32x4", "randread", 4096, 32, 4, "read", 500e3),
            row("a.json: mix-r", "randrw", 4096, 32, 1, "read", 300e3),
            row("a.json: mix-w", "randrw", 4096, 32, 1, "write", 100e3),
        ];
        let html = report(&calibration(rows)).unwrap();
        let titles: Vec<&str> =
            html.match_indices("<h3>").map(|(i, _)| &html[i + 4..i + html[i..].find("</h3>").unwrap()]).collect();
        assert_eq!(
            titles,
            ["randread 4 KiB (read)", "randread 128 KiB (read)", "randrw 4 KiB (read)", "randrw 4 KiB (write)"]
        );
        assert_eq!(html.matches("<svg").count(), 4);
        for source in ["r4k-qd16", "r128k-qd1", "r4k-qd1", "r4k-qd32x4", "mix-r", "mix-w"] {
            // Measured mean and p99 (circles), simulated mean (a square: no simulated p99 in these rows).
            assert_eq!(html.matches(&format!("<title>measured a.json: {source},")).count(), 2, "{source}");
            assert_eq!(html.matches(&format!("<title>simulated a.json: {source},")).count(), 1, "{source}");
        }
        // The 4 KiB family's line runs from the lightest load to the heaviest.
        let order: Vec<usize> =
            ["r4k-qd1,", "r4k-qd16,", "r4k-qd32x4,"].iter().map(|s| html.find(s).unwrap()).collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
        assert!(html.contains("stroke-dasharray"), "p99 is dashed");
        assert!(!html.contains("NaN") && !html.contains("inf"));
        assert!(!html.contains("<script"));
    }

    #[test]
    fn parameters_warnings_and_preset_are_shown_escaped() {
        let html = report(&calibration(vec![row("a.json: <job>", "randread", 4096, 1, 1, "read", 80e3)])).unwrap();
        assert!(html.contains("<td class=\"text\">device.flash.read_ns</td><td>630</td><td>700</td>"), "{html}");
        assert!(html.contains("no data: no job measures it"));
        // A choice shows as the preset writes it, not as its index.
        assert!(
            html.contains("channel_arbitration</td><td>&quot;fcfs&quot;</td><td>&quot;round-robin&quot;</td>"),
            "{html}"
        );
        assert!(html.contains("<li>a.json: w &lt;1&gt;: ran 5 ms</li>"));
        assert!(html.contains("# a &lt; b &amp; c"));
        assert!(html.contains("a.json: &lt;job&gt;") && !html.contains("<job>"));
    }

    #[test]
    fn a_row_without_its_figures_is_an_error_naming_it() {
        let mut bad = row("a.json: x", "randread", 4096, 1, 1, "read", 80e3);
        bad["measured"]["iops"] = Value::Null;
        let error = report(&calibration(vec![bad])).unwrap_err();
        assert!(error.contains("rows[0].measured has no finite `iops`"), "{error}");
        let error = report(&json!({"base": "x", "rows": [], "preset": ""})).unwrap_err();
        assert!(error.contains("outcome.parameters"), "{error}");
    }
}
