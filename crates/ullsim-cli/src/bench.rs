//! `ullsim bench`: simulated requests per wall-second, setup time and peak memory on fixed cases. Each case
//! runs in a child process so its peak memory is its own.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde_json::json;
use ullsim::Scenario;

/// The benchmark cases: (name, what it runs, scenario). `randread-qd32` measures the device model alone
/// (`host.model = "device-only"`, as MQSim runs it); `randread-qd32-fullstack` is the same run through the
/// default host stack, so the two show what the host costs.
const CASES: &[(&str, &str, &str)] = &[
    (
        "fullstack-qd32",
        "host stack (io_uring, none, interrupts) + optane-ull, 4 KiB random reads at QD32",
        r#"
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
    ),
    (
        "randread-qd32",
        "device-only host + a full mqsim-mlc (mapping reads through its 2 MiB CMT), 4 KiB random reads at QD32",
        r#"
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
"#,
    ),
    (
        "randread-qd32-fullstack",
        "default host stack + a full mqsim-mlc (mapping reads through its 2 MiB CMT), 4 KiB random reads at QD32",
        r#"
name = "bench randread-qd32-fullstack"
[run]
duration = "3s"
[host]
model = "full"
[device]
preset = "mqsim-mlc"
[[flow]]
name = "randread"
rw = "randread"
bs = "4k"
iodepth = 32
"#,
    ),
    (
        "mixed",
        "default host stack + a full mqsim-mlc: QD1 4 KiB random reader beside a QD32 128 KiB sequential writer, \
         garbage-collection bound",
        r#"
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
    ),
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
    let (_, what, text) = CASES.iter().find(|(n, _, _)| *n == name).context("unknown case")?;
    let scenario = Scenario::from_toml_str(text, &format!("bench case {name}"), Path::new("."), &[])?;
    let setup_start = Instant::now();
    let sim = ullsim::Simulation::new(&scenario)?;
    let setup_seconds = setup_start.elapsed().as_secs_f64();
    let run_start = Instant::now();
    let results = sim.run(&mut |_, _| {})?;
    let wall_seconds = run_start.elapsed().as_secs_f64();
    Ok(json!({
        "name": name,
        "what": what,
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
        if !CASES.iter().any(|(n, _, _)| *n == name) {
            bail!("unknown case \"{name}\"; expected one of {:?}", CASES.iter().map(|c| c.0).collect::<Vec<_>>());
        }
    }
    let exe = std::env::current_exe().context("cannot find the ullsim executable")?;
    let mut cases = Vec::new();
    let width = CASES.iter().map(|(n, _, _)| n.len()).max().unwrap_or(0);
    println!(
        "{:<width$} {:>12} {:>9} {:>12} {:>9} {:>10}",
        "case", "requests", "wall s", "requests/s", "setup s", "peak MiB"
    );
    for (name, _, _) in CASES.iter().filter(|(n, _, _)| only.is_none_or(|o| o == *n)) {
        let output = Command::new(&exe).args(["bench", "--child", "--case", name]).output()?;
        if !output.status.success() {
            bail!("bench case {name} failed: {}", String::from_utf8_lossy(&output.stderr));
        }
        let case: serde_json::Value = serde_json::from_slice(&output.stdout)?;
        println!(
            "{:<width$} {:>12} {:>9.3} {:>12.0} {:>9.3} {:>10.1}",
            name,
            case["simulated_requests"].as_u64().unwrap_or(0),
            case["wall_seconds"].as_f64().unwrap_or(0.0),
            case["requests_per_second"].as_f64().unwrap_or(0.0),
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
