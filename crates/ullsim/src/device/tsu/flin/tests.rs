//! FLIN's unit tests: stages 1-3, GC as write-slot work, the estimates.

use super::super::testing::{add, build, config, dispatch, next, timing, tx, view};
use super::gc_estimate::{DistinctPages, GC_ESTIMATE_DECAY};
use super::*;
use crate::config::device::TsuConfig;
use crate::config::units::Bytes;
use crate::engine::{MS, US};

fn flin(cfg: impl FnOnce(&mut TsuConfig)) -> Box<dyn TransactionScheduler> {
    let mut c = config("flin");
    cfg(&mut c);
    build(&c, 1, 1)
}

fn flows_of(txs: &TxArena, ids: &[TxId]) -> Vec<u32> {
    ids.iter().map(|&t| txs[t].flow).collect()
}

/// Dispatch until the die has nothing left, one time step each; the flows served, in order.
fn drain(s: &mut dyn TransactionScheduler, txs: &TxArena, from: Time) -> Vec<u32> {
    let mut served = Vec::new();
    for step in 0.. {
        let batch = next(s, txs, 0, from + step);
        if batch.is_empty() {
            break;
        }
        served.extend(flows_of(txs, &batch));
    }
    served
}

#[test]
fn stage1_a_low_intensity_flow_overtakes_a_high_intensity_backlog() {
    // One die, 8 KiB pages: a flow is low-intensity for reads below 4 reads per 10 ms epoch.
    let low_below_4 = |c: &mut TsuConfig| c.flin_alpha_read_bytes = Bytes(4 * 8192);
    for stage1 in [true, false] {
        let mut txs = TxArena::default();
        let mut s = flin(|c| {
            low_below_4(c);
            c.flin_stage1 = stage1;
        });
        // Epoch 0: flow 0 reads 10 pages, flow 1 one.
        for i in 0..10 {
            add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, i, 0, i as Time));
        }
        add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 10, 1, 10));
        assert_eq!(drain(s.as_mut(), &txs, 100).len(), 11);
        // Epoch 1: flow 0 (high-intensity) queues a backlog, then flow 1 (low-intensity) one read.
        for i in 0..8 {
            add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 20 + i, 0, 10 * MS + i as Time));
        }
        add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 30, 1, 10 * MS + 10));
        let order = drain(s.as_mut(), &txs, 10 * MS + 20);
        if stage1 {
            assert_eq!(order[0], 1, "the light flow's read goes to the head: {order:?}");
        } else {
            assert_eq!(order[8], 1, "FIFO insertion: behind the backlog: {order:?}");
        }
    }
}

#[test]
fn stage1_the_most_slowed_down_high_intensity_flow_moves_ahead_and_sets_a_barrier() {
    // alpha 0: after the first epoch every flow is high-intensity. Flow 0 queues 20 reads; flow 1's
    // single read has an estimated slowdown of ~21 against flow 0's ~1: F < 0.6, so it jumps to the
    // head (barrier). Flow 2's read then jumps too, but stops behind flow 1's.
    let mut txs = TxArena::default();
    let mut s = flin(|c| c.flin_alpha_read_bytes = Bytes(0));
    let at = 10 * MS;
    for i in 0..20 {
        add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, i, 0, at));
    }
    add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 20, 1, at));
    add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 21, 2, at));
    let order = drain(s.as_mut(), &txs, at + 1);
    assert_eq!(&order[..3], &[1, 2, 0], "{order:?}");
}

#[test]
fn stage2_serves_classes_8_4_2_1_when_all_are_backlogged_and_round_robin_when_off() {
    for (stage2, expected) in [(true, [8, 4, 2, 1]), (false, [4, 4, 4, 3])] {
        let mut txs = TxArena::default();
        let mut s = flin(|c| c.flin_stage2 = stage2);
        let classes = [NvmePriority::Urgent, NvmePriority::High, NvmePriority::Medium, NvmePriority::Low];
        for (flow, &priority) in classes.iter().enumerate() {
            for i in 0..20 {
                let mut t = tx(Purpose::UserRead, 0, 0, flow as u32 * 100 + i, flow as u32, 0);
                t.priority = priority;
                add(s.as_mut(), &mut txs, t);
            }
        }
        let mut served = [0; 4];
        for step in 0..15 {
            let batch = next(s.as_mut(), &txs, 0, 1 + step);
            assert_eq!(batch.len(), 1);
            served[class_index(txs[batch[0]].priority)] += 1;
        }
        assert_eq!(served, expected, "stage 2 {stage2}");
    }
}

