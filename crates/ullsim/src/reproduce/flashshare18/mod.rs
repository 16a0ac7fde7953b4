//! FlashShare (Zhang et al., OSDI'18, seed 001): each online app of Table 3 (Apache, Apache-update,
//! ImageServer; critical, 400 requests per second) beside each of its ten offline apps, on the paper's
//! 8 cores and Z-NAND SSD (`znand-ull`), under the cumulative stacks of §5 (Vanilla, CacheOpt, KernelOpt,
//! SelectISR, XLER) and DedCore. Figs. 11-12 (response times against Vanilla), 13 (XLER against DedCore),
//! 14 (the offline apps' performance), 15(b) (Apache beside Index: where an I/O's time goes), 16(d)
//! (context switches), 17 (NVMe commands), 18 (the cache's hit rates under five designs, [`cache`]) and
//! 19 (the cache split while PageRank runs), and the online app's latency-load curve under Vanilla
//! (`load_curve`: §5.1's operating point, §1's Apache alone and beside PageRank). Every run is on the paper's
//! platform (`host.platform = "flashshare18-gem5"`), whose per-layer costs, like the app models' IPC and
//! workers, are fitted to the Vanilla baseline (Fig. 15(b), §1, §5.1); the other stacks are predicted. The
//! paper gives its figures as plots; the rows carry as paper values the numbers its text states.

mod cache;

use super::rows::Reproduction;
use super::{per_seed, run_toml};
use crate::sim::RunResults;
use crate::workload::app::flashshare::{Workload, CLIENT_SERVER_CPU_NS, TABLE3};

/// The stacks of Figs. 11-12, cumulative as in §5: (label, `host.stack`). Vanilla first.
pub const STACKS: [(&str, &str); 5] = [
    ("vanilla", "vanilla"),
    ("cacheopt", "flashshare-cacheopt"),
    ("kernelopt", "flashshare-kernelopt"),
    ("selectisr", "flashshare-selectisr"),
    ("xler", "flashshare-xler"),
];
/// Fig. 13's alternative to the accelerator: a core dedicated to polling.
pub const DEDCORE: (&str, &str) = ("dedcore", "flashshare-dedcore");

/// The paper's machine (Table 2, §6): `config/platforms/flashshare18-gem5.toml`.
pub const PLATFORM: &str = "flashshare18-gem5";
/// Table 2: 8 cores (the platform's).
pub const CORES: u32 = 8;
/// The drive's command fetch on the paper's platform, ns (znand-ull's own: 600 [inferred]). Calibrated from
/// baseline: Fig. 15(b) Vanilla, Apache beside Index, "SSD access" 29 us, where znand-ull behind the default
/// fetch gives 21 us: the other 8.6 us are taken as the gem5 platform's PCIe path from the drive to host
/// memory and back (its I/O bridge and memory controller, which the paper revised), put on the fetch.
pub const COMMAND_FETCH_NS: u64 = 9_200;
/// The online app's requests per second in the main runs (§5.1: 400).
pub const RATE: u32 = 400;
/// The offline label of a run of the online app alone (the latency-load curve's).
pub const ALONE: &str = "alone";
/// The offline apps the latency-load curve runs beside: Index (Fig. 15's pair) and PageRank (§1's 228.5%).
pub const CURVE_OFFLINE: [&str; 2] = ["index", "pr"];
/// Threads of an offline app: one per core, as a MapReduce job's tasks fill a node [inferred: Table 3 gives
/// each app's I/Os per instruction, not its threads].
pub const OFFLINE_THREADS: u32 = 8;
/// The online app's data, and the offline app's, after it.
pub const ONLINE_SIZE: &str = "8GB";
pub const OFFLINE_SIZE: &str = "64GB";
/// Simulated time before the measurement: the closed-loop offline threads start in step.
pub const WARMUP_NS: u64 = 100_000_000;

