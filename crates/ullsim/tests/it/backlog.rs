//! No path of the host slows per event as a backlog grows: the page cache's work per simulated event (pages
//! or runs of pages it visits, `FsCounters::page_cache_steps`, a deterministic count rather than a time)
//! with four times the dirty memory stays within twice the base. The case is the one that once ran at 10K
//! events a wall second: a critical 4 KiB writer with an fsync after each write beside buffered 128 KiB
//! writers, whose dirty pages every journal commit's ordered-data phase looks through.

use crate::common::{run, scenario_with};

/// fsync after every 4 KiB write at 2,000 a second beside four buffered 128 KiB writers of one file; the
/// memory (and with it the dirty thresholds, 10% and 20% of it) is set by the test.
const FSYNC_BESIDE_BULK: &str = r#"
seed = 1
[run]
duration = "300ms"
warmup = "0ms"
[device]
preset = "optane-ull"
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
rate_iops = 8000
offset = "1g"
size = "8g"
"#;

/// Page-cache steps per event, and the dirty pages written back (the backlog's size shows in them).
fn steps_per_event(memory: &str) -> (f64, u64) {
    let r = run(&scenario_with(FSYNC_BESIDE_BULK, &[&format!("host.fs.memory_bytes=\"{memory}\"")]));
    let fs = r.host.fs.expect("a run with files reports the file system");
    assert!(r.flows[0].flush.as_ref().is_some_and(|f| f.completed > 400), "the WAL's fsyncs ran");
    (fs.page_cache_steps as f64 / r.events as f64, fs.writeback_pages)
}

#[test]
fn page_cache_work_per_event_does_not_grow_with_the_dirty_memory() {
    let (base, base_written) = steps_per_event("256m");
    let (big, big_written) = steps_per_event("1g");
    // The flusher ran in both (the backlog exists), and the larger memory held more dirty data.
    assert!(base_written > 0 && big_written > 0, "{base_written} {big_written}");
    assert!(big <= 2.0 * base, "{big:.1} steps per event at 4x the dirty memory, {base:.1} at the base");
}
