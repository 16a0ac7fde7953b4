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
        NoneScheduler { queues: (0..hw_queues).map(|_| VecDeque::new()).collect() }
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
        self.queues[hwq as usize].push_back(rq);
    }
    fn dispatch(&mut self, hwq: u32, _now: Time) -> Option<SchedRequest> {
        self.queues[hwq as usize].pop_front()
    }
    fn completed(&mut self, _rq: &SchedRequest, _latency_ns: Time, _now: Time) {}
    fn queued(&self, hwq: u32) -> usize {
        self.queues[hwq as usize].len()
    }
}
