//! The flash translation layer: logical-to-physical page map, write allocation striped channel-first,
//! garbage collection with soft and hard free-block thresholds, and an optional cached mapping table.
//!
//! The map is implicit where it can be: a preconditioned drive's initial placement is a keyed permutation of
//! logical pages onto each plane's initially valid pages (`precondition.rs`), so setup writes no per-page
//! table and a 512 GiB drive is ready in milliseconds. Explicit entries exist only for pages written during
//! the run, stored so that memory follows the pages written (`map.rs`).

mod cmt;
pub mod gc;
mod map;
pub mod precondition;
pub mod slc;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use crate::config::device::{DeviceConfig, MappingKind, Precondition};
use crate::engine::{stream_rng, SimRng};
use crate::util::perm::Permutation;

use super::flash::Geometry;
pub use cmt::MappingCache;
pub use gc::gc_policy_names;
use map::{PageMap, SlotOrder};
use slc::SlcRegion;

/// Free-block counts per plane that steer garbage collection.
#[derive(Debug, Clone, Copy)]
pub struct FreeBlockThresholds {
    /// GC starts on a plane with fewer free blocks than this.
    pub soft: usize,
    /// At or below this, GC goes before host work on the plane's die.
    pub hard: usize,
    /// Host writes never take the last `user_reserve` free blocks: GC needs somewhere to move pages to.
    pub user_reserve: usize,
    /// Blocks the SLC cache's static part keeps out of each plane's free space (0 without an SLC cache).
    pub slc_static: usize,
}

impl FreeBlockThresholds {
    pub fn of(cfg: &DeviceConfig) -> Self {
        // A fraction outside [0, 1] is an error on a page-mapped drive (DeviceConfig::validate); clamped, it
        // cannot overflow the block counts of an in-place drive, which has no GC and ignores them.
        let blocks_of_plane = |fraction: f64| (fraction.clamp(0.0, 1.0) * cfg.flash.blocks_per_plane as f64).ceil();
        let hard = blocks_of_plane(cfg.ftl.gc_hard_threshold) as usize;
        let user_reserve = hard.max(1);
        let soft = (blocks_of_plane(cfg.ftl.gc_threshold) as usize).max(user_reserve + 1).max(2);
        let slc_static = slc::static_blocks_per_plane(cfg) as usize;
        FreeBlockThresholds { soft, hard, user_reserve, slc_static }
    }

    /// Whether a plane can hold `pages` valid pages and still keep `soft` free blocks plus its two open
    /// blocks (host and GC) and the SLC cache's static blocks: otherwise garbage collection can never get
    /// ahead of writes.
    pub fn room_for(&self, cfg: &DeviceConfig, pages_per_plane: u64) -> bool {
        let blocks = cfg.flash.blocks_per_plane as u64;
        let kept = (self.soft as u64).saturating_add(2).saturating_add(self.slc_static as u64);
        blocks > kept
            && pages_per_plane <= (blocks - kept) * crate::device::flash::Geometry::of(cfg).pages_per_block as u64
    }
}

/// A garbage-collection job: one victim block being emptied, one job per plane at a time.
#[derive(Debug, Clone, Copy)]
pub struct GcJob {
    /// Global block index of the victim.
    pub victim: u64,
    /// Page moves not finished yet.
    pub pending_moves: u32,
    /// Valid pages the victim had when the job started.
    pub victim_valid: u32,
}

#[derive(Debug, Default)]
struct PlaneState {
    free: VecDeque<u32>,
    /// The partly written block host writes go to.
    open_user: Option<u32>,
    /// The partly written block GC moves go to: kept apart so host writes cannot eat GC's reserve (and
    /// cold, moved data is not mixed with hot host data).
    open_gc: Option<u32>,
    /// The partly written SLC-mode block host writes go to while the SLC cache has room (`slc.rs`).
    open_slc: Option<u32>,
    gc: Option<GcJob>,
}

/// Which open block of a plane a page goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    /// Host data in a native-mode block.
    Host,
    /// GC's and folding's moves.
    Gc,
    /// Host data in an SLC-mode block.
    Slc,
}

/// Counters the results report.
#[derive(Debug, Clone, Copy, Default)]
pub struct FtlStats {
    pub blocks_erased: u64,
}

