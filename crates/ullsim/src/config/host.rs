//! The host part of a scenario: cores and CPU scheduling, the block layer and its I/O scheduler, the NVMe
//! driver and how completions are noticed, software costs and the power model.
//!
//! Every key has a default calibrated to the machine of HotStorage'23 (seed 002: Xeon E3-1230, 4 cores at
//! 3.4 GHz, Linux 5.18, Optane P4801X), so that `optane-ull` with fio's io_uring at QD1 reproduces its Table 1
//! (docs/validation.md). Numbers marked [inferred] in docs/scenarios.md are not measured anywhere; they are
//! chosen so that the sums the papers do measure come out right.

use serde::{Deserialize, Serialize};

use super::units::{Bytes, Millis, Nanos};
use crate::util::keyword::keyword_serde;

pub mod cpu_speed;
mod offload;
pub use cpu_speed::{cpu_cost, MAX_CPU_SPEED, MIN_CPU_SPEED};
pub use offload::{DedCoreConfig, XlerConfig};

/// `host.model`: which host the I/O goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", remote = "Self")]
pub enum HostModel {
    /// The Linux host stack: tasks on CPU cores, system calls, blk-mq, the NVMe driver, interrupts or polling.
    #[default]
    Full,
    /// No host time: each flow's I/O enters its own submission queue when issued and completes for the flow
    /// when the device posts it (as MQSim's host does), for comparing the device model with device-only
    /// simulators. Every other `[host]` key but `power` is ignored.
    DeviceOnly,
}

keyword_serde!(HostModel);

/// `[host]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HostConfig {
    /// The named stack the other keys started from (`config/stacks/`; "vanilla": every default).
    pub stack: String,
    /// The named platform (machine) under the stack's and the scenario's keys (`config/platforms/`), if any.
    pub platform: Option<String>,
    /// "full" (the Linux host stack) or "device-only" (no host time, each flow on its own submission queue).
    pub model: HostModel,
    /// CPU cores the CPU scheduler manages (SMT siblings are not modeled).
    pub cores: u32,
    /// CPU scheduler: "cfs", "eevdf" or "fastresponse" (CFS with FastResponse's critical wake-up).
    pub cpu_scheduler: String,
    /// blk-mq I/O scheduler: "none", "mq-deadline", "kyber", "bfq" or "ld" (FastResponse's Limited Depth).
    pub io_scheduler: String,
    /// How completions are noticed: "interrupt" (polls only `hipri` flows), "select-isr" (polls critical and
    /// `hipri` flows, FlashShare's Select-ISR), "poll" (every request is polled,
    /// the waiting core spins), "hybrid" (every request is polled after sleeping half the mean service time)
    /// or "dedcore" (the last core polls for critical flows and wakes their tasks; FlashShare's DedCore).
    pub completion: String,
    /// NVMe I/O queue pairs; 0 means one per core (Linux's default). Core c submits to queue c mod queue_pairs,
    /// whose interrupt goes to the first core that maps to it.
    pub queue_pairs: u32,
    pub cpu: CpuConfig,
    pub block: BlockConfig,
    pub nvme: NvmeConfig,
    pub fs: FsConfig,
    pub power: PowerConfig,
    pub xler: XlerConfig,
    pub dedcore: DedCoreConfig,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            stack: "vanilla".into(),
            platform: None,
            model: HostModel::Full,
            cores: 4,
            cpu_scheduler: "cfs".into(),
            io_scheduler: "none".into(),
            completion: "interrupt".into(),
            queue_pairs: 0,
            cpu: CpuConfig::default(),
            block: BlockConfig::default(),
            nvme: NvmeConfig::default(),
            fs: FsConfig::default(),
            power: PowerConfig::default(),
            xler: XlerConfig::default(),
            dedcore: DedCoreConfig::default(),
        }
    }
}

