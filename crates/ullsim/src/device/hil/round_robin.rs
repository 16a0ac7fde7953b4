//! Round robin (the arbitration every NVMe controller must support): queues take turns, each serving up to
//! the arbitration burst of commands per turn.

use super::{Arbiter, SubmissionQueue};
use crate::engine::Time;

pub struct RoundRobin {
    burst: u32,
    current: usize,
    served_in_turn: u32,
}

impl RoundRobin {
    pub fn new(burst: u32) -> Self {
        RoundRobin { burst: burst.max(1), current: 0, served_in_turn: 0 }
    }

    /// Round robin over the queues for which `member` holds (weighted round robin keeps one per priority
    /// class); the others are skipped as if absent. Index of a member the controller may fetch from, or
    /// `None`.
    pub fn pick_among(
        &mut self,
        queues: &[SubmissionQueue],
        member: impl Fn(&SubmissionQueue) -> bool,
    ) -> Option<usize> {
        let n = queues.len();
        if n == 0 {
            return None;
        }
        let eligible = |q: usize| queues[q].fetchable() && member(&queues[q]);
        if self.current < n && eligible(self.current) && self.served_in_turn < self.burst {
            self.served_in_turn += 1;
            return Some(self.current);
        }
        for step in 1..=n {
            let q = (self.current + step) % n;
            if eligible(q) {
                self.current = q;
                self.served_in_turn = 1;
                return Some(q);
            }
        }
        None
    }
}

impl Arbiter for RoundRobin {
    fn name(&self) -> &'static str {
        "round-robin"
    }

    fn pick(&mut self, queues: &[SubmissionQueue], _now: Time) -> Option<usize> {
        self.pick_among(queues, |_| true)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{drain, queue};
    use super::*;
    use crate::request::NvmePriority;

    #[test]
    fn takes_turns_in_bursts() {
        let mut queues =
            vec![queue(NvmePriority::Medium, 5), queue(NvmePriority::Medium, 0), queue(NvmePriority::Medium, 5)];
        assert_eq!(drain(&mut RoundRobin::new(2), &mut queues), vec![0, 0, 2, 2, 0, 0, 2, 2, 0, 2]);
    }

    #[test]
    fn ignores_priorities() {
        let mut queues = vec![queue(NvmePriority::Low, 2), queue(NvmePriority::Urgent, 2)];
        assert_eq!(drain(&mut RoundRobin::new(1), &mut queues), vec![0, 1, 0, 1]);
    }

    #[test]
    fn serves_only_the_members_it_is_given() {
        let mut queues = vec![queue(NvmePriority::Low, 3), queue(NvmePriority::High, 3), queue(NvmePriority::Low, 3)];
        let mut rr = RoundRobin::new(2);
        let mut order = Vec::new();
        while let Some(q) = rr.pick_among(&queues, |sq| sq.priority == NvmePriority::Low) {
            queues[q].pop();
            order.push(q);
        }
        assert_eq!(order, vec![0, 0, 2, 2, 0, 2]);
        assert_eq!(queues[1].len(), 3);
    }
}
