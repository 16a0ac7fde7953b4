//! `host.cpu.speed`: the host's CPU work is divided by it and its hardware latencies are not; 1.0, the
//! default, changes nothing.

use crate::common;

use crate::host::QD1;
use common::{json, load_error, run, scenario_with};
use ullsim::config::HostConfig;

/// The device's own spread off, so that every QD1 read (`host.rs`'s scenario) takes the device the same time.
const NO_SPREAD: &str = "device.variability.enabled=false";

fn mean_latency(sets: &[&str]) -> f64 {
    let sets: Vec<&str> = [NO_SPREAD].into_iter().chain(sets.iter().copied()).collect();
    run(&scenario_with(QD1, &sets)).flows[0].latency_ns.mean
}

#[test]
fn a_qd1_read_pays_its_cpu_work_divided_by_the_speed_and_its_hardware_latencies_whole() {
    // The host's share: the full host's mean latency over the device-only host's (the device's time is
    // the same under both at QD1).
    let device_only = mean_latency(&["host.model=device-only"]);
    let share = |speed: f64| mean_latency(&[&format!("host.cpu.speed={speed}")]) - device_only;
    // On the QD1 path, not the core's work: the doorbell's MMIO write, the interrupt's delivery and the
    // idle core's C1 exit (the task sleeps on an idle core while the device works).
    let d = HostConfig::default();
    let hardware = (d.nvme.doorbell_ns.0 + d.nvme.irq_delivery_ns.0 + d.cpu.idle_exit_ns.0) as f64;
    let reference = share(1.0);
    assert!((5_000.0..7_000.0).contains(&reference), "the default host's share: {reference} ns");
    for speed in [2.0, 0.5] {
        let expected = hardware + (reference - hardware) / speed;
        let found = share(speed);
        assert!(
            (found / expected - 1.0).abs() < 0.02,
            "speed {speed}: host share {found:.0} ns, closed form {expected:.0} ns (from {reference:.0} at 1.0)"
        );
    }
    // Twice the speed halves the CPU work: ~1.85 us of the 6 us go, the 2.3 us of hardware stay.
    assert!((reference - share(2.0) - (reference - hardware) / 2.0).abs() < 50.0);
}

#[test]
fn speed_one_is_the_default_to_the_byte() {
    let scenario = "[run]\nduration = \"10ms\"\n[device]\npreset = \"optane-ull\"\n[[flow]]\nname = \"io\"\n\
                    rw = \"randrw\"\nbs = \"4k\"\niodepth = 8\nnumjobs = 2\n";
    let plain = run(&scenario_with(scenario, &["host.io_scheduler=bfq"]));
    let one = run(&scenario_with(scenario, &["host.io_scheduler=bfq", "host.cpu.speed=1.0"]));
    assert_eq!(json(&plain), json(&one));
    let faster = run(&scenario_with(scenario, &["host.io_scheduler=bfq", "host.cpu.speed=1.5"]));
    assert_ne!(json(&plain), json(&faster), "the factor reaches the host");
}

#[test]
fn a_speed_out_of_bounds_names_the_key() {
    for bad in ["0", "-1", "25", "nan"] {
        let err = load_error(QD1, &[&format!("host.cpu.speed={bad}")]);
        assert!(err.contains("key `host.cpu.speed`") && err.contains("expected a factor from 0.05 to 20"), "{err}");
    }
    let err = load_error(QD1, &["host.cpu.speed=\"fast\""]);
    assert!(err.contains("key `host.cpu.speed`") && err.contains("expected a number"), "{err}");
}
