//! How a reproduction's rows score against the paper, under the rule "calibrate the baseline, predict the
//! treatment" (docs/validation.md): a row is `calibrated` (a baseline value the setup is fitted to) or
//! `predicted` (everything else, the mechanisms' effects above all), and only predicted rows with a paper
//! value count in the score.
//!
//! A predicted row is judged by its kind, read from its metric's name ([`neutral`]):
//! - an effect (a ratio such as `mean_vs_vanilla`, neutral 1; a change such as `p99_cut_pct`,
//!   `ops_gain_pct` or `polled_saving_us`, neutral 0): **close** when its effect (value − neutral) is
//!   within 25% of the paper's, **direction** when only its sign agrees, **off** when the sign is wrong;
//! - a plain value (`mean_us`, `iops`), or an effect the paper gives as none (`iops_vs_best` = 1): **close**
//!   within 25% of the paper's, else **far** (a value has no direction).
//!
//! A calibrated row with a paper value counts as **fitted** when within 10% of it (the bar for a
//! calibration that holds).

use serde::{Deserialize, Serialize};

use super::rows::Row;

/// What a row is under the rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// A baseline value (the paper's Vanilla, alone or stated platform) the setup is fitted to.
    Calibrated,
    /// A value the model predicts once the baseline is set: what the paper's mechanisms change.
    #[default]
    Predicted,
}

/// How a row with a paper value compares with it: a predicted row's verdict, or whether a calibrated one
/// holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Close,
    Direction,
    Off,
    Far,
    /// A calibrated row within [`FITTED`] of the paper.
    Fitted,
    /// A calibrated row further from it.
    Unfitted,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Close => "close",
            Verdict::Direction => "direction",
            Verdict::Off => "off",
            Verdict::Far => "far",
            Verdict::Fitted => "fitted",
            Verdict::Unfitted => "unfitted",
        }
    }
}

/// `row`'s verdict, by its role; `None` without a paper value.
pub fn verdict(row: &Row) -> Option<Verdict> {
    let paper = row.paper?;
    Some(match row.role {
        Role::Calibrated if (row.simulated - paper).abs() <= FITTED * paper.abs() => Verdict::Fitted,
        Role::Calibrated => Verdict::Unfitted,
        Role::Predicted => judge(&row.metric, paper, row.simulated),
    })
}

/// Within this share of the paper's effect (or value) a prediction is close.
pub const CLOSE: f64 = 0.25;
/// Within this share of the paper's value a calibration holds.
pub const FITTED: f64 = 0.10;

/// The value of `metric` that means "no effect", if it is an effect: 1 for a ratio, 0 for a change (a cut,
/// gain, loss, saving or difference, in % or in a unit). `None`: a plain value.
pub fn neutral(metric: &str) -> Option<f64> {
    let change = ["_cut", "_gain", "_loss", "saving", "diff_"].iter().any(|w| metric.contains(w));
    if change {
        Some(0.0)
    } else if metric.contains("_vs_") || metric.contains("_x_") || metric.ends_with("_ratio") {
        Some(1.0)
    } else {
        None
    }
}

/// How `simulated` compares with `paper` for a row of `metric`.
pub fn judge(metric: &str, paper: f64, simulated: f64) -> Verdict {
    match neutral(metric) {
        // The paper claims no effect (e.g. `iops_vs_best` = 1: this one is best): judged as a value.
        Some(n) if paper == n => judge_value(paper, simulated),
        Some(n) => {
            let (want, got) = (paper - n, simulated - n);
            if (got - want).abs() <= CLOSE * want.abs() {
                Verdict::Close
            } else if got == 0.0 || want.signum() != got.signum() {
                Verdict::Off
            } else {
                Verdict::Direction
            }
        }
        None => judge_value(paper, simulated),
    }
}

fn judge_value(paper: f64, simulated: f64) -> Verdict {
    if (simulated - paper).abs() <= CLOSE * paper.abs() {
        Verdict::Close
    } else {
        Verdict::Far
    }
}

/// The rows of one role that carry a paper value, by verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Predicted {
    pub rows: u32,
    pub close: u32,
    pub direction: u32,
    pub off: u32,
    pub far: u32,
}

impl Predicted {
    fn count(&mut self, verdict: Verdict) {
        self.rows += 1;
        match verdict {
            Verdict::Close => self.close += 1,
            Verdict::Direction => self.direction += 1,
            Verdict::Off => self.off += 1,
            Verdict::Far => self.far += 1,
            Verdict::Fitted | Verdict::Unfitted => unreachable!("a calibrated row's verdict is counted apart"),
        }
    }

    /// "17 (close 2, direction 9, off 6, far 0)".
    fn text(&self) -> String {
        format!(
            "{} (close {}, direction {}, off {}, far {})",
            self.rows, self.close, self.direction, self.off, self.far
        )
    }

    /// Share of the rows that are close, in % (0 with none).
    pub fn close_pct(&self) -> f64 {
        if self.rows == 0 {
            0.0
        } else {
            100.0 * f64::from(self.close) / f64::from(self.rows)
        }
    }
}

/// Calibrated rows that carry a paper value, and how many are within [`FITTED`] of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Calibrated {
    pub rows: u32,
    pub fitted: u32,
}

