//! Cache programs (`device.flash.cache_program`, `device/cache_program.rs`): back-to-back programs on a die
//! overlap the next page's data-in with the current program, so a page costs max(transfer, program) after
//! its command instead of transfer + program; a program on an idle die still pays its transfer.

use crate::common;

use common::{run, scenario_with};
use ullsim::RunResults;

/// One die with one plane (128 blocks, 20% over-provisioned) of a `tlc-enterprise` drive, fresh (no GC), fixed service times, 16 KiB pages
/// programmed in `program_ns` over a channel of `channel_mts` (16 KiB take 16,384,000 / `channel_mts` ns),
/// and one writer of 16 KiB pages at `iodepth`. Append `--set`s for the rest.
fn one_die(rw: &str, iodepth: u32, program_ns: u64, channel_mts: u32, extra: &[&str]) -> RunResults {
    let text = format!(
        r#"
seed = 1
[run]
duration = "100ms"
warmup = "10ms"
{host}
[device]
preset = "tlc-enterprise"
[device.flash]
channels = 1
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 1
blocks_per_plane = 128
program_ns = {program_ns}
channel_mts = {channel_mts}
[device.ftl]
precondition = "none"
overprovisioning = 0.2
[device.variability]
enabled = false
[[flow]]
name = "w"
rw = "{rw}"
bs = "16k"
iodepth = {iodepth}
"#,
        host = common::ZERO_COST_HOST,
    );
    run(&scenario_with(&text, extra))
}

/// Nanoseconds per page the die programmed over the measured window.
fn ns_per_program(r: &RunResults) -> f64 {
    assert_eq!(r.device.flash_reads + r.device.flash_erases + r.device.gc_count, 0, "programs only");
    r.window.seconds() * 1e9 / r.device.flash_programs as f64
}

/// Sequential 16 KiB writes at QD32 through the write buffer keep the die programming back to back. With
/// cache programs a page costs `command_ns + max(program_ns, transfer)`; without, `command_ns + transfer +
/// program_ns`. Both cases: the program longer than the transfer, and the transfer longer (the bus binds).
#[test]
fn back_to_back_programs_cost_the_longer_of_transfer_and_program() {
    let command_ns = 100.0;
    for (program_ns, channel_mts) in [(100_000u64, 200u32), (100_000, 100)] {
        let transfer = 16_384.0 * 1000.0 / channel_mts as f64;
        let cached = one_die("write", 32, program_ns, channel_mts, &["device.flash.cache_program=true"]);
        let plain = one_die("write", 32, program_ns, channel_mts, &["device.flash.cache_program=false"]);
        let (with, without) = (ns_per_program(&cached), ns_per_program(&plain));
        let want_with = command_ns + (program_ns as f64).max(transfer);
        let want_without = command_ns + transfer + program_ns as f64;
        println!(
            "program {program_ns} ns, transfer {transfer:.0} ns: {with:.0} ns a page with cache programs \
             (closed form {want_with:.0}), {without:.0} without ({want_without:.0})"
        );
        assert!((with / want_with - 1.0).abs() < 0.005, "with cache programs: {with:.0} ns a page");
        assert!((without / want_without - 1.0).abs() < 0.005, "without: {without:.0} ns a page");
    }
}

/// At QD1 with no write buffer each write waits for its program, and the next arrives at an idle die: no
/// program follows a program, so every one pays its data-in, and the key changes nothing.
#[test]
fn a_program_on_an_idle_die_still_pays_its_transfer() {
    let no_buffer = "device.cache.enabled=false";
    let on = one_die("write", 1, 100_000, 200, &[no_buffer, "device.flash.cache_program=true"]);
    let off = one_die("write", 1, 100_000, 200, &[no_buffer, "device.flash.cache_program=false"]);
    let (lat_on, lat_off) = (on.flows[0].latency_ns.mean, off.flows[0].latency_ns.mean);
    println!("QD1 write: {lat_on:.0} ns with cache programs, {lat_off:.0} without");
    assert!(on.flows[0].completed > 100, "{} writes", on.flows[0].completed);
    assert_eq!(lat_on, lat_off, "an idle die's program is not cached");
    // command + 16 KiB at 200 MT/s + program, before any controller or link time.
    assert!(lat_on > 100.0 + 81_920.0 + 100_000.0, "QD1 write {lat_on:.0} ns");
}
