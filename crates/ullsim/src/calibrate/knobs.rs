//! The parameters a calibration fits, in the order it fits them, each with the jobs whose figures decide
//! it. The order follows what the figures separate: a QD1 4 KiB read's mean is mostly the media read time,
//! its 99th percentile the read time's spread; how reads share the flash (a chip serving one die at a
//! time, the buses taken in turn, planes pairing up only at the same page) shows in the rate and tails of
//! small reads queued at it and in a large read's time at QD1, whose remainder is the link's and the
//! channel buses' rates (a PCIe 4.0 drive from a PCIe 3.0 base); a large sequential job's IOPS is its
//! bandwidth limit's; the parallelism (chips behind the same buses, then channels) sets small reads' rate
//! at a few in flight, the controller's command rate and an IOPS limit at many, or, from one job on a fast
//! drive, its one submitting core's: the host's CPU speed (a scenario key, `host.cpu.speed`, fitted after
//! the controller: a ceiling every job count shares is the drive's, and the host's speed takes only what
//! one job falls short of it); steady-state writers' rate and stalls show whether writes go through an
//! SLC cache, how garbage collection picks its victims (the write amplification) and how much buffered
//! data may be on its way to the flash (searched together), a random writer's IOPS then the program time's, the ratio of
//! small to large writes' the page size's (after the program time: fitted first, from a base's program
//! time, the page size took the writes' level instead of their ratio), what rate both still miss the
//! over-provisioning's (the room garbage collection has: a base's 7% held Z-NAND's 27% to half its
//! writes at any program time), and past them a write IOPS limit's;
//! last, a job that mixes reads and writes shows how long a read waits behind writes (reads first at the
//! chip, or not).

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
    /// figure of a job) when the limit is 0 or above it, and the fit keeps the limit it had when a new one
    /// does no better.
    pub limit_of: Option<fn(&Target) -> f64>,
    /// A switch (boolean key) the parameter does nothing without, turned on when the data decides it.
    pub requires: Option<(&'static str, &'static str)>,
    /// A knob whose value this one's search moves the other way, keeping their product (a spread's
    /// absolute width): the read time holds the read time's standard deviation, `read_cv x read_ns`, which
    /// the QD1 reads' 99th percentile pins. Moved alone, a read time raised 20x from a fit's early 0.13 us
    /// took a spread of cv 2 with it, far past the measured tail, and was refused; the spread, flat at
    /// 0.13 us, never came down (`znand-ull` from `tlc-enterprise`: QD1 reads 13% fast). Only while the
    /// other knob is fitted (jobs speak to it).
    pub keeps_product_with: Option<&'static str>,
    /// A choice among these values (TOML literals: `false`, `"fcfs"`) and not a number: the fit's value is
    /// the index of one, and the search tries each. Empty for a number.
    pub choices: &'static [&'static str],
}

impl Knob {
    /// `value` as the scenario (and a preset file) reads it: a choice's literal, whole numbers of an
    /// integer key as integers (integer keys take nothing else), other numbers in full.
    pub fn value_text(&self, value: f64) -> String {
        if let Some(choice) = self.choices.get(value as usize) {
            return (*choice).to_string();
        }
        Self::number_text(value)
    }

    fn number_text(value: f64) -> String {
        if value.fract() == 0.0 && value.abs() < 9e15 {
            format!("{}", value as i64)
        } else {
            format!("{value:e}")
        }
    }

    /// The fit's value of a base's setting (as the configuration's JSON has it): a choice's index, a
    /// switch as 0 or 1, a number as itself. None if the base has no such value (or a choice not listed).
    pub fn value_of(&self, json: &serde_json::Value) -> Option<f64> {
        if self.choices.is_empty() {
            return number_of(json);
        }
        let literal = match json {
            serde_json::Value::String(text) => format!("\"{text}\""),
            other => other.to_string(),
        };
        self.choices.iter().position(|c| *c == literal).map(|i| i as f64)
    }
}

/// A configuration's JSON value as a number: a number as itself, a switch as 0 or 1.
pub fn number_of(json: &serde_json::Value) -> Option<f64> {
    json.as_f64().or_else(|| json.as_bool().map(|b| f64::from(u8::from(b))))
}

/// The value at `key` (`device.flash.read_ns`, `host.cpu.speed`) of a base's JSON
/// ([`super::evaluate::Bench::base_json`]).
pub fn json_at<'a>(base: &'a serde_json::Value, key: &str) -> Option<&'a serde_json::Value> {
    key.split('.').try_fold(base, |v, part| v.get(part))
}

