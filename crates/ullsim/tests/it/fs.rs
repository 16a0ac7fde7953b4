//! The file system: page cache, writeback and dirty throttling, fsync with the JBD2 journal in ext4's
//! `data=ordered` mode, and the device's flush and FUA under it.

use crate::common;

use common::{load_error, run, scenario_with, WAL};

/// Overrides that make a flow named "bulk" a buffered 128 KiB writer of its own 8 GiB file, with 64 MiB of
/// memory so the flusher writes it back from the start.
pub(crate) const BULK_WRITER: &[&str] = &[
    "host.fs.memory_bytes=64m",
    "flow.bulk.rw=\"write\"",
    "flow.bulk.bs=\"128k\"",
    "flow.bulk.ioengine=\"psync\"",
    "flow.bulk.direct=0",
    "flow.bulk.offset=\"1g\"",
    "flow.bulk.size=\"8g\"",
];

fn fs_counters(r: &ullsim::sim::RunResults) -> ullsim::host::fs::FsCounters {
    r.host.fs.expect("a run with files reports the file system")
}

#[test]
fn an_fsync_commits_in_order_and_every_phase_takes_time() {
    let r = run(&scenario_with(WAL, &[]));
    let wal = &r.flows[0];
    let fsyncs = wal.flush.as_ref().expect("fsync calls are reported with the flushes");
    let phases = wal.fsync_phases_ns.as_ref().expect("and split into phases");
    assert!(fsyncs.completed > 500, "{} fsyncs", fsyncs.completed);
    // Phases are recorded when a call returns, completions when the application reaps them: one may differ.
    assert!(phases.count.abs_diff(fsyncs.completed) <= 1, "{} vs {}", phases.count, fsyncs.completed);
    // Every append allocates, so every fsync writes its page (D1) and commits: the journal thread's phases
    // and the two hand-offs all take time.
    for (name, p) in [("d1", &phases.d1), ("jd", &phases.jd), ("jc", &phases.jc), ("sched", &phases.sched)] {
        assert!(p.mean > 1_000.0, "T_{name} {} ns", p.mean);
    }
    // The phases are sequential parts of the call: together they stay below its latency.
    let parts = phases.d1.mean + phases.d2.mean + phases.jd.mean + phases.jc.mean + phases.sched.mean;
    assert!(parts < fsyncs.latency_ns.mean, "{parts} ns of phases in a {} ns fsync", fsyncs.latency_ns.mean);
    assert!(parts > 0.8 * fsyncs.latency_ns.mean, "{parts} ns of phases in a {} ns fsync", fsyncs.latency_ns.mean);
    let fs = fs_counters(&r);
    // One commit per fsync (no other writer), each one log block for the metadata, a descriptor and a
    // commit block at least; the WAL's pages are written once, by fsync, never by the flusher.
    assert!(fs.journal_commits >= fsyncs.completed && fs.journal_blocks >= 3 * fs.journal_commits, "{fs:?}");
    assert_eq!(fs.writeback_pages, 0);
    assert!(fs.sync_data_pages >= fsyncs.completed);
    // The writes themselves are memory copies: a few µs, no device time.
    assert!(wal.write.as_ref().unwrap().latency_ns.mean < 3_000.0);
}

#[test]
fn ordered_mode_waits_for_other_files_data_and_the_commit_flushes_a_volatile_cache() {
    // A second writer dirties its own file; the flusher writes it back (small memory, so background
    // writeback starts at once). Its blocks are allocated at writeback, so a commit must wait for that data
    // (T_D2), which it does not do without the second writer.
    let with_writer = BULK_WRITER;
    let text = format!("{WAL}\n[[flow]]\nname = \"bulk\"\n");
    let alone = run(&scenario_with(WAL, &["host.fs.memory_bytes=64m"]));
    let beside = run(&scenario_with(&text, with_writer));
    let d2 = |r: &ullsim::sim::RunResults| r.flows[0].fsync_phases_ns.as_ref().unwrap().d2.mean;
    assert!(fs_counters(&beside).writeback_pages > 1_000, "{:?}", fs_counters(&beside));
    assert!(d2(&beside) > 2.0 * d2(&alone), "T_D2 {} ns beside a writer, {} ns alone", d2(&beside), d2(&alone));
    let fsync = |r: &ullsim::sim::RunResults| r.flows[0].flush.as_ref().unwrap().latency_ns.mean;
    assert!(fsync(&beside) > fsync(&alone));

    // The commit block's PREFLUSH and FUA reach only a drive with a volatile cache: without power-loss
    // protection the commit waits for the cache's flush too.
    let volatile = run(&scenario_with(WAL, &["device.cache.power_loss_protection=false"]));
    let jc = |r: &ullsim::sim::RunResults| r.flows[0].fsync_phases_ns.as_ref().unwrap().jc.mean;
    assert!(jc(&volatile) > jc(&alone) + 2_000.0, "T_JC {} ns volatile vs {} ns protected", jc(&volatile), jc(&alone));
}

