//! HotStorage'23 ("Do we still need IO schedulers for low-latency disks?", seed 002): Table 1 and Figures 1-5
//! on `optane-ull` (the paper's Optane P4801X) under each blk-mq scheduler, none, mq-deadline, kyber and bfq.
//!
//! - Table 1: median latency of QD1 4 KB random reads and writes from one fio io_uring job, with io_uring's
//!   defaults (interrupts) and with hipri + sqthread_poll (polled): `scenarios/hotstorage23/table1.toml`.
//! - Figs. 1 and 3: IOPS and energy per million I/Os of one io_uring job at iodepth 1..128 (single tenant,
//!   `single-tenant.toml`); Figs. 2 and 4: the same for 1..128 jobs at iodepth 1 (multi tenant,
//!   `multi-tenant.toml`); 4 KB random reads, writes and a 50/50 mix.
//! - Fig. 5: RocksDB db_bench readrandom at IO depths 1..128 (`rocksdb-randomread.toml`: one psync job per
//!   depth, each get an 8 KiB random read; docs/model.md says what it leaves out).
//!
//! Each setting is one scenario run; all of them run in parallel. The rows, with the paper's numbers where
//! its text gives them and its relative claims as rows of their own, are built in [`figures`].

mod figures;

pub use figures::{none_vs_best, TITLE};

use rayon::prelude::*;
use serde::Serialize;

use crate::config::HostConfig;
use crate::reproduce::Reproduction;
use crate::sim::run_scenario;
use crate::Scenario;

const TABLE1_TOML: &str = include_str!("../../../../../scenarios/hotstorage23/table1.toml");
const SINGLE_TENANT_TOML: &str = include_str!("../../../../../scenarios/hotstorage23/single-tenant.toml");
const MULTI_TENANT_TOML: &str = include_str!("../../../../../scenarios/hotstorage23/multi-tenant.toml");
const ROCKSDB_TOML: &str = include_str!("../../../../../scenarios/hotstorage23/rocksdb-randomread.toml");

/// The blk-mq schedulers compared, `none` first.
pub const SCHEDULERS: [&str; 4] = ["none", "mq-deadline", "kyber", "bfq"];
/// The microbenchmarks' request types: random reads, random writes, 50/50.
pub const RW: [&str; 3] = ["randread", "randwrite", "randrw"];
/// The paper's IO depths (and tenant counts): powers of two from 1 to 128.
pub const DEPTHS: [u32; 8] = [1, 2, 4, 8, 16, 32, 64, 128];
/// The depths of the CI-sized subset.
pub const SUBSET_DEPTHS: [u32; 3] = [1, 16, 128];
/// The scenarios' warm-up: a run must be longer.
const FIGURE_WARMUP_NS: u64 = 5_000_000;

/// What to run.
#[derive(Debug, Clone, Serialize)]
pub struct Options {
    /// The full set (`--all`): every depth, the scenarios' own durations.
    pub all: bool,
    pub depths: Vec<u32>,
    /// Simulated time of each Table 1 run, ns.
    pub table1_duration_ns: u64,
    /// Simulated time of each run of Figs. 1-5 (5 ms of it warm-up), ns.
    pub figure_duration_ns: u64,
    pub seed: u64,
    /// `KEY=VALUE` overrides applied to every run's scenario before the reproduction's own settings (so
    /// they cannot change the scheduler, the depth or the request type); flows are `flow.0.KEY`.
    pub overrides: Vec<String>,
}

impl Options {
    /// The CI-sized subset: depths 1, 16 and 128; Table 1 runs of 50 ms, figure runs of 20 ms.
    pub fn subset() -> Self {
        Options {
            all: false,
            depths: SUBSET_DEPTHS.to_vec(),
            table1_duration_ns: 50_000_000,
            figure_duration_ns: 20_000_000,
            seed: 1,
            overrides: Vec::new(),
        }
    }

    /// The full set: every depth, the scenario files' durations (Table 1 100 ms, the figures 50 ms).
    pub fn full() -> Self {
        Options {
            all: true,
            depths: DEPTHS.to_vec(),
            table1_duration_ns: 100_000_000,
            figure_duration_ns: 50_000_000,
            ..Self::subset()
        }
    }

