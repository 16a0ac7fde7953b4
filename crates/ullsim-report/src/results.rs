//! The report of one run's results (`ullsim run --json`): flows, latency CDFs, the per-layer breakdown,
//! slowdowns, time series, device and host.

use std::fmt::Write;

use serde_json::Value;

use crate::cdf::{self, Curve};
use crate::svg::{colour, number_label, text_width, Chart, Scale};
use crate::{escape, figure, flatten, format_ns, format_number, format_value, number, page, shortened, table};

/// The nine parts of `breakdown_ns`, in the order of a request's path, with their labels.
const BREAKDOWN_PARTS: [(&str, &str); 9] = [
    ("syscall", "syscall"),
    ("page_cache", "page cache"),
    ("file_system", "file system"),
    ("block", "block layer"),
    ("driver", "driver"),
    ("device_queued", "device queued"),
    ("device_service", "device service"),
    ("completion", "completion"),
    ("cpu_wait", "CPU wait"),
];

/// One flow as the report needs it.
pub(crate) struct Flow<'a> {
    pub name: String,
    pub json: &'a Value,
}

/// The flows of one run's results, or an error naming `what` (e.g. `results`) and the flow that lacks a
/// field.
pub(crate) fn flows<'a>(json: &'a Value, what: &str) -> Result<Vec<Flow<'a>>, String> {
    let flows_json = json["flows"].as_array().ok_or_else(|| format!("{what}: `flows` is not an array"))?;
    let mut flows = Vec::new();
    for (i, flow) in flows_json.iter().enumerate() {
        let name = flow["name"].as_str().ok_or_else(|| format!("{what}: flows[{i}] has no `name` string"))?;
        if !flow["latency_ns"].is_object() {
            return Err(format!("{what}: flow {name} has no `latency_ns` object"));
        }
        flows.push(Flow { name: name.to_string(), json: flow });
    }
    Ok(flows)
}

pub fn report(json: &Value) -> Result<String, String> {
    let flows = flows(json, "results")?;
    let scenario = &json["scenario"];
    let name = scenario["name"].as_str().unwrap_or("ullsim results");
    let mut body = String::new();
    let _ = writeln!(body, "<h1>{}</h1>", escape(name));
    let _ = writeln!(
        body,
        "<p>Device preset {}, host stack {}, seed {}; measured from {} to {} (simulated).</p>",
        escape(&format_value(&scenario["preset"])),
        escape(&format_value(&scenario["stack"])),
        escape(&format_value(&scenario["seed"])),
        format_ns(number(&json["window"]["start_ns"]).unwrap_or(0.0)),
        format_ns(number(&json["window"]["end_ns"]).unwrap_or(0.0)),
    );
    if let Some(warnings) = json["warnings"].as_array().filter(|w| !w.is_empty()) {
        body.push_str("<ul>\n");
        for warning in warnings {
            let _ = writeln!(body, "<li class=\"warning\">{}</li>", escape(&format_value(warning)));
        }
        body.push_str("</ul>\n");
    }
    body.push_str("<h2>Flows</h2>\n");
    body.push_str(&flow_table(&flows));
    body.push_str("<h2>Latency CDF</h2>\n");
    body.push_str(&latency_cdf(&flows));
    body.push_str("<h2>Where the time goes</h2>\n");
    body.push_str(&breakdown(&flows, "flow", "Per-layer latency breakdown per flow"));
    if json["fairness"].is_object() {
        body.push_str("<h2>Slowdown and fairness</h2>\n");
        body.push_str(&fairness(&flows, &json["fairness"]));
    }
    if json["timeseries"].is_object() {
        body.push_str("<h2>Time series</h2>\n");
        body.push_str(&timeseries(&json["timeseries"]));
    }
    body.push_str("<h2>Device</h2>\n");
    body.push_str(&summary_table(&json["device"]));
    body.push_str("<h2>Host</h2>\n");
    body.push_str(&host(&json["host"], &json["energy"]));
    Ok(page(name, &body))
}

fn flow_table(flows: &[Flow]) -> String {
    let mut header = vec!["flow", "class", "priority"];
    header.extend(FLOW_FIGURES);
    let rows: Vec<Vec<String>> = flows
        .iter()
        .map(|flow| {
            let mut row =
                vec![flow.name.clone(), format_value(&flow.json["class"]), format_value(&flow.json["priority"])];
            row.extend(flow.figures());
            row
        })
        .collect();
    table(&header, &rows, &[true, true, true])
}