/// The paper's numbers (§1, §5.2-5.5).
pub mod paper {
    /// §1: "the 99th percentile response time of Apache (i.e., online application) is 0.8 ms. However, the
    /// response time increases by 228.5% if the server executes it along with a PageRank" (Vanilla).
    pub const ALONE_P99_US: f64 = 800.0;
    pub const BESIDE_PR_P99_VS_ALONE: f64 = 3.285;
    /// Figs. 11-12: average response time against Vanilla over every pair, for CacheOpt, KernelOpt,
    /// SelectISR and XLER (the text's -5/-11/-12/-22% and -7/-16/-22/-31%).
    pub const MEAN_VS_VANILLA: [f64; 4] = [0.95, 0.89, 0.88, 0.78];
    pub const P99_VS_VANILLA: [f64; 4] = [0.93, 0.84, 0.78, 0.69];
    /// Fig. 13: XLER against DedCore (-12% mean, -15% p99).
    pub const XLER_VS_DEDCORE: [f64; 2] = [0.88, 0.85];
    /// Fig. 14: the offline apps' performance: worst loss against Vanilla (%); CacheOpt against Vanilla,
    /// SelectISR against KernelOpt and XLER against SelectISR (ratios).
    pub const OFFLINE_WORST_LOSS_PCT: f64 = 4.0;
    pub const OFFLINE_CACHEOPT_VS_VANILLA: f64 = 1.036;
    pub const OFFLINE_SELECTISR_VS_KERNELOPT: f64 = 0.98;
    pub const OFFLINE_XLER_VS_SELECTISR: f64 = 1.012;
    /// Fig. 15(b), Apache beside Index: SSD access (us) under Vanilla and CacheOpt; block layer (us) under
    /// Vanilla and KernelOpt; SelectISR's I/O completion against KernelOpt's (us).
    pub const SSD_ACCESS_US: [(&str, f64); 2] = [("vanilla", 29.0), ("cacheopt", 18.0)];
    pub const BLOCK_LAYER_US: [(&str, f64); 2] = [("vanilla", 39.0), ("kernelopt", 21.0)];
    pub const SELECTISR_COMPLETION_CUT_US: f64 = 5.0;
    /// Fig. 16(d) (as the issue reads it): polling cuts context switches by 42%.
    pub const SELECTISR_CONTEXT_SWITCHES_VS_KERNELOPT: f64 = 0.58;
    /// Fig. 17: NVMe commands against Vanilla under KernelOpt (+2%) and XLER (-0.4%).
    pub const COMMANDS_VS_VANILLA: [(&str, f64); 2] = [("kernelopt", 1.02), ("xler", 0.996)];
}

/// How to run the reproduction.
#[derive(Debug, Clone)]
pub struct Options {
    /// Online apps (Table 3's ap, au, is).
    pub online: Vec<String>,
    /// Offline apps (Table 3's other ten).
    pub offline: Vec<String>,
    pub duration_ns: u64,
    /// The first seed; each setting runs with `seeds` seeds from it, and its rows average them.
    pub seed: u64,
    pub seeds: u32,
    /// `--set` overrides applied to every run.
    pub overrides: Vec<String>,
    /// Request rates of the latency-load curve (Apache alone and beside [`CURVE_OFFLINE`], Vanilla).
    pub load_rates: Vec<u32>,
}

fn names(online: bool) -> Vec<String> {
    TABLE3.iter().filter(|t| t.online == online).map(|t| t.name.to_string()).collect()
}

impl Options {
    /// The CI-sized subset: Apache beside Index (Fig. 15's pair) and PageRank (Fig. 19's), short runs.
    pub fn quick() -> Options {
        Options {
            online: vec!["ap".into()],
            offline: vec!["index".into(), "pr".into()],
            duration_ns: 300_000_000,
            seed: 1,
            seeds: 1,
            overrides: Vec::new(),
            load_rates: vec![RATE],
        }
    }

    /// Every pair, 5 s runs (2,000 requests of the online app) with two seeds each.
    pub fn full() -> Options {
        Options {
            online: names(true),
            offline: names(false),
            duration_ns: 5_000_000_000,
            seeds: 2,
            load_rates: vec![200, 400, 600, 800, 1200, 1600],
            ..Options::quick()
        }
    }
}

