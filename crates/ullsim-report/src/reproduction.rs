//! The report of a reproduction (`ullsim reproduce --json`): per figure, a chart of the paper's value
//! beside the simulated one for each row, and the rows in a table.

use std::fmt::Write;

use serde_json::Value;

use crate::svg::{number_label, text_width, Chart, Scale};
use crate::{escape, figure, flatten, format_number, format_value, page, table};

const PAPER_COLOUR: &str = "#9c9c9c";
const SIMULATED_COLOUR: &str = "#4e79a7";

/// One row of the reproduction.
struct Row {
    /// The setting's `key=value` pairs, in the JSON's key order.
    setting: Vec<(String, String)>,
    metric: String,
    paper: Option<f64>,
    simulated: f64,
}

pub fn report(json: &Value) -> Result<String, String> {
    let paper = format_value(&json["paper"]);
    let title = format_value(&json["title"]);
    let rows_json = json["rows"].as_array().ok_or("reproduction: `rows` is not an array")?;
    // Figures in the order they first appear, each with its rows in JSON order.
    let mut figures: Vec<(String, Vec<Row>)> = Vec::new();
    for (i, row) in rows_json.iter().enumerate() {
        let figure_name =
            row["figure"].as_str().ok_or_else(|| format!("reproduction: rows[{i}] has no `figure` string"))?;
        let simulated = row["simulated"]
            .as_f64()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("reproduction: rows[{i}] has no finite `simulated` number"))?;
        let setting = match row["setting"].as_object() {
            Some(map) => map.iter().map(|(k, v)| (k.clone(), format_value(v))).collect(),
            None => Vec::new(),
        };
        let parsed = Row {
            setting,
            metric: format_value(&row["metric"]),
            paper: row["paper"].as_f64().filter(|v| v.is_finite()),
            simulated,
        };
        match figures.iter_mut().find(|(name, _)| name == figure_name) {
            Some((_, rows)) => rows.push(parsed),
            None => figures.push((figure_name.to_string(), vec![parsed])),
        }
    }
    let mut body = String::new();
    let _ = writeln!(body, "<h1>{}</h1>\n<p>Reproduction <code>{}</code>.</p>", escape(&title), escape(&paper));
    let mut options = Vec::new();
    flatten("", &json["options"], &mut options);
    if let Some(map) = json["options"].as_object() {
        // Lists (depths, overrides, apps) are options too: show them as JSON text.
        for (key, value) in map.iter().filter(|(_, v)| v.is_array()) {
            options.push(vec![key.clone(), value.to_string()]);
        }
    }
    if !options.is_empty() {
        body.push_str("<h2>Options</h2>\n");
        body += &table(&["option", "value"], &options, &[true, true]);
    }
    for (name, rows) in &figures {
        let _ = writeln!(body, "<section class=\"figure\" id=\"figure-{}\">\n<h2>{}</h2>", escape(name), escape(name));
        body += &chart(name, rows);
        let table_rows: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                vec![
                    setting_text(&r.setting, &[]),
                    r.metric.clone(),
                    r.paper.map_or("-".to_string(), format_number),
                    format_number(r.simulated),
                    r.paper.filter(|p| *p != 0.0).map_or("-".to_string(), |p| format_number(r.simulated / p)),
                ]
            })
            .collect();
        body += &table(&["setting", "metric", "paper", "simulated", "simulated / paper"], &table_rows, &[true, true]);
        body.push_str("</section>\n");
    }
    if let Some(notes) = json["notes"].as_array().filter(|n| !n.is_empty()) {
        body.push_str("<h2>Notes</h2>\n<ul>\n");
        for note in notes {
            let _ = writeln!(body, "<li>{}</li>", escape(&format_value(note)));
        }
        body.push_str("</ul>\n");
    }
    Ok(page(&title, &body))
}

