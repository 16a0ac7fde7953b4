//! Putting a drive in the state it starts from, in well under a second for an 800 GB drive.
//!
//! Only per-block counts are built here; which logical page sits where is implicit (see `map.rs`).
//! - `sequential`: written once in order (a fresh drive filled), every block fully valid.
//! - `streaming`: MQSim's steady state for a streaming writer (`FTL::Perform_precondition`).
//! - `random`: where sustained uniform random overwrites leave the drive. A sample drive with the real
//!   drive's blocks per plane, pages per block and thresholds (`sample.rs`) runs the FTL's own allocation
//!   and GC rules without timing until its blocks settle; each real plane then holds its share of the data
//!   as sustained writing spreads it over planes (`plane_shares`), its full blocks as a sample plane's, and
//!   its free pool and open blocks as GC keeps them.

mod sample;

use rand::seq::SliceRandom;
use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};

use super::gc::GcPolicy;
use super::FreeBlockThresholds;
use crate::engine::SimRng;
use sample::SampleDrive;

/// Initial state of one plane.
#[derive(Debug, Clone)]
pub struct PlaneInit {
    /// Valid pages per block; valid pages are the block's first `valid[b]` pages.
    pub valid: Vec<u16>,
    /// Pages written per block (the rest of a written block's pages are stale).
    pub written: Vec<u16>,
    /// Free blocks, in the order they will be used.
    pub free: Vec<u32>,
    /// The partly written block host writes go to, if any.
    pub open: Option<u32>,
    /// The partly written block GC moves go to, if any.
    pub open_gc: Option<u32>,
}

/// Pages the sample drive may have: whole planes of the real drive, as many as fit (at least one).
const SAMPLE_PAGES: u64 = 1 << 20;
/// Pages the sample programs once its GC has started, as a multiple of its pages.
const SAMPLE_REWRITES: f64 = 2.0;
/// Pages drawn to find valid ones to overwrite, at most, as a multiple of the sample's pages.
const SAMPLE_DRAWS: u64 = 32;

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
    PlaneInit { valid, written, free: (first_free as u32..blocks).collect(), open, open_gc: None }
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
    PlaneInit { valid, written, free: free.to_vec(), open: Some(open), open_gc: None }
}

/// The drive as sustained uniform random overwrites leave it: each plane's share of the data, and a sample
/// drive whose planes' blocks the real planes take.
pub struct RandomSteadyState {
    pages_per_block: u32,
    thresholds: FreeBlockThresholds,
    /// Whether GC is a block behind on every plane (`random-gc-due`) rather than caught up.
    gc_due: bool,
    shares: Vec<u64>,
    sample: SampleDrive,
    sample_planes: usize,
}

