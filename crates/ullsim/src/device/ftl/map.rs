//! The page map of a page-mapped drive: where each logical page lives (forward) and which logical page each
//! physical page holds (reverse), stored so that memory follows the pages the run writes, not the drive's
//! size or the operating-system pages those writes land on.
//!
//! - The initial layout is implicit: preconditioning places logical pages `0..initial_pages` by a keyed
//!   permutation onto each plane's initially valid pages (`precondition.rs`), so it costs per-block counts
//!   only.
//! - Pages the host writes are entries of `written`, a sparse table by logical page: the host's writes are
//!   runs of consecutive logical pages, so its leaves fill.
//! - Initially placed pages that garbage collection moves are entries of `moved`, one array per initial
//!   block in the block's page order. GC empties a block at a time, in page order, into consecutive pages of
//!   its open block: one run of an array (`util/chunks.rs`) where, keyed by logical page, the moves would
//!   scatter over the whole drive (the initial layout is a random permutation) and cost a leaf each.
//! - `reverse` holds one array per block the run programs, dropped when the block is erased. A page a GC
//!   move filled with an initially placed page records the page's initial slot rather than its logical page:
//!   a victim's slots follow each other as its pages do, so a GC block's array is a few runs too.
//!
//! Entry values are page numbers + 1; 0 means "not here": look in the next place (or "where the initial
//! layout put it").

use crate::util::chunks::ChunkTable;
use crate::util::perm::Permutation;
use crate::util::sparse::SparseTable;

use super::super::flash::Geometry;

/// Logical pages per bit of `PageMap::written_touched`.
const WRITTEN_REGION: u64 = 1024;

/// How the initial layout numbers the initially valid pages of the planes (its slots).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SlotOrder {
    /// Logical pages placed in order stripe over the planes a flash page at a time, as the FTL's writes do:
    /// slots `g * units_per_page ..` of group `g` fill a flash page of plane `g % planes` (with whole-page
    /// units the `q`-th initially valid page of plane `u` is slot `q * planes + u`). The planes hold equal
    /// shares, give or take a flash page ([`striped_share`]).
    Striped,
    /// Plane `u`'s initially valid pages are the slots after those of planes `0..u`, in order: planes may
    /// hold any shares.
    ByPlane,
}

/// Initially valid pages plane `u` of `planes` holds when `pages` are placed in order by
/// `SlotOrder::Striped`, a flash page of `units_per_page` at a time.
pub(super) fn striped_share(pages: u64, planes: u32, units_per_page: u32, u: u32) -> u64 {
    let (group, round) = (units_per_page as u64, units_per_page as u64 * planes as u64);
    let before = u as u64 * group;
    pages / round * group + (pages % round).saturating_sub(before).min(group)
}

pub(super) struct PageMap {
    units: u32,
    /// Mapping units per flash page: `SlotOrder::Striped` fills a page of a plane before the next plane.
    units_per_page: u32,
    slot_order: SlotOrder,
    /// Per plane and one more: the first slot of the plane (`SlotOrder::ByPlane`).
    plane_start: Vec<u64>,
    /// Planes per slot (for the proportional guess in `plane_of_slot`).
    planes_per_slot: f64,
    blocks_per_plane: u32,
    pages_per_block: u32,
    /// Logical pages mapped by preconditioning are `0..initial_pages`, placed by `initial_perm`.
    initial_pages: u64,
    /// Blocks per initially valid page of a plane (for the proportional guess in `initial_slot`).
    blocks_per_initial_page: f64,
    initial_perm: Permutation,
    /// Per global block: initially valid pages (0 once erased), and the number of initially valid pages in
    /// the blocks before it in its plane.
    initial_valid: Vec<u16>,
    initial_prefix: Vec<u32>,
    /// Per plane: initially valid pages.
    initial_of_plane: Vec<u32>,
    /// logical page -> physical page + 1, for pages the host wrote (and where GC later moved them).
    written: SparseTable,
    /// One bit per `WRITTEN_REGION` logical pages: set once any entry in the region is in `written`. Lets
    /// lookups of never-rewritten regions skip the (large, mostly empty) table.
    written_touched: Vec<u64>,
    /// Per initial block, per initially valid page in block order: physical page + 1 where GC moved it
    /// (unless the host rewrote it since: `written` goes first).
    moved: ChunkTable,
    /// Per block: physical page -> logical page + 1, or `logical_pages` + initial slot + 1 for an initially
    /// placed page GC moved there (when `slots_in_reverse`); 0 means "the initial owner, if the page is an
    /// initial slot". Dropped when the block is erased.
    reverse: ChunkTable,
    logical_pages: u64,
    /// Whether reverse entries can name initial slots: the two ranges fit in 32 bits together (drives of
    /// less than ~2^31 logical pages). Otherwise they name the logical page.
    slots_in_reverse: bool,
}