/// One run: `online` (at `rate` requests a second) beside `offline` (or [`ALONE`]) under `stack`, with extra
/// `[device.cache]` lines.
#[derive(Debug, Clone, PartialEq)]
struct Setting {
    online: String,
    offline: String,
    rate: u32,
    stack: &'static str,
    /// Fig. 18's cache designs: (label, `[device.cache]` lines).
    cache: Option<(&'static str, &'static str)>,
}

/// The scenario of one setting.
fn scenario_text(s: &Setting, duration_ns: u64) -> String {
    let mut text = format!(
        "name = \"flashshare18\"\n[run]\nduration = \"{}ns\"\nwarmup = \"{WARMUP_NS}ns\"\n[host]\nstack = \
         \"{}\"\nplatform = \"{PLATFORM}\"\n[device]\npreset = \"znand-ull\"\n[device.host_interface]\n\
         command_fetch_ns = {COMMAND_FETCH_NS}\n",
        WARMUP_NS + duration_ns,
        s.stack
    );
    if let Some((_, lines)) = s.cache {
        text += &format!("[device.cache]\n{lines}\n");
    }
    // The model's rate is 400 a second; `time_scale` divides it.
    text += &format!(
        "[[flow]]\nname = \"{0}\"\napp = \"flashshare.{0}\"\nsize = \"{ONLINE_SIZE}\"\ntime_scale = {1:?}\n",
        s.online,
        f64::from(RATE) / f64::from(s.rate)
    );
    if s.offline != ALONE {
        text += &format!(
            "[[flow]]\nname = \"{0}\"\napp = \"flashshare.{0}\"\nnumjobs = {OFFLINE_THREADS}\noffset = \
             \"{ONLINE_SIZE}\"\nsize = \"{OFFLINE_SIZE}\"\n",
            s.offline
        );
    }
    text
}

/// What one run gives the rows.
#[derive(Debug, Clone, Default)]
struct Measured {
    /// The online app's response time (us).
    mean_us: f64,
    p99_us: f64,
    /// The part of the mean response time that is not the app's response CPU: the request's I/O and the
    /// waits around it (us).
    io_mean_us: f64,
    /// Where an online request's I/O spends its time (us, means): SSD access (the device's queues and
    /// service), block layer, NVMe driver, completion (the request's completion part less the app's
    /// response CPU) and the wait for a core after it.
    ssd_us: f64,
    block_us: f64,
    driver_us: f64,
    completion_us: f64,
    cpu_wait_us: f64,
    /// The offline app's I/Os per second: its progress (a closed loop of one I/O and its CPU per thread).
    offline_iops: f64,
    /// NVMe commands the device completed in the window (both classes), and the cores' context switches,
    /// each per I/O the apps completed (the paper counts them over the same work; a faster offline app
    /// does more of it in a window).
    commands_per_io: f64,
    context_switches_per_io: f64,
    /// Read-cache pages looked up and hit, per class (critical, normal).
    lookups: [f64; 2],
    hits: [f64; 2],
    /// The critical partition's mean share of the ways over the window's epochs (FlashShare's cache only).
    critical_way_share: Option<f64>,
}

impl Measured {
    fn over_seeds(runs: &[Measured]) -> Measured {
        let n = runs.len() as f64;
        let mean = |pick: fn(&Measured) -> f64| runs.iter().map(pick).sum::<f64>() / n;
        let shares: Vec<f64> = runs.iter().filter_map(|m| m.critical_way_share).collect();
        Measured {
            mean_us: mean(|m| m.mean_us),
            p99_us: mean(|m| m.p99_us),
            io_mean_us: mean(|m| m.io_mean_us),
            ssd_us: mean(|m| m.ssd_us),
            block_us: mean(|m| m.block_us),
            driver_us: mean(|m| m.driver_us),
            completion_us: mean(|m| m.completion_us),
            cpu_wait_us: mean(|m| m.cpu_wait_us),
            offline_iops: mean(|m| m.offline_iops),
            commands_per_io: mean(|m| m.commands_per_io),
            context_switches_per_io: mean(|m| m.context_switches_per_io),
            lookups: [mean(|m| m.lookups[0]), mean(|m| m.lookups[1])],
            hits: [mean(|m| m.hits[0]), mean(|m| m.hits[1])],
            critical_way_share: (!shares.is_empty()).then(|| shares.iter().sum::<f64>() / shares.len() as f64),
        }
    }