/// The number at `key` of a base's JSON (switches as 0 and 1).
pub fn value_at(base: &serde_json::Value, key: &str) -> Option<f64> {
    json_at(base, key).and_then(number_of)
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
/// Small reads queued at the flash (two or more in flight): how the dies and buses are shared shows in
/// their rate and tails.
fn small_read_queued(s: &JobShape) -> bool {
    s.read_percent == 100 && s.block_size <= SMALL_BYTES && s.outstanding() >= 2
}
/// What shows how reads share the flash: small reads queued at it, and a large read's pages at QD1 (how
/// planes pair up sets how many steps they take; the channel and link rates, fitted after, must not
/// stand in for that).
fn read_sharing(s: &JobShape) -> bool {
    small_read_queued(s) || large_read_qd1(s)
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
/// One large read at a time: its time is the flash read, the pages' trips over the channel buses and the
/// transfer over the link, nothing queued.
fn large_read_qd1(s: &JobShape) -> bool {
    s.read_percent == 100 && s.block_size >= LARGE_BYTES && s.outstanding() == 1
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

/// Reads and writes together: how reads wait behind writes shows in their latency.
fn mixed(s: &JobShape) -> bool {
    (1..100).contains(&s.read_percent)
}

/// Reads (writes) per second a target made.
fn read_iops(t: &Target) -> f64 {
    t.measured.read.map_or(0.0, |f| f.iops)
}
fn write_iops(t: &Target) -> f64 {
    t.measured.write.map_or(0.0, |f| f.iops)
}

/// Bytes per second a target moved.
fn bytes_per_s(t: &Target) -> f64 {
    let ops: f64 = [t.measured.read, t.measured.write].iter().flatten().map(|f| f.iops).sum();
    ops * t.shape.block_size as f64
}

/// Who decides a choice, and on which figures.
struct Decided {
    by: fn(&JobShape) -> bool,
    metrics: &'static [Metric],
}

/// How reads share the flash: decided by how they queue at it ([`read_sharing`]), on their rate and tails.
const READ_SHARING: Decided = Decided { by: read_sharing, metrics: &[Metric::Iops, Metric::P99] };
/// The write path: decided by steady writes, small and large, many in flight, on their rate and tails.
const WRITE_PATH: Decided = Decided { by: any_write_deep, metrics: &[Metric::Iops, Metric::P99] };
/// How reads and writes share the drive: decided by jobs that mix them, on the latencies.
const READS_AMONG_WRITES: Decided = Decided { by: mixed, metrics: &[Metric::Mean, Metric::P99] };

/// A choice among `choices` (TOML literals), decided as `decided` says.
const fn choice(key: &'static str, what: &'static str, decided: Decided, choices: &'static [&'static str]) -> Knob {
    Knob {
        key,
        what,
        min: 0.0,
        max: (choices.len() - 1) as f64,
        integer: true,
        power_of_two: false,
        decided_by: decided.by,
        metrics: decided.metrics,
        limit_of: None,
        requires: None,
        keeps_product_with: None,
        choices,
    }
}

/// The parameters, in the order they are fitted.
pub const KNOBS: &[Knob] = &[
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
        keeps_product_with: Some("device.variability.read_cv"),
        choices: &[],
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
        keeps_product_with: None,
        choices: &[],
    },
    choice(
        "device.flash.one_die_per_chip",
        "a chip serves one die at a time (MQSim's TSU) or interleaves its dies: the saturation and tails of many reads",
        READ_SHARING,
        &["false", "true"],
    ),
    choice(
        "device.flash.channel_arbitration",
        "who takes a free channel bus: the oldest transfer, or the chips in turn (MQSim's TSU)",
        READ_SHARING,
        &["\"fcfs\"", "\"round-robin\""],
    ),
    choice(
        "device.tsu.multiplane_same_page",
        "reads of two planes of a die pair up only at the same page (MQSim) or at any page",
        READ_SHARING,
        &["false", "true"],
    ),
    Knob {
        key: "device.host_interface.pcie_lane_bytes_per_s",
        what: "PCIe lane rate (a large read's transfer at QD1, under every bandwidth limit: PCIe 3.0 or 4.0)",
        min: 1e8,
        max: 1e10,
        integer: false,
        power_of_two: false,
        decided_by: large_read_qd1,
        metrics: &[Metric::Iops],
        limit_of: None,
        requires: None,
        keeps_product_with: None,
        choices: &[],
    },
    Knob {
        key: "device.flash.channel_mts",
        what: "flash channel transfer rate (a large read's pages over the channel buses at QD1)",
        min: 50.0,
        max: 10_000.0,
        integer: true,
        power_of_two: false,
        decided_by: large_read_qd1,
        metrics: &[Metric::Iops],
        limit_of: None,
        requires: None,
        keeps_product_with: None,
        choices: &[],
    },
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
        keeps_product_with: None,
        choices: &[],
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
        keeps_product_with: None,
        choices: &[],
    },
    Knob {
        key: "device.flash.chips_per_channel",
        what: "flash chips per channel (the parallelism of a few reads in flight, behind the same buses)",
        min: 1.0,
        max: 64.0,
        integer: true,
        power_of_two: false,
        decided_by: small_read_some,
        metrics: &[Metric::Iops],
        limit_of: None,
        requires: None,
        keeps_product_with: None,
        choices: &[],
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
        keeps_product_with: None,
        choices: &[],
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
        keeps_product_with: None,
        choices: &[],
    },
    Knob {
        key: "device.host_interface.max_read_iops",
        what: "read IOPS limit (a saturation that more commands in flight do not pass, and that costs a few in flight nothing)",
        min: 1e3,
        max: 1e8,
        integer: false,
        power_of_two: false,
        decided_by: small_read_deep,
        metrics: &[Metric::Iops],
        limit_of: Some(read_iops),
        requires: None,
        keeps_product_with: None,
        choices: &[],
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
        keeps_product_with: None,
        choices: &[],
    },
    choice(
        "device.slc.enabled",
        "an SLC write cache (host writes programmed in SLC mode, folded into the native cells later; on, the \
         base's sizes and SLC times): steady writes' rate, and whether a large write outruns a small one by more \
         than its pages",
        WRITE_PATH,
        &["false", "true"],
    ),
    choice(
        "device.ftl.gc_policy",
        "how garbage collection picks a victim: the block with fewest valid pages, or the best of a few sampled \
         (MQSim's): steady writes' amplification, so their rate and stalls",
        WRITE_PATH,
        &["\"greedy\"", "\"d-choices\""],
    ),
    choice(
        "device.cache.destage_limit_pages_per_plane",
        "pages per plane the write buffer may have on their way to flash (MQSim: 1) or none but the buffer's \
         size (0): how closely the flash's writes follow each other, and how much flash work a read finds ahead",
        WRITE_PATH,
        &["0", "1"],
    ),
    choice(
        "device.ftl.mapping_unit_bytes",
        "what the FTL maps and programs: whole flash pages (0), or 4 KiB units packed into pages (a drive with a map \
         entry per 4 KiB, 1 GB of DRAM per TB): whether a small write costs a page or its share of one, so the \
         ratio of small to large writes' rates",
        WRITE_PATH,
        &["0", "4096"],
    ),
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
        keeps_product_with: None,
        choices: &[],
    },
    Knob {
        key: "device.slc.program_ns",
        what: "SLC-mode program time (steady random writes into an SLC cache; nothing without one)",
        min: 1_000.0,
        max: 20_000_000.0,
        integer: true,
        power_of_two: false,
        decided_by: small_write_deep,
        metrics: &[Metric::Iops],
        limit_of: None,
        requires: None,
        keeps_product_with: None,
        choices: &[],
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
        keeps_product_with: None,
        choices: &[],
    },
    Knob {
        key: "device.ftl.overprovisioning",
        what: "share of the flash hidden from the host (steady writes' amplification: the room garbage \
               collection has, so their rate)",
        // A drive hides at least the few percent of GB against GiB and at most about half its flash (a
        // write-intensive enterprise drive's 28% and up, Z-NAND's 27%) [inferred: the presets' 7% to 27%].
        min: 0.02,
        max: 0.5,
        integer: false,
        power_of_two: false,
        decided_by: any_write_deep,
        metrics: &[Metric::Iops],
        limit_of: None,
        requires: None,
        keeps_product_with: None,
        choices: &[],
    },
    Knob {
        key: "device.host_interface.max_write_iops",
        what: "write IOPS limit",
        min: 1e2,
        max: 1e8,
        integer: false,
        power_of_two: false,
        decided_by: small_write_deep,
        metrics: &[Metric::Iops],
        limit_of: Some(write_iops),
        requires: None,
        keeps_product_with: None,
        choices: &[],
    },
    choice(
        "device.flash.chip_reads_first",
        "a chip serves its dies' queued reads before their writes (MQSim's TSU) or the dies in turn: how long a \
         read waits behind writes",
        READS_AMONG_WRITES,
        &["false", "true"],
    ),
    choice(
        "device.tsu.read_priority",
        "how a die orders reads against its programs and erases: reads first always (MQSim's TSU), reads first \
         past a waiting program at most `read_bypass_limit` times (the base's), or arrival order: how long a read \
         waits behind writes",
        READS_AMONG_WRITES,
        &["\"always\"", "\"bounded\"", "\"fifo\""],
    ),
];