/// The headers of [`Flow::figures`]; `slowdown` last (a comparison without fairness leaves it out).
pub(crate) const FLOW_FIGURES: [&str; 9] =
    ["completed", "IOPS", "MB/s", "mean", "p50", "p99", "p99.9", "max", "slowdown"];

impl Flow<'_> {
    /// The flow's figures as table cells, in [`FLOW_FIGURES`] order.
    pub(crate) fn figures(&self) -> Vec<String> {
        let latency = |key: &str| format_ns(number(&self.json["latency_ns"][key]).unwrap_or(0.0));
        vec![
            format_value(&self.json["completed"]),
            format_value(&self.json["iops"]),
            number(&self.json["bandwidth_bytes_per_s"]).map_or("-".into(), |b| format_number(b / 1e6)),
            latency("mean"),
            latency("p50"),
            latency("p99"),
            latency("p99_9"),
            latency("max"),
            number(&self.json["slowdown"]).map_or("-".into(), |s| format!("{}x", format_number(s))),
        ]
    }
}

/// One chart with every flow's latency CDF as a step line through its reported percentiles.
fn latency_cdf(flows: &[Flow]) -> String {
    let mut curves = Vec::new();
    let mut skipped = Vec::new();
    for (i, flow) in flows.iter().enumerate() {
        match Curve::of(flow.name.clone(), colour(i), &flow.json["latency_ns"]) {
            Some(curve) => curves.push(curve),
            None => skipped.push(flow.name.as_str()),
        }
    }
    let Some(x_scale) = cdf::x_scale(&curves) else {
        return "<p>No flow completed a request: there is no latency to draw.</p>\n".to_string();
    };
    let mut caption = format!("Latency CDF of each flow, {}", cdf::METHOD);
    if !skipped.is_empty() {
        caption += &format!(" Not drawn (no completed request): {}.", skipped.join(", "));
    }
    figure(&cdf::chart(&curves, &x_scale, "Latency CDF per flow"), &caption)
}

/// Stacked horizontal bars of each flow's mean time in each of the nine parts, and the numbers in a table;
/// `row_kind` says what a row is (`flow`, or a comparison's `variant`), `title` names the chart.
pub(crate) fn breakdown(flows: &[Flow], row_kind: &str, title: &str) -> String {
    let means: Vec<Vec<f64>> = flows
        .iter()
        .map(|f| {
            BREAKDOWN_PARTS.iter().map(|(key, _)| number(&f.json["breakdown_ns"][key]["mean"]).unwrap_or(0.0)).collect()
        })
        .collect();
    let scale = Scale::linear_from_zero(means.iter().map(|m| m.iter().map(|v| v.max(0.0)).sum::<f64>()));
    let label_width = flows.iter().map(|f| text_width(&f.name)).fold(60.0, f64::max).min(260.0);
    let left = 20.0 + label_width;
    let bar = 26.0;
    let mut chart = Chart::new(900.0, 0.0, left, 20.0, 0.0, 45.0);
    let legend: Vec<(String, &str)> =
        BREAKDOWN_PARTS.iter().enumerate().map(|(i, (_, label))| (label.to_string(), colour(i))).collect();
    chart.top = chart.legend(&legend) + 8.0;
    chart.height = chart.top + flows.len().max(1) as f64 * (bar + 10.0) + chart.bottom;
    chart.x_axis(&scale, format_ns, "mean time per request");
    chart.line(chart.left, chart.top, chart.left, chart.height - chart.bottom, "#333", "");
    for (row, (flow, parts)) in flows.iter().zip(&means).enumerate() {
        let y = chart.top + row as f64 * (bar + 10.0) + 5.0;
        chart.text(chart.left - 6.0, y + bar / 2.0 + 4.0, "end", &shortened(&flow.name, label_width));
        let mut start = 0.0;
        for (i, (mean, (_, label))) in parts.iter().zip(BREAKDOWN_PARTS).enumerate() {
            let mean = mean.max(0.0);
            let (x0, x1) = (chart.x(&scale, start), chart.x(&scale, start + mean));
            if x1 > x0 {
                let tooltip = format!("{}: {label} {}", flow.name, format_ns(mean));
                chart.rect(x0, y, x1 - x0, bar, colour(i), Some(&tooltip));
            }
            start += mean;
        }
    }
    let svg = chart.finish(title);
    let mut header = vec![row_kind];
    header.extend(BREAKDOWN_PARTS.iter().map(|(_, label)| *label));
    header.push("total");
    let rows: Vec<Vec<String>> = flows
        .iter()
        .zip(&means)
        .map(|(flow, parts)| {
            let mut row = vec![flow.name.clone()];
            row.extend(parts.iter().map(|v| format_ns(*v)));
            row.push(format_ns(parts.iter().sum()));
            row
        })
        .collect();
    figure(
        &svg,
        "Mean time of a request in each layer, in the order of its path (breakdown_ns): the nine parts add up to \
         the mean latency.",
    ) + &table(&header, &rows, &[true])
}

