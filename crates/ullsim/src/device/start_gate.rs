//! When an idle die may start its next operation, and in which order waiting dies get the chance.
//!
//! By default a die starts as soon as it is idle and has work, and its transfers take the channel in the
//! order they are requested (FCFS reservations, `flash.rs`). MQSim's transaction scheduler adds two limits
//! (`device.flash.one_die_per_chip`, `device.flash.channel_arbitration = "round-robin"`):
//! - one die per chip: a chip runs one die's operation at a time (MQSim issues only to an idle chip and never
//!   a multi-die command), so the chip's other dies wait; when the chip frees, its dies are offered the chip
//!   in turn, starting after the die that just finished;
//! - round-robin channels: a die starts only while its channel is idle (command cycles hold the bus), and when
//!   the bus frees, the channel's chips are offered it in turn from a per-channel pointer that moves past each
//!   chip offered (MQSim's `Round_robin_turn_of_channel`). Read data waiting for the bus has already
//!   reserved it (FCFS), so it goes first, as MQSim's waiting read transfers do.

use crate::config::device::{ChannelArbitration, FlashConfig};
use crate::engine::Time;

use super::flash::{Backend, Geometry};

/// Why a die may not start now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blocked {
    /// Another die of its chip is busy: the chip's release offers it again.
    Chip,
    /// Its channel is busy (round robin): wake the channel at this time, if a wake-up is not already due.
    Channel { wake_at: Option<Time> },
}

pub struct StartGate {
    one_die_per_chip: bool,
    /// A chip offered to its dies goes first to one with reads queued (`chip_reads_first`).
    reads_first: bool,
    round_robin: bool,
    /// Per channel: the chip (index within the channel) offered the bus first when it frees.
    turn: Vec<u32>,
    /// Per channel: when a wake-up (`DeviceEvent::ChannelIdle`) is scheduled, if one is.
    wake_at: Vec<Option<Time>>,
}

impl StartGate {
    pub fn new(cfg: &FlashConfig, geometry: &Geometry) -> Self {
        StartGate {
            one_die_per_chip: cfg.one_die_per_chip,
            reads_first: cfg.chip_reads_first,
            round_robin: cfg.channel_arbitration == ChannelArbitration::RoundRobin,
            turn: vec![0; geometry.channels as usize],
            wake_at: vec![None; geometry.channels as usize],
        }
    }

    /// A chip offered to its dies goes first to a die with reads queued (`device.flash.chip_reads_first`).
    pub fn chip_reads_first(&self) -> bool {
        self.reads_first
    }

    /// Command cycles hold the channel (so an idle channel is what a die waits for).
    pub fn commands_hold_channel(&self) -> bool {
        self.round_robin
    }

    /// Whether idle `die` may start at `now`; `Err` says what it waits for.
    #[inline(always)]
    pub fn check(&mut self, flash: &Backend, die: u32, now: Time) -> Result<(), Blocked> {
        if self.one_die_per_chip && flash.chip_is_busy(die) {
            return Err(Blocked::Chip);
        }
        if self.round_robin {
            let free_at = flash.channel_free_at(die);
            if free_at > now {
                let channel = flash.geometry.channel_of_die(die) as usize;
                return Err(Blocked::Channel { wake_at: self.arm(channel, free_at) });
            }
        }
        Ok(())
    }

    /// Ask for a wake-up of `channel` at `at` unless one is due no later; returns the time to schedule.
    pub fn arm(&mut self, channel: usize, at: Time) -> Option<Time> {
        if self.wake_at[channel].is_some_and(|due| due <= at) {
            return None;
        }
        self.wake_at[channel] = Some(at);
        Some(at)
    }

    /// The wake-up of `channel` at `now` fired: whether it is the current one (a later re-arm supersedes it).
    pub fn woken(&mut self, channel: usize, now: Time) -> bool {
        if self.wake_at[channel] != Some(now) {
            return false;
        }
        self.wake_at[channel] = None;
        true
    }

    /// The chips of `channel` in the order they are offered the bus now; the caller then moves the pointer
    /// past those it offered ([`Self::advance`]).
    pub fn chip_order(&self, geometry: &Geometry, channel: u32) -> impl Iterator<Item = u32> {
        let (n, first, channels) = (geometry.chips_per_channel, self.turn[channel as usize], geometry.channels);
        (0..n).map(move |i| channel + ((first + i) % n) * channels)
    }

