//! Random: any full block, uniformly (a baseline that ignores valid counts).

use rand::RngExt;

use super::GcPolicy;
use crate::engine::SimRng;

pub struct Random;

impl GcPolicy for Random {
    fn name(&self) -> &'static str {
        "random"
    }
    fn select(&mut self, valid: &[u16], is_candidate: &dyn Fn(usize) -> bool, rng: &mut SimRng) -> Option<usize> {
        let n = valid.len();
        for _ in 0..64 {
            let b = rng.random_range(0..n);
            if is_candidate(b) {
                return Some(b);
            }
        }
        // Few candidates: take the first one after a random start.
        let start = rng.random_range(0..n);
        (0..n).map(|i| (start + i) % n).find(|&b| is_candidate(b))
    }
}
