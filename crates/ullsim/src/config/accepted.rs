//! What a whole-number key accepts, as a type error at it says (`iodepth = "x"`, `iodepth = -1`): the range
//! the key's checks (workload/check.rs, host.rs, device.rs) accept, where it is narrower than the range of the
//! key's Rust type. tests/it/messages.rs checks that every range here is the one the checks enforce, and that
//! every key whose checks narrow its type's range is here.

use super::scenario::{MAX_IODEPTH, MAX_NRFILES, MAX_NUMJOBS};

/// TOML's largest integer: what a `u64` key can be given.
const TOML_MAX: u64 = i64::MAX as u64;

/// What the whole-number key `key` (as errors name it: `flow[0].iodepth`, `host.cores`) accepts, or `None`
/// when it accepts all its type holds.
pub(super) fn whole_number(key: &str) -> Option<String> {
    // A flow's keys are the same in every flow, and a drive table's (`drives.nvme1.flash.channels`) those of
    // `[device]`.
    let drive_key = key.strip_prefix("drives.").and_then(|rest| rest.split_once('.')).map(|(_, key)| key);
    let key = match (key.strip_prefix("flow[").and_then(|rest| rest.split_once("].")), drive_key) {
        (Some((_, flow_key)), _) => format!("flow.{flow_key}"),
        (None, Some(device_key)) => format!("device.{device_key}"),
        (None, None) => key.to_owned(),
    };
    let u32_max = u64::from(u32::MAX);
    let (low, high) = match key.as_str() {
        "flow.iodepth" | "flow.iodepth_batch_submit" => (1, u64::from(MAX_IODEPTH)),
        "flow.numjobs" => (1, u64::from(MAX_NUMJOBS)),
        "flow.rwmixread" | "flow.percentage_random" => (0, 100),
        "flow.cpuload" => (1, 100),
        "flow.nrfiles" => {
            return Some(format!(
                "a whole number of files, at least 1 and at most {}, that fit in the flow's region at 4 KiB or more \
                 each",
                MAX_NRFILES
            ))
        }
        "flow.flush_every" | "flow.fsync" | "flow.fdatasync" => (1, u32_max),
        "flow.number_ios" => (1, TOML_MAX),
        "host.cores" => (1, 1024),
        "host.queue_pairs" => (0, u64::from(super::scenario::MAX_QUEUE_PAIRS)),
        "host.cpu.remote_completion_lines" => (0, u64::from(super::host::MAX_REMOTE_COMPLETION_LINES)),
        "host.block.nr_requests" => (0, 65_535),
        "host.block.ld_depth" | "host.block.ld_sync_batch" | "host.block.ld_async_batch" => (1, 65_535),
        "host.block.bfq_back_seek_max" => (0, i32::MAX as u64),
        "host.block.bfq_back_seek_penalty" => (1, i32::MAX as u64),
        "host.block.max_sectors_kb" => return Some("a multiple of 4 from 4 to 1048576 (KiB)".into()),
        "host.block.noncritical_max_sectors_kb" => {
            return Some("0 (same as max_sectors_kb) or a multiple of 4 from 4 to max_sectors_kb (KiB)".into())
        }
        "host.fs.dirty_background_ratio" => return Some("a percentage from 1 to below fs.dirty_ratio".into()),
        "host.fs.dirty_ratio" => return Some("a percentage above fs.dirty_background_ratio, at most 100".into()),
        "host.fs.dirty_expire_centisecs" | "host.fs.dirty_writeback_centisecs" => (1, 360_000),
        "host.nvme.coalesce_count" => (0, 256),
        "device.flash.channels"
        | "device.flash.chips_per_channel"
        | "device.flash.dies_per_chip"
        | "device.flash.blocks_per_plane"
        | "device.flash.channel_width_bytes"
        | "device.ftl.gc_d_choices"
        | "device.ftl.cmt_entry_bytes"
        | "device.host_interface.queue_depth"
        | "device.host_interface.arbitration_burst"
        | "device.host_interface.flashshare_drain_entries" => (1, u32_max),
        "device.count" => (1, u64::from(super::drives::MAX_DRIVES)),
        "md.level" => return Some("a whole number from 0 to 0 (RAID-0, the only md level modeled)".into()),
        "device.flash.planes_per_die" => (1, 64),
        "device.flash.pages_per_block" => (1, 65_535),
        "device.flash.suspend_read_batches" | "device.flash.suspend_max_per_op" => (1, 1024),
        "device.slc.bits_per_cell" => (1, 4),
        "device.cache.destage_limit_pages_per_plane" => (0, 1 << 16),
        "device.cache.flashshare_epoch_accesses" => (16, 1 << 26),
        "device.host_interface.max_fetched_per_queue" => (0, 1 << 16),
        "device.controller.command_slots" => (0, 1 << 20),
        "device.tsu.read_bypass_limit" => (0, 1 << 16),
        "device.ftl.precondition_timed_writes" => (0, u64::from(super::device::MAX_TIMED_PRECONDITION_BLOCKS)),
        "device.ftl.precondition_timed_depth" => (1, u64::from(super::device::MAX_TIMED_PRECONDITION_DEPTH)),
        "device.controller.firmware_cores" => (1, 64),
        "device.host_interface.pcie_lanes" => (1, 64),
        "device.host_interface.pcie_tlp_overhead_bytes" => (0, 64),
        "device.host_interface.pcie_max_payload_bytes" => return Some("a power of two from 64 to 4096 (bytes)".into()),
        "device.host_interface.wrr_high_weight"
        | "device.host_interface.wrr_medium_weight"
        | "device.host_interface.wrr_low_weight" => (1, u64::from(super::device::MAX_WRR_WEIGHT)),
        _ => return None,
    };
    Some(format!("a whole number from {low} to {high}"))
}
