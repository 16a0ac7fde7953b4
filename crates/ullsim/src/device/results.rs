//! What the device reports over the measurement window: the difference of two snapshots of its cumulative
//! counters, one taken when the window opens (the end of the warm-up) and one when it closes, so that a
//! windowed run's write amplification or die utilization does not mix in the warm-up.

use serde::Serialize;

use super::cache::{ReadCacheCounters, SplitSample};
use super::ftl::slc::SlcStats;
use super::Device;
use crate::engine::Time;

/// Device-level results over the measurement window.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceResults {
    pub preset: String,
    pub logical_capacity_bytes: u64,
    /// Victim blocks erased by garbage collection.
    pub gc_count: u64,
    /// (host pages + GC pages programmed) / host pages programmed, counting finished programs; null when
    /// no host page was programmed.
    pub write_amplification: Option<f64>,
    pub host_pages_programmed: u64,
    pub gc_pages_programmed: u64,
    /// Share of host read pages found in the DRAM cache; null without reads or without a cache.
    pub cache_hit_rate: Option<f64>,
    /// Share of mapping lookups that hit the cached mapping table; null without lookups.
    pub cmt_hit_rate: Option<f64>,
    /// Fraction of the window each die was busy: mean and max over dies ("chip utilization").
    pub die_utilization: Utilization,
    /// Fraction of the window every chip had a busy die at once (FLIN's "keeps all of the flash chips busy").
    pub all_chips_busy: f64,
    pub channel_utilization: Utilization,
    /// Commands inside the device (doorbell to completion), time-weighted mean and maximum over the window.
    pub queue_depth: QueueDepth,
    /// Fraction of the window with at least one command inside the device.
    pub busy: f64,
    /// Page-level flash operations executed, by kind.
    pub flash_reads: u64,
    pub flash_programs: u64,
    pub flash_erases: u64,
    /// Die time of garbage collection (dispatch to end of each GC operation, finished operations only).
    pub gc_busy_ns: u64,
    /// Programs and erases suspended for reads (`device.flash.program_suspend`, `erase_suspend`).
    pub suspensions: u64,
    /// Multi-plane operations started, and how many of them joined different page indices within their
    /// blocks (0 under `device.tsu.multiplane_same_page`).
    pub multiplane_ops: u64,
    pub mixed_page_multiplane_ops: u64,
    /// Most dies of one chip busy at once, over the whole run (1 under `device.flash.one_die_per_chip`).
    pub max_busy_dies_per_chip: u32,
    /// Most buffered write data on its way to flash at once (destaged, not yet programmed), over the whole
    /// run: at most the write buffer, or planes x `device.cache.destage_limit_pages_per_plane` pages.
    pub max_destaging_bytes: u64,
    /// Commands of each criticality class, as the device sees it on each command (the FastResponse /
    /// FlashShare attribute): how many completed and how long they spent inside.
    pub by_class: ByClass,
    /// The read-cache policy's figures; absent under `device.cache.read_policy = "shared"` (which has
    /// none beyond `cache_hit_rate`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_cache: Option<ReadCacheResults>,
    /// The SLC cache's figures; absent without one (`device.slc.enabled = false`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slc: Option<SlcResults>,
}

/// The SLC cache over the window (`device.slc`), and its state at the window's end.
#[derive(Debug, Clone, Serialize)]
pub struct SlcResults {
    /// Host pages placed in SLC-mode blocks, and directly in native (TLC) blocks.
    pub host_pages_slc: u64,
    pub host_pages_native: u64,
    /// Pages folding moved from SLC-mode blocks into native blocks (also in `gc_pages_programmed` once
    /// programmed), and SLC blocks it emptied and erased (also in `gc_count`).
    pub folded_pages: u64,
    pub blocks_folded: u64,
    /// The region's size at the window's end: static part plus what the free space allows of the dynamic
    /// part (bytes of host data it holds when full).
    pub region_bytes: u64,
    /// Valid data in SLC-mode blocks at the window's end.
    pub used_bytes: u64,
}

/// A read-cache policy's figures over the window (FlashShare's Figs. 18 and 19).
#[derive(Debug, Clone, Serialize)]
pub struct ReadCacheResults {
    pub policy: String,
    pub critical: ReadCacheClass,
    pub normal: ReadCacheClass,
    /// Flash reads issued to read pages ahead, and demand pages that waited for one instead of reading.
    pub prefetch_reads: u64,
    pub prefetch_joins: u64,
    /// Epochs that ended in the window.
    pub epochs: u64,
    /// The way split and read-ahead sizes at the end of epochs in the window, oldest first (bounded: see
    /// docs/output.md).
    pub split_series: Vec<SplitSample>,
}

/// One class's side of the read cache.
#[derive(Debug, Clone, Serialize)]
pub struct ReadCacheClass {
    /// Pages its reads looked up, and found in DRAM.
    pub read_page_lookups: u64,
    pub read_page_hits: u64,
    /// hits / lookups; null without lookups.
    pub hit_rate: Option<f64>,
    /// Ways of its partition at the window's end.
    pub ways: u32,
    /// Pages it reads ahead of a read that missed, at the window's end.
    pub prefetch_pages: u32,
}

