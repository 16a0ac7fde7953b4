//! The flash back end: geometry, operation timing, and the state of channels (shared buses) and dies.
//!
//! Addresses: a *plane unit* `u` numbers every plane of the drive channel-first (CWDP order), so striping
//! consecutive units spreads over channels, then chips, dies and planes. Its die is `u % dies` and its plane
//! within the die `u / dies`; a die's channel is `die % channels`. A physical page number (PPA) is
//! `(u * blocks_per_plane + block) * pages_per_block + page`.

use crate::config::device::{DeviceConfig, FlashConfig};
use crate::engine::Time;

/// The shape of the flash array.
#[derive(Debug, Clone, Copy)]
pub struct Geometry {
    pub channels: u32,
    pub chips_per_channel: u32,
    pub dies_per_chip: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    pub page_bytes: u64,
    /// Mapping units per flash page: `pages_per_block` and `page_bytes` count units, and a flash page is
    /// `units_per_page` consecutive page numbers (1: the unit is the page).
    pub units_per_page: u32,
}

impl Geometry {
    /// The physical array: one unit per flash page.
    pub fn from_config(f: &FlashConfig) -> Self {
        Geometry {
            channels: f.channels,
            chips_per_channel: f.chips_per_channel,
            dies_per_chip: f.dies_per_chip,
            planes_per_die: f.planes_per_die,
            blocks_per_plane: f.blocks_per_plane,
            pages_per_block: f.pages_per_block,
            page_bytes: f.page_bytes.0,
            units_per_page: 1,
        }
    }

    /// The array as the FTL, caches and read path see it: "pages" are mapping units
    /// (`device.ftl.mapping_unit_bytes`), a block holds `pages_per_block x units_per_page` of them.
    pub fn of(cfg: &DeviceConfig) -> Self {
        let units_per_page = cfg.units_per_page();
        Geometry {
            pages_per_block: cfg.flash.pages_per_block * units_per_page,
            page_bytes: cfg.mapping_unit_bytes(),
            units_per_page,
            ..Geometry::from_config(&cfg.flash)
        }
    }

    /// The flash page holding unit `ppa` (units of one page share it).
    #[inline]
    pub fn flash_page_of(&self, ppa: u64) -> u64 {
        ppa / self.units_per_page as u64
    }

    /// Whether unit `ppa` is the last of its flash page.
    #[inline]
    pub fn is_last_unit(&self, ppa: u64) -> bool {
        (ppa + 1).is_multiple_of(self.units_per_page as u64)
    }
    pub fn chips(&self) -> u32 {
        self.channels * self.chips_per_channel
    }
    pub fn dies(&self) -> u32 {
        self.chips() * self.dies_per_chip
    }
    /// Number of plane units.
    pub fn planes(&self) -> u32 {
        self.dies() * self.planes_per_die
    }
    pub fn blocks(&self) -> u64 {
        self.planes() as u64 * self.blocks_per_plane as u64
    }
    pub fn pages(&self) -> u64 {
        self.blocks() * self.pages_per_block as u64
    }
    pub fn die_of_plane(&self, unit: u32) -> u32 {
        unit % self.dies()
    }
    pub fn plane_in_die(&self, unit: u32) -> u32 {
        unit / self.dies()
    }
    pub fn channel_of_die(&self, die: u32) -> u32 {
        die % self.channels
    }
    /// The chip of a die (a chip's dies share its channel).
    pub fn chip_of_die(&self, die: u32) -> u32 {
        die % self.chips()
    }
    /// Global block index of a page. (Validation keeps page numbers below 2^32, so 32-bit division, which
    /// is several times cheaper on the hot path, is exact.)
    pub fn block_of(&self, ppa: u64) -> u64 {
        ((ppa as u32) / self.pages_per_block) as u64
    }
    /// Plane unit of a global block index.
    pub fn plane_of_block(&self, block: u64) -> u32 {
        (block as u32) / self.blocks_per_plane
    }
    pub fn plane_of_page(&self, ppa: u64) -> u32 {
        self.plane_of_block(self.block_of(ppa))
    }
}

/// The kind of operation a die performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlashOp {
    Read,
    Program,
    Erase,
}

