//! The device's read path: a read looks up its pages in the DRAM cache, reads the others from flash (after
//! their translation when the mapping cache misses), and may read pages ahead of it for the cache
//! (`device.cache.read_policy`; only `flashshare` does).
//!
//! A page read ahead is a flash read like a demand page's (same queues, same dies and channels, charged to
//! the read's flow), but no request waits for it: it fills the cache when it finishes. A demand read that
//! finds its page being read ahead waits for that read instead of issuing its own.

use super::flash::FlashOp;
use super::transaction::{Purpose, Transaction, TxId, NONE};
use super::{Device, DriveEvent};
use crate::engine::Scheduler;
use crate::request::{ReqId, RequestArena};

impl Device {
    pub(super) fn start_read(&mut self, q: &mut impl Scheduler<DriveEvent>, requests: &mut RequestArena, req: ReqId) {
        let now = q.now();
        let (offset, len, flow, class) =
            (requests[req].offset, requests[req].len, requests[req].flow, requests[req].class);
        let mut pending = 0;
        // With units smaller than the flash page, a read's units are all queued before their dies start, so
        // the units of one page are sensed together (the firmware splits a command at once); otherwise the
        // die of a page's first unit would start on it alone, and the page would be sensed again for the
        // rest.
        let together = self.flash.geometry().units_per_page > 1;
        let mut dies = std::mem::take(&mut self.read_dies);
        for (lpa, bytes) in self.pages(offset, len) {
            if self.cache.read_lookup(lpa, class.criticality) {
                continue;
            }
            if self.cache.join_prefetch(lpa, req) {
                pending += 1;
                continue;
            }
            // A page never written reads as zeroes without touching flash.
            let Some(ppa) = self.ftl.lookup(lpa) else { continue };
            pending += 1;
            let tx =
                self.new_transaction(FlashOp::Read, Purpose::UserRead, ppa, lpa, bytes, req.0, flow, class.priority);
            if !together {
                self.translate_and_enqueue(q, tx, lpa);
            } else if self.cmt.lookup(lpa) {
                self.stamp_and_queue(q, tx);
                dies.push(self.txs[tx].die);
            } else {
                self.wait_for_translation(q, tx, lpa);
            }
        }
        self.commands[req.index()].pending_transactions = pending;
        dies.dedup(); // a page's units are consecutive (a die offered twice is only asked twice)
        for &die in &dies {
            self.offer_die(q, die, true);
        }
        dies.clear();
        self.read_dies = dies;
        let end = (offset + len as u64).div_ceil(self.page_bytes);
        let ahead = self.cache.read_done(offset / self.page_bytes, end, class.criticality, now);
        // Pages past the drive's end, never written, already in DRAM or already on their way are skipped.
        let logical_pages = self.logical_capacity_bytes / self.page_bytes;
        for lpa in ahead.start..ahead.end.min(logical_pages) {
            if !self.cache.wants_prefetch(lpa, class.criticality) {
                continue;
            }
            let Some(ppa) = self.ftl.lookup(lpa) else { continue };
            self.cache.prefetch_started(lpa, class.criticality);
            let bytes = self.page_bytes as u32;
            let tx =
                self.new_transaction(FlashOp::Read, Purpose::UserRead, ppa, lpa, bytes, NONE, flow, class.priority);
            self.translate_and_enqueue(q, tx, lpa);
        }
        if pending == 0 {
            self.finish_read(q, requests, req, now + self.dram_access_ns);
        }
    }

    fn translate_and_enqueue(&mut self, q: &mut impl Scheduler<DriveEvent>, tx: TxId, lpa: u64) {
        if self.cmt.lookup(lpa) {
            self.enqueue(q, tx);
        } else {
            self.wait_for_translation(q, tx, lpa);
        }
    }

    /// A page read ahead (`t`) arrived: it joins the cache and completes its part of the reads waiting for it.
    pub(super) fn prefetch_done(
        &mut self,
        q: &mut impl Scheduler<DriveEvent>,
        requests: &mut RequestArena,
        t: &Transaction,
    ) {
        for req in self.cache.prefetch_done(t.lpa) {
            self.request_part_done(q, requests, req, t.dispatched_at - t.enqueued_at);
        }
    }

    /// Park `tx` until the translation page of `lpa` is read, starting that read if nobody else has.
    pub(super) fn wait_for_translation(&mut self, q: &mut impl Scheduler<DriveEvent>, tx: TxId, lpa: u64) {
        let tpage = self.cmt.translation_page(lpa);
        if let Some(&map_read) = self.map_reads_in_flight.get(&tpage) {
            self.txs[tx].link = self.txs[map_read].link;
            self.txs[map_read].link = tx;
            return;
        }
        let (die, plane) = self.cmt.translation_page_location(tpage, self.flash.geometry());
        let geometry = *self.flash.geometry();
        let unit = plane * geometry.dies() + die;
        let ppa = unit as u64 * geometry.blocks_per_plane as u64 * geometry.pages_per_block as u64;
        let (bytes, priority) = (self.cmt.entry_bytes(), self.txs[tx].priority);
        let map_read = self.new_transaction(FlashOp::Read, Purpose::MapRead, ppa, tpage, bytes, NONE, NONE, priority);
        self.txs[map_read].link = tx;
        self.txs[tx].link = NONE;
        self.map_reads_in_flight.insert(tpage, map_read);
        self.enqueue(q, map_read);
    }
}
