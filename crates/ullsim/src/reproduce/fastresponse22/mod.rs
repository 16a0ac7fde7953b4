//! FastResponse (Liu et al., ICS'22, seed 000). Read path (here): RocksDB `readrandom` (critical) beside each of
//! the five throughput apps of its Table 1, under the four stacks it compares (Vanilla, SelectISR, B-Opt,
//! BS-Opt), on the paper's server (16 cores) and its Optane 900P (`optane-900p`). Figures 4–5 (the motivation: readrandom
//! alone and beside Bayes), 12 (readrandom's latency), 14(a) (the apps' throughput), 15(a) (the latency
//! breakdown beside Bayes), 16 (the device queue beside TeraSort) and 19 (LD's tokens and readrandom's
//! issue rate). The paper gives its figures as plots; its text gives the numbers the rows carry as paper
//! values (the headline reductions, the breakdown's T_Dev and T_Sched, the queue depths). Write path:
//! [`write`] (fillsync, Figs. 13, 14(b) and 15(b)). CPU use at an unlimited rate: [`cpu`] (Fig. 18).

pub mod cpu;
pub mod write;

use super::rows::Reproduction;
use super::{check_flow_overrides, overrides_for, per_seed, run_toml};
use crate::sim::RunResults;
use crate::workload::app::fastresponse::{APP_IODEPTH, CPU_BURST_US, TABLE1};

/// The stacks of Fig. 12, in the paper's order: (label, `host.stack`).
pub const STACKS: [(&str, &str); 4] =
    [("vanilla", "vanilla"), ("selectisr", "selectisr"), ("b-opt", "fastresponse-b"), ("bs-opt", "fastresponse-bs")];

/// The paper's server as a host platform (`host.platform`): its cores, sockets and memory.
pub const PLATFORM: &str = "fastresponse22-inspur";
/// Cores of the paper's server: two 8-core Xeon E5-2630 v3 (§4.1; SMT is not modeled).
pub const SERVER_CORES: u32 = 16;
/// RocksDB's dataset: 40 GB (§4.1); the gets read 4 KB at random offsets over it.
pub const DATASET: &str = "40GB";
/// Simulated time before the measurement: the CPU hogs and readrandom start together at virtual time 0, and
/// until readrandom lags the hogs in virtual time its wake-ups wait for their slices (milliseconds), a start
/// the paper's long runs do not see.
pub const WARMUP_NS: u64 = 500_000_000;
/// Tokens of Fig. 19(a).
pub const TOKENS: [u32; 5] = [4, 8, 16, 32, 64];
/// readrandom's issue rates of Fig. 19(b), gets per second [inferred: the plot's axis is not in the text].
pub const ISSUE_RATES: [u32; 4] = [1000, 2500, 5000, 10000];

/// The paper's numbers (§4.2, §4.4).
pub mod paper {
    /// BS-Opt against Vanilla, average over the five apps: mean, p99.9 reductions (%).
    pub const BS_MEAN_CUT: f64 = 36.0;
    pub const BS_P99_9_CUT: f64 = 77.0;
    /// SelectISR against Vanilla: mean, p99, p99.9 reductions (%).
    pub const SELECTISR_CUTS: [f64; 3] = [21.0, 19.0, 28.0];
    /// BS-Opt against B-Opt: mean, p99, p99.9 reductions (%).
    pub const BS_OVER_B_CUTS: [f64; 3] = [16.0, 40.0, 59.0];
    /// B-Opt against SelectISR: p99 reduction (%).
    pub const B_OVER_SELECTISR_P99_CUT: f64 = 49.0;
    /// Largest loss of an app's throughput against Vanilla (%), Fig. 14.
    pub const MAX_THROUGHPUT_LOSS: f64 = 6.0;
    /// Fig. 15(a) beside Bayes (us): T_Dev under Vanilla and B-Opt, T_Sched under Vanilla and BS-Opt, and
    /// none under SelectISR.
    pub const T_DEV: [(&str, f64); 2] = [("vanilla", 26.0), ("b-opt", 17.0)];
    pub const T_SCHED: [(&str, f64); 3] = [("vanilla", 22.0), ("bs-opt", 7.0), ("selectisr", 0.0)];
    /// Fig. 16 beside TeraSort: the device queue passes 160 under Vanilla, stays near 10 under B-Opt.
    pub const QUEUE_DEPTH: [(&str, f64); 2] = [("vanilla", 160.0), ("b-opt", 10.0)];
    /// Figs. 4–5: readrandom beside Bayes against alone under Vanilla: mean latency, T_Dev and T_Sched.
    pub const CORUN_MEAN_X: f64 = 1.5;
    pub const CORUN_T_DEV_X: f64 = 2.4;
    pub const CORUN_T_SCHED_X: f64 = 5.5;
}

