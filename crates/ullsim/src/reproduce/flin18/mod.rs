//! FLIN (ISCA'18, seed 004) evaluation: four-flow mixes of FLIN's workload stand-ins (`app = "flin.*"`) on
//! the `flin-eval` SSD, on FLIN's platform (MQSim's: the drive alone, each flow on its own submission queue,
//! [`PLATFORM`]), in four categories of 25, 50, 75 and 100% high-interference flows, each mix run
//! under Sprinkler, Sprinkler+Fairness and FLIN. Per category it averages fairness and weighted speedup and
//! takes the worst slowdown, and sets FLIN's gains beside the paper's.
//!
//! Method (the slides' "Methodology: Workloads"): a flow is high-interference when, run alone, it keeps the
//! flash chips busy more than 8% of the time (here: mean die utilization of its alone run under Sprinkler);
//! mixes are random combinations of distinct apps with the category's share of high-interference ones.
//! Slowdown is shared / alone mean response time under the same scheduler, with the same seed, so one alone
//! run per (app, scheduler) serves every mix.

mod reproduction;

pub use reproduction::TITLE;

use rayon::prelude::*;
use serde::Serialize;

use crate::engine::stream_rng;
use crate::metrics::fairness::{self, AloneRun, HIGH_INTERFERENCE_DIE_BUSY};
use crate::sim::RunResults;
use crate::workload::app::flin::TABLE2;

/// A transaction scheduler as the evaluation runs it: a `device.tsu.scheduler` name and, for FLIN, which
/// of its stages are on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Variant {
    pub label: &'static str,
    pub scheduler: &'static str,
    /// FLIN's stages 1, 2 and 3 (`flin_stage1`..`3`); ignored by the other schedulers.
    pub flin_stages: [bool; 3],
}

const fn variant(label: &'static str, scheduler: &'static str, flin_stages: [bool; 3]) -> Variant {
    Variant { label, scheduler, flin_stages }
}

const ALL_STAGES: [bool; 3] = [true, true, true];

/// The schedulers compared, baseline first, then FLIN with one stage at a time (the ablation).
pub const VARIANTS: [Variant; 6] = [
    variant("sprinkler", "sprinkler", ALL_STAGES),
    variant("sprinkler-fairness", "sprinkler-fairness", ALL_STAGES),
    variant("flin", "flin", ALL_STAGES),
    variant("flin stage 1 only", "flin", [true, false, false]),
    variant("flin stage 2 only", "flin", [false, true, false]),
    variant("flin stage 3 only", "flin", [false, false, true]),
];
/// The schedulers of the main comparison: the first three variants.
pub const SCHEDULERS: [&str; 3] = [VARIANTS[0].label, VARIANTS[1].label, VARIANTS[2].label];
/// The variants of the ablation table: FLIN with all stages, then each stage alone.
pub const ABLATION: [&str; 4] = [VARIANTS[2].label, VARIANTS[3].label, VARIANTS[4].label, VARIANTS[5].label];
/// Share of the logical space holding data when a run starts: MQSim's `Initial_Occupancy_Percentage` for
/// trace-driven flows (70, in its stock workload.xml), on which FLIN's evaluation ran. The rest of the
/// drive is free, so GC works on a 65%-full drive rather than a completely full one.
pub const INITIAL_OCCUPANCY: f64 = 0.7;
/// FLIN's evaluation platform: MQSim, the drive alone fed by traces, each flow on its own submission queue
/// (`config/platforms/flin18-mqsim.toml`, `model = "device-only"`).
pub const PLATFORM: &str = "flin18-mqsim";
/// Share of high-interference flows in a mix, percent.
pub const CATEGORIES: [u32; 4] = [25, 50, 75, 100];
/// Flows per mix.
pub const FLOWS_PER_MIX: usize = 4;