#[test]
fn stage3_serves_the_write_only_when_it_waited_proportionally_longer() {
    let read_and_write = |stage3: bool, write_at: Time, read_at: Time, now: Time| {
        let mut txs = TxArena::default();
        let mut s = flin(|c| c.flin_stage3 = stage3);
        add(s.as_mut(), &mut txs, tx(Purpose::UserWrite, 0, 0, 1, 0, write_at));
        add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 2, 1, read_at));
        let first = next(s.as_mut(), &txs, 0, now);
        txs[first[0]].purpose
    };
    // The write waited 10 ms (PW = 10 ms / 1.32 ms = 7.5), the read 1 us (PW = 0.01): write first.
    assert_eq!(read_and_write(true, 0, 10 * MS, 10 * MS + US), Purpose::UserWrite);
    // Both waited 50 us: PW 0.04 for the write, 0.5 for the read: read first.
    assert_eq!(read_and_write(true, 0, 0, 50 * US), Purpose::UserRead);
    // Stage 3 off: reads first however long the write waited.
    assert_eq!(read_and_write(false, 0, 10 * MS, 10 * MS + US), Purpose::UserRead);
}

#[test]
fn stage3_wait_counts_from_the_queue_or_from_the_slot() {
    // A write and two reads queued at 0; the die dispatches at 10 ms and again at 12 ms.
    let order = |wait: Stage3Wait| {
        let mut txs = TxArena::default();
        let mut s = flin(|c| c.flin_stage3_wait = wait);
        add(s.as_mut(), &mut txs, tx(Purpose::UserWrite, 0, 0, 1, 0, 0));
        add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 2, 1, 0));
        add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 3, 1, 0));
        [10 * MS, 12 * MS].map(|now| txs[next(s.as_mut(), &txs, 0, now)[0]].purpose)
    };
    // From the queue: at 10 ms the write has waited 10 ms (PW 7.6), the read 10 ms too (PW 100): the
    // read; at 12 ms the second read has PW 120 against the write's 9.1: the read again.
    assert_eq!(order(Stage3Wait::Queue), [Purpose::UserRead, Purpose::UserRead]);
    // From the slot: both entered their slots at 10 ms (PW 0 each: the read); at 12 ms the write has
    // sat 2 ms in its slot (PW 1.5) and the second read just entered it (PW 0): the write.
    assert_eq!(order(Stage3Wait::Slot), [Purpose::UserRead, Purpose::UserWrite]);
}

#[test]
fn stage3_a_background_destage_stalls_nobody_until_host_writes_wait_for_the_buffer() {
    // A destage (req NONE: its host write completed from the write buffer) queued at 0 and a read that
    // waited 1 us, dispatched at 10 ms.
    let first = |blocked_since: Option<Time>| {
        let mut txs = TxArena::default();
        let mut s = flin(|_| {});
        add(s.as_mut(), &mut txs, tx(Purpose::UserWrite, 0, 0, NONE, 0, 0));
        add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 2, 1, 10 * MS - US));
        let view = DispatchView { host_writes_blocked_since: blocked_since, ..view(&txs, 10 * MS) };
        txs[dispatch(s.as_mut(), 0, &view)[0]].purpose
    };
    // Buffer has room: the destage's 10 ms wait delays no one, the read goes first.
    assert_eq!(first(None), Purpose::UserRead);
    // Host writes wait for buffer space since 9 ms: the destage counts 1 ms (PW 0.76 > the read's 0.013).
    assert_eq!(first(Some(9 * MS)), Purpose::UserWrite);
    // ... since 9.999 ms: 1 us of stall (PW 0.0008) against the read's 0.013: the read.
    assert_eq!(first(Some(10 * MS - US)), Purpose::UserRead);
}