    /// Every run's simulated time, as `--duration` sets it; it must be longer than the figures' warm-up.
    pub fn set_duration(&mut self, ns: u64) -> Result<(), String> {
        if ns <= FIGURE_WARMUP_NS {
            return Err(format!(
                "--duration: {ns} ns is not longer than the figures' {} ms warm-up",
                FIGURE_WARMUP_NS / 1_000_000
            ));
        }
        self.table1_duration_ns = ns;
        self.figure_duration_ns = ns;
        Ok(())
    }
}

/// Which of the paper's experiments a run belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Experiment {
    /// Table 1, with io_uring's defaults (`polled = false`) or hipri + sqthread_poll.
    Table1 { polled: bool },
    /// Figs. 1 and 3: one job at iodepth `depth`.
    SingleTenant,
    /// Figs. 2 and 4: `depth` jobs at iodepth 1.
    MultiTenant,
    /// Fig. 5: `depth` db_bench threads.
    RocksDb,
}

/// One run: an experiment at one setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    pub experiment: Experiment,
    pub scheduler: &'static str,
    /// `randread`, `randwrite` or `randrw` (Fig. 5: `randread`).
    pub rw: &'static str,
    /// IO depth, tenants or db_bench threads (Table 1: 1).
    pub depth: u32,
}

/// What a run measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    pub median_latency_us: f64,
    pub iops: f64,
    /// NaN when nothing completed (then the run fails the reproduction: see [`run`]).
    pub joules_per_million_ios: f64,
    pub mean_watts: f64,
}

/// Every setting `options` asks for, in row order.
pub fn settings(options: &Options) -> Vec<Setting> {
    let mut out = Vec::new();
    for polled in [false, true] {
        for rw in ["randread", "randwrite"] {
            for scheduler in SCHEDULERS {
                out.push(Setting { experiment: Experiment::Table1 { polled }, scheduler, rw, depth: 1 });
            }
        }
    }
    for experiment in [Experiment::SingleTenant, Experiment::MultiTenant] {
        for rw in RW {
            for &depth in &options.depths {
                out.extend(SCHEDULERS.map(|scheduler| Setting { experiment, scheduler, rw, depth }));
            }
        }
    }
    for &depth in &options.depths {
        out.extend(SCHEDULERS.map(|scheduler| Setting {
            experiment: Experiment::RocksDb,
            scheduler,
            rw: "randread",
            depth,
        }));
    }
    out
}

/// The scenario text of a setting and the overrides that put it at that setting (after `user`'s).
pub fn scenario_of(setting: &Setting, options: &Options) -> (&'static str, Vec<String>) {
    let mut overrides = options.overrides.clone();
    overrides.push(format!("host.io_scheduler={}", setting.scheduler));
    let (text, duration_ns) = match setting.experiment {
        Experiment::Table1 { polled } => {
            overrides.push(format!("flow.fio.rw={}", setting.rw));
            if polled {
                overrides.extend(["flow.fio.hipri=true".into(), "flow.fio.sqthread_poll=true".into()]);
            }
            (TABLE1_TOML, options.table1_duration_ns)
        }
        Experiment::SingleTenant => {
            overrides.extend([format!("flow.fio.rw={}", setting.rw), format!("flow.fio.iodepth={}", setting.depth)]);
            (SINGLE_TENANT_TOML, options.figure_duration_ns)
        }
        Experiment::MultiTenant => {
            overrides.extend([format!("flow.fio.rw={}", setting.rw), format!("flow.fio.numjobs={}", setting.depth)]);
            (MULTI_TENANT_TOML, options.figure_duration_ns)
        }
        Experiment::RocksDb => {
            overrides.push(format!("flow.db_bench.numjobs={}", setting.depth));
            (ROCKSDB_TOML, options.figure_duration_ns)
        }
    };
    overrides.push(format!("run.duration={duration_ns}ns"));
    (text, overrides)
}

fn load(setting: &Setting, options: &Options) -> Result<Scenario, String> {
    let (text, overrides) = scenario_of(setting, options);
    super::load_toml(text, "hotstorage23", options.seed, &overrides)
}

fn measure(setting: &Setting, options: &Options) -> Result<Measured, String> {
    let results = run_scenario(&load(setting, options)?).map_err(|e| e.to_string())?;
    let flow = results.flows.first().ok_or("the scenario has no flow")?;
    if flow.completed == 0 {
        return Err(format!("{setting:?}: nothing completed (run too short?)"));
    }
    Ok(Measured {
        median_latency_us: flow.latency_ns.p50 as f64 / 1000.0,
        iops: flow.iops,
        joules_per_million_ios: results.energy.joules_per_million_ios.unwrap_or(f64::NAN),
        mean_watts: results.energy.mean_watts,
    })
}

