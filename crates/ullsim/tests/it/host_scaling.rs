//! Host scaling (issue 31 §1): many cores submitting through one device's I/O scheduler. mq-deadline and
//! bfq take one queue-wide spinlock per request (`dd->lock`, `bfqd->lock`); every acquisition by another core
//! than the last holder moves the lock word's cache line (`host.cpu.cache_line_transfer_ns`), so on many
//! cores their throughput stays below 1 / (hold times + transfers); `none` and `kyber` take no such lock.
//! Runs `scenarios/host-scaling/randread-qd128.toml` on the what-if drive of docs/validation.md (4 firmware
//! cores, reads from a 16 MiB region its DRAM holds: bound by its PCIe link near 1.6M IOPS).

use crate::common;

use common::{run, scenario_with};

const FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/host-scaling/randread-qd128.toml");

/// Scheduler hold times per request in ns (insert + dispatch + completion, `host/block/sched/*.rs`).
const MQ_DEADLINE_HOLD: f64 = 350.0 + 300.0 + 50.0;
const BFQ_HOLD: f64 = 800.0 + 700.0 + 400.0;

/// IOPS and the flow's mean latency (ns) with `jobs` pinned jobs (QD128 in all) under `scheduler`, with
/// `transfer_ns` per cache-line transfer.
fn point(scheduler: &str, jobs: u32, transfer_ns: u64) -> (f64, f64) {
    let text = std::fs::read_to_string(FILE).expect("the scenario file");
    let s = scenario_with(
        &text,
        &[
            "run.duration=15ms",
            "run.warmup=5ms",
            "flow.fio.size=16MiB",
            "device.controller.firmware_cores=4",
            &format!("flow.fio.numjobs={jobs}"),
            &format!("flow.fio.iodepth={}", 128_u32.div_ceil(jobs)),
            &format!("host.io_scheduler={scheduler}"),
            &format!("host.cpu.cache_line_transfer_ns={transfer_ns}"),
        ],
    );
    let r = run(&s);
    (r.flows[0].iops, r.flows[0].latency_ns.mean)
}

/// On ten cores each request takes the lock three times from cores that mostly did not hold it last:
/// mq-deadline and bfq serve fewer than 1 / (hold + one transfer per acquisition), where free transfers
/// would let them reach the plain FCFS bound 1 / hold.
#[test]
fn on_ten_cores_the_lock_words_transfers_bound_mq_deadline_and_bfq() {
    for (scheduler, hold) in [("mq-deadline", MQ_DEADLINE_HOLD), ("bfq", BFQ_HOLD)] {
        let (free, _) = point(scheduler, 10, 0);
        let (paid, _) = point(scheduler, 10, 40);
        println!("{scheduler}: {free:.0} IOPS with free transfers, {paid:.0} with 40 ns");
        assert!(free > 0.93e9 / hold && free <= 1e9 / hold, "{scheduler}: near the FCFS bound: {free:.0}");
        assert!(paid < 1e9 / (hold + 3.0 * 40.0), "{scheduler}: transfers on the lock's path: {paid:.0}");
    }
}

/// `none` and `kyber` take no queue-wide lock: the transfer cost changes nothing and they reach the drive's
/// limit, above the lock-bound schedulers.
#[test]
fn none_and_kyber_take_no_queue_wide_lock_and_reach_the_drive() {
    let (deadline, _) = point("mq-deadline", 10, 40);
    for scheduler in ["none", "kyber"] {
        let (free, free_mean) = point(scheduler, 10, 0);
        let (paid, paid_mean) = point(scheduler, 10, 40);
        assert_eq!((free, free_mean), (paid, paid_mean), "{scheduler}");
        assert!(paid > 1.3 * deadline, "{scheduler}: {paid:.0} vs mq-deadline's {deadline:.0}");
    }
}

/// One job on one core always finds the lock word in its own cache: any transfer cost gives the old result.
#[test]
fn one_core_never_pays_a_transfer() {
    for scheduler in ["mq-deadline", "bfq"] {
        assert_eq!(point(scheduler, 1, 0), point(scheduler, 1, 1_000), "{scheduler}");
    }
}

/// With one NVMe queue pair for ten cores (`host.queue_pairs = 1`), every core's commands go through one
/// submission queue whose lock (`nvmeq->sq_lock`) the cores take in turn: under `none`, whose own work takes
/// no shared lock, the wait appears and throughput falls; with a queue pair per core nothing waits.
#[test]
fn cores_sharing_one_queue_pair_wait_for_its_submission_lock() {
    let text = std::fs::read_to_string(FILE).expect("the scenario file");
    let at = |pairs: u32| {
        let sets = [
            "run.duration=10ms",
            "run.warmup=3ms",
            "flow.fio.size=16MiB",
            "device.controller.firmware_cores=4",
            "flow.fio.numjobs=10",
            "flow.fio.iodepth=13",
            "flow.fio.iodepth_batch_submit=1",
            &format!("host.queue_pairs={pairs}"),
        ];
        run(&scenario_with(&text, &sets))
    };
    let (own, shared) = (at(0), at(1));
    assert_eq!(own.host.block.lock_wait_ns, 0);
    assert!(shared.host.block.lock_wait_ns > 0);
    assert!(shared.flows[0].iops < own.flows[0].iops, "{} vs {}", shared.flows[0].iops, own.flows[0].iops);
}
