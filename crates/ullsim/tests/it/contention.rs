//! Contention inside the drive (issue 30): the shapes of `scenarios/contention/` on short runs. A QD1 4 KiB
//! reader (the L-app) beside QD128 processes of random writes on `tlc-consumer` waits behind the writes:
//! in the command slots they hold while they wait for write-buffer space, and on the dies behind their
//! programs (bounded read priority, no suspension). Kyber, which holds writes back at the host when reads
//! miss their latency target, keeps the writes out of the slots: it cuts the L-app's mean, and beside 64 KiB
//! writers its tail; `none` and `mq-deadline` do not. Beside 64 KiB readers the growth is milder.

use crate::common;

use common::{run, scenario_with};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/contention/");

/// The L-app's (mean, p99) in ns and the processes' MB/s for `file` with `n` processes under `scheduler`, over
/// a 300 ms run (100 ms of warm-up).
fn lapp(file: &str, n: u32, scheduler: &str) -> (f64, u64, f64) {
    let text = std::fs::read_to_string(format!("{DIR}{file}")).expect("the scenario file");
    let s = scenario_with(
        &text,
        &[
            "run.duration=300ms",
            "run.warmup=100ms",
            "metrics.fairness=false",
            &format!("flow.bulk.numjobs={n}"),
            &format!("host.io_scheduler={scheduler}"),
        ],
    );
    let r = run(&s);
    let (lapp, bulk) = (&r.flows[0], &r.flows[1]);
    (lapp.latency_ns.mean, lapp.latency_ns.p99, bulk.bandwidth_bytes_per_s / 1e6)
}

/// Beside 16 writers of 4 KiB the L-app's p99 reaches milliseconds under `none` and `mq-deadline`; Kyber
/// keeps the writes out of the command slots, which cuts its mean several times, but not its p99: that is
/// the programs and erases its die runs (no suspension), which no host scheduler reaches.
#[test]
fn beside_writers_the_lapp_waits_for_milliseconds_and_kyber_cuts_its_mean() {
    let (one_mean, one_p99, _) = lapp("randwrite-4k.toml", 1, "none");
    let (none_mean, none_p99, none_mbs) = lapp("randwrite-4k.toml", 16, "none");
    let (deadline_mean, deadline_p99, _) = lapp("randwrite-4k.toml", 16, "mq-deadline");
    let (kyber_mean, kyber_p99, kyber_mbs) = lapp("randwrite-4k.toml", 16, "kyber");
    println!("n=1 none: {one_mean:.0} / {one_p99} ns");
    println!("n=16 none: {none_mean:.0} / {none_p99} ns, {none_mbs:.0} MB/s");
    println!("n=16 mq-deadline: {deadline_mean:.0} / {deadline_p99} ns");
    println!("n=16 kyber: {kyber_mean:.0} / {kyber_p99} ns, {kyber_mbs:.0} MB/s");
    assert!(none_p99 > 2_000_000, "beside 16 writers the L-app's p99 reaches milliseconds: {none_p99} ns");
    assert!(none_mean > 2.0 * one_mean, "more writers, longer waits: {none_mean:.0} vs {one_mean:.0} ns");
    // mq-deadline does not hold writes back: the L-app's mean stays far above Kyber's and its p99 in
    // milliseconds (the p99 of ~250 reads is their third largest: with the lock model of issue 31 the
    // 8 cores' submissions shift, and it went from 3.2 to 1.9 ms; not a threshold to pin at 2 ms).
    assert!(deadline_p99 > 1_000_000, "mq-deadline's p99 in milliseconds: {deadline_p99} ns");
    assert!(deadline_mean > 2.0 * kyber_mean, "mq-deadline does not hold writes back: {deadline_mean:.0} ns");
    assert!(kyber_mean * 2.0 < none_mean, "kyber cuts the mean: {kyber_mean:.0} vs {none_mean:.0} ns");
    assert!(kyber_p99 > 1_000_000, "the die's programs and erases stay in kyber's p99: {kyber_p99} ns");
    assert!(kyber_mbs > 0.8 * none_mbs, "and keeps most of the writes' throughput: {kyber_mbs:.0} vs {none_mbs:.0}");
}

/// Beside 16 writers of 64 KiB, each write holding its command slot for four pages' worth of buffer, the
/// L-app waits ~10 ms for a slot under `none`; Kyber cuts its p99 several times.
#[test]
fn beside_large_writers_kyber_cuts_the_p99_several_times() {
    // (The writers' throughput is not compared: 2,048 writes of 64 KiB in flight take longer than this short
    // run's window to complete.)
    let (none_mean, none_p99, _) = lapp("randwrite-64k.toml", 16, "none");
    let (kyber_mean, kyber_p99, _) = lapp("randwrite-64k.toml", 16, "kyber");
    println!("n=16 none: {none_mean:.0} / {none_p99} ns; kyber {kyber_mean:.0} / {kyber_p99} ns");
    assert!(none_mean > 5_000_000.0, "the L-app waits for a command slot: {none_mean:.0} ns");
    assert!(kyber_p99 * 3 < none_p99, "kyber cuts the p99 several times: {kyber_p99} vs {none_p99} ns");
}

#[test]
fn beside_large_readers_the_growth_is_milder() {
    let (_, readers_p99, _) = lapp("randread-64k.toml", 16, "none");
    let (_, writers_p99, _) = lapp("randwrite-4k.toml", 16, "none");
    println!("n=16 none: beside 64k readers p99 {readers_p99} ns, beside 4k writers {writers_p99} ns");
    assert!(readers_p99 * 2 < writers_p99, "readers {readers_p99} ns vs writers {writers_p99} ns");
}