/// `key=value` as `--set` takes it: through the knob of `key` if there is one (a choice's literal).
pub fn setting(key: &str, value: f64) -> String {
    match knob(key) {
        Some(knob) => format!("{key}={}", knob.value_text(value)),
        None => format!("{key}={}", Knob::number_text(value)),
    }
}

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
        let sharing =
            ["device.flash.one_die_per_chip", "device.flash.channel_arbitration", "device.tsu.multiplane_same_page"];
        let parallelism = ["device.flash.chips_per_channel", "device.flash.channels"];
        assert_eq!(deciding(shape(100, 4096, 4)), [&sharing[..], &parallelism].concat());
        let saturation = ["device.host_interface.command_process_ns", "device.host_interface.max_read_iops"];
        assert_eq!(deciding(shape(100, 4096, 64)), [&sharing[..], &saturation, &["host.cpu.speed"]].concat());
        let jobs4 = JobShape { iodepth: 32, numjobs: 4, ..shape(100, 4096, 32) };
        assert_eq!(deciding(jobs4), [&sharing[..], &saturation].concat());
        assert_eq!(deciding(shape(100, 131072, 32)), ["device.host_interface.max_read_bytes_per_s"]);
        assert_eq!(
            deciding(shape(100, 131072, 1)),
            [&sharing[..], &["device.host_interface.pcie_lane_bytes_per_s", "device.flash.channel_mts"]].concat()
        );
        assert_eq!(
            deciding(shape(0, 4096, 32)),
            [
                "device.slc.enabled",
                "device.ftl.gc_policy",
                "device.cache.destage_limit_pages_per_plane",
                "device.ftl.mapping_unit_bytes",
                "device.flash.program_ns",
                "device.slc.program_ns",
                "device.flash.page_bytes",
                "device.ftl.overprovisioning",
                "device.host_interface.max_write_iops"
            ]
        );
        assert_eq!(
            deciding(shape(0, 131072, 32)),
            [
                "device.host_interface.max_write_bytes_per_s",
                "device.slc.enabled",
                "device.ftl.gc_policy",
                "device.cache.destage_limit_pages_per_plane",
                "device.ftl.mapping_unit_bytes",
                "device.flash.page_bytes",
                "device.ftl.overprovisioning"
            ]
        );
        // A mixed job decides how reads wait behind writes; the rest it checks.
        assert_eq!(deciding(shape(70, 4096, 32)), ["device.flash.chip_reads_first", "device.tsu.read_priority"]);
        assert!(knob("device.flash.read_ns").is_some() && knob("nope").is_none());
    }

    #[test]
    fn values_are_written_as_the_scenario_reads_them_and_read_back_from_the_base() {
        assert_eq!(setting("device.flash.read_ns", 12000.0), "device.flash.read_ns=12000");
        assert_eq!(setting("device.variability.read_cv", 0.25), "device.variability.read_cv=2.5e-1");
        assert_eq!(setting("x.y", 2.5e9), "x.y=2500000000");
        assert_eq!(setting("device.flash.one_die_per_chip", 1.0), "device.flash.one_die_per_chip=true");
        let arbitration = knob("device.flash.channel_arbitration").unwrap();
        assert_eq!(arbitration.value_text(1.0), "\"round-robin\"");
        assert_eq!(arbitration.value_of(&serde_json::json!("round-robin")), Some(1.0));
        assert_eq!(arbitration.value_of(&serde_json::json!("fcfs")), Some(0.0));
        assert_eq!(arbitration.value_of(&serde_json::json!("lottery")), None);
        let one_die = knob("device.flash.one_die_per_chip").unwrap();
        assert_eq!(one_die.value_of(&serde_json::json!(true)), Some(1.0));
        assert_eq!(knob("device.flash.read_ns").unwrap().value_of(&serde_json::json!(75000)), Some(75000.0));
        // A die's read order: tlc-consumer's "bounded" is the second choice, written back as the literal.
        let priority = knob("device.tsu.read_priority").unwrap();
        assert_eq!(priority.value_of(&serde_json::json!("bounded")), Some(1.0));
        assert_eq!(setting("device.tsu.read_priority", 2.0), "device.tsu.read_priority=\"fifo\"");
    }
}
