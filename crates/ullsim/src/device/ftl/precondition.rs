//! Putting a drive in a realistic state at setup, in well under a second for a 512 GiB drive.
//!
//! Only per-block counts are built here; which logical page sits where is implicit (see `map.rs`).
//! For `random`, a small plane with the same pages per block, over-provisioning and GC threshold is driven to
//! garbage-collection steady state by a mean-field simulation (every overwrite invalidates a uniformly chosen
//! valid page, GC runs with the configured victim policy), and each real plane draws its blocks' valid counts
//! from that steady state. The steady-state distribution depends on the fractions, not on the number of
//! blocks, so the small plane stands for the big one.

use rand::seq::SliceRandom;
use rand::RngExt;

use super::gc::GcPolicy;
use crate::engine::SimRng;

/// Initial state of one plane.
#[derive(Debug, Clone)]
pub struct PlaneInit {
    /// Valid pages per block; valid pages are the block's first `valid[b]` pages.
    pub valid: Vec<u16>,
    /// Pages written per block (the rest of a written block's pages are stale).
    pub written: Vec<u16>,
    /// Free blocks, in the order they will be used.
    pub free: Vec<u32>,
    /// The partly written block new writes go to, if any.
    pub open: Option<u32>,
}

/// Blocks of the small plane the steady state is computed on.
const SAMPLE_PLANE_BLOCKS: usize = 256;
/// Overwrites in the mean-field run, as a multiple of the plane's valid pages.
const OVERWRITE_ROUNDS: u64 = 3;

/// A plane holding `valid_pages`, written once in order: blocks full and valid from block 0.
pub fn sequential(blocks: u32, pages_per_block: u32, valid_pages: u64) -> PlaneInit {
    let ppb = pages_per_block as u64;
    let mut valid = vec![0u16; blocks as usize];
    let mut written = vec![0u16; blocks as usize];
    let full = (valid_pages / ppb) as usize;
    let rest = (valid_pages % ppb) as u16;
    for b in 0..full {
        valid[b] = pages_per_block as u16;
        written[b] = pages_per_block as u16;
    }
    let open = if rest > 0 {
        valid[full] = rest;
        written[full] = rest;
        Some(full as u32)
    } else {
        None
    };
    let first_free = full + usize::from(rest > 0);
    PlaneInit { valid, written, free: (first_free as u32..blocks).collect(), open }
}

/// A plane holding `valid_pages` as MQSim preconditions a streaming flow (`Allocate_address_for_preconditioning`
/// with the two-point steady state of `FTL::Perform_precondition`): the used blocks, at random places, are
/// fully valid (in order, so the data sits as `sequential` puts it) or fully stale; `min_free` blocks (the GC
/// threshold) stay free, fewer if the data would not fit.
pub fn streaming(blocks: u32, pages_per_block: u32, valid_pages: u64, min_free: u32, rng: &mut SimRng) -> PlaneInit {
    let (n, ppb) = (blocks as usize, pages_per_block as u64);
    let full = (valid_pages / ppb) as usize;
    let rest = (valid_pages % ppb) as u16;
    let n_free = (min_free as usize).min(n - full - 1);
    let mut order: Vec<u32> = (0..blocks).collect();
    order.shuffle(rng);
    let (free, used) = order.split_at(n_free);
    let mut valid = vec![0u16; n];
    let mut written = vec![0u16; n];
    // The open block takes the last partial block of data; every other used block is full.
    let open = used[0];
    (valid[open as usize], written[open as usize]) = (rest, rest);
    for (i, &b) in used[1..].iter().enumerate() {
        written[b as usize] = pages_per_block as u16;
        valid[b as usize] = if i < full { pages_per_block as u16 } else { 0 };
    }
    PlaneInit { valid, written, free: free.to_vec(), open: Some(open) }
}

/// Steady-state valid-page counts of the full blocks of a plane under random overwrites, and the fraction of
/// blocks that are free, from a mean-field run on a small plane.
#[derive(Debug, Clone)]
pub struct SteadyState {
    full_block_valid: Vec<u16>,
    /// Fraction of blocks free, or `None` when the sample ended at its GC threshold (GC kept it there): a
    /// real plane then starts exactly at its own threshold, which the sample's fraction, rounded on 256
    /// blocks, would miss by a few blocks (13/256 free for a 5% threshold is 208 of 4096 blocks, 3 above
    /// the 205 GC keeps: ~900 pages per plane written before the first GC, seconds on a large drive).
    free_fraction: Option<f64>,
}