impl RandomSteadyState {
    /// The steady state of a drive of `planes` planes of `blocks` blocks of `pages_per_block` pages holding
    /// `pages` valid pages, under GC `policy` at `thresholds`; `gc_due`: GC a block behind on every plane.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        planes: u32,
        blocks: u32,
        pages_per_block: u32,
        pages: u64,
        thresholds: FreeBlockThresholds,
        gc_due: bool,
        policy: &mut dyn GcPolicy,
        rng: &mut SimRng,
    ) -> RandomSteadyState {
        // A plane keeps at least a block's worth of stale pages beside its GC reserve and open blocks, or GC
        // could never gain a block (`FreeBlockThresholds::room_for` checked the mean share against this).
        let most = (blocks as u64).saturating_sub(thresholds.soft as u64 + 2) * pages_per_block as u64;
        let shares = plane_shares(planes, pages, most, rng);
        let plane_slots = blocks as u64 * pages_per_block as u64;
        let sample_planes = (SAMPLE_PAGES / plane_slots.max(1)).clamp(1, planes as u64) as usize;
        let mut sample = SampleDrive::new(
            blocks,
            pages_per_block,
            &shares[..sample_planes],
            thresholds.soft,
            thresholds.user_reserve,
        );
        sample.run(SAMPLE_REWRITES, SAMPLE_DRAWS * sample_planes as u64 * plane_slots, policy, rng);
        let mut shares = shares;
        if sample_planes == planes as usize {
            // The sample is the whole drive: its planes' shares are where its own writes left them.
            shares = (0..sample_planes).map(|p| sample.plane_pages(p)).collect();
        }
        RandomSteadyState { pages_per_block, thresholds, gc_due, shares, sample, sample_planes }
    }

    /// Valid pages plane `u` holds.
    pub fn share(&self, u: u32) -> u64 {
        self.shares[u as usize]
    }

    /// Plane `u` of `blocks` blocks: a sample plane's full blocks and GC block, its host block part written
    /// at an independent random point (planes that fill their host blocks in step would all need GC at once,
    /// which sustained writing does not keep them doing), and its free pool at the soft threshold, where GC
    /// leaves it; with `gc_due` one block under it, as when GC has not run yet: the sample plane's last victim
    /// is still full, its moved pages not yet in the GC block.
    pub fn plane(&self, u: u32, blocks: u32, rng: &mut SimRng) -> PlaneInit {
        let n = blocks as usize;
        let ppb = self.pages_per_block as u16;
        let pages = self.shares[u as usize];
        let sampled = self.sample.plane(u as usize % self.sample_planes);
        let mut counts = sampled.full;
        counts.shuffle(rng);
        let mut gc_block = sampled.gc_block;
        if let (true, Some(victim)) = (self.gc_due, sampled.last_victim) {
            counts.push(victim);
            if let Some((written, valid)) = gc_block.as_mut() {
                let back = victim.min(*valid);
                (*written, *valid) = (*written - back, *valid - back);
            }
        }
        // Open blocks hold recent pages, still valid.
        let host_open = (rng.random_range(0..ppb) as u64).min(pages) as u16;
        let (gc_written, gc_valid) = gc_block.unwrap_or((0, 0));
        let gc_valid = (gc_valid as u64).min(pages - host_open as u64) as u16;
        let in_full = pages - host_open as u64 - gc_valid as u64;
        let opens = 1 + usize::from(gc_block.is_some());
        let n_free =
            (self.thresholds.soft - usize::from(self.gc_due)).min(n - opens - in_full.div_ceil(ppb as u64) as usize);
        let mut order: Vec<u32> = (0..blocks).collect();
        order.shuffle(rng);
        let free = order[..n_free].to_vec();
        let mut valid = vec![0u16; n];
        let mut written = vec![0u16; n];
        let open = order[n_free];
        (valid[open as usize], written[open as usize]) = (host_open, host_open);
        let open_gc = gc_block.map(|_| order[n_free + 1]);
        if let Some(b) = open_gc {
            (valid[b as usize], written[b as usize]) = (gc_valid, gc_written.max(gc_valid));
        }
        // The rest are full: as many of the sample plane's as there are, more drawn from them if needed.
        let full = &order[n_free + opens..];
        counts.truncate(full.len());
        while counts.len() < full.len() {
            counts.push(counts.get(rng.random_range(0..counts.len().max(1))).copied().unwrap_or(ppb));
        }
        for (&b, &v) in full.iter().zip(&counts) {
            (valid[b as usize], written[b as usize]) = (v, ppb);
        }
        let total = nudge_to(&mut valid, full, ppb as u64, in_full, rng);
        assert_eq!(total, in_full, "a plane holds its share beside its GC reserve (plane_shares caps it)");
        PlaneInit { valid, written, free, open: Some(open), open_gc }
    }
}

/// Each plane's share of `pages` as sustained random overwrites leave it. Host pages go to the planes round
/// robin, one each in turn, while each overwrite makes a page of plane `u` stale with probability
/// `v_u / V` (its share of the valid pages): a plane above the mean loses pages faster than it gains them.
/// Per round of `planes` writes a plane's deviation `x` drifts by `-planes x / V` and gains variance
/// `(1/planes)(1 - 1/planes)` per write from its stale pages (its new pages come like clockwork), so in the
/// steady state `x` is normal with variance `(V / planes)(1 - 1/planes) / 2`: half that of pages placed at
/// random. Shares are capped at `most` and sum to `pages` exactly.
pub fn plane_shares(planes: u32, pages: u64, most: u64, rng: &mut SimRng) -> Vec<u64> {
    let n = planes as usize;
    let mean = pages as f64 / n as f64;
    let sd = (mean * (1.0 - 1.0 / n as f64) / 2.0).sqrt();
    let z: Vec<f64> = (0..n).map(|_| StandardNormal.sample(rng)).collect();
    let z_mean = z.iter().sum::<f64>() / n as f64;
    let mut shares: Vec<u64> =
        z.iter().map(|&z| (mean + sd * (z - z_mean)).floor().clamp(0.0, most as f64) as u64).collect();
    // Rounding and the cap leave a few pages over or short.
    let planes: Vec<u32> = (0..planes).collect();
    let total = nudge_to(&mut shares, &planes, most, pages, rng);
    assert_eq!(total, pages, "the planes cannot hold the data (FreeBlockThresholds::room_for checks it)");
    shares
}

