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

/// CPU time per I/O of 16 QD1 io_uring readers on 10 cores, free to move between them or pinned one to a core
/// (`cpus_allowed_policy = "split"`, jobs 11-16 wrapping onto cores 0-5).
fn ten_core_cpu_per_io(pinned: bool, extra: &[&str]) -> f64 {
    let text = format!(
        "seed = 1\n[run]\nduration = \"30ms\"\nwarmup = \"5ms\"\n[host]\ncores = 10\n[device]\npreset = \"optane-ull\"\n\
         [[flow]]\nname = \"fio\"\nrw = \"randread\"\nbs = \"4k\"\niodepth = 1\nnumjobs = 16\nioengine = \"io_uring\"\n{}",
        if pinned { "cpus_allowed_policy = \"split\"\n" } else { "" }
    );
    let r = run(&scenario_with(&text, extra));
    r.host.busy_cores * r.flows[0].window.seconds() / r.flows[0].completed as f64
}

/// A task woken onto another core than the one it ran on last refills its whole footprint there: free to
/// move, the readers pay for it (at most 256 lines × 3 ns a move); pinned, with at most two tasks a core, they
/// never move and never refill, so the footprint changes nothing.
#[test]
fn a_task_moved_to_another_core_refills_its_footprint() {
    let off = ["host.cpu.task_footprint_bytes=0"];
    let (moving, moving_free) = (ten_core_cpu_per_io(false, &[]), ten_core_cpu_per_io(false, &off));
    println!("16 readers on 10 cores: {:.2} µs CPU per I/O, {:.2} without refills", moving * 1e6, moving_free * 1e6);
    assert!(moving > moving_free + 0.2e-6, "moves refill: {moving:e} vs {moving_free:e}");
    assert!(moving < moving_free + 0.77e-6 + 0.05e-6, "at most one whole refill per I/O");
    assert_eq!(ten_core_cpu_per_io(true, &[]), ten_core_cpu_per_io(true, &off), "pinned tasks never move");
}
