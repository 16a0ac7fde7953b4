//! Greedy: the block with the fewest valid pages (least copying now).

use super::{fewest_valid, GcPolicy};
use crate::engine::SimRng;

pub struct Greedy;

impl GcPolicy for Greedy {
    fn name(&self) -> &'static str {
        "greedy"
    }
    fn select(&mut self, valid: &[u16], is_candidate: &dyn Fn(usize) -> bool, _rng: &mut SimRng) -> Option<usize> {
        fewest_valid(valid, is_candidate, 0..valid.len())
    }
}