impl PageMap {
    /// The map of a drive of `geometry` with `logical_pages` pages, of which `0..initial_pages` are placed
    /// by `initial_perm` onto the initially valid pages of each block (`initial_valid`, by global block),
    /// numbered as `slot_order` says.
    pub fn new(
        geometry: &Geometry,
        logical_pages: u64,
        initial_pages: u64,
        initial_perm: Permutation,
        initial_valid: Vec<u16>,
        slot_order: SlotOrder,
    ) -> PageMap {
        let bpp = geometry.blocks_per_plane as usize;
        let blocks = geometry.blocks() as usize;
        debug_assert_eq!(initial_valid.len(), blocks);
        let mut initial_prefix = Vec::with_capacity(blocks);
        let mut initial_of_plane = Vec::with_capacity(geometry.planes() as usize);
        for plane in initial_valid.chunks(bpp) {
            let mut prefix = 0u32;
            for &v in plane {
                initial_prefix.push(prefix);
                prefix += v as u32;
            }
            initial_of_plane.push(prefix);
        }
        let per_plane = initial_pages.div_ceil(geometry.planes() as u64);
        let plane_start = std::iter::once(0)
            .chain(initial_of_plane.iter().scan(0u64, |start, &n| {
                *start += n as u64;
                Some(*start)
            }))
            .collect::<Vec<u64>>();
        debug_assert_eq!(plane_start.last().copied(), Some(initial_pages), "the blocks hold the initial pages");
        PageMap {
            units: geometry.planes(),
            units_per_page: geometry.units_per_page,
            slot_order,
            plane_start,
            planes_per_slot: geometry.planes() as f64 / initial_pages.max(1) as f64,
            blocks_per_plane: geometry.blocks_per_plane,
            pages_per_block: geometry.pages_per_block,
            initial_pages,
            blocks_per_initial_page: bpp as f64 / per_plane.max(1) as f64,
            initial_perm,
            initial_valid,
            initial_prefix,
            initial_of_plane,
            written: SparseTable::new(logical_pages),
            written_touched: vec![0; (logical_pages / WRITTEN_REGION / 64 + 1) as usize],
            moved: ChunkTable::new(blocks),
            reverse: ChunkTable::new(blocks),
            logical_pages,
            slots_in_reverse: logical_pages + initial_pages < u32::MAX as u64,
        }
    }

    /// The map of a drive with no map (written in place): every call but `bytes` is a logic error.
    pub fn none() -> PageMap {
        PageMap {
            units: 1,
            units_per_page: 1,
            slot_order: SlotOrder::Striped,
            plane_start: Vec::new(),
            planes_per_slot: 0.0,
            blocks_per_plane: 1,
            pages_per_block: 1,
            initial_pages: 0,
            blocks_per_initial_page: 0.0,
            initial_perm: Permutation::identity(1),
            initial_valid: Vec::new(),
            initial_prefix: Vec::new(),
            initial_of_plane: Vec::new(),
            written: SparseTable::default(),
            written_touched: Vec::new(),
            moved: ChunkTable::default(),
            reverse: ChunkTable::default(),
            logical_pages: 0,
            slots_in_reverse: false,
        }
    }

    /// Initially valid pages block `block` held before any erase.
    fn initial_pages_of_block(&self, block: usize) -> u32 {
        let bpp = self.blocks_per_plane as usize;
        let next = if (block + 1).is_multiple_of(bpp) {
            self.initial_of_plane[block / bpp]
        } else {
            self.initial_prefix[block + 1]
        };
        next - self.initial_prefix[block]
    }

    /// Where the initial layout put logical page `lpa` (< `initial_pages`): the global block and the page's
    /// rank among the block's initially valid pages (= its page in the block).
    fn initial_slot(&self, lpa: u64) -> (usize, u32) {
        self.block_of_slot(self.initial_perm.apply(lpa))
    }