/// `[host.cpu]`: software costs outside the block layer and driver, and CPU scheduler parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CpuConfig {
    /// How fast the host's cores run the kernel's and the application's code, relative to the machine the
    /// defaults are calibrated to (HotStorage'23's Xeon E3-1230 at 3.4 GHz: 1.0); 2.0 does the same work in
    /// half the time. Every cost of CPU work is divided by it when the host is built; times that are not the
    /// core's work (the memory hierarchy, interrupt delivery, idle exit, device and timer times) are not
    /// (`config/host/cpu_speed.rs` lists both). 0.05 to 20; default 1.0 (the reference machine). A platform's
    /// measured costs may be set instead; this is the one factor `ullsim calibrate` fits.
    pub speed: f64,
    /// Entering the kernel for a system call.
    pub syscall_entry_ns: Nanos,
    /// Returning from a system call to user space.
    pub syscall_exit_ns: Nanos,
    /// Per I/O on submission above the block layer: io_uring/libaio request setup and the direct-I/O file
    /// path (iomap, bio allocation).
    pub fs_submit_ns: Nanos,
    /// Per I/O, in user space, to reap a completion (the application's own per-I/O work, e.g. fio's).
    pub reap_ns: Nanos,
    /// Switching from one task (or idle) to another.
    pub context_switch_ns: Nanos,
    /// A core's private cache (its L2), which the tasks that run on it share (`host/cpu/cache_refill.rs`).
    pub cache_bytes: Bytes,
    /// What a task touches each time it runs (kernel stack, task struct, its I/O buffer and per-I/O state):
    /// switched in after other tasks' footprints have pushed it out of `cache_bytes`, it refills it. 0: no
    /// refill cost.
    pub task_footprint_bytes: Bytes,
    /// Refilling one 64-byte cache line of a task's footprint from the shared last-level cache.
    pub cache_refill_line_ns: Nanos,
    /// try_to_wake_up: making a sleeping task runnable, on the waking core.
    pub wakeup_ns: Nanos,
    /// Leaving a shallow idle state (C1) when an interrupt or a wake-up reaches an idle core.
    pub idle_exit_ns: Nanos,
    /// One iteration of a polling loop: how late a spinning core notices a new completion or submission.
    pub poll_loop_ns: Nanos,
    /// Scheduler tick period (HZ = 250 gives 4 ms).
    pub tick_ns: Nanos,
    /// CFS sched_latency before scaling by 1 + log2(min(cores, 8)).
    pub sched_latency_ns: Nanos,
    /// CFS sched_min_granularity before scaling.
    pub min_granularity_ns: Nanos,
    /// CFS sched_wakeup_granularity before scaling.
    pub wakeup_granularity_ns: Nanos,
    /// EEVDF base slice before scaling.
    pub base_slice_ns: Nanos,
    /// Moving a modified cache line from one core's cache to another's (a spinlock's word changing hands),
    /// between cores of one cache group.
    pub cache_line_transfer_ns: Nanos,
    /// Cores per group sharing a last-level cache (a Zen CCX, a socket): cores `g × n .. (g + 1) × n`. 0: all
    /// the host's cores are one group.
    pub cores_per_cache_group: u32,
    /// Moving a modified cache line between cores of different groups.
    pub cache_line_transfer_across_ns: Nanos,
    /// Cache lines a request's completion touches that its submission wrote (the request, its tag bitmap
    /// words, the driver's per-command state): each moves from the submitting core when an interrupt
    /// completes the request on another core.
    pub remote_completion_lines: u32,
}

/// Most lines `cpu.remote_completion_lines` may name: 4 KiB of state per request, far above any kernel's.
pub const MAX_REMOTE_COMPLETION_LINES: u32 = 64;

