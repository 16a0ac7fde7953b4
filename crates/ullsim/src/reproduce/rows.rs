//! The one layout every `ullsim reproduce` writes: the paper, how the runs were made, and rows of figure /
//! setting / metric / paper value / simulated value (docs/output.md, "Reproductions"). The same rows print
//! as a table.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// A reproduction's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reproduction {
    /// The reproduction's name, as `ullsim reproduce` takes it (e.g. "fastresponse22").
    pub paper: String,
    /// The paper and what part of its evaluation this is, one line.
    pub title: String,
    /// How the runs were made: seed, durations, subset or `--all`, overrides.
    pub options: BTreeMap<String, serde_json::Value>,
    /// Remarks a reader needs beside the rows (settings that could not run, and why).
    pub notes: Vec<String>,
    pub rows: Vec<Row>,
}

/// One figure of the paper, at one setting, in one metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The paper's figure or table, e.g. "fig12" or "table1".
    pub figure: String,
    /// What was varied, e.g. {"app": "bayes", "stack": "vanilla"}.
    pub setting: BTreeMap<String, String>,
    /// What is measured, with its unit in the name (e.g. "p99_9_us", "throughput_vs_vanilla").
    pub metric: String,
    /// The paper's value, or null where the paper gives none in numbers (a plot read by eye is not one).
    pub paper: Option<f64>,
    pub simulated: f64,
}

impl Row {
    /// A row with `setting` given as (key, value) pairs.
    pub fn new(figure: &str, setting: &[(&str, &str)], metric: &str, paper: Option<f64>, simulated: f64) -> Row {
        Row {
            figure: figure.to_string(),
            setting: setting.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            metric: metric.to_string(),
            paper,
            simulated,
        }
    }
}

impl Reproduction {
    pub fn new(paper: &str, title: &str) -> Reproduction {
        Reproduction {
            paper: paper.to_string(),
            title: title.to_string(),
            options: BTreeMap::new(),
            notes: Vec::new(),
            rows: Vec::new(),
        }
    }

    /// Record how the runs were made.
    pub fn option(&mut self, key: &str, value: impl Serialize) {
        let value = serde_json::to_value(value).expect("an option is plain data");
        self.options.insert(key.to_string(), value);
    }

    /// Rows whose simulated value is not a finite number: a reproduction must not pass them off as results.
    pub fn non_finite(&self) -> Vec<&Row> {
        self.rows.iter().filter(|r| !r.simulated.is_finite() || r.paper.is_some_and(|p| !p.is_finite())).collect()
    }

    /// The rows as a text table, one block per figure, in row order.
    pub fn table(&self) -> String {
        let mut out = format!("{} ({})\n", self.title, self.paper);
        let options: Vec<String> = self.options.iter().map(|(k, v)| format!("{k} {v}")).collect();
        if !options.is_empty() {
            let _ = writeln!(out, "{}", options.join(", "));
        }
        let setting = |r: &Row| r.setting.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ");
        let setting_width = self.rows.iter().map(|r| setting(r).len()).max().unwrap_or(0).max(7);
        let metric_width = self.rows.iter().map(|r| r.metric.len()).max().unwrap_or(0).max(6);
        let mut figure = None;
        for row in &self.rows {
            if figure != Some(&row.figure) {
                figure = Some(&row.figure);
                let _ = writeln!(
                    out,
                    "\n{:<8} {:<setting_width$}  {:<metric_width$}  {:>10}  {:>10}",
                    "figure", "setting", "metric", "paper", "simulated"
                );
            }
            let paper = row.paper.map_or("-".to_string(), number);
            let _ = writeln!(
                out,
                "{:<8} {:<setting_width$}  {:<metric_width$}  {:>10}  {:>10}",
                row.figure,
                setting(row),
                row.metric,
                paper,
                number(row.simulated)
            );
        }
        for note in &self.notes {
            let _ = writeln!(out, "note: {note}");
        }
        out
    }
}

/// A value with the digits it deserves: three significant digits, no exponent below a billion.
fn number(x: f64) -> String {
    let magnitude = x.abs();
    if magnitude >= 100.0 || magnitude == 0.0 {
        format!("{x:.0}")
    } else if magnitude >= 10.0 {
        format!("{x:.1}")
    } else if magnitude >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_round_trips_and_prints_one_block_per_figure() {
        let mut r = Reproduction::new("paper22", "A paper (2022), read path");
        r.option("seed", 7);
        r.rows.push(Row::new("fig12", &[("stack", "vanilla"), ("app", "bayes")], "mean_us", Some(52.0), 48.25));
        r.rows.push(Row::new("fig12", &[("stack", "b-opt"), ("app", "bayes")], "mean_us", None, 0.5));
        r.rows.push(Row::new("fig14", &[("app", "bayes")], "throughput_vs_vanilla", Some(0.94), 0.987));
        r.notes.push("one note".into());
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.starts_with("{\"paper\":\"paper22\""), "{json}");
        assert!(json.contains("\"setting\":{\"app\":\"bayes\",\"stack\":\"vanilla\"}"), "{json}");
        assert_eq!(serde_json::from_str::<Reproduction>(&json).unwrap(), r);
        let table = r.table();
        assert_eq!(table.matches("\nfigure ").count(), 2, "{table}");
        assert!(table.contains("app=bayes stack=vanilla") && table.contains("48.2"), "{table}");
        assert!(table.contains("0.500") && table.contains("0.987") && table.ends_with("note: one note\n"), "{table}");
        assert!(r.non_finite().is_empty());
        r.rows.push(Row::new("fig14", &[], "x", None, f64::NAN));
        assert_eq!(r.non_finite().len(), 1);
    }
}