pub struct Ftl {
    geometry: Geometry,
    mapping: MappingKind,
    logical_pages: u64,
    /// Where each logical page lives, and what each physical page holds.
    map: PageMap,
    /// Per global block: valid pages and pages written.
    valid: Vec<u16>,
    written: Vec<u16>,
    planes: Vec<PlaneState>,
    next_plane: u32,
    soft_free_blocks: usize,
    hard_free_blocks: usize,
    user_reserve_blocks: usize,
    gc_policy: Box<dyn gc::GcPolicy>,
    rng: SimRng,
    /// Logical pages that have a home (preconditioned or written): the SLC cache's dynamic part follows the
    /// rest.
    mapped: u64,
    /// The SLC cache, if the drive has one.
    slc: Option<SlcRegion>,
    pub stats: FtlStats,
}

impl Ftl {
    /// Build the FTL for `cfg` and precondition it. Errors name the key at fault.
    pub fn new(cfg: &DeviceConfig, seed: u64) -> Result<Ftl, String> {
        let geometry = Geometry::of(cfg);
        let logical_pages = cfg.logical_pages();
        let mut rng = stream_rng(seed, "device:ftl");
        let mut gc_policy = gc::make(&cfg.ftl.gc_policy, cfg.ftl.gc_d_choices)
            .ok_or_else(|| format!("device.ftl.gc_policy: unknown policy \"{}\"", cfg.ftl.gc_policy))?;
        let bpp = geometry.blocks_per_plane;
        let ppb = geometry.pages_per_block;
        let units = geometry.planes();
        let n_blocks = geometry.blocks() as usize;
        let thresholds = FreeBlockThresholds::of(cfg);
        let soft_free_blocks = thresholds.soft;

        let mut ftl = Ftl {
            geometry,
            mapping: cfg.ftl.mapping,
            logical_pages,
            map: PageMap::none(),
            valid: Vec::new(),
            written: Vec::new(),
            planes: Vec::new(),
            next_plane: 0,
            soft_free_blocks,
            hard_free_blocks: thresholds.hard,
            user_reserve_blocks: thresholds.user_reserve,
            gc_policy: gc::make("greedy", 1).expect("greedy exists"),
            rng: stream_rng(seed, "device:gc"),
            mapped: 0,
            slc: SlcRegion::new(cfg, &geometry),
            stats: FtlStats::default(),
        };
        if cfg.ftl.mapping == MappingKind::InPlace {
            return Ok(ftl);
        }

        let fill = precondition_fill(cfg);
        let initial_pages = initial_pages(cfg);
        let per_plane = |u: u32| map::striped_share(initial_pages, units, geometry.units_per_page, u);
        if !thresholds.room_for(cfg, per_plane(0)) {
            return Err(format!(
                "device.ftl.precondition_fill: {fill} of the logical space does not fit beside the GC free-block \
                 reserve ({soft_free_blocks} blocks per plane{}); lower the fill or raise \
                 device.ftl.overprovisioning",
                slc_static_note(thresholds.slc_static)
            ));
        }
        // The SLC cache's static blocks stay free beside GC's reserve (none without an SLC cache): the random
        // steady state is that of a drive keeping both free, and streaming leaves both free.
        let min_free = soft_free_blocks + thresholds.slc_static;
        let steady = match cfg.ftl.precondition {
            Precondition::Random | Precondition::RandomGcDue if initial_pages > 0 => {
                Some(precondition::RandomSteadyState::new(
                    units,
                    bpp,
                    ppb,
                    initial_pages,
                    FreeBlockThresholds { soft: min_free, ..thresholds },
                    cfg.ftl.precondition == Precondition::RandomGcDue,
                    gc_policy.as_mut(),
                    &mut rng,
                ))
            }
            _ => None,
        };
        ftl.valid = vec![0; n_blocks];
        ftl.written = vec![0; n_blocks];
        ftl.planes = (0..units).map(|_| PlaneState::default()).collect();
        for u in 0..units {
            let init = match (&steady, cfg.ftl.precondition) {
                (Some(s), _) => s.plane(u, bpp, &mut rng),
                (None, Precondition::Streaming) => {
                    precondition::streaming(bpp, ppb, per_plane(u), min_free as u32, &mut rng)
                }
                (None, _) => precondition::sequential(bpp, ppb, per_plane(u)),
            };
            let blocks = u as usize * bpp as usize..(u + 1) as usize * bpp as usize;
            ftl.valid[blocks.clone()].copy_from_slice(&init.valid[..bpp as usize]);
            ftl.written[blocks].copy_from_slice(&init.written[..bpp as usize]);
            ftl.planes[u as usize] = PlaneState {
                free: init.free.into_iter().collect(),
                open_user: init.open,
                open_gc: init.open_gc,
                open_slc: None,
                gc: None,
            };
        }
        // Random: logical pages scattered over the initially valid pages, whatever share each plane holds.
        // Otherwise in order, striped over the planes.
        let (initial_perm, slot_order) = match cfg.ftl.precondition {
            Precondition::Random | Precondition::RandomGcDue => {
                (Permutation::new(initial_pages.max(1), rng_key(&mut rng)), SlotOrder::ByPlane)
            }
            _ => (Permutation::identity(initial_pages.max(1)), SlotOrder::Striped),
        };
        ftl.map = PageMap::new(&geometry, logical_pages, initial_pages, initial_perm, ftl.valid.clone(), slot_order);
        ftl.gc_policy = gc_policy;
        ftl.mapped = initial_pages;
        Ok(ftl)
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// Heap bytes the map and the per-block state hold now. It grows as the run writes pages, up to
    /// [`Ftl::map_bytes_at_most`].
    pub fn map_bytes(&self) -> u64 {
        let per_block = (self.valid.capacity() + self.written.capacity()) as u64 * 2;
        let free_lists: u64 = self.planes.iter().map(|p| p.free.capacity() as u64 * 4).sum();
        per_block + free_lists + self.map.bytes() + self.slc.as_ref().map_or(0, SlcRegion::bytes)
    }

    /// The most [`Ftl::map_bytes`] can reach on a drive of `cfg`, whatever the run: every logical page
    /// rewritten by the host, every preconditioned page moved by GC, every block holding pages the run wrote.
    /// 0 for a drive written in place (it has no map).
    pub fn map_bytes_at_most(cfg: &DeviceConfig) -> u64 {
        if cfg.ftl.mapping == MappingKind::InPlace {
            return 0;
        }
        let geometry = Geometry::of(cfg);
        let blocks = geometry.blocks();
        // valid and written counts, and a free list per plane that may grow to twice its blocks.
        let per_block = blocks * (2 + 2 + 2 * 4);
        let slc = if cfg.slc.enabled { SlcRegion::bytes_at_most(&geometry) } else { 0 };
        per_block + PageMap::bytes_at_most(&geometry, cfg.logical_pages(), initial_pages(cfg)) + slc
    }

    pub fn logical_pages(&self) -> u64 {
        self.logical_pages
    }

    /// Physical page of the striped static layout for slot `s`: plane unit `s % units`, then the plane's
    /// pages in order.
    fn static_page(&self, slot: u64) -> u64 {
        let units = self.geometry.planes() as u64;
        let u = slot % units;
        let q = slot / units;
        u * self.geometry.blocks_per_plane as u64 * self.geometry.pages_per_block as u64 + q
    }

    /// Where logical page `lpa` lives now (`None`: never written).
    pub fn lookup(&self, lpa: u64) -> Option<u64> {
        if self.mapping == MappingKind::InPlace {
            return Some(self.static_page(lpa));
        }
        self.map.lookup(lpa)
    }

    /// The logical page stored in physical page `ppa`, valid or stale (`None`: erased or never written).
    fn owner(&self, ppa: u64) -> Option<u64> {
        self.map.owner(ppa)
    }

    /// Whether `ppa` holds the current copy of its logical page.
    pub fn is_valid(&self, ppa: u64) -> bool {
        self.owner(ppa).is_some_and(|lpa| self.lookup(lpa) == Some(ppa))
    }

    /// Move the valid-page counts of a page from `old_ppa` (if any) to `new_ppa`.
    fn count_valid(&mut self, old_ppa: Option<u64>, new_ppa: u64) {
        if let Some(old) = old_ppa {
            let b = self.geometry.block_of(old) as usize;
            debug_assert!(self.valid[b] > 0);
            self.valid[b] -= 1;
        }
        self.valid[self.geometry.block_of(new_ppa) as usize] += 1;
    }

    /// Next page of plane `u` for `stream`. Host writes leave the last free blocks to GC, and native host
    /// writes the SLC cache's unused static blocks too. An SLC-mode block closes after its SLC pages; one
    /// beyond the static part opens only while the plane has more free blocks than GC keeps (the dynamic part
    /// uses free blocks, it does not make GC free them).
    fn allocate_in_plane(&mut self, u: u32, stream: Stream) -> Option<u64> {
        let bpp = self.geometry.blocks_per_plane as u64;
        let ppb = self.geometry.pages_per_block as u16;
        let slc_unused = self.slc.as_ref().map_or(0, |s| s.unused_static(u));
        let (reserve, capacity) = match stream {
            Stream::Gc => (0, ppb),
            Stream::Host => (self.user_reserve_blocks + slc_unused, ppb),
            Stream::Slc => {
                let reserve = if slc_unused > 0 { self.user_reserve_blocks } else { self.soft_free_blocks };
                (reserve, self.slc.as_ref().map_or(ppb, |s| s.pages_per_block as u16))
            }
        };
        let plane = &mut self.planes[u as usize];
        let open = match stream {
            Stream::Host => &mut plane.open_user,
            Stream::Gc => &mut plane.open_gc,
            Stream::Slc => &mut plane.open_slc,
        };
        let block = match *open {
            Some(b) => b,
            None if plane.free.len() > reserve => {
                let b = plane.free.pop_front().expect("free list is non-empty");
                *open = Some(b);
                if let (Stream::Slc, Some(slc)) = (stream, self.slc.as_mut()) {
                    slc.opened(u, b);
                }
                b
            }
            None => return None,
        };
        let gb = u as u64 * bpp + block as u64;
        let page = self.written[gb as usize];
        self.written[gb as usize] += 1;
        if page + 1 == capacity {
            *open = None;
            if let (Stream::Slc, Some(slc)) = (stream, self.slc.as_mut()) {
                slc.closed(u, block);
            }
        }
        Some(gb * ppb as u64 + page as u64)
    }

    /// Next page of plane `u` for host data: its SLC block while the SLC cache takes host pages there, else
    /// a native block.
    fn allocate_host_in_plane(&mut self, u: u32) -> Option<u64> {
        if let Some(slc) = self.slc.as_mut() {
            let limit = slc.limit(self.logical_pages - self.mapped);
            if slc.takes_host_page(u, self.planes[u as usize].open_slc.is_some(), limit) {
                if let Some(ppa) = self.allocate_in_plane(u, Stream::Slc) {
                    self.slc.as_mut().expect("checked").stats.host_pages_slc += 1;
                    return Some(ppa);
                }
                // No free block to grow into: the region is as large as it gets for now.
                self.slc.as_mut().expect("checked").exhaust(u);
            }
            let ppa = self.allocate_in_plane(u, Stream::Host)?;
            self.slc.as_mut().expect("checked").stats.host_pages_native += 1;
            return Some(ppa);
        }
        self.allocate_in_plane(u, Stream::Host)
    }

    /// Place a host write of `lpa`: returns the physical page, or `None` when no plane has space for user
    /// data right now (retry after an erase completes).
    pub fn allocate_user(&mut self, lpa: u64) -> Option<u64> {
        if self.mapping == MappingKind::InPlace {
            return Some(self.static_page(lpa));
        }
        let units = self.geometry.planes();
        for i in 0..units {
            let u = (self.next_plane + i) % units;
            if let Some(ppa) = self.allocate_host_in_plane(u) {
                // The units of a flash page are consecutive allocations on one plane: move on to the next
                // plane after a page's last unit (after every page when the unit is the page).
                self.next_plane = if self.geometry.is_last_unit(ppa) { (u + 1) % units } else { u };
                let old = self.lookup(lpa);
                self.mapped += u64::from(old.is_none());
                self.count_valid(old, ppa);
                self.map.place_written(lpa, ppa);
                return Some(ppa);
            }
        }
        None
    }

    /// Whether every unit of the flash page holding unit `ppa` has been allocated (or padded).
    pub fn page_complete(&self, ppa: u64) -> bool {
        let ppb = self.geometry.pages_per_block as u64;
        let upp = self.geometry.units_per_page as u64;
        let page_end = ((ppa % ppb) / upp + 1) * upp;
        self.written[self.geometry.block_of(ppa) as usize] as u64 >= page_end
    }

    /// The firmware pads the flash page holding unit `ppa` (it cannot wait longer for the page's other
    /// units): the page's unallocated units count as written, holding nothing, so allocation goes on at the
    /// next page. No effect if they were allocated meanwhile.
    pub fn pad_page(&mut self, ppa: u64) {
        let ppb = self.geometry.pages_per_block as u64;
        let upp = self.geometry.units_per_page as u64;
        let gb = self.geometry.block_of(ppa);
        let page_end = ((ppa % ppb) / upp + 1) * upp;
        let written = self.written[gb as usize] as u64;
        if written >= page_end || written <= ppa % ppb {
            return; // filled meanwhile (or, for `ppa` already erased, a block reused since: nothing to pad)
        }
        self.written[gb as usize] = page_end as u16;
        let u = self.geometry.plane_of_block(gb);
        let block = (gb % self.geometry.blocks_per_plane as u64) as u32;
        let capacity = if self.slc.as_ref().is_some_and(|s| s.is_slc(gb)) {
            self.slc.as_ref().map_or(ppb, |s| s.pages_per_block as u64)
        } else {
            ppb
        };
        if page_end < capacity {
            return;
        }
        let plane = &mut self.planes[u as usize];
        for (open, stream) in
            [(&mut plane.open_user, Stream::Host), (&mut plane.open_gc, Stream::Gc), (&mut plane.open_slc, Stream::Slc)]
        {
            if *open == Some(block) {
                *open = None;
                if let (Stream::Slc, Some(slc)) = (stream, self.slc.as_mut()) {
                    slc.closed(u, block);
                }
            }
        }
    }

    /// Whether plane `u` should start a GC job now.
    pub fn gc_wanted(&self, u: u32) -> bool {
        let slc_unused = self.slc.as_ref().map_or(0, |s| s.unused_static(u));
        self.mapping == MappingKind::Page
            && self.planes[u as usize].gc.is_none()
            && self.planes[u as usize].free.len() < self.soft_free_blocks + slc_unused
    }

    /// Whether plane `u` should start folding its SLC data now (never while it has a job).
    pub fn fold_wanted(&self, u: u32) -> bool {
        let Some(slc) = &self.slc else { return false };
        self.planes[u as usize].gc.is_none()
            && (slc.fold_wanted(u, slc.limit(self.logical_pages - self.mapped)) || self.gc_wanted(u))
    }

    /// Start the job plane `u` needs, if any: folding of its oldest full SLC block when it wants that or is
    /// short of free blocks (a fold frees a whole block for at most a third of a block's moves, more than a GC
    /// victim gives unless that is two-thirds stale), else garbage collection when it is short of free
    /// blocks. Lists the victim's valid pages into `moves` and returns the victim's global block index.
    pub fn start_reclaim(&mut self, u: u32, moves: &mut Vec<(u64, u64)>) -> Option<u64> {
        if self.fold_wanted(u) {
            if let Some(block) = self.slc.as_mut().expect("fold_wanted needs an SLC cache").fold_victim(u) {
                let gb = u as u64 * self.geometry.blocks_per_plane as u64 + block as u64;
                self.start_job(u, gb, moves);
                return Some(gb);
            }
        }
        if self.gc_wanted(u) {
            return self.start_gc(u, moves);
        }
        None
    }

    /// Whether any plane of `die` is below the hard threshold (GC must not wait behind host work).
    pub fn gc_urgent(&self, die: u32) -> bool {
        if self.mapping == MappingKind::InPlace {
            return false;
        }
        let dies = self.geometry.dies();
        (0..self.geometry.planes_per_die)
            .any(|p| self.planes[(p * dies + die) as usize].free.len() <= self.hard_free_blocks)
    }

    /// GC transactions `die` owes per host page it programs, to keep free space level. A job frees
    /// `ppb - v` pages for `v` moves of two transactions each (read, program); host pages spread evenly over
    /// the die's planes, so the die owes the mean over its planes (0 for a plane with no job).
    pub fn gc_pace(&self, die: u32) -> f64 {
        if self.mapping == MappingKind::InPlace {
            return 0.0;
        }
        let dies = self.geometry.dies();
        let ppb = self.geometry.pages_per_block as f64;
        let owed: f64 = (0..self.geometry.planes_per_die)
            .filter_map(|p| self.planes[(p * dies + die) as usize].gc)
            .map(|job| 2.0 * job.victim_valid as f64 / (ppb - job.victim_valid as f64).max(1.0))
            .sum();
        owed / self.geometry.planes_per_die as f64
    }

    /// Start a GC job on plane `u`: choose a victim and list its valid pages `(ppa, lpa)` into `moves`.
    /// Returns the victim's global block index, or `None` if no block can be reclaimed.
    pub fn start_gc(&mut self, u: u32, moves: &mut Vec<(u64, u64)>) -> Option<u64> {
        let bpp = self.geometry.blocks_per_plane as usize;
        let ppb = self.geometry.pages_per_block;
        let base = u as usize * bpp;
        let written = &self.written[base..base + bpp];
        // Full blocks only (open blocks are never full: they close on their last page).
        let is_candidate = |b: usize| written[b] as u32 == ppb;
        let valid = &self.valid[base..base + bpp];
        let mut victim = self.gc_policy.select(valid, &is_candidate, &mut self.rng)?;
        if valid[victim] as u32 == ppb {
            // The policy's pick frees nothing (random, d-choices can land there): take the emptiest block.
            victim = gc::fewest_valid(valid, &is_candidate, 0..bpp)?;
            if valid[victim] as u32 == ppb {
                return None; // every full block is fully valid: nothing to gain
            }
        }
        let gb = (base + victim) as u64;
        self.start_job(u, gb, moves);
        Some(gb)
    }

    /// Make global block `gb` plane `u`'s job's victim and list its valid pages `(ppa, lpa)` into `moves`.
    fn start_job(&mut self, u: u32, gb: u64, moves: &mut Vec<(u64, u64)>) {
        self.list_valid_pages(gb, moves);
        self.planes[u as usize].gc =
            Some(GcJob { victim: gb, pending_moves: moves.len() as u32, victim_valid: moves.len() as u32 });
    }

    /// List the valid pages `(ppa, lpa)` of global block `gb` into `moves`.
    fn list_valid_pages(&self, gb: u64, moves: &mut Vec<(u64, u64)>) {
        let ppb = self.geometry.pages_per_block as u64;
        moves.clear();
        for page in 0..self.written[gb as usize] as u64 {
            let ppa = gb * ppb + page;
            if let Some(lpa) = self.owner(ppa).filter(|&lpa| self.lookup(lpa) == Some(ppa)) {
                moves.push((ppa, lpa));
            }
        }
        debug_assert_eq!(moves.len(), self.valid[gb as usize] as usize);
    }

    /// Logical pages that have a home.
    pub fn mapped_pages(&self) -> u64 {
        self.mapped
    }

    /// The timed preconditioning writes stopped with work in flight (`device/timed_precondition.rs`): a GC
    /// job's moves not yet finished are the pages still valid in its victim (listed again by
    /// [`Ftl::carried_job_moves`]) and the `moves_in_flight[plane]` whose read finished (they have their new
    /// home; their programs are carried over). The counters start from zero: the writes were setup, not the
    /// run.
    pub fn end_timed_precondition(&mut self, moves_in_flight: &[u32]) {
        for (plane, &in_flight) in self.planes.iter_mut().zip(moves_in_flight) {
            if let Some(job) = plane.gc.as_mut() {
                job.pending_moves = self.valid[job.victim as usize] as u32 + in_flight;
            }
        }
        self.stats = FtlStats::default();
        if let Some(slc) = self.slc.as_mut() {
            slc.stats = Default::default();
        }
    }

    /// List the moves plane `u`'s job still has (its victim's valid pages) into `moves`; false when the plane
    /// has no job. For jobs carried over from the timed preconditioning.
    pub fn carried_job_moves(&self, u: u32, moves: &mut Vec<(u64, u64)>) -> bool {
        let Some(job) = self.planes[u as usize].gc else { return false };
        self.list_valid_pages(job.victim, moves);
        true
    }

    /// The GC job of plane `u`, if any.
    pub fn gc_job(&self, u: u32) -> Option<GcJob> {
        self.planes[u as usize].gc
    }

    /// A GC read of `old_ppa` finished: if it still holds `lpa`'s data, allocate its new home in the same
    /// plane and remap. `None`: the host overwrote it meanwhile, nothing to write.
    pub fn relocate(&mut self, lpa: u64, old_ppa: u64) -> Option<u64> {
        if self.lookup(lpa) != Some(old_ppa) {
            return None;
        }
        let u = self.geometry.plane_of_page(old_ppa);
        // Host writes never take the plane's last `user_reserve` (>= 1) free blocks and a job moves fewer
        // than a block's pages into GC's own open block, so a move always finds a page.
        let new_ppa = self
            .allocate_in_plane(u, Stream::Gc)
            .unwrap_or_else(|| panic!("model invariant: plane {u} has no page left for a GC move"));
        if let Some(slc) = self.slc.as_mut().filter(|s| s.is_slc(self.geometry.block_of(old_ppa))) {
            slc.stats.folded_pages += 1;
        }
        self.count_valid(Some(old_ppa), new_ppa);
        self.map.place_moved(lpa, old_ppa, new_ppa);
        Some(new_ppa)
    }

    /// One page move of plane `u`'s job is done (written, or skipped). True when the victim can be erased.
    pub fn gc_move_done(&mut self, u: u32) -> bool {
        let job = self.planes[u as usize].gc.as_mut().expect("a GC move finished on a plane with no job");
        job.pending_moves -= 1;
        job.pending_moves == 0
    }

    /// Plane `u`'s victim was erased: it joins the free blocks.
    pub fn erase_done(&mut self, u: u32) {
        let job = self.planes[u as usize].gc.take().expect("an erase finished on a plane with no job");
        let gb = job.victim as usize;
        assert_eq!(self.valid[gb], 0, "erased a block that still holds valid pages");
        self.map.erased(gb);
        if let Some(slc) = self.slc.as_mut() {
            slc.erased(u, gb as u64);
        }
        self.written[gb] = 0;
        let block_in_plane = (gb % self.geometry.blocks_per_plane as usize) as u32;
        self.planes[u as usize].free.push_back(block_in_plane);
        self.stats.blocks_erased += 1;
    }

    /// Whether physical page `ppa` is in an SLC-mode block (it programs and reads at the SLC times).
    #[inline]
    pub fn is_slc_page(&self, ppa: u64) -> bool {
        self.slc.as_ref().is_some_and(|s| s.is_slc(self.geometry.block_of(ppa)))
    }

    /// The SLC cache's counters (`None` without one).
    pub fn slc_stats(&self) -> Option<slc::SlcStats> {
        self.slc.as_ref().map(|s| s.stats)
    }

    /// The SLC cache's size now (pages it may hold in every plane) and the valid pages its blocks hold.
    pub fn slc_occupancy(&self) -> Option<(u64, u64)> {
        let slc = self.slc.as_ref()?;
        let region = slc.limit(self.logical_pages - self.mapped) as u64
            * slc.pages_per_block as u64
            * self.geometry.planes() as u64;
        let valid = (0..self.geometry.blocks()).filter(|&b| slc.is_slc(b)).map(|b| self.valid[b as usize] as u64).sum();
        Some((region, valid))
    }

    /// The drive has been idle for `device.slc.fold_idle_ns`: fold every full SLC block, and let host writes
    /// use SLC again. No effect without an SLC cache.
    pub fn slc_drive_idle(&mut self) {
        if let Some(slc) = self.slc.as_mut() {
            slc.drive_idle();
        }
    }

    /// A command arrived: folding for idleness ends with the jobs under way.
    pub fn slc_drive_busy(&mut self) {
        if let Some(slc) = self.slc.as_mut() {
            slc.drive_busy();
        }
    }

    /// Check that every block of every plane is accounted for exactly once: free (nothing written, not SLC),
    /// one of the plane's open blocks, or full (its native pages, or its SLC pages for an SLC-mode block), and
    /// that the SLC cache's state agrees.
    fn check_blocks(&self) -> Result<(), String> {
        let bpp = self.geometry.blocks_per_plane as usize;
        let ppb = self.geometry.pages_per_block as u16;
        for (u, plane) in self.planes.iter().enumerate() {
            let written = &self.written[u * bpp..(u + 1) * bpp];
            let mut free = vec![false; bpp];
            for &b in &plane.free {
                if std::mem::replace(&mut free[b as usize], true) {
                    return Err(format!("block {b} of plane {u} is twice in the free list"));
                }
            }
            let open = [plane.open_user, plane.open_gc, plane.open_slc];
            let victim = plane.gc.map(|job| (job.victim as usize - u * bpp) as u32);
            for b in 0..bpp {
                let gb = (u * bpp + b) as u64;
                let is_slc = self.slc.as_ref().is_some_and(|s| s.is_slc(gb));
                let capacity = if is_slc { self.slc.as_ref().map_or(ppb, |s| s.pages_per_block as u16) } else { ppb };
                let opened = open.iter().filter(|&&o| o == Some(b as u32)).count();
                let state = match (free[b], opened) {
                    (true, 0) if written[b] == 0 && !is_slc => None,
                    (true, _) => Some("free but written, open or in SLC mode"),
                    (false, 0) if written[b] == capacity => None,
                    (false, 0) => Some("neither free, open nor full"),
                    (false, 1) if (Some(b as u32) == plane.open_slc) != is_slc => Some("open in the wrong mode"),
                    (false, 1) if written[b] < capacity => None,
                    (false, 1) => Some("open but full"),
                    (false, _) => Some("open twice"),
                };
                if let Some(what) = state {
                    return Err(format!("block {b} of plane {u} is {what} ({} pages written)", written[b]));
                }
            }
            if let Some(slc) = &self.slc {
                let free: Vec<u32> = plane.free.iter().copied().collect();
                slc.check_plane(u as u32, written, &free, plane.open_slc, victim)?;
            }
        }
        Ok(())
    }

    /// Check that the map is a bijection between mapped logical pages and valid physical pages, that the
    /// per-block valid counts agree and that every block is accounted for (`check_blocks`). Linear in the
    /// drive size: for tests on small drives.
    pub fn check_invariants(&self) -> Result<(), String> {
        if self.mapping == MappingKind::InPlace {
            return Ok(());
        }
        self.check_blocks()?;
        let ppb = self.geometry.pages_per_block as u64;
        let mut seen = vec![false; self.geometry.pages() as usize];
        let mut mapped = 0u64;
        for lpa in 0..self.logical_pages {
            if let Some(ppa) = self.lookup(lpa) {
                mapped += 1;
                if ppa >= self.geometry.pages() {
                    return Err(format!("lpa {lpa} maps outside the drive"));
                }
                if std::mem::replace(&mut seen[ppa as usize], true) {
                    return Err(format!("two logical pages map to physical page {ppa}"));
                }
                if self.owner(ppa) != Some(lpa) {
                    return Err(format!("page {ppa} does not record lpa {lpa} as its owner"));
                }
                if (ppa % ppb) as u16 >= self.written[(ppa / ppb) as usize] {
                    return Err(format!("lpa {lpa} maps to unwritten page {ppa}"));
                }
            }
        }
        let mut total_valid = 0u64;
        for (b, &v) in self.valid.iter().enumerate() {
            let counted = (b as u64 * ppb..(b as u64 + 1) * ppb).filter(|&p| seen[p as usize]).count();
            if counted != v as usize {
                return Err(format!("block {b} counts {v} valid pages but holds {counted}"));
            }
            total_valid += v as u64;
        }
        if total_valid != mapped {
            return Err(format!("{mapped} mapped logical pages but {total_valid} valid physical pages"));
        }
        if mapped != self.mapped {
            return Err(format!("{mapped} mapped logical pages but the FTL counts {}", self.mapped));
        }
        Ok(())
    }
}

/// What the precondition error adds about the SLC cache's static blocks.
fn slc_static_note(blocks: usize) -> String {
    if blocks == 0 {
        String::new()
    } else {
        format!(", plus {blocks} for the SLC cache's static part (device.slc.static_bytes)")
    }
}

/// The share of the logical pages preconditioning maps.
fn precondition_fill(cfg: &DeviceConfig) -> f64 {
    match cfg.ftl.precondition {
        Precondition::None => 0.0,
        _ => cfg.ftl.precondition_fill,
    }
}

/// Logical pages preconditioning maps: `0..initial_pages(cfg)`.
fn initial_pages(cfg: &DeviceConfig) -> u64 {
    (cfg.logical_pages() as f64 * precondition_fill(cfg)).floor() as u64
}

fn rng_key(rng: &mut SimRng) -> u64 {
    use rand::RngExt;
    rng.random()
}