#[test]
fn stage3_a_winning_write_slot_triggers_due_gc_and_a_flows_gc_share_lowers_its_writes_pw() {
    let purpose_at = |s: &mut dyn TransactionScheduler, txs: &TxArena, now: Time| {
        txs[dispatch(s, 0, &DispatchView { gc_pace: 1.0, ..view(txs, now) })[0]].purpose
    };
    let mut txs = TxArena::default();
    let mut s = flin(|_| {});
    add(s.as_mut(), &mut txs, tx(Purpose::UserWrite, 0, 0, 1, 0, 0));
    add(s.as_mut(), &mut txs, tx(Purpose::UserWrite, 0, 0, 2, 0, 0));
    add(s.as_mut(), &mut txs, tx(Purpose::Gc, 0, 0, NONE, 0, 0));
    // No credit yet: the write goes; it earns GC one transaction (gc_pace 1), so the next time the
    // write slot wins, GC runs instead and the write keeps its slot.
    assert_eq!(purpose_at(s.as_mut(), &txs, 10), Purpose::UserWrite);
    assert_eq!(purpose_at(s.as_mut(), &txs, 20), Purpose::Gc);
    assert_eq!(purpose_at(s.as_mut(), &txs, 30), Purpose::UserWrite);

    // A write that waited 2 ms (PW 1.5) beats a read that waited 120 us (PW 1.2)...
    let write_vs_read = |gc_ns: Time| {
        let mut txs = TxArena::default();
        let mut s = flin(|_| {});
        // Epoch 0: flow 0 writes one page and is charged `gc_ns` of GC for it.
        add(s.as_mut(), &mut txs, tx(Purpose::UserWrite, 0, 0, 9, 0, 0));
        next(s.as_mut(), &txs, 0, 1);
        s.completed(0, &[], &CompletionView { txs: &txs, now: 5 * MS, gc_charges: &[(0, gc_ns)] });
        // Epoch 1: the estimate is `gc_ns` per page.
        let at = 10 * MS;
        add(s.as_mut(), &mut txs, tx(Purpose::UserWrite, 0, 0, 1, 0, at));
        add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 2, 1, at + 1880 * US));
        txs[next(s.as_mut(), &txs, 0, at + 2 * MS)[0]].purpose
    };
    assert_eq!(write_vs_read(0), Purpose::UserWrite);
    // ... unless its flow was charged 1 ms of GC per page written (PW 2 / 2.3 = 0.86): its own GC is
    // part of its service, not interference.
    assert_eq!(write_vs_read(MS), Purpose::UserRead);
}

#[test]
fn gc_runs_in_the_write_slot_of_the_flow_whose_writes_made_it_due_not_of_a_low_gc_flow() {
    let purpose_and_flow = |s: &mut dyn TransactionScheduler, txs: &TxArena, now: Time| {
        let batch = dispatch(s, 0, &DispatchView { gc_pace: 1.0, ..view(txs, now) });
        (txs[batch[0]].purpose, txs[batch[0]].flow)
    };
    let mut txs = TxArena::default();
    let mut s = flin(|_| {});
    // The high-GC flow 0 programs a page: its writes now owe one GC transaction (gc_pace 1).
    add(s.as_mut(), &mut txs, tx(Purpose::UserWrite, 0, 0, 1, 0, 0));
    assert_eq!(purpose_and_flow(s.as_mut(), &txs, 10), (Purpose::UserWrite, 0));
    // GC is queued; the low-GC flow 1's write takes the write slot: it owes nothing, so it goes (a die-wide
    // credit would have run flow 0's GC in its place).
    add(s.as_mut(), &mut txs, tx(Purpose::Gc, 0, 0, NONE, 0, 15));
    add(s.as_mut(), &mut txs, tx(Purpose::UserWrite, 0, 0, 2, 1, 15));
    assert_eq!(purpose_and_flow(s.as_mut(), &txs, 20), (Purpose::UserWrite, 1));
    // Flow 0's next write triggers the GC its first one made due, and keeps its slot.
    add(s.as_mut(), &mut txs, tx(Purpose::UserWrite, 0, 0, 3, 0, 25));
    assert_eq!(purpose_and_flow(s.as_mut(), &txs, 30), (Purpose::Gc, NONE));
    assert_eq!(purpose_and_flow(s.as_mut(), &txs, 40), (Purpose::UserWrite, 0));
}

