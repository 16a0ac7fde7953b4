//! One direction of the PCIe link, shared by every transfer crossing it.
//!
//! A real link interleaves transfers a TLP (max payload size, typically 256 B) at a time, so a 4 KB read
//! beside a queue of 128 KB reads gets its share of the link instead of waiting behind every one of them.
//! This models that as processor sharing: the `n` transfers in flight each progress at `1/n` of the
//! direction's rate, the fluid limit of round robin in max-payload chunks. It costs one event per transfer
//! completion (plus at most one superseded event per arrival), never one per TLP.
//!
//! Control traffic (64-byte commands fetched, 16-byte completion entries and interrupt messages posted) is a
//! single small TLP that goes out between data TLPs: it delays the data in flight by its own wire time and
//! has a fixed latency itself (already part of `command_fetch_ns` / `completion_ns`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::Link;
use crate::engine::Time;

/// Virtual service is kept in units of 1/720,720 ns (the least common multiple of 1..=16), so that sharing
/// a nanosecond among up to 16 transfers divides exactly and more loses at most a unit per update.
const UNITS_PER_NS: u128 = 720_720;

#[derive(Debug, Default)]
pub struct LinkDirection {
    /// Transfers in flight: (service a transfer must have received to be done, in units; its id).
    active: BinaryHeap<Reverse<(u128, u32)>>,
    /// Service each transfer in flight has received since the link last went idle (units).
    served: u128,
    /// Time `served` and `stall_ns` were last brought up to date.
    updated_at: Time,
    /// Control TLPs queued ahead of the data: the data makes no progress until they are sent (ns).
    stall_ns: Time,
    /// Bumped whenever a new completion check is scheduled, so earlier checks are recognized as stale.
    generation: u32,
    /// When the current check is scheduled, if one is.
    check_at: Option<Time>,
    /// Time the direction carried data or control traffic (for utilization).
    busy_ns: Time,
}

impl LinkDirection {
    /// Busy time in the `elapsed` ns after the last update: all of it while data is in flight, else the
    /// control TLPs still to send.
    fn busy_between(&self, elapsed: Time) -> Time {
        if self.active.is_empty() {
            elapsed.min(self.stall_ns)
        } else {
            elapsed
        }
    }

    fn advance(&mut self, now: Time) {
        let mut elapsed = now - self.updated_at;
        self.busy_ns += self.busy_between(elapsed);
        self.updated_at = now;
        let stalled = elapsed.min(self.stall_ns);
        self.stall_ns -= stalled;
        elapsed -= stalled;
        if let Some(share) = (elapsed as u128 * UNITS_PER_NS).checked_div(self.active.len() as u128) {
            self.served += share;
        }
    }

    /// When the first transfer in flight will be done, if nothing else arrives.
    fn next_finish(&self, now: Time) -> Option<Time> {
        let &Reverse((tag, _)) = self.active.peek()?;
        let remaining_ps = tag.saturating_sub(self.served);
        // Rounded up, so the transfer is done (served >= tag) when the check runs.
        let ns = (remaining_ps * self.active.len() as u128).div_ceil(UNITS_PER_NS);
        Some(now + self.stall_ns + ns as Time)
    }

    /// Schedule a check at `at` unless one is already due no later; returns the new check's time.
    fn check_by(&mut self, at: Option<Time>) -> Option<Time> {
        let at = at?;
        if self.check_at.is_some_and(|due| due <= at) {
            return None; // it fires first and schedules the next
        }
        self.generation = self.generation.wrapping_add(1);
        self.check_at = Some(at);
        Some(at)
    }
}

impl Link for LinkDirection {
    fn start(&mut self, now: Time, id: u32, service_ns: Time) -> Option<Time> {
        self.advance(now);
        self.active.push(Reverse((self.served + service_ns as u128 * UNITS_PER_NS, id)));
        let next = self.next_finish(now);
        self.check_by(next)
    }

    /// A control TLP goes out ahead of the data in flight: it delays them by its wire time.
    fn control(&mut self, now: Time, service_ns: Time) {
        self.advance(now);
        self.stall_ns += service_ns;
        // Completions only move later: a check already scheduled fires early and reschedules.
    }

    /// Transfers done go out in order of completion, ties by id.
    fn check(&mut self, now: Time, generation: u32, done: &mut Vec<u32>) -> Option<Time> {
        if generation != self.generation {
            return None; // superseded by an earlier check
        }
        self.check_at = None;
        self.advance(now);
        while let Some(&Reverse((tag, id))) = self.active.peek() {
            if tag > self.served {
                break;
            }
            self.active.pop();
            done.push(id);
        }
        if self.active.is_empty() {
            self.served = 0; // a new busy period; keeps the virtual clock small
        }
        let next = self.next_finish(now);
        self.check_by(next)
    }

    fn generation(&self) -> u32 {
        self.generation
    }

    fn busy_ns(&self, now: Time) -> Time {
        self.busy_ns + self.busy_between(now.saturating_sub(self.updated_at))
    }

