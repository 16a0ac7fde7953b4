//! FastResponse's Fig. 18: CPU use at an unlimited issue rate. readrandom (4 KB gets) and fillsync (a 4 KB
//! WAL append and an fsync per update) each run alone from one thread, closed loop with no think time (the
//! paper's ~50K requests per second), under SelectISR, which polls critical I/O, and BSJ-Opt, which takes
//! interrupts. Rows: the CPU use, as `top` shows it summed over the cores (percent of one core: the thread's
//! own work, system calls and polling, the interrupt handlers, the context switches, and the journal thread
//! when it runs), and the requests per second.

use super::{Options, DATASET, PLATFORM, SERVER_CORES};
use crate::reproduce::rows::Reproduction;
use crate::reproduce::{over_settings, overrides_for, run_toml};
use crate::sim::RunResults;

/// The stacks of Fig. 18: (label, `host.stack`).
pub const STACKS: [(&str, &str); 2] = [("selectisr", "selectisr"), ("bsj-opt", "fastresponse")];
/// Longest run: a closed loop at tens of thousands of requests per second settles within a second.
const MAX_DURATION_NS: u64 = 2_000_000_000;
const WARMUP_NS: u64 = 100_000_000;

/// The paper's numbers (§4.6): CPU use, percent of a core.
pub mod paper {
    pub const CPU_PCT: [(&str, &str, f64); 4] = [
        ("readrandom", "selectisr", 100.0),
        ("fillsync", "selectisr", 100.0),
        ("readrandom", "bsj-opt", 73.0),
        ("fillsync", "bsj-opt", 41.0),
    ];
    /// "~50K requests per second" at an unlimited issue rate.
    pub const REQUESTS_PER_S: f64 = 50_000.0;
}

/// The benchmarks: (name, `[[flow]]` keys).
const BENCHES: [(&str, &str); 2] = [
    ("readrandom", "rw = \"randread\"\nbs = \"4k\"\nioengine = \"psync\"\nsize = \"40GB\""),
    ("fillsync", "rw = \"write\"\nbs = \"4k\"\nioengine = \"psync\"\ndirect = 0\nfsync = 1\nsize = \"1g\""),
];

fn scenario_text(keys: &str, stack: &str, duration_ns: u64) -> String {
    let keys = keys.replace("40GB", DATASET);
    format!(
        "name = \"fastresponse22-fig18\"\n[run]\nduration = \"{}ns\"\nwarmup = \"{WARMUP_NS}ns\"\n[host]\nplatform = \
         \"{PLATFORM}\"\nstack = \"{stack}\"\ncores = {SERVER_CORES}\n[device]\npreset = \"optane-900p\"\n[[flow]]\nname = \"bench\"\nclass = \
         \"critical\"\n{keys}\n",
        WARMUP_NS + duration_ns
    )
}

/// CPU use (percent of one core, all cores summed) and requests per second: for fillsync an update (an
/// append and its fsync).
fn measure(bench: &str, r: &RunResults) -> (f64, f64) {
    let f = &r.flows[0];
    let done = if bench == "fillsync" { f.flush.as_ref().map_or(0, |s| s.completed) } else { f.completed };
    (100.0 * r.host.busy_cores, done as f64 / r.window.seconds())
}

/// Fig. 18's settings: (bench, its flow's keys, stack).
fn settings() -> Vec<(&'static str, &'static str, &'static str)> {
    BENCHES.iter().flat_map(|&(bench, keys)| STACKS.iter().map(move |&(_, stack)| (bench, keys, stack))).collect()
}

/// The scenarios Fig. 18 runs.
pub(super) fn texts(options: &Options) -> Vec<String> {
    let duration_ns = options.duration_ns.min(MAX_DURATION_NS);
    settings().into_iter().map(|(_, keys, stack)| scenario_text(keys, stack, duration_ns)).collect()
}

/// Run Fig. 18 and add its rows to `out`.
pub fn rows(options: &Options, out: &mut Reproduction) -> Result<(), String> {
    let settings = settings();
    let duration_ns = options.duration_ns.min(MAX_DURATION_NS);
    let measured = over_settings(
        settings.len(),
        options.seed,
        options.seeds,
        |i, seed| {
            let (bench, keys, stack) = settings[i];
            let text = scenario_text(keys, stack, duration_ns);
            let (_, results) =
                run_toml(&text, "fastresponse22 fig18", seed, &overrides_for(&text, &options.overrides))?;
            Ok(measure(bench, &results))
        },
        |runs| {
            let n = runs.len() as f64;
            (runs.iter().map(|r| r.0).sum::<f64>() / n, runs.iter().map(|r| r.1).sum::<f64>() / n)
        },
    )?;
    for (&(bench, _, stack), &(cpu, rate)) in settings.iter().zip(&measured) {
        let label = STACKS.iter().find(|s| s.1 == stack).map_or(stack, |s| s.0);
        let paper_cpu = paper::CPU_PCT.iter().find(|p| p.0 == bench && p.1 == label).map(|p| p.2);
        let setting = [("bench", bench), ("stack", label)];
        out.push("fig18", &setting, "cpu_pct", paper_cpu, cpu);
        out.push("fig18", &setting, "requests_per_s", Some(paper::REQUESTS_PER_S), rate);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_loads_as_a_scenario() {
        for (bench, keys) in BENCHES {
            for (_, stack) in STACKS {
                let text = scenario_text(keys, stack, 1_000_000);
                crate::reproduce::load_toml(&text, "t", 1, &[]).unwrap_or_else(|e| panic!("{bench} {stack}: {e}"));
            }
        }
    }
}
