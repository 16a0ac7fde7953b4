//! A count-only copy of the FTL's write allocation and garbage collection, run without timing on a sample
//! drive until its blocks hold what sustained uniform random overwrites leave them.
//!
//! The rules are the FTL's (`ftl/mod.rs`): host pages go to the planes round robin, skipping a plane with no
//! room for host data; each plane fills one block with host pages and another with GC moves, takes free
//! blocks first in first out, and leaves its last `user_reserve` free blocks to GC; after each host page, a
//! plane with fewer than `soft` free blocks reclaims victims chosen by the configured policy (a fully valid
//! pick falls back to the emptiest full block) until it has `soft` again. What is not kept: which logical
//! page is where (only per-block counts), and time (a victim's moves and erase happen at once, so no page is
//! overwritten while its victim waits).

use std::collections::VecDeque;

use rand::RngExt;

use super::super::gc::{fewest_valid, GcPolicy};
use crate::engine::SimRng;

/// A sample drive of a few planes with the real drive's blocks per plane, pages per block and thresholds.
pub struct SampleDrive {
    blocks_per_plane: usize,
    pages_per_block: u16,
    soft: usize,
    user_reserve: usize,
    /// Per block (plane after plane): valid pages and pages written.
    valid: Vec<u16>,
    written: Vec<u16>,
    valid_pages: u64,
    planes: Vec<SamplePlane>,
    next_plane: usize,
    host_pages: u64,
    moved_pages: u64,
}

#[derive(Default)]
struct SamplePlane {
    free: VecDeque<u32>,
    open_user: Option<u32>,
    open_gc: Option<u32>,
    /// Valid pages of the last victim when GC took it.
    last_victim: Option<u16>,
    collected: bool,
}

/// What a sample plane holds at the end of the run.
pub struct SampledPlane {
    /// Valid pages of each full block.
    pub full: Vec<u16>,
    /// The block GC moves pages to, if one is open: (pages written, valid pages).
    pub gc_block: Option<(u16, u16)>,
    /// Valid pages of the last victim when GC took it (its moves are the last pages of `gc_block`).
    pub last_victim: Option<u16>,
}

impl SampleDrive {
    /// A sample drive whose plane `p` holds `plane_pages[p]` valid pages, written in order: full blocks from
    /// block 0, the last one partly written and open for host pages.
    pub fn new(
        blocks_per_plane: u32,
        pages_per_block: u32,
        plane_pages: &[u64],
        soft: usize,
        user_reserve: usize,
    ) -> SampleDrive {
        let (bpp, ppb) = (blocks_per_plane as usize, pages_per_block as u16);
        let mut valid = vec![0u16; bpp * plane_pages.len()];
        let mut planes = Vec::with_capacity(plane_pages.len());
        for (p, &pages) in plane_pages.iter().enumerate() {
            let blocks = &mut valid[p * bpp..(p + 1) * bpp];
            let (full, rest) = ((pages / ppb as u64) as usize, (pages % ppb as u64) as u16);
            blocks[..full].fill(ppb);
            let mut plane = SamplePlane::default();
            if rest > 0 {
                blocks[full] = rest;
                plane.open_user = Some(full as u32);
            }
            plane.free = (full + usize::from(rest > 0)..bpp).map(|b| b as u32).collect();
            planes.push(plane);
        }
        SampleDrive {
            valid_pages: plane_pages.iter().sum(),
            blocks_per_plane: bpp,
            pages_per_block: ppb,
            soft,
            user_reserve,
            written: valid.clone(),
            valid,
            planes,
            next_plane: 0,
            host_pages: 0,
            moved_pages: 0,
        }
    }

    /// Overwrite uniformly chosen valid pages until every plane has collected garbage (its free blocks ran
    /// out), then until the sample has programmed `rewrites` times its pages more: GC has then rewritten every
    /// block a few times over, and what the blocks hold no longer depends on how the data was first written.
    /// Stops early if no plane has room for a host page (a drive too full for its GC reserve) or after
    /// `most_draws` draws of a page to invalidate (a drive holding a tiny share of its pages, where most
    /// draws land on stale or erased pages): the state is then as settled as it got.
    pub fn run(&mut self, rewrites: f64, most_draws: u64, policy: &mut dyn GcPolicy, rng: &mut SimRng) {
        if self.valid_pages == 0 {
            return;
        }
        let mut draws = 0;
        while !self.planes.iter().all(|p| p.collected) {
            if !self.overwrite(policy, rng, &mut draws) || draws > most_draws {
                return;
            }
        }
        let target = self.host_pages + self.moved_pages + (rewrites * self.slots() as f64) as u64;
        while self.host_pages + self.moved_pages < target {
            if !self.overwrite(policy, rng, &mut draws) || draws > most_draws {
                return;
            }
        }
    }

