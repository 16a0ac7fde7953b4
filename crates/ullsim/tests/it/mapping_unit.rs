//! The FTL's mapping unit smaller than the flash page (`device.ftl.mapping_unit_bytes`): units of one page
//! are programmed together, a page that cannot fill is padded after `device.ftl.page_fill_timeout_ns`.

use crate::common;

use common::{run, scenario_with, SMALL_MLC};

/// `SMALL_MLC` with 16 KiB pages mapped in 4 KiB units, map invariants checked at the end, and one 4 KiB
/// random writer (`flow`'s extra keys).
fn four_unit_writer(duration: &str, flow: &str) -> String {
    format!(
        "seed = 2\n[run]\nduration = \"{duration}\"\nwarmup = \"0ms\"\ncheck_invariants = true\n{SMALL_MLC}\
         [[flow]]\nname = \"w\"\nrw = \"randwrite\"\nbs = \"4k\"\n{flow}\n"
    )
}

const FOUR_UNITS: [&str; 2] = ["device.flash.page_bytes=16KiB", "device.ftl.mapping_unit_bytes=4KiB"];

/// A deep random writer on a small full drive: pages are programmed with their four units (one program per
/// four unit writes, but for the pages GC jobs leave partly filled), and garbage collection keeps going
/// with the map consistent (checked at the end).
#[test]
fn a_page_program_carries_its_four_units_and_gc_keeps_running() {
    let r = run(&scenario_with(&four_unit_writer("300ms", "iodepth = 16"), &FOUR_UNITS));
    let d = &r.device;
    let units = d.host_pages_programmed + d.gc_pages_programmed;
    println!(
        "{} IOPS; {} host + {} GC units in {} programs; {} blocks erased",
        r.flows[0].iops, d.host_pages_programmed, d.gc_pages_programmed, d.flash_programs, d.gc_count
    );
    assert!(d.gc_count >= 4 && d.gc_pages_programmed > 1000, "GC must run: {} erases", d.gc_count);
    assert!(d.flash_programs * 4 >= units, "at most four units a program");
    assert!((d.flash_programs as f64) < 0.3 * units as f64, "{} programs for {units} units", d.flash_programs);
    // Off, each unit write is a page program of its own.
    // (Programs count when they start, units when their program ends: a few are in flight at the end.)
    let off = run(&scenario_with(&four_unit_writer("300ms", "iodepth = 16"), &FOUR_UNITS[..1])).device;
    let off_units = off.host_pages_programmed + off.gc_pages_programmed;
    assert!(off.flash_programs >= off_units && off.flash_programs <= off_units + 8, "{off_units} units off");
}

/// A queue-depth-1 writer with no write buffer, on an empty drive (no GC): a page never fills, so each write waits for the fill
/// timeout, is padded and programmed alone; every write completes and the map stays consistent.
#[test]
fn a_qd1_writer_completes_through_padded_pages() {
    let timeout_ns = 200_000.0;
    let mut keys = FOUR_UNITS.to_vec();
    keys.extend([
        "device.cache.enabled=false",
        "device.ftl.page_fill_timeout_ns=200us",
        "device.ftl.precondition=none",
    ]);
    let r = run(&scenario_with(&four_unit_writer("100ms", "iodepth = 1"), &keys));
    let (flow, d) = (&r.flows[0], &r.device);
    let program_ns = 750_000.0; // mqsim-mlc
    println!("QD1: {} writes, mean {:.0} ns, {} programs", flow.completed, flow.latency_ns.mean, d.flash_programs);
    assert!(flow.completed > 50, "{} writes", flow.completed);
    // One padded page per write (the last may still be programming at the end).
    assert!(d.flash_programs - d.host_pages_programmed <= 1, "{} programs", d.flash_programs);
    let mean = flow.latency_ns.mean;
    assert!(mean > timeout_ns + program_ns && mean < timeout_ns + program_ns + 100_000.0, "mean {mean:.0} ns");
}

/// A flush waiting for buffered writes pads their pages at once instead of waiting for the fill timeout.
#[test]
fn a_flush_pads_the_pages_it_waits_for() {
    let mut keys = FOUR_UNITS.to_vec();
    keys.push("device.ftl.page_fill_timeout_ns=100ms");
    let r = run(&scenario_with(&four_unit_writer("50ms", "iodepth = 1\nflush_every = 1"), &keys));
    let flush = r.flows[0].flush.as_ref().expect("flushes completed");
    println!("flush after each write: {} flushes, mean {:.0} ns", flush.completed, flush.latency_ns.mean);
    assert!(flush.completed > 20, "{} flushes in 50 ms", flush.completed);
    assert!(flush.latency_ns.mean < 2_000_000.0, "a flush waits for a program, not the 100 ms timeout");
}

/// The timed preconditioning writes in units too: its cut pads the pages still filling, and the run after
/// it keeps the map consistent.
#[test]
fn timed_preconditioning_in_units_keeps_the_map_consistent() {
    let mut keys = FOUR_UNITS.to_vec();
    keys.extend(["device.ftl.precondition=random-gc-due", "device.ftl.precondition_timed_writes=4"]);
    let r = run(&scenario_with(&four_unit_writer("50ms", "iodepth = 16"), &keys));
    let d = &r.device;
    println!("after timed preconditioning: {} IOPS, {} GC units", r.flows[0].iops, d.gc_pages_programmed);
    assert!(r.flows[0].completed > 0 && d.gc_pages_programmed > 0, "writes and GC go on after the cut");
}

/// A unit that does not divide the page, or is too small or too large, is an error naming the key.
#[test]
fn a_bad_mapping_unit_is_an_error_naming_the_key() {
    let text = four_unit_writer("10ms", "");
    for unit in ["3000", "256", "32KiB", "256B"] {
        let set = format!("device.ftl.mapping_unit_bytes={unit}");
        let e = common::load_error(&text, &[FOUR_UNITS[0], &set]);
        assert!(e.contains("device.ftl.mapping_unit_bytes") && e.contains("dividing flash.page_bytes"), "{unit}: {e}");
    }
    let e = common::load_error(&text, &["device.ftl.page_fill_timeout_ns=0"]);
    assert!(e.contains("device.ftl.page_fill_timeout_ns"), "{e}");
}

/// GC's buffer (`device.ftl.gc_read_ahead`, in flash pages) holds whole pages of units, so a GC page fills
/// before its program. Regression: counted in units, it let a job read two units ahead, every GC page was
/// padded after its two units, jobs needed twice the room, and a plane of a full `tlc-consumer` (shrunk to
/// 64 blocks a plane, its SLC cache off) under deep 4 KiB random writes ran out of pages for its moves
/// within 1.5 s (a panic). Now it keeps collecting, with the map consistent.
#[test]
fn gc_fills_its_pages_with_4k_units_on_a_full_consumer_drive() {
    let text = common::small_consumer_writer("1500ms", 256);
    let overrides = ["host.model=device-only", "device.ftl.mapping_unit_bytes=4KiB", "device.slc.enabled=false"];
    let d = run(&scenario_with(&text, &overrides)).device;
    println!("{} erases, WA {:.2}", d.gc_count, d.write_amplification.unwrap_or(0.0));
    assert!(d.gc_count > 100, "GC ran: {} erases", d.gc_count);
    assert!(d.gc_pages_programmed > d.host_pages_programmed, "a full drive moves more than it writes");
}
