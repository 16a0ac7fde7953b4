//! A bfq_queue's waiting requests: the sort list by sector, the FIFO by arrival with each request's FIFO
//! deadline, and the choice of the next request to serve (`bfq_choose_req`, `bfq_find_next_rq`,
//! `bfq_check_fifo`).

use std::collections::{BTreeMap, VecDeque};

use super::super::SchedRequest;
use crate::engine::Time;

/// A waiting request's key in the sort list: its first sector, then its arrival number.
pub(super) type RqKey = (u64, u64);

/// A waiting request.
#[derive(Debug, Clone, Copy)]
pub(super) struct Waiting {
    pub rq: SchedRequest,
    /// Hardware-queue slot it was inserted for (for `queued`).
    pub slot: u32,
    /// When it expires (`fifo_time`): inserted + `fifo_expire_sync` or `_async`.
    pub fifo_time: Time,
}

/// How `bfq_choose_req` weighs a request behind the last dispatched position: up to `back_max` sectors
/// back it costs `penalty` times the distance (`back_seek_max` KiB, `back_seek_penalty`); further back it
/// "wraps" and goes last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SeekRule {
    pub back_max: u64,
    pub penalty: u64,
}

/// The requests of one queue.
#[derive(Debug, Default)]
pub(super) struct Requests {
    sorted: BTreeMap<RqKey, Waiting>,
    /// Keys in arrival order (arrival order is FIFO-deadline order within a queue: one sync or async flag).
    fifo: VecDeque<RqKey>,
    /// The request to serve next (`next_rq`).
    pub next: Option<RqKey>,
}

impl Requests {
    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    pub fn get(&self, key: RqKey) -> &Waiting {
        &self.sorted[&key]
    }

    pub fn next_rq(&self) -> Option<&Waiting> {
        self.next.map(|k| &self.sorted[&k])
    }

    /// Add a request and make it the next one if `bfq_choose_req` prefers it to the current next one, seen
    /// from `last_pos` (the device-wide last dispatched position). Returns whether the next request changed.
    pub fn add(&mut self, key: RqKey, w: Waiting, last_pos: u64, rule: SeekRule) -> bool {
        self.sorted.insert(key, w);
        self.fifo.push_back(key);
        let before = self.next;
        self.next = Some(match self.next {
            None => key,
            Some(cur) => self.choose(cur, key, last_pos, rule),
        });
        before != self.next
    }

    /// Remove the request `key`. If it was the next one, the next one becomes the FIFO head when it has
    /// expired and the FIFO was not yet checked in this service slot (`fifo_checked`, Linux's `fifo_expire`
    /// flag), else the better of its neighbours in sector order (`bfq_find_next_rq`). Returns the removed
    /// request and whether the next request changed.
    pub fn remove(&mut self, key: RqKey, fifo_checked: &mut bool, now: Time, rule: SeekRule) -> (Waiting, bool) {
        let mut changed = false;
        if self.next == Some(key) {
            self.next = self.find_next(key, fifo_checked, now, rule);
            changed = true;
        }
        let w = self.sorted.remove(&key).expect("a queued request");
        if let Some(at) = self.fifo.iter().position(|&k| k == key) {
            self.fifo.remove(at);
        }
        if self.sorted.is_empty() {
            self.next = None;
        }
        (w, changed)
    }

    /// The first request `matches` accepts, in sector order.
    pub fn find(&self, matches: &mut dyn FnMut(&Waiting) -> bool) -> Option<RqKey> {
        self.sorted.iter().find(|(_, w)| matches(w)).map(|(&k, _)| k)
    }

    /// `bfq_find_next_rq` for the request `last` about to leave.
    fn find_next(&self, last: RqKey, fifo_checked: &mut bool, now: Time, rule: SeekRule) -> Option<RqKey> {
        // `bfq_check_fifo`: once per service slot, an expired FIFO head goes next.
        if !*fifo_checked {
            *fifo_checked = true;
            if let Some(&head) = self.fifo.front() {
                if head != last && now >= self.sorted[&head].fifo_time {
                    return Some(head);
                }
            }
        }
        let prev = self.sorted.range(..last).next_back().map(|(&k, _)| k);
        let next = match self.sorted.range((std::ops::Bound::Excluded(last), std::ops::Bound::Unbounded)).next() {
            Some((&k, _)) => Some(k),
            None => self.sorted.keys().next().copied().filter(|&k| k != last),
        };
        match (next, prev) {
            (Some(n), Some(p)) => Some(self.choose(n, p, last.0, rule)),
            (n, p) => n.or(p),
        }
    }

    /// `bfq_choose_req`: of two requests, the one to serve first seen from `last` (sync before async, then
    /// the smaller seek, with back seeks penalized and too long ones wrapped).
    fn choose(&self, k1: RqKey, k2: RqKey, last: u64, rule: SeekRule) -> RqKey {
        if k1 == k2 {
            return k2;
        }
        let (r1, r2) = (&self.sorted[&k1].rq, &self.sorted[&k2].rq);
        if r1.sync != r2.sync {
            return if r1.sync { k1 } else { k2 };
        }
        let (s1, s2) = (r1.sector, r2.sector);
        // Distance from `last`, or None when the request is too far behind (it wraps).
        let distance = |s: u64| {
            if s >= last {
                Some(s - last)
            } else if s + rule.back_max >= last {
                Some((last - s) * rule.penalty)
            } else {
                None
            }
        };
        match (distance(s1), distance(s2)) {
            (Some(d1), Some(d2)) => {
                if d1 < d2 || (d1 == d2 && s1 >= s2) {
                    k1
                } else {
                    k2
                }
            }
            (Some(_), None) => k1,
            (None, Some(_)) => k2,
            // Both behind: start with the one further back (one back seek only).
            (None, None) => {
                if s1 <= s2 {
                    k1
                } else {
                    k2
                }
            }
        }
    }
}
