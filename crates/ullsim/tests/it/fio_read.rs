//! The fio results reader (`calibrate::fio_read`) on fio's JSON layouts, written by hand to fio's documented
//! layout (HOWTO "JSON output", "JSON+ output"; stat.c `show_thread_status_json`) in tests/data/fio/, on bad
//! inputs, and on the simulator's own fio-json.

use std::path::{Path, PathBuf};

use ullsim::calibrate::fio_latency::LatencyKind;
use ullsim::calibrate::fio_read::{read_file, read_str, FioReadError, FioWarning, MeasuredJob, Producer};
use ullsim::calibrate::{JobShape, Pattern};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fio").join(name)
}

fn load(name: &str) -> Vec<MeasuredJob> {
    read_file(&data(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn group_reporting_one_entry_per_job_with_global_options() {
    let jobs = load("fio3_group_reporting.json");
    assert_eq!(jobs.len(), 2);
    let rr = &jobs[0];
    assert_eq!(rr.job, "randread-qd32-4j");
    assert_eq!(rr.producer, Producer::Fio("fio-3.36".to_string()));
    assert_eq!(
        rr.shape,
        JobShape { pattern: Pattern::Random, read_percent: 100, block_size: 4096, iodepth: 32, numjobs: 4 }
    );
    // ioengine, direct, runtime, ramp_time come from the global options.
    assert_eq!(rr.ioengine, "libaio");
    assert!(rr.time_based);
    assert_eq!(rr.ramp_time_ns, Some(5_000_000_000));
    assert_eq!(rr.entries, 1);
    assert!(!rr.approximate_percentiles);
    assert!(rr.write.is_none());
    let read = rr.read.as_ref().unwrap();
    assert_eq!(read.ios, 12_000_000);
    assert_eq!(read.iops, 400_000.0);
    assert_eq!(read.bytes_per_s, 1_638_400_000.0);
    assert_eq!(read.mean_ns, 319_872.5);
    assert_eq!(read.completion_mean_ns, Some(318_000.1));
    // fio's default: percentiles of clat only.
    assert_eq!(read.percentiles_of, Some(LatencyKind::Completion));
    assert_eq!((read.p50_ns, read.p99_ns, read.p999_ns), (Some(309_248), Some(602_112), Some(880_640)));
    assert_eq!(read.percentiles.len(), 17);
    assert!(rr.warnings.is_empty(), "{:?}", rr.warnings);

    let sw = &jobs[1];
    assert_eq!(
        sw.shape,
        JobShape { pattern: Pattern::Sequential, read_percent: 0, block_size: 131_072, iodepth: 8, numjobs: 1 }
    );
    let write = sw.write.as_ref().unwrap();
    assert_eq!((write.iops, write.mean_ns, write.p99_ns), (20_000.0, 400_000.0, Some(561_152)));
    assert!(sw.read.is_none());
}

#[test]
fn clones_merge_exactly_with_bins_and_approximately_without() {
    // json+ with text before the document: merged histograms give fio's percentiles of all I/Os.
    let plus = load("fio3_jsonplus_clones.json");
    assert_eq!(plus.len(), 1);
    let job = &plus[0];
    assert_eq!(job.entries, 2);
    assert_eq!(
        job.shape,
        JobShape { pattern: Pattern::Random, read_percent: 70, block_size: 4096, iodepth: 16, numjobs: 2 }
    );
    assert_eq!(job.ramp_time_ns, Some(2_000_000_000)); // bare: seconds
    let read = job.read.as_ref().unwrap();
    assert_eq!(read.ios, 1000);
    assert_eq!(read.iops, 50.0); // 35 + 15
                                 // Means weighted by I/Os: lat = clat + slat = 126500 and 141500.
    assert!((read.mean_ns - (0.7 * 126_500.0 + 0.3 * 141_500.0)).abs() < 1e-6, "{}", read.mean_ns);
    // 1000 I/Os: 800 at 100352, 192 at 201728, 7 at 1003520, 1 at 2039808. The 99.9th percentile's target,
    // 99.9 / 100 x 1000, is a hair above 999 in floating point (in fio's long double too), so it is the last I/O.
    assert_eq!((read.p50_ns, read.p99_ns, read.p999_ns), (Some(100_352), Some(201_728), Some(2_039_808)));
    assert_eq!(read.percentiles.iter().find(|p| p.0 == 99.5).map(|p| p.1), Some(1_003_520));
    assert!(!job.approximate_percentiles);
    let write = job.write.as_ref().unwrap();
    assert_eq!((write.ios, write.p50_ns, write.p99_ns), (400, Some(20_224), Some(40_448))); // 389, 10 and 1 I/Os

    // The same without bins: the I/O-weighted mean of the clones' percentiles, marked approximate.
    let plain = load("fio3_clones.json");
    let job = &plain[0];
    assert!(job.approximate_percentiles);
    let read = job.read.as_ref().unwrap();
    let expected = (0.7f64 * 1_003_520.0 + 0.3 * 2_039_808.0).round() as u64;
    assert_eq!(read.p999_ns, Some(expected));
    assert_eq!(read.iops, 50.0);
}

#[test]
fn fio2_layout_is_in_microseconds_and_sync_engines_run_at_depth_1() {
    let jobs = load("fio2_psync.json");
    let job = &jobs[0];
    // psync ignores iodepth=32, as fio does.
    assert_eq!(job.shape.iodepth, 1);
    assert_eq!(job.ioengine, "psync");
    let read = job.read.as_ref().unwrap();
    assert_eq!(read.mean_ns, 12_450.0);
    assert_eq!(read.p99_ns, Some(18_000));
    assert_eq!(read.percentiles.len(), 17, "the \"0.00\" fillers are dropped");
    assert_eq!(read.bytes_per_s, 320_000.0 * 1024.0);
    assert_eq!(read.bytes, 3_276_800_000);
    assert_eq!(job.runtime_ms, 10_000);
    assert_eq!(job.warnings, vec![FioWarning::NoRampTime]);
}

#[test]
fn bad_inputs_name_the_file_and_job() {
    let err = |name: &str| read_file(&data(name)).unwrap_err();
    let text = |name: &str| err(name).to_string();
    assert!(matches!(err("bad_not_json.txt"), FioReadError::NotJson { .. }));
    assert!(text("bad_not_json.txt").contains("bad_not_json.txt"));
    assert!(matches!(err("bad_not_fio.json"), FioReadError::NotFio { .. }), "{}", text("bad_not_fio.json"));
    assert!(matches!(err("bad_job_error.json"), FioReadError::JobFailed { code: 5, .. }));
    assert!(text("bad_job_error.json").contains("\"failed-job\""));
    let buffered = text("bad_buffered.json");
    assert!(
        buffered.contains("bad_buffered.json")
            && buffered.contains("\"buffered-read\"")
            && buffered.contains("direct=1")
    );
    let bssplit = text("bad_bssplit.json");
    assert!(bssplit.contains("\"mixed-sizes\"") && bssplit.contains("bssplit"), "{bssplit}");
    assert!(text("bad_trim.json").contains("trims (rw=randtrim)"));
    assert!(matches!(err("bad_zero_io.json"), FioReadError::NoIo { .. }));
    assert!(matches!(read_file(&data("absent.json")).unwrap_err(), FioReadError::Io { .. }));
}

/// A one-job fio 3.x document with `options` as its job options and one read direction.
fn doc(options: &str) -> String {
    format!(
        r#"{{"fio version": "fio-3.36", "jobs": [{{"jobname": "j", "groupid": 0, "error": 0,
        "job options": {{{options}}}, "job_runtime": 500,
        "read": {{"io_bytes": 4096000, "io_kbytes": 4000, "bw_bytes": 8192000, "bw": 8000, "iops": 2000.0,
          "runtime": 500, "total_ios": 1000, "lat_ns": {{"min": 1, "max": 9, "mean": 5.0, "N": 1000}}}},
        "write": {{"io_bytes": 0, "io_kbytes": 0, "iops": 0.0, "runtime": 0, "total_ios": 0}}}}]}}"#
    )
}

