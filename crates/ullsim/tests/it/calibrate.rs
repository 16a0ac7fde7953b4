//! The calibration's round trip (issue 34): a built-in drive runs the probe set in the simulator, its fio
//! JSON is calibrated from a different base, and the fitted preset must give back what was fitted (QD1
//! latency, saturation IOPS, bandwidth) within 5% and points that were not in the input within 15%.
//! CI-sized: the read files only, short runs, few I/Os per simulated job; `ullsim calibrate` on a full probe
//! set is measured in docs/calibration.md.

use std::path::{Path, PathBuf};

use ullsim::calibrate::calibration::{calibrate, Calibration, Options};
use ullsim::calibrate::evaluate::Bench;
use ullsim::calibrate::fio_read::read_file;
use ullsim::calibrate::fit::{FitOutcome, Fitted, Verdict};
use ullsim::calibrate::probe::{probe_set, ProbePoints};
use ullsim::calibrate::probe_sim::SimulatedProbe;
use ullsim::calibrate::round_trip::{round_trip, Check, CheckKind, RoundTripOptions};
use ullsim::calibrate::{slc_cache, JobShape, Pattern};

/// Each simulated probe job's measured time.
const PROBE_NS: u64 = 40_000_000;

/// Run the read files of the probe set at `points` whose stem `wanted` takes on `device` with `settings`
/// over it, write their fio JSON into `dir`.
fn probe_files(
    device: &str,
    settings: &[&str],
    points: &ProbePoints,
    wanted: &dyn Fn(&str) -> bool,
    dir: &Path,
) -> Vec<PathBuf> {
    let files: Vec<_> =
        probe_set(points).into_iter().filter(|f| f.measured && !f.destructive() && wanted(&f.stem)).collect();
    let settings = settings.iter().map(|s| s.to_string()).collect();
    let probe = SimulatedProbe::new(device, PROBE_NS).unwrap().with_settings(settings).unwrap();
    let documents = probe.run(&files).unwrap();
    documents
        .into_iter()
        .map(|(stem, document)| {
            let path = dir.join(format!("{stem}.json"));
            std::fs::write(&path, serde_json::to_string(&document).unwrap()).unwrap();
            path
        })
        .collect()
}

/// The measured figures of the read job of `pattern`, `block_size`, `iodepth` x `numjobs` among `paths`:
/// (IOPS, mean latency).
fn read_point(paths: &[PathBuf], pattern: Pattern, block_size: u64, iodepth: u32, numjobs: u32) -> (f64, f64) {
    let wanted = JobShape { pattern, read_percent: 100, block_size, iodepth, numjobs };
    let job = paths.iter().flat_map(|p| read_file(p).unwrap()).find(|j| j.shape == wanted);
    let read = job.unwrap_or_else(|| panic!("no job of {wanted:?}")).read.unwrap();
    (read.iops, read.mean_ns)
}

fn within(simulated: f64, measured: f64, share: f64, what: &str) {
    let off = simulated / measured - 1.0;
    assert!(
        off.abs() <= share,
        "{what}: {simulated:.1} against {measured:.1} ({:+.1}%, allowed {:.0}%)",
        off * 100.0,
        share * 100.0
    );
}

/// A round trip's checks, CI-sized (the read files only): every headline figure within 5%, every unseen
/// point within 15%, and nothing fitted to writes (the preset says so rather than guessing). The trip's
/// fitted preset's text is returned.
fn round_trip_holds(
    truth: &str,
    base: &str,
    probe_ns: u64,
    target_ios: f64,
) -> (String, ullsim::calibrate::round_trip::RoundTrip) {
    let dir = tempfile::tempdir().unwrap();
    let options = RoundTripOptions {
        truth: truth.into(),
        calibration: Options { target_ios, ..Options::new(base) },
        duration_ns: probe_ns,
        write_duration_ns: probe_ns,
        writes: false,
    };
    let trip = round_trip(&options, dir.path(), &mut |_, _| {}).unwrap();
    println!("{}", trip.table_text());
    let of_kind = |kind| trip.checks.iter().filter(move |c| c.kind == kind);
    assert_eq!(of_kind(CheckKind::Fitted).count(), 5, "QD1 mean, QD 64 and 256, 4 jobs, sequential bandwidth");
    assert_eq!(of_kind(CheckKind::Unseen).count(), 10, "QD 2, 8, 128 and 2, 8 jobs: IOPS and mean");
    for check in of_kind(CheckKind::Fitted).chain(of_kind(CheckKind::Unseen)) {
        within(
            check.fitted,
            check.truth,
            check.tolerance,
            &format!("{truth} from {base}: {} {} {}", check.job, check.direction, check.figure),
        );
    }
    let text = std::fs::read_to_string(&trip.preset).unwrap();
    assert!(text.contains("device.flash.program_ns (no job measures it)"), "{text}");
    let outcome = &trip.calibration.outcome;
    assert!(outcome.error_after < outcome.error_before, "{outcome:?}");
    (text, trip)
}

