//! The file system's shared locks on many cores (host/fs/locks.rs): the journal's lines every handle
//! touches, the commit's T_LOCKED window, the files' `i_pages` locks.

use crate::common;

use common::{json, run, scenario_with, WAL};
use ullsim::sim::RunResults;

fn fs_counters(r: &RunResults) -> ullsim::host::fs::FsCounters {
    r.host.fs.expect("a run with files reports the file system")
}

/// `n` buffered 4 KiB writers of their own files, flow `w{i}` pinned to core `i`, each 2,000 writes/s,
/// started 500 µs / n apart: their writes come in turn, core 0, 1, ..., n - 1, 0, ... No fsync, and memory
/// enough that nothing is written back: no commit, no flusher.
fn writers_in_turn(n: u32) -> String {
    let mut text = String::from(
        "seed = 1\n[run]\nduration = \"60ms\"\nwarmup = \"10ms\"\ncheck_invariants = true\n\
         [device]\npreset = \"optane-ull\"\n",
    );
    for i in 0..n {
        text += &format!(
            "[[flow]]\nname = \"w{i}\"\nrw = \"write\"\nbs = \"4k\"\nioengine = \"psync\"\ndirect = 0\n\
             size = \"64m\"\noffset = \"{}m\"\nrate_iops = 2000\ncpus_allowed = \"{i}\"\nstartdelay = \"{}us\"\n",
            64 * i,
            500 * i / n
        );
    }
    text
}

#[test]
fn writers_taking_turns_on_different_cores_pay_two_transfers_per_write() {
    for (n, transfer) in [(2, 40), (4, 40), (4, 100)] {
        let set = format!("host.cpu.cache_line_transfer_ns={transfer}");
        let r = run(&scenario_with(&writers_in_turn(n), &[&set]));
        let fs = fs_counters(&r);
        // Every write appends one new page: dirtied pages count the writes, in the same step as their lock.
        assert!(fs.dirtied_pages > 80 * u64::from(n), "{fs:?}");
        assert_eq!(fs.journal_commits, 0);
        // The previous handle was another core's: j_state_lock's word and t_updates each move once. Each
        // writer has its own file: its i_pages lock never moves.
        assert_eq!(fs.lock_wait_ns, 2 * transfer * fs.dirtied_pages, "{n} writers, {transfer} ns: {fs:?}");
        assert_eq!(fs.locked_handle_waits, 0);
        // Each write's latency is longer by exactly those transfers.
        let free = run(&scenario_with(&writers_in_turn(n), &["host.cpu.cache_line_transfer_ns=0"]));
        for (a, b) in r.flows.iter().zip(&free.flows) {
            let (a, b) = (&a.write.as_ref().unwrap().latency_ns, &b.write.as_ref().unwrap().latency_ns);
            assert_eq!((a.min, a.max), (b.min + 2 * transfer, b.max + 2 * transfer), "{n} writers");
        }
    }
}

#[test]
fn one_core_pays_nothing_for_the_file_systems_locks() {
    // A committing WAL and a buffered bulk writer with writeback, all on one core: the same results whatever
    // a cache line's transfer costs, and nothing counted.
    let text = format!("{WAL}\n[[flow]]\nname = \"bulk\"\nrate_iops = 4000\n");
    let bulk = [crate::fs::BULK_WRITER, &["host.cores=1"]].concat();
    let with = |transfer: &str| {
        let mut o = bulk.to_vec();
        o.push(transfer);
        run(&scenario_with(&text, &o))
    };
    let (costly, free) = (with("host.cpu.cache_line_transfer_ns=1000"), with("host.cpu.cache_line_transfer_ns=0"));
    let fs = fs_counters(&costly);
    assert!(fs.journal_commits > 100 && fs.writeback_pages > 1_000, "{fs:?}");
    assert_eq!((fs.lock_wait_ns, fs.locked_handle_waits, fs.locked_handle_wait_ns), (0, 0, 0));
    assert_eq!(json(&costly), json(&free));
}

#[test]
fn a_write_during_a_commits_locked_window_sleeps_until_it_ends() {
    // The WAL (core 0) commits after every write; a closed-loop buffered writer on core 1 starts a write
    // every µs or so, so some start while the journal thread (on core 2 or 3) holds the transaction locked.
    let text = format!("{WAL}\n[[flow]]\nname = \"busy\"\n");
    let busy: Vec<String> = [
        ("wal", "cpus_allowed", "\"0\""),
        ("busy", "cpus_allowed", "\"1\""),
        ("busy", "rw", "\"write\""),
        ("busy", "bs", "\"4k\""),
        ("busy", "ioengine", "\"psync\""),
        ("busy", "direct", "0"),
        ("busy", "offset", "\"1g\""),
        ("busy", "size", "\"8g\""),
    ]
    .iter()
    .map(|(flow, key, value)| format!("flow.{flow}.{key}={value}"))
    .collect();
    let busy: Vec<&str> = busy.iter().map(String::as_str).collect();
    let r = run(&scenario_with(&text, &busy));
    let fs = fs_counters(&r);
    assert!(fs.journal_commits > 100, "{fs:?}");
    assert!(fs.locked_handle_waits > 10, "{fs:?}");
    // Each waits at most the window: 1 µs of the commit's set-up and its pull of the two journal lines.
    let mean_wait = fs.locked_handle_wait_ns / fs.locked_handle_waits;
    assert!(mean_wait > 0 && fs.locked_handle_wait_ns <= fs.locked_handle_waits * (1_000 + 2 * 40), "{fs:?}");
    // A write that waited took the wait, a wake-up and the write: longer than the quickest write by more
    // than the mean wait.
    let w = &r.flows[1].write.as_ref().unwrap().latency_ns;
    assert!(w.max > w.min + mean_wait, "{w:?}, mean wait {mean_wait} ns");
    // No commit, no window: nothing waits.
    let alone = run(&scenario_with(&text, &[&busy[..], &["flow.wal.fsync=1000000"]].concat()));
    assert_eq!(fs_counters(&alone).locked_handle_waits, 0);
}
