//! `none`: no scheduler. Requests go to the driver in the order they come, per hardware queue, at no cost
//! beyond the block layer's own (blk-mq issues them directly).

use std::collections::VecDeque;

use super::{IoScheduler, SchedCosts, SchedRequest};
use crate::engine::Time;

pub struct NoneScheduler {
    queues: Vec<VecDeque<SchedRequest>>,
}

impl NoneScheduler {
    pub fn new(hw_queues: u32) -> Self {
        NoneScheduler { queues: (0..hw_queues.max(1)).map(|_| VecDeque::new()).collect() }
    }

    /// The queue of `hwq` (folded into range, like the other schedulers).
    fn queue(&mut self, hwq: u32) -> &mut VecDeque<SchedRequest> {
        let n = self.queues.len();
        &mut self.queues[hwq as usize % n]
    }
}

impl IoScheduler for NoneScheduler {
    fn name(&self) -> &'static str {
        "none"
    }
    fn costs(&self) -> SchedCosts {
        SchedCosts::default()
    }
    fn insert(&mut self, hwq: u32, rq: SchedRequest, _now: Time) {
        self.queue(hwq).push_back(rq);
    }
    fn dispatch(&mut self, hwq: u32, _now: Time) -> Option<SchedRequest> {
        self.queue(hwq).pop_front()
    }
    fn completed(&mut self, _rq: &SchedRequest, _latency_ns: Time, _now: Time) {}
    fn queued(&self, hwq: u32) -> usize {
        self.queues[hwq as usize % self.queues.len()].len()
    }
    fn remove_first(&mut self, hwq: u32, matches: &mut dyn FnMut(&SchedRequest) -> bool) -> Option<SchedRequest> {
        super::remove_first_in(self.queue(hwq), matches)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_sequences_keep_accounting_and_never_panic() {
        super::super::check_random_sequences(|h| Box::new(NoneScheduler::new(h)));
    }
}
