//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::Path;

use ullsim::{RunResults, Scenario};

/// Parse a scenario from TOML text (panics with the loader's message on error: tests write valid text).
pub fn scenario(text: &str) -> Scenario {
    Scenario::from_toml_str(text, "test scenario", Path::new("."), &[]).unwrap_or_else(|e| panic!("{e}"))
}

/// Parse with `--set`-style overrides.
pub fn scenario_with(text: &str, overrides: &[&str]) -> Scenario {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Scenario::from_toml_str(text, "test scenario", Path::new("."), &overrides).unwrap_or_else(|e| panic!("{e}"))
}

/// The loader's message for `text` with `overrides`, which must be bad input (panics if it loads).
pub fn load_error(text: &str, overrides: &[&str]) -> String {
    let owned: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    match Scenario::from_toml_str(text, "t.toml", Path::new("."), &owned) {
        Ok(_) => panic!("{overrides:?} loaded; expected an error"),
        Err(e) => e.to_string(),
    }
}

pub fn run(s: &Scenario) -> RunResults {
    ullsim::run_scenario(s).unwrap_or_else(|e| panic!("run failed: {e}"))
}

/// `value` as JSON text: results compared byte for byte.
pub fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap()
}

/// The results of flow `name` of `results`, as JSON.
pub fn flow_json(results: &RunResults, name: &str) -> String {
    json(results.flows.iter().find(|f| f.name == name).expect("the flow ran"))
}

/// A `tlc-consumer` shrunk to 64 blocks per plane, full and randomly overwritten, map invariants checked at
/// the end, and one 4 KiB random writer at `iodepth` for `duration`: tests give the rest with `--set`s.
pub fn small_consumer_writer(duration: &str, iodepth: u32) -> String {
    format!(
        "seed = 1\n[run]\nduration = \"{duration}\"\nwarmup = \"0ms\"\ncheck_invariants = true\n[device]\n\
         preset = \"tlc-consumer\"\n[device.flash]\nblocks_per_plane = 64\n[device.ftl]\nprecondition = \"random\"\n\
         [[flow]]\nname = \"w\"\nrw = \"randwrite\"\nbs = \"4k\"\niodepth = {iodepth}\n"
    )
}

/// A small page-mapped MLC drive (2 channels x 1 chip x 1 die x 2 planes x 64 blocks x 64 pages x 8 KiB =
/// 128 MiB raw, 15% over-provisioned) with a 1 MiB write buffer: garbage collection starts after a few MiB of writes.
pub const SMALL_MLC: &str = r#"
[device]
preset = "mqsim-mlc"
[device.flash]
channels = 2
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 2
blocks_per_plane = 64
pages_per_block = 64
[device.ftl]
ideal_map = true
overprovisioning = 0.15
[device.cache]
capacity_bytes = "1MiB"
"#;

/// One die with one plane of an `mqsim-mlc` drive (256 blocks x 64 pages), an ideal map, the lower half of
/// the logical space written once and the upper half free: writes to the upper half (`offset = "55%"`) run
/// no garbage collection, so only programs stand between the flows. Append `[device.cache]` and flows.
pub const ONE_DIE_HALF_WRITTEN: &str = r#"
[device]
preset = "mqsim-mlc"
[device.flash]
channels = 1
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 1
blocks_per_plane = 256
pages_per_block = 64
[device.ftl]
ideal_map = true
precondition = "sequential"
precondition_fill = 0.5
"#;

/// A `[host]` whose software costs nothing: every CPU, block-layer and driver cost is zero, so the host is a
/// pure pass-through and device-level closed forms hold end to end.
#[allow(dead_code)]
pub const ZERO_COST_HOST: &str = r#"
[host.cpu]
syscall_entry_ns = 0
syscall_exit_ns = 0
fs_submit_ns = 0
reap_ns = 0
context_switch_ns = 0
wakeup_ns = 0
idle_exit_ns = 0
poll_loop_ns = 0
[host.block]
submit_ns = 0
complete_ns = 0
[host.nvme]
queue_rq_ns = 0
doorbell_ns = 0
irq_delivery_ns = 0
isr_ns = 0
cqe_ns = 0
"#;

/// Three flows on znand-ull: a critical QD4 4 KiB random reader, a QD8 128 KiB sequential writer and a Poisson
/// open-loop mixed flow of 4 and 16 KiB I/O.
pub const MIXED: &str = r#"
seed = 3
[run]
duration = "200ms"
warmup = "20ms"
[device]
preset = "znand-ull"
[[flow]]
name = "reader"
class = "critical"
rw = "randread"
bs = "4k"
iodepth = 4
[[flow]]
name = "writer"
rw = "write"
bs = "128k"
iodepth = 8
[[flow]]
name = "poisson"
rw = "randrw"
rwmixread = 70
bssplit = "4k/60:16k/40"
rate_iops = 20000
rate_process = "poisson"
"#;

/// One 128 KiB random reader at QD1 of class `class` (`"normal"` or `"critical"`), alone on optane-ull for
/// 10 ms, with the invariants checked.
pub fn big_reader(class: &str) -> String {
    format!(
        r#"
[run]
duration = "10ms"
check_invariants = true
[device]
preset = "optane-ull"
[[flow]]
name = "big"
class = "{class}"
rw = "randread"
bs = "128k"
"#
    )
}

/// A WAL writer: 4 KiB appends through the page cache, each followed by fsync (RocksDB's fillsync), on a
/// drive with power-loss protection.
pub const WAL: &str = r#"
seed = 1
[run]
duration = "100ms"
warmup = "10ms"
check_invariants = true
[device]
preset = "optane-ull"
[[flow]]
name = "wal"
rw = "write"
bs = "4k"
ioengine = "psync"
direct = 0
fsync = 1
size = "64m"
"#;