    /// Hits over lookups of both classes (0 without lookups).
    fn hit_rate(&self) -> f64 {
        ratio(self.hits[0] + self.hits[1], self.lookups[0] + self.lookups[1])
    }

    /// One class's hit rate (0 critical, 1 normal).
    fn class_hit_rate(&self, class: usize) -> f64 {
        ratio(self.hits[class], self.lookups[class])
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

/// The figures of one run of `online` (whose response CPU per request is `response_ns`).
fn measure(r: &RunResults, response_ns: f64) -> Measured {
    // A run of the online app alone has no second flow.
    let (online, offline) = (&r.flows[0], r.flows.get(1));
    let app_ios = (online.completed + offline.map_or(0, |f| f.completed)) as f64;
    let b = &online.breakdown_ns;
    let (critical, normal) = (&r.device.by_class.critical, &r.device.by_class.normal);
    let cache = r.device.read_cache.as_ref();
    let class = |pick: fn(&crate::device::ReadCacheClass) -> u64| {
        cache.map_or([0.0; 2], |c| [pick(&c.critical) as f64, pick(&c.normal) as f64])
    };
    let critical_way_share = cache.filter(|c| c.policy == "flashshare" && !c.split_series.is_empty()).map(|c| {
        let shares =
            c.split_series.iter().map(|s| f64::from(s.critical_ways) / f64::from(s.critical_ways + s.normal_ways));
        shares.sum::<f64>() / c.split_series.len() as f64
    });
    Measured {
        mean_us: online.latency_ns.mean / 1e3,
        p99_us: online.latency_ns.p99 as f64 / 1e3,
        io_mean_us: (online.latency_ns.mean - response_ns) / 1e3,
        ssd_us: (b.device_queued.mean + b.device_service.mean) / 1e3,
        block_us: b.block.mean / 1e3,
        driver_us: b.driver.mean / 1e3,
        completion_us: (b.completion.mean - response_ns).max(0.0) / 1e3,
        cpu_wait_us: b.cpu_wait.mean / 1e3,
        offline_iops: offline.map_or(0.0, |f| f.iops),
        commands_per_io: ratio((critical.commands + normal.commands) as f64, app_ios),
        context_switches_per_io: ratio(r.host.cores.iter().map(|c| c.context_switches as f64).sum(), app_ios),
        lookups: class(|c| c.read_page_lookups),
        hits: class(|c| c.read_page_hits),
        critical_way_share,
    }
}

/// Table 3's row of `name`, if it is an online (`online`) or offline app.
fn app(name: &str, online: bool) -> Result<&'static Workload, String> {
    TABLE3.iter().find(|t| t.name == name && t.online == online).ok_or_else(|| {
        let kind = if online { "online" } else { "offline" };
        format!("unknown {kind} app \"{name}\"; expected one of {:?}", names(online))
    })
}

/// The runs' results, found by setting: averaged over the seeds, and each seed's.
struct Runs<'a> {
    settings: &'a [Setting],
    measured: &'a [Measured],
    seeds: &'a [Vec<Measured>],
}

