//! NVMe Flush and FUA writes end to end (`flush_every`, `fua`, `device.cache.power_loss_protection`).
//!
//! The drive is one die with one plane of `mqsim-mlc` (8 KiB pages, 750 us programs), whose DRAM write
//! buffer is volatile unless the test turns power-loss protection on. Writes go, page-aligned, to the free upper half, so
//! no garbage collection runs: programs are the only flash work.

use crate::common;

use common::{run, scenario_with, ONE_DIE_HALF_WRITTEN};
use ullsim::metrics::OpResult;
use ullsim::Scenario;

const PLP: &str = "device.cache.power_loss_protection=true";

/// A psync writer of 8 KiB pages (one program each) on the one-die drive; `flow` adds keys to it.
fn writer(flow: &str) -> String {
    format!(
        r#"
seed = 3
[run]
duration = "40ms"
warmup = "0ms"
{ONE_DIE_HALF_WRITTEN}
[[flow]]
name = "w"
rw = "write"
offset = "72MiB"
bs = "8k"
ioengine = "psync"
{flow}
"#
    )
}

fn program_ns(s: &Scenario) -> f64 {
    s.device.flash.program_ns.0 as f64
}

fn flush_of(r: &ullsim::RunResults, flow: usize) -> &OpResult {
    r.flows[flow].flush.as_ref().expect("the flow completed flushes")
}

#[test]
fn a_flush_waits_for_the_programs_of_the_writes_before_it() {
    // Four buffered writes, then one flush: the four destages run one after another on the one die, and the
    // flush completes when the last one is programmed.
    let s = scenario_with(&writer("flush_every = 4\nnumber_ios = 4"), &[]);
    let r = run(&s);
    let program = program_ns(&s);
    let (write, flush) = (r.flows[0].write.as_ref().unwrap(), flush_of(&r, 0));
    assert_eq!((write.completed, flush.completed), (4, 1));
    let buffered = write.latency_ns.max as f64;
    assert!(buffered < program / 20.0, "writes complete from DRAM: {buffered} ns");
    // The first destage starts when the first write is buffered, during the first write's latency; the flush
    // arrives after the fourth write completed. The last program ends no earlier than four programs after
    // the first started, so the flush waits at least 4 programs less the four writes' time before it.
    let flush_ns = flush.latency_ns.max as f64;
    assert!(flush_ns >= 4.0 * program - 4.0 * buffered, "flush {flush_ns} vs 4 x {program} programs");
    // ... and no more than the four programs with their 8 KiB transfers (~25 us each at 333 MT/s).
    assert!(flush_ns <= 4.0 * (program + 30_000.0), "flush {flush_ns}");
    assert_eq!(r.device.host_pages_programmed, 4);
}

#[test]
fn a_flush_does_not_wait_for_writes_that_arrived_after_it() {
    // "w" writes one page and flushes; "later" starts 100 us later (after the flush arrived) and keeps 16
    // writes buffered. Their programs queue behind w's on the same die, but the flush covers only w's.
    let text = writer(
        r#"flush_every = 1
number_ios = 1
[[flow]]
name = "later"
rw = "write"
offset = "96MiB"
bs = "8k"
iodepth = 16
startdelay = "100us"
number_ios = 16"#,
    );
    let s = scenario_with(&text, &[]);
    let r = run(&s);
    let program = program_ns(&s);
    let flush_ns = flush_of(&r, 0).latency_ns.max as f64;
    assert_eq!(r.flows[1].completed, 16);
    assert!(r.flows[1].latency_ns.max as f64 > 0.0);
    assert!(flush_ns > program - 50_000.0, "it waits for w's program: {flush_ns}");
    assert!(flush_ns < 2.0 * program, "it does not wait for the 16 later programs: {flush_ns}");
}