/// The paper's results per category (slides, "Experimental Results"): FLIN's average fairness as a multiple
/// of Sprinkler's and of Sprinkler+Fairness's, and its weighted-speedup gain over each (0.38 = +38%).
pub const PAPER_FAIRNESS_X_SPRINKLER: [f64; 4] = [1.8, 2.5, 5.6, 54.0];
pub const PAPER_FAIRNESS_X_SPRINKLER_FAIRNESS: [f64; 4] = [1.3, 1.6, 2.4, 3.2];
pub const PAPER_WS_GAIN_OVER_SPRINKLER: [f64; 4] = [0.38, 0.74, 1.32, 1.56];
pub const PAPER_WS_GAIN_OVER_SPRINKLER_FAIRNESS: [f64; 4] = [0.21, 0.32, 0.41, 0.76];
/// No flow above this slowdown under FLIN (slides); several baseline flows exceeded 500x.
pub const PAPER_FLIN_MAX_SLOWDOWN: f64 = 80.0;

/// Which rule puts an app in the high-interference class, from which the categories' mixes are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Classes {
    /// FLIN's rule applied to the app's alone run here: mean die busy above 8%.
    #[default]
    Measured,
    /// The Interference column of FLIN's Table 2 (exch, msnfs, src1-0, src1-1, tpcc, tpce are high): the
    /// paper's mixes, whatever the stand-ins do alone.
    Table2,
}

impl Classes {
    pub const NAMES: [&'static str; 2] = ["measured", "table2"];

    pub fn from_name(name: &str) -> Option<Classes> {
        match name {
            "measured" => Some(Classes::Measured),
            "table2" => Some(Classes::Table2),
            _ => None,
        }
    }
}

/// What to run.
#[derive(Debug, Clone, Serialize)]
pub struct Options {
    /// Mixes per category.
    pub mixes_per_category: usize,
    /// Simulated time of every mix run and of the alone runs slowdowns are measured against, ns.
    pub duration_ns: u64,
    /// Simulated time of the alone runs that classify the apps, ns. Long enough for garbage collection to
    /// start (after about 1 MiB of writes per plane on a preconditioned flin-eval), since FLIN's chip-busy
    /// figure includes it.
    pub classify_duration_ns: u64,
    pub seed: u64,
    /// Multiplies every app's request rate (its inter-arrival times are divided by it; 1 = FLIN's Table 2).
    pub load: f64,
    /// `KEY=VALUE` overrides applied to every run's scenario (as `ullsim run --set`), e.g.
    /// `device.flash.program_suspend=true`.
    pub overrides: Vec<String>,
    /// The app models to draw from (names without the `flin.` prefix).
    pub apps: Vec<String>,
    /// How apps are classified.
    pub classes: Classes,
}

impl Options {
    /// A subset small enough for CI: two mixes per category, 2 s each; apps classified by 60 s alone runs.
    pub fn quick(apps: Vec<String>) -> Self {
        Options {
            mixes_per_category: 2,
            duration_ns: 2_000_000_000,
            classify_duration_ns: 60_000_000_000,
            seed: 1,
            load: 1.0,
            overrides: Vec::new(),
            apps,
            classes: Classes::Measured,
        }
    }

    /// The full evaluation: ten mixes per category, 10 s each.
    pub fn full(apps: Vec<String>) -> Self {
        Options { mixes_per_category: 10, duration_ns: 10_000_000_000, ..Self::quick(apps) }
    }
}

/// An app's classification from its alone run.
#[derive(Debug, Clone, Serialize)]
pub struct AppClass {
    pub app: String,
    /// Mean die utilization of its classification run (alone, under the baseline scheduler).
    pub chip_busy: f64,
    /// Share of that run with every chip busy at once (the literal reading of FLIN's rule).
    pub all_chips_busy: f64,
    /// Its class in FLIN's Table 2 (`None`: not one of its traces).
    pub table2_high: Option<bool>,
    /// The class mixes are drawn by (`Options::classes`): measured, or Table 2's.
    pub high_interference: bool,
}

/// One mix under one scheduler.
#[derive(Debug, Clone, Serialize)]
pub struct MixRun {
    /// Percent of high-interference flows.
    pub category: u32,
    pub apps: Vec<String>,
    /// The variant's label (`VARIANTS`).
    pub scheduler: String,
    pub fairness: f64,
    pub weighted_speedup: f64,
    pub max_slowdown: f64,
    /// Per flow, in `apps` order.
    pub slowdowns: Vec<f64>,
}

/// Averages of one scheduler over one category's mixes.
#[derive(Debug, Clone, Serialize)]
pub struct CategorySummary {
    pub category: u32,
    pub scheduler: String,
    pub mixes: usize,
    pub mean_fairness: f64,
    pub mean_weighted_speedup: f64,
    /// Worst slowdown of any flow in any mix.
    pub max_slowdown: f64,
}

/// FLIN against each baseline in one category, simulated and published.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub category: u32,
    pub fairness_x_sprinkler: f64,
    pub paper_fairness_x_sprinkler: f64,
    pub fairness_x_sprinkler_fairness: f64,
    pub paper_fairness_x_sprinkler_fairness: f64,
    pub ws_gain_over_sprinkler: f64,
    pub paper_ws_gain_over_sprinkler: f64,
    pub ws_gain_over_sprinkler_fairness: f64,
    pub paper_ws_gain_over_sprinkler_fairness: f64,
    pub flin_max_slowdown: f64,
}