/// Flow keys the reproduction sets in some run (`scenario_of`).
const FLOW_KEYS_SET: [&str; 5] = ["rw", "iodepth", "numjobs", "hipri", "sqthread_poll"];

/// An override of a key the reproduction sets itself (the scheduler, the run's length, what a flow varies)
/// would be overwritten without a word: say so instead.
pub fn check_overrides(overrides: &[String]) -> Result<(), String> {
    for o in overrides {
        let key = o.split('=').next().unwrap_or_default().trim();
        let parts: Vec<&str> = key.split('.').map(str::trim).collect();
        let set_here = match parts.as_slice() {
            ["host", "io_scheduler"] | ["run", "duration"] => true,
            ["flow", _, field] => FLOW_KEYS_SET.contains(field),
            _ => false,
        };
        if set_here {
            return Err(format!(
                "--set {o}: hotstorage23 sets {key} itself in every run (the scheduler, the depth, the request \
                 type and the run's length are what it varies; use --duration for the length)"
            ));
        }
    }
    Ok(())
}

/// Run every setting in parallel and build the rows.
pub fn run(options: &Options) -> Result<Reproduction, String> {
    check_overrides(&options.overrides)?;
    let settings = settings(options);
    let measured: Vec<Measured> = settings.par_iter().map(|s| measure(s, options)).collect::<Result<_, _>>()?;
    // The idle machine's power, for the full-load swing of §6: the multi-tenant scenario's host.
    let host =
        load(&Setting { experiment: Experiment::MultiTenant, scheduler: "none", rw: "randread", depth: 1 }, options)?
            .host;
    Ok(figures::reproduction(options, &settings, &measured, idle_watts(&host)))
}

/// The machine's draw with every core and the SSD idle.
fn idle_watts(host: &HostConfig) -> f64 {
    let p = &host.power;
    p.base_w + host.cores as f64 * p.core_idle_w + p.device_idle_w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_loads_with_its_scheduler_depth_and_duration() {
        let options = Options::subset();
        let all = settings(&options);
        assert_eq!(all.len(), 16 + 2 * 3 * 3 * 4 + 3 * 4);
        for s in &all {
            let scenario = load(s, &options).unwrap_or_else(|e| panic!("{s:?}: {e}"));
            assert_eq!(scenario.host.io_scheduler, s.scheduler);
            let flow = &scenario.flows[0];
            let (iodepth, numjobs) = match s.experiment {
                Experiment::Table1 { .. } => (1, 1),
                Experiment::SingleTenant => (s.depth, 1),
                Experiment::MultiTenant | Experiment::RocksDb => (1, s.depth),
            };
            assert_eq!((flow.iodepth.unwrap_or(1), flow.numjobs.unwrap_or(1)), (iodepth, numjobs), "{s:?}");
        }
        let polled =
            Setting { experiment: Experiment::Table1 { polled: true }, scheduler: "bfq", rw: "randwrite", depth: 1 };
        let (_, overrides) = scenario_of(&polled, &options);
        assert!(
            overrides.contains(&"flow.fio.hipri=true".to_string())
                && overrides.contains(&"run.duration=50000000ns".to_string())
        );
    }

    #[test]
    fn overrides_of_the_keys_it_varies_are_refused() {
        let refused = ["host.io_scheduler=bfq", "run.duration=1s", "flow.fio.iodepth=4", "flow.0.hipri=true"];
        for o in refused {
            let err = check_overrides(&[o.to_string()]).unwrap_err();
            assert!(err.starts_with(&format!("--set {o}: hotstorage23 sets")), "{err}");
        }
        let fine = ["host.completion=poll", "device.flash.read_ns=5000", "flow.0.bs=8k", "run.warmup=1ms"];
        assert!(check_overrides(&fine.map(String::from)).is_ok());
    }

    #[test]
    fn a_duration_must_outlast_the_warm_up() {
        let mut options = Options::full();
        assert!(options.set_duration(5_000_000).unwrap_err().starts_with("--duration"));
        options.set_duration(6_000_000).unwrap();
        assert_eq!((options.table1_duration_ns, options.figure_duration_ns), (6_000_000, 6_000_000));
    }

    #[test]
    fn idle_power_is_the_documented_48_watts() {
        assert_eq!(idle_watts(&HostConfig::default()), 48.0);
    }
}