impl Default for CpuConfig {
    fn default() -> Self {
        CpuConfig {
            speed: 1.0,
            syscall_entry_ns: Nanos::from_ns(100),
            syscall_exit_ns: Nanos::from_ns(100),
            fs_submit_ns: Nanos::from_ns(350),
            reap_ns: Nanos::from_ns(100),
            context_switch_ns: Nanos::from_ns(1_400),
            cache_bytes: Bytes(256 << 10),
            task_footprint_bytes: Bytes(16 << 10),
            cache_refill_line_ns: Nanos::from_ns(3),
            wakeup_ns: Nanos::from_ns(300),
            idle_exit_ns: Nanos::from_ns(1_700),
            poll_loop_ns: Nanos::from_ns(100),
            tick_ns: Nanos::from_ns(4_000_000),
            sched_latency_ns: Nanos::from_ns(6_000_000),
            min_granularity_ns: Nanos::from_ns(750_000),
            wakeup_granularity_ns: Nanos::from_ns(1_000_000),
            base_slice_ns: Nanos::from_ns(750_000),
            // Intel Memory Latency Checker, L2-to-L2 modified-line intervention within one socket, Xeon
            // E5-2660 v4 (Broadwell-EP, 10 cores): 40.3-42.3 ns (J. McCalpin, Intel forum topic 700477).
            cache_line_transfer_ns: Nanos::from_ns(40),
            cores_per_cache_group: 0,
            cache_line_transfer_across_ns: Nanos::from_ns(108),
            // [inferred] struct request (~5 lines in a 6.x x86-64 build), the scheduler tag's and the driver
            // tag's sbitmap words (2), the NVMe iod (1); counted one after another (an upper bound: some misses
            // overlap).
            remote_completion_lines: 8,
        }
    }
}

/// `[host.block]`: blk-mq.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BlockConfig {
    /// Per request on submission: blk_mq_submit_bio, tag allocation, issue to the driver (no scheduler).
    pub submit_ns: Nanos,
    /// Per request on completion: ending the request and freeing its tag.
    pub complete_ns: Nanos,
    /// md's pass over each bio it sends to a member of the md volume (`md_submit_bio`, `raid0_make_request`:
    /// mapping the sector, and for a bio across chunks `bio_split` and `bio_chain`), per piece.
    pub md_submit_ns: Nanos,
    /// Scheduler tags per hardware queue when a scheduler is attached; 0 means Linux's 2 * min(queue depth,
    /// 128). Without a scheduler the hardware queue depth bounds requests.
    pub nr_requests: u32,
    /// Largest request in KiB; bigger I/Os are split into pieces of this size.
    pub max_sectors_kb: u32,
    /// Largest request of a non-critical flow in KiB (FastResponse's split: 32); 0 means `max_sectors_kb`.
    /// Critical requests keep `max_sectors_kb`.
    pub noncritical_max_sectors_kb: u32,
    /// Critical requests skip the plug and the I/O scheduler and go straight to the driver (FastResponse's
    /// bypass); when the hardware queue is full they wait on its dispatch list, ahead of scheduler work.
    pub critical_bypass: bool,
    /// FlashShare's hazard rule (OSDI'18 §3.2): a bypassed critical request takes along a queued
    /// non-critical request of its core's hardware queues whose sectors overlap it, merged into one command
    /// when both go the same direction, else submitted just before it.
    pub bypass_hazard: bool,
    /// CPU time of the hazard check per queued request compared (with `bypass_hazard`).
    pub hazard_check_ns: Nanos,
    /// Plug a submission batch of three or more requests (flushed at the end of the batch, at 32 requests,
    /// or after a request of 128 KiB or more).
    pub plug: bool,
    /// Merge a bio into the adjacent last request of the task's plug (same direction, within max_sectors_kb).
    pub merges: bool,
    /// CPU time to check the plug for a merge, per bio added to a non-empty plug.
    pub merge_check_ns: Nanos,
    /// ld: device-wide dispatch tokens, i.e. most non-critical requests dispatched and not completed.
    pub ld_depth: u32,
    /// ld: sync requests dispatched in a row before the async domain gets a turn.
    pub ld_sync_batch: u32,
    /// ld: async requests dispatched in a row before the sync domain gets a turn.
    pub ld_async_batch: u32,
    /// kyber: the reads' latency target (sysfs `read_lat_nsec`; block/kyber-iosched.c: 2 ms).
    pub kyber_read_lat_nsec: Nanos,
    /// kyber: the writes' latency target (sysfs `write_lat_nsec`; 10 ms).
    pub kyber_write_lat_nsec: Nanos,
    /// mq-deadline: how long a read may wait before it is served first (sysfs `read_expire`, in ms; 500 ms).
    pub deadline_read_expire: Millis,
    /// mq-deadline: the same for writes (`write_expire`; 5 s).
    pub deadline_write_expire: Millis,
    /// mq-deadline: requests dispatched in a row in one direction (`fifo_batch`; 16).
    pub deadline_fifo_batch: u32,
    /// mq-deadline: read batches that may pass waiting writes before a write batch (`writes_starved`; 2).
    pub deadline_writes_starved: u32,
    /// mq-deadline: a bio may merge in front of a waiting request it ends at (`front_merges`; 1).
    pub deadline_front_merges: bool,
    /// bfq: how long an emptied queue may keep the device waiting for its next request (sysfs `slice_idle`,
    /// in ms; NSEC_PER_SEC / 125 = 8 ms). 0 disables idling.
    pub bfq_slice_idle: Millis,
    /// bfq: weight raising for interactive queues (sysfs `low_latency`; 1).
    pub bfq_low_latency: bool,
    /// bfq: how far back, in KiB, the next request of a queue may be and still count as near (sysfs
    /// `back_seek_max`; 16384).
    pub bfq_back_seek_max: u32,
    /// bfq: the cost factor of such a back seek (sysfs `back_seek_penalty`; 2).
    pub bfq_back_seek_penalty: u32,
    /// bfq: CPU time per node of its service trees that an operation visits beyond the root, under its lock
    /// (the trees are O(log n) in the busy and idle queues; the 1.9 us per request was measured with one).
    pub bfq_tree_node_ns: Nanos,
}