#[test]
fn past_the_hard_threshold_gc_bypasses_the_slots_for_a_bounded_run_then_one_read_goes_never_a_write() {
    let mut txs = TxArena::default();
    let mut s = flin(|_| {});
    for i in 0..10 {
        add(s.as_mut(), &mut txs, tx(Purpose::Gc, 0, 0, NONE, 0, i));
    }
    add(s.as_mut(), &mut txs, tx(Purpose::UserWrite, 0, 0, 1, 0, 0));
    add(s.as_mut(), &mut txs, tx(Purpose::UserRead, 0, 0, 2, 1, 0));
    let urgent = |s: &mut dyn TransactionScheduler, txs: &TxArena, now: Time| {
        txs[dispatch(s, 0, &DispatchView { gc_urgent: true, ..view(txs, now) })[0]].purpose
    };
    let order: Vec<Purpose> = (0..URGENT_GC_RUN as Time + 3).map(|t| urgent(s.as_mut(), &txs, MS + t)).collect();
    let mut expected = vec![Purpose::Gc; URGENT_GC_RUN as usize];
    expected.extend([Purpose::UserRead, Purpose::Gc, Purpose::Gc]);
    assert_eq!(order, expected, "the write waits while the threshold is crossed");
    // Back above the threshold, the write slot competes again (its flow owes no GC: the write goes).
    assert_eq!(txs[next(s.as_mut(), &txs, 0, 2 * MS)[0]].purpose, Purpose::UserWrite);
}

#[test]
fn one_alone_clock_per_flow_and_die_serves_its_reads_and_writes() {
    // Flow 0 queues a write, then a read, at the same instant: alone, the read waits behind the write.
    let mut txs = TxArena::default();
    let mut s = Flin::new(&SchedulerSetup {
        dies: 1,
        planes_per_die: 1,
        page_bytes: 8192,
        timing: timing(),
        config: &config("flin"),
    });
    let w = txs.insert(tx(Purpose::UserWrite, 0, 0, 1, 0, 0));
    s.enqueue(w, &txs);
    let r = txs.insert(tx(Purpose::UserRead, 0, 0, 2, 0, 0));
    s.enqueue(r, &txs);
    let write_service = service_ns(&timing(), &txs[w]);
    let read_service = service_ns(&timing(), &txs[r]);
    let read_entry = s.dies[0].queues[READ][class_index(NvmePriority::Medium)].entries[0];
    assert_eq!(read_entry.alone_finish, write_service + read_service);
    assert_eq!(s.dies[0].flows[0].alone_finish, write_service + read_service);
}

#[test]
fn the_shared_time_and_stage3_wait_count_from_the_requests_arrival_at_the_device() {
    // A read whose request arrived at 0 but reached the TSU at 10 ms (e.g. after a mapping read).
    let mut t = tx(Purpose::UserRead, 0, 0, 2, 1, 10 * MS);
    t.arrived_at = 0;
    let mut txs = TxArena::default();
    let mut s = flin(|_| {});
    add(s.as_mut(), &mut txs, t);
    // Stage 3: a write that waited 10 ms (PW 7.6) loses to the read, which waited 10 ms + 10 us since
    // its arrival (PW 100); counted from its enqueue (10 us, PW 0.1) the write would win.
    add(s.as_mut(), &mut txs, tx(Purpose::UserWrite, 0, 0, 1, 2, 0));
    let first = next(s.as_mut(), &txs, 0, 10 * MS + 10 * US);
    assert_eq!(txs[first[0]].purpose, Purpose::UserRead);
    // Stage 1's estimate: T_shared of an entry counts from the arrival.
    let e = Entry {
        tx: 0,
        flow: 0,
        plane: 0,
        op: FlashOp::Read,
        arrived_at: 100,
        enqueued_at: 900,
        service: 100,
        alone_finish: 1000,
        barrier: false,
    };
    let mut q = ClassQueue::default();
    q.insert(0, e);
    let mut est = Estimates::default();
    assert_eq!(est.compute(&q, 1000, 0, 0), 1000, "(1000 - 100) + 100 of service");
    assert!((est.mean(0) - 10.0).abs() < 1e-12, "S = 1000 / T_alone 100");
}

