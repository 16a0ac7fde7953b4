//! Page assembly, with mapping units smaller than the flash page (`device.ftl.mapping_unit_bytes`): a flash
//! page is programmed once, with all its units. The FTL allocates a stream's units in order, so a page's
//! units are consecutive allocations on one plane; the program of a unit whose page still has unallocated
//! units waits here, and when the page's last unit is allocated all of them go to the scheduler together
//! (where they join one program, `tsu/fifo.rs` `take_batch`). A page that does not fill within
//! `device.ftl.page_fill_timeout_ns` (a queue-depth-1 writer, a GC job's last moves) is padded: the FTL
//! counts its other units as written, holding nothing, and what waited is programmed. A flush that has to
//! wait for the write buffer pads every waiting page at once.

use std::collections::BTreeMap;

use super::transaction::TxId;
use super::{Device, DeviceEvent, DriveEvent};
use crate::engine::{Scheduler, Time};

/// Programs waiting for the rest of their flash page: one list per page being filled (a page per open block,
/// so at most a few per plane).
#[derive(Debug, Default)]
pub(super) struct PageAssembly {
    /// Per flash page: the timer's generation and the programs waiting, in allocation order.
    pages: BTreeMap<u64, (u32, Vec<TxId>)>,
    next_generation: u32,
    timeout_ns: Time,
}

impl PageAssembly {
    pub fn new(timeout_ns: Time) -> Self {
        PageAssembly { timeout_ns, ..Default::default() }
    }

    /// Hold `tx` for flash page `page`; returns the timer's generation when the page starts waiting.
    fn hold(&mut self, page: u64, tx: TxId) -> Option<u32> {
        match self.pages.get_mut(&page) {
            Some((_, held)) => {
                held.push(tx);
                None
            }
            None => {
                let generation = self.next_generation;
                self.next_generation = self.next_generation.wrapping_add(1);
                self.pages.insert(page, (generation, vec![tx]));
                Some(generation)
            }
        }
    }
}

impl Device {
    /// Queue the program of unit `tx` (allocated): now if its flash page is complete, with the page's units
    /// that waited for it, else hold it for the page's other units.
    pub(super) fn queue_program(&mut self, q: &mut impl Scheduler<DriveEvent>, tx: TxId) {
        let geometry = *self.flash.geometry();
        if geometry.units_per_page == 1 {
            self.enqueue(q, tx);
            return;
        }
        let ppa = self.txs[tx].ppa;
        let page = geometry.flash_page_of(ppa);
        if self.ftl.page_complete(ppa) {
            let mut held = self.assembly.pages.remove(&page).map(|(_, held)| held).unwrap_or_default();
            held.push(tx);
            self.release_page(q, &held);
        } else if let Some(generation) = self.assembly.hold(page, tx) {
            let at = q.now() + self.assembly.timeout_ns;
            q.schedule_at(at, (self.drive, DeviceEvent::PageFillDue { page: page as u32, generation }));
        }
    }

    /// Flash page `page` has waited `page_fill_timeout_ns` since generation `generation` started: pad it and
    /// program what it holds (stale if the page filled meanwhile).
    pub(super) fn page_fill_due(&mut self, q: &mut impl Scheduler<DriveEvent>, page: u32, generation: u32) {
        let page = page as u64;
        if self.assembly.pages.get(&page).is_some_and(|&(g, _)| g == generation) {
            let (_, held) = self.assembly.pages.remove(&page).expect("checked");
            self.ftl.pad_page(self.txs[held[0]].ppa);
            self.release_page(q, &held);
        }
    }

    /// Pad every page waiting and program what they hold (a flush waits for them).
    pub(super) fn pad_waiting_pages(&mut self, q: &mut impl Scheduler<DriveEvent>) {
        let pages = std::mem::take(&mut self.assembly.pages);
        for (_, held) in pages.into_values() {
            self.ftl.pad_page(self.txs[held[0]].ppa);
            self.release_page(q, &held);
        }
    }

    /// The timed preconditioning stops: pad the pages waiting and forget their lists (their programs are
    /// carried into time 0 with the other writes in flight).
    pub(super) fn pad_waiting_pages_at_cut(&mut self) {
        for (_, held) in std::mem::take(&mut self.assembly.pages).into_values() {
            self.ftl.pad_page(self.txs[held[0]].ppa);
        }
    }

    /// Hand a page's programs to the scheduler together, then let the die start (so they join one program).
    fn release_page(&mut self, q: &mut impl Scheduler<DriveEvent>, held: &[TxId]) {
        for &tx in held {
            self.stamp_and_queue(q, tx);
        }
        let die = self.txs[held[0]].die;
        if !self.flash.die_is_busy(die) {
            self.dispatch(q, die);
        }
    }
}
