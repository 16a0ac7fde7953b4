//! The parameters a calibration fits, in the order it fits them, each with the jobs whose figures decide
//! it. The order follows what the figures separate: a large sequential job's IOPS is its bandwidth
//! limit's; a QD1 4 KiB read's mean is mostly the media read time, its 99th percentile the read time's
//! spread; the 4 KiB reads' IOPS at a few in flight is the flash parallelism's, at many the controller's
//! command rate, or, from one job on a fast drive, its one submitting core's: the host's CPU speed (a
//! scenario key, `host.cpu.speed`, fitted after the controller: a ceiling every job count shares is the
//! drive's, and the host's speed takes only what one job falls short of it); a steady-state random
//! writer's IOPS is the program time's.

use super::fit::{Metric, Target};
use super::JobShape;

/// A parameter the fit may set: a scenario key, its bounds, and the jobs and figures that decide it.
pub struct Knob {
    /// The scenario key (`device.flash.read_ns`).
    pub key: &'static str,
    /// What it is, for the fit table.
    pub what: &'static str,
    /// Bounds of the search, in the key's unit.
    pub min: f64,
    pub max: f64,
    /// Whole numbers only.
    pub integer: bool,
    /// Powers of two only (a size the geometry takes as one): the search's steps by factors of two are its
    /// only moves.
    pub power_of_two: bool,
    /// Whether a job's figures speak to this parameter.
    pub decided_by: fn(&JobShape) -> bool,
    /// The figures of those jobs it is fitted to.
    pub metrics: &'static [Metric],
    /// A limit (of which 0 may mean "none"): the search starts from the peak the jobs measured (this
    /// figure of a job) when the limit is 0, and the fit keeps the limit it had when a new one does no
    /// better.
    pub limit_of: Option<fn(&Target) -> f64>,
    /// A switch (boolean key) the parameter does nothing without, turned on when the data decides it.
    pub requires: Option<(&'static str, &'static str)>,
}

/// Largest transfer still "small": a random job of it is set by flash and controller, not bandwidth.
const SMALL_BYTES: u64 = 16 * 1024;
/// Smallest transfer taken as bandwidth-bound at 8 or more in flight [inferred: 8 x 64 KiB = 512 KiB in
/// flight, past the bandwidth-delay product of the presets' drives (~7 GB/s x ~70 us)].
const LARGE_BYTES: u64 = 64 * 1024;
/// In flight from which a small random job is taken as saturating the drive [inferred: the presets' QD
/// curves flatten by 32 in flight; fio's usual "QD32" saturation point].
const DEEP: u64 = 32;

fn small_read_qd1(s: &JobShape) -> bool {
    s.read_percent == 100 && s.block_size <= SMALL_BYTES && s.outstanding() == 1
}
fn small_read_some(s: &JobShape) -> bool {
    s.read_percent == 100 && s.block_size <= SMALL_BYTES && (2..DEEP).contains(&s.outstanding())
}
fn small_read_deep(s: &JobShape) -> bool {
    s.read_percent == 100 && s.block_size <= SMALL_BYTES && s.outstanding() >= DEEP
}
/// Largest transfer whose deep one-job IOPS is taken as the host's: past 4 KiB a fast drive's bandwidth
/// comes first (16 KiB at ~145K IOPS is ~2.4 GB/s, the presets' read limits) [inferred].
const HOST_BOUND_BYTES: u64 = 4 * 1024;

/// One job keeping many 4 KiB reads in flight: its one submitting core, not the drive, sets its IOPS on a
/// fast drive (the probe's one-job QD 32 to 256 on optane-ull: ~495K IOPS against ~547K from four jobs, and
/// ~300K with `host.cpu.speed = 0.6` while four jobs keep ~547K), so the host's CPU speed shows there.
fn small_read_deep_one_job(s: &JobShape) -> bool {
    small_read_deep(s) && s.numjobs == 1 && s.block_size <= HOST_BOUND_BYTES
}
fn large_read(s: &JobShape) -> bool {
    s.read_percent == 100 && s.block_size >= LARGE_BYTES && s.outstanding() >= 8
}
fn large_write(s: &JobShape) -> bool {
    s.read_percent == 0 && s.block_size >= LARGE_BYTES && s.outstanding() >= 8
}
fn any_write_deep(s: &JobShape) -> bool {
    s.read_percent == 0 && s.outstanding() >= 8
}
fn small_write_deep(s: &JobShape) -> bool {
    s.read_percent == 0 && s.block_size <= SMALL_BYTES && s.outstanding() >= 8
}

/// Bytes per second a target moved.
fn bytes_per_s(t: &Target) -> f64 {
    let ops: f64 = [t.measured.read, t.measured.write].iter().flatten().map(|f| f.iops).sum();
    ops * t.shape.block_size as f64
}

