//! The report of a reproduction (`ullsim reproduce --json`): per figure, a chart of the paper's value
//! beside the simulated one for each row, and the rows in a table.

use std::fmt::Write;

use serde_json::Value;

use crate::bars::{self, Bar, Panel};
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
    /// "calibrated" or "predicted" (absent in reproductions written before roles: "-").
    role: String,
    /// How it compares with the paper ("close", "direction", "off", "far", "fitted", "unfitted"; "-").
    verdict: String,
    /// The seeds' range `[min, max]/seeds` for a row averaged over seeds, else "-".
    spread: String,
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
            role: row["role"].as_str().unwrap_or("-").to_string(),
            verdict: row["verdict"].as_str().unwrap_or("-").to_string(),
            spread: spread_text(&row["spread"]),
        };
        match figures.iter_mut().find(|(name, _)| name == figure_name) {
            Some((_, rows)) => rows.push(parsed),
            None => figures.push((figure_name.to_string(), vec![parsed])),
        }
    }
    let mut body = String::new();
    let _ = writeln!(body, "<h1>{}</h1>\n<p>Reproduction <code>{}</code>.</p>", escape(&title), escape(&paper));
    if let Some(line) = score_line(&json["score"]) {
        let _ = writeln!(
            body,
            "<p>Score (rows with a paper value; <code>reproduce/score.rs</code>): {}.</p>",
            escape(&line)
        );
    }
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
                    r.spread.clone(),
                    r.paper.filter(|p| *p != 0.0).map_or("-".to_string(), |p| format_number(r.simulated / p)),
                    r.role.clone(),
                    r.verdict.clone(),
                ]
            })
            .collect();
        let columns =
            ["setting", "metric", "paper", "simulated", "spread over seeds", "simulated / paper", "role", "verdict"];
        body += &table(&columns, &table_rows, &[true, true, false, false, false, false, true, true]);
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

/// A row's spread over seeds as `[min, max]/seeds`; "-" without one (one seed, or JSON written before
/// spreads).
fn spread_text(spread: &Value) -> String {
    match (spread["min"].as_f64(), spread["max"].as_f64(), spread["seeds"].as_u64()) {
        (Some(min), Some(max), Some(seeds)) => format!("[{}, {}]/{seeds}", format_number(min), format_number(max)),
        _ => "-".to_string(),
    }
}

/// The score as one line: headline, all predicted and calibrated rows by verdict; `None` without a score.
fn score_line(score: &Value) -> Option<String> {
    let tally = |t: &Value| -> Option<String> {
        let n = |k: &str| t[k].as_u64();
        Some(format!(
            "{} (close {}, direction {}, off {}, far {})",
            n("rows")?,
            n("close")?,
            n("direction")?,
            n("off")?,
            n("far")?
        ))
    };
    let calibrated = &score["calibrated"];
    Some(format!(
        "headline {}; all predicted {}; calibrated {} (within 10%: {})",
        tally(&score["headline"])?,
        tally(&score["predicted"])?,
        calibrated["rows"].as_u64()?,
        calibrated["fitted"].as_u64()?
    ))
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
    let panels: Vec<Panel> = metrics
        .iter()
        .map(|metric| Panel {
            title: metric.to_string(),
            rows: rows
                .iter()
                .filter(|r| r.metric == *metric)
                .map(|row| {
                    let label = setting_text(&row.setting, &shared);
                    let bar = |value: Option<f64>, fill, who| {
                        value.map(|value| Bar {
                            value,
                            fill,
                            tooltip: format!("{label} {}: {who} value {}", row.metric, format_number(value)),
                        })
                    };
                    let bars = vec![
                        bar(row.paper, PAPER_COLOUR, "paper"),
                        bar(Some(row.simulated), SIMULATED_COLOUR, "simulated"),
                    ];
                    bars::Row { label, bars }
                })
                .collect(),
        })
        .collect();
    let legend = [("paper".to_string(), PAPER_COLOUR), ("simulated".to_string(), SIMULATED_COLOUR)];
    let svg = bars::chart(&panels, 2, &legend, format_number, &format!("{name}: paper and simulated values"));
    let mut caption = format!(
        "{name}: for each setting, the paper's value (grey; none where the paper gives no number) and the \
         simulated one (blue); one panel per metric, each on its own axis."
    );
    if !shared.is_empty() {
        caption += &format!(" Every row has {}.", setting_text(&shared, &[]));
    }
    figure(&svg, &caption)
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
