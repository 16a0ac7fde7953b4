//! The one layout every `ullsim reproduce` writes: the paper, how the runs were made, and rows of figure /
//! setting / metric / paper value / simulated value (docs/output.md, "Reproductions"). The same rows print
//! as a table.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::score::{Role, Score, Verdict};

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
    /// The figures that carry the paper's main claims (`reproduce/roles.rs`).
    #[serde(default)]
    pub headline: Vec<String>,
    /// The rows with paper values, scored (`reproduce/score.rs`).
    #[serde(default)]
    pub score: Score,
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
    /// A baseline value the setup is fitted to, or a prediction (`reproduce/roles.rs`).
    #[serde(default)]
    pub role: Role,
    /// How it compares with the paper's value (`reproduce/score.rs`); null without one.
    #[serde(default)]
    pub verdict: Option<Verdict>,
    /// How far the seeds' values ranged, for a row that averages two or more seeds' runs
    /// ([`Reproduction::push_over_seeds`]); null for a row of one run or of a quantity no seed moves.
    #[serde(default)]
    pub spread: Option<Spread>,
}

/// The range of one row's value over the seeds whose mean it is: what a reader needs to judge a row that
/// rests on rare events (a p99 of 2,000 requests rests on 20 of them).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub min: f64,
    pub max: f64,
    /// How many seeds' values the row averages.
    pub seeds: u32,
}