#[test]
fn shapes_follow_fios_options() {
    let shape = |options: &str| read_str(&doc(options), Path::new("t.json")).map(|j| j[0].shape);
    let err = |options: &str| read_str(&doc(options), Path::new("t.json")).unwrap_err().to_string();
    let s = shape(
        r#""direct": "1", "rw": "randrw", "rwmixwrite": "30", "blocksize": "8K", "ioengine": "libaio", "iodepth": "4""#,
    )
    .unwrap();
    assert_eq!((s.read_percent, s.block_size, s.iodepth), (70, 8192, 4));
    // fio's defaults: rw=read, bs=4k, iodepth=1, psync.
    let s = shape(r#""direct": "1""#).unwrap();
    assert_eq!((s.pattern, s.read_percent, s.block_size, s.iodepth, s.numjobs), (Pattern::Sequential, 100, 4096, 1, 1));
    // Per-direction block sizes: only the directions the job does count.
    assert_eq!(shape(r#""direct": "1", "rw": "randread", "bs": "4k,64k""#).unwrap().block_size, 4096);
    assert!(err(r#""direct": "1", "rw": "randrw", "bs": "4k,64k""#).contains("reads of 4096 bytes and writes of 65536"));
    // kb_base=1024 (the default) reads IEC spellings as powers of 1000; kb_base=1000 as powers of 1024.
    assert_eq!(shape(r#""direct": "1", "bs": "4KiB""#).unwrap().block_size, 4000);
    assert_eq!(shape(r#""direct": "1", "bs": "4KiB", "kb_base": "1000""#).unwrap().block_size, 4096);
    assert_eq!(shape(r#""direct": "1", "rw": "randread:1""#).unwrap().pattern, Pattern::Random);
    assert!(err(r#""direct": "1", "rw": "randread:8""#).contains("runs of 8 sequential"));
    assert!(err(r#""direct": "1", "rw": "sideways""#).contains("rw=\"sideways\""));
    assert!(err(r#""direct": "1", "ioengine": "mmap""#).contains("\"mmap\""));
    assert!(err(r#""direct": "1", "iodepth": "deep""#).contains("iodepth=\"deep\""));
    assert!(err(r#""direct": "1", "verify": "crc32c""#).contains("verify job"));
    assert!(shape(r#""buffered": "0""#).is_ok());
    // Values that are not strings (a hand-edited file) read as their text.
    assert_eq!(shape(r#""direct": 1, "ioengine": "libaio", "iodepth": 8"#).unwrap().iodepth, 8);
    assert!(err(r#""buffered": "1""#).contains("buffered I/O"));
}

#[test]
fn warnings_for_short_open_loop_and_think_time_runs() {
    let jobs =
        read_str(&doc(r#""direct": "1", "rate_iops": "2000", "numjobs": "1", "thinktime": "50""#), Path::new("t.json"))
            .unwrap();
    let job = &jobs[0];
    assert_eq!(job.open_loop.as_ref().and_then(|o| o.total_iops), Some(2000.0));
    assert_eq!(job.thinktime_ns, 50_000); // bare: microseconds
    assert_eq!(
        job.warnings,
        vec![
            FioWarning::NoRampTime,
            FioWarning::ShortRuntime { runtime_ms: 500 },
            FioWarning::OpenLoop { option: "rate_iops=2000".to_string() },
            FioWarning::ThinkTime { ns: 50_000 },
        ]
    );
}

#[test]
fn clone_counts_must_match_numjobs() {
    let one = doc(r#""direct": "1", "numjobs": "2""#);
    let err = read_str(&one, Path::new("t.json")).unwrap_err().to_string();
    assert!(err.contains("1 entries of that name, but numjobs=2"), "{err}");
    let grouped = doc(r#""direct": "1", "numjobs": "2", "group_reporting": "1""#);
    assert_eq!(read_str(&grouped, Path::new("t.json")).unwrap()[0].shape.numjobs, 2);
    assert!(matches!(read_str("{ broken", Path::new("t.json")), Err(FioReadError::NotJson { .. })));
    assert!(matches!(read_str(r#"{"jobs": []}"#, Path::new("t.json")), Err(FioReadError::NotFio { .. })));
}

/// ullsim's own fio-json, from a run of two fio-like flows, reads back with the flows' shapes and the run's
/// figures.
#[test]
fn ullsims_fio_json_reads_back() {
    let scenario = ullsim::Scenario::from_toml_str(
        r#"
        [run]
        duration = "30ms"
        [metrics]
        per_job = true
        [device]
        preset = "optane-ull"
        [[flow]]
        name = "qd4-read"
        rw = "randread"
        bs = "4k"
        iodepth = 4
        ioengine = "libaio"
        [[flow]]
        name = "mix"
        rw = "randrw"
        rwmixread = 70
        bs = "8k"
        numjobs = 2
        runtime = "20ms"
        "#,
        "fio-read",
        Path::new("."),
        &[],
    )
    .unwrap();
    let results = ullsim::run_scenario(&scenario).unwrap();
    let text = serde_json::to_string(&ullsim::export::fio_json::fio_json(&scenario, &results)).unwrap();
    let jobs = read_str(&text, Path::new("sim.json")).unwrap();
    assert_eq!(jobs.len(), 2);
    assert!(matches!(jobs[0].producer, Producer::Ullsim(_)));
    assert_eq!(
        jobs[0].shape,
        JobShape { pattern: Pattern::Random, read_percent: 100, block_size: 4096, iodepth: 4, numjobs: 1 }
    );
    assert_eq!(
        jobs[1].shape,
        JobShape { pattern: Pattern::Random, read_percent: 70, block_size: 8192, iodepth: 1, numjobs: 2 }
    );
    assert_eq!(jobs[1].ioengine, "io_uring");
    assert_eq!(jobs[1].entries, 2, "per-job entries merged");
    for (job, flow) in jobs.iter().zip(&results.flows) {
        for (measured, op) in [(&job.read, &flow.read), (&job.write, &flow.write)] {
            let (Some(measured), Some(op)) = (measured, op) else {
                assert!(measured.is_none() && op.as_ref().is_none_or(|o| o.completed == 0), "{}", job.job);
                continue;
            };
            assert_eq!(measured.ios, op.completed, "{}", job.job);
            assert!((measured.iops - op.iops).abs() <= 1e-6 * op.iops, "{}: {} vs {}", job.job, measured.iops, op.iops);
            let mean = op.detail.latency.mean;
            assert!((measured.mean_ns - mean).abs() <= 1e-6 * mean, "{}: {} vs {mean}", job.job, measured.mean_ns);
            assert_eq!(measured.percentiles_of, Some(LatencyKind::Total));
        }
        assert!(job.warnings.iter().all(|w| !matches!(w, FioWarning::NoRampTime)));
    }
    // One entry, one job: its percentiles are the run's own.
    let read = jobs[0].read.as_ref().unwrap();
    assert_eq!(read.p99_ns, Some(results.flows[0].read.as_ref().unwrap().latency_ns.p99));
}