impl Default for BlockConfig {
    fn default() -> Self {
        BlockConfig {
            submit_ns: Nanos::from_ns(200),
            complete_ns: Nanos::from_ns(150),
            // [inferred] a map and a remap of a few dozen instructions each, a split's bio allocation from its
            // bio set: of the order of blk-mq's own per-bio submission, `submit_ns`, halved.
            md_submit_ns: Nanos::from_ns(100),
            nr_requests: 0,
            max_sectors_kb: 1280,
            noncritical_max_sectors_kb: 0,
            critical_bypass: false,
            bypass_hazard: false,
            // [estimate] one sector-range comparison per queued request, like `merge_check_ns`.
            hazard_check_ns: Nanos::from_ns(50),
            plug: true,
            merges: true,
            merge_check_ns: Nanos::from_ns(50),
            ld_depth: 32,
            ld_sync_batch: 8,
            ld_async_batch: 4,
            // Linux's defaults (block/kyber-iosched.c `kyber_latency_targets`, block/mq-deadline.c
            // `read_expire`, `write_expire`, `writes_starved`, `fifo_batch`).
            kyber_read_lat_nsec: Nanos::from_ns(2_000_000),
            kyber_write_lat_nsec: Nanos::from_ns(10_000_000),
            deadline_read_expire: Millis::from_ns(500_000_000),
            deadline_write_expire: Millis::from_ns(5_000_000_000),
            deadline_fifo_batch: 16,
            deadline_writes_starved: 2,
            deadline_front_merges: true,
            // block/bfq-iosched.c: `bfq_slice_idle`, `low_latency` in `bfq_init_queue`, `bfq_back_max`,
            // `bfq_back_penalty`.
            bfq_slice_idle: Millis::from_ns(8_000_000),
            bfq_low_latency: true,
            bfq_back_seek_max: 16 * 1024,
            bfq_back_seek_penalty: 2,
            // [inferred] a dependent load of the next node from L1/L2 (~1-4 ns), its key compare and, on the
            // ascents, the `min_start` re-computation from both children: ~10 ns a node.
            bfq_tree_node_ns: Nanos::from_ns(10),
        }
    }
}

