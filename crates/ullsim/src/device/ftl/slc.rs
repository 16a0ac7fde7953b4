//! The SLC cache of a consumer TLC drive (Samsung's Intelligent TurboWrite and its kin): which blocks are in
//! SLC mode, how large the region may be now, and when its data is folded into native-mode blocks.
//!
//! A block written in SLC mode holds `pages_per_block / bits_per_cell` pages (its first ones) and programs
//! and reads at the SLC times. The region is a static part, kept whatever the fill (its blocks come out of
//! over-provisioning: garbage collection keeps them free), plus a dynamic part that may use the free user
//! space in SLC mode, at most `dynamic_max_bytes`: one SLC block per native block's worth of unmapped
//! logical pages, so the dynamic part shrinks as the drive fills and a full drive keeps only the static part.
//! Host writes go to SLC while their plane's part of the region has room; once it is full they go to native
//! blocks directly until the drive has been idle (the region is then "exhausted"). Folding is a job of the
//! GC machinery (one job per plane, paced against host writes like GC, `device/collect.rs`) whose victim is
//! the oldest full SLC block: its valid pages move to the plane's native GC block and it is erased. A plane
//! folds while its full SLC blocks reach `fold_threshold` of its part of the region, while the region is
//! exhausted or larger than it may now be, while the plane is short of free blocks, and, once the drive has
//! been idle for `fold_idle_ns`, until no full SLC block is left.

use std::collections::VecDeque;

use crate::config::device::{DeviceConfig, MappingKind};

use super::super::flash::Geometry;

/// SLC-mode blocks each plane keeps for the static part of the region (0 when there is no SLC cache).
pub fn static_blocks_per_plane(cfg: &DeviceConfig) -> u32 {
    if !cfg.slc.enabled || cfg.ftl.mapping != MappingKind::Page {
        return 0;
    }
    let block_bytes = slc_pages_per_block(cfg) as u64 * cfg.mapping_unit_bytes();
    let planes = Geometry::of(cfg).planes() as u64;
    // Validation bounds the geometry, not these bytes: saturate rather than overflow.
    cfg.slc.static_bytes.0.div_ceil(block_bytes.max(1) * planes.max(1)).min(u32::MAX as u64) as u32
}

/// Mapping units a block holds in SLC mode: its first `pages_per_block / bits_per_cell` flash pages.
fn slc_pages_per_block(cfg: &DeviceConfig) -> u32 {
    (cfg.flash.pages_per_block / cfg.slc.bits_per_cell.max(1)).max(1) * cfg.units_per_page()
}

/// Counters the results report (cumulative).
#[derive(Debug, Clone, Copy, Default)]
pub struct SlcStats {
    /// Host pages placed in SLC-mode blocks, and in native blocks directly.
    pub host_pages_slc: u64,
    pub host_pages_native: u64,
    /// Pages folding moved out of SLC-mode blocks, and SLC blocks it erased.
    pub folded_pages: u64,
    pub blocks_folded: u64,
}

/// One plane's part of the region.
#[derive(Debug, Default, Clone)]
struct SlcPlane {
    /// Full SLC-mode blocks not being folded yet, oldest first.
    full: VecDeque<u32>,
    /// SLC-mode blocks: open, full and being folded.
    blocks: u32,
    /// The plane's part filled: host writes go to native blocks until the drive is idle.
    exhausted: bool,
}

/// The SLC cache's state (present only when `device.slc.enabled`).
pub struct SlcRegion {
    /// Pages of an SLC-mode block.
    pub pages_per_block: u32,
    static_blocks: u32,
    dynamic_max_blocks: u32,
    /// Logical pages one native block holds in every plane: unmapped pages per dynamic SLC block per plane.
    pages_per_block_row: u64,
    fold_threshold: f64,
    blocks_per_plane: u32,
    /// One bit per global block: in SLC mode (from when it is opened as such until its erase).
    is_slc: Vec<u64>,
    planes: Vec<SlcPlane>,
    /// The drive has been idle: fold every full SLC block.
    idle: bool,
    pub stats: SlcStats,
}

impl SlcRegion {
    /// The region of a drive of `cfg`; `None` without an SLC cache.
    pub fn new(cfg: &DeviceConfig, geometry: &Geometry) -> Option<SlcRegion> {
        if !cfg.slc.enabled || cfg.ftl.mapping != MappingKind::Page {
            return None;
        }
        let pages_per_block = slc_pages_per_block(cfg);
        let planes = geometry.planes() as u64;
        let row = pages_per_block as u64 * cfg.mapping_unit_bytes() * planes;
        Some(SlcRegion {
            pages_per_block,
            static_blocks: static_blocks_per_plane(cfg),
            dynamic_max_blocks: (cfg.slc.dynamic_max_bytes.0 / row.max(1)).min(u32::MAX as u64) as u32,
            pages_per_block_row: geometry.pages_per_block as u64 * planes,
            fold_threshold: cfg.slc.fold_threshold,
            blocks_per_plane: geometry.blocks_per_plane,
            is_slc: vec![0; (geometry.blocks() as usize).div_ceil(64)],
            planes: vec![
                SlcPlane { exhausted: cfg.ftl.precondition_slc_exhausted, ..SlcPlane::default() };
                geometry.planes() as usize
            ],
            idle: false,
            stats: SlcStats::default(),
        })
    }