impl Runs<'_> {
    /// The run of `online` at [`RATE`] beside `offline`.
    fn get(&self, online: &str, offline: &str, stack: &str, cache: Option<&str>) -> &Measured {
        self.at_rate(online, offline, RATE, stack, cache)
    }

    fn at_rate(&self, online: &str, offline: &str, rate: u32, stack: &str, cache: Option<&str>) -> &Measured {
        &self.measured[self.index(online, offline, rate, stack, cache)]
    }

    /// `pick` of each seed's run of the setting (a p99 rests on the few slowest requests of a run).
    fn per_seed(&self, online: &str, offline: &str, rate: u32, stack: &str, pick: fn(&Measured) -> f64) -> Vec<f64> {
        self.seeds[self.index(online, offline, rate, stack, None)].iter().map(pick).collect()
    }

    fn index(&self, online: &str, offline: &str, rate: u32, stack: &str, cache: Option<&str>) -> usize {
        self.settings
            .iter()
            .position(|s| {
                s.online == online
                    && s.offline == offline
                    && s.rate == rate
                    && s.stack == stack
                    && s.cache.map(|c| c.0) == cache
            })
            .expect("every pair runs under every stack and cache design, and every curve point under vanilla")
    }
}

/// Run the reproduction.
pub fn run(options: &Options) -> Result<Reproduction, String> {
    for name in &options.online {
        app(name, true)?;
    }
    for name in &options.offline {
        app(name, false)?;
    }
    if options.online.is_empty() || options.offline.is_empty() {
        return Err("expected at least one online and one offline app".into());
    }
    if options.load_rates.iter().any(|&r| r == 0 || r > 100_000) {
        return Err(format!("expected load rates from 1 to 100000 requests a second, found {:?}", options.load_rates));
    }
    let mut settings = Vec::new();
    for online in &options.online {
        for offline in &options.offline {
            let setting =
                |stack, cache| Setting { online: online.clone(), offline: offline.clone(), rate: RATE, stack, cache };
            settings.extend(STACKS.iter().chain([&DEDCORE]).map(|&(_, stack)| setting(stack, None)));
            if online == cache::ONLINE {
                settings.extend(cache::UNIFORM.iter().map(|&design| setting("vanilla", Some(design))));
            }
        }
    }
    for point in curve_points(options) {
        if !settings.contains(&point) {
            settings.push(point);
        }
    }
    let seeds = per_seed(settings.len(), options.seed, options.seeds, |i, seed| {
        let s = &settings[i];
        let (_, results) = run_toml(&scenario_text(s, options.duration_ns), "flashshare18", seed, &options.overrides)?;
        let online = app(&s.online, true)?;
        Ok(measure(&results, (online.cpu_per_io_ns() + CLIENT_SERVER_CPU_NS) as f64))
    })?;
    let measured: Vec<Measured> = seeds.iter().map(|runs| Measured::over_seeds(runs)).collect();
    let runs = Runs { settings: &settings, measured: &measured, seeds: &seeds };

    let mut out =
        Reproduction::new("flashshare18", "FlashShare (OSDI'18): Table 3's online apps beside its offline apps");
    out.option("online", &options.online);
    out.option("offline", &options.offline);
    out.run_options(options.duration_ns, options.seed, options.seeds, CORES, &options.overrides);
    curve_rows(&mut out, options, &runs);
    response_rows(&mut out, options, &runs);
    offline_rows(&mut out, options, &runs);
    io_rows(&mut out, options, &runs);
    cache::rows(&mut out, options, &runs);
    out.check_finite()?;
    Ok(out)
}

/// The latency-load curve's runs: [`cache::ONLINE`] under Vanilla at each load rate, alone and beside each of
/// [`CURVE_OFFLINE`] the options hold.
fn curve_points(options: &Options) -> Vec<Setting> {
    if !options.online.iter().any(|a| a == cache::ONLINE) {
        return Vec::new();
    }
    let beside = CURVE_OFFLINE.iter().filter(|&&off| options.offline.iter().any(|a| a == off));
    let offline: Vec<&str> = std::iter::once(ALONE).chain(beside.copied()).collect();
    let mut points = Vec::new();
    for &rate in &options.load_rates {
        for &off in &offline {
            let online = cache::ONLINE.to_string();
            points.push(Setting { online, offline: off.to_string(), rate, stack: "vanilla", cache: None });
        }
    }
    points
}