#[test]
fn with_power_loss_protection_a_flush_takes_about_a_command() {
    let s = scenario_with(&writer("flush_every = 4"), &[PLP]);
    let r = run(&s);
    let (write, flush) = (r.flows[0].write.as_ref().unwrap(), flush_of(&r, 0));
    assert!(flush.completed > 10, "{}", flush.completed);
    // A flush is a command and a completion: no data, no flash. It is no slower than a buffered write
    // (which also moves 8 KiB over PCIe), and far below a program.
    assert!(
        flush.latency_ns.max < write.latency_ns.mean as u64 + 1_000,
        "{} vs {}",
        flush.latency_ns.max,
        write.latency_ns.mean
    );
    assert!((flush.latency_ns.max as f64) < program_ns(&s) / 20.0);

    // With the cache off every write is programmed before it completes: a flush has nothing to wait for,
    // whatever power_loss_protection says.
    let off = run(&scenario_with(&writer("flush_every = 4"), &["device.cache.enabled=false"]));
    let off_flush = flush_of(&off, 0).latency_ns.max;
    assert!((off_flush as f64) < program_ns(&s) / 20.0, "{off_flush}");
}

#[test]
fn a_fua_write_waits_for_its_program_only_with_a_volatile_buffer() {
    let s = scenario_with(&writer("fua = true"), &[]);
    let program = program_ns(&s);
    let fua = run(&s).flows[0].write.clone().unwrap().latency_ns;
    assert!(fua.mean >= program && fua.mean <= program + 60_000.0, "FUA write {} vs program {program}", fua.mean);

    let plain = run(&scenario_with(&writer(""), &[])).flows[0].write.clone().unwrap().latency_ns;
    assert!(plain.mean < program / 20.0, "a plain write is buffered: {}", plain.mean);
    let fua_plp = run(&scenario_with(&writer("fua = true"), &[PLP])).flows[0].write.clone().unwrap().latency_ns;
    assert!((fua_plp.mean / plain.mean - 1.0).abs() < 0.01, "FUA with PLP {} vs buffered {}", fua_plp.mean, plain.mean);
}

#[test]
fn flushes_pass_every_scheduler_and_the_device_only_host() {
    for set in [
        "host.io_scheduler=none",
        "host.io_scheduler=mq-deadline",
        "host.io_scheduler=kyber",
        "host.io_scheduler=bfq",
        "host.io_scheduler=ld",
        "host.model=device-only",
    ] {
        let r = run(&scenario_with(&writer("flush_every = 2\nfua = true"), &[set]));
        let flush = flush_of(&r, 0);
        let writes = r.flows[0].write.as_ref().unwrap().completed;
        assert!(
            flush.completed > 0 && writes.abs_diff(2 * flush.completed) <= 2,
            "{set}: {writes} writes, {} flushes",
            flush.completed
        );
        assert_eq!(flush.bandwidth_bytes_per_s, 0.0);
    }
}

#[test]
fn flush_runs_are_deterministic() {
    let text = writer("flush_every = 3\nfua = true\nnumjobs = 2");
    let a = run(&scenario_with(&text, &[]));
    let b = run(&scenario_with(&text, &[]));
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
}

#[test]
fn durability_keys_are_checked_and_named() {
    let cases = [
        ("flush_every = 0", "flush_every", "whole number"),
        ("flush_every = 4\nrate_iops = 1000", "flush_every", "closed-loop"),
        ("fua = true\nrw = \"randread\"", "fua", "writes"),
    ];
    for (keys, key, expected) in cases {
        // rw is given once: a case that sets it replaces the writer's.
        let text = writer(keys).replacen("rw = \"write\"\n", "", usize::from(keys.contains("rw =")));
        let message = Scenario::from_toml_str(&text, "t", std::path::Path::new("."), &[]).unwrap_err().to_string();
        assert!(message.contains(&format!("flow[0].{key}")) && message.contains(expected), "{keys}: {message}");
    }
    let cpu = "[device]\npreset = \"znand-ull\"\n[[flow]]\nname = \"c\"\nioengine = \"cpuio\"\nflush_every = 2\n";
    let message = Scenario::from_toml_str(cpu, "t", std::path::Path::new("."), &[]).unwrap_err().to_string();
    assert!(message.contains("flush_every") && message.contains("cpuio"), "{message}");
}
