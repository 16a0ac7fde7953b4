//! NVMe weighted round robin with urgent priority class (NVMe base specification, "Arbitration
//! Mechanisms"): strict priority Admin > Urgent > weighted round robin among the High, Medium and Low
//! classes. A queue's class is its QPRIO, fixed when the queue is created.
//!
//! - Urgent queues are served whenever one holds a command, round robin among them.
//! - Otherwise the classes High, Medium, Low take turns in that order; in each round a class may fetch up to
//!   its weight (HPW, MPW, LPW) commands. A class with nothing waiting is skipped and loses the rest of its
//!   turn, so the arbiter never idles while a command waits (work-conserving).
//! - Within a class, queues take turns round robin, each serving up to `min(burst, class weight)` commands
//!   per turn. A turn cut short by the end of the class's share of a round resumes in the next round: the
//!   turn state belongs to the class, so queues of one class get equal shares however weight and burst
//!   divide.
//!
//! There is no admin queue in the model, so the Admin class is absent.

use super::round_robin::RoundRobin;
use super::{Arbiter, SubmissionQueue};
use crate::engine::Time;
use crate::request::NvmePriority;

/// The classes weighted round robin serves, in the order they take turns in a round.
const WEIGHTED_CLASSES: [NvmePriority; 3] = [NvmePriority::High, NvmePriority::Medium, NvmePriority::Low];

pub struct WeightedRoundRobin {
    urgent: RoundRobin,
    /// Round robin among the queues of each weighted class, in the order of [`WEIGHTED_CLASSES`].
    within_class: [RoundRobin; 3],
    weights: [u32; 3],
    /// Index of the class whose turn it is.
    turn: usize,
    /// Fetches the class whose turn it is may still make in this round.
    credit: u32,
}

impl WeightedRoundRobin {
    /// `weights`: commands per round for High, Medium and Low (each at least 1).
    pub fn new(burst: u32, weights: [u32; 3]) -> Self {
        let weights = weights.map(|w| w.max(1));
        WeightedRoundRobin {
            urgent: RoundRobin::new(burst),
            within_class: weights.map(|w| RoundRobin::new(burst.min(w))),
            weights,
            turn: 0,
            credit: weights[0],
        }
    }
}

