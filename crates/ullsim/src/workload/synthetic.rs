//! Synthetic flows in fio's words: block sizes (`bs`, `bssplit`) and where each I/O goes (sequential or
//! random over the flow's region, with the direction drawn from `rwmixread`).

use rand::RngExt;

use super::distribution::BlockPicker;
use super::files::Files;
use crate::config::scenario::{FlowSpec, RwMode};
use crate::config::units::parse_size;
use crate::engine::SimRng;
use crate::request::Op;

/// Default block size (fio's).
const DEFAULT_BS: u64 = 4096;

/// A flow's block sizes with their percentages, for reads and for writes.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct BlockSizes {
    pub(super) read: Vec<(u64, u32)>,
    pub(super) write: Vec<(u64, u32)>,
}

impl BlockSizes {
    pub(super) fn sizes(&self) -> impl Iterator<Item = u64> + '_ {
        self.read.iter().chain(&self.write).map(|&(size, _)| size)
    }
    pub(super) fn largest(&self) -> u64 {
        self.sizes().max().unwrap_or(DEFAULT_BS)
    }
    pub(super) fn smallest(&self) -> u64 {
        self.sizes().min().unwrap_or(DEFAULT_BS)
    }
    /// Draw the size of an I/O in direction `op`.
    pub(super) fn draw(&self, op: Op, rng: &mut SimRng) -> u64 {
        let sizes = match op {
            Op::Read => &self.read,
            Op::Write => &self.write,
            Op::Flush => return 0, // no data
        };
        if sizes.len() == 1 {
            return sizes[0].0;
        }
        let mut pick = rng.random_range(0..100);
        for &(size, weight) in sizes {
            if pick < weight {
                return size;
            }
            pick -= weight;
        }
        sizes[0].0
    }
}

/// Block sizes and weights from `bs` / `bssplit` (fio syntax `4k/50:128k/50`, or `READS,WRITES` with a
/// list for each direction: `4k/100,4k/50:64k/50`).
pub(super) fn block_sizes(spec: &FlowSpec) -> Result<BlockSizes, String> {
    let Some(split) = &spec.bssplit else {
        let only = vec![(spec.bs.map_or(DEFAULT_BS, |b| b.0), 100)];
        return Ok(BlockSizes { read: only.clone(), write: only });
    };
    if spec.bs.is_some() {
        return Err("give bs or bssplit, not both".into());
    }
    match split.split(',').collect::<Vec<_>>().as_slice() {
        [both] => {
            let sizes = parse_split(both)?;
            Ok(BlockSizes { read: sizes.clone(), write: sizes })
        }
        [read, write] => Ok(BlockSizes { read: parse_split(read)?, write: parse_split(write)? }),
        _ => Err(format!(
            "expected one SIZE/PERCENT list for all I/O, or two separated by ',' (reads, then writes); fio's \
             third list (trims) is not supported, found \"{split}\""
        )),
    }
}

/// One bssplit list, `SIZE/PERCENT:SIZE/PERCENT...`, percentages adding up to 100.
fn parse_split(list: &str) -> Result<Vec<(u64, u32)>, String> {
    let mut out = Vec::new();
    for part in list.split(':') {
        let (size, weight) = part.split_once('/').ok_or_else(|| {
            format!("expected SIZE/PERCENT entries separated by ':', e.g. \"4k/50:128k/50\", found \"{part}\"")
        })?;
        let size = parse_size(size)?;
        let weight: u32 =
            weight.trim().parse().map_err(|_| format!("expected a whole percentage after '/', found \"{weight}\""))?;
        out.push((size, weight));
    }
    let total: u32 = out.iter().map(|&(_, w)| w).sum();
    if total != 100 {
        return Err(format!("bssplit percentages must add up to 100, they add up to {total}"));
    }
    Ok(out)
}

/// Where a synthetic flow's addresses and sizes come from.
pub(super) struct Synthetic {
    pub(super) rw: RwMode,
    pub(super) read_percent: u32,
    pub(super) sizes: BlockSizes,
    /// The flow's region on each of its files (drives, or the md volume): the same range on each.
    pub(super) region_start: u64,
    pub(super) region_len: u64,
    pub(super) align: u64,
    pub(super) picker: Option<BlockPicker>,
    /// `percentage_random` of a random flow: I/Os at a random offset, percent; the rest follow the previous
    /// I/O (fio's `percentage_random`).
    pub(super) random_percent: u32,
    /// By file: where its next sequential I/O starts, from the region's start (fio's per-file `last_pos`),
    /// shared by the flow's jobs.
    pub(super) cursors: Vec<u64>,
}

impl Synthetic {
    /// The flow's next I/O, issued by `job`: (direction, drive, offset, length). The drive is the file `files`
    /// picks for the job; a sequential I/O that no longer fits on its file marks the file done and goes to
    /// the next pick (see `files.rs`).
    pub(super) fn next(&mut self, rng: &mut SimRng, files: &mut Files, job: u32) -> (Op, u32, u64, u32) {
        let op = match self.rw {
            RwMode::Read | RwMode::Randread => Op::Read,
            RwMode::Write | RwMode::Randwrite => Op::Write,
            RwMode::Rw | RwMode::Randrw => {
                if rng.random_range(0..100) < self.read_percent {
                    Op::Read
                } else {
                    Op::Write
                }
            }
        };
        let len = self.sizes.draw(op, rng);
        // Fully random flows draw nothing more (their streams stay as they were without the key).
        let random_now = self.random_percent == 100 || rng.random_range(0..100) < self.random_percent;
        // One file, or random I/O: a file's sequential stream wraps at its end (see files.rs).
        let wraps = files.count() == 1 || self.rw.is_random();
        loop {
            let file = files.next(job);
            if let Some(offset) = self.place(rng, file, len, random_now, wraps) {
                return (op, files.drive(file), offset, len as u32);
            }
            if files.set_done(file) {
                self.cursors.iter_mut().for_each(|c| *c = 0);
            }
        }
    }

    /// Where on `file` an I/O of `len` bytes goes: an aligned random block when `random_now`, else where its
    /// sequential stream is (back at the region's start past its end when it `wraps`; none when it does not).
    fn place(&mut self, rng: &mut SimRng, file: usize, len: u64, random_now: bool, wraps: bool) -> Option<u64> {
        let cursor = &mut self.cursors[file];
        match &mut self.picker {
            Some(picker) if random_now => {
                // Random: an aligned block whose I/O fits in the region; a sequential run goes on from it.
                let slots = (self.region_len - len) / self.align + 1;
                let block = picker.next_block(rng) % slots;
                *cursor = block * self.align + len;
                Some(self.region_start + block * self.align)
            }
            _ => {
                if *cursor + len > self.region_len {
                    if !wraps {
                        return None;
                    }
                    *cursor = 0;
                }
                let offset = self.region_start + *cursor;
                *cursor += len;
                Some(offset)
            }
        }
    }
}