/// A reproduction's score: its predicted rows with paper values, those of its headline figures (the
/// paper's main claims, [`super::Reproduction::headline`]), and its calibrated rows with paper values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Score {
    pub predicted: Predicted,
    pub headline: Predicted,
    pub calibrated: Calibrated,
}

impl Score {
    /// The score of `rows`, whose figures named in `headline` are the paper's main claims.
    pub fn of(rows: &[Row], headline: &[String]) -> Score {
        let mut score = Score::default();
        for row in rows {
            let Some(v) = verdict(row) else { continue };
            match v {
                Verdict::Fitted | Verdict::Unfitted => {
                    score.calibrated.rows += 1;
                    score.calibrated.fitted += u32::from(v == Verdict::Fitted);
                }
                _ => {
                    score.predicted.count(v);
                    if headline.contains(&row.figure) {
                        score.headline.count(v);
                    }
                }
            }
        }
        score
    }

    /// One line: "headline 17 (close 2, direction 9, off 6, far 0); all predicted 40 (...); calibrated 3
    /// (within 10%: 1)".
    pub fn line(&self) -> String {
        format!(
            "headline {}; all predicted {}; calibrated {} (within 10%: {})",
            self.headline.text(),
            self.predicted.text(),
            self.calibrated.rows,
            self.calibrated.fitted
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_names_give_the_kind() {
        for (metric, want) in [
            ("mean_vs_vanilla", Some(1.0)),
            ("context_switches_ratio", Some(1.0)),
            ("iops_vs_best", Some(1.0)),
            ("fairness_x_sprinkler", Some(1.0)),
            ("ws_gain_over_sprinkler", Some(0.0)),
            ("p99_9_cut_pct", Some(0.0)),
            ("rocksdb_ops_gain_max_pct", Some(0.0)),
            ("diff_vs_none_pct", Some(0.0)),
            ("polled_saving_us", Some(0.0)),
            ("max_energy_saving_vs_bfq_j", Some(0.0)),
            ("hit_rate_gain", Some(0.0)),
            ("worst_loss_pct", Some(0.0)),
            ("io_completion_cut_us", Some(0.0)),
            ("mean_us", None),
            ("median_latency_us", None),
            ("iops", None),
            ("critical_cache_share", None),
        ] {
            assert_eq!(neutral(metric), want, "{metric}");
        }
    }

    #[test]
    fn effects_are_judged_by_their_size_and_sign_values_by_their_distance() {
        // A cut of 36% predicted as 30%: within 25% of 36. 59%: right sign only. -10%: wrong sign.
        assert_eq!(judge("mean_cut_pct", 36.0, 30.0), Verdict::Close);
        assert_eq!(judge("mean_cut_pct", 36.0, 59.0), Verdict::Direction);
        assert_eq!(judge("mean_cut_pct", 36.0, -10.0), Verdict::Off);
        // Ratios around 1: 0.95 against 0.80 is a fifth of the effect, not close though within 25% of 0.80.
        assert_eq!(judge("mean_vs_vanilla", 0.80, 0.95), Verdict::Direction);
        assert_eq!(judge("mean_vs_vanilla", 0.80, 0.84), Verdict::Close);
        assert_eq!(judge("mean_vs_vanilla", 0.80, 1.02), Verdict::Off);
        // No effect in the paper (this one is best): judged as a value.
        assert_eq!(judge("iops_vs_best", 1.0, 0.99), Verdict::Close);
        assert_eq!(judge("iops_vs_best", 1.0, 0.70), Verdict::Far);
        // Plain values.
        assert_eq!(judge("mean_us", 800.0, 950.0), Verdict::Close);
        assert_eq!(judge("mean_us", 800.0, 1100.0), Verdict::Far);
        assert_eq!(judge("mean_us", 800.0, 500.0), Verdict::Far);
    }

    #[test]
    fn the_score_counts_rows_with_paper_values_by_role() {
        let row = |metric: &str, role: Role, paper: Option<f64>, simulated: f64| Row {
            role,
            ..Row::new("f", &[], metric, paper, simulated)
        };
        let rows = [
            row("mean_us", Role::Calibrated, Some(100.0), 105.0),
            row("mean_us", Role::Calibrated, Some(100.0), 120.0),
            row("mean_us", Role::Calibrated, None, 1.0),
            row("mean_cut_pct", Role::Predicted, Some(36.0), 30.0),
            row("mean_cut_pct", Role::Predicted, Some(36.0), 59.0),
            row("p99_vs_vanilla", Role::Predicted, Some(0.9), 1.1),
            row("mean_us", Role::Predicted, Some(10.0), 20.0),
            row("mean_us", Role::Predicted, None, 20.0),
        ];
        let s = Score::of(&rows, &["f".to_string()]);
        assert_eq!(s.calibrated, Calibrated { rows: 2, fitted: 1 });
        assert_eq!(s.predicted, Predicted { rows: 4, close: 1, direction: 1, off: 1, far: 1 });
        assert_eq!(s.headline, s.predicted, "every row is of the headline figure");
        assert_eq!(s.predicted.close_pct(), 25.0);
        assert_eq!(
            s.line(),
            "headline 4 (close 1, direction 1, off 1, far 1); all predicted 4 (close 1, direction 1, off 1, far 1); \
             calibrated 2 (within 10%: 1)"
        );
        assert_eq!(Score::of(&rows, &[]).headline, Predicted::default());
    }
}