/// The latency-load curve (§5.1: 400 requests a second "right at the knee"): Apache's mean and p99 under
/// Vanilla at each rate, alone and beside Index and PageRank. §1's Apache alone (p99 0.8 ms) and beside
/// PageRank (228.5% more) are paper values at 400.
fn curve_rows(out: &mut Reproduction, options: &Options, runs: &Runs) {
    for point in curve_points(options) {
        let (online, offline, rate) = (point.online.as_str(), point.offline.as_str(), point.rate);
        let mean = runs.per_seed(online, offline, rate, "vanilla", |m| m.mean_us);
        let p99 = runs.per_seed(online, offline, rate, "vanilla", |m| m.p99_us);
        let rate = point.rate.to_string();
        let setting = [("online", cache::ONLINE), ("offline", &point.offline), ("stack", "vanilla"), ("rate", &rate)];
        let paper_p99 = match (point.offline.as_str(), point.rate) {
            (ALONE, RATE) => Some(paper::ALONE_P99_US),
            (cache::BURSTY, RATE) => Some(paper::ALONE_P99_US * paper::BESIDE_PR_P99_VS_ALONE),
            _ => None,
        };
        out.push_over_seeds("load_curve", &setting, "mean_us", None, &mean);
        out.push_over_seeds("load_curve", &setting, "p99_us", paper_p99, &p99);
    }
}

/// Every (online, offline) pair of the options.
fn pairs(options: &Options) -> impl Iterator<Item = (&str, &str)> {
    options.online.iter().flat_map(|on| options.offline.iter().map(move |off| (on.as_str(), off.as_str())))
}

/// Mean over the pairs of `pick(stack) / pick(base)`.
fn mean_ratio(options: &Options, runs: &Runs, stack: &str, base: &str, pick: fn(&Measured) -> f64) -> f64 {
    let ratios: Vec<f64> = pairs(options)
        .map(|(on, off)| ratio(pick(runs.get(on, off, stack, None)), pick(runs.get(on, off, base, None))))
        .collect();
    ratios.iter().sum::<f64>() / ratios.len() as f64
}

/// Figs. 11-13: the online apps' response times.
fn response_rows(out: &mut Reproduction, options: &Options, runs: &Runs) {
    type Figure = (&'static str, &'static str, fn(&Measured) -> f64, [f64; 4]);
    let figures: [Figure; 2] = [
        ("fig11", "mean", |m| m.mean_us, paper::MEAN_VS_VANILLA),
        ("fig12", "p99", |m| m.p99_us, paper::P99_VS_VANILLA),
    ];
    // One figure's rows after the other, so each prints as one block.
    for (figure, metric, pick, paper) in figures {
        for (on, off) in pairs(options) {
            let vanilla = pick(runs.get(on, off, "vanilla", None));
            for &(name, stack) in STACKS.iter().chain([&DEDCORE]) {
                let m = runs.get(on, off, stack, None);
                let setting = [("online", on), ("offline", off), ("stack", name)];
                if figure == "fig12" {
                    // A run's p99 rests on its slowest 1% of requests: each seed's, with their spread.
                    let per_seed = runs.per_seed(on, off, RATE, stack, pick);
                    out.push_over_seeds(figure, &setting, &format!("{metric}_us"), None, &per_seed);
                } else {
                    out.push(figure, &setting, &format!("{metric}_us"), None, pick(m));
                }
                if figure == "fig11" {
                    out.push(figure, &setting, "io_mean_us", None, m.io_mean_us);
                }
                if name != "vanilla" {
                    out.push(figure, &setting, &format!("{metric}_vs_vanilla"), None, pick(m) / vanilla);
                }
            }
        }
        for (i, &(name, stack)) in STACKS[1..].iter().enumerate() {
            let setting = [("online", "average"), ("offline", "average"), ("stack", name)];
            let ratio = mean_ratio(options, runs, stack, "vanilla", pick);
            out.push(figure, &setting, &format!("{metric}_vs_vanilla"), Some(paper[i]), ratio);
            if figure == "fig11" {
                let io = mean_ratio(options, runs, stack, "vanilla", |m| m.io_mean_us);
                out.push(figure, &setting, "io_mean_vs_vanilla", None, io);
            }
        }
    }
    let (xler, dedcore) = (STACKS[4].1, DEDCORE.1);
    let setting = [("online", "average"), ("offline", "average"), ("stack", "xler"), ("against", "dedcore")];
    let mean = mean_ratio(options, runs, xler, dedcore, |m| m.mean_us);
    let p99 = mean_ratio(options, runs, xler, dedcore, |m| m.p99_us);
    out.push("fig13", &setting, "mean_vs_dedcore", Some(paper::XLER_VS_DEDCORE[0]), mean);
    out.push("fig13", &setting, "p99_vs_dedcore", Some(paper::XLER_VS_DEDCORE[1]), p99);
}