    /// Pages of the sample drive.
    fn slots(&self) -> u64 {
        self.valid.len() as u64 * self.pages_per_block as u64
    }

    /// Host pages and GC moves written so far.
    #[cfg(test)]
    fn pages_written(&self) -> (u64, u64) {
        (self.host_pages, self.moved_pages)
    }

    /// Valid pages sample plane `p` holds.
    pub fn plane_pages(&self, p: usize) -> u64 {
        let bpp = self.blocks_per_plane;
        self.valid[p * bpp..(p + 1) * bpp].iter().map(|&v| v as u64).sum()
    }

    /// The state sample plane `p` ended in.
    pub fn plane(&self, p: usize) -> SampledPlane {
        let bpp = self.blocks_per_plane;
        let range = p * bpp..(p + 1) * bpp;
        let full = range.filter(|&b| self.written[b] == self.pages_per_block).map(|b| self.valid[b]).collect();
        let plane = &self.planes[p];
        let gc_block = plane.open_gc.map(|b| (self.written[p * bpp + b as usize], self.valid[p * bpp + b as usize]));
        SampledPlane { full, gc_block, last_victim: plane.last_victim }
    }

    /// One host overwrite: a uniformly chosen valid page goes stale and a new page is placed, then the plane
    /// it went to collects garbage if it is short of free blocks. False if no plane had room (nothing done).
    /// `draws` counts the pages drawn to find a valid one.
    fn overwrite(&mut self, policy: &mut dyn GcPolicy, rng: &mut SimRng, draws: &mut u64) -> bool {
        // A uniformly chosen valid page: draw any page of the drive until it is one of its block's valid
        // pages (a block's valid count says how many; which ones does not matter here).
        let ppb = self.pages_per_block as u64;
        let stale = loop {
            *draws += 1;
            let page = rng.random_range(0..self.slots());
            let block = (page / ppb) as usize;
            if page % ppb < self.valid[block] as u64 {
                break block;
            }
        };
        self.valid[stale] -= 1;
        let n = self.planes.len();
        for i in 0..n {
            let p = (self.next_plane + i) % n;
            if self.program(p, false, 1) == 1 {
                self.next_plane = (p + 1) % n;
                self.host_pages += 1;
                self.collect(p, policy, rng);
                return true;
            }
        }
        self.valid[stale] += 1;
        false
    }

    /// Program up to `pages` valid pages into plane `p`'s host or GC block, opening free blocks as they fill
    /// (host pages leave the last `user_reserve` free blocks alone). Returns the pages programmed.
    fn program(&mut self, p: usize, for_gc: bool, pages: u16) -> u16 {
        let (bpp, ppb) = (self.blocks_per_plane, self.pages_per_block);
        let reserve = if for_gc { 0 } else { self.user_reserve };
        let mut done = 0;
        while done < pages {
            let plane = &mut self.planes[p];
            let open = if for_gc { &mut plane.open_gc } else { &mut plane.open_user };
            let block = match *open {
                Some(b) => b,
                None if plane.free.len() > reserve => *open.insert(plane.free.pop_front().expect("non-empty")),
                None => break,
            };
            let b = p * bpp + block as usize;
            let n = (pages - done).min(ppb - self.written[b]);
            self.written[b] += n;
            self.valid[b] += n;
            if self.written[b] == ppb {
                *open = None;
            }
            done += n;
        }
        done
    }

