//! `ullsim bench`: simulated requests per wall-second, setup time and peak memory on fixed cases. Each case
//! runs in a child process so its peak memory is its own.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde_json::json;
use ullsim::Scenario;

/// 4 KiB random reads at QD32 on a full mqsim-mlc, through the device-only host (`randread-qd32` measures
/// the device model alone, as MQSim runs it; `randread-qd32-fullstack` overrides the host back to "full").
const RANDREAD_QD32: &str = r#"
name = "bench randread-qd32"
[run]
duration = "3s"
[host]
model = "device-only"
[device]
preset = "mqsim-mlc"
[[flow]]
name = "randread"
rw = "randread"
bs = "4k"
iodepth = 32
"#;

/// One benchmark case.
struct Case {
    name: &'static str,
    /// What it runs, for the JSON.
    what: &'static str,
    scenario: &'static str,
    /// `--set` overrides applied to `scenario`.
    overrides: &'static [&'static str],
}

/// The benchmark cases.
const CASES: &[Case] = &[
    Case {
        name: "fullstack-qd32",
        what: "host stack (io_uring, none, interrupts) + optane-ull, 4 KiB random reads at QD32",
        scenario: r#"
name = "bench fullstack-qd32: io_uring QD32 4 KB random reads, none, interrupts, on optane-ull"
[run]
duration = "2s"
[host]
io_scheduler = "none"
completion = "interrupt"
[device]
preset = "optane-ull"
[[flow]]
name = "randread"
rw = "randread"
bs = "4k"
iodepth = 32
ioengine = "io_uring"
"#,
        overrides: &[],
    },
    Case {
        name: "randread-qd32",
        what: "device-only host + a full mqsim-mlc (mapping reads through its 2 MiB CMT), 4 KiB random reads at QD32",
        scenario: RANDREAD_QD32,
        overrides: &[],
    },
    Case {
        name: "randread-qd32-fullstack",
        what: "default host stack + a full mqsim-mlc (mapping reads through its 2 MiB CMT), 4 KiB random reads at QD32",
        scenario: RANDREAD_QD32,
        overrides: &["host.model=full", "name=bench randread-qd32-fullstack"],
    },
    Case {
        name: "mixed",
        what: "default host stack + a full mqsim-mlc: QD1 4 KiB random reader beside a QD32 128 KiB sequential \
               writer, garbage-collection bound",
        scenario: r#"
name = "bench mixed"
[run]
duration = "2s"
[device]
preset = "mqsim-mlc"
[[flow]]
name = "reader"
rw = "randread"
bs = "4k"
iodepth = 1
[[flow]]
name = "writer"
rw = "write"
bs = "128k"
iodepth = 32
"#,
        overrides: &[],
    },
    Case {
        name: "default-gc",
        what: "the built-in default scenario's shared run (no alone runs): a 4 KiB reader beside a 128 KiB \
               sequential writer on znand-ull (800 GB of 2 KiB pages), whose garbage collection moves randomly \
               preconditioned pages from its first writes on (1 s): the drive's map grows with the pages written",
        scenario: ullsim::config::scenario::DEFAULT_SCENARIO,
        overrides: &["run.duration=1s", "name=bench default-gc"],
    },
    Case {
        name: "fastresponse-bs",
        what: "FastResponse's BS-Opt stack on 16 cores + optane-900p: a critical 4 KiB reader beside TeraSort's \
               bursts of 128 KiB I/O (LD, split, bypass) and 16 CPU hogs at 30% under the critical wake-up",
        scenario: include_str!("../../../scenarios/fastresponse22/readrandom-beside-terasort.toml"),
        overrides: &["host.stack=fastresponse-bs", "run.duration=10s", "metrics.timeseries_interval=0s"],
    },
    Case {
        name: "fsync-writeback",
        what: "the file system: a 4 KiB append + fsync loop (JBD2 commits) beside a buffered 128 KiB writer whose \
               pages the flusher writes back, 64 MiB of page cache, optane-ull",
        scenario: include_str!("../../../scenarios/examples/fsync-beside-writeback.toml"),
        overrides: &["run.duration=3s"],
    },
    Case {
        name: "fsync-backlog",
        what: "a backlog of dirty pages (issue 33): a critical 4 KiB writer with an fsync after each write at \
               2,000 a second beside four buffered 128 KiB writers of one file, 1 GiB of page cache (up to 200 MiB \
               dirty), optane-ull; every commit writes the ordered data of the writers' file, so the page cache's \
               work per commit must not grow with its dirty pages (reported as events per second)",
        scenario: r#"
name = "bench fsync-backlog"
[run]
duration = "2s"
warmup = "100ms"
[device]
preset = "optane-ull"
[host.fs]
memory_bytes = "1g"
[[flow]]
name = "wal"
class = "critical"
rw = "write"
bs = "4k"
ioengine = "psync"
direct = 0
fsync = 1
rate_iops = 2000
size = "64m"
[[flow]]
name = "bulk"
rw = "write"
bs = "128k"
ioengine = "psync"
direct = 0
numjobs = 4
offset = "1g"
size = "8g"
"#,
        overrides: &[],
    },
    Case {
        name: "aios-randread",
        what: "AIOS: one thread of 4 KiB buffered random reads that miss the page cache, as LBIO with the read's \
               CPU work overlapped, optane-900p behind an IOMMU",
        scenario: include_str!("../../../scenarios/aios19/fio-randread.toml"),
        overrides: &["host.stack=aios", "run.duration=3s"],
    },
    Case {
        name: "contention-tlc",
        what: "contention inside a consumer drive (issue 30): a QD1 4 KiB reader beside 8 QD128 4 KiB random \
               writers on tlc-consumer (command slots, bounded read priority, GC at its steady state), Kyber, \
               8 cores",
        scenario: include_str!("../../../scenarios/contention/randwrite-4k.toml"),
        overrides: &[
            "flow.bulk.numjobs=8",
            "host.io_scheduler=kyber",
            "metrics.fairness=false",
            "run.duration=1s",
            "name=bench contention-tlc",
        ],
    },
    Case {
        name: "flashshare-selectisr",
        what: "FlashShare's SelectISR stack on znand-ull: a polled critical 4 KiB reader beside a 64-deep bulk \
               reader, dual SQs with the drain rule, the partitioned read cache with its ghost caches",
        scenario: include_str!("../../../scenarios/examples/flashshare-reader-beside-bulk.toml"),
        overrides: &["host.stack=flashshare-selectisr", "run.duration=2s"],
    },
];