/// The paper's label of a `host.stack` of [`STACKS`].
fn label(stack: &str) -> &'static str {
    STACKS.iter().find(|s| s.1 == stack).map_or("?", |s| s.0)
}

/// How to run the reproduction.
#[derive(Debug, Clone)]
pub struct Options {
    /// The apps beside readrandom (names of [`TABLE1`]).
    pub apps: Vec<String>,
    pub duration_ns: u64,
    /// The first seed; each setting runs with `seeds` seeds from it, and its rows average them.
    pub seed: u64,
    pub seeds: u32,
    /// LD token counts of Fig. 19(a).
    pub tokens: Vec<u32>,
    /// readrandom issue rates of Fig. 19(b).
    pub issue_rates: Vec<u32>,
    /// `--set` overrides applied to every run.
    pub overrides: Vec<String>,
}

impl Options {
    /// The CI-sized subset: TeraSort and Bayes (one I/O-bound, one CPU-bound), short runs, two token counts
    /// and two rates.
    pub fn quick() -> Options {
        Options {
            apps: vec!["terasort".into(), "bayes".into()],
            duration_ns: 400_000_000,
            seed: 1,
            seeds: 1,
            tokens: vec![4, 64],
            issue_rates: vec![1000, 10000],
            overrides: Vec::new(),
        }
    }

    /// Every app, token count and rate, 30 s runs with three seeds each: 75,000 gets a run, so a p99.9 rests
    /// on 75 samples. The tails come from a few stalls of milliseconds (a woken task within the wake-up
    /// granularity of a CPU hog waits for its slice), each delaying the ~20 gets that arrive meanwhile; a
    /// run sees few, so a row averages three.
    pub fn full() -> Options {
        Options {
            apps: TABLE1.iter().map(|t| t.name.to_string()).collect(),
            duration_ns: 30_000_000_000,
            seeds: 3,
            tokens: TOKENS.to_vec(),
            issue_rates: ISSUE_RATES.to_vec(),
            ..Options::quick()
        }
    }
}

/// One run: readrandom beside `app` (or alone) under `stack`, with extra `[host.block]` lines.
#[derive(Debug, Clone, PartialEq)]
struct Setting {
    app: Option<String>,
    stack: &'static str,
    ld_depth: Option<u32>,
    gets_per_s: Option<u32>,
}

impl Setting {
    fn new(app: Option<&str>, stack: &'static str) -> Setting {
        Setting { app: app.map(str::to_string), stack, ld_depth: None, gets_per_s: None }
    }
}

/// The `cpuio` flow of `app`'s map and reduce tasks: `cpu` percent of every core, in bursts of
/// [`CPU_BURST_US`].
fn cpu_flow(app: &str, cpu: u32) -> String {
    format!(
        "[[flow]]\nname = \"{app}-cpu\"\nioengine = \"cpuio\"\nnumjobs = {SERVER_CORES}\ncpuload = {cpu}\ncpuchunks = \
         \"{CPU_BURST_US}us\"\n"
    )
}

/// The scenario of one setting.
fn scenario_text(s: &Setting, duration_ns: u64) -> String {
    let mut text = format!(
        "name = \"fastresponse22\"\n[run]\nduration = \"{}ns\"\nwarmup = \"{WARMUP_NS}ns\"\n[host]\nplatform = \
         \"{PLATFORM}\"\nstack = \"{}\"\ncores = {SERVER_CORES}\n",
        WARMUP_NS + duration_ns,
        s.stack
    );
    if let Some(depth) = s.ld_depth {
        text += &format!("[host.block]\nld_depth = {depth}\n");
    }
    // time_scale stretches the model's gaps: 2,500 gets/s at 1.0.
    let time_scale = s.gets_per_s.map_or(1.0, |rate| 2500.0 / f64::from(rate));
    text += &format!(
        "[device]\npreset = \"optane-900p\"\n[[flow]]\nname = \"readrandom\"\nclass = \"critical\"\napp = \
         \"fastresponse.readrandom\"\nioengine = \"psync\"\nsize = \"{DATASET}\"\ntime_scale = {time_scale}\n"
    );
    if let Some(app) = &s.app {
        text += &app_flows(app);
    }
    text
}