impl Spread {
    /// The range of `values`, or `None` for fewer than two (one run has no spread to report).
    pub fn of(values: &[f64]) -> Option<Spread> {
        (values.len() >= 2).then(|| Spread {
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            seeds: values.len() as u32,
        })
    }
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
            role: Role::Predicted,
            verdict: None,
            spread: None,
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
            headline: Vec::new(),
            score: Score::default(),
        }
    }

    /// Record how the runs were made. A value serde cannot turn into JSON (none of the plain data options
    /// are) is recorded as its error message rather than lost.
    pub fn option(&mut self, key: &str, value: impl Serialize) {
        let value = serde_json::to_value(value).unwrap_or_else(|e| serde_json::Value::String(e.to_string()));
        self.options.insert(key.to_string(), value);
    }

    /// Record the options every reproduction shares: run length, seeds, cores and `--set` overrides (`set`,
    /// the key every reproduction records them under, empty when none).
    pub fn run_options(&mut self, duration_ns: u64, seed: u64, seeds: u32, cores: u32, overrides: &[String]) {
        self.option("duration_ms", duration_ns / 1_000_000);
        self.option("seed", seed);
        self.option("seeds", seeds.max(1));
        self.option("cores", cores);
        self.option("set", overrides);
    }

    /// Add a row (see [`Row::new`]).
    pub fn push(&mut self, figure: &str, setting: &[(&str, &str)], metric: &str, paper: Option<f64>, simulated: f64) {
        self.rows.push(Row::new(figure, setting, metric, paper, simulated));
    }

    /// Add a row whose value is the mean of one value per seed, with their range as its spread. An empty
    /// `per_seed` gives NaN, which [`Reproduction::check_finite`] refuses.
    pub fn push_over_seeds(
        &mut self,
        figure: &str,
        setting: &[(&str, &str)],
        metric: &str,
        paper: Option<f64>,
        per_seed: &[f64],
    ) {
        let mean = per_seed.iter().sum::<f64>() / per_seed.len() as f64;
        let mut row = Row::new(figure, setting, metric, paper, mean);
        row.spread = Spread::of(per_seed);
        self.rows.push(row);
    }

    /// Rows whose simulated value is not a finite number: a reproduction must not pass them off as results.
    pub fn non_finite(&self) -> Vec<&Row> {
        self.rows.iter().filter(|r| !r.simulated.is_finite() || r.paper.is_some_and(|p| !p.is_finite())).collect()
    }

    /// An error naming the first row whose value is not a finite number, which a reproduction must not pass
    /// off as a result. The usual cause is a run too short for a flow to complete anything (a ratio to zero).
    pub fn check_finite(&self) -> Result<(), String> {
        match self.non_finite().first() {
            Some(bad) => Err(format!(
                "{} {:?} {}: not a finite number (a flow completed nothing in its runs? a longer --duration \
                 gives it time)",
                bad.figure, bad.setting, bad.metric
            )),
            None => Ok(()),
        }
    }

    /// The rows as a text table: the title, the options, then one block per run of rows of the same figure,
    /// each with its own column widths, then the notes.
    pub fn table(&self) -> String {
        let mut out = format!("{} ({})\n", self.title, self.paper);
        let options: Vec<String> = self.options.iter().map(|(k, v)| format!("{k} {}", plain(v))).collect();
        if !options.is_empty() {
            let _ = writeln!(out, "{}", options.join(", "));
        }
        for block in self.rows.chunk_by(|a, b| a.figure == b.figure) {
            let settings: Vec<String> = block.iter().map(Row::setting_text).collect();
            let figure_width = block[0].figure.len().max(6);
            let setting_width = settings.iter().map(String::len).max().unwrap_or(0).max(7);
            let metric_width = block.iter().map(|r| r.metric.len()).max().unwrap_or(0).max(6);
            // The seeds' range, only in a block where some row has one.
            let spreads: Vec<String> = block.iter().map(|r| r.spread.map_or(String::new(), spread_text)).collect();
            let spread_width = spreads.iter().map(String::len).max().unwrap_or(0);
            let spread_width = if spread_width > 0 { spread_width.max(6) } else { 0 };
            out.push('\n');
            let mut line = |figure: &str,
                            setting: &str,
                            metric: &str,
                            paper: &str,
                            simulated: &str,
                            spread: &str,
                            judged: &str| {
                let spread = if spread_width > 0 { format!("  {spread:<spread_width$}") } else { String::new() };
                let text = format!(
                    "{figure:<figure_width$}  {setting:<setting_width$}  {metric:<metric_width$}  {paper:>10}  {simulated:>10}{spread}  {judged}"
                );
                let _ = writeln!(out, "{}", text.trim_end());
            };
            line("figure", "setting", "metric", "paper", "simulated", "spread", "judged");
            for ((row, setting), spread) in block.iter().zip(&settings).zip(&spreads) {
                let paper = row.paper.map_or("-".to_string(), number);
                line(&row.figure, setting, &row.metric, &paper, &number(row.simulated), spread, row.judged());
            }
        }
        for note in &self.notes {
            let _ = writeln!(out, "note: {note}");
        }
        let _ = writeln!(out, "score: {}", self.score.line());
        out
    }
}

impl Row {
    /// How the row compares with the paper, for the table (empty without a paper value).
    pub fn judged(&self) -> &'static str {
        self.verdict.map_or("", Verdict::name)
    }

    /// The setting as `key=value` pairs separated by spaces.
    pub fn setting_text(&self) -> String {
        self.setting.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
    }
}

/// A spread as `[min, max]/seeds`.
fn spread_text(spread: Spread) -> String {
    format!("[{}, {}]/{}", number(spread.min), number(spread.max), spread.seeds)
}