/// `ullsim round-trip`'s check in the library: `tlc-enterprise` calibrated from `tlc-consumer` (another TLC
/// drive: another read time, one die per chip instead of two, an SLC cache, a PCIe 4.0 link) gives back
/// its QD1 latency, its saturation IOPS (one job and four) and its sequential read bandwidth within 5%, and
/// queue depths and job counts that were not in the input within 15% (100 ms probes, 5,000 I/Os per
/// simulated job: at 40 ms and 1,500 the QD 64 saturation comes back 7% high). (From `mqsim-mlc`, whose
/// mapping table is cached where `tlc-enterprise` keeps it in DRAM, it misses the QD1 mean by 5-8%:
/// docs/validation.md.)
#[test]
fn a_drive_calibrated_from_another_base_gives_back_its_curve() {
    round_trip_holds("tlc-enterprise", "tlc-consumer", 100_000_000, 5000.0);
}

/// The same from a base that shares the flash differently: `mqsim-compat` serves one die per chip at a
/// time, gives a free bus to the chips in turn and pairs two planes' reads only at the same page (MQSim's
/// scheduler); `mqsim-mlc` does none of that. The fit's choices must find the drive's way (CI-sized: 40 ms
/// probes, 1,500 I/Os), and with them its read time and channel rate.
#[test]
fn a_drive_that_shares_its_flash_otherwise_than_the_base_is_found_out() {
    let (text, trip) = round_trip_holds("mqsim-mlc", "mqsim-compat", PROBE_NS, 1500.0);
    for line in ["one_die_per_chip = false", "channel_arbitration = \"fcfs\"", "multiplane_same_page = false"] {
        assert!(text.contains(line), "{line}: {text}");
    }
    let value = |key: &str| trip.calibration.outcome.parameters.iter().find(|p| p.key == key).unwrap().value;
    within(value("device.flash.read_ns"), 75_000.0, 0.03, "read time");
    within(value("device.flash.channel_mts"), 333.0, 0.05, "channel rate");
}

#[test]
fn a_slower_host_is_fitted_as_the_host_and_not_as_the_drive() {
    // optane-ull on cores at 0.6 of the reference: one job's deep reads are held to ~300K IOPS by its core,
    // four jobs still reach the drive's ~547K.
    let dir = tempfile::tempdir().unwrap();
    let (given, fitted_dir) = (dir.path().join("given"), dir.path().join("fitted"));
    std::fs::create_dir_all(&given).unwrap();
    std::fs::create_dir_all(&fitted_dir).unwrap();
    let points = ProbePoints { queue_depths: vec![1, 64], job_counts: vec![4] };
    let small_reads = |stem: &str| stem.starts_with("randread-4k");
    let measured = probe_files("optane-ull", &["host.cpu.speed=0.6"], &points, &small_reads, &given);
    let options = Options { target_ios: 1500.0, ..Options::new("optane-ull") };
    let calibration = calibrate(&measured, &options, &mut |_, _| {}).unwrap();
    let speed = calibration.outcome.parameters.iter().find(|p| p.key == "host.cpu.speed").unwrap();
    within(speed.value, 0.6, 0.10, "fitted host.cpu.speed");
    // The preset is the drive's; the speed is a line for the user's scenario.
    let text = calibration.preset_toml("mydrive");
    let line = format!(
        "# host: set host.cpu.speed = {:.4} in your scenario ([host.cpu] speed = {:.4})",
        speed.value, speed.value
    );
    assert!(text.contains(&line), "{text}");
    assert!(!text.contains("\n[cpu]") && !text.contains("\nspeed ="), "{text}");
    // The preset on the fitted host gives back what was measured.
    let preset = dir.path().join("mydrive.toml");
    std::fs::write(&preset, &text).unwrap();
    let host = format!("host.cpu.speed={}", speed.value);
    let fitted = probe_files(preset.to_str().unwrap(), &[&host], &points, &small_reads, &fitted_dir);
    let (_, qd1_mean) = read_point(&measured, Pattern::Random, 4096, 1, 1);
    within(read_point(&fitted, Pattern::Random, 4096, 1, 1).1, qd1_mean, 0.05, "QD1 4 KiB read mean");
    for (iodepth, numjobs) in [(64, 1), (32, 4)] {
        let (iops, _) = read_point(&measured, Pattern::Random, 4096, iodepth, numjobs);
        let (sim_iops, _) = read_point(&fitted, Pattern::Random, 4096, iodepth, numjobs);
        within(sim_iops, iops, 0.05, &format!("QD{iodepth} x {numjobs} IOPS"));
    }
}