/// One FLIN variant against Sprinkler in one category (the ablation table).
#[derive(Debug, Clone, Serialize)]
pub struct AblationRow {
    pub category: u32,
    pub variant: String,
    pub fairness_x_sprinkler: f64,
    pub ws_gain_over_sprinkler: f64,
    pub max_slowdown: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub options: Options,
    pub classes: Vec<AppClass>,
    /// Categories that could not be formed, and why (too few apps of a class).
    pub skipped: Vec<String>,
    pub runs: Vec<MixRun>,
    pub summary: Vec<CategorySummary>,
    pub comparison: Vec<Comparison>,
    pub ablation: Vec<AblationRow>,
}

/// Flow name of an app (its name without the `flin.` prefix).
fn flow_name(app: &str) -> &str {
    app.strip_prefix("flin.").unwrap_or(app)
}

/// The scenario of `apps` sharing the flin-eval SSD under `variant`, their rates multiplied by `load`.
pub fn scenario_text(apps: &[&str], variant: &Variant, duration_ns: u64, load: f64) -> String {
    let [stage1, stage2, stage3] = variant.flin_stages;
    let mut text = format!(
        "name = \"flin18\"\n[run]\nduration = \"{duration_ns}ns\"\n[host]\nplatform = \"{PLATFORM}\"\n\
         [device]\npreset = \"flin-eval\"\n\
         [device.ftl]\nideal_map = true\nprecondition_fill = {INITIAL_OCCUPANCY}\n[device.tsu]\nscheduler = \"{}\"\n\
         flin_stage1 = {stage1}\nflin_stage2 = {stage2}\nflin_stage3 = {stage3}\n",
        variant.scheduler
    );
    for app in apps {
        let name = flow_name(app);
        text.push_str(&format!("[[flow]]\nname = \"{name}\"\napp = \"flin.{name}\"\n"));
        if load != 1.0 {
            text.push_str(&format!("time_scale = {}\n", 1.0 / load));
        }
    }
    text
}

fn run_text(text: &str, seed: u64, overrides: &[String]) -> Result<RunResults, String> {
    super::run_toml(text, "flin18 mix", seed, overrides).map(|(_, results)| results)
}

/// Draw `count` distinct mixes of four distinct apps, `percent`% of them from `high`, the rest from `low`.
pub fn draw_mixes(
    high: &[String],
    low: &[String],
    percent: u32,
    count: usize,
    seed: u64,
) -> Result<Vec<Vec<String>>, String> {
    use rand::seq::SliceRandom;
    let n_high = FLOWS_PER_MIX * percent as usize / 100;
    let n_low = FLOWS_PER_MIX - n_high;
    if high.len() < n_high || low.len() < n_low {
        return Err(format!(
            "category {percent}% needs {n_high} high- and {n_low} low-interference apps; the classification found {} \
             and {} (--classes table2 has six high)",
            high.len(),
            low.len()
        ));
    }
    let mut rng = stream_rng(seed, &format!("flin18:mixes:{percent}"));
    let mut mixes: Vec<Vec<String>> = Vec::new();
    let mut attempts = 0;
    while mixes.len() < count && attempts < 100 * count {
        attempts += 1;
        let mut h = high.to_vec();
        let mut l = low.to_vec();
        h.shuffle(&mut rng);
        l.shuffle(&mut rng);
        let mut mix: Vec<String> = h.into_iter().take(n_high).chain(l.into_iter().take(n_low)).collect();
        mix.sort();
        if !mixes.contains(&mix) {
            mixes.push(mix);
        }
    }
    // Fewer distinct combinations than asked for: use what exists.
    Ok(mixes)
}