    /// Whether global block `block` is in SLC mode.
    #[inline]
    pub fn is_slc(&self, block: u64) -> bool {
        self.is_slc[(block / 64) as usize] & (1 << (block % 64)) != 0
    }

    fn mark(&mut self, block: u64, slc: bool) {
        let word = &mut self.is_slc[(block / 64) as usize];
        if slc {
            *word |= 1 << (block % 64);
        } else {
            *word &= !(1 << (block % 64));
        }
    }

    /// SLC-mode blocks each plane may hold now, with `unmapped` logical pages left: the static part plus
    /// the dynamic part the free user space allows.
    pub fn limit(&self, unmapped: u64) -> u32 {
        let dynamic = (unmapped / self.pages_per_block_row).min(self.dynamic_max_blocks as u64) as u32;
        self.static_blocks + dynamic
    }

    /// Free blocks plane `u` keeps for the static part it is not using: native writes and GC's threshold
    /// leave them alone.
    pub fn unused_static(&self, u: u32) -> usize {
        self.static_blocks.saturating_sub(self.planes[u as usize].blocks) as usize
    }

    /// Whether a host page on plane `u` goes to SLC (`has_open`: the plane has an open SLC block). Marks the
    /// plane exhausted when its part of the region (`limit` blocks) is full.
    pub fn takes_host_page(&mut self, u: u32, has_open: bool, limit: u32) -> bool {
        let plane = &mut self.planes[u as usize];
        if !plane.exhausted && !has_open && plane.blocks >= limit {
            plane.exhausted = true;
        }
        !plane.exhausted
    }

    /// Plane `u`'s part of the region cannot grow now (no free block for it): host writes go to native blocks
    /// until the drive is idle, as when it is full.
    pub fn exhaust(&mut self, u: u32) {
        self.planes[u as usize].exhausted = true;
    }

    /// Block `block` of plane `u` (index within the plane) was opened in SLC mode.
    pub fn opened(&mut self, u: u32, block: u32) {
        self.mark(u as u64 * self.blocks_per_plane as u64 + block as u64, true);
        self.planes[u as usize].blocks += 1;
    }

    /// SLC block `block` of plane `u` is full.
    pub fn closed(&mut self, u: u32, block: u32) {
        self.planes[u as usize].full.push_back(block);
    }

    /// Whether plane `u` should fold now, its part of the region being `limit` blocks.
    pub fn fold_wanted(&self, u: u32, limit: u32) -> bool {
        let plane = &self.planes[u as usize];
        !plane.full.is_empty()
            && (self.idle
                || plane.exhausted
                || plane.blocks > limit
                || plane.full.len() as f64 >= self.fold_threshold * limit as f64)
    }

    /// The next block plane `u` folds (index within the plane): its oldest full SLC block.
    pub fn fold_victim(&mut self, u: u32) -> Option<u32> {
        self.planes[u as usize].full.pop_front()
    }

    /// Global block `block` of plane `u` was erased; true if it was an SLC block (folded).
    pub fn erased(&mut self, u: u32, block: u64) -> bool {
        if !self.is_slc(block) {
            return false;
        }
        self.mark(block, false);
        self.planes[u as usize].blocks -= 1;
        self.stats.blocks_folded += 1;
        true
    }

    /// The drive has been idle for `fold_idle_ns`: fold everything, and host writes may use SLC again.
    pub fn drive_idle(&mut self) {
        self.idle = true;
        for plane in &mut self.planes {
            plane.exhausted = false;
        }
    }

    /// A command arrived: folding for idleness stops once the jobs under way finish.
    pub fn drive_busy(&mut self) {
        self.idle = false;
    }

    /// SLC-mode blocks of every plane.
    pub fn blocks(&self) -> u64 {
        self.planes.iter().map(|p| p.blocks as u64).sum()
    }

    /// Heap bytes of the region's state.
    pub fn bytes(&self) -> u64 {
        let queued: u64 = self.planes.iter().map(|p| p.full.capacity() as u64 * 4).sum();
        self.is_slc.capacity() as u64 * 8
            + self.planes.capacity() as u64 * std::mem::size_of::<SlcPlane>() as u64
            + queued
    }

    /// The most [`SlcRegion::bytes`] can reach on `geometry`: a bit per block, and every block of a plane
    /// queued as a full SLC block (a queue may hold up to twice its entries).
    pub fn bytes_at_most(geometry: &Geometry) -> u64 {
        geometry.blocks().div_ceil(64) * 8
            + geometry.planes() as u64 * std::mem::size_of::<SlcPlane>() as u64
            + geometry.blocks() * 2 * 4
    }