    /// The slot of the `q`-th initially valid page of plane `u`.
    fn slot_of(&self, u: usize, q: u32) -> u64 {
        match self.slot_order {
            SlotOrder::Striped => {
                let group = self.units_per_page as u64;
                (q as u64 / group * self.units as u64 + u as u64) * group + q as u64 % group
            }
            SlotOrder::ByPlane => self.plane_start[u] + q as u64,
        }
    }

    /// The plane `u` of slot `slot` and its rank `q` among the plane's initially valid pages.
    fn plane_of_slot(&self, slot: u64) -> (usize, u32) {
        match self.slot_order {
            SlotOrder::Striped => {
                // Page numbers fit in 32 bits (validated), so the divisions are 32-bit.
                let (units, group, slot) = (self.units, self.units_per_page, slot as u32);
                let page = slot / group;
                ((page % units) as usize, page / units * group + slot % group)
            }
            SlotOrder::ByPlane => {
                // Planes hold similar shares: start from the proportional guess and walk.
                let start = &self.plane_start;
                let mut u = ((slot as f64 * self.planes_per_slot) as usize).min(self.units as usize - 1);
                while start[u] > slot {
                    u -= 1;
                }
                while start[u + 1] <= slot {
                    u += 1;
                }
                (u, (slot - start[u]) as u32)
            }
        }
    }

    /// The global block and rank of initial slot `slot`.
    fn block_of_slot(&self, slot: u64) -> (usize, u32) {
        let (u, q) = self.plane_of_slot(slot);
        let bpp = self.blocks_per_plane as usize;
        let prefixes = &self.initial_prefix[u * bpp..(u + 1) * bpp];
        // The block holding the q-th initially valid page of the plane: the last block whose prefix is <= q.
        // Blocks hold similar counts, so start from the proportional guess and walk (a few steps, in one or
        // two cache lines); fall back to binary search if the walk runs long.
        let mut b = ((q as f64 * self.blocks_per_initial_page) as usize).min(bpp - 1);
        let mut steps = 0;
        while steps < 16 && prefixes[b] > q {
            b -= 1;
            steps += 1;
        }
        while steps < 16 && b + 1 < bpp && prefixes[b + 1] <= q {
            b += 1;
            steps += 1;
        }
        if steps == 16 {
            b = prefixes.partition_point(|&p| p <= q) - 1;
        }
        (u * bpp + b, q - prefixes[b])
    }

    /// The `written` entry of `lpa` (0: none).
    #[inline]
    fn written_entry(&self, lpa: u64) -> u32 {
        let region = lpa / WRITTEN_REGION;
        let touched = self.written_touched[(region / 64) as usize] & (1 << (region % 64)) != 0;
        if touched {
            self.written.get(lpa)
        } else {
            0
        }
    }

    /// Where logical page `lpa` lives now (`None`: never written).
    pub fn lookup(&self, lpa: u64) -> Option<u64> {
        match self.written_entry(lpa) {
            0 if lpa < self.initial_pages => {
                let (block, page) = self.initial_slot(lpa);
                match self.moved.get(block, page as usize) {
                    0 => {
                        debug_assert!(page < self.initial_valid[block] as u32, "initial page of an erased block");
                        Some(block as u64 * self.pages_per_block as u64 + page as u64)
                    }
                    v => Some(v as u64 - 1),
                }
            }
            0 => None,
            v => Some(v as u64 - 1),
        }
    }

    /// The logical page stored in physical page `ppa`, valid or stale (`None`: erased or never written).
    pub fn owner(&self, ppa: u64) -> Option<u64> {
        let ppb = self.pages_per_block as u64;
        let block = (ppa / ppb) as usize;
        let page = (ppa % ppb) as u32;
        match self.reverse.get(block, page as usize) as u64 {
            0 => {
                if page >= self.initial_valid[block] as u32 {
                    return None;
                }
                let u = block / self.blocks_per_plane as usize;
                Some(self.initial_perm.invert(self.slot_of(u, self.initial_prefix[block] + page)))
            }
            v if v <= self.logical_pages => Some(v - 1),
            v => Some(self.initial_perm.invert(v - self.logical_pages - 1)),
        }
    }

