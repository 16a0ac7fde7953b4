use std::collections::VecDeque;

use super::Time;

/// One pending event. The heap orders entries by `key` = (time, scheduling order) packed into one integer,
/// so a comparison is one 128-bit compare.
#[derive(Clone, Copy)]
struct Entry<E> {
    key: u128,
    event: E,
}

#[inline]
fn key(time: Time, seq: u64) -> u128 {
    ((time as u128) << 64) | seq as u128
}

#[inline]
fn time_of(key: u128) -> Time {
    (key >> 64) as Time
}

/// Children per heap node: a 4-ary heap is half as deep as a binary one, and a node's four children lie
/// side by side in memory, so a pop touches fewer cache lines.
const ARITY: usize = 4;

/// Pending events ordered by (time, scheduling order): ties resolve in the order they were scheduled, so a
/// run is a pure function of its inputs.
///
/// Events scheduled at the current time (zero delay) skip the heap: they go to a FIFO, which is exact
/// because every such event was scheduled after every heap event of the same time (those were scheduled
/// while the clock was earlier), so the heap's events of the current time pop first, then the FIFO's in
/// order. The FIFO is empty whenever the clock advances.
pub struct EventQueue<E> {
    /// A 4-ary min-heap on `key`.
    heap: Vec<Entry<E>>,
    /// Events of time `now`, in scheduling order.
    now_fifo: VecDeque<E>,
    next_seq: u64,
    now: Time,
    popped: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: Vec::with_capacity(1024),
            now_fifo: VecDeque::with_capacity(64),
            next_seq: 0,
            now: 0,
            popped: 0,
        }
    }

    /// Current simulated time: the time of the last popped event.
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Schedule `event` at absolute time `at` (never in the past).
    #[inline]
    pub fn schedule_at(&mut self, at: Time, event: E) {
        assert!(at >= self.now, "event scheduled in the past: {at} < {}", self.now);
        if at == self.now {
            self.now_fifo.push_back(event);
        } else {
            self.push_heap(Entry { key: key(at, self.next_seq), event });
        }
        self.next_seq += 1;
    }

    /// Schedule `event` `delay` ns from now (a delay past the end of time lands at the end of time).
    #[inline]
    pub fn schedule_in(&mut self, delay: Time, event: E) {
        self.schedule_at(self.now.saturating_add(delay), event);
    }

    /// Remove and return the earliest event, advancing the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        if !self.now_fifo.is_empty() && self.heap.first().is_none_or(|e| time_of(e.key) > self.now) {
            let event = self.now_fifo.pop_front().expect("not empty");
            self.popped += 1;
            return Some((self.now, event));
        }
        let entry = self.pop_heap()?;
        let time = time_of(entry.key);
        debug_assert!(time >= self.now);
        self.now = time;
        self.popped += 1;
        Some((time, entry.event))
    }

    /// Time of the earliest pending event.
    #[inline]
    pub fn peek_time(&mut self) -> Option<Time> {
        match self.now_fifo.is_empty() {
            false => Some(self.now),
            true => self.heap.first().map(|e| time_of(e.key)),
        }
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.now_fifo.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty() && self.now_fifo.is_empty()
    }

    /// Number of events handled so far.
    pub fn events_popped(&self) -> u64 {
        self.popped
    }

    /// Add `entry` at the bottom and move the hole up to where it belongs: parents move down into the hole
    /// until the parent is earlier (one copy per level, not a swap).
    #[inline]
    fn push_heap(&mut self, entry: Entry<E>) {
        let mut hole = self.heap.len();
        self.heap.push(entry);
        let heap = &mut self.heap[..];
        while hole > 0 {
            let parent = (hole - 1) / ARITY;
            if heap[parent].key <= entry.key {
                break;
            }
            heap[hole] = heap[parent];
            hole = parent;
        }
        heap[hole] = entry;
    }

    /// Remove the earliest entry: the last entry fills the root's hole and sinks to its place.
    #[inline]
    fn pop_heap(&mut self) -> Option<Entry<E>> {
        let last = self.heap.pop()?;
        let Some(&top) = self.heap.first() else { return Some(last) };
        let heap = &mut self.heap[..];
        let len = heap.len();
        let mut hole = 0;
        loop {
            let first = hole * ARITY + 1;
            if first >= len {
                break;
            }
            let children = &heap[first..(first + ARITY).min(len)];
            let mut best = 0;
            let mut best_key = children[0].key;
            for (c, child) in children.iter().enumerate().skip(1) {
                if child.key < best_key {
                    best = c;
                    best_key = child.key;
                }
            }
            if last.key <= best_key {
                break;
            }
            heap[hole] = heap[first + best];
            hole = first + best;
        }
        heap[hole] = last;
        Some(top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_schedule_order() {
        let mut q = EventQueue::new();
        q.schedule_at(10, 'a');
        q.schedule_at(5, 'b');
        q.schedule_at(10, 'c');
        q.schedule_at(5, 'd');
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(5, 'b'), (5, 'd'), (10, 'a'), (10, 'c')]);
        assert_eq!(q.now(), 10);
    }

    #[test]
    #[should_panic(expected = "in the past")]
    fn refuses_the_past() {
        let mut q = EventQueue::new();
        q.schedule_at(10, ());
        q.pop();
        q.schedule_at(9, ());
    }
}
