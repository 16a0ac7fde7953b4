//! Garbage collection a real controller could do: a plane's GC job holds at most `gc_read_ahead` moved pages
//! between their read and their program.

mod common;

use common::{run, scenario_with, SMALL_MLC};

/// A random writer on a small full drive: with the bound, GC reads are its programs plus at most the
/// buffer's pages per plane (and pages the host overwrote before their turn are never read); without it
/// (MQSim's way), every valid page of each victim is read at once, far ahead of the programs.
#[test]
fn gc_reads_stay_within_the_gc_buffer_of_each_plane() {
    let text = format!(
        "[run]\nduration = \"300ms\"\ncheck_invariants = true\n{SMALL_MLC}[[flow]]\nname = \"w\"\nrw = \"randwrite\"\nbs = \
         \"8k\"\niodepth = 16\n"
    );
    let planes = 4; // 2 channels x 1 chip x 1 die x 2 planes
    let bounded = run(&scenario_with(&text, &["device.ftl.gc_read_ahead=2"]));
    let d = &bounded.device;
    assert!(d.gc_pages_programmed > 500, "GC must run: {} pages moved", d.gc_pages_programmed);
    // A write-only flow on an ideal map: every flash read is a GC read.
    assert!(
        d.flash_reads <= d.gc_pages_programmed + 2 * planes,
        "{} GC reads for {} GC programs",
        d.flash_reads,
        d.gc_pages_programmed
    );
    let unbounded = run(&scenario_with(&text, &["device.ftl.gc_read_ahead=0"]));
    let u = &unbounded.device;
    println!(
        "bounded: {} reads / {} GC programs, {} IOPS; unbounded: {} reads / {} GC programs, {} IOPS",
        d.flash_reads,
        d.gc_pages_programmed,
        bounded.flows[0].iops,
        u.flash_reads,
        u.gc_pages_programmed,
        unbounded.flows[0].iops
    );
    assert!(u.flash_reads > u.gc_pages_programmed + 2 * planes, "MQSim's way reads whole victims ahead");
}
