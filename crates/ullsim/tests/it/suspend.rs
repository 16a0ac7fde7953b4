//! Program suspension end to end: a light reader beside a writer that keeps the only die programming.

use crate::common;

use common::{run, scenario_with, ONE_DIE_HALF_WRITTEN};

/// One die, one plane, no write buffer (a write completes when its program does), the lower half written
/// once and the upper half free, so no garbage collection runs: a QD1 writer keeps the die programming back
/// to back, and a 200 IOPS reader reads the written half at random.
fn reader_beside_writer() -> String {
    format!(
        r#"
seed = 11
[run]
duration = "2s"
warmup = "20ms"
{ONE_DIE_HALF_WRITTEN}
[device.cache]
enabled = false
[[flow]]
name = "writer"
rw = "randwrite"
offset = "55%"
bs = "8k"
iodepth = 1
[[flow]]
name = "reader"
rw = "randread"
bs = "8k"
size = "45%"
rate_iops = 200
rate_process = "poisson"
"#
    )
}

#[test]
fn a_read_suspends_the_program_instead_of_waiting_for_it() {
    let off = run(&scenario_with(&reader_beside_writer(), &[]));
    let on = run(&scenario_with(&reader_beside_writer(), &["device.flash.program_suspend=true"]));
    let s = scenario_with(&reader_beside_writer(), &[]);
    let flash = &s.device.flash;
    let (program, read) = (flash.program_ns.0 as f64, flash.read_ns.0 as f64);
    let (reader_off, reader_on) = (&off.flows[1], &on.flows[1]);
    assert!(reader_off.completed > 300 && reader_on.completed > 300);
    assert_eq!(off.device.suspensions, 0);
    assert_eq!(off.device.gc_count + on.device.gc_count, 0, "no GC: only programs are in the way");

    // Without suspension a read finds the die programming almost always and waits for the rest of the
    // program: half of it on average, nearly all of it at worst.
    assert!(reader_off.latency_ns.mean > read + 0.4 * program, "{}", reader_off.latency_ns.mean);
    assert!(reader_off.latency_ns.max as f64 > 0.9 * program);
    // With it a read waits at most the suspend latency (after the program's data-in, if that is still
    // crossing the channel), or the last `program_suspend_min_remaining_ns` of a program too close to its
    // end to suspend; the fastest read, which found the die idle, is the rest of its path. A read that
    // arrives while another is being served also waits for that one (at 200 IOPS about 4% of reads, so
    // the 90th percentile has one wait and the maximum two).
    let alone = reader_on.latency_ns.min as f64;
    let longest_wait = flash.program_suspend_min_remaining_ns.0.max(flash.suspend_ns.0 + 25_000) as f64;
    let read_op = (flash.command_ns.0 as f64 + read + 8192.0 * 1000.0 / flash.channel_mts) * 1.01;
    let p90 = reader_on.latency_ns.p90 as f64;
    assert!(p90 <= (alone + longest_wait) * 1.01, "p90 {p90} > {alone} + {longest_wait}");
    let max = reader_on.latency_ns.max as f64;
    assert!(max <= (alone + longest_wait + read_op) * 1.01, "max {max}");
    assert!(reader_on.latency_ns.mean < reader_off.latency_ns.mean / 3.0);

    // Nearly every read suspended a program; the few that came in a program's last 100 us did not.
    let reads = reader_on.completed as f64;
    let suspensions = on.device.suspensions as f64;
    let suspendable = 1.0 - flash.program_suspend_min_remaining_ns.0 as f64 / program;
    assert!(suspensions <= reads * 1.01 && suspensions >= reads * (suspendable - 0.1), "{suspensions} of {reads}");
    // The writer pays each suspension's suspend + resume time and the read it lets through: a few percent.
    let (writer_off, writer_on) = (off.flows[0].completed as f64, on.flows[0].completed as f64);
    assert!(writer_on < writer_off && writer_on > 0.95 * writer_off, "{writer_on} vs {writer_off}");
}

#[test]
fn suspension_runs_are_deterministic() {
    let sets = ["device.flash.program_suspend=true", "device.flash.erase_suspend=true"];
    let a = run(&scenario_with(&reader_beside_writer(), &sets));
    let b = run(&scenario_with(&reader_beside_writer(), &sets));
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
}