/// Fig. 14: each offline app's performance against Vanilla (averaged over the online apps beside it), the
/// worst loss, and the steps the text names.
fn offline_rows(out: &mut Reproduction, options: &Options, runs: &Runs) {
    let per_app = |off: &str, stack: &str, base: &str| -> f64 {
        let ratios: Vec<f64> = options
            .online
            .iter()
            .map(|on| ratio(runs.get(on, off, stack, None).offline_iops, runs.get(on, off, base, None).offline_iops))
            .collect();
        ratios.iter().sum::<f64>() / ratios.len() as f64
    };
    let mut worst_loss: f64 = 0.0;
    for off in &options.offline {
        for &(name, stack) in &STACKS[1..] {
            let r = per_app(off, stack, "vanilla");
            worst_loss = worst_loss.max(100.0 * (1.0 - r));
            out.push("fig14", &[("offline", off), ("stack", name)], "performance_vs_vanilla", None, r);
        }
    }
    out.push("fig14", &[("offline", "all")], "worst_loss_pct", Some(paper::OFFLINE_WORST_LOSS_PCT), worst_loss);
    for (stack, base, paper) in [
        ("cacheopt", "vanilla", paper::OFFLINE_CACHEOPT_VS_VANILLA),
        ("selectisr", "kernelopt", paper::OFFLINE_SELECTISR_VS_KERNELOPT),
        ("xler", "selectisr", paper::OFFLINE_XLER_VS_SELECTISR),
    ] {
        let full = |label: &str| STACKS.iter().find(|s| s.0 == label).expect("a stack of the list").1;
        let r = mean_ratio(options, runs, full(stack), full(base), |m| m.offline_iops);
        let setting = [("offline", "average"), ("stack", stack), ("against", base)];
        out.push("fig14", &setting, "performance_ratio", Some(paper), r);
    }
}

