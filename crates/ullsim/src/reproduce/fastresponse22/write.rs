//! FastResponse's write path: RocksDB `fillsync` (critical: a 4 KB WAL append through the page cache and an
//! fsync per update) beside each app of Table 1 (the read path's calibrated flows), under the five stacks of
//! Fig. 13 (Vanilla, SelectISR, B-Opt, BS-Opt and BSJ-Opt = BS-Opt + fjournaling).
//! Rows: Fig. 13 (fillsync's latency, and BSJ-Opt's average cut against Vanilla), Fig. 14(b) (the apps'
//! throughput beside fillsync), Fig. 15(b) (the fsync's phases beside Bayes) and the write half of
//! Figs. 4–5 (beside Bayes against alone, under Vanilla).
//! fillsync is `fastresponse.fillsync`: an update every 0.5 ms at a fixed rate, its latency the fsync's,
//! from when its thread starts it (db_bench's clock).
use super::{Options, PLATFORM, SERVER_CORES, WARMUP_NS};
use crate::reproduce::rows::Reproduction;
use crate::reproduce::{overrides_for, per_seed, run_toml};
use crate::sim::RunResults;

/// The stacks of Fig. 13: (label, `host.stack`).
pub const STACKS: [(&str, &str); 5] = [
    ("vanilla", "vanilla"),
    ("selectisr", "selectisr"),
    ("b-opt", "fastresponse-b"),
    ("bs-opt", "fastresponse-bs"),
    ("bsj-opt", "fastresponse"),
];

/// The paper's numbers (§4.4).
pub mod paper {
    /// BSJ-Opt against Vanilla, fillsync averaged over the five apps: mean, p99, p99.9 reductions (%).
    pub const BSJ_CUTS: [f64; 3] = [58.0, 83.0, 74.0];
    /// Fig. 15(b) beside Bayes (us): T_D2 under Vanilla and B-Opt (LD throttles other files' writeback),
    /// and none of T_D2 and T_Sched under BSJ-Opt.
    pub const T_D2: [(&str, f64); 3] = [("vanilla", 18.0), ("b-opt", 34.0), ("bsj-opt", 0.0)];
    pub const T_SCHED: [(&str, f64); 1] = [("bsj-opt", 0.0)];
    /// Figs. 4–5: fillsync beside Bayes against alone under Vanilla: mean latency, T_D2 and T_Sched.
    pub const CORUN_MEAN_X: f64 = 2.7;
    pub const CORUN_T_D2_X: f64 = 15.0;
    pub const CORUN_T_SCHED_X: f64 = 9.4;
}

/// The scenario of fillsync beside `app` (or alone) under `stack`. The app's flows are the read path's,
/// as calibrated there (the same Bayes beside either RocksDB benchmark). fillsync's latency is clocked as
/// db_bench clocks an op (`latency_from = "submit"`): from when its thread starts the update, so a stall
/// costs the update it hits, not every update queued behind it at the fixed rate (db_bench's write rate
/// limiter, `--benchmark_write_rate_limit`, paces the starts and calls `ResetLastOpTime` after its wait).
fn scenario_text(app: Option<&str>, stack: &str, duration_ns: u64) -> String {
    let mut text = format!(
        "name = \"fastresponse22-write\"\n[run]\nduration = \"{}ns\"\nwarmup = \"{WARMUP_NS}ns\"\n[host]\nplatform = \
         \"{PLATFORM}\"\nstack = \"{stack}\"\ncores = {SERVER_CORES}\n[device]\npreset = \"optane-900p\"\n[[flow]]\nname = \"fillsync\"\nclass \
         = \"critical\"\napp = \"fastresponse.fillsync\"\nsize = \"1g\"\nlatency_from = \"submit\"\n",
        WARMUP_NS + duration_ns
    );
    if let Some(app) = app {
        text += &super::app_flows(app);
    }
    text
}

/// One figure of a run.
type Pick = fn(&Measured) -> f64;

/// fillsync's figures in one run (µs).
#[derive(Debug, Clone, Default)]
struct Measured {
    mean: f64,
    p99: f64,
    p99_9: f64,
    d1: f64,
    d2: f64,
    jd: f64,
    jc: f64,
    sched: f64,
    /// The app's bytes per second (0 alone).
    app_bytes_per_s: f64,
}

fn measure(r: &RunResults) -> Result<Measured, String> {
    let f = &r.flows[0];
    let (Some(sync), Some(p)) = (&f.flush, &f.fsync_phases_ns) else {
        return Err("fillsync completed no fsync in the window: lengthen --duration".into());
    };
    let l = &sync.latency_ns;
    Ok(Measured {
        mean: l.mean / 1e3,
        p99: l.p99 as f64 / 1e3,
        p99_9: l.p99_9 as f64 / 1e3,
        d1: p.d1.mean / 1e3,
        d2: p.d2.mean / 1e3,
        jd: p.jd.mean / 1e3,
        jc: p.jc.mean / 1e3,
        sched: p.sched.mean / 1e3,
        app_bytes_per_s: r.flows.get(1).map_or(0.0, |f| f.bandwidth_bytes_per_s),
    })
}

fn mean_of(runs: &[Measured]) -> Measured {
    let n = runs.len() as f64;
    let avg = |pick: Pick| runs.iter().map(pick).sum::<f64>() / n;
    Measured {
        mean: avg(|m| m.mean),
        p99: avg(|m| m.p99),
        p99_9: avg(|m| m.p99_9),
        d1: avg(|m| m.d1),
        d2: avg(|m| m.d2),
        jd: avg(|m| m.jd),
        jc: avg(|m| m.jc),
        sched: avg(|m| m.sched),
        app_bytes_per_s: avg(|m| m.app_bytes_per_s),
    }
}

