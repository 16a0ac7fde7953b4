//! `ullsim reproduce all`: every paper's reproduction, and one scorecard of their scores (docs/output.md,
//! "Scorecard").

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::rows::Reproduction;
use super::score::Score;

/// One paper's line of the scorecard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaperScore {
    pub paper: String,
    pub headline_figures: Vec<String>,
    pub score: Score,
}

/// Every reproduction that ran, and the scorecard of their scores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scorecard {
    pub scorecard: Vec<PaperScore>,
    pub reproductions: Vec<Reproduction>,
}

impl Scorecard {
    pub fn of(reproductions: Vec<Reproduction>) -> Scorecard {
        let scorecard = reproductions
            .iter()
            .map(|r| PaperScore { paper: r.paper.clone(), headline_figures: r.headline.clone(), score: r.score })
            .collect();
        Scorecard { scorecard, reproductions }
    }

    /// The scorecard as a text table: per paper its headline rows by verdict, then all its predicted rows
    /// and its calibrated rows.
    pub fn table(&self) -> String {
        let mut out = String::from(
            "scorecard: predicted rows with a paper value (close: within 25% of the paper's effect or value; \
             direction: right sign only; off: wrong sign; far: a value beyond 25%)\n\n",
        );
        let _ = writeln!(
            out,
            "{:<16}  {:>8}  {:>5}  {:>9}  {:>3}  {:>3}  {:>7}  {:>13}  {:>10}  {:>10}",
            "paper",
            "headline",
            "close",
            "direction",
            "off",
            "far",
            "close %",
            "all predicted",
            "all close",
            "calibrated"
        );
        for p in &self.scorecard {
            let (h, a, c) = (p.score.headline, p.score.predicted, p.score.calibrated);
            let _ = writeln!(
                out,
                "{:<16}  {:>8}  {:>5}  {:>9}  {:>3}  {:>3}  {:>7.0}  {:>13}  {:>10}  {:>10}",
                p.paper,
                h.rows,
                h.close,
                h.direction,
                h.off,
                h.far,
                h.close_pct(),
                a.rows,
                a.close,
                format!("{}/{}", c.fitted, c.rows)
            );
        }
        out.push_str("\n(calibrated: rows within 10% of the paper / calibrated rows with a paper value)\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reproduce::roles;

    #[test]
    fn one_line_per_paper_from_its_score() {
        let mut a = Reproduction::new("fastresponse22", "t");
        a.push("fig12", &[("app", "all"), ("stack", "bs-opt")], "mean_cut_pct", Some(36.0), 30.0);
        a.push("fig12", &[("app", "all"), ("stack", "selectisr")], "p99_cut_pct", Some(20.0), -5.0);
        a.push("fig4-5", &[("app", "bayes"), ("stack", "vanilla")], "mean_vs_alone", Some(1.5), 1.52);
        roles::assign(&mut a);
        let card = Scorecard::of(vec![a]);
        assert_eq!(card.scorecard.len(), 1);
        let table = card.table();
        let line = table.lines().find(|l| l.starts_with("fastresponse22")).expect("a line for the paper");
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cells, ["fastresponse22", "2", "1", "0", "1", "0", "50", "2", "1", "1/1"], "{table}");
        let json = serde_json::to_string(&card).unwrap();
        assert_eq!(serde_json::from_str::<Scorecard>(&json).unwrap(), card);
    }
}