/// One chart per figure: a panel per metric (each on its own axis, since units differ), a pair of bars per
/// row, the paper's (grey, absent where the paper gives no number) above the simulated one.
fn chart(name: &str, rows: &[Row]) -> String {
    let mut metrics: Vec<&str> = Vec::new();
    for row in rows {
        if !metrics.contains(&row.metric.as_str()) {
            metrics.push(&row.metric);
        }
    }
    // The bars are labelled with what varies within the figure; what all its rows share is in the caption.
    let shared: Vec<(String, String)> = match rows.split_first() {
        Some((first, rest)) => {
            first.setting.iter().filter(|pair| rest.iter().all(|r| r.setting.contains(pair))).cloned().collect()
        }
        None => Vec::new(),
    };
    let labels: Vec<String> = rows.iter().map(|r| setting_text(&r.setting, &shared)).collect();
    let label_width = labels.iter().map(|l| text_width(l)).fold(60.0, f64::max).min(420.0);
    let (bar, gap, panel_gap) = (9.0, 8.0, 58.0);
    let mut chart = Chart::new(900.0, 0.0, label_width + 16.0, 60.0, 0.0, 0.0);
    chart.top = chart.legend(&[("paper".to_string(), PAPER_COLOUR), ("simulated".to_string(), SIMULATED_COLOUR)]);
    let mut y = chart.top + 8.0;
    let mut panels = Vec::new();
    for metric in &metrics {
        let panel_rows: Vec<(&Row, &String)> = rows.iter().zip(&labels).filter(|(r, _)| r.metric == *metric).collect();
        let height = panel_rows.len() as f64 * (2.0 * bar + gap);
        panels.push((metric, panel_rows, y + 18.0, height));
        y += 18.0 + height + panel_gap;
    }
    chart.height = y;
    for (metric, panel_rows, top, height) in panels {
        let scale =
            Scale::linear_from_zero(panel_rows.iter().flat_map(|(r, _)| [Some(r.simulated), r.paper]).flatten());
        chart.text(chart.left, top - 5.0, "start", metric);
        // The axis of this panel: ticks below its bars, a line at zero.
        let bottom = top + height;
        for tick in scale.ticks() {
            let x = chart.x(&scale, tick);
            chart.line(x, top, x, bottom, "#ddd", "");
            chart.text(x, bottom + 15.0, "middle", &number_label(tick));
        }
        let zero = chart.x(&scale, 0.0);
        chart.line(zero, top, zero, bottom, "#333", "");
        for (i, (row, label)) in panel_rows.iter().enumerate() {
            let row_top = top + i as f64 * (2.0 * bar + gap);
            chart.text(chart.left - 6.0, row_top + bar + 4.0, "end", &shortened(label, label_width));
            for (offset, value, fill, who) in
                [(0.0, row.paper, PAPER_COLOUR, "paper"), (bar, Some(row.simulated), SIMULATED_COLOUR, "simulated")]
            {
                let Some(value) = value else { continue };
                let x = chart.x(&scale, value);
                let tooltip = format!("{label} {}: {who} value {}", row.metric, format_number(value));
                chart.rect(zero.min(x), row_top + offset, (x - zero).abs().max(1.0), bar, fill, Some(&tooltip));
                let label_x = zero.max(x) + 4.0;
                chart.small_text(label_x, row_top + offset + bar - 1.0, &format_number(value));
            }
        }
    }
    let mut caption = format!(
        "{name}: for each setting, the paper's value (grey; none where the paper gives no number) and the \
         simulated one (blue); one panel per metric, each on its own axis."
    );
    if !shared.is_empty() {
        caption += &format!(" Every row has {}.", setting_text(&shared, &[]));
    }
    figure(&chart.finish(&format!("{name}: paper and simulated values")), &caption)
}

/// `text` cut to fit `width` pixels, with an ellipsis where it was cut (the table has it whole).
fn shortened(text: &str, width: f64) -> String {
    if text_width(text) <= width {
        return text.to_string();
    }
    let keep = ((width / text_width("m")) as usize).saturating_sub(1);
    text.chars().take(keep).chain(['…']).collect()
}

/// A setting as `key=value` pairs separated by spaces, leaving out those in `shared`; `-` when nothing is
/// left.
fn setting_text(setting: &[(String, String)], shared: &[(String, String)]) -> String {
    let pairs: Vec<String> =
        setting.iter().filter(|pair| !shared.contains(pair)).map(|(key, value)| format!("{key}={value}")).collect();
    if pairs.is_empty() {
        "-".to_string()
    } else {
        pairs.join(" ")
    }
}