/// Horizontal bars of each flow's slowdown (shared mean latency / alone), with a line at 1.
fn fairness(flows: &[Flow], summary: &Value) -> String {
    let slowdowns: Vec<(usize, &Flow, f64)> =
        flows.iter().enumerate().filter_map(|(i, f)| number(&f.json["slowdown"]).map(|s| (i, f, s))).collect();
    let scale = Scale::linear_from_zero(slowdowns.iter().map(|(_, _, s)| *s).chain([1.0]));
    let left = 20.0 + flows.iter().map(|f| text_width(&f.name)).fold(60.0, f64::max).min(260.0);
    let bar = 22.0;
    let mut chart = Chart::new(900.0, 0.0, left, 20.0, 10.0, 45.0);
    chart.height = chart.top + slowdowns.len().max(1) as f64 * (bar + 10.0) + chart.bottom;
    chart.x_axis(&scale, number_label, "slowdown (mean latency shared / alone)");
    for (row, (i, flow, slowdown)) in slowdowns.iter().enumerate() {
        let y = chart.top + row as f64 * (bar + 10.0) + 5.0;
        chart.text(chart.left - 6.0, y + bar / 2.0 + 4.0, "end", &flow.name);
        let (x0, x1) = (chart.x(&scale, 0.0), chart.x(&scale, *slowdown));
        chart.rect(x0, y, x1 - x0, bar, colour(*i), Some(&format!("{}: {}x", flow.name, format_number(*slowdown))));
        chart.text(x1 + 4.0, y + bar / 2.0 + 4.0, "start", &format!("{}x", format_number(*slowdown)));
    }
    let one = chart.x(&scale, 1.0);
    chart.line(one, chart.top, one, chart.height - chart.bottom, "#333", " stroke-dasharray=\"4 3\"");
    let caption = format!(
        "Slowdown of each flow beside the others (1 = unaffected; dashed line). Fairness {} (min / max slowdown), \
         weighted speedup {}, max slowdown {}.",
        format_value(&summary["fairness"]),
        format_value(&summary["weighted_speedup"]),
        format_value(&summary["max_slowdown"]),
    );
    figure(&chart.finish("Slowdown per flow"), &caption)
}