/// Per-class device figures over the window.
#[derive(Debug, Clone, Serialize)]
pub struct ByClass {
    pub critical: ClassResult,
    pub normal: ClassResult,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClassResult {
    /// Commands whose completion was posted in the window.
    pub commands: u64,
    /// Their mean time inside the device, doorbell to completion posted (ns; 0 without commands).
    pub mean_device_ns: f64,
    /// Their mean wait in device-internal queues (transaction queues, write-buffer space; ns).
    pub mean_internal_wait_ns: f64,
}

/// Cumulative per-class counts: commands completed and the sums of their device time and internal wait.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ClassCounters {
    commands: u64,
    device_ns: u128,
    internal_wait_ns: u128,
}

impl ClassCounters {
    pub(super) fn record(&mut self, device_ns: Time, internal_wait_ns: Time) {
        self.commands += 1;
        self.device_ns += device_ns as u128;
        self.internal_wait_ns += internal_wait_ns as u128;
    }

    fn since(&self, before: &ClassCounters) -> ClassResult {
        let commands = self.commands - before.commands;
        let mean = |after: u128, before: u128| {
            if commands == 0 {
                0.0
            } else {
                (after - before) as f64 / commands as f64
            }
        };
        ClassResult {
            commands,
            mean_device_ns: mean(self.device_ns, before.device_ns),
            mean_internal_wait_ns: mean(self.internal_wait_ns, before.internal_wait_ns),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Utilization {
    pub mean: f64,
    pub max: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct QueueDepth {
    pub mean: f64,
    pub max: u64,
}

/// The device's cumulative counters at one instant (`at`).
#[derive(Debug, Clone)]
pub struct DeviceCounters {
    at: Time,
    blocks_erased: u64,
    host_pages_programmed: u64,
    gc_pages_programmed: u64,
    cache_read_lookups: u64,
    cache_read_hits: u64,
    cmt_hits: u64,
    cmt_misses: u64,
    die_busy_ns: Vec<Time>,
    all_chips_busy_ns: Time,
    channel_busy_ns: Vec<Time>,
    outstanding_area: u128,
    busy_ns: Time,
    flash_ops: [u64; 3],
    gc_busy_ns: Time,
    suspensions: u64,
    multiplane_ops: [u64; 2],
    /// Most commands inside at once since the previous snapshot.
    max_outstanding: u64,
    /// GC die time charged to each flow (see `gc_cost.rs`).
    gc_busy_by_flow: Vec<Time>,
    /// Critical, normal.
    by_class: [ClassCounters; 2],
    read_cache: ReadCacheCounters,
    slc: Option<SlcStats>,
}

impl DeviceCounters {
    /// GC die time charged to each flow between `since` and these counters.
    pub fn gc_busy_by_flow_since(&self, since: &DeviceCounters) -> Vec<Time> {
        self.gc_busy_by_flow.iter().zip(&since.gc_busy_by_flow).map(|(&after, &before)| after - before).collect()
    }
}

impl Device {
    /// Commands inside the device now (doorbell seen, completion not yet posted): its queue depth.
    pub fn commands_inside(&self) -> u64 {
        self.outstanding
    }

    /// The cumulative counters at `now` (ongoing busy stretches counted up to `now`), with GC die time
    /// charged to the first `flows` flows, and the most commands inside at once since the previous call
    /// (the maximum then restarts, so that the one [`Device::results`] reports is the window's).
    pub fn counters(&mut self, now: Time, flows: usize) -> DeviceCounters {
        let max_outstanding = std::mem::replace(&mut self.max_outstanding, self.outstanding);
        self.gc_cost.settle();
        let open = now - self.outstanding_since;
        DeviceCounters {
            at: now,
            blocks_erased: self.ftl.stats.blocks_erased,
            host_pages_programmed: self.host_pages_programmed,
            gc_pages_programmed: self.gc_pages_programmed,
            cache_read_lookups: self.cache.read_page_lookups,
            cache_read_hits: self.cache.read_page_hits,
            cmt_hits: self.cmt.hits,
            cmt_misses: self.cmt.misses,
            die_busy_ns: self.flash.die_busy_ns(now),
            all_chips_busy_ns: self.flash.all_chips_busy_ns(now),
            channel_busy_ns: self.flash.channel_busy_ns(now),
            outstanding_area: self.outstanding_area + self.outstanding as u128 * open as u128,
            busy_ns: self.busy_ns + if self.outstanding > 0 { open } else { 0 },
            flash_ops: self.flash_ops,
            gc_busy_ns: self.gc_cost.total_ns(),
            suspensions: self.suspension.count,
            multiplane_ops: self.multiplane_ops,
            max_outstanding,
            gc_busy_by_flow: (0..flows as u32).map(|f| self.gc_cost.charged_ns(f)).collect(),
            by_class: self.by_class,
            read_cache: self.cache.counters(),
            slc: self.ftl.slc_stats(),
        }
    }

    /// Results between the snapshot `since` and `now`.
    pub fn results(&self, since: &DeviceCounters, now: &DeviceCounters) -> DeviceResults {
        let ratio = |num: u64, den: u64| if den == 0 { None } else { Some(num as f64 / den as f64) };
        let span = now.at.saturating_sub(since.at).max(1) as f64;
        let utilization = |before: &[Time], after: &[Time]| {
            let shares: Vec<f64> = after.iter().zip(before).map(|(&a, &b)| a.saturating_sub(b) as f64 / span).collect();
            Utilization {
                mean: shares.iter().sum::<f64>() / shares.len().max(1) as f64,
                max: shares.iter().copied().fold(0.0, f64::max),
            }
        };
        let host_pages = now.host_pages_programmed - since.host_pages_programmed;
        let gc_pages = now.gc_pages_programmed - since.gc_pages_programmed;
        let cmt_hits = now.cmt_hits - since.cmt_hits;
        DeviceResults {
            preset: self.preset.clone(),
            logical_capacity_bytes: self.logical_capacity_bytes,
            gc_count: now.blocks_erased - since.blocks_erased,
            write_amplification: ratio(host_pages + gc_pages, host_pages),
            host_pages_programmed: host_pages,
            gc_pages_programmed: gc_pages,
            cache_hit_rate: if self.cache.buffers_writes() {
                ratio(now.cache_read_hits - since.cache_read_hits, now.cache_read_lookups - since.cache_read_lookups)
            } else {
                None
            },
            cmt_hit_rate: ratio(cmt_hits, cmt_hits + now.cmt_misses - since.cmt_misses),
            die_utilization: utilization(&since.die_busy_ns, &now.die_busy_ns),
            all_chips_busy: (now.all_chips_busy_ns - since.all_chips_busy_ns) as f64 / span,
            channel_utilization: utilization(&since.channel_busy_ns, &now.channel_busy_ns),
            queue_depth: QueueDepth {
                mean: (now.outstanding_area - since.outstanding_area) as f64 / span,
                max: now.max_outstanding,
            },
            busy: (now.busy_ns - since.busy_ns) as f64 / span,
            flash_reads: now.flash_ops[0] - since.flash_ops[0],
            flash_programs: now.flash_ops[1] - since.flash_ops[1],
            flash_erases: now.flash_ops[2] - since.flash_ops[2],
            gc_busy_ns: now.gc_busy_ns - since.gc_busy_ns,
            suspensions: now.suspensions - since.suspensions,
            multiplane_ops: now.multiplane_ops[0] - since.multiplane_ops[0],
            mixed_page_multiplane_ops: now.multiplane_ops[1] - since.multiplane_ops[1],
            max_busy_dies_per_chip: self.flash.max_busy_dies_per_chip(),
            max_destaging_bytes: self.cache.max_pending_programs() as u64 * self.page_bytes,
            by_class: ByClass {
                critical: now.by_class[0].since(&since.by_class[0]),
                normal: now.by_class[1].since(&since.by_class[1]),
            },
            read_cache: self.read_cache_results(since, now),
            slc: self.slc_results(since, now),
        }
    }

    fn slc_results(&self, since: &DeviceCounters, now: &DeviceCounters) -> Option<SlcResults> {
        let (a, b) = (now.slc?, since.slc?);
        let (region_pages, used_pages) = self.ftl.slc_occupancy()?;
        Some(SlcResults {
            host_pages_slc: a.host_pages_slc - b.host_pages_slc,
            host_pages_native: a.host_pages_native - b.host_pages_native,
            folded_pages: a.folded_pages - b.folded_pages,
            blocks_folded: a.blocks_folded - b.blocks_folded,
            region_bytes: region_pages * self.page_bytes,
            used_bytes: used_pages * self.page_bytes,
        })
    }

    fn read_cache_results(&self, since: &DeviceCounters, now: &DeviceCounters) -> Option<ReadCacheResults> {
        let state = self.cache.policy_state()?;
        let (a, b) = (&now.read_cache, &since.read_cache);
        let class = |c: usize| {
            let (lookups, hits) = (a.page_lookups[c] - b.page_lookups[c], a.page_hits[c] - b.page_hits[c]);
            ReadCacheClass {
                read_page_lookups: lookups,
                read_page_hits: hits,
                hit_rate: if lookups == 0 { None } else { Some(hits as f64 / lookups as f64) },
                ways: state.ways[c],
                prefetch_pages: state.prefetch_pages[c],
            }
        };
        Some(ReadCacheResults {
            policy: self.cache.policy_name().to_string(),
            critical: class(0),
            normal: class(1),
            prefetch_reads: a.prefetch_reads - b.prefetch_reads,
            prefetch_joins: a.prefetch_joins - b.prefetch_joins,
            epochs: a.epochs - b.epochs,
            split_series: state.series.iter().filter(|s| (since.at..=now.at).contains(&s.at_ns)).copied().collect(),
        })
    }
}