    /// Check plane `u`'s SLC accounting against the FTL's per-block state: `written` of its blocks, its free
    /// blocks, its open SLC block and its GC job's victim (block indices within the plane).
    pub fn check_plane(
        &self,
        u: u32,
        written: &[u16],
        free: &[u32],
        open: Option<u32>,
        victim: Option<u32>,
    ) -> Result<(), String> {
        let plane = &self.planes[u as usize];
        let base = u as u64 * self.blocks_per_plane as u64;
        let slc: Vec<u32> = (0..self.blocks_per_plane).filter(|&b| self.is_slc(base + b as u64)).collect();
        if slc.len() as u32 != plane.blocks {
            return Err(format!("plane {u} counts {} SLC blocks but marks {}", plane.blocks, slc.len()));
        }
        if let Some(b) = slc.iter().find(|&&b| written[b as usize] as u32 > self.pages_per_block) {
            return Err(format!(
                "SLC block {b} of plane {u} holds {} pages (at most {})",
                written[*b as usize], self.pages_per_block
            ));
        }
        if let Some(b) = free.iter().find(|&&b| self.is_slc(base + b as u64)) {
            return Err(format!("block {b} of plane {u} is free but marked SLC"));
        }
        // Every SLC block is the open one, a full one waiting to be folded, or the one being folded.
        let mut queued_at = vec![false; self.blocks_per_plane as usize];
        for &b in &plane.full {
            if std::mem::replace(&mut queued_at[b as usize], true) || !self.is_slc(base + b as u64) {
                return Err(format!("plane {u} queues block {b} for folding twice or not in SLC mode"));
            }
        }
        for &b in &slc {
            let full = written[b as usize] as u32 == self.pages_per_block;
            let queued = queued_at[b as usize];
            let accounted = if Some(b) == open { !full && !queued } else { full && (queued != (Some(b) == victim)) };
            if !accounted {
                return Err(format!("SLC block {b} of plane {u} is neither open, queued for folding nor being folded"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::scenario::Scenario;

    /// `tlc-consumer` with 64 blocks per plane, a 128 MiB static part (one SLC block in each of the 64
    /// planes) and up to 384 MiB dynamic (three).
    fn region() -> (SlcRegion, DeviceConfig) {
        let text = "[device]\npreset = \"tlc-consumer\"\n[device.flash]\nblocks_per_plane = 64\n[device.slc]\n\
                    static_bytes = \"128MiB\"\ndynamic_max_bytes = \"384MiB\"\n[[flow]]\nname = \"f\"\nrw = \"read\"\n";
        let s = Scenario::from_toml_str(text, "t", std::path::Path::new("."), &[]).expect("a valid scenario");
        let g = Geometry::of(&s.device);
        (SlcRegion::new(&s.device, &g).expect("an SLC cache"), s.device)
    }

    #[test]
    fn the_limit_is_the_static_part_plus_what_the_unmapped_pages_allow() {
        let (r, cfg) = region();
        // Pages here are the preset's mapping units (4 KiB: four per 16 KiB flash page).
        let units = cfg.units_per_page() as u64;
        assert_eq!((r.pages_per_block as u64, static_blocks_per_plane(&cfg)), (128 * units, 1));
        let row = 64 * 384 * units; // logical pages of one native block in every plane
        assert_eq!(r.limit(100 * row), 4, "capped at the dynamic maximum");
        assert_eq!(r.limit(2 * row + row - 1), 3, "whole native blocks of free space only");
        assert_eq!(r.limit(row - 1), 1, "the static part alone");
        assert_eq!(r.limit(0), 1);
    }

    #[test]
    fn a_full_part_is_exhausted_until_idle_and_folds_from_its_oldest_block() {
        let (mut r, _) = region();
        let limit = 2;
        assert!(r.takes_host_page(3, false, limit));
        r.opened(3, 10);
        assert_eq!(r.unused_static(3), 0, "the static block is in use");
        r.closed(3, 10);
        assert!(!r.fold_wanted(3, limit), "one full block of two: below the threshold (1.0)");
        assert!(r.takes_host_page(3, false, limit));
        r.opened(3, 11);
        r.closed(3, 11);
        assert!(r.fold_wanted(3, limit), "both blocks full");
        assert!(!r.takes_host_page(3, false, limit), "no room: exhausted");
        assert_eq!(r.fold_victim(3), Some(10), "oldest first");
        assert!(r.erased(3, 3 * 64 + 10) && !r.is_slc(3 * 64 + 10));
        assert!(!r.takes_host_page(3, false, limit), "room again, but exhausted until the drive idles");
        r.drive_idle();
        assert!(r.fold_wanted(3, limit), "idle: fold every full block");
        assert!(r.takes_host_page(3, false, limit), "idle ends the exhaustion");
        r.drive_busy();
        assert!(!r.fold_wanted(3, limit), "one full block of two while busy");
        assert!(!r.erased(3, 3 * 64 + 12), "a native block is not folded");
    }
}