/// Peak resident memory of this process (Linux: VmHWM), in bytes.
fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|kb| kb.parse::<u64>().ok()).map(|kb| kb * 1024))
        })
        .unwrap_or(0)
}

fn run_case(name: &str) -> Result<serde_json::Value> {
    let case = CASES.iter().find(|c| c.name == name).context("unknown case")?;
    let overrides: Vec<String> = case.overrides.iter().map(|o| o.to_string()).collect();
    let scenario = Scenario::from_toml_str(case.scenario, &format!("bench case {name}"), Path::new("."), &overrides)?;
    let setup_start = Instant::now();
    let sim = ullsim::Simulation::new(&scenario)?;
    let setup_seconds = setup_start.elapsed().as_secs_f64();
    let run_start = Instant::now();
    let results = sim.run(&mut |_, _| {})?;
    let wall_seconds = run_start.elapsed().as_secs_f64();
    Ok(json!({
        "name": name,
        "what": case.what,
        "simulated_requests": results.requests_completed,
        "simulated_seconds": (results.window.end_ns - results.window.start_ns) as f64 / 1e9,
        "events": results.events,
        "wall_seconds": wall_seconds,
        "requests_per_second": results.requests_completed as f64 / wall_seconds,
        "events_per_second": results.events as f64 / wall_seconds,
        "setup_seconds": setup_seconds,
        "peak_rss_bytes": peak_rss_bytes(),
    }))
}

pub fn main(json_path: Option<&Path>, only: Option<&str>, child: bool) -> Result<()> {
    if child {
        let name = only.context("--child needs --case")?;
        println!("{}", run_case(name)?);
        return Ok(());
    }
    if let Some(name) = only {
        if !CASES.iter().any(|c| c.name == name) {
            bail!("unknown case \"{name}\"; expected one of {:?}", CASES.iter().map(|c| c.name).collect::<Vec<_>>());
        }
    }
    let exe = std::env::current_exe().context("cannot find the ullsim executable")?;
    let mut cases = Vec::new();
    let width = CASES.iter().map(|c| c.name.len()).max().unwrap_or(0);
    println!(
        "{:<width$} {:>12} {:>9} {:>12} {:>12} {:>9} {:>10}",
        "case", "requests", "wall s", "requests/s", "events/s", "setup s", "peak MiB"
    );
    for name in CASES.iter().map(|c| c.name).filter(|n| only.is_none_or(|o| o == *n)) {
        let output = Command::new(&exe).args(["bench", "--child", "--case", name]).output()?;
        if !output.status.success() {
            bail!("bench case {name} failed: {}", String::from_utf8_lossy(&output.stderr));
        }
        let case: serde_json::Value = serde_json::from_slice(&output.stdout)?;
        println!(
            "{:<width$} {:>12} {:>9.3} {:>12.0} {:>12.0} {:>9.3} {:>10.1}",
            name,
            case["simulated_requests"].as_u64().unwrap_or(0),
            case["wall_seconds"].as_f64().unwrap_or(0.0),
            case["requests_per_second"].as_f64().unwrap_or(0.0),
            case["events_per_second"].as_f64().unwrap_or(0.0),
            case["setup_seconds"].as_f64().unwrap_or(0.0),
            case["peak_rss_bytes"].as_f64().unwrap_or(0.0) / (1u64 << 20) as f64,
        );
        cases.push(case);
    }
    if let Some(p) = json_path {
        let text = serde_json::to_string_pretty(&json!({ "cases": cases }))? + "\n";
        std::fs::write(p, text).with_context(|| format!("cannot write {}", p.display()))?;
    }
    Ok(())
}