/// The write path's settings: (app beside, stack).
fn settings(options: &Options) -> Vec<(Option<&str>, &str)> {
    let mut settings: Vec<(Option<&str>, &str)> = vec![(None, "vanilla")];
    for app in &options.apps {
        settings.extend(STACKS.iter().map(|&(_, stack)| (Some(app.as_str()), stack)));
    }
    settings
}

/// The scenarios the write path runs.
pub(super) fn texts(options: &Options) -> Vec<String> {
    settings(options).into_iter().map(|(app, stack)| scenario_text(app, stack, options.duration_ns)).collect()
}

/// Run the write path and add its rows to `out`.
pub fn rows(options: &Options, out: &mut Reproduction) -> Result<(), String> {
    let settings = settings(options);
    let runs = per_seed(settings.len(), options.seed, options.seeds, |i, seed| {
        let (app, stack) = settings[i];
        let text = scenario_text(app, stack, options.duration_ns);
        let (_, results) =
            run_toml(&text, "fastresponse22 write path", seed, &overrides_for(&text, &options.overrides))?;
        measure(&results)
    })?;
    let measured: Vec<Measured> = runs.iter().map(|r| mean_of(r)).collect();
    let index = |app: Option<&str>, stack: &str| -> usize {
        settings.iter().position(|s| s.0 == app && s.1 == stack).expect("every app runs under every stack")
    };
    let find = |app: Option<&str>, stack: &str| -> &Measured { &measured[index(app, stack)] };

    // Figs. 4-5, write half: beside Bayes against alone, under Vanilla.
    if options.apps.iter().any(|a| a == "bayes") {
        let (alone, beside) = (find(None, "vanilla"), find(Some("bayes"), "vanilla"));
        for (metric, paper, x) in [
            ("fillsync_mean_vs_alone", Some(paper::CORUN_MEAN_X), beside.mean / alone.mean),
            ("fillsync_p99_9_vs_alone", None, beside.p99_9 / alone.p99_9),
            ("t_d2_vs_alone", Some(paper::CORUN_T_D2_X), beside.d2 / alone.d2.max(1e-3)),
            ("fsync_t_sched_vs_alone", Some(paper::CORUN_T_SCHED_X), beside.sched / alone.sched.max(1e-3)),
        ] {
            out.push("fig4-5", &[("app", "bayes"), ("stack", "vanilla")], metric, paper, x);
        }
    }

    // Fig. 13: fillsync's latency per app and stack, and BSJ-Opt's average cut against Vanilla. The tails rest
    // on a few stalls a run: the rows carry the spread over the seeds.
    let picks: [(&str, Pick); 3] = [("mean", |m| m.mean), ("p99", |m| m.p99), ("p99_9", |m| m.p99_9)];
    let runs_of = |app: &str, stack: &str| -> &[Measured] { &runs[index(Some(app), stack)] };
    super::latency_rows(out, "fig13", &options.apps, &STACKS, picks, runs_of);
    for ((metric, pick), paper_cut) in picks.iter().zip(paper::BSJ_CUTS) {
        let per_seed = super::mean_cut_per_seed(&options.apps, runs_of, "fastresponse", "vanilla", *pick);
        let setting = [("app", "average"), ("stack", "bsj-opt"), ("against", "vanilla")];
        out.push_over_seeds("fig13", &setting, &format!("{metric}_cut_pct"), Some(paper_cut), &per_seed);
    }

    // Fig. 14(b): the apps' throughput beside fillsync against Vanilla.
    super::throughput_rows(out, "fig14b", &options.apps, &STACKS, |app, stack| find(Some(app), stack).app_bytes_per_s);

    // Fig. 15(b): the fsync's phases beside Bayes.
    if options.apps.iter().any(|a| a == "bayes") {
        for &(name, stack) in &STACKS {
            let m = find(Some("bayes"), stack);
            let paper_of = |list: &[(&str, f64)]| list.iter().find(|(s, _)| *s == name).map(|(_, v)| *v);
            for (metric, paper, value) in [
                ("t_d1_us", None, m.d1),
                ("t_d2_us", paper_of(&paper::T_D2), m.d2),
                ("t_jd_us", None, m.jd),
                ("t_jc_us", None, m.jc),
                ("t_sched_us", paper_of(&paper::T_SCHED), m.sched),
            ] {
                out.push("fig15b", &[("app", "bayes"), ("stack", name)], metric, paper, value);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scenario;

    #[test]
    fn every_write_setting_loads_as_a_scenario() {
        for app in [None, Some("terasort"), Some("bayes")] {
            for &(_, stack) in &STACKS {
                let text = scenario_text(app, stack, 1_000_000);
                Scenario::from_toml_str(&text, "t", std::path::Path::new("."), &[])
                    .unwrap_or_else(|e| panic!("{app:?} {stack}: {e}"));
            }
        }
    }

    #[test]
    fn fillsync_is_clocked_as_db_bench_beside_the_read_paths_apps() {
        use crate::config::scenario::{IoEngine, LatencyFrom};
        let text = scenario_text(Some("bayes"), "vanilla", 1_000_000);
        let s = Scenario::from_toml_str(&text, "t", std::path::Path::new("."), &[]).unwrap();
        assert_eq!(s.flows[0].latency_from, Some(LatencyFrom::Submit));
        // Bayes's flows are exactly the read path's.
        assert!(text.ends_with(&super::super::app_flows("bayes")), "{text}");
        let bayes = s.flows.iter().find(|f| f.name == "bayes").unwrap();
        assert_eq!((bayes.ioengine, bayes.iodepth), (Some(IoEngine::Libaio), Some(super::super::APP_IODEPTH)));
    }
}
