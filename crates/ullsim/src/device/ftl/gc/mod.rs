//! Garbage-collection victim selection. One file per policy; add one by adding a file and a line in [`make`].

mod d_choices;
mod greedy;
mod random;

use crate::engine::SimRng;

/// Chooses which block of a plane to reclaim.
pub trait GcPolicy {
    fn name(&self) -> &'static str;
    /// Pick a victim among the blocks `b` of one plane with `is_candidate(b)` (full and not in use), given
    /// their valid-page counts. `None` when there is no candidate.
    fn select(&mut self, valid: &[u16], is_candidate: &dyn Fn(usize) -> bool, rng: &mut SimRng) -> Option<usize>;
}

/// Names accepted by `device.ftl.gc_policy`.
pub fn gc_policy_names() -> &'static [&'static str] {
    &["greedy", "d-choices", "random"]
}

/// Build the policy called `name`; `d` is the sample size of d-choices.
pub fn make(name: &str, d: u32) -> Option<Box<dyn GcPolicy>> {
    match name {
        "greedy" => Some(Box::new(greedy::Greedy)),
        "d-choices" => Some(Box::new(d_choices::DChoices { d })),
        "random" => Some(Box::new(random::Random)),
        _ => None,
    }
}

/// The candidate with the fewest valid pages among `blocks` (first one on ties).
pub(crate) fn fewest_valid(
    valid: &[u16],
    is_candidate: &dyn Fn(usize) -> bool,
    blocks: impl Iterator<Item = usize>,
) -> Option<usize> {
    let mut best: Option<usize> = None;
    for b in blocks {
        // The count first: most blocks cannot beat the best so far, and need no (indirect) candidate check.
        if best.is_none_or(|x| valid[b] < valid[x]) && is_candidate(b) {
            best = Some(b);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn policies_pick_candidates_and_greedy_picks_the_emptiest() {
        let valid = [5u16, 1, 9, 0, 3];
        let is_candidate = |b: usize| b != 3; // block 3 is the open block
        let mut rng = SimRng::seed_from_u64(3);
        assert_eq!(make("greedy", 1).unwrap().select(&valid, &is_candidate, &mut rng), Some(1));
        for name in gc_policy_names() {
            let mut policy = make(name, 3).unwrap();
            for _ in 0..100 {
                let v = policy.select(&valid, &is_candidate, &mut rng).unwrap();
                assert!(v != 3 && v < 5, "{name} picked {v}");
            }
            assert_eq!(policy.select(&valid, &|_| false, &mut rng), None, "{name}");
        }
        // d-choices with d >= number of blocks finds the greedy choice.
        assert_eq!(make("d-choices", 64).unwrap().select(&valid, &is_candidate, &mut rng), Some(1));
    }
}