/// A base without an SLC cache (`tlc-enterprise`) is given one for the fit to turn on: a share of its
/// capacity and SLC times a third and a fifth of its native ones (`slc_cache`). Turned on (with the
/// over-provisioning that makes room for it), the preset holds the cache (its program time as fitted, the
/// rest as given); left off, none of it.
#[test]
fn an_slc_cache_the_fit_turns_on_over_a_base_without_one_is_the_presets() {
    let bench = |device: &str| Bench {
        probe: SimulatedProbe::new(device, PROBE_NS).unwrap(),
        settings: Vec::new(),
        target_ios: 1500.0,
    };
    let base = bench("tlc-enterprise").base_json().unwrap();
    let prepared = slc_cache::for_base(&base);
    let keys: Vec<&str> = prepared.iter().map(|(k, _)| *k).collect();
    assert_eq!(keys, ["device.slc.static_bytes", "device.slc.read_ns", "device.slc.program_ns"]);
    let capacity = base["capacity_bytes"].as_f64().unwrap();
    let fitted = |key: &'static str, value: f64| Fitted {
        key,
        value,
        text: value.to_string(),
        base_text: "0".into(),
        base: 0.0,
        verdict: Verdict::Fitted,
        from: vec!["w.json: randwrite-4k-qd32".into()],
    };
    let calibration = |slc: f64| Calibration {
        base: "tlc-enterprise".into(),
        outcome: FitOutcome {
            // The cache's blocks need more room than the base's 7% over-provisioning leaves.
            parameters: vec![
                fitted("device.slc.enabled", slc),
                fitted("device.slc.program_ns", 89_167.0),
                fitted("device.ftl.overprovisioning", 0.2),
            ],
            error_before: 1.0,
            error_after: 0.1,
            evaluations: 1,
        },
        enabled: Vec::new(),
        prepared: prepared.clone(),
        given: Vec::new(),
        rows: Vec::new(),
        files: Vec::new(),
        warnings: Vec::new(),
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mydrive.toml");
    std::fs::write(&path, calibration(1.0).preset_toml("mydrive")).unwrap();
    let device = &bench(path.to_str().unwrap()).base_json().unwrap()["device"]["slc"];
    assert_eq!(device["enabled"], true);
    // Its share of the capacity, in whole SLC blocks of every plane.
    let size = device["static_bytes"].as_f64().unwrap();
    // (Rounded up to whole blocks: 18 a plane for 17.1.)
    assert!(
        size >= capacity * slc_cache::STATIC_SHARE && size < 1.1 * capacity * slc_cache::STATIC_SHARE,
        "{size} {capacity}"
    );
    assert_eq!(size, prepared[0].1);
    assert_eq!((device["read_ns"].as_f64(), device["program_ns"].as_f64()), (Some(20_000.0), Some(89_167.0)));
    let off = calibration(0.0).preset_toml("mydrive");
    assert!(!off.contains("static_bytes") && !off.contains("read_ns"), "{off}");
}