/// `[host.fs]`: the file system (ext4, `data=ordered`), its page cache and writeback, for flows that use
/// files (`direct = 0`, `fsync`, `fdatasync`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FsConfig {
    /// Memory the page cache may use, bytes (the machine of HotStorage'23: 64 GB).
    pub memory_bytes: Bytes,
    /// Copying one 4 KiB page between a user buffer and the page cache.
    pub page_copy_ns: Nanos,
    /// The journal thread's CPU work to set up a commit (locking, building the descriptor and commit
    /// blocks).
    pub commit_cpu_ns: Nanos,
    /// `vm.dirty_background_ratio`: percent of the cache's memory dirty before the flusher writes back.
    pub dirty_background_ratio: u32,
    /// `vm.dirty_ratio`: percent of the cache's memory writers are throttled towards.
    pub dirty_ratio: u32,
    /// `vm.dirty_expire_centisecs`: a page dirty this long is written back by the next periodic pass.
    pub dirty_expire_centisecs: u32,
    /// `vm.dirty_writeback_centisecs`: the period of the flusher's periodic pass.
    pub dirty_writeback_centisecs: u32,
    /// FastResponse's file-level journaling: a critical task's fsync commits its own file into a small
    /// journal area of its own, without the journal thread and without other files' data.
    pub fjournaling: bool,
    /// A read miss's page: allocating it and inserting it into the page cache (`add_to_page_cache_lru`:
    /// the xarray, the memory cgroup's charge, the LRU), per 4 KiB page. An estimate: a few hundred ns on a
    /// 2019 server core (docs/model.md, "File system").
    pub page_alloc_ns: Nanos,
    /// AIOS (ATC'19): every flow that uses files opens them with `O_AIOS` (a flow's `aios` overrides it):
    /// LBIO instead of the block layer, reads that overlap their CPU work with the device, and the
    /// asynchronous fsync.
    pub aios: bool,
}

impl Default for FsConfig {
    fn default() -> Self {
        FsConfig {
            memory_bytes: Bytes(64 << 30),
            page_copy_ns: Nanos::from_ns(400),
            commit_cpu_ns: Nanos::from_ns(3_000),
            dirty_background_ratio: 10,
            dirty_ratio: 20,
            dirty_expire_centisecs: 3_000,
            dirty_writeback_centisecs: 500,
            fjournaling: false,
            page_alloc_ns: Nanos::from_ns(300),
            aios: false,
        }
    }
}

/// `[host.nvme]`: the NVMe driver and interrupts.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NvmeConfig {
    /// nvme_queue_rq: building the command and mapping its data for DMA.
    pub queue_rq_ns: Nanos,
    /// The doorbell MMIO write.
    pub doorbell_ns: Nanos,
    /// From the device's MSI-X write to the interrupt handler starting on a running core.
    pub irq_delivery_ns: Nanos,
    /// Interrupt entry and exit, once per interrupt.
    pub isr_ns: Nanos,
    /// Per completion entry, in the interrupt handler or a poll loop: reading it and completing the
    /// request up to waking its task (the block layer's part is `block.complete_ns`).
    pub cqe_ns: Nanos,
    /// Interrupt coalescing: raise an interrupt once this many completions are pending (0 or 1: off).
    pub coalesce_count: u32,
    /// Interrupt coalescing: or once the oldest pending completion is this old.
    pub coalesce_time_ns: Nanos,
    /// With an IOMMU in strict mode: mapping a command's data buffer (IOVA allocation and page-table
    /// writes), on top of `queue_rq_ns`. 0: no IOMMU, or passthrough (the default; the calibration
    /// against HotStorage'23 assumes none).
    pub iommu_map_ns: Nanos,
    /// With an IOMMU in strict mode: unmapping a command's buffer on completion (with the IOTLB
    /// invalidation). 0: no IOMMU, or passthrough.
    pub iommu_unmap_ns: Nanos,
    /// FlashShare's queue pair (OSDI'18 §3.3): two submission queues and one completion queue per core;
    /// latency-critical requests go to the second SQ, created with the urgent class, which an arbiter that
    /// knows the class (`flashshare`, `weighted-round-robin`) serves first.
    pub dual_sq: bool,
    /// Where the queues' interrupts go, as fio writes a CPU list ("0", "0-3,6"): vector `v` to the list's
    /// `v mod len`-th core. Empty: each vector to the first core that submits to its queue (Linux's managed
    /// affinity with one queue per core: completions on the submitting core).
    pub irq_cpus: String,
    /// Per drive (`nvme0` first), its own `irq_cpus`, as a host pins each drive's interrupts (e.g. to the
    /// cores of the socket the drive hangs off); drives past the list, or with an empty entry, use `irq_cpus`.
    pub irq_cpus_by_drive: Vec<String>,
}