/// Run the evaluation.
pub fn run(options: &Options) -> Result<Report, String> {
    let apps: Vec<String> = options.apps.iter().map(|a| flow_name(a).to_string()).collect();
    // 1. Every app alone: a long run under the baseline to classify it, and one per variant as the
    //    slowdown denominator, all in parallel (the last VARIANTS.len() + 1 per app).
    let per_app = VARIANTS.len() + 1;
    let alone_jobs: Vec<(usize, usize)> = (0..apps.len()).flat_map(|a| (0..per_app).map(move |v| (a, v))).collect();
    let alone: Vec<RunResults> = alone_jobs
        .par_iter()
        .map(|&(a, v)| {
            let (variant, duration) = match VARIANTS.get(v) {
                Some(variant) => (variant, options.duration_ns),
                None => (&VARIANTS[0], options.classify_duration_ns),
            };
            run_text(&scenario_text(&[&apps[a]], variant, duration, options.load), options.seed, &options.overrides)
        })
        .collect::<Result<_, _>>()?;
    let alone_of = |app: &str, v: usize| -> &RunResults {
        let a = apps.iter().position(|x| x == app).expect("an app of the list");
        &alone[a * per_app + v]
    };
    let classes: Vec<AppClass> = apps
        .iter()
        .map(|app| {
            let device = &alone_of(app, VARIANTS.len()).device;
            let table2_high = TABLE2.iter().find(|t| t.name == app).map(|t| t.high_interference);
            let measured_high = device.die_utilization.mean > HIGH_INTERFERENCE_DIE_BUSY;
            let high_interference = match options.classes {
                Classes::Measured => Ok(measured_high),
                Classes::Table2 => {
                    table2_high.ok_or_else(|| format!("--classes table2: app \"{app}\" is not in FLIN's Table 2"))
                }
            }?;
            Ok(AppClass {
                app: app.clone(),
                chip_busy: device.die_utilization.mean,
                all_chips_busy: device.all_chips_busy,
                table2_high,
                high_interference,
            })
        })
        .collect::<Result<_, String>>()?;
    let high: Vec<String> = classes.iter().filter(|c| c.high_interference).map(|c| c.app.clone()).collect();
    let low: Vec<String> = classes.iter().filter(|c| !c.high_interference).map(|c| c.app.clone()).collect();
    // 2. The mixes, each under every variant, in parallel.
    let mut mixes: Vec<(u32, Vec<String>)> = Vec::new();
    let mut skipped = Vec::new();
    for percent in CATEGORIES {
        match draw_mixes(&high, &low, percent, options.mixes_per_category, options.seed) {
            Ok(drawn) => mixes.extend(drawn.into_iter().map(|mix| (percent, mix))),
            Err(why) => skipped.push(why),
        }
    }
    let shared_jobs: Vec<(usize, usize)> =
        (0..mixes.len()).flat_map(|m| (0..VARIANTS.len()).map(move |v| (m, v))).collect();
    let runs: Vec<MixRun> = shared_jobs
        .par_iter()
        .map(|&(m, v)| {
            let (category, mix) = &mixes[m];
            let variant = &VARIANTS[v];
            let names: Vec<&str> = mix.iter().map(String::as_str).collect();
            let text = scenario_text(&names, variant, options.duration_ns, options.load);
            let mut shared = run_text(&text, options.seed, &options.overrides)?;
            let alone_flows: Vec<AloneRun> = mix.iter().map(|app| AloneRun::of(alone_of(app, v))).collect();
            let f = fairness::attach(&mut shared.flows, &alone_flows)
                .ok_or_else(|| format!("mix {mix:?} under {}: no flow completed anything", variant.label))?;
            Ok(MixRun {
                category: *category,
                apps: mix.clone(),
                scheduler: variant.label.to_string(),
                fairness: f.fairness,
                weighted_speedup: f.weighted_speedup,
                max_slowdown: f.max_slowdown,
                slowdowns: shared.flows.iter().map(|fl| fl.slowdown.unwrap_or(f64::NAN)).collect(),
            })
        })
        .collect::<Result<_, String>>()?;
    let summary = summarize(&runs);
    let comparison = compare(&summary);
    let ablation = ablation(&summary);
    Ok(Report { options: options.clone(), classes, skipped, runs, summary, comparison, ablation })
}

