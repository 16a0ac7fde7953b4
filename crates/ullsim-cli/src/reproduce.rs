//! `ullsim reproduce NAME`: a paper's evaluation that takes many runs (generated mixes, alone runs), with
//! the simulated figures beside the published ones.

use std::fmt::Write as _;

use anyhow::{bail, Result};
use ullsim::reproduce::{fastresponse22, flin18};

/// Names accepted by `ullsim reproduce`.
pub const NAMES: &[&str] = &["fastresponse22", "flin18"];

pub struct Args<'a> {
    pub name: &'a str,
    pub all: bool,
    pub mixes: Option<u64>,
    pub duration: Option<&'a str>,
    pub classify_duration: Option<&'a str>,
    pub seed: Option<u64>,
    pub load: Option<f64>,
    pub classes: Option<&'a str>,
    pub set: &'a [String],
    pub output: &'a crate::Output,
}

pub fn main(args: Args) -> Result<()> {
    match args.name {
        "flin18" => flin18_main(&args),
        "fastresponse22" => fastresponse22_main(&args),
        other => bail!("unknown reproduction \"{other}\"; expected one of {NAMES:?}"),
    }
}

fn flin18_main(args: &Args) -> Result<()> {
    let apps = ullsim::workload::app::names().into_iter().filter(|n| n.starts_with("flin.")).collect();
    let mut options = if args.all { flin18::Options::full(apps) } else { flin18::Options::quick(apps) };
    if let Some(m) = args.mixes {
        if m == 0 {
            bail!("--mixes: expected at least 1 mix per category");
        }
        options.mixes_per_category = usize::try_from(m).map_err(|_| anyhow::anyhow!("--mixes: {m} is too many"))?;
    }
    if let Some(d) = args.duration {
        options.duration_ns = duration_arg("--duration", d)?;
    }
    if let Some(s) = args.seed {
        options.seed = s;
    }
    if let Some(load) = args.load {
        if !(load.is_finite() && load > 0.0) {
            bail!("--load: expected a rate multiplier > 0, got {load}");
        }
        options.load = load;
    }
    if let Some(name) = args.classes {
        options.classes = flin18::Classes::from_name(name).ok_or_else(|| {
            anyhow::anyhow!("--classes: unknown rule \"{name}\"; expected one of {:?}", flin18::Classes::NAMES)
        })?;
    }
    options.overrides = args.set.to_vec();
    if let Some(d) = args.classify_duration {
        options.classify_duration_ns = duration_arg("--classify-duration", d)?;
    }
    let report = flin18::run(&options).map_err(|e| anyhow::anyhow!("flin18: {e}"))?;
    args.output.emit(|| &report, || render_flin18(&report))
}

fn fastresponse22_main(args: &Args) -> Result<()> {
    let not_here = [
        ("--mixes", args.mixes.is_some()),
        ("--classify-duration", args.classify_duration.is_some()),
        ("--load", args.load.is_some()),
        ("--classes", args.classes.is_some()),
    ];
    if let Some((flag, _)) = not_here.iter().find(|(_, set)| *set) {
        bail!("{flag} does not apply to fastresponse22 (it takes --all, --duration, --seed and --set)");
    }
    let mut options = if args.all { fastresponse22::Options::full() } else { fastresponse22::Options::quick() };
    if let Some(d) = args.duration {
        options.duration_ns = duration_arg("--duration", d)?;
    }
    if let Some(s) = args.seed {
        options.seed = s;
    }
    options.overrides = args.set.to_vec();
    let report = fastresponse22::run(&options).map_err(|e| anyhow::anyhow!("fastresponse22: {e}"))?;
    args.output.emit(|| &report, || report.table())
}

/// A duration flag's value (bare numbers are seconds), which must be > 0.
fn duration_arg(flag: &str, text: &str) -> Result<u64> {
    let ns = ullsim::config::units::parse_duration(text, 1_000_000_000).map_err(|e| anyhow::anyhow!("{flag}: {e}"))?;
    if ns == 0 {
        bail!("{flag}: expected a duration > 0");
    }
    Ok(ns)
}

/// The report as text tables.
pub fn render_flin18(report: &flin18::Report) -> String {
    let mut out = String::new();
    let o = &report.options;
    let _ = writeln!(
        out,
        "FLIN (ISCA'18) evaluation on flin-eval: {} mixes per category, {} ms each (classification {} ms), \
         load x{}, seed {}, classes {}{}\n",
        o.mixes_per_category,
        o.duration_ns / 1_000_000,
        o.classify_duration_ns / 1_000_000,
        o.load,
        o.seed,
        if o.classes == flin18::Classes::Table2 { "from Table 2" } else { "measured" },
        if o.overrides.is_empty() { String::new() } else { format!(", --set {}", o.overrides.join(" --set ")) }
    );
    let _ = writeln!(out, "app        chip busy alone  class  Table 2");
    let class = |high: bool| if high { "high" } else { "low" };
    for c in &report.classes {
        let table2 = c.table2_high.map_or("-", class);
        let _ = writeln!(out, "{:<10} {:>15.3}  {:<5}  {table2}", c.app, c.chip_busy, class(c.high_interference));
    }
    for why in &report.skipped {
        let _ = writeln!(out, "skipped: {why}");
    }
    let _ = writeln!(out, "\ncategory  scheduler             mixes  fairness  weighted speedup  max slowdown");
    for s in &report.summary {
        let _ = writeln!(
            out,
            "{:>7}%  {:<20} {:>6}  {:>8.3}  {:>16.3}  {:>12.1}",
            s.category, s.scheduler, s.mixes, s.mean_fairness, s.mean_weighted_speedup, s.max_slowdown
        );
    }
    let _ = writeln!(out, "\nFLIN vs the baselines (simulated / paper)");
    let _ = writeln!(
        out,
        "category  fairness x Sprinkler  x Sprinkler+F  WS vs Sprinkler  vs Sprinkler+F  FLIN max slowdown"
    );
    let pair = |sim: String, paper: String| format!("{sim} / {paper}");
    let pct = |x: f64| format!("{:+.0}%", 100.0 * x);
    for c in &report.comparison {
        let _ = writeln!(
            out,
            "{:>7}%  {:>20}  {:>13}  {:>15}  {:>14}  {:>17}",
            c.category,
            pair(format!("{:.2}", c.fairness_x_sprinkler), format!("{:.1}", c.paper_fairness_x_sprinkler)),
            pair(
                format!("{:.2}", c.fairness_x_sprinkler_fairness),
                format!("{:.1}", c.paper_fairness_x_sprinkler_fairness)
            ),
            pair(pct(c.ws_gain_over_sprinkler), pct(c.paper_ws_gain_over_sprinkler)),
            pair(pct(c.ws_gain_over_sprinkler_fairness), pct(c.paper_ws_gain_over_sprinkler_fairness)),
            pair(format!("{:.1}", c.flin_max_slowdown), format!("<{:.0}", flin18::PAPER_FLIN_MAX_SLOWDOWN)),
        );
    }
    let _ = writeln!(out, "\nAblation: FLIN's stages against Sprinkler");
    let _ = writeln!(out, "category  variant              fairness x Sprinkler  WS vs Sprinkler  max slowdown");
    for a in &report.ablation {
        let _ = writeln!(
            out,
            "{:>7}%  {:<20} {:>20.2}  {:>15}  {:>12.1}",
            a.category,
            a.variant,
            a.fairness_x_sprinkler,
            pct(a.ws_gain_over_sprinkler),
            a.max_slowdown
        );
    }
    out
}
