//! Offering an idle chip or channel to the dies waiting for it (one die per chip, round-robin channels;
//! `start_gate.rs` keeps the turns), and counting multi-plane operations for the results.
//!
//! `device.flash.chip_reads_first` (MQSim's `process_chip_requests`, which serves a chip's reads, on any of
//! its dies, before its writes and erases): a freed chip, or a chip offered its idle channel, goes first to
//! a die with reads queued, then to the others in their usual turn. Without it the turn alone decides, so a
//! read on the die that just finished waits for a whole program of the chip's other die.

use super::{start_gate, Device, DeviceEvent, DriveEvent, TxId};
use crate::engine::Scheduler;

impl Device {
    /// Offer `dies` (one chip's, in turn order) the chip: dies with reads queued first when
    /// `chip_reads_first` is on, then every die in turn (a busy die or chip turns the offer down).
    fn offer_chip(&mut self, q: &mut impl Scheduler<DriveEvent>, dies: impl Iterator<Item = u32> + Clone) {
        if self.start_gate.chip_reads_first() {
            for die in dies.clone() {
                if self.tsu.reads_waiting(die) {
                    self.dispatch(q, die);
                }
            }
        }
        for die in dies {
            self.dispatch(q, die);
        }
    }

    /// `die` finished and was released: offer its chip (just `die` unless one die per chip).
    pub(super) fn offer_released_chip(&mut self, q: &mut impl Scheduler<DriveEvent>, die: u32) {
        let geometry = self.flash.geometry;
        let dies = self.start_gate.dies_after_release(&geometry, die);
        self.offer_chip(q, dies);
    }

    /// `channel` is idle (round robin): offer it to its chips in turn until one takes the bus.
    pub(super) fn offer_channel(&mut self, q: &mut impl Scheduler<DriveEvent>, channel: u32) {
        let now = q.now();
        let geometry = self.flash.geometry;
        let first_die = channel; // a die of the channel, to read its bus state
        if self.flash.channel_free_at(first_die) > now {
            // Reserved again since the wake-up was set (read data goes first): wait for the new end.
            if let Some(at) = self.start_gate.arm(channel as usize, self.flash.channel_free_at(first_die)) {
                q.schedule_at(at, (self.drive, DeviceEvent::ChannelIdle { channel }));
            }
            return;
        }
        let mut offered = 0;
        for chip in self.start_gate.chip_order(&geometry, channel) {
            offered += 1;
            self.offer_chip(q, start_gate::dies_of_chip(&geometry, chip));
            if self.flash.channel_free_at(first_die) > now {
                break; // a chip took the bus; the others wait for it to free (their wake-up is armed again)
            }
        }
        self.start_gate.advance(&geometry, channel, offered);
        if self.flash.channel_free_at(first_die) > now {
            // Chips not offered yet may have work: look again when the bus frees.
            if let Some(at) = self.start_gate.arm(channel as usize, self.flash.channel_free_at(first_die)) {
                q.schedule_at(at, (self.drive, DeviceEvent::ChannelIdle { channel }));
            }
        }
    }

    /// Count a multi-plane operation, and whether it joins different page indices (for results).
    pub(super) fn count_multiplane(&mut self, batch: &[TxId]) {
        let pages_per_block = self.flash.geometry.pages_per_block as u64;
        let units_per_page = self.flash.geometry.units_per_page as u64;
        let page = |tx: TxId| (self.txs[tx].ppa % pages_per_block) / units_per_page;
        let mixed = batch.iter().any(|&tx| page(tx) != page(batch[0]));
        self.multiplane_ops[0] += 1;
        self.multiplane_ops[1] += mixed as u64;
    }
}
