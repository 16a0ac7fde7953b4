//! d-choices (MQSim's randomized greedy, RGA): sample d blocks at random, take the one with fewest valid
//! pages. Cheaper than greedy and close to it for modest d; falls back to greedy when sampling finds nothing.

use rand::RngExt;

use super::{fewest_valid, GcPolicy};
use crate::engine::SimRng;

pub struct DChoices {
    pub d: u32,
}

impl GcPolicy for DChoices {
    fn name(&self) -> &'static str {
        "d-choices"
    }
    fn select(&mut self, valid: &[u16], is_candidate: &dyn Fn(usize) -> bool, rng: &mut SimRng) -> Option<usize> {
        if self.d as usize >= valid.len() {
            return fewest_valid(valid, is_candidate, 0..valid.len());
        }
        let n = valid.len();
        let sample = (0..self.d).map(|_| rng.random_range(0..n));
        fewest_valid(valid, is_candidate, sample).or_else(|| fewest_valid(valid, is_candidate, 0..n))
    }
}