    /// The host wrote `lpa` to `ppa`.
    pub fn place_written(&mut self, lpa: u64, ppa: u64) {
        self.set_written(lpa, ppa);
        self.set_reverse(ppa, lpa + 1);
    }

    /// GC moved `lpa` from `old_ppa` (its current page) to `new_ppa`. A page the host never rewrote stays in
    /// `moved`, in its initial block's array, found from where it was (no permutation to compute).
    pub fn place_moved(&mut self, lpa: u64, old_ppa: u64, new_ppa: u64) {
        if lpa >= self.initial_pages || self.written_entry(lpa) != 0 {
            self.set_written(lpa, new_ppa);
            self.set_reverse(new_ppa, lpa + 1);
            return;
        }
        let ppb = self.pages_per_block as u64;
        let (old_block, old_page) = ((old_ppa / ppb) as usize, (old_ppa % ppb) as u32);
        let (block, rank) = match self.reverse.get(old_block, old_page as usize) as u64 {
            // Still where the initial layout put it: the rank is the page.
            0 => (old_block, old_page),
            v if v > self.logical_pages => self.block_of_slot(v - self.logical_pages - 1),
            _ => self.initial_slot(lpa),
        };
        let len = self.initial_pages_of_block(block) as usize;
        self.moved.set(block, rank as usize, (new_ppa + 1) as u32, len);
        let owner = if self.slots_in_reverse {
            let u = block / self.blocks_per_plane as usize;
            self.logical_pages + self.slot_of(u, self.initial_prefix[block] + rank) + 1
        } else {
            lpa + 1
        };
        self.set_reverse(new_ppa, owner);
    }

    fn set_written(&mut self, lpa: u64, ppa: u64) {
        self.written.set(lpa, (ppa + 1) as u32);
        let region = lpa / WRITTEN_REGION;
        self.written_touched[(region / 64) as usize] |= 1 << (region % 64);
    }

    fn set_reverse(&mut self, ppa: u64, owner: u64) {
        let ppb = self.pages_per_block as u64;
        self.reverse.set((ppa / ppb) as usize, (ppa % ppb) as usize, owner as u32, ppb as usize);
    }

    /// Block `block` was erased: its pages hold nothing.
    pub fn erased(&mut self, block: usize) {
        self.reverse.release(block);
        self.initial_valid[block] = 0;
    }

    /// Heap bytes the map holds now.
    pub fn bytes(&self) -> u64 {
        let per_block = self.initial_valid.capacity() as u64 * 2 + self.initial_prefix.capacity() as u64 * 4;
        per_block
            + self.initial_of_plane.capacity() as u64 * 4
            + self.written.bytes()
            + self.written_touched.capacity() as u64 * 8
            + self.moved.bytes()
            + self.reverse.bytes()
    }