    /// `offered` chips of `channel` were offered the bus: the next offer starts after them.
    pub fn advance(&mut self, geometry: &Geometry, channel: u32, offered: u32) {
        let turn = &mut self.turn[channel as usize];
        *turn = (*turn + offered) % geometry.chips_per_channel;
    }

    /// The dies to offer after `die` finished: with one die per chip, every die of its chip, starting after
    /// it (it comes last); otherwise just `die`.
    pub fn dies_after_release(&self, geometry: &Geometry, die: u32) -> impl Iterator<Item = u32> + Clone {
        let (chips, per_chip) = (geometry.chips(), geometry.dies_per_chip);
        let (chip, index) = (die % chips, die / chips);
        let n = if self.one_die_per_chip { per_chip } else { 1 };
        let start = if self.one_die_per_chip { index + 1 } else { index };
        (0..n).map(move |i| chip + ((start + i) % per_chip) * chips)
    }
}

/// The dies of `chip`, in index order.
pub fn dies_of_chip(geometry: &Geometry, chip: u32) -> impl Iterator<Item = u32> + Clone {
    let chips = geometry.chips();
    (0..geometry.dies_per_chip).map(move |k| chip + k * chips)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geometry(channels: u32, chips_per_channel: u32, dies_per_chip: u32) -> Geometry {
        Geometry {
            channels,
            chips_per_channel,
            dies_per_chip,
            planes_per_die: 1,
            blocks_per_plane: 4,
            pages_per_block: 4,
            page_bytes: 4096,
            units_per_page: 1,
        }
    }

    fn config(one_die_per_chip: bool, round_robin: bool) -> FlashConfig {
        let preset: toml::Table = crate::config::presets::find("mqsim-mlc").expect("preset").toml.parse().unwrap();
        let mut cfg: FlashConfig = preset["flash"].clone().try_into().expect("a valid [flash] table");
        cfg.one_die_per_chip = one_die_per_chip;
        cfg.channel_arbitration = if round_robin { ChannelArbitration::RoundRobin } else { ChannelArbitration::Fcfs };
        cfg
    }

    #[test]
    fn chips_of_a_channel_are_offered_in_turn_from_where_the_last_offer_stopped() {
        let g = geometry(2, 3, 1);
        let mut gate = StartGate::new(&config(false, true), &g);
        // Channel 1's chips are 1, 3, 5 (chip c is on channel c % 2).
        assert_eq!(gate.chip_order(&g, 1).collect::<Vec<_>>(), vec![1, 3, 5]);
        gate.advance(&g, 1, 1);
        assert_eq!(gate.chip_order(&g, 1).collect::<Vec<_>>(), vec![3, 5, 1]);
        gate.advance(&g, 1, 2);
        assert_eq!(gate.chip_order(&g, 1).collect::<Vec<_>>(), vec![1, 3, 5]);
        assert_eq!(gate.chip_order(&g, 0).collect::<Vec<_>>(), vec![0, 2, 4], "each channel has its own turn");
    }

    #[test]
    fn a_released_chip_offers_its_other_dies_first() {
        let g = geometry(1, 2, 3); // chip 0: dies 0, 2, 4; chip 1: dies 1, 3, 5
        let gate = StartGate::new(&config(true, false), &g);
        assert_eq!(gate.dies_after_release(&g, 2).collect::<Vec<_>>(), vec![4, 0, 2]);
        assert_eq!(gate.dies_after_release(&g, 5).collect::<Vec<_>>(), vec![1, 3, 5]);
        assert_eq!(dies_of_chip(&g, 1).collect::<Vec<_>>(), vec![1, 3, 5]);
        let interleaving = StartGate::new(&config(false, false), &g);
        assert_eq!(interleaving.dies_after_release(&g, 2).collect::<Vec<_>>(), vec![2]);
    }

    #[test]
    fn a_wake_up_is_armed_once_and_a_later_one_supersedes_nothing() {
        let g = geometry(1, 2, 1);
        let mut gate = StartGate::new(&config(false, true), &g);
        assert_eq!(gate.arm(0, 100), Some(100));
        assert_eq!(gate.arm(0, 150), None, "one due earlier fires first");
        assert_eq!(gate.arm(0, 80), Some(80));
        assert!(!gate.woken(0, 100), "superseded by the one at 80");
        assert!(gate.woken(0, 80));
        assert_eq!(gate.arm(0, 150), Some(150));
    }
}
