//! Round robin (the arbitration every NVMe controller must support): queues take turns, each serving up to
//! the arbitration burst of commands per turn.

use super::{Arbiter, SubmissionQueue};

pub struct RoundRobin {
    burst: u32,
    current: usize,
    served_in_turn: u32,
}

impl RoundRobin {
    pub fn new(burst: u32) -> Self {
        RoundRobin { burst: burst.max(1), current: 0, served_in_turn: 0 }
    }
}

impl Arbiter for RoundRobin {
    fn name(&self) -> &'static str {
        "round-robin"
    }

    fn pick(&mut self, queues: &[SubmissionQueue]) -> Option<usize> {
        let n = queues.len();
        if n == 0 {
            return None;
        }
        if self.current < n && !queues[self.current].is_empty() && self.served_in_turn < self.burst {
            self.served_in_turn += 1;
            return Some(self.current);
        }
        for step in 1..=n {
            let q = (self.current + step) % n;
            if !queues[q].is_empty() {
                self.current = q;
                self.served_in_turn = 1;
                return Some(q);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{NvmePriority, ReqId};
    use std::collections::VecDeque;

    fn queue(n: u32) -> SubmissionQueue {
        SubmissionQueue { priority: NvmePriority::Medium, pending: (0..n).map(ReqId).collect::<VecDeque<_>>() }
    }

    #[test]
    fn takes_turns_in_bursts() {
        let mut queues = vec![queue(5), queue(0), queue(5)];
        let mut rr = RoundRobin::new(2);
        let mut order = Vec::new();
        while let Some(q) = rr.pick(&queues) {
            queues[q].pending.pop_front();
            order.push(q);
        }
        assert_eq!(order, vec![0, 0, 2, 2, 0, 0, 2, 2, 0, 2]);
    }
}
