//! Memory per flow and per run, measured as the resident set's peak (`VmHWM`) of a child process that loads
//! and runs one scenario: this test binary again, running [`child_runs_the_scenario_it_is_given`] with the
//! scenario's path in [`SCENARIO_ENV`]. A child has the process to itself, so its peak is the run's alone
//! (the parent's tests run on threads beside one another). Linux only: elsewhere there is no `VmHWM`, and
//! the tests that need it say so and pass without measuring.

use std::path::{Path, PathBuf};
use std::process::Command;

use ullsim::config::scenario::{MAX_FLOWS, MAX_TASKS};

use crate::common::load_error;

/// The scenario file a child runs.
const SCENARIO_ENV: &str = "ULLSIM_MEMORY_TEST_SCENARIO";
/// `--set`-style overrides for it, separated by newlines.
const OVERRIDES_ENV: &str = "ULLSIM_MEMORY_TEST_SET";
const CHILD_TEST: &str = "memory::child_runs_the_scenario_it_is_given";

/// Peak resident set of this process, in bytes (Linux).
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Not a test of its own: the body of the child process [`peak_of_run`] starts. Without [`SCENARIO_ENV`]
/// (an ordinary test run) it does nothing.
#[test]
fn child_runs_the_scenario_it_is_given() {
    let Ok(path) = std::env::var(SCENARIO_ENV) else { return };
    let overrides: Vec<String> = std::env::var(OVERRIDES_ENV).unwrap_or_default().lines().map(str::to_string).collect();
    let scenario = ullsim::Scenario::load(Path::new(&path), &overrides).unwrap_or_else(|e| panic!("{e}"));
    let results = ullsim::run_scenario(&scenario).unwrap_or_else(|e| panic!("{e}"));
    let completed: u64 = results.flows.iter().map(|f| f.completed).sum();
    println!("completed {completed}");
    println!("peak_rss_bytes {}", peak_rss_bytes().unwrap_or(0));
}

/// Run `scenario` (TOML text) with `overrides` in a child process: its requests completed and its peak
/// resident set in bytes (`None` where the system does not report one).
fn peak_of_run(name: &str, scenario: &str, overrides: &[&str]) -> (u64, Option<u64>) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("memory");
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, scenario).expect("write the scenario");
    let out = Command::new(std::env::current_exe().expect("the test binary"))
        .args([CHILD_TEST, "--exact", "--nocapture", "--test-threads", "1"])
        .env(SCENARIO_ENV, &path)
        .env(OVERRIDES_ENV, overrides.join("\n"))
        .output()
        .expect("start the child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "the child failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let field = |key: &str| -> u64 {
        let line = stdout
            .lines()
            .find_map(|l| l.split_once(key).map(|(_, v)| v))
            .unwrap_or_else(|| panic!("no {key}: {stdout}"));
        line.trim().parse().expect("a number")
    };
    let peak = field("peak_rss_bytes ");
    (field("completed "), (peak > 0).then_some(peak))
}

/// `n` QD1 4 KiB random readers on `optane-ull`, for `duration`.
fn many_readers(n: usize, duration: &str) -> String {
    let mut s = format!(
        "name = \"many\"\nseed = 1\n[run]\nduration = \"{duration}\"\nwarmup = \"0ms\"\n[device]\npreset = \
         \"optane-ull\"\n"
    );
    for i in 0..n {
        s += &format!("[[flow]]\nname = \"f{i}\"\nrw = \"randread\"\nbs = \"4k\"\niodepth = 1\n");
    }
    s
}

const MIB: u64 = 1 << 20;

#[test]
fn a_thousand_flows_of_a_millisecond_stay_under_200_mib() {
    // Each flow used to cost ~4 MB before its first I/O (fifteen fixed hour-long histograms): 3.97 GB.
    let (completed, peak) = peak_of_run("flows-1000", &many_readers(1000, "1ms"), &[]);
    assert!(completed > 0, "the flows completed nothing");
    let Some(peak) = peak else {
        eprintln!("no VmHWM on this system: the peak is not measured");
        return;
    };
    assert!(peak < 200 * MIB, "1,000 flows of 1 ms peaked at {} MiB", peak / MIB);
}

#[test]
fn huge_requests_offered_faster_than_served_stay_bounded() {
    // 3.8 GiB reads offered at 2M IOPS to mqsim-mlc (a fuzz case): each held command's pages are flash
    // transactions in memory, and the controller used to hold 512 of them (~20 GB). It now stops fetching
    // at 1 GiB of held data (`device::hil::MAX_BYTES_HELD`).
    let text = "name = \"huge\"\nseed = 1\n[run]\nduration = \"10ms\"\n[host]\nmodel = \"device-only\"\n[device]\n\
                preset = \"mqsim-mlc\"\n[[flow]]\nname = \"reader\"\nrw = \"randread\"\nbs = \"4000000k\"\n\
                rate_iops = 2000000\n";
    let (_, peak) = peak_of_run("huge-requests", text, &[]);
    let Some(peak) = peak else {
        eprintln!("no VmHWM on this system: the peak is not measured");
        return;
    };
    assert!(peak < 400 * MIB, "3.8 GiB requests at 2M IOPS for 10 ms peaked at {} MiB", peak / MIB);
}

#[test]
fn a_flow_that_has_issued_nothing_costs_kilobytes() {
    // The same readers, all starting after the run's only millisecond... but one: the rest never issue.
    let mut text = many_readers(1, "2ms");
    for i in 1..2000 {
        text += &format!("[[flow]]\nname = \"idle{i}\"\nrw = \"randread\"\nbs = \"4k\"\nstartdelay = \"1999us\"\n");
    }
    let (_, small) = peak_of_run("flows-1", &many_readers(1, "2ms"), &[]);
    let (_, large) = peak_of_run("flows-2000-idle", &text, &[]);
    let (Some(small), Some(large)) = (small, large) else {
        eprintln!("no VmHWM on this system: the peak is not measured");
        return;
    };
    let per_flow = large.saturating_sub(small) / 1999;
    assert!(per_flow < 16 * 1024, "a flow that issued almost nothing cost {per_flow} bytes");
}

#[test]
fn more_flows_than_the_maximum_is_an_error_naming_the_key_and_the_limit() {
    let text = many_readers(MAX_FLOWS + 1, "1ms");
    let e = load_error(&text, &[]);
    assert!(e.contains("key `flow`") && e.contains(&MAX_FLOWS.to_string()) && e.contains("numjobs"), "{e}");
    // Exactly the maximum loads.
    crate::common::scenario(&many_readers(MAX_FLOWS, "1ms"));
}

#[test]
fn more_tasks_than_the_maximum_is_an_error_naming_the_key_and_the_limit() {
    let mut text = many_readers(0, "1ms");
    let flows = MAX_TASKS / 4096 + 1;
    for i in 0..flows {
        text += &format!("[[flow]]\nname = \"f{i}\"\nrw = \"randread\"\nbs = \"4k\"\nnumjobs = 4096\n");
    }
    let e = load_error(&text, &[]);
    assert!(e.contains("key `flow`") && e.contains(&MAX_TASKS.to_string()) && e.contains("numjobs"), "{e}");
}