    /// Plane `p` reclaims victims until it has `soft` free blocks (or nothing can be reclaimed).
    fn collect(&mut self, p: usize, policy: &mut dyn GcPolicy, rng: &mut SimRng) {
        let (bpp, ppb) = (self.blocks_per_plane, self.pages_per_block);
        let base = p * bpp;
        while self.planes[p].free.len() < self.soft {
            let valid = &self.valid[base..base + bpp];
            let written = &self.written[base..base + bpp];
            let is_candidate = |b: usize| written[b] == ppb;
            let Some(mut victim) = policy.select(valid, &is_candidate, rng) else { return };
            if valid[victim] == ppb {
                match fewest_valid(valid, &is_candidate, 0..bpp) {
                    Some(b) if valid[b] < ppb => victim = b,
                    _ => return, // every full block is fully valid: nothing to gain
                }
            }
            let moves = valid[victim];
            self.valid[base + victim] = 0;
            let moved = self.program(p, true, moves);
            if moved < moves {
                // No block left for the moves (a reserve too small for the geometry): the rest stay where
                // they were and this plane stops collecting.
                self.valid[base + victim] = moves - moved;
                self.moved_pages += moved as u64;
                return;
            }
            self.moved_pages += moves as u64;
            self.written[base + victim] = 0;
            let plane = &mut self.planes[p];
            plane.free.push_back(victim as u32);
            plane.collected = true;
            plane.last_victim = Some(moves);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::ftl::gc;
    use rand::SeedableRng;

    /// The blocks of a sample plane: (free, host block fill, GC block fill, total valid).
    fn plane_summary(s: &SampleDrive, p: usize) -> (usize, Option<u16>, Option<u16>, u64) {
        let fill = |b: Option<u32>| b.map(|b| s.written[p * s.blocks_per_plane + b as usize]);
        let plane = &s.planes[p];
        (plane.free.len(), fill(plane.open_user), fill(plane.open_gc), s.plane_pages(p))
    }

    #[test]
    fn the_sample_keeps_its_data_and_ends_at_the_gc_threshold() {
        let mut rng = SimRng::seed_from_u64(3);
        let shares = [3000, 3100, 2950];
        let mut s = SampleDrive::new(64, 64, &shares, 4, 1);
        s.run(2.0, u64::MAX, gc::make("d-choices", 5).unwrap().as_mut(), &mut rng);
        let (host, moved) = s.pages_written();
        assert!(moved as f64 > 2.0 * 3.0 * 64.0 * 64.0 - host as f64, "GC rewrote the blocks: {host} + {moved} pages");
        assert_eq!((0..3).map(|p| s.plane_pages(p)).sum::<u64>(), shares.iter().sum::<u64>());
        for p in 0..3 {
            let (free, host_fill, gc_fill, _) = plane_summary(&s, p);
            // GC runs after each host page until the plane has its threshold again.
            assert_eq!(free, 4, "plane {p}");
            assert!(host_fill.is_none_or(|f| f < 64) && gc_fill.is_none_or(|f| f < 64));
        }
        assert!(s.valid.iter().zip(&s.written).all(|(v, w)| v <= w && *w <= 64));
    }

    /// Uniform random page overwrites under greedy GC against Desnoyers' closed form for large blocks,
    /// A = (1 + ρ) / (2ρ) (P. Desnoyers, "Analytic modeling of SSD write performance", SYSTOR 2012), at the
    /// spare space left beside the GC reserve and the two open blocks: the sample's write amplification is
    /// that of the FTL it copies (tests/it/gc.rs checks the timed FTL against the same formula).
    #[test]
    fn greedy_sample_write_amplification_matches_the_closed_form() {
        let (blocks, pages, soft) = (512u64, 128u64, 26u64);
        let plane_pages = (blocks * pages) * 80 / 100;
        let mut s = SampleDrive::new(blocks as u32, pages as u32, &[plane_pages; 2], soft as usize, 3);
        let mut rng = SimRng::seed_from_u64(8);
        let mut greedy = gc::make("greedy", 1).unwrap();
        s.run(1.0, u64::MAX, greedy.as_mut(), &mut rng);
        let before = s.pages_written();
        s.run(2.0, u64::MAX, greedy.as_mut(), &mut rng);
        let (host, moved) = (s.pages_written().0 - before.0, s.pages_written().1 - before.1);
        let wa = (host + moved) as f64 / host as f64;
        let rho = ((blocks - soft - 2) * pages - plane_pages) as f64 / plane_pages as f64;
        let closed_form = (1.0 + rho) / (2.0 * rho);
        assert!((wa / closed_form - 1.0).abs() < 0.1, "WA {wa:.3}, closed form {closed_form:.3}");
    }
}