    /// The most `bytes` can ever be for a drive of `geometry` with `logical_pages` pages, of which
    /// `initial_pages` preconditioned: every logical page written by the host, every initial page moved by
    /// GC and every block holding pages the run wrote.
    pub fn bytes_at_most(geometry: &Geometry, logical_pages: u64, initial_pages: u64) -> u64 {
        let blocks = geometry.blocks();
        blocks * (2 + 4)
            + geometry.planes() as u64 * 4
            + SparseTable::bytes_at_most(logical_pages)
            + (logical_pages / WRITTEN_REGION / 64 + 1) * 8
            + ChunkTable::bytes_at_most(blocks, initial_pages)
            + ChunkTable::bytes_at_most(blocks, geometry.pages())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two maps of one drive, one whose reverse entries name the initial slots of moved pages and one whose
    /// entries name their logical pages (as drives of 2^31 logical pages or more do), agree on every page
    /// through host writes, GC moves (first and second) and erases.
    #[test]
    fn reverse_entries_by_initial_slot_or_by_logical_page_give_the_same_map() {
        let g = Geometry {
            channels: 1,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 2,
            blocks_per_plane: 8,
            pages_per_block: 16,
            page_bytes: 4096,
            units_per_page: 1,
        };
        // Each plane: six full blocks, a half-full one, a free one.
        let valid: Vec<u16> = (0..16).map(|b| [16, 16, 16, 16, 16, 16, 8, 0][b % 8]).collect();
        let initial: u64 = valid.iter().map(|&v| v as u64).sum();
        let logical = initial + 12;
        for order in [SlotOrder::Striped, SlotOrder::ByPlane] {
            let make = |slots| {
                let mut m = PageMap::new(&g, logical, initial, Permutation::new(initial, 7), valid.clone(), order);
                m.slots_in_reverse = slots;
                m
            };
            check_slot_kinds_agree([make(true), make(false)], &g, logical, initial);
        }
    }

    /// Placed in order with 4 KiB units in 16 KiB pages, consecutive logical pages fill a flash page of one
    /// plane before the next plane, as the FTL's writes do (a 16 KiB read of them is one page), and every
    /// logical page has its own physical page, on the plane `striped_share` counted it on.
    #[test]
    fn striped_initial_layout_fills_a_flash_page_before_the_next_plane() {
        let g = Geometry {
            channels: 1,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 2,
            blocks_per_plane: 4,
            pages_per_block: 16, // units: 4 flash pages of 4 units
            page_bytes: 4096,
            units_per_page: 4,
        };
        let initial = 50u64; // 6 whole rounds of 8 units and 2 units more, on plane 0
        let shares: Vec<u64> = (0..2).map(|u| striped_share(initial, 2, 4, u)).collect();
        assert_eq!(shares, [26, 24]);
        // Each plane written once in order: full blocks from block 0.
        let valid: Vec<u16> =
            shares.iter().flat_map(|&n| (0..4u64).map(move |b| (n.saturating_sub(b * 16)).min(16) as u16)).collect();
        let m = PageMap::new(&g, 64, initial, Permutation::identity(initial), valid, SlotOrder::Striped);
        let home = |lpa: u64| m.lookup(lpa).expect("placed");
        for lpa in 0..initial {
            let (page, plane) = (home(lpa) / 4, g.plane_of_page(home(lpa)));
            assert_eq!(plane as u64, lpa / 4 % 2, "logical page {lpa} on plane {plane}");
            assert_eq!(page, home(lpa - lpa % 4) / 4, "logical page {lpa} shares its flash page with its group");
            assert_eq!(m.owner(home(lpa)), Some(lpa));
        }
        let mut homes: Vec<u64> = (0..initial).map(home).collect();
        homes.sort_unstable();
        homes.dedup();
        assert_eq!(homes.len() as u64, initial);
    }

    fn check_slot_kinds_agree(mut maps: [PageMap; 2], g: &Geometry, logical: u64, initial: u64) {
        let ppb = 16;
        // GC of `victim` into `target`: every valid page, in order, to the target's pages from its first.
        let collect = |m: &mut PageMap, victim: u64, target: u64| {
            let mut next = target * ppb;
            for ppa in victim * ppb..(victim + 1) * ppb {
                if let Some(lpa) = m.owner(ppa).filter(|&lpa| m.lookup(lpa) == Some(ppa)) {
                    m.place_moved(lpa, ppa, next);
                    next += 1;
                }
            }
            m.erased(victim as usize);
        };
        for m in &mut maps {
            // The host rewrites some preconditioned pages and writes some never written, into plane 0's free
            // block; GC empties block 0 into plane 1's free block, then that block into the erased block 0.
            for (i, lpa) in [3, 5, 40, 41, 90, initial + 2, initial + 3].into_iter().enumerate() {
                m.place_written(lpa, 7 * ppb + i as u64);
            }
            collect(m, 0, 15);
            collect(m, 15, 0);
            collect(m, 1, 15);
        }
        let [by_slot, by_lpa] = &maps;
        assert!(by_slot.reverse.has(0) && by_slot.moved.has(0) && by_slot.moved.has(1));
        for lpa in 0..logical {
            assert_eq!(by_slot.lookup(lpa), by_lpa.lookup(lpa), "logical page {lpa}");
        }
        for ppa in 0..g.pages() {
            assert_eq!(by_slot.owner(ppa), by_lpa.owner(ppa), "physical page {ppa}");
        }
        // Every logical page is somewhere, each on its own page.
        let mut homes: Vec<u64> = (0..logical).filter_map(|lpa| by_slot.lookup(lpa)).collect();
        assert_eq!(homes.len() as u64, initial + 2);
        homes.sort_unstable();
        homes.dedup();
        assert_eq!(homes.len() as u64, initial + 2);
    }
}
