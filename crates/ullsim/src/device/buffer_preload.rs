//! The write buffer full at time 0 (`device.ftl.precondition_buffer_fill`): each partition of the buffer
//! holds the given share of its space in pages of earlier writes, whose programs are queued on their dies
//! when the run starts.
//!
//! Why: a write job on a drive whose flash drains slower than the host writes settles with its buffer
//! full, every new write waiting for a program to free a page. From an empty buffer the drive first absorbs
//! a buffer's worth of writes at the host interface's pace: a gigabyte of DRAM at a few GB/s hides the
//! flash for the first few hundred milliseconds, which a short simulated run then measures instead of the
//! steady state. fio's measured jobs follow a ramp and, in a probe set, other write jobs: the buffer is
//! full when they start.
//!
//! The pages are uniformly random logical pages (a random writer's), programmed through the write path
//! (placement, GC, the transaction scheduler) like the timed preconditioning's writes: the flow slot after
//! the run's flows (`Device::precondition_flow`), so they are no flow's host data. Each transaction carries
//! its buffer partition in `link` (unused otherwise by a host-data program) so that its program frees that
//! partition's space (`Device`'s completion of a program).

use rand::RngExt;

use super::flash::FlashOp;
use super::transaction::{Purpose, NONE};
use super::{Device, DriveEvent};
use crate::config::DeviceConfig;
use crate::engine::{stream_rng, Scheduler};
use crate::request::{Criticality, NvmePriority};

/// The buffer's state to set up at time 0 (nothing unless the key is above 0 and the drive buffers writes).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct BufferPreload {
    /// Share of each partition's pages to fill.
    fill: f64,
    /// The drive's seed, for the pages' logical addresses.
    seed: u64,
}

impl BufferPreload {
    pub fn new(cfg: &DeviceConfig, seed: u64) -> Self {
        BufferPreload { fill: cfg.ftl.precondition_buffer_fill, seed }
    }
}

impl Device {
    /// Fill the write buffer as `device.ftl.precondition_buffer_fill` says and queue the pages' programs.
    pub(super) fn preload_write_buffer(&mut self, q: &mut impl Scheduler<DriveEvent>) {
        let preload = std::mem::take(&mut self.buffer_preload);
        if preload.fill <= 0.0 || !self.cache.buffers_writes() {
            return;
        }
        let per_partition = (preload.fill * self.cache.partition_pages() as f64).floor() as usize;
        let logical_pages = self.logical_capacity_bytes / self.page_bytes;
        if logical_pages == 0 {
            return;
        }
        let mut rng = stream_rng(preload.seed, "device:buffer-preload");
        let flow = self.precondition_flow;
        let bytes = self.page_bytes as u32;
        for part in 0..self.cache.partitions() {
            for _ in 0..per_partition {
                let lpa = rng.random_range(0..logical_pages);
                self.cache.buffer_write(lpa, part, Criticality::Normal);
                let tx = self.new_transaction(
                    FlashOp::Program,
                    Purpose::UserWrite,
                    0,
                    lpa,
                    bytes,
                    NONE,
                    flow,
                    NvmePriority::Medium,
                );
                self.txs[tx].destage = self.durability.destage_started();
                self.txs[tx].link = part as u32;
                self.place_write(q, tx);
            }
        }
    }
}