/// Run the mean-field model: `fill` is the fraction of the plane's pages that hold valid data,
/// `min_free_blocks_fraction` the GC threshold.
pub fn steady_state(
    pages_per_block: u32,
    fill: f64,
    gc_threshold: f64,
    policy: &mut dyn GcPolicy,
    rng: &mut SimRng,
) -> SteadyState {
    let blocks = SAMPLE_PLANE_BLOCKS;
    let ppb = pages_per_block as u16;
    let soft_free = ((gc_threshold * blocks as f64).ceil() as usize).max(2);
    let capacity = (blocks - soft_free - 1) as u64 * pages_per_block as u64;
    let valid_target = ((fill * (blocks as u64 * pages_per_block as u64) as f64) as u64).min(capacity);
    let mut valid = vec![0u16; blocks];
    let mut written = vec![0u16; blocks];
    let mut weights = Fenwick::new(blocks);
    let mut free: std::collections::VecDeque<usize> = (0..blocks).collect();
    let mut open: Option<usize> = None;

    // Writes one page into the open block, opening a free block when needed; false if none is left (the
    // model then stops where it is: an extreme geometry gets a less settled state, never a failure).
    let write_page = |valid: &mut [u16],
                      written: &mut [u16],
                      weights: &mut Fenwick,
                      free: &mut std::collections::VecDeque<usize>,
                      open: &mut Option<usize>| {
        let b = match *open {
            Some(b) if written[b] < ppb => b,
            _ => match free.pop_front() {
                Some(b) => {
                    *open = Some(b);
                    b
                }
                None => return false,
            },
        };
        written[b] += 1;
        valid[b] += 1;
        weights.add(b, 1);
        true
    };

    for _ in 0..valid_target {
        if !write_page(&mut valid, &mut written, &mut weights, &mut free, &mut open) {
            break;
        }
    }
    'overwrites: for _ in 0..valid_target * OVERWRITE_ROUNDS {
        if weights.total() == 0 {
            break;
        }
        // Overwrite a uniformly chosen valid page: its block loses one valid page.
        let r = rng.random_range(0..weights.total());
        let b = weights.find(r);
        valid[b] -= 1;
        weights.add(b, -1);
        if !write_page(&mut valid, &mut written, &mut weights, &mut free, &mut open) {
            break;
        }
        while free.len() < soft_free {
            let current_open = open;
            let is_candidate = |x: usize| written[x] == ppb && Some(x) != current_open;
            let Some(mut victim) = policy.select(&valid, &is_candidate, rng) else { break };
            if valid[victim] == ppb {
                // As the FTL does: a pick that frees nothing falls back to the emptiest block.
                match super::gc::fewest_valid(&valid, &is_candidate, 0..blocks) {
                    Some(b) if valid[b] < ppb => victim = b,
                    _ => break, // nothing to reclaim
                }
            }
            let moves = valid[victim];
            weights.add(victim, -(moves as i64));
            valid[victim] = 0;
            written[victim] = 0;
            free.push_back(victim);
            for _ in 0..moves {
                if !write_page(&mut valid, &mut written, &mut weights, &mut free, &mut open) {
                    break 'overwrites;
                }
            }
        }
    }
    let full_block_valid: Vec<u16> =
        (0..blocks).filter(|&b| written[b] == ppb && Some(b) != open).map(|b| valid[b]).collect();
    let at_threshold = free.len() <= soft_free;
    SteadyState { full_block_valid, free_fraction: (!at_threshold).then(|| free.len() as f64 / blocks as f64) }
}

impl SteadyState {
    /// A plane of `blocks` blocks holding exactly `valid_pages`, drawn from the steady state.
    pub fn plane(
        &self,
        blocks: u32,
        pages_per_block: u32,
        valid_pages: u64,
        min_free: u32,
        rng: &mut SimRng,
    ) -> PlaneInit {
        let n = blocks as usize;
        let ppb = pages_per_block as u16;
        let mut order: Vec<u32> = (0..blocks).collect();
        order.shuffle(rng);
        // Never fewer free blocks than GC keeps, and never so many that the data does not fit.
        let max_free = n - 1 - valid_pages.div_ceil(pages_per_block as u64) as usize;
        let n_free = match self.free_fraction {
            Some(fraction) => ((fraction * n as f64).round() as usize).max(min_free as usize),
            None => min_free as usize,
        }
        .min(max_free);
        let free: Vec<u32> = order[..n_free].to_vec();
        let open = order[n_free];
        let full = &order[n_free + 1..];
        let mut valid = vec![0u16; n];
        let mut written = vec![0u16; n];
        written[open as usize] = ppb / 2;
        for &b in full {
            written[b as usize] = ppb;
            valid[b as usize] = if self.full_block_valid.is_empty() {
                ppb
            } else {
                self.full_block_valid[rng.random_range(0..self.full_block_valid.len())]
            };
        }
        // Adjust the draw so the plane holds exactly `valid_pages` (moves of one page at random blocks).
        let mut total: u64 = valid.iter().map(|&v| v as u64).sum();
        let mut guard = 0u64;
        while total != valid_pages && guard < 64 * n as u64 + valid_pages * 2 {
            guard += 1;
            let b = if total < valid_pages && rng.random_range(0..8) == 0 {
                open // let the open block take a share too
            } else {
                full[rng.random_range(0..full.len())]
            };
            let b = b as usize;
            if total < valid_pages && valid[b] < written[b] {
                valid[b] += 1;
                total += 1;
            } else if total > valid_pages && valid[b] > 0 {
                valid[b] -= 1;
                total -= 1;
            }
        }
        if total < valid_pages {
            // Random adjustment did not converge (plane nearly full): fill blocks in order.
            for &b in full.iter().chain(std::iter::once(&open)) {
                let b = b as usize;
                let add = ((written[b] - valid[b]) as u64).min(valid_pages - total);
                valid[b] += add as u16;
                total += add;
            }
        }
        assert_eq!(total, valid_pages, "steady-state plane could not hold its data");
        PlaneInit { valid, written, free, open: Some(open) }
    }
}