/// Per category and scheduler: mean fairness and weighted speedup, worst slowdown.
pub fn summarize(runs: &[MixRun]) -> Vec<CategorySummary> {
    let mut out = Vec::new();
    for category in CATEGORIES {
        for scheduler in VARIANTS.map(|v| v.label) {
            let these: Vec<&MixRun> =
                runs.iter().filter(|r| r.category == category && r.scheduler == scheduler).collect();
            if these.is_empty() {
                continue;
            }
            let n = these.len() as f64;
            out.push(CategorySummary {
                category,
                scheduler: scheduler.to_string(),
                mixes: these.len(),
                mean_fairness: these.iter().map(|r| r.fairness).sum::<f64>() / n,
                mean_weighted_speedup: these.iter().map(|r| r.weighted_speedup).sum::<f64>() / n,
                max_slowdown: these.iter().map(|r| r.max_slowdown).fold(0.0, f64::max),
            });
        }
    }
    out
}

/// FLIN's gains per category beside the paper's.
pub fn compare(summary: &[CategorySummary]) -> Vec<Comparison> {
    let find =
        |category: u32, scheduler: &str| summary.iter().find(|s| s.category == category && s.scheduler == scheduler);
    CATEGORIES
        .iter()
        .enumerate()
        .filter_map(|(i, &category)| {
            let (sp, spf, flin) =
                (find(category, SCHEDULERS[0])?, find(category, SCHEDULERS[1])?, find(category, SCHEDULERS[2])?);
            Some(Comparison {
                category,
                fairness_x_sprinkler: flin.mean_fairness / sp.mean_fairness,
                paper_fairness_x_sprinkler: PAPER_FAIRNESS_X_SPRINKLER[i],
                fairness_x_sprinkler_fairness: flin.mean_fairness / spf.mean_fairness,
                paper_fairness_x_sprinkler_fairness: PAPER_FAIRNESS_X_SPRINKLER_FAIRNESS[i],
                ws_gain_over_sprinkler: flin.mean_weighted_speedup / sp.mean_weighted_speedup - 1.0,
                paper_ws_gain_over_sprinkler: PAPER_WS_GAIN_OVER_SPRINKLER[i],
                ws_gain_over_sprinkler_fairness: flin.mean_weighted_speedup / spf.mean_weighted_speedup - 1.0,
                paper_ws_gain_over_sprinkler_fairness: PAPER_WS_GAIN_OVER_SPRINKLER_FAIRNESS[i],
                flin_max_slowdown: flin.max_slowdown,
            })
        })
        .collect()
}