/// Three charts over the window: each flow's IOPS and mean latency, and the device's queue depth.
fn timeseries(series: &Value) -> String {
    let starts: Vec<f64> =
        series["start_ns"].as_array().map(|a| a.iter().filter_map(number).collect()).unwrap_or_default();
    let interval = number(&series["interval_ns"]).unwrap_or(0.0);
    if starts.is_empty() {
        return "<p>The time series has no interval.</p>\n".to_string();
    }
    // Each interval is drawn at its middle (the last may be shorter: it ends at `end_ns`).
    let end = number(&series["end_ns"]).unwrap_or(starts[starts.len() - 1] + interval);
    let times_ms: Vec<f64> = starts
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let next = starts.get(i + 1).copied().unwrap_or(end.max(*s));
            (s + next) / 2.0 / 1e6
        })
        .collect();
    let x_scale = Scale::Linear { min: starts[0] / 1e6, max: end.max(starts[0] + 1.0) / 1e6 };
    let values = |item: &Value, key: &str| -> Vec<f64> {
        item[key].as_array().map(|a| a.iter().map(|v| number(v).unwrap_or(0.0)).collect()).unwrap_or_default()
    };
    let flows: Vec<(String, Vec<f64>, Vec<f64>)> = series["flows"]
        .as_array()
        .map(|a| {
            a.iter().map(|f| (format_value(&f["name"]), values(f, "iops"), values(f, "mean_latency_ns"))).collect()
        })
        .unwrap_or_default();
    let mut out = String::new();

    // IOPS.
    let y_scale = Scale::linear_from_zero(flows.iter().flat_map(|(_, iops, _)| iops.iter().copied()));
    let mut chart = Chart::new(900.0, 300.0, 70.0, 20.0, 0.0, 45.0);
    let legend: Vec<(String, &str)> = flows.iter().enumerate().map(|(i, (n, _, _))| (n.clone(), colour(i))).collect();
    chart.top = chart.legend(&legend) + 8.0;
    chart.y_axis_ticks(&y_scale, number_label, "IOPS");
    chart.x_axis(&x_scale, number_label, "simulated time (ms)");
    for (i, (_, iops, _)) in flows.iter().enumerate() {
        let points: Vec<(f64, f64)> =
            times_ms.iter().zip(iops).map(|(t, v)| (chart.x(&x_scale, *t), chart.y(&y_scale, *v))).collect();
        chart.polyline(&points, colour(i), "");
    }
    out += &figure(
        &chart.finish("IOPS per flow over time"),
        "Each flow's IOPS per interval, drawn at the interval's middle.",
    );

    // Mean latency, on a log scale; an interval with no completion leaves a gap.
    let latency_scale = Scale::log_of(flows.iter().flat_map(|(_, _, l)| l.iter().copied()))
        .unwrap_or(Scale::Log { min: 1.0, max: 10.0 });
    let mut chart = Chart::new(900.0, 300.0, 70.0, 20.0, 0.0, 45.0);
    chart.top = chart.legend(&legend) + 8.0;
    chart.y_axis_ticks(&latency_scale, format_ns, "mean latency (log)");
    chart.x_axis(&x_scale, number_label, "simulated time (ms)");
    for (i, (_, _, latency)) in flows.iter().enumerate() {
        let mut run = Vec::new();
        for (t, v) in times_ms.iter().zip(latency) {
            if *v > 0.0 {
                run.push((chart.x(&x_scale, *t), chart.y(&latency_scale, *v)));
            } else {
                chart.polyline(&run, colour(i), "");
                run.clear();
            }
        }
        chart.polyline(&run, colour(i), "");
    }
    out += &figure(
        &chart.finish("Mean latency per flow over time"),
        "Each flow's mean latency per interval (requests that completed in it); a gap is an interval with none.",
    );

    // Device queue depth.
    let mean_depth = values(&series["device"], "mean_queue_depth");
    let max_depth = values(&series["device"], "max_queue_depth");
    let y_scale = Scale::linear_from_zero(mean_depth.iter().chain(&max_depth).copied());
    let mut chart = Chart::new(900.0, 300.0, 70.0, 20.0, 0.0, 45.0);
    chart.top = chart.legend(&[("mean".to_string(), colour(0)), ("max".to_string(), colour(1))]) + 8.0;
    chart.y_axis_ticks(&y_scale, number_label, "commands in the device");
    chart.x_axis(&x_scale, number_label, "simulated time (ms)");
    for (i, depth) in [&mean_depth, &max_depth].into_iter().enumerate() {
        let points: Vec<(f64, f64)> =
            times_ms.iter().zip(depth).map(|(t, v)| (chart.x(&x_scale, *t), chart.y(&y_scale, *v))).collect();
        chart.polyline(&points, colour(i), if i == 1 { " stroke-dasharray=\"5 3\"" } else { "" });
    }
    out += &figure(
        &chart.finish("Device queue depth over time"),
        "Commands inside the device per interval: time-weighted mean (solid) and maximum (dashed).",
    );
    out
}

/// Every scalar of `value` as a two-column table.
fn summary_table(value: &Value) -> String {
    let mut rows = Vec::new();
    flatten("", value, &mut rows);
    if rows.is_empty() {
        return "<p>Not in the results.</p>\n".to_string();
    }
    table(&["field", "value"], &rows, &[true, true])
}

/// The host's scalars, a table of its cores and the energy.
fn host(host: &Value, energy: &Value) -> String {
    let mut out = summary_table(host);
    if let Some(cores) = host["cores"].as_array().filter(|c| !c.is_empty()) {
        let rows: Vec<Vec<String>> = cores
            .iter()
            .enumerate()
            .map(|(i, core)| {
                let mut row = vec![i.to_string()];
                row.extend(
                    ["user", "kernel", "poll", "idle", "context_switches"].iter().map(|k| format_value(&core[*k])),
                );
                row
            })
            .collect();
        out.push_str("<h3>Cores</h3>\n");
        out += &table(&["core", "user", "kernel", "poll", "idle", "context switches"], &rows, &[]);
    }
    if energy.is_object() {
        out.push_str("<h3>Energy</h3>\n");
        out += &summary_table(energy);
    }
    out
}