/// Fenwick tree over non-negative block weights: sample a block with probability proportional to weight.
struct Fenwick {
    tree: Vec<i64>,
    total: u64,
}

impl Fenwick {
    fn new(n: usize) -> Self {
        Fenwick { tree: vec![0; n + 1], total: 0 }
    }
    fn add(&mut self, index: usize, delta: i64) {
        self.total = (self.total as i64 + delta) as u64;
        let mut i = index + 1;
        while i < self.tree.len() {
            self.tree[i] += delta;
            i += i & i.wrapping_neg();
        }
    }
    fn total(&self) -> u64 {
        self.total
    }
    /// The index whose cumulative weight range contains `target` (0 <= target < total).
    fn find(&self, mut target: u64) -> usize {
        let mut pos = 0;
        let mut step = self.tree.len().next_power_of_two() / 2;
        while step > 0 {
            let next = pos + step;
            if next < self.tree.len() && (self.tree[next] as u64) <= target {
                pos = next;
                target -= self.tree[next] as u64;
            }
            step /= 2;
        }
        pos
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::ftl::gc;
    use rand::SeedableRng;

    #[test]
    fn sequential_fills_blocks_in_order() {
        let p = sequential(10, 4, 9);
        assert_eq!(&p.valid[..4], &[4, 4, 1, 0]);
        assert_eq!(p.open, Some(2));
        assert_eq!(p.free, (3..10).collect::<Vec<_>>());
    }

    #[test]
    fn streaming_blocks_are_all_valid_or_all_stale_with_the_threshold_free() {
        let mut rng = SimRng::seed_from_u64(5);
        let p = streaming(100, 8, 8 * 60 + 3, 5, &mut rng);
        let open = p.open.expect("an open block") as usize;
        assert_eq!((p.valid[open], p.written[open], p.free.len()), (3, 3, 5));
        let used: Vec<usize> = (0..100).filter(|&b| b != open && !p.free.contains(&(b as u32))).collect();
        assert_eq!(used.len(), 94);
        assert!(used.iter().all(|&b| p.written[b] == 8 && (p.valid[b] == 8 || p.valid[b] == 0)));
        assert_eq!(used.iter().filter(|&&b| p.valid[b] == 8).count(), 60);
        assert_eq!(p.valid.iter().map(|&v| v as u64).sum::<u64>(), 8 * 60 + 3);
        // Data that does not fit beside the threshold takes free blocks instead.
        assert_eq!(streaming(10, 8, 8 * 9, 5, &mut rng).free.len(), 0);
    }

    #[test]
    fn fenwick_samples_by_weight() {
        let mut f = Fenwick::new(5);
        for (i, w) in [0, 3, 0, 2, 5].iter().enumerate() {
            f.add(i, *w);
        }
        let picks: Vec<usize> = (0..10).map(|t| f.find(t)).collect();
        assert_eq!(picks, vec![1, 1, 1, 3, 3, 4, 4, 4, 4, 4]);
    }

    #[test]
    fn steady_state_has_stale_pages_and_exact_totals() {
        let mut rng = SimRng::seed_from_u64(9);
        let mut policy = gc::make("greedy", 1).unwrap();
        let s = steady_state(64, 0.90, 0.05, policy.as_mut(), &mut rng);
        let mean = s.full_block_valid.iter().map(|&v| v as f64).sum::<f64>() / s.full_block_valid.len() as f64;
        assert!(mean < 63.0 && mean > 40.0, "mean valid per full block {mean}");
        let plane = s.plane(512, 64, 28_000, 26, &mut rng);
        assert_eq!(plane.valid.iter().map(|&v| v as u64).sum::<u64>(), 28_000);
        assert!(plane.free.len() >= 26);
        for b in 0..512 {
            assert!(plane.valid[b] <= plane.written[b]);
        }
    }
}
