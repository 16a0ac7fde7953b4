//! CPU costs that grow with a core's load (issue 31 §2): a context switch refills the cache footprint of the
//! task switched in once the tasks sharing its core outgrow the core's cache (`host/cpu/cache_refill.rs`).

use crate::common;

use common::{run, scenario_with};

/// `n` io_uring jobs of QD1 4 KiB random reads on one core of the default host, over `optane-ull`.
fn one_core_iops(n: u32, extra: &[&str]) -> f64 {
    let text = format!(
        "seed = 1\n[run]\nduration = \"30ms\"\nwarmup = \"5ms\"\n[host]\ncores = 1\n[device]\npreset = \"optane-ull\"\n\
         [[flow]]\nname = \"fio\"\nrw = \"randread\"\nbs = \"4k\"\niodepth = 1\nnumjobs = {n}\nioengine = \"io_uring\"\n"
    );
    run(&scenario_with(&text, extra)).flows[0].iops
}

/// On one core, IOPS rise with the tasks until the core is busy, stay there while the tasks' footprints fit
/// its cache (16 x 16 KiB = 256 KiB), and fall once they do not: every switch then refills 256 lines. Without
/// a footprint (`task_footprint_bytes = 0`) the curve stays flat, and up to 16 tasks both are the same run.
#[test]
fn on_one_core_iops_peak_then_fall_as_tasks_outgrow_the_cache() {
    let off = ["host.cpu.task_footprint_bytes=0"];
    let (four, sixteen, sixty_four) = (one_core_iops(4, &[]), one_core_iops(16, &[]), one_core_iops(64, &[]));
    let flat = one_core_iops(64, &off);
    println!("one core: 4 tasks {four:.0}, 16 {sixteen:.0}, 64 {sixty_four:.0} IOPS; 64 without refill {flat:.0}");
    assert_eq!(sixteen, one_core_iops(16, &off), "16 footprints fit: no refill");
    assert!(sixteen > 0.98 * four, "the core is busy from 4 tasks on: {four:.0} -> {sixteen:.0}");
    assert!(sixty_four < 0.9 * sixteen, "64 tasks pay refills: {sixteen:.0} -> {sixty_four:.0}");
    assert!(flat > 0.98 * sixteen, "without a footprint the curve is flat: {flat:.0}");
}

/// A footprint larger than the cache is an error naming the key.
#[test]
fn a_footprint_larger_than_the_cache_is_refused() {
    let text = "[device]\npreset = \"optane-ull\"\n[[flow]]\nname = \"f\"\nrw = \"randread\"\n";
    let message = common::load_error(text, &["host.cpu.cache_bytes=64KiB", "host.cpu.task_footprint_bytes=128KiB"]);
    assert!(
        message.contains("host.cpu.task_footprint_bytes") && message.contains("at most cpu.cache_bytes"),
        "{message}"
    );
}
