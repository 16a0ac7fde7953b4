//! Each reproduction's baseline and headline under the rule "calibrate the baseline, predict the treatment"
//! (docs/validation.md): which rows are the baseline a setup is fitted to (the paper's Vanilla stack, its
//! Sprinkler scheduler, the `none` scheduler with interrupts, the alone runs' classes) and which figures carry
//! the paper's main claims. Every other row is a prediction. One function per paper, here together, so the
//! rule reads in one place.

use super::rows::{Reproduction, Row};
use super::score::{neutral, verdict, Role, Score};

/// The rows that are `paper`'s baseline, and its headline figures.
fn rule(paper: &str) -> (fn(&Row) -> bool, &'static [&'static str]) {
    match paper {
        // AIOS against vanilla Linux 5.0.5: the vanilla runs are the baseline; the abstract's ranges are the
        // claims.
        "aios19" => (|r| stack(r) == Some("vanilla"), &["abstract"]),
        // FastResponse's Vanilla (alone and beside each app, Figs. 4-5, and its breakdown in Figs. 12-16);
        // the claims are Figs. 12 and 13's cuts and Fig. 15a's breakdown.
        "fastresponse22" => (|r| stack(r) == Some("vanilla"), &["fig12", "fig13", "fig15a"]),
        // FlashShare's Vanilla stack (Figs. 11-12 and the Vanilla breakdown of Fig. 15b); Figs. 11-13 claim.
        "flashshare18" => (|r| stack(r) == Some("vanilla"), &["fig11", "fig12", "fig13"]),
        // FLIN: the applications' alone behaviour (Table 2's classes) and Sprinkler's runs are the baseline;
        // fairness and weighted speedup over Sprinkler are the claims.
        "flin18" => (
            |r| r.figure == "table2" || setting(r, "scheduler") == Some("sprinkler"),
            &["fairness", "weighted_speedup"],
        ),
        // HotStorage'23: the `none` scheduler with interrupts, as plain values, is the baseline; every
        // scheduler's difference from it, polling's saving and which scheduler is best are predictions. Table
        // 1 is the headline.
        "hotstorage23" => (
            |r| {
                setting(r, "scheduler") == Some("none")
                    && setting(r, "completion") != Some("polled")
                    && neutral(&r.metric).is_none()
            },
            &["table1"],
        ),
        _ => (|_| false, &[]),
    }
}

fn setting<'a>(row: &'a Row, key: &str) -> Option<&'a str> {
    row.setting.get(key).map(String::as_str)
}

fn stack(row: &Row) -> Option<&str> {
    setting(row, "stack")
}

/// Mark `reproduction`'s rows calibrated or predicted and judge each, name its headline figures and score it.
pub fn assign(reproduction: &mut Reproduction) {
    let (baseline, headline) = rule(&reproduction.paper);
    for row in &mut reproduction.rows {
        row.role = if baseline(row) { Role::Calibrated } else { Role::Predicted };
        row.verdict = verdict(row);
    }
    reproduction.headline = headline.iter().map(|f| f.to_string()).collect();
    reproduction.score = Score::of(&reproduction.rows, &reproduction.headline);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baselines_are_calibrated_and_treatments_predicted() {
        let mut r = Reproduction::new("fastresponse22", "t");
        r.push("fig4-5", &[("app", "bayes"), ("stack", "vanilla")], "mean_vs_alone", Some(1.5), 4.1);
        r.push("fig12", &[("app", "all"), ("stack", "bs-opt")], "mean_cut_pct", Some(36.0), 59.0);
        r.push("fig14a", &[("app", "all")], "max_loss_pct", Some(3.0), 1.0);
        assign(&mut r);
        let roles: Vec<Role> = r.rows.iter().map(|row| row.role).collect();
        assert_eq!(roles, [Role::Calibrated, Role::Predicted, Role::Predicted]);
        assert_eq!(r.headline, ["fig12", "fig13", "fig15a"]);
        assert_eq!((r.score.headline.rows, r.score.headline.direction), (1, 1));
        assert_eq!((r.score.predicted.rows, r.score.calibrated.rows), (2, 1));

        let mut h = Reproduction::new("hotstorage23", "t");
        let none = [("completion", "interrupt"), ("rw", "randread"), ("scheduler", "none")];
        h.push("table1", &none, "median_latency_us", Some(10.0), 10.5);
        h.push(
            "table1",
            &[("completion", "polled"), ("rw", "randread"), ("scheduler", "none")],
            "median_latency_us",
            Some(8.0),
            8.0,
        );
        h.push("fig1", &[("iodepth", "1"), ("rw", "randread"), ("scheduler", "none")], "iops_vs_best", Some(1.0), 1.0);
        h.push(
            "table1",
            &[("completion", "interrupt"), ("rw", "randread"), ("scheduler", "bfq")],
            "diff_vs_none_pct",
            Some(20.0),
            22.0,
        );
        assign(&mut h);
        let roles: Vec<Role> = h.rows.iter().map(|row| row.role).collect();
        assert_eq!(roles, [Role::Calibrated, Role::Predicted, Role::Predicted, Role::Predicted]);
        assert_eq!(h.score.headline.rows, 2, "table1's predicted rows only");
    }

    #[test]
    fn every_reproduction_has_a_rule() {
        for name in super::super::named::NAMES {
            assert!(!rule(name).1.is_empty(), "{name} names no headline figure");
        }
    }
}
