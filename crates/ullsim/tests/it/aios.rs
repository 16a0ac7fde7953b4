//! AIOS (ATC'19): LBIO around the block layer, reads that overlap their CPU work with the device, and the
//! asynchronous fsync.

use crate::common;

use common::{load_error, run, scenario_with, WAL};

/// One thread of 4 KiB buffered random reads that miss the page cache, on an idle 4-core host with an
/// IOMMU.
const READER: &str = r#"
seed = 3
[run]
duration = "60ms"
warmup = "5ms"
check_invariants = true
[device]
preset = "optane-900p"
[host]
cores = 4
[host.fs]
memory_bytes = "16m"
[host.nvme]
iommu_map_ns = 300
iommu_unmap_ns = 600
[[flow]]
name = "reader"
rw = "randread"
bs = "4k"
ioengine = "psync"
direct = 0
size = "16g"
"#;

fn read_mean_ns(r: &ullsim::RunResults) -> f64 {
    r.flows[0].read.as_ref().expect("reads completed").latency_ns.mean
}

#[test]
fn an_aios_read_saves_the_work_it_takes_off_the_path() {
    let vanilla = run(&scenario_with(READER, &[]));
    let s = scenario_with(READER, &["host.stack=\"aios\""]);
    let aios = run(&s);
    let (host, fs) = (&s.host, aios.host.fs.expect("files are reported"));
    assert!(fs.lbio_commands > 1_000 && fs.lbio_ring_full == 0, "{fs:?}");
    assert_eq!(vanilla.host.fs.expect("files").lbio_commands, 0);
    // The overlapped work (page-cache insertion, the pool's refill and mapping, a deferred unmapping: 1.2 us)
    // is shorter than the device's read, so AIOS saves all of it, and the block layer's submission and
    // completion on top.
    let saved = (host.fs.page_alloc_ns.0
        + host.nvme.iommu_map_ns.0
        + host.nvme.iommu_unmap_ns.0
        + host.block.submit_ns.0
        + host.block.complete_ns.0) as f64;
    let measured = read_mean_ns(&vanilla) - read_mean_ns(&aios);
    assert!((measured - saved).abs() < 0.03 * saved, "saved {measured:.0} ns, the model says {saved:.0} ns");
    // Without an IOMMU, only the page allocation and the block layer are saved.
    let no_iommu: &[&str] = &["host.nvme.iommu_map_ns=0", "host.nvme.iommu_unmap_ns=0"];
    let v0 = run(&scenario_with(READER, no_iommu));
    let a0 = run(&scenario_with(READER, &[no_iommu, &["host.stack=\"aios\""]].concat()));
    let saved0 = (host.fs.page_alloc_ns.0 + host.block.submit_ns.0 + host.block.complete_ns.0) as f64;
    let measured0 = read_mean_ns(&v0) - read_mean_ns(&a0);
    assert!((measured0 - saved0).abs() < 0.05 * saved0, "saved {measured0:.0} ns, the model says {saved0:.0} ns");
}

#[test]
fn a_flow_that_opts_out_keeps_the_block_layer_under_the_aios_stack() {
    let r = run(&scenario_with(READER, &["host.stack=\"aios\"", "flow.reader.aios=false"]));
    assert_eq!(r.host.fs.expect("files").lbio_commands, 0);
    let r = run(&scenario_with(READER, &["flow.reader.aios=true"]));
    assert!(r.host.fs.expect("files").lbio_commands > 1_000);
}

#[test]
fn an_aios_fsync_overlaps_the_journal_with_its_data_and_is_faster() {
    let vanilla = run(&scenario_with(WAL, &[]));
    let aios = run(&scenario_with(WAL, &["host.stack=\"aios\""]));
    let phases = |r: &ullsim::RunResults| r.flows[0].fsync_phases_ns.clone().expect("fsync phases");
    let (v, a) = (phases(&vanilla), phases(&aios));
    // Vanilla waits for the data before the commit; AIOS only submits it (T_D1 is the submission) and the
    // journal thread writes its log blocks with the data in flight: T_JD folds into T_D2.
    assert!(v.d1.mean > 5_000.0 && a.d1.mean < 2_000.0, "T_D1 {} vs {}", v.d1.mean, a.d1.mean);
    assert!(v.jd.mean > 5_000.0 && a.jd.mean == 0.0, "T_JD {} vs {}", v.jd.mean, a.jd.mean);
    assert!(a.d2.mean > v.d2.mean, "the overlapped writes take T_D2: {} vs {}", a.d2.mean, v.d2.mean);
    // The commit block still waits for them: T_JC is the same, and every call committed.
    assert!((a.jc.mean - v.jc.mean).abs() < 0.2 * v.jc.mean, "T_JC {} vs {}", a.jc.mean, v.jc.mean);
    let sync = |r: &ullsim::RunResults| r.flows[0].flush.clone().expect("fsyncs");
    let (vs, as_) = (sync(&vanilla), sync(&aios));
    assert!(as_.latency_ns.mean < 0.85 * vs.latency_ns.mean, "{} vs {}", as_.latency_ns.mean, vs.latency_ns.mean);
    let fs = aios.host.fs.expect("files");
    assert!(fs.journal_commits >= as_.completed, "{} commits for {} fsyncs", fs.journal_commits, as_.completed);
}

#[test]
fn aios_needs_a_flow_that_uses_files() {
    let err =
        load_error("[device]\npreset = \"optane-ull\"\n[[flow]]\nname = \"f\"\nrw = \"randread\"\naios = true\n", &[]);
    assert!(err.contains("aios") && err.contains("direct = 0"), "{err}");
}

#[test]
fn same_seed_same_bytes_under_aios() {
    let s = scenario_with(WAL, &["host.stack=\"aios\"", "flow.wal.rw=\"randrw\""]);
    let a = serde_json::to_string(&run(&s)).unwrap();
    let b = serde_json::to_string(&run(&s)).unwrap();
    assert_eq!(a, b);
}