impl Default for NvmeConfig {
    fn default() -> Self {
        NvmeConfig {
            queue_rq_ns: Nanos::from_ns(150),
            doorbell_ns: Nanos::from_ns(100),
            irq_delivery_ns: Nanos::from_ns(500),
            isr_ns: Nanos::from_ns(700),
            cqe_ns: Nanos::from_ns(150),
            coalesce_count: 0,
            coalesce_time_ns: Nanos::from_ns(100_000),
            iommu_map_ns: Nanos::from_ns(0),
            iommu_unmap_ns: Nanos::from_ns(0),
            dual_sq: false,
            irq_cpus: String::new(),
            irq_cpus_by_drive: Vec::new(),
        }
    }
}

/// `[host.power]`: a simple power model for energy per I/O (docs/model.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PowerConfig {
    /// The rest of the system (memory, fans, power supply losses), always drawn, in watts.
    pub base_w: f64,
    /// A core executing (user, kernel or polling).
    pub core_active_w: f64,
    /// A core idle.
    pub core_idle_w: f64,
    /// The SSD with at least one command in it.
    pub device_active_w: f64,
    /// The SSD with no command in it.
    pub device_idle_w: f64,
}

impl Default for PowerConfig {
    fn default() -> Self {
        PowerConfig { base_w: 40.0, core_active_w: 11.0, core_idle_w: 1.0, device_active_w: 12.0, device_idle_w: 4.0 }
    }
}

/// Longest any single software cost may be (a sanity bound that keeps time arithmetic far from overflow).
const MAX_COST_NS: u64 = 1_000_000_000;