#[test]
fn fdatasync_of_overwrites_skips_the_journal_and_fsync_does_not() {
    // A flow that reads and writes finds its file laid out: its writes overwrite allocated blocks.
    let overwrite = ["flow.wal.rw=\"randrw\"", "flow.wal.rwmixread=50"];
    let fsync = run(&scenario_with(WAL, &overwrite));
    let fdatasync = run(&scenario_with(&WAL.replace("fsync = 1", "fdatasync = 1"), &overwrite));
    let jd = |r: &ullsim::sim::RunResults| r.flows[0].fsync_phases_ns.as_ref().unwrap().jd.mean;
    // fsync commits the inode's new mtime; fdatasync needs no commit for data whose blocks did not move.
    assert!(jd(&fsync) > 1_000.0);
    assert_eq!(jd(&fdatasync), 0.0);
    assert_eq!(fs_counters(&fdatasync).journal_commits, 0);
    let latency = |r: &ullsim::sim::RunResults| r.flows[0].flush.as_ref().unwrap().latency_ns.mean;
    assert!(latency(&fdatasync) < latency(&fsync) / 2.0, "{} vs {}", latency(&fdatasync), latency(&fsync));
}

/// A buffered reader of 4 KiB pages at random in a 16 MiB file, with 4 MiB of memory.
const SMALL_MEMORY_READER: &str = r#"
seed = 3
[run]
duration = "400ms"
warmup = "200ms"
[device]
preset = "optane-ull"
[host.fs]
memory_bytes = "4m"
[[flow]]
name = "reader"
rw = "randread"
bs = "4k"
ioengine = "psync"
direct = 0
size = "16m"
"#;

#[test]
fn page_cache_hit_ratio_of_a_uniform_working_set_is_the_cached_share() {
    // LRU under uniform random reads of N pages with room for C keeps C of them: hit ratio C / N.
    let r = run(&scenario_with(SMALL_MEMORY_READER, &[]));
    let fs = fs_counters(&r);
    let hit_ratio = fs.read_hit_pages as f64 / (fs.read_hit_pages + fs.read_miss_pages) as f64;
    assert!((hit_ratio - 0.25).abs() < 0.02, "hit ratio {hit_ratio:.3}, closed form 0.25 ({fs:?})");
    // A random read reads ahead only when it happens to start where the last one ended (as in Linux).
    assert!(fs.readahead_pages * 50 < fs.read_miss_pages, "{fs:?}");
}

#[test]
fn sequential_buffered_reads_read_ahead_and_mostly_hit() {
    let reader = r#"
[run]
duration = "50ms"
[device]
preset = "optane-ull"
[[flow]]
name = "reader"
rw = "read"
bs = "4k"
ioengine = "psync"
direct = 0
size = "1g"
"#;
    let r = run(&scenario_with(reader, &[]));
    let fs = fs_counters(&r);
    assert!(fs.readahead_pages > fs.read_miss_pages / 2, "{fs:?}");
    assert!(fs.read_hit_pages > 5 * fs.read_miss_pages / 10, "{fs:?}");
}

#[test]
fn dirty_throttling_holds_a_writer_to_the_device_and_writeback_is_never_critical() {
    // A critical buffered writer far faster than the drive, with 64 MiB of memory: once dirty pages pass
    // freerun it is paused, so over the window it writes at about the device's pace, not memory's.
    let writer = r#"
seed = 2
[run]
duration = "600ms"
warmup = "300ms"
check_invariants = true
[device]
preset = "optane-ull"
[host]
stack = "fastresponse-bs"
[host.fs]
memory_bytes = "64m"
[[flow]]
name = "writer"
class = "critical"
rw = "write"
bs = "128k"
ioengine = "psync"
direct = 0
"#;
    let r = run(&scenario_with(writer, &[]));
    let fs = fs_counters(&r);
    let mb_s = r.flows[0].bandwidth_bytes_per_s / 1e6;
    assert!(fs.throttled_ns > 0, "{fs:?}");
    // The drive writes 2.0 GB/s; memory copies 10 GB/s.
    assert!((500.0..3_000.0).contains(&mb_s), "{mb_s:.0} MB/s");
    assert!(fs.writeback_pages > 10_000, "{fs:?}");
    // Writeback is the flusher's, never critical: nothing went around the scheduler.
    assert_eq!(r.host.block.bypassed, 0);
}

