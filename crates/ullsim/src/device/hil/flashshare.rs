//! FlashShare's arbitration (Zhang et al., OSDI'18 §3.3): each core has a second submission queue for
//! latency-critical requests (`host.nvme.dual_sq`, created with the urgent class) and the controller always
//! serves those first. To keep the throughput queues from starving, one is drained when it holds
//! `flashshare_drain_entries` commands or its oldest has waited `flashshare_drain_wait_ns` (the paper's best
//! setting: 8 entries or 200 us): it is served until it is back under both thresholds, or has given the
//! commands it held when the drain began. The paper says only that the driver "starts draining" then; this
//! reads it as the least that ends the starvation. After a drain the urgent queues get a turn (up to
//! `arbitration_burst` fetches) before the next drain may begin, so a throughput queue that stays past the
//! threshold cannot starve them in turn. Otherwise the urgent queues, then the others, take turns round
//! robin. A queue at its bound of commands in the controller (`max_fetched_per_queue`) is passed over, and
//! ends its drain. Work-conserving: it never idles while a command may be fetched.

use super::round_robin::RoundRobin;
use super::{Arbiter, SubmissionQueue};
use crate::engine::Time;
use crate::request::NvmePriority;

pub struct FlashShare {
    urgent: RoundRobin,
    others: RoundRobin,
    drain_entries: usize,
    drain_wait_ns: Time,
    /// The throughput queue being drained and how many more of the commands it held at the start it may give.
    draining: Option<(usize, usize)>,
    /// Fetches the urgent queues may make before the next drain (a turn after each drain).
    urgent_turn: u32,
    burst: u32,
}

impl FlashShare {
    pub fn new(burst: u32, drain_entries: u32, drain_wait_ns: Time) -> Self {
        FlashShare {
            urgent: RoundRobin::new(burst),
            others: RoundRobin::new(burst),
            drain_entries: drain_entries.max(1) as usize,
            drain_wait_ns,
            draining: None,
            urgent_turn: 0,
            burst: burst.max(1),
        }
    }

    /// Fetch one of the `left` commands queue `q`'s drain takes; the urgent queues' turn follows the last.
    fn drain_one(&mut self, q: usize, left: usize) {
        self.draining = Some((q, left - 1));
    }

    /// `sq` holds the drain threshold of commands, or its oldest has waited the drain time, at `now`.
    fn past_threshold(&self, sq: &SubmissionQueue, now: Time) -> bool {
        sq.len() >= self.drain_entries
            || sq.oldest_arrival().is_some_and(|at| now.saturating_sub(at) >= self.drain_wait_ns)
    }

    /// The throughput queue past a drain threshold at `now` whose oldest command is the oldest, if any (one at
    /// its bound of commands in the controller cannot be drained until one completes).
    fn starving(&self, queues: &[SubmissionQueue], now: Time) -> Option<usize> {
        (0..queues.len())
            .filter(|&q| {
                queues[q].priority != NvmePriority::Urgent
                    && queues[q].fetchable()
                    && self.past_threshold(&queues[q], now)
            })
            .min_by_key(|&q| queues[q].oldest_arrival())
    }
}

impl Arbiter for FlashShare {
    fn name(&self) -> &'static str {
        "flashshare"
    }

    fn pick(&mut self, queues: &[SubmissionQueue], now: Time) -> Option<usize> {
        if let Some((q, left)) = self.draining {
            // The drain lasts while the queue is past a threshold, for at most the commands it held when it
            // began (later ones wait their turn).
            if left > 0 && queues[q].fetchable() && self.past_threshold(&queues[q], now) {
                self.drain_one(q, left);
                return Some(q);
            }
            self.draining = None;
            self.urgent_turn = self.burst;
        }
        let urgent = |sq: &SubmissionQueue| sq.priority == NvmePriority::Urgent;
        if self.urgent_turn > 0 {
            self.urgent_turn -= 1;
            if let Some(q) = self.urgent.pick_among(queues, urgent) {
                return Some(q);
            }
            self.urgent_turn = 0;
        }
        if let Some(q) = self.starving(queues, now) {
            self.drain_one(q, queues[q].len());
            return Some(q);
        }
        self.urgent.pick_among(queues, urgent).or_else(|| self.others.pick_among(queues, |sq| !urgent(sq)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{drain, queue};
    use super::*;
    use crate::request::ReqId;
    use NvmePriority::{Medium, Urgent};

    #[test]
    fn the_critical_queue_goes_first_until_a_throughput_queue_holds_the_drain_threshold() {
        // 7 throughput commands stay behind 3 critical ones; 10 are drained to 7 first.
        let mut queues = vec![queue(Medium, 7), queue(Urgent, 3)];
        let order = drain(&mut FlashShare::new(8, 8, 200_000), &mut queues);
        assert_eq!(order, [1, 1, 1, 0, 0, 0, 0, 0, 0, 0]);
        let mut queues = vec![queue(Medium, 10), queue(Urgent, 3)];
        let order = drain(&mut FlashShare::new(8, 8, 200_000), &mut queues);
        assert_eq!(order, [0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn a_queue_that_stays_past_the_threshold_alternates_with_the_urgent_ones() {
        // Throughput commands keep arriving (one for each fetched), so the queue stays at 10: every drain
        // gives the 10 it held, then the urgent queue gets a turn of `burst` (2) before the next drain.
        let mut queues = vec![queue(Medium, 10), queue(Urgent, 6)];
        let mut arbiter = FlashShare::new(2, 8, 200_000);
        let mut order = Vec::new();
        for _ in 0..30 {
            let q = arbiter.pick(&queues, 0).expect("work is waiting");
            queues[q].pop();
            if q == 0 {
                queues[0].push(ReqId(100), 0);
            }
            order.push(q);
        }
        let round: Vec<usize> = [[0; 10].as_slice(), &[1, 1]].concat();
        assert_eq!(order[..24], [round.clone(), round].concat()[..], "{order:?}");
    }

    #[test]
    fn a_throughput_command_that_waited_the_drain_time_goes_first_and_the_others_wait_theirs() {
        let mut arbiter = FlashShare::new(8, 8, 200_000);
        let mut queues = vec![queue(Medium, 0), queue(Urgent, 0)];
        queues[0].push(ReqId(0), 1_000);
        queues[0].push(ReqId(1), 2_000);
        queues[0].push(ReqId(2), 50_000);
        for i in 0..4 {
            queues[1].push(ReqId(10 + i), 1_000);
        }
        // Before 200 us: the critical queue first.
        assert_eq!(arbiter.pick(&queues, 150_000), Some(1));
        queues[1].pop();
        // At 202 us the two oldest throughput commands have waited 200 us: they go first. The third has
        // waited 152 us: the drain ends and the critical queue has its turn.
        for _ in 0..2 {
            assert_eq!(arbiter.pick(&queues, 202_000), Some(0));
            queues[0].pop();
        }
        assert_eq!(arbiter.pick(&queues, 202_000), Some(1));
    }
}
