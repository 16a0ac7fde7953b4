//! The FLIN evaluation's [`Report`] as the rows every reproduction writes ([`Reproduction`]).
//!
//! Figures, in row order:
//! - `table2`: each app's classification, setting `app`: `chip_busy` and `all_chips_busy` of its alone run,
//!   and `high_interference` (1 = high) with the class printed in FLIN's Table 2 as the paper's value.
//! - `summary`: per category and scheduler (setting `category`, `scheduler`), the mixes run, mean fairness,
//!   mean weighted speedup and the worst slowdown.
//! - `fairness` and `weighted_speedup`: FLIN against each baseline per category, the two figures of the
//!   slides' "Experimental Results" ("FLIN Improves Fairness Over the Baselines", "FLIN Improves
//!   Performance Over the Baselines"), with the paper's values.
//! - `max_slowdown`: FLIN's worst slowdown per category; the paper's 80 is a bound ("no flow with a
//!   maximum slowdown over 80x").
//! - `ablation`: FLIN with all stages and with each stage alone against Sprinkler (the slides name the
//!   study but give no numbers).
//! - `mixes`: every mix under every variant (setting `category`, `mix`, `scheduler`), with each flow's
//!   slowdown (setting `flow` as well).

use super::{Classes, Comparison, Report, PAPER_FLIN_MAX_SLOWDOWN};
use crate::reproduce::Reproduction;

/// Title of the reproduction.
pub const TITLE: &str = "FLIN (ISCA'18): four-flow mixes on flin-eval under Sprinkler, Sprinkler+Fairness and FLIN";

/// One metric of a [`Comparison`]: (simulated, paper).
type Pick = fn(&Comparison) -> (f64, f64);

/// The comparison with the paper: per figure, its metrics.
const COMPARED: [(&str, &[(&str, Pick)]); 3] = [
    (
        "fairness",
        &[
            ("fairness_x_sprinkler", |c| (c.fairness_x_sprinkler, c.paper_fairness_x_sprinkler)),
            ("fairness_x_sprinkler_fairness", |c| {
                (c.fairness_x_sprinkler_fairness, c.paper_fairness_x_sprinkler_fairness)
            }),
        ],
    ),
    (
        "weighted_speedup",
        &[
            ("ws_gain_over_sprinkler", |c| (c.ws_gain_over_sprinkler, c.paper_ws_gain_over_sprinkler)),
            ("ws_gain_over_sprinkler_fairness", |c| {
                (c.ws_gain_over_sprinkler_fairness, c.paper_ws_gain_over_sprinkler_fairness)
            }),
        ],
    ),
    ("max_slowdown", &[("flin_max_slowdown", |c| (c.flin_max_slowdown, PAPER_FLIN_MAX_SLOWDOWN))]),
];

/// A category as a setting value: "25%".
fn category(percent: u32) -> String {
    format!("{percent}%")
}

/// 1 for true, 0 for false: a class as a number.
fn flag(high: bool) -> f64 {
    if high {
        1.0
    } else {
        0.0
    }
}

impl Report {
    /// The report's numbers as rows, its options and skipped categories as options and notes.
    pub fn reproduction(&self) -> Reproduction {
        let mut r = Reproduction::new("flin18", TITLE);
        let o = &self.options;
        r.option("mixes_per_category", o.mixes_per_category);
        r.option("duration_ns", o.duration_ns);
        r.option("classify_duration_ns", o.classify_duration_ns);
        r.option("seed", o.seed);
        r.option("load", o.load);
        r.option("classes", o.classes);
        r.option("set", &o.overrides);
        for c in &self.classes {
            let app = [("app", c.app.as_str())];
            r.push("table2", &app, "chip_busy", None, c.chip_busy);
            r.push("table2", &app, "all_chips_busy", None, c.all_chips_busy);
            r.push("table2", &app, "high_interference", c.table2_high.map(flag), flag(c.high_interference));
        }
        for s in &self.summary {
            let cat = category(s.category);
            let setting = [("category", cat.as_str()), ("scheduler", s.scheduler.as_str())];
            r.push("summary", &setting, "mixes", None, s.mixes as f64);
            r.push("summary", &setting, "mean_fairness", None, s.mean_fairness);
            r.push("summary", &setting, "mean_weighted_speedup", None, s.mean_weighted_speedup);
            r.push("summary", &setting, "max_slowdown", None, s.max_slowdown);
        }
        for (figure, metrics) in COMPARED {
            for c in &self.comparison {
                let cat = category(c.category);
                for (metric, values) in metrics {
                    let (simulated, paper) = values(c);
                    r.push(figure, &[("category", cat.as_str())], metric, Some(paper), simulated);
                }
            }
        }
        for a in &self.ablation {
            let cat = category(a.category);
            let setting = [("category", cat.as_str()), ("variant", a.variant.as_str())];
            r.push("ablation", &setting, "fairness_x_sprinkler", None, a.fairness_x_sprinkler);
            r.push("ablation", &setting, "ws_gain_over_sprinkler", None, a.ws_gain_over_sprinkler);
            r.push("ablation", &setting, "max_slowdown", None, a.max_slowdown);
        }
        let mut no_slowdown = std::collections::BTreeSet::new();
        for m in &self.runs {
            let (cat, mix) = (category(m.category), m.apps.join("+"));
            let setting = [("category", cat.as_str()), ("mix", mix.as_str()), ("scheduler", m.scheduler.as_str())];
            r.push("mixes", &setting, "fairness", None, m.fairness);
            r.push("mixes", &setting, "weighted_speedup", None, m.weighted_speedup);
            r.push("mixes", &setting, "max_slowdown", None, m.max_slowdown);
            for (app, slowdown) in m.apps.iter().zip(&m.slowdowns) {
                let with_flow = [setting[0], setting[1], setting[2], ("flow", app.as_str())];
                if slowdown.is_finite() {
                    r.push("mixes", &with_flow, "slowdown", None, *slowdown);
                } else {
                    no_slowdown.insert(format!("{app} in {mix} under {}", m.scheduler));
                }
            }
        }
        r.notes.extend(no_slowdown.into_iter().map(|what| {
            format!(
                "no slowdown row for {what}: it completed nothing in the run or alone (runs too short for its rate)"
            )
        }));
        r.notes.extend(self.skipped.iter().map(|why| format!("skipped: {why}")));
        let rule = match o.classes {
            Classes::Measured => "measured (FLIN's rule on each app's alone run: chip_busy above 0.08)",
            Classes::Table2 => "FLIN's Table 2 (the paper's classes)",
        };
        r.notes.push(format!("mixes drawn by the classes {rule}"));
        if !self.comparison.is_empty() {
            r.notes.push(format!(
                "max_slowdown's paper value is a bound: under FLIN no flow above {PAPER_FLIN_MAX_SLOWDOWN}x"
            ));
        }
        r
    }
}