#[test]
fn same_seed_same_bytes_with_files() {
    let s = scenario_with(WAL, &["flow.wal.rw=\"randrw\"", "flow.wal.direct=1"]);
    let a = serde_json::to_string(&run(&s)).unwrap();
    let b = serde_json::to_string(&run(&s)).unwrap();
    assert_eq!(a, b);
}

#[test]
fn bad_file_keys_name_the_key() {
    let cases: [(&[&str], &str); 7] = [
        (&["flow.wal.ioengine=\"io_uring\"", "flow.wal.direct=1"], "fsync"),
        (&["flow.wal.ioengine=\"libaio\""], "direct"),
        (&["flow.wal.nrfiles=0"], "nrfiles"),
        (&["flow.wal.filesize=\"1g\""], "filesize"),
        (&["flow.wal.flush_every=2"], "fsync"),
        (&["flow.wal.direct=2"], "direct"),
        (&["host.fs.dirty_ratio=5"], "dirty_background_ratio"),
    ];
    for (overrides, key) in cases {
        let err = load_error(WAL, overrides);
        assert!(err.contains(key), "{overrides:?}: {err}");
    }
    let device_only = load_error(WAL, &["host.model=\"device-only\""]);
    assert!(device_only.contains("direct") && device_only.contains("device-only"), "{device_only}");
    let direct_only =
        load_error("[device]\npreset = \"optane-ull\"\n[[flow]]\nname = \"f\"\nrw = \"randread\"\nnrfiles = 4\n", &[]);
    assert!(direct_only.contains("nrfiles"), "{direct_only}");
}

#[test]
fn fjournaling_commits_a_critical_fsync_itself_and_falls_back_once_first() {
    // The WAL beside the bulk writer of the ordered-mode test, under BS-Opt and under BSJ-Opt.
    let text = format!(
        "{}\n[[flow]]\nname = \"bulk\"\n",
        WAL.replace("name = \"wal\"", "name = \"wal\"\nclass = \"critical\"")
    );
    let bulk = BULK_WRITER;
    let bs = run(&scenario_with(&text, &[bulk, &["host.stack=\"fastresponse-bs\""]].concat()));
    let bsj = run(&scenario_with(&text, &[bulk, &["host.stack=\"fastresponse\""]].concat()));
    let (fs, fsyncs) = (fs_counters(&bsj), bsj.flows[0].flush.as_ref().unwrap());
    // Only the first fsync falls back (no full commit has happened yet); the area (2,048 blocks, 3 per
    // commit) does not fill in 100 ms of ~1,700 fsyncs... unless it does: then one more full commit each time.
    assert!(
        fs.file_level_commits + 1 >= fsyncs.completed - fsyncs.completed / 682,
        "{fs:?}, {} fsyncs",
        fsyncs.completed
    );
    assert!(fs.journal_commits >= 1 && fs.journal_commits <= 1 + fsyncs.completed / 682 + 1, "{fs:?}");
    assert_eq!(fs_counters(&bs).file_level_commits, 0);
    // T_D2, T_JD and T_Sched are gone (but for the fallback), and the call is faster.
    let phases = |r: &ullsim::sim::RunResults| r.flows[0].fsync_phases_ns.clone().unwrap();
    let (p_bs, p_bsj) = (phases(&bs), phases(&bsj));
    assert!(p_bsj.d2.mean < p_bs.d2.mean / 10.0 && p_bsj.sched.mean < p_bs.sched.mean / 10.0, "{p_bs:?} / {p_bsj:?}");
    let latency = |r: &ullsim::sim::RunResults| r.flows[0].flush.as_ref().unwrap().latency_ns.mean;
    assert!(latency(&bsj) < 0.7 * latency(&bs), "{} vs {}", latency(&bsj), latency(&bs));
    // A task that is not critical keeps ext4's path under the same stack.
    let normal = run(&scenario_with(WAL, &["host.stack=\"fastresponse\""]));
    assert_eq!(fs_counters(&normal).file_level_commits, 0);
}