/// A round trip of `truth` from `base` with the write files, CI-sized: 40 ms read and 200 ms write probes,
/// 1,500 I/Os per simulated job.
fn round_trip_with_write_files(truth: &str, base: &str) -> ullsim::calibrate::round_trip::RoundTrip {
    let dir = tempfile::tempdir().unwrap();
    let options = RoundTripOptions {
        truth: truth.into(),
        calibration: Options { target_ios: 1500.0, ..Options::new(base) },
        duration_ns: PROBE_NS,
        write_duration_ns: 200_000_000,
        writes: true,
    };
    let trip = round_trip(&options, dir.path(), &mut |_, _| {}).unwrap();
    println!("{}", trip.table_text());
    trip
}

/// A round trip's check within its tolerance.
fn holds(check: &Check) {
    let what = format!("{} {} {} ({:?})", check.job, check.direction, check.figure, check.kind);
    within(check.fitted, check.truth, check.tolerance, &what);
}

/// With the write files too (CI-sized: 40 ms read and 200 ms write probes, 1,500 I/Os per simulated job):
/// `optane-900p` from `optane-ull`, drives that write in place (no garbage collection, so short write runs
/// are their steady state; a NAND drive's collection needs the seconds docs/calibration.md measures). The
/// write rates, bandwidths and the mix come back, and every figure, given or not, within its tolerance.
#[test]
fn a_drive_calibrated_with_its_write_files_gives_back_its_writes() {
    let trip = round_trip_with_write_files("optane-900p", "optane-ull");
    let fitted: Vec<_> = trip.checks.iter().filter(|c| c.kind == CheckKind::Fitted).collect();
    assert_eq!(fitted.len(), 7, "the reads' five, the steady 4 KiB writes' IOPS and the 128 KiB writes'");
    assert!(fitted.iter().any(|c| c.job == "write-128k-qd32" && c.direction == "write"));
    assert!(trip.checks.iter().any(|c| c.job == "randrw70-4k-qd32" && c.direction == "read"), "the mix is checked");
    trip.checks.iter().for_each(holds);
    let written: Vec<&str> =
        trip.calibration.outcome.parameters.iter().filter(|p| p.verdict == Verdict::Fitted).map(|p| p.key).collect();
    assert!(written.contains(&"device.host_interface.max_write_bytes_per_s"), "{written:?}");
}

/// With the write files, a drive with garbage collection from a base of another flash (CI-sized as above):
/// `znand-ull` (2 KiB pages, 27% over-provisioning, 170K write IOPS) from `tlc-enterprise` (16 KiB, 7%).
/// Every headline figure (the reads', the steady 4 KiB writes' IOPS) within 5% but the 128 KiB writes' (below),
/// every unseen point within 15%. (The 70/30 mix, a given point, misses: docs/validation.md.)
#[test]
fn a_drive_with_garbage_collection_calibrated_with_its_write_files_gives_back_its_headline() {
    let trip = round_trip_with_write_files("znand-ull", "tlc-enterprise");
    let headline_or_unseen: Vec<_> =
        trip.checks.iter().filter(|c| matches!(c.kind, CheckKind::Fitted | CheckKind::Unseen)).collect();
    assert_eq!(headline_or_unseen.len(), 17, "7 headline figures, 10 unseen");
    // All but the 128 KiB writes' bandwidth: at this size the fit judges its drive's 128 KiB writes over
    // the 24 MB of four 4 KiB pages per simulated I/O (~8 ms) against the truth's 200 ms, and they come back
    // 7-19% off; the full-sized round trip holds them (docs/validation.md).
    let large_write = |c: &Check| c.job == "write-128k-qd32" && c.direction == "write";
    assert_eq!(headline_or_unseen.iter().filter(|c| large_write(c)).count(), 1);
    headline_or_unseen.into_iter().filter(|c| !large_write(c)).for_each(holds);
    // The drive's write IOPS limit, a limit no lower than what its writer measured.
    let limit = trip.calibration.outcome.parameters.iter().find(|p| p.key == "device.host_interface.max_write_iops");
    within(limit.unwrap().value, 170_000.0, 0.05, "write IOPS limit");
}