/// Figs. 15(b), 16(d) and 17: an online I/O's time by layer beside Index, context switches, NVMe commands.
fn io_rows(out: &mut Reproduction, options: &Options, runs: &Runs) {
    let ap_index = options.online.iter().any(|a| a == "ap") && options.offline.iter().any(|a| a == "index");
    if ap_index {
        for &(name, stack) in &STACKS {
            let m = runs.get("ap", "index", stack, None);
            let paper_of = |list: &[(&str, f64)]| list.iter().find(|(s, _)| *s == name).map(|(_, v)| *v);
            let setting = [("online", "ap"), ("offline", "index"), ("stack", name)];
            for (metric, paper, value) in [
                ("ssd_access_us", paper_of(&paper::SSD_ACCESS_US), m.ssd_us),
                ("block_layer_us", paper_of(&paper::BLOCK_LAYER_US), m.block_us),
                ("driver_us", None, m.driver_us),
                ("io_completion_us", None, m.completion_us),
                ("cpu_wait_us", None, m.cpu_wait_us),
            ] {
                out.push("fig15b", &setting, metric, paper, value);
            }
        }
        let (kernelopt, selectisr) =
            (runs.get("ap", "index", STACKS[2].1, None), runs.get("ap", "index", STACKS[3].1, None));
        let cut = (kernelopt.completion_us + kernelopt.cpu_wait_us) - (selectisr.completion_us + selectisr.cpu_wait_us);
        let setting = [("online", "ap"), ("offline", "index"), ("stack", "selectisr"), ("against", "kernelopt")];
        out.push("fig15b", &setting, "io_completion_cut_us", Some(paper::SELECTISR_COMPLETION_CUT_US), cut);
    }
    let setting = [("online", "average"), ("offline", "average"), ("stack", "selectisr"), ("against", "kernelopt")];
    let switches = mean_ratio(options, runs, STACKS[3].1, STACKS[2].1, |m| m.context_switches_per_io);
    let paper_switches = Some(paper::SELECTISR_CONTEXT_SWITCHES_VS_KERNELOPT);
    out.push("fig16d", &setting, "context_switches_ratio", paper_switches, switches);
    for &(name, stack) in &STACKS[1..] {
        let paper = paper::COMMANDS_VS_VANILLA.iter().find(|(s, _)| *s == name).map(|(_, v)| *v);
        let setting = [("online", "average"), ("offline", "average"), ("stack", name)];
        out.push(
            "fig17",
            &setting,
            "commands_vs_vanilla",
            paper,
            mean_ratio(options, runs, stack, "vanilla", |m| m.commands_per_io),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scenario;

    #[test]
    fn every_setting_loads_as_a_scenario() {
        for on in names(true) {
            for off in names(false) {
                for &(_, stack) in STACKS.iter().chain([&DEDCORE]) {
                    let caches = std::iter::once(None).chain(cache::UNIFORM.iter().map(|&d| Some(d)));
                    for cache in caches {
                        let s = Setting { online: on.clone(), offline: off.clone(), rate: RATE, stack, cache };
                        let scenario = load(&s);
                        assert_eq!(scenario.host.cores, CORES);
                        assert_eq!(scenario.host.platform.as_deref(), Some(PLATFORM));
                        assert_eq!(scenario.flows.len(), 2);
                    }
                }
            }
        }
        // A curve point: the online app alone at another rate.
        let alone = Setting { online: "ap".into(), offline: ALONE.into(), rate: 800, stack: "vanilla", cache: None };
        let scenario = load(&alone);
        assert_eq!(scenario.flows.len(), 1);
        assert_eq!(scenario.flows[0].time_scale, Some(0.5), "800 requests a second: the model's 400 twice as fast");
    }

    fn load(s: &Setting) -> Scenario {
        let text = scenario_text(s, 100_000_000);
        Scenario::from_toml_str(&text, "t", std::path::Path::new("."), &[])
            .unwrap_or_else(|e| panic!("{s:?}: {e}\n{text}"))
    }

    #[test]
    fn a_setting_over_seeds_averages_its_figures() {
        let run = |x: f64, share: Option<f64>| Measured {
            mean_us: x,
            p99_us: 2.0 * x,
            hits: [x, 1.0],
            lookups: [2.0 * x, 4.0],
            critical_way_share: share,
            ..Measured::default()
        };
        let m = Measured::over_seeds(&[run(10.0, Some(0.2)), run(30.0, None), run(20.0, Some(0.4))]);
        assert_eq!((m.mean_us, m.p99_us), (20.0, 40.0));
        assert!((m.critical_way_share.unwrap() - 0.3).abs() < 1e-12, "runs without a split are left out");
        // (20 + 1) / (40 + 4)
        assert!((m.hit_rate() - 21.0 / 44.0).abs() < 1e-12);
        assert!((m.class_hit_rate(0) - 0.5).abs() < 1e-12 && (m.class_hit_rate(1) - 0.25).abs() < 1e-12);
    }

    #[test]
    fn unknown_apps_are_refused_by_kind() {
        let bad = Options { offline: vec!["ap".into()], ..Options::quick() };
        let err = run(&bad).unwrap_err();
        assert!(err.contains("unknown offline app \"ap\"") && err.contains("index"), "{err}");
    }
}