    fn in_flight(&self) -> usize {
        self.active.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drive one direction to completion: `arrivals` are (time, id, service ns), sorted by time. Returns
    /// each id's completion time.
    fn simulate(arrivals: &[(Time, u32, Time)], controls: &[(Time, Time)]) -> Vec<(u32, Time)> {
        let mut link = LinkDirection::default();
        // A tiny event list: (time, kind, payload), kind 0 = check (payload generation), 1 = arrival, 2 = control.
        let mut events: Vec<(Time, u8, u64)> = Vec::new();
        for (i, &(at, _, _)) in arrivals.iter().enumerate() {
            events.push((at, 1, i as u64));
        }
        for (i, &(at, _)) in controls.iter().enumerate() {
            events.push((at, 2, i as u64));
        }
        let mut finished = Vec::new();
        let mut done = Vec::new();
        while !events.is_empty() {
            let next = (0..events.len()).min_by_key(|&i| (events[i].0, events[i].1)).expect("non-empty");
            let (now, kind, payload) = events.swap_remove(next);
            let check = match kind {
                0 => {
                    done.clear();
                    let check = link.check(now, payload as u32, &mut done);
                    finished.extend(done.iter().map(|&id| (id, now)));
                    check
                }
                1 => {
                    let (_, id, service) = arrivals[payload as usize];
                    link.start(now, id, service)
                }
                _ => {
                    link.control(now, controls[payload as usize].1);
                    None
                }
            };
            if let Some(at) = check {
                events.push((at, 0, link.generation() as u64));
            }
        }
        finished
    }

    fn finish_of(finished: &[(u32, Time)], id: u32) -> Time {
        finished.iter().find(|&&(i, _)| i == id).map(|&(_, t)| t).expect("transfer finished")
    }

    #[test]
    fn a_lone_transfer_takes_its_service_time() {
        let finished = simulate(&[(100, 7, 1_040)], &[]);
        assert_eq!(finished, vec![(7, 1_140)]);
    }

    #[test]
    fn equal_transfers_started_together_share_the_link_and_finish_together() {
        let finished = simulate(&[(0, 1, 1_000), (0, 2, 1_000), (0, 3, 1_000)], &[]);
        for id in 1..=3 {
            assert_eq!(finish_of(&finished, id), 3_000);
        }
    }

    #[test]
    fn a_small_transfer_beside_a_large_one_gets_half_the_link_not_the_back_of_the_queue() {
        // 128 KB (~33 us alone) starts first; a 4 KB (~1 us alone) arrives 1 us later. Processor sharing:
        // the small one takes 2 us, the large one is delayed by the small one's 1 us.
        let finished = simulate(&[(0, 1, 33_000), (1_000, 2, 1_000)], &[]);
        assert_eq!(finish_of(&finished, 2), 3_000);
        assert_eq!(finish_of(&finished, 1), 34_000);
    }

    #[test]
    fn work_is_conserved_whatever_the_arrivals() {
        // The link never idles while work is in flight, so the last completion is where a first-come
        // first-served server (also work-conserving) would finish: the busy-period recurrence below.
        let arrivals: Vec<(Time, u32, Time)> = (0..50).map(|i| (i * 700, i as u32, 300 + (i * 7919) % 5_000)).collect();
        let fcfs_end = arrivals.iter().fold(0, |end: Time, &(at, _, service)| end.max(at) + service);
        let finished = simulate(&arrivals, &[]);
        assert_eq!(finished.len(), 50);
        let last = finished.iter().map(|f| f.1).max().expect("some");
        assert!(last >= fcfs_end && last <= fcfs_end + 50, "last {last}, work-conserving end {fcfs_end}");
        // Shorter remaining work finishes first among transfers in flight together.
        let lone = simulate(&[(0, 1, 5_000), (0, 2, 2_000)], &[]);
        assert_eq!(lone[0], (2, 4_000));
        assert_eq!(lone[1], (1, 7_000));
    }

    #[test]
    fn control_traffic_delays_the_data_in_flight_by_its_wire_time() {
        let finished = simulate(&[(0, 1, 10_000)], &[(2_000, 30), (5_000, 30)]);
        assert_eq!(finish_of(&finished, 1), 10_060);
        // On an idle link a control TLP delays a transfer that starts while it is still being sent.
        let finished = simulate(&[(10, 1, 1_000)], &[(0, 30)]);
        assert_eq!(finish_of(&finished, 1), 1_030);
    }

    #[test]
    fn busy_time_counts_data_and_control() {
        let mut link = LinkDirection::default();
        link.control(0, 20);
        assert_eq!(link.busy_ns(100), 20, "a lone control TLP is busy only for its wire time");
        let mut link = LinkDirection::default();
        let at = link.start(0, 1, 500).expect("check");
        let mut done = Vec::new();
        link.check(at, link.generation(), &mut done);
        assert_eq!(done, vec![1]);
        assert_eq!(link.busy_ns(1_000), 500);
    }
}