impl HostConfig {
    /// Check what serde cannot; errors are `(key under host., what was expected)`.
    pub fn validate(&self) -> Result<(), (String, String)> {
        let err = |key: &str, what: String| Err((key.to_string(), what));
        if self.cores == 0 || self.cores > 1024 {
            return err("cores", "expected 1 to 1024 cores".into());
        }
        if self.dedicated_poll_core().is_some() && self.cores < 2 {
            return err("completion", "\"dedcore\" takes a core for polling: expected host.cores of 2 or more".into());
        }
        if self.cpu.remote_completion_lines > MAX_REMOTE_COMPLETION_LINES {
            let what = format!(
                "expected 0 to {MAX_REMOTE_COMPLETION_LINES} lines, found {}",
                self.cpu.remote_completion_lines
            );
            return err("cpu.remote_completion_lines", what);
        }
        if self.queue_pairs > crate::config::scenario::MAX_QUEUE_PAIRS {
            return err("queue_pairs", "expected 0 (one per core) to 65535 (NVMe's limit)".into());
        }
        if !self.nvme.irq_cpus.trim().is_empty() {
            if let Err(what) = crate::config::scenario::parse_cpu_list(&self.nvme.irq_cpus, self.cores) {
                return err("nvme.irq_cpus", what);
            }
        }
        for (drive, list) in self.nvme.irq_cpus_by_drive.iter().enumerate() {
            if !list.trim().is_empty() {
                if let Err(what) = crate::config::scenario::parse_cpu_list(list, self.cores) {
                    return err("nvme.irq_cpus_by_drive", format!("entry {drive} (nvme{drive}): {what}"));
                }
            }
        }
        let c = &self.cpu;
        if !(c.speed.is_finite() && (MIN_CPU_SPEED..=MAX_CPU_SPEED).contains(&c.speed)) {
            let what = format!(
                "expected a factor from {MIN_CPU_SPEED} to {MAX_CPU_SPEED} (the cores' speed relative to the \
                 reference machine, 1.0), found {}",
                c.speed
            );
            return err("cpu.speed", what);
        }
        let b = &self.block;
        let n = &self.nvme;
        for (key, value) in [
            ("cpu.syscall_entry_ns", c.syscall_entry_ns.0),
            ("cpu.syscall_exit_ns", c.syscall_exit_ns.0),
            ("cpu.fs_submit_ns", c.fs_submit_ns.0),
            ("cpu.reap_ns", c.reap_ns.0),
            ("cpu.context_switch_ns", c.context_switch_ns.0),
            ("cpu.cache_refill_line_ns", c.cache_refill_line_ns.0),
            ("cpu.wakeup_ns", c.wakeup_ns.0),
            ("cpu.idle_exit_ns", c.idle_exit_ns.0),
            ("cpu.poll_loop_ns", c.poll_loop_ns.0),
            ("block.submit_ns", b.submit_ns.0),
            ("block.complete_ns", b.complete_ns.0),
            ("block.md_submit_ns", b.md_submit_ns.0),
            ("block.merge_check_ns", b.merge_check_ns.0),
            ("block.hazard_check_ns", b.hazard_check_ns.0),
            ("block.bfq_tree_node_ns", b.bfq_tree_node_ns.0),
            ("nvme.queue_rq_ns", n.queue_rq_ns.0),
            ("nvme.doorbell_ns", n.doorbell_ns.0),
            ("nvme.irq_delivery_ns", n.irq_delivery_ns.0),
            ("nvme.isr_ns", n.isr_ns.0),
            ("nvme.cqe_ns", n.cqe_ns.0),
            ("nvme.coalesce_time_ns", n.coalesce_time_ns.0),
            ("fs.page_copy_ns", self.fs.page_copy_ns.0),
            ("fs.commit_cpu_ns", self.fs.commit_cpu_ns.0),
            ("fs.page_alloc_ns", self.fs.page_alloc_ns.0),
            ("nvme.iommu_map_ns", n.iommu_map_ns.0),
            ("nvme.iommu_unmap_ns", n.iommu_unmap_ns.0),
            ("cpu.cache_line_transfer_ns", c.cache_line_transfer_ns.0),
            ("cpu.cache_line_transfer_across_ns", c.cache_line_transfer_across_ns.0),
        ]
        .into_iter()
        .chain(offload::cost_keys(&self.xler, &self.dedcore))
        {
            if value > MAX_COST_NS {
                return err(key, format!("expected at most 1 s, found {value} ns"));
            }
        }
        for (key, value) in [
            ("cpu.tick_ns", c.tick_ns.0),
            ("cpu.sched_latency_ns", c.sched_latency_ns.0),
            ("cpu.min_granularity_ns", c.min_granularity_ns.0),
            ("cpu.wakeup_granularity_ns", c.wakeup_granularity_ns.0),
            ("cpu.base_slice_ns", c.base_slice_ns.0),
        ] {
            if !(1_000..=10 * MAX_COST_NS).contains(&value) {
                return err(key, format!("expected 1 us to 10 s, found {value} ns"));
            }
        }
        if c.cache_bytes.0 < 1 << 10 || c.cache_bytes.0 > 1 << 40 {
            return err("cpu.cache_bytes", format!("expected 1 KiB to 1 TiB, found {} bytes", c.cache_bytes.0));
        }
        if c.task_footprint_bytes.0 > c.cache_bytes.0 {
            return err(
                "cpu.task_footprint_bytes",
                format!(
                    "expected at most cpu.cache_bytes ({} bytes), found {} bytes",
                    c.cache_bytes.0, c.task_footprint_bytes.0
                ),
            );
        }
        let f = &self.fs;
        if f.memory_bytes.0 < 1 << 20 || f.memory_bytes.0 > 1 << 50 {
            return err("fs.memory_bytes", format!("expected 1 MiB to 1 PiB, found {} bytes", f.memory_bytes.0));
        }
        if f.dirty_background_ratio == 0 || f.dirty_ratio > 100 || f.dirty_background_ratio >= f.dirty_ratio {
            return err(
                "fs.dirty_background_ratio",
                format!(
                    "expected 1 <= dirty_background_ratio < dirty_ratio <= 100, found {} and {}",
                    f.dirty_background_ratio, f.dirty_ratio
                ),
            );
        }
        for (key, value) in [
            ("fs.dirty_expire_centisecs", f.dirty_expire_centisecs),
            ("fs.dirty_writeback_centisecs", f.dirty_writeback_centisecs),
        ] {
            if value == 0 || value > 360_000 {
                return err(key, format!("expected 1 to 360000 centiseconds (an hour), found {value}"));
            }
        }
        if b.nr_requests > 65_535 {
            return err("block.nr_requests", "expected 0 (Linux's default) to 65535".into());
        }
        if b.max_sectors_kb < 4 || b.max_sectors_kb > 1 << 20 || !b.max_sectors_kb.is_multiple_of(4) {
            return err("block.max_sectors_kb", "expected a multiple of 4 from 4 to 1048576 (KiB)".into());
        }
        let split_kb = b.noncritical_max_sectors_kb;
        if split_kb != 0 && (split_kb < 4 || split_kb > b.max_sectors_kb || !split_kb.is_multiple_of(4)) {
            return err(
                "block.noncritical_max_sectors_kb",
                "expected 0 (same as max_sectors_kb) or a multiple of 4 from 4 to max_sectors_kb (KiB)".into(),
            );
        }
        for (key, value) in [
            ("block.ld_depth", b.ld_depth),
            ("block.ld_sync_batch", b.ld_sync_batch),
            ("block.ld_async_batch", b.ld_async_batch),
        ] {
            if !(1..=65_535).contains(&value) {
                return err(key, format!("expected 1 to 65535 requests, found {value}"));
            }
        }
        // bfq's sysfs store clamps these to [0, INT_MAX] and [1, INT_MAX]; here they are errors.
        if b.bfq_back_seek_max > i32::MAX as u32 {
            return err(
                "block.bfq_back_seek_max",
                format!("expected 0 to 2147483647 (KiB), found {}", b.bfq_back_seek_max),
            );
        }
        if !(1..=i32::MAX as u32).contains(&b.bfq_back_seek_penalty) {
            return err(
                "block.bfq_back_seek_penalty",
                format!("expected 1 to 2147483647, found {}", b.bfq_back_seek_penalty),
            );
        }
        if n.coalesce_count > 256 {
            return err("nvme.coalesce_count", "expected 0 to 256 completions (NVMe's aggregation threshold)".into());
        }
        let p = &self.power;
        for (key, value) in [
            ("power.base_w", p.base_w),
            ("power.core_active_w", p.core_active_w),
            ("power.core_idle_w", p.core_idle_w),
            ("power.device_active_w", p.device_active_w),
            ("power.device_idle_w", p.device_idle_w),
        ] {
            if !(value.is_finite() && (0.0..=10_000.0).contains(&value)) {
                return err(key, format!("expected watts from 0 to 10000, found {value}"));
            }
        }
        Ok(())
    }
}

impl HostConfig {
    /// DedCore's polling core (the last), which no task may run on; `None` unless `completion = "dedcore"`.
    pub fn dedicated_poll_core(&self) -> Option<u32> {
        (self.completion == "dedcore").then(|| self.cores.saturating_sub(1))
    }

    /// Cores the CPU scheduler may put tasks on: all, or all but DedCore's polling core.
    pub fn task_cores(&self) -> u32 {
        self.dedicated_poll_core().unwrap_or(self.cores)
    }

    /// Every key of `[host]` as a dotted path under `host.` (e.g. `host.cpu.tick_ns`), from the defaults.
    pub fn keys() -> Vec<String> {
        fn walk(prefix: &str, table: &toml::Table, out: &mut Vec<String>) {
            for (key, value) in table {
                let path = format!("{prefix}.{key}");
                match value {
                    toml::Value::Table(t) => walk(&path, t, out),
                    _ => out.push(path),
                }
            }
        }
        let table = toml::Table::try_from(HostConfig::default()).expect("the host defaults serialize");
        let mut out = Vec::new();
        walk("host", &table, &mut out);
        out
    }
}