#[test]
fn fillsync_at_a_fixed_rate_syncs_every_update_and_times_it_from_the_arrival() {
    let text = "seed = 1\n[run]\nduration = \"200ms\"\nwarmup = \"20ms\"\ncheck_invariants = true\n[device]\npreset = \
                \"optane-900p\"\n[[flow]]\nname = \"fillsync\"\napp = \"fastresponse.fillsync\"\nsize = \"1g\"\n";
    let r = run(&scenario_with(text, &[]));
    let f = &r.flows[0];
    let (writes, syncs) = (f.write.as_ref().expect("appends"), f.flush.as_ref().expect("fsyncs"));
    // 2,000 updates a second over the 180 ms window, each an append and an fsync that commits it.
    assert!(writes.completed.abs_diff(360) <= 1 && syncs.completed.abs_diff(360) <= 1, "{writes:?} {syncs:?}");
    let fs = fs_counters(&r);
    assert!(fs.journal_commits.abs_diff(360) <= 2, "{fs:?}");
    // The fsync arrives with its append and starts once the append returned: its latency holds the append's.
    let phases = f.fsync_phases_ns.as_ref().expect("phases");
    let parts = phases.d1.mean + phases.d2.mean + phases.jd.mean + phases.jc.mean + phases.sched.mean;
    assert!(syncs.latency_ns.mean > parts + writes.latency_ns.mean * 0.5, "{} vs {parts}", syncs.latency_ns.mean);
}

#[test]
fn select_isr_polls_a_critical_tasks_own_file_system_io() {
    let critical = ["flow.wal.class=\"critical\""];
    let vanilla = run(&scenario_with(WAL, &critical));
    let select = run(&scenario_with(WAL, &[&critical[..], &["host.stack=\"selectisr\""]].concat()));
    let per_fsync =
        |r: &ullsim::RunResults| r.host.interrupts as f64 / r.flows[0].flush.as_ref().expect("fsyncs").completed as f64;
    // Vanilla: an interrupt for the data write (D1), the log blocks and the commit block. Select-ISR polls
    // the data write the fsync's own task submitted; the journal thread's writes still interrupt.
    assert!((per_fsync(&vanilla) - 3.0).abs() < 0.1, "{}", per_fsync(&vanilla));
    assert!((per_fsync(&select) - 2.0).abs() < 0.1, "{}", per_fsync(&select));
    let d1 = |r: &ullsim::RunResults| r.flows[0].fsync_phases_ns.as_ref().expect("phases").d1.mean;
    assert!(d1(&select) < d1(&vanilla) - 1_000.0, "T_D1 {} vs {}", d1(&select), d1(&vanilla));
    // A critical reader's buffered misses are polled: no interrupt at all.
    let reader = [
        "flow.wal.rw=\"randread\"",
        "flow.wal.class=\"critical\"",
        "host.stack=\"selectisr\"",
        "host.fs.memory_bytes=\"16m\"",
    ];
    let r = run(&scenario_with(&WAL.replace("fsync = 1\n", ""), &reader));
    assert!(r.flows[0].read.as_ref().expect("reads").completed > 1_000);
    assert_eq!(r.host.interrupts, 0);
}