/// Operation latencies.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub read_ns: Time,
    pub program_ns: Time,
    pub erase_ns: Time,
    /// Command and address cycles before the array operation starts.
    pub command_ns: Time,
    /// Channel time per byte in ns (1000 / (MT/s x bus width)).
    pub channel_ns_per_byte: f64,
}

impl Timing {
    pub fn from_config(f: &FlashConfig) -> Self {
        Timing {
            read_ns: f.read_ns.0,
            program_ns: f.program_ns.0,
            erase_ns: f.erase_ns.0,
            command_ns: f.command_ns.0,
            channel_ns_per_byte: 1000.0 / (f.channel_mts * f.channel_width_bytes as f64),
        }
    }

    /// Time to move `bytes` over a channel.
    pub fn transfer_ns(&self, bytes: u64) -> Time {
        ((bytes as f64) * self.channel_ns_per_byte).ceil() as Time
    }
}

/// Channel and die occupancy. Channels are FCFS buses in reservation order: a transfer reserved for time t
/// starts at t or when the bus frees, whichever is later. Reservations are made when they are due, except
/// that a program reserves its data-in transfer `command_ns` ahead, so at most that much out of order; bus
/// priorities (e.g. reads before writes) are not modeled.
#[derive(Debug, Clone)]
pub struct Backend {
    pub geometry: Geometry,
    pub timing: Timing,
    channel_free_at: Vec<Time>,
    channel_busy_ns: Vec<Time>,
    die_busy: Vec<bool>,
    die_busy_since: Vec<Time>,
    die_busy_ns: Vec<Time>,
    /// Busy dies per chip; chips with a busy die, and since when all of them have had one (valid while
    /// `busy_chips` is every chip).
    chip_busy_dies: Vec<u32>,
    busy_chips: usize,
    /// Most dies of one chip busy at once so far (1 under `one_die_per_chip`).
    max_busy_dies_per_chip: u32,
    all_busy_since: Time,
    /// Time every chip was busy at once, up to the last time one of them went idle.
    all_busy_ns: Time,
}

impl Backend {
    pub fn new(geometry: Geometry, timing: Timing) -> Self {
        let dies = geometry.dies() as usize;
        let channels = geometry.channels as usize;
        Backend {
            chip_busy_dies: vec![0; geometry.chips() as usize],
            geometry,
            timing,
            channel_free_at: vec![0; channels],
            channel_busy_ns: vec![0; channels],
            die_busy: vec![false; dies],
            die_busy_since: vec![0; dies],
            die_busy_ns: vec![0; dies],
            busy_chips: 0,
            max_busy_dies_per_chip: 0,
            all_busy_since: 0,
            all_busy_ns: 0,
        }
    }

    pub fn die_is_busy(&self, die: u32) -> bool {
        self.die_busy[die as usize]
    }

    /// Mark `die` busy from `now`.
    pub fn occupy_die(&mut self, die: u32, now: Time) {
        debug_assert!(!self.die_busy[die as usize], "die {die} started while busy");
        self.die_busy[die as usize] = true;
        self.die_busy_since[die as usize] = now;
        let chip = self.geometry.chip_of_die(die) as usize;
        self.chip_busy_dies[chip] += 1;
        self.max_busy_dies_per_chip = self.max_busy_dies_per_chip.max(self.chip_busy_dies[chip]);
        if self.chip_busy_dies[chip] == 1 {
            self.busy_chips += 1;
            if self.busy_chips == self.chip_busy_dies.len() {
                self.all_busy_since = now;
            }
        }
    }

    /// Mark `die` idle at `now`.
    pub fn release_die(&mut self, die: u32, now: Time) {
        debug_assert!(self.die_busy[die as usize]);
        self.die_busy[die as usize] = false;
        self.die_busy_ns[die as usize] += now - self.die_busy_since[die as usize];
        let chip = self.geometry.chip_of_die(die) as usize;
        self.chip_busy_dies[chip] -= 1;
        if self.chip_busy_dies[chip] == 0 {
            if self.busy_chips == self.chip_busy_dies.len() {
                self.all_busy_ns += now - self.all_busy_since;
            }
            self.busy_chips -= 1;
        }
    }