impl Arbiter for WeightedRoundRobin {
    fn name(&self) -> &'static str {
        "weighted-round-robin"
    }

    fn pick(&mut self, queues: &[SubmissionQueue], _now: Time) -> Option<usize> {
        if let Some(q) = self.urgent.pick_among(queues, |sq| sq.priority == NvmePriority::Urgent) {
            return Some(q);
        }
        // The class whose turn it is, then each class once with a fresh share: if none of the four has a
        // command, no weighted class has.
        for _ in 0..=WEIGHTED_CLASSES.len() {
            let class = WEIGHTED_CLASSES[self.turn];
            if self.credit > 0 {
                if let Some(q) = self.within_class[self.turn].pick_among(queues, |sq| sq.priority == class) {
                    self.credit -= 1;
                    return Some(q);
                }
            }
            self.turn = (self.turn + 1) % WEIGHTED_CLASSES.len();
            self.credit = self.weights[self.turn];
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{drain, queue};
    use super::*;
    use NvmePriority::{High, Low, Medium, Urgent};

    /// Many commands: enough that no queue empties during a test.
    const BACKLOG: u32 = 100_000;

    /// The class of each fetch.
    fn classes(order: &[usize], queues: &[SubmissionQueue]) -> Vec<NvmePriority> {
        order.iter().map(|&q| queues[q].priority).collect()
    }

    /// Fetch `n` commands; the queue of each.
    fn fetch(arbiter: &mut WeightedRoundRobin, queues: &mut [SubmissionQueue], n: usize) -> Vec<usize> {
        (0..n)
            .map(|_| {
                let q = arbiter.pick(queues, 0).expect("work is waiting");
                queues[q].pop();
                q
            })
            .collect()
    }

    #[test]
    fn backlogged_classes_get_fetches_in_the_ratio_of_their_weights() {
        for (weights, burst) in [([4, 2, 1], 8), ([8, 4, 2], 3), ([5, 3, 7], 1), ([1, 1, 1], 8)] {
            let mut queues: Vec<SubmissionQueue> =
                [High, Low, Medium, High, Low, Medium, Medium].iter().map(|&p| queue(p, BACKLOG)).collect();
            let mut arbiter = WeightedRoundRobin::new(burst, weights);
            let per_round: u32 = weights.iter().sum();
            let rounds = 1000;
            let order = fetch(&mut arbiter, &mut queues, (rounds * per_round) as usize);
            let fetched = classes(&order, &queues);
            // Every round is the same: High's weight, then Medium's, then Low's.
            let round: Vec<NvmePriority> =
                WEIGHTED_CLASSES.iter().zip(weights).flat_map(|(&c, w)| std::iter::repeat_n(c, w as usize)).collect();
            for (i, chunk) in fetched.chunks(per_round as usize).enumerate() {
                assert_eq!(chunk, round.as_slice(), "round {i} with weights {weights:?}, burst {burst}");
            }
            for (class, weight) in WEIGHTED_CLASSES.iter().zip(weights) {
                assert_eq!(fetched.iter().filter(|c| *c == class).count() as u32, rounds * weight);
            }
            // Queues of one class share its fetches equally (to within one turn).
            for class in WEIGHTED_CLASSES {
                let members: Vec<usize> = (0..queues.len()).filter(|&q| queues[q].priority == class).collect();
                let counts: Vec<usize> = members.iter().map(|m| order.iter().filter(|q| *q == m).count()).collect();
                let turn = burst.min(weights[WEIGHTED_CLASSES.iter().position(|c| *c == class).unwrap()]) as usize;
                let (lo, hi) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
                assert!(hi - lo <= turn, "{class:?} queues got {counts:?}");
            }
        }
    }

    #[test]
    fn urgent_queues_go_first_and_share_round_robin() {
        let mut queues = vec![queue(High, 5), queue(Urgent, 3), queue(Low, 5), queue(Urgent, 3)];
        let mut arbiter = WeightedRoundRobin::new(2, [4, 2, 1]);
        let order = drain(&mut arbiter, &mut queues);
        assert_eq!(&order[..6], &[1, 1, 3, 3, 1, 3]);
        // A command arriving in an urgent queue is the next one fetched, mid-round.
        let mut queues = vec![queue(High, BACKLOG), queue(Urgent, 0), queue(Medium, BACKLOG)];
        let mut arbiter = WeightedRoundRobin::new(8, [4, 2, 1]);
        fetch(&mut arbiter, &mut queues, 2);
        queues[1].push(crate::request::ReqId(0), 0);
        assert_eq!(fetch(&mut arbiter, &mut queues, 4), vec![1, 0, 0, 2]);
    }

    #[test]
    fn an_empty_class_does_not_stall_the_others() {
        // No Medium queue at all, and a Low queue that empties: rounds shrink to what is waiting.
        let mut queues = vec![queue(High, BACKLOG), queue(Low, 3), queue(Medium, 0)];
        let mut arbiter = WeightedRoundRobin::new(8, [4, 2, 1]);
        let order = fetch(&mut arbiter, &mut queues, 23);
        assert_eq!(
            classes(&order, &queues),
            [[High; 4].as_slice(), &[Low], &[High; 4], &[Low], &[High; 4], &[Low], &[High; 4], &[High; 4]].concat()
        );
        // Only Low has work: it is served back to back.
        let mut queues = vec![queue(High, 0), queue(Low, 10)];
        assert_eq!(drain(&mut WeightedRoundRobin::new(8, [4, 2, 1]), &mut queues), vec![1; 10]);
    }

    #[test]
    fn a_queue_serves_at_most_a_burst_per_turn() {
        // Within High (weight 8), three queues in turns of burst 3.
        let mut queues = vec![queue(High, BACKLOG), queue(High, BACKLOG), queue(High, BACKLOG)];
        let order = fetch(&mut WeightedRoundRobin::new(3, [8, 4, 2]), &mut queues, 12);
        assert_eq!(order, vec![0, 0, 0, 1, 1, 1, 2, 2, 2, 0, 0, 0]);
        // A weight below the burst bounds a turn too: Low (weight 2) alternates its queues 2 by 2, across rounds.
        let mut queues = vec![queue(Low, BACKLOG), queue(High, BACKLOG), queue(Low, BACKLOG)];
        let order = fetch(&mut WeightedRoundRobin::new(8, [1, 1, 2]), &mut queues, 12);
        assert_eq!(order, vec![1, 0, 0, 1, 2, 2, 1, 0, 0, 1, 2, 2]);
    }
}