#[test]
fn the_breakdown_gives_the_page_cache_and_the_file_system_their_own_parts() {
    // FastResponse's Fig. 5(a) splits the time above the block layer into T_PC and T_FS. Random 4 KiB reads
    // of a file four times the memory miss mostly; each call pays the file system's path once, the page cache
    // a copy per call and an allocation per fetched page.
    let reader = SMALL_MEMORY_READER;
    let short = ["run.duration=60ms", "run.warmup=0ms"];
    let scenario = scenario_with(reader, &short);
    let (fs_path, copy, alloc) = (
        scenario.host.cpu.fs_submit_ns.0 as f64,
        scenario.host.fs.page_copy_ns.0 as f64,
        scenario.host.fs.page_alloc_ns.0 as f64,
    );
    let r = run(&scenario);
    let (f, fs) = (&r.flows[0], fs_counters(&r));
    let b = &f.breakdown_ns;
    assert_eq!(b.file_system.mean, fs_path, "{b:?}");
    let calls = (fs.read_hit_pages + fs.read_miss_pages - fs.readahead_pages) as f64;
    let page_cache = copy + alloc * fs.read_miss_pages as f64 / calls;
    assert!(
        (b.page_cache.mean - page_cache).abs() < 0.01 * page_cache,
        "{} vs {page_cache}: {fs:?}",
        b.page_cache.mean
    );
    assert!((b.sum_of_means() - f.latency_ns.mean).abs() < 1.0);

    // A buffered write is all page cache and file system (memory is plenty: no throttling); a direct read
    // has no page-cache part and the file system's direct-I/O path.
    let writer = run(&scenario_with(
        reader,
        &[&short[..], &["flow.reader.rw=\"randwrite\"", "host.fs.memory_bytes=1g"]].concat(),
    ));
    let b = &writer.flows[0].breakdown_ns;
    assert_eq!((b.page_cache.mean, b.file_system.mean, b.device_service.mean), (copy, fs_path, 0.0), "{b:?}");
    let direct = run(&scenario_with(reader, &[&short[..], &["flow.reader.direct=1"]].concat()));
    let b = &direct.flows[0].breakdown_ns;
    assert_eq!((b.page_cache.mean, b.file_system.mean), (0.0, fs_path), "{b:?}");
    assert!(b.device_service.mean > 1_000.0);
}

#[test]
fn fillsyncs_background_syncs_whole_files_and_its_burst_reaches_the_updates_tail() {
    // The memtable flushes and compaction: 1 MiB reads and writes beside the updates, an fdatasync per
    // 64 MiB file. A file's writeback fills the device for tens of ms, and the updates' fsyncs queue behind it.
    let text = "seed = 1\n[run]\nduration = \"2500ms\"\nwarmup = \"20ms\"\n[device]\npreset = \"optane-900p\"\n[[flow]]\nname \
                = \"fillsync\"\nclass = \"critical\"\nsize = \"1g\"\n";
    let with_background = run(&scenario_with(&format!("{text}app = \"fastresponse.fillsync\"\n"), &[]));
    let wal_only = run(&scenario_with(
        &format!("{text}rw = \"write\"\nbs = \"4k\"\nrate_iops = 2000\nrate_process = \"linear\"\ndirect = 0\nfsync = 1\nioengine = \"psync\"\n"),
        &[],
    ));
    let background = &with_background.flows[1];
    assert_eq!(
        (background.name.as_str(), background.class),
        ("fillsync-background", ullsim::request::Criticality::Normal)
    );
    let (reads, writes) = (background.read.as_ref().unwrap(), background.write.as_ref().unwrap());
    // ~51 reads and ~55 writes a second (Poisson: a wide margin).
    assert!((80..170).contains(&reads.completed) && (80..170).contains(&writes.completed), "{reads:?} {writes:?}");
    let file_syncs = background.flush.as_ref().expect("a finished file is synced");
    assert!(file_syncs.completed >= 1 && file_syncs.latency_ns.mean > 10e6, "{file_syncs:?}");
    let max_fsync = |r: &ullsim::sim::RunResults| r.flows[0].flush.as_ref().unwrap().latency_ns.max;
    assert!(
        max_fsync(&with_background) > 10 * max_fsync(&wal_only),
        "{} vs {}",
        max_fsync(&with_background),
        max_fsync(&wal_only)
    );
}

/// A WAL (4 KiB append + fsync) beside a 128 KiB writer, 300 ms, with `overrides`.
fn wal_beside_bulk(overrides: &[&str]) -> ullsim::sim::RunResults {
    let text = format!("{WAL}\n[[flow]]\nname = \"bulk\"\nrate_iops = 4000\n");
    let base =
        ["run.duration=\"300ms\"", "flow.bulk.rw=\"write\"", "flow.bulk.bs=\"128k\"", "flow.bulk.ioengine=\"psync\""];
    let more = ["flow.bulk.offset=\"1g\"", "flow.bulk.size=\"8g\""];
    run(&scenario_with(&text, &[&base[..], &more[..], overrides].concat()))
}

fn fsyncs(r: &ullsim::sim::RunResults) -> &ullsim::metrics::LatencySummary {
    &r.flows[0].flush.as_ref().expect("the WAL's fsyncs").latency_ns
}