#[test]
fn the_gc_cost_estimate_is_per_epoch_decayed_and_weighted_by_storage_usage() {
    let mut gc = GcEstimate::new(10 * MS);
    // Epoch 0: flows 0 and 1 write 100 pages each; flow 0 over 100 distinct pages, flow 1 rewrites 10.
    for i in 0..100 {
        gc.host_write(0, 1_000 + i);
        gc.host_write(1, i % 10);
    }
    gc.charge(0, 100 * MS);
    gc.charge(1, 100 * MS);
    assert_eq!(gc.per_page(0), 0, "nothing until the epoch ends");
    gc.roll(10 * MS);
    // Same writes, same charges: the flow keeping 10x the data gets ~10x the GC per page. Usage counts
    // are estimates (HyperLogLog, exact at these counts to a few %).
    let (p0, p1) = (gc.per_page(0) as f64, gc.per_page(1) as f64);
    assert!((8.0..12.0).contains(&(p0 / p1)), "{p0} vs {p1}");
    // The re-weighting keeps the total: 200 ms over 100 + 100 pages.
    assert!(((p0 + p1) * 100.0 - 200.0 * MS as f64).abs() < 0.01 * 200.0 * MS as f64, "{p0} + {p1}");
    // Two epochs later with no GC (one closed epoch, one idle): the past is decayed by 0.5^2, but the
    // pages with it, so the per-page cost holds...
    gc.roll(30 * MS);
    assert_eq!(gc.per_page(0) as f64, p0);
    // ... until new writes without GC dilute it: 100 fresh pages against the decayed 25.
    for i in 0..100 {
        gc.host_write(0, 1_000 + i);
    }
    gc.roll(40 * MS);
    let expected = p0 * 25.0 * GC_ESTIMATE_DECAY / (25.0 * GC_ESTIMATE_DECAY + 100.0);
    assert!((gc.per_page(0) as f64 - expected).abs() < 2.0, "{} vs {expected}", gc.per_page(0));
}

#[test]
fn distinct_pages_counts_distinct_logical_pages() {
    for n in [10u64, 1_000, 100_000] {
        let mut d = DistinctPages::default();
        for _ in 0..3 {
            for lpa in 0..n {
                d.add(lpa * 7); // every page written three times
            }
        }
        let count = d.count();
        assert!((count / n as f64 - 1.0).abs() < 0.2, "{n}: {count}");
    }
}

#[test]
fn slowdown_and_fairness_estimates_follow_the_formulas() {
    let entry = |flow: u32, enqueued_at: Time, alone_finish: Time| Entry {
        tx: 0,
        flow,
        plane: 0,
        op: FlashOp::Read,
        arrived_at: enqueued_at,
        enqueued_at,
        service: 100,
        alone_finish,
        barrier: false,
    };
    let mut q = ClassQueue::default();
    q.insert(0, entry(0, 900, 1000)); // T_shared = 100 + 50 + 100 = 250, T_alone = 100: S = 2.5
    q.insert(1, entry(1, 1000, 1100)); // T_shared = 0 + 50 + 200 = 250, T_alone = 100: S = 2.5
    q.insert(2, entry(0, 950, 1100)); // T_shared = 50 + 50 + 300 = 400, T_alone = 150: S = 8/3
    let mut est = Estimates::default();
    let shared = est.compute(&q, 1000, 50, 2);
    assert_eq!(shared, 400);
    assert_eq!(est.shared, vec![250, 250, 400]);
    let flow0 = (2.5 + 8.0 / 3.0) / 2.0;
    assert!((est.mean(0) - flow0).abs() < 1e-12);
    assert!((est.mean(1) - 2.5).abs() < 1e-12);
    let (fairness, max) = est.fairness();
    assert!((fairness - 2.5 / flow0).abs() < 1e-12, "F = min S / max S: {fairness}");
    assert!((max - flow0).abs() < 1e-12);
    // Moving the last entry (flow 0) ahead of entry 1 (flow 1) would give S = 2 and 3.5, F = 0.64:
    // less fair, so it stays (and it may not pass entry 0, of its own flow).
    assert_eq!(best_position(&q, &mut est, 2, shared, 0), 2);

    // [flow 0, flow 0, flow 1], all just queued, nothing running: S = 1, 1, 3 (F = 1/3). One step
    // ahead: S = 1, 1.5 | 2 (F = 1.25 / 2 = 0.625); two steps: 2, 1.5 | 1 (F = 1 / 1.75 = 0.57).
    let mut q = ClassQueue::default();
    q.insert(0, entry(0, 1000, 1100));
    q.insert(1, entry(0, 1000, 1200));
    q.insert(2, entry(1, 1000, 1100));
    let shared = est.compute(&q, 1000, 0, 2);
    assert_eq!(est.fairness().0, 1.0 / 3.0);
    assert_eq!(best_position(&q, &mut est, 2, shared, 0), 1);
}