/// The parameters, in the order they are fitted.
pub const KNOBS: &[Knob] = &[
    Knob {
        key: "device.host_interface.max_read_bytes_per_s",
        what: "read bandwidth limit",
        min: 1e8,
        max: 1e11,
        integer: false,
        power_of_two: false,
        decided_by: large_read,
        metrics: &[Metric::Iops],
        limit_of: Some(bytes_per_s),
        requires: None,
    },
    Knob {
        key: "device.host_interface.max_write_bytes_per_s",
        what: "write bandwidth limit",
        min: 1e8,
        max: 1e11,
        integer: false,
        power_of_two: false,
        decided_by: large_write,
        metrics: &[Metric::Iops],
        limit_of: Some(bytes_per_s),
        requires: None,
    },
    Knob {
        key: "device.flash.read_ns",
        what: "flash read time",
        min: 100.0,
        max: 1_000_000.0,
        integer: true,
        power_of_two: false,
        decided_by: small_read_qd1,
        metrics: &[Metric::Mean],
        limit_of: None,
        requires: None,
    },
    Knob {
        key: "device.variability.read_cv",
        what: "spread of the read time (coefficient of variation)",
        min: 0.01,
        max: 3.0,
        integer: false,
        power_of_two: false,
        decided_by: small_read_qd1,
        metrics: &[Metric::P99],
        limit_of: None,
        requires: Some(("device.variability.enabled", "true")),
    },
    Knob {
        key: "device.flash.channels",
        what: "flash channels (the parallelism of a few reads in flight)",
        min: 1.0,
        max: 64.0,
        integer: true,
        power_of_two: false,
        decided_by: small_read_some,
        metrics: &[Metric::Iops],
        limit_of: None,
        requires: None,
    },
    Knob {
        key: "device.host_interface.command_process_ns",
        what: "controller time per command (the saturation IOPS)",
        min: 50.0,
        max: 100_000.0,
        integer: true,
        power_of_two: false,
        decided_by: small_read_deep,
        metrics: &[Metric::Iops],
        limit_of: None,
        requires: None,
    },
    Knob {
        key: "host.cpu.speed",
        what: "the host's CPU speed (one submitting core's ceiling), a scenario key",
        min: 0.1,
        max: 10.0,
        integer: false,
        power_of_two: false,
        decided_by: small_read_deep_one_job,
        metrics: &[Metric::Iops],
        limit_of: None,
        requires: None,
    },
    Knob {
        key: "device.flash.page_bytes",
        what: "flash page size (a small write programs a page, a large one bs / page_bytes: their IOPS ratio)",
        min: 2048.0,
        max: 65536.0,
        integer: true,
        power_of_two: true,
        decided_by: any_write_deep,
        metrics: &[Metric::Iops],
        limit_of: None,
        requires: None,
    },
    Knob {
        key: "device.flash.program_ns",
        what: "flash program time (steady-state random writes)",
        min: 1_000.0,
        max: 20_000_000.0,
        integer: true,
        power_of_two: false,
        decided_by: small_write_deep,
        metrics: &[Metric::Iops],
        limit_of: None,
        requires: None,
    },
];

/// The knob of `key`.
pub fn knob(key: &str) -> Option<&'static Knob> {
    KNOBS.iter().find(|k| k.key == key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::Pattern;

    #[test]
    fn every_probe_shape_decides_at_most_what_it_measures() {
        let shape = |read_percent, block_size, iodepth| JobShape {
            pattern: Pattern::Random,
            read_percent,
            block_size,
            iodepth,
            numjobs: 1,
        };
        let deciding = |s: JobShape| KNOBS.iter().filter(|k| (k.decided_by)(&s)).map(|k| k.key).collect::<Vec<_>>();
        assert_eq!(deciding(shape(100, 4096, 1)), ["device.flash.read_ns", "device.variability.read_cv"]);
        assert_eq!(deciding(shape(100, 4096, 4)), ["device.flash.channels"]);
        assert_eq!(deciding(shape(100, 4096, 64)), ["device.host_interface.command_process_ns", "host.cpu.speed"]);
        let jobs4 = JobShape { iodepth: 32, numjobs: 4, ..shape(100, 4096, 32) };
        assert_eq!(deciding(jobs4), ["device.host_interface.command_process_ns"]);
        assert_eq!(deciding(shape(100, 131072, 32)), ["device.host_interface.max_read_bytes_per_s"]);
        assert_eq!(deciding(shape(0, 4096, 32)), ["device.flash.page_bytes", "device.flash.program_ns"]);
        assert_eq!(
            deciding(shape(0, 131072, 32)),
            ["device.host_interface.max_write_bytes_per_s", "device.flash.page_bytes"]
        );
        // A mixed job decides nothing alone: it is a check of the rest.
        assert!(deciding(shape(70, 4096, 32)).is_empty());
        assert!(knob("device.flash.read_ns").is_some() && knob("nope").is_none());
    }
}