/// Each FLIN variant of `ABLATION` against Sprinkler, per category.
pub fn ablation(summary: &[CategorySummary]) -> Vec<AblationRow> {
    let find = |category: u32, label: &str| summary.iter().find(|s| s.category == category && s.scheduler == label);
    let mut rows = Vec::new();
    for category in CATEGORIES {
        let Some(base) = find(category, SCHEDULERS[0]) else { continue };
        for label in ABLATION {
            if let Some(v) = find(category, label) {
                rows.push(AblationRow {
                    category,
                    variant: label.to_string(),
                    fairness_x_sprinkler: v.mean_fairness / base.mean_fairness,
                    ws_gain_over_sprinkler: v.mean_weighted_speedup / base.mean_weighted_speedup - 1.0,
                    max_slowdown: v.max_slowdown,
                });
            }
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scenario;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn mixes_have_the_category_share_of_distinct_high_interference_apps() {
        let high = names(&["a", "b", "c", "d", "e"]);
        let low = names(&["p", "q", "r", "s", "t", "u"]);
        for percent in CATEGORIES {
            let mixes = draw_mixes(&high, &low, percent, 5, 7).unwrap();
            assert_eq!(mixes.len(), 5);
            for mix in &mixes {
                let mut unique = mix.clone();
                unique.dedup();
                assert_eq!(unique.len(), FLOWS_PER_MIX, "{mix:?}");
                let n_high = mix.iter().filter(|a| high.contains(a)).count();
                assert_eq!(n_high * 100, percent as usize * FLOWS_PER_MIX, "{mix:?}");
            }
            assert_eq!(mixes, draw_mixes(&high, &low, percent, 5, 7).unwrap(), "same seed, same mixes");
        }
        // Five high apps make five distinct 4-of-5 mixes at most.
        assert_eq!(draw_mixes(&high, &low, 100, 9, 1).unwrap().len(), 5);
        let err = draw_mixes(&high[..1], &low, 50, 1, 1).unwrap_err();
        assert!(err.contains("needs 2 high"), "{err}");
    }

    #[test]
    fn summary_and_comparison_average_per_category() {
        let run = |category: u32, scheduler: &str, fairness: f64, ws: f64, max: f64| MixRun {
            category,
            apps: vec![],
            scheduler: scheduler.to_string(),
            fairness,
            weighted_speedup: ws,
            max_slowdown: max,
            slowdowns: vec![],
        };
        let runs = vec![
            run(25, "sprinkler", 0.2, 2.0, 10.0),
            run(25, "sprinkler", 0.4, 2.0, 30.0),
            run(25, "sprinkler-fairness", 0.3, 2.5, 5.0),
            run(25, "flin", 0.6, 3.0, 4.0),
        ];
        let summary = summarize(&runs);
        assert_eq!(summary.len(), 3);
        assert!((summary[0].mean_fairness - 0.3).abs() < 1e-12);
        assert_eq!(summary[0].max_slowdown, 30.0);
        let c = &compare(&summary)[0];
        assert!((c.fairness_x_sprinkler - 2.0).abs() < 1e-12);
        assert!((c.fairness_x_sprinkler_fairness - 2.0).abs() < 1e-12);
        assert!((c.ws_gain_over_sprinkler - 0.5).abs() < 1e-12);
        assert!((c.ws_gain_over_sprinkler_fairness - 0.2).abs() < 1e-12);
        assert_eq!(c.paper_fairness_x_sprinkler, 1.8);
        // The ablation sets each FLIN variant present beside Sprinkler.
        let a = ablation(&summary);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].variant, "flin");
        assert!((a[0].fairness_x_sprinkler - 2.0).abs() < 1e-12);
        assert!((a[0].ws_gain_over_sprinkler - 0.5).abs() < 1e-12);
        assert_eq!(a[0].max_slowdown, 4.0);
    }

    #[test]
    fn scenario_text_sets_the_variant_occupancy_and_load() {
        let text = scenario_text(&["tpcc", "flin.wsrch"], &VARIANTS[3], 1_000, 2.0);
        let scenario = Scenario::from_toml_str(&text, "t", std::path::Path::new("."), &[]).expect("a valid scenario");
        assert_eq!(scenario.flows.len(), 2);
        for key in ["flin_stage1 = true", "flin_stage2 = false", "flin_stage3 = false", "time_scale = 0.5"] {
            assert!(text.contains(key), "{key} missing from\n{text}");
        }
        assert!(text.contains(&format!("precondition_fill = {INITIAL_OCCUPANCY}")));
        assert!(text.contains(&format!("platform = \"{PLATFORM}\"")), "FLIN's runs are on MQSim's platform");
        assert_eq!(scenario.host.model, crate::config::host::HostModel::DeviceOnly, "the platform's host is no host");
        // Load 1 leaves the model's rates alone.
        assert!(!scenario_text(&["tpcc"], &VARIANTS[0], 1_000, 1.0).contains("time_scale"));
    }
}