/// An option's value as text: strings without their quotes, the rest as JSON.
fn plain(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A value with the digits it deserves: four significant digits (four decimals below 1), no trailing zeros,
/// no exponent below a billion.
fn number(x: f64) -> String {
    let magnitude = x.abs();
    let decimals = match magnitude {
        m if m >= 1000.0 || x.fract() == 0.0 => 0,
        m if m >= 100.0 => 1,
        m if m >= 10.0 => 2,
        m if m >= 1.0 => 3,
        _ => 4,
    };
    let text = format!("{x:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
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
        super::super::roles::assign(&mut r);
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.starts_with("{\"paper\":\"paper22\""), "{json}");
        assert!(json.contains("\"setting\":{\"app\":\"bayes\",\"stack\":\"vanilla\"}"), "{json}");
        assert_eq!(serde_json::from_str::<Reproduction>(&json).unwrap(), r);
        let table = r.table();
        assert_eq!(table.matches("\nfigure ").count(), 2, "{table}");
        assert!(table.contains("app=bayes stack=vanilla") && table.contains("48.25"), "{table}");
        assert!(table.contains(" 0.5\n") && table.contains("0.987") && table.contains("\nnote: one note\n"), "{table}");
        assert!(table.contains("48.25  close\n") && table.contains("0.987  direction\n") && table.ends_with("\nscore: headline 0 (close 0, direction 0, off 0, far 0); all predicted 2 (close 1, direction 1, off 0, far 0); calibrated 0 (within 10%: 0)\n"), "{table}");
        assert!(r.non_finite().is_empty());
        r.rows.push(Row::new("fig14", &[], "x", None, f64::NAN));
        assert_eq!(r.non_finite().len(), 1);
    }

    #[test]
    fn each_block_has_its_own_widths_and_whole_numbers_print_whole() {
        let mut r = Reproduction::new("p", "t");
        r.option("classes", "table2");
        r.push("a", &[("long_setting_key", "long value")], "m", Some(1.0), 2.0);
        r.push("weighted_speedup", &[("k", "v")], "metric", None, 0.25);
        super::super::roles::assign(&mut r);
        let table = r.table();
        assert!(table.contains("\nclasses table2\n"), "strings print without quotes: {table}");
        assert!(table.contains("\na       long_setting_key=long value  m"), "{table}");
        assert!(table.contains("\nweighted_speedup  k=v      metric"), "{table}");
        let row = table.lines().find(|l| l.starts_with("a ")).unwrap();
        assert!(row.ends_with("         1           2  far"), "{row:?}");
        assert!(!table.contains("spread"), "no spread column without spreads: {table}");
        let numbers = [3.0, -2.5, 12.52, 7.8104, 0.01734, 465067.3, f64::NAN].map(number);
        assert_eq!(numbers, ["3", "-2.5", "12.52", "7.81", "0.0173", "465067", "NaN"]);
    }

    #[test]
    fn a_row_over_seeds_is_their_mean_with_their_range() {
        let mut r = Reproduction::new("p", "t");
        r.push_over_seeds("fig12", &[("stack", "b")], "p99_vs_vanilla", Some(0.8), &[0.9, 0.7, 0.8]);
        r.push_over_seeds("fig12", &[("stack", "c")], "p99_vs_vanilla", Some(0.8), &[0.75]);
        r.push("fig13", &[], "m", None, 1.0);
        assert!((r.rows[0].simulated - 0.8).abs() < 1e-12);
        assert_eq!(r.rows[0].spread, Some(Spread { min: 0.7, max: 0.9, seeds: 3 }));
        assert_eq!(r.rows[1].simulated, 0.75);
        assert_eq!(r.rows[1].spread, None, "one seed has no spread");
        super::super::roles::assign(&mut r);
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.contains("\"spread\":{\"min\":0.7,\"max\":0.9,\"seeds\":3}"), "{json}");
        assert!(json.contains("\"spread\":null"), "{json}");
        assert_eq!(serde_json::from_str::<Reproduction>(&json).unwrap(), r);
        let table = r.table();
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines.iter().any(|l| l.contains("simulated  spread") && l.starts_with("figure")), "{table}");
        assert!(lines.iter().any(|l| l.contains("0.8  [0.7, 0.9]/3  close")), "{table}");
        let fig13 = lines.iter().position(|l| l.starts_with("fig13")).unwrap();
        assert!(!lines[fig13 - 1].contains("spread"), "a block without spreads has no column: {table}");
        r.push_over_seeds("fig14", &[], "m", None, &[]);
        assert!(r.check_finite().is_err(), "no seeds is not a result");
    }
}