/// Add or take single units at `values[i]`, `i` drawn from `indices` at random, keeping each in `0..=most`,
/// until the values at `indices` sum to `target`; if random draws do not get there (values nearly all at
/// `most` or 0), go through `indices` in order. Returns the sum reached.
fn nudge_to<T: Copy + Into<u64> + TryFrom<u64>>(
    values: &mut [T],
    indices: &[u32],
    most: u64,
    target: u64,
    rng: &mut SimRng,
) -> u64 {
    let to_t = |v: u64| T::try_from(v).ok().expect("at most `most`, which fits");
    let mut total: u64 = indices.iter().map(|&i| values[i as usize].into()).sum();
    let most_draws = 64 * indices.len() as u64 + 2 * target.abs_diff(total);
    for _ in 0..most_draws {
        if total == target {
            return total;
        }
        let i = indices[rng.random_range(0..indices.len())] as usize;
        let v: u64 = values[i].into();
        if total < target && v < most {
            values[i] = to_t(v + 1);
            total += 1;
        } else if total > target && v > 0 {
            values[i] = to_t(v - 1);
            total -= 1;
        }
    }
    for &i in indices {
        let v: u64 = values[i as usize].into();
        let new = if total < target { most.min(v + (target - total)) } else { v - v.min(total - target) };
        values[i as usize] = to_t(new);
        total = total + new - v;
    }
    total
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
    fn plane_shares_sum_to_the_data_and_spread_as_round_robin_writes_leave_them() {
        let mut rng = SimRng::seed_from_u64(2);
        let (planes, pages) = (2000u32, 2000 * 10_000u64);
        let shares = plane_shares(planes, pages, 10_400, &mut rng);
        assert_eq!(shares.iter().sum::<u64>(), pages);
        assert!(shares.iter().all(|&s| s <= 10_400));
        let sd = (shares.iter().map(|&s| (s as f64 - 10_000.0).powi(2)).sum::<f64>() / planes as f64).sqrt();
        let expected = (10_000.0 * (1.0 - 1.0 / planes as f64) / 2.0).sqrt();
        assert!((sd / expected - 1.0).abs() < 0.05, "sd {sd:.1}, expected {expected:.1}");
        // One plane, or a cap that leaves no room to spread: every plane holds the mean.
        assert_eq!(plane_shares(1, 777, 1000, &mut rng), vec![777]);
        assert_eq!(plane_shares(4, 4000, 1000, &mut rng), vec![1000; 4]);
    }

    #[test]
    fn a_random_plane_holds_its_share_at_the_gc_threshold_or_a_block_under_it() {
        let mut rng = SimRng::seed_from_u64(4);
        let thresholds = FreeBlockThresholds { soft: 13, hard: 2, user_reserve: 2, slc_static: 0 };
        let mut policy = gc::make("d-choices", 5).unwrap();
        let pages = 16 * 7_600;
        for gc_due in [false, true] {
            let s = RandomSteadyState::new(16, 256, 32, pages, thresholds, gc_due, policy.as_mut(), &mut rng);
            assert_eq!((0..16).map(|u| s.share(u)).sum::<u64>(), pages);
            let free = 13 - usize::from(gc_due);
            for u in 0..16 {
                let p = s.plane(u, 256, &mut rng);
                let open = p.open.unwrap() as usize;
                assert_eq!(p.free.len(), free, "GC due: {gc_due}");
                assert!(p.free.iter().all(|&b| p.written[b as usize] == 0));
                assert!(p.written[open] < 32 && p.valid[open] == p.written[open], "host pages are recent, valid");
                if let Some(b) = p.open_gc.map(|b| b as usize) {
                    assert!(p.written[b] < 32 && p.valid[b] <= p.written[b]);
                }
                let opens = [Some(open as u32), p.open_gc];
                let full: Vec<usize> =
                    (0..256).filter(|&b| !opens.contains(&Some(b as u32)) && p.written[b] > 0).collect();
                assert_eq!(full.len(), 256 - free - 1 - usize::from(p.open_gc.is_some()));
                assert!(full.iter().all(|&b| p.written[b] == 32 && p.valid[b] <= 32));
                assert!(full.iter().any(|&b| p.valid[b] < 32), "stale pages to collect");
                assert_eq!(p.valid.iter().map(|&v| v as u64).sum::<u64>(), s.share(u));
            }
        }
    }
}