/// The flows of a Table 1 app beside RocksDB, the same in the read and the write path: its I/O from one task
/// with its calibrated outstanding requests (HDFS data beyond RocksDB's), and its map and reduce tasks' CPU
/// work on every core.
fn app_flows(app: &str) -> String {
    let cpu = TABLE1.iter().find(|t| t.name == app).expect("apps are checked against Table 1").cpu_load_percent;
    format!(
        "[[flow]]\nname = \"{app}\"\napp = \"fastresponse.{app}\"\nioengine = \"libaio\"\niodepth = \
         {APP_IODEPTH}\noffset = \"{DATASET}\"\n{}",
        cpu_flow(app, cpu)
    )
}

/// What one run gives the rows.
#[derive(Debug, Clone)]
struct Measured {
    mean_us: f64,
    p99_us: f64,
    p99_9_us: f64,
    /// Fig. 15's parts (us): file system (system call and file-system CPU work), block layer and driver,
    /// device, process scheduling (waiting for a core: for the get's arrival at a sleeping thread and after
    /// its completion).
    t_fs: f64,
    t_blk: f64,
    t_dev: f64,
    t_sched: f64,
    app_bytes_per_s: f64,
    mean_queue_depth: f64,
    max_queue_depth: f64,
}

impl Measured {
    /// The runs of one setting over several seeds: each figure's mean, and the largest queue depth.
    fn over_seeds(runs: &[Measured]) -> Measured {
        let mean = |pick: fn(&Measured) -> f64| runs.iter().map(pick).sum::<f64>() / runs.len() as f64;
        Measured {
            mean_us: mean(|m| m.mean_us),
            p99_us: mean(|m| m.p99_us),
            p99_9_us: mean(|m| m.p99_9_us),
            t_fs: mean(|m| m.t_fs),
            t_blk: mean(|m| m.t_blk),
            t_dev: mean(|m| m.t_dev),
            t_sched: mean(|m| m.t_sched),
            app_bytes_per_s: mean(|m| m.app_bytes_per_s),
            mean_queue_depth: mean(|m| m.mean_queue_depth),
            max_queue_depth: runs.iter().map(|m| m.max_queue_depth).fold(0.0, f64::max),
        }
    }
}

fn measure(r: &RunResults, syscall_entry_ns: f64) -> Measured {
    let get = &r.flows[0];
    let (l, b) = (&get.latency_ns, &get.breakdown_ns);
    // The `syscall` part holds the wait for the sleeping thread to run the get, then the system call's
    // entry: the wait is process scheduling; the entry, the page cache and the file system are Fig. 15's T_FS.
    let entry = b.syscall.mean.min(syscall_entry_ns);
    let task_wait = b.syscall.mean - entry;
    Measured {
        mean_us: l.mean / 1e3,
        p99_us: l.p99 as f64 / 1e3,
        p99_9_us: l.p99_9 as f64 / 1e3,
        t_fs: (entry + b.page_cache.mean + b.file_system.mean) / 1e3,
        t_blk: (b.block.mean + b.driver.mean) / 1e3,
        t_dev: (b.device_queued.mean + b.device_service.mean) / 1e3,
        t_sched: (task_wait + b.cpu_wait.mean) / 1e3,
        app_bytes_per_s: r.flows.get(1).map_or(0.0, |f| f.bandwidth_bytes_per_s),
        mean_queue_depth: r.device.queue_depth.mean,
        max_queue_depth: r.device.queue_depth.max as f64,
    }
}

/// One latency figure of a run.
type Pick = fn(&Measured) -> f64;

/// Fig. 14: each app's throughput (`bytes_per_s(app, stack)`) under each of `stacks` after the first
/// (Vanilla) against Vanilla's, and the largest loss.
fn throughput_rows(
    out: &mut Reproduction,
    figure: &str,
    apps: &[String],
    stacks: &[(&str, &str)],
    bytes_per_s: impl Fn(&str, &str) -> f64,
) {
    let mut worst_loss: f64 = 0.0;
    for app in apps {
        let vanilla = bytes_per_s(app, stacks[0].1);
        for &(name, stack) in &stacks[1..] {
            let ratio = bytes_per_s(app, stack) / vanilla;
            worst_loss = worst_loss.max(100.0 * (1.0 - ratio));
            out.push(figure, &[("app", app), ("stack", name)], "throughput_vs_vanilla", None, ratio);
        }
    }
    out.push(figure, &[("app", "all")], "max_loss_pct", Some(paper::MAX_THROUGHPUT_LOSS), worst_loss);
}

