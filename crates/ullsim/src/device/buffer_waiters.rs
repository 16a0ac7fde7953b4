//! Host writes whose data arrived but found their write-buffer partition full: one arrival-order queue per
//! partition (one when the buffer is shared), and since when hosts have been waiting for buffer space.

use std::collections::VecDeque;

use crate::engine::Time;
use crate::request::ReqId;

pub struct BufferWaiters {
    /// Per partition: waiting writes in arrival order, and since when the queue has been non-empty.
    queues: Vec<(VecDeque<ReqId>, Time)>,
    /// The earliest `since` over the non-empty queues (kept here, not recomputed at every dispatch): from
    /// then on background destages stall hosts.
    blocked_since: Option<Time>,
}

impl BufferWaiters {
    pub fn new(partitions: usize) -> Self {
        BufferWaiters { queues: vec![(VecDeque::new(), 0); partitions], blocked_since: None }
    }

    /// Whether writes wait for partition `part` (a new write must then queue behind them).
    pub fn any(&self, part: usize) -> bool {
        !self.queues[part].0.is_empty()
    }

    /// `req` waits for space in partition `part` from `now`.
    pub fn push(&mut self, part: usize, req: ReqId, now: Time) {
        let (queue, since) = &mut self.queues[part];
        if queue.is_empty() {
            *since = now;
            self.blocked_since = Some(self.blocked_since.map_or(now, |b| b.min(now)));
        }
        queue.push_back(req);
    }

    /// The oldest write waiting for partition `part`.
    pub fn front(&self, part: usize) -> Option<ReqId> {
        self.queues[part].0.front().copied()
    }

    /// Remove the oldest write waiting for partition `part` (it was admitted).
    pub fn pop(&mut self, part: usize) {
        let queue = &mut self.queues[part].0;
        queue.pop_front();
        if queue.is_empty() {
            self.blocked_since = self.queues.iter().filter(|(q, _)| !q.is_empty()).map(|&(_, since)| since).min();
        }
    }

    /// Since when host writes have been waiting for buffer space in some partition, if they are.
    pub fn blocked_since(&self) -> Option<Time> {
        self.blocked_since
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_since_is_the_oldest_non_empty_queue() {
        let mut w = BufferWaiters::new(3);
        assert_eq!(w.blocked_since(), None);
        w.push(1, ReqId(10), 100);
        w.push(2, ReqId(11), 200);
        w.push(1, ReqId(12), 300);
        assert_eq!((w.blocked_since(), w.front(1), w.any(0)), (Some(100), Some(ReqId(10)), false));
        w.pop(1);
        assert_eq!((w.blocked_since(), w.front(1)), (Some(100), Some(ReqId(12))), "queue 1 still waits");
        w.pop(1);
        assert_eq!(w.blocked_since(), Some(200));
        w.pop(2);
        assert_eq!(w.blocked_since(), None);
    }
}