    /// Whether some die of `die`'s chip (itself included) is busy.
    pub fn chip_is_busy(&self, die: u32) -> bool {
        self.chip_busy_dies[self.geometry.chip_of_die(die) as usize] > 0
    }

    /// Most dies of one chip that were busy at once so far.
    pub fn max_busy_dies_per_chip(&self) -> u32 {
        self.max_busy_dies_per_chip
    }

    /// When `die`'s channel has carried every transfer reserved on it.
    pub fn channel_free_at(&self, die: u32) -> Time {
        self.channel_free_at[self.geometry.channel_of_die(die) as usize]
    }

    /// Reserve `die`'s channel for `bytes` starting no earlier than `earliest`; returns the end time.
    pub fn reserve_channel(&mut self, die: u32, earliest: Time, bytes: u64) -> Time {
        let duration = self.timing.transfer_ns(bytes);
        self.reserve_channel_ns(die, earliest, duration)
    }

    /// Reserve `die`'s channel for `duration` ns starting no earlier than `earliest`; returns the end time.
    pub fn reserve_channel_ns(&mut self, die: u32, earliest: Time, duration: Time) -> Time {
        let channel = self.geometry.channel_of_die(die) as usize;
        let start = earliest.max(self.channel_free_at[channel]);
        self.channel_free_at[channel] = start + duration;
        self.channel_busy_ns[channel] += duration;
        start + duration
    }

    /// Busy time per die (including ongoing operations up to `now`).
    pub fn die_busy_ns(&self, now: Time) -> Vec<Time> {
        (0..self.die_busy.len())
            .map(|d| self.die_busy_ns[d] + if self.die_busy[d] { now - self.die_busy_since[d] } else { 0 })
            .collect()
    }

    /// Time every chip had a busy die at once (including an ongoing stretch up to `now`): FLIN's "keeps all
    /// of the flash chips busy".
    pub fn all_chips_busy_ns(&self, now: Time) -> Time {
        let all = self.busy_chips == self.chip_busy_dies.len();
        self.all_busy_ns + if all { now - self.all_busy_since } else { 0 }
    }

    /// Busy time per channel (transfers reserved up to `now`).
    pub fn channel_busy_ns(&self, now: Time) -> Vec<Time> {
        (0..self.channel_busy_ns.len())
            .map(|c| self.channel_busy_ns[c] - self.channel_free_at[c].saturating_sub(now).min(self.channel_busy_ns[c]))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_chips_busy_counts_only_the_stretches_when_every_chip_works() {
        let geometry = Geometry {
            channels: 1,
            chips_per_channel: 2,
            dies_per_chip: 1,
            planes_per_die: 1,
            blocks_per_plane: 4,
            pages_per_block: 4,
            page_bytes: 4096,
            units_per_page: 1,
        };
        let timing = Timing { read_ns: 1, program_ns: 1, erase_ns: 1, command_ns: 0, channel_ns_per_byte: 1.0 };
        let mut b = Backend::new(geometry, timing);
        // Die 0 busy 0-100, die 1 busy 40-150, then both 200-260 and die 0 alone 300-.
        b.occupy_die(0, 0);
        b.occupy_die(1, 40);
        b.release_die(0, 100);
        b.release_die(1, 150);
        assert_eq!(b.all_chips_busy_ns(150), 60);
        b.occupy_die(0, 200);
        b.occupy_die(1, 200);
        assert_eq!(b.all_chips_busy_ns(230), 90, "an ongoing stretch counts up to now");
        b.release_die(1, 260);
        b.release_die(0, 280);
        b.occupy_die(0, 300);
        assert_eq!(b.all_chips_busy_ns(400), 120);
        assert_eq!(b.die_busy_ns(400), vec![100 + 80 + 100, 110 + 60]);

        // Two dies on one chip: the chip is busy while either is.
        let mut b = Backend::new(Geometry { chips_per_channel: 1, dies_per_chip: 2, ..geometry }, timing);
        b.occupy_die(0, 0);
        b.occupy_die(1, 50);
        b.release_die(0, 100);
        b.release_die(1, 150);
        assert_eq!(b.all_chips_busy_ns(200), 150);
    }
}