/// Each setting's figures with each of `seeds` seeds from `seed`, in seed order.
fn measure_settings(
    settings: &[Setting],
    duration_ns: u64,
    seed: u64,
    seeds: u32,
    overrides: &[String],
) -> Result<Vec<Vec<Measured>>, String> {
    per_seed(settings.len(), seed, seeds, |i, seed| {
        let text = scenario_text(&settings[i], duration_ns);
        let (scenario, results) = run_toml(&text, "fastresponse22", seed, &overrides_for(&text, overrides))?;
        let cpu = &scenario.host.cpu;
        Ok(measure(&results, cpu.syscall_entry_ns.0 as f64))
    })
}

/// A latency figure's name (`mean`, `p99`, `p99_9`) and how to take it from a run's figures.
type LatencyPick<M> = (&'static str, fn(&M) -> f64);

/// Each app's latency under each of `stacks` (`mean_us`, `p99_us`, `p99_9_us` as `picks` name them), with
/// the spread over the seeds; `runs_of(app, stack)` gives a setting's runs in seed order.
fn latency_rows<'a, M: 'a>(
    out: &mut Reproduction,
    figure: &str,
    apps: &[String],
    stacks: &[(&str, &str)],
    picks: [LatencyPick<M>; 3],
    runs_of: impl Fn(&str, &str) -> &'a [M],
) {
    for app in apps {
        for &(name, stack) in stacks {
            for (metric, pick) in picks {
                let per_seed: Vec<f64> = runs_of(app, stack).iter().map(pick).collect();
                out.push_over_seeds(figure, &[("app", app), ("stack", name)], &format!("{metric}_us"), None, &per_seed);
            }
        }
    }
}

/// Per seed, the mean over `apps` of the per-app reduction (%) of `base`'s figure (`pick`) by `stack`'s;
/// `runs_of(app, stack)` gives a setting's runs in seed order.
fn mean_cut_per_seed<'a, M: 'a>(
    apps: &[String],
    runs_of: impl Fn(&str, &str) -> &'a [M],
    stack: &str,
    base: &str,
    pick: fn(&M) -> f64,
) -> Vec<f64> {
    let seeds = apps.first().map_or(0, |app| runs_of(app, base).len());
    (0..seeds)
        .map(|k| {
            let cuts =
                apps.iter().map(|app| 100.0 * (1.0 - pick(&runs_of(app, stack)[k]) / pick(&runs_of(app, base)[k])));
            cuts.sum::<f64>() / apps.len() as f64
        })
        .collect()
}

/// Figs. 4-5: readrandom beside `app` against alone, under Vanilla (the paper's values are beside Bayes).
fn corun_rows(out: &mut Reproduction, app: &str, alone: &Measured, beside: &Measured) {
    let paper = |x: f64| (app == "bayes").then_some(x);
    for (metric, paper, x) in [
        ("mean_vs_alone", paper(paper::CORUN_MEAN_X), beside.mean_us / alone.mean_us),
        ("t_dev_vs_alone", paper(paper::CORUN_T_DEV_X), beside.t_dev / alone.t_dev),
        ("t_sched_vs_alone", paper(paper::CORUN_T_SCHED_X), beside.t_sched / alone.t_sched.max(1e-3)),
    ] {
        out.push("fig4-5", &[("app", app), ("stack", "vanilla")], metric, paper, x);
    }
}

/// The baseline the apps are calibrated on, without the rest of the evaluation: readrandom alone and beside
/// `app` under Vanilla, `duration_ns` after the warm-up with one seed: the rows of Figs. 4-5 and the largest
/// device queue (Fig. 16's 160 beside TeraSort).
pub fn baseline(app: &str, duration_ns: u64, seed: u64) -> Result<Reproduction, String> {
    if !TABLE1.iter().any(|t| t.name == app) {
        let known: Vec<&str> = TABLE1.iter().map(|t| t.name).collect();
        return Err(format!("unknown app \"{app}\"; expected one of {known:?}"));
    }
    let settings = [Setting::new(None, "vanilla"), Setting::new(Some(app), "vanilla")];
    let runs = measure_settings(&settings, duration_ns, seed, 1, &[])?;
    let measured: Vec<Measured> = runs.iter().map(|r| Measured::over_seeds(r)).collect();
    let mut out = Reproduction::new("fastresponse22", "FastResponse (ICS'22): the Vanilla baseline");
    corun_rows(&mut out, app, &measured[0], &measured[1]);
    let paper_depth = (app == "terasort").then_some(paper::QUEUE_DEPTH[0].1);
    out.push(
        "fig16",
        &[("app", app), ("stack", "vanilla")],
        "max_queue_depth",
        paper_depth,
        measured[1].max_queue_depth,
    );
    Ok(out)
}

/// Run the reproduction.
pub fn run(options: &Options) -> Result<Reproduction, String> {
    for app in &options.apps {
        if !TABLE1.iter().any(|t| t.name == app) {
            let names: Vec<&str> = TABLE1.iter().map(|t| t.name).collect();
            return Err(format!("unknown app \"{app}\"; expected one of {names:?}"));
        }
    }
    let mut settings: Vec<Setting> = vec![Setting::new(None, "vanilla")];
    for app in &options.apps {
        settings.extend(STACKS.iter().map(|&(_, stack)| Setting::new(Some(app), stack)));
    }
    let sensitivity_app = "terasort";
    for &depth in &options.tokens {
        settings.push(Setting { ld_depth: Some(depth), ..Setting::new(Some(sensitivity_app), "fastresponse-bs") });
    }
    for &rate in &options.issue_rates {
        settings.push(Setting { gets_per_s: Some(rate), ..Setting::new(Some(sensitivity_app), "fastresponse-bs") });
    }
    // Its runs have different flows: a `--set flow.NAME.key` goes to the runs that have the flow.
    let mut texts: Vec<String> = settings.iter().map(|s| scenario_text(s, options.duration_ns)).collect();
    texts.extend(write::texts(options));
    texts.extend(cpu::texts(options));
    check_flow_overrides(&texts, &options.overrides)?;
    let runs = measure_settings(&settings, options.duration_ns, options.seed, options.seeds, &options.overrides)?;
    let measured: Vec<Measured> = runs.iter().map(|r| Measured::over_seeds(r)).collect();
    let index = |app: Option<&str>, stack: &str| -> usize {
        settings
            .iter()
            .position(|s| s.app.as_deref() == app && s.stack == stack && s.ld_depth.is_none() && s.gets_per_s.is_none())
            .expect("every app runs under every stack")
    };
    let find = |app: Option<&str>, stack: &str| -> &Measured { &measured[index(app, stack)] };

    let mut out =
        Reproduction::new("fastresponse22", "FastResponse (ICS'22): readrandom and fillsync beside Table 1's apps");
    out.option("apps", &options.apps);
    out.run_options(options.duration_ns, options.seed, options.seeds, SERVER_CORES, &options.overrides);

    // Figs. 4-5: beside Bayes against alone, under Vanilla.
    if options.apps.iter().any(|a| a == "bayes") {
        corun_rows(&mut out, "bayes", find(None, "vanilla"), find(Some("bayes"), "vanilla"));
    }

    // Fig. 12: readrandom's latency per app and stack, then the averages of the reductions the text gives.
    // The tails rest on a few stalls a run: their rows carry the spread over the seeds.
    let picks: [(&str, Pick); 3] = [("mean", |m| m.mean_us), ("p99", |m| m.p99_us), ("p99_9", |m| m.p99_9_us)];
    latency_rows(&mut out, "fig12", &options.apps, &STACKS, picks, |app, stack| &runs[index(Some(app), stack)]);
    let cut = |stack: &str, base: &str, pick: Pick| -> Vec<f64> {
        mean_cut_per_seed(&options.apps, |app, stack| &runs[index(Some(app), stack)], stack, base, pick)
    };
    let claims: [(&str, &str, [Option<f64>; 3]); 4] = [
        ("fastresponse-bs", "vanilla", [Some(paper::BS_MEAN_CUT), None, Some(paper::BS_P99_9_CUT)]),
        ("selectisr", "vanilla", paper::SELECTISR_CUTS.map(Some)),
        ("fastresponse-bs", "fastresponse-b", paper::BS_OVER_B_CUTS.map(Some)),
        ("fastresponse-b", "selectisr", [None, Some(paper::B_OVER_SELECTISR_P99_CUT), None]),
    ];
    for (stack, base, paper_cuts) in claims {
        for ((metric, pick), paper_cut) in picks.iter().zip(paper_cuts) {
            let setting = [("app", "average"), ("stack", label(stack)), ("against", label(base))];
            out.push_over_seeds("fig12", &setting, &format!("{metric}_cut_pct"), paper_cut, &cut(stack, base, *pick));
        }
    }

    // Fig. 14(a): the apps' throughput against Vanilla.
    throughput_rows(&mut out, "fig14a", &options.apps, &STACKS, |app, stack| find(Some(app), stack).app_bytes_per_s);

    // Fig. 15(a): the breakdown beside Bayes.
    if options.apps.iter().any(|a| a == "bayes") {
        for &(name, stack) in &STACKS {
            let m = find(Some("bayes"), stack);
            let paper_of = |list: &[(&str, f64)]| list.iter().find(|(s, _)| *s == name).map(|(_, v)| *v);
            for (metric, paper, value) in [
                ("t_fs_us", None, m.t_fs),
                ("t_blk_us", None, m.t_blk),
                ("t_dev_us", paper_of(&paper::T_DEV), m.t_dev),
                ("t_sched_us", paper_of(&paper::T_SCHED), m.t_sched),
            ] {
                out.push("fig15a", &[("app", "bayes"), ("stack", name)], metric, paper, value);
            }
        }
    }

    // Fig. 16: the device queue beside TeraSort.
    if options.apps.iter().any(|a| a == sensitivity_app) {
        for (name, paper_depth) in paper::QUEUE_DEPTH {
            let stack = STACKS.iter().find(|s| s.0 == name).expect("a stack of the list").1;
            let m = find(Some(sensitivity_app), stack);
            let setting = [("app", sensitivity_app), ("stack", name)];
            out.push("fig16", &setting, "max_queue_depth", Some(paper_depth), m.max_queue_depth);
            out.push("fig16", &setting, "mean_queue_depth", None, m.mean_queue_depth);
        }
    }

    // Fig. 19: LD's tokens and readrandom's issue rate, beside TeraSort under BS-Opt.
    for (s, m) in settings.iter().zip(&measured) {
        let (figure, key, value) = match (s.ld_depth, s.gets_per_s) {
            (Some(depth), _) => ("fig19a", "tokens", depth),
            (_, Some(rate)) => ("fig19b", "gets_per_s", rate),
            _ => continue,
        };
        let value = value.to_string();
        let setting = [("app", sensitivity_app), ("stack", "bs-opt"), (key, value.as_str())];
        out.push(figure, &setting, "mean_us", None, m.mean_us);
        out.push(figure, &setting, "p99_us", None, m.p99_us);
    }
    write::rows(options, &mut out)?;
    cpu::rows(options, &mut out)?;
    out.check_finite()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scenario;

    #[test]
    fn a_setting_over_seeds_averages_its_figures_and_keeps_the_largest_queue() {
        let run = |x: f64, depth: f64| Measured {
            mean_us: x,
            p99_us: 2.0 * x,
            p99_9_us: 3.0 * x,
            t_fs: x,
            t_blk: x,
            t_dev: x,
            t_sched: x,
            app_bytes_per_s: x,
            mean_queue_depth: x,
            max_queue_depth: depth,
        };
        let m = Measured::over_seeds(&[run(10.0, 100.0), run(20.0, 300.0), run(30.0, 200.0)]);
        assert_eq!((m.mean_us, m.p99_us, m.p99_9_us, m.t_sched), (20.0, 40.0, 60.0, 20.0));
        assert_eq!(m.max_queue_depth, 300.0);
    }

    #[test]
    fn every_setting_loads_as_a_scenario() {
        let mut settings = vec![Setting::new(None, "vanilla")];
        for t in TABLE1 {
            settings.extend(STACKS.iter().map(|&(_, stack)| Setting::new(Some(t.name), stack)));
        }
        settings.push(Setting { ld_depth: Some(4), gets_per_s: Some(1000), ..Setting::new(Some("index"), "vanilla") });
        for s in settings {
            let text = scenario_text(&s, 100_000_000);
            let scenario = Scenario::from_toml_str(&text, "t", std::path::Path::new("."), &[])
                .unwrap_or_else(|e| panic!("{s:?}: {e}\n{text}"));
            assert_eq!(scenario.host.cores, SERVER_CORES);
            assert_eq!(scenario.flows.len(), if s.app.is_some() { 3 } else { 1 });
            if let Some(depth) = s.ld_depth {
                assert_eq!(scenario.host.block.ld_depth, depth);
            }
        }
    }
}