/// The journal thread's commit writes are its own I/O: bfq queues them in the journal thread's queue
/// (`bfq_prepare_request` takes `current`'s I/O context), at ext4's `journal_ioprio` (best-effort 3), not in
/// the queue of the task whose fsync asked for the commit. Beside a direct writer (no writeback for the
/// commit to wait for), that costs the first fsyncs a stall: the WAL's queue, new and so weight-raised,
/// idles for its next request (a raised queue at least 20 ms) while the journal's log writes wait, since a
/// raised in-service queue with a short think time admits no injection. The stalls make the WAL's think
/// time long, and once its requests have followed the journal's completions within 4 ms three times,
/// `bfq_check_waker` makes the journal its waker, whose requests bfq then injects without limit: after that
/// the fsyncs run about as under `none`. When the journal's writes rode in the WAL's own queue (before),
/// they ended its idling at once and no fsync ever waited 20 ms.
#[test]
fn bfq_queues_the_journal_threads_writes_apart_and_injects_them_once_they_wake_the_fsync() {
    let direct = ["flow.bulk.direct=1"];
    let early = wal_beside_bulk(&[&direct[..], &["host.io_scheduler=\"bfq\"", "run.warmup=\"0ms\""]].concat());
    assert!(fsyncs(&early).max >= 20_000_000, "no fsync waited out a raised queue's idle slice: {:?}", fsyncs(&early));
    // After 100 ms the journal thread is the WAL's waker.
    let later = ["run.warmup=\"100ms\""];
    let bfq = wal_beside_bulk(&[&direct[..], &later[..], &["host.io_scheduler=\"bfq\""]].concat());
    let none = wal_beside_bulk(&[&direct[..], &later[..]].concat());
    let rate = |r: &ullsim::sim::RunResults| r.flows[0].flush.as_ref().unwrap().iops;
    // bfq costs 1.9 µs of CPU per request under a device-wide lock and dispatches the waker's requests one
    // call at a time: a third off none's rate at most, and the tail stays the device's (no idle slice).
    assert!(rate(&bfq) > 2.0 / 3.0 * rate(&none), "bfq {:.0} fsyncs/s, none {:.0}", rate(&bfq), rate(&none));
    assert!(fsyncs(&bfq).p99_9 < 2 * fsyncs(&none).p99_9, "bfq {:?}\nnone {:?}", fsyncs(&bfq), fsyncs(&none));
}

/// Beside buffered writeback (`scenarios/examples/fsync-beside-writeback.toml`), bfq's fsyncs wait out the
/// WAL's idle slice, and that alone: the commit waits for the other file's writeback in flight (T_D2, ext4's
/// ordered mode), which is asynchronous and sits in bfq's async queue, and while the WAL's queue (new, so
/// weight-raised for 3.75 s) idles for its next request, bfq sends that queue nothing: no injection for a
/// raised queue with a short think time, and once its think time is long, the async queue's next 1 MiB
/// write (charged 3 x 2048 sectors) does not fit the budget it has left (`bfq_choose_bfqq_for_injection`
/// and the waker injection both require it). Each fsync then takes the 20 ms a raised queue idles; without
/// idling (`slice_idle = 0`) bfq keeps pace with `none`.
#[test]
fn beside_writeback_bfq_fsyncs_wait_out_the_raised_wal_s_idle_slice() {
    let buffered = ["flow.bulk.direct=0", "host.fs.memory_bytes=64m", "run.warmup=\"50ms\""];
    let bfq = wal_beside_bulk(&[&buffered[..], &["host.io_scheduler=\"bfq\""]].concat());
    let phases = bfq.flows[0].fsync_phases_ns.as_ref().unwrap();
    assert!(fsyncs(&bfq).p50 >= 20_000_000, "{:?}", fsyncs(&bfq));
    assert!(phases.d2.mean > 0.9 * fsyncs(&bfq).mean, "T_D2 {} ns of {} ns", phases.d2.mean, fsyncs(&bfq).mean);
    let unplugged =
        wal_beside_bulk(&[&buffered[..], &["host.io_scheduler=\"bfq\"", "host.block.bfq_slice_idle=0"]].concat());
    let none = wal_beside_bulk(&buffered);
    let rate = |r: &ullsim::sim::RunResults| r.flows[0].flush.as_ref().unwrap().iops;
    assert!(
        rate(&unplugged) > 0.8 * rate(&none),
        "bfq without idling {:.0}/s, none {:.0}/s",
        rate(&unplugged),
        rate(&none)
    );
}
