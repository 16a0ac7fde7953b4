//! The simulator's own memory on runs that write: the drive's map grows with the pages written, not with the
//! drive's size or the operating-system pages the writes land on (docs/model.md, "Memory"), and a drive whose
//! whole map is over `run.map_memory_limit` is named before the run and stops it at the limit.

use crate::common;

use common::{example, ullsim};
use serde_json::Value;

/// The built-in default scenario's shared run for 1 s simulated (`ullsim bench` case `default-gc`, in a
/// process of its own that reports its peak RSS): the 128 KiB writer fills the 800 GB drive's blocks and
/// garbage collection moves randomly preconditioned pages from ~0.6 s on. The process needs ~35 MiB before
/// it writes (the drive's per-block state, the 1.5 GiB cache's tags) and the map grows by ~4 bytes per page
/// the host writes (1.6 M pages in this second); a map keyed by logical page with a dense reverse array
/// peaked at ~400 MiB here, growing ~100 bytes per page written.
#[test]
fn default_scenario_stays_within_its_memory_budget() {
    let run = ullsim(["bench", "--child", "--case", "default-gc"]).ok();
    let case: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.describe()));
    let peak_mib = case["peak_rss_bytes"].as_u64().expect("peak_rss_bytes") as f64 / (1u64 << 20) as f64;
    let budget_mib = 128.0;
    assert!(peak_mib > 0.0, "no peak RSS reported (Linux only): {}", run.describe());
    assert!(peak_mib < budget_mib, "peak RSS {peak_mib:.1} MiB, over the budget of {budget_mib} MiB");
}

#[test]
fn a_map_that_can_pass_the_limit_is_named_up_front_and_stops_the_run_at_it() {
    // Random writes on a 7.4 GiB drive, whose whole map is ~18 MiB.
    let path = example("gc-randwrite.toml");
    let path = path.to_str().expect("test paths are UTF-8");
    // Under the default limit: validate states the map's most, and nothing more.
    let run = ullsim(["validate", path]).ok();
    assert!(run.stdout.contains(", map up to ") && run.stderr.is_empty(), "{}", run.describe());
    let limit = "run.map_memory_limit=1MiB";
    // validate says up front that the map can pass the limit.
    let run = ullsim(["validate", path, "--set", limit]).ok();
    assert!(run.stderr.starts_with("note: ") && run.stderr.contains("run.map_memory_limit"), "{}", run.describe());
    // The run prints the same note first, then stops with one error naming the key.
    let run = ullsim(["run", path, "--set", limit]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(run.stdout.is_empty() && !run.stderr.contains("panicked"), "{}", run.describe());
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert!(lines[0].starts_with("note: "), "{}", run.describe());
    assert_eq!(lines.iter().filter(|l| l.starts_with("error")).count(), 1, "{}", run.describe());
    for needle in ["run.map_memory_limit", "the drive's map holds", "simulated"] {
        assert!(run.stderr.contains(needle), "{needle:?} missing: {}", run.describe());
    }
}
