//! The device part of a scenario: every parameter of the SSD model, filled from a preset and overridable.

use serde::{Deserialize, Serialize};

use super::units::{Bytes, Nanos};
use crate::util::keyword::keyword_serde;

/// Largest weighted-round-robin weight: the NVMe Arbitration feature holds each weight in 8 bits, 0's based.
pub const MAX_WRR_WEIGHT: u32 = 256;
/// Most blocks per plane `device.ftl.precondition_timed_writes` may ask for: its cost grows with it (each
/// block per plane is `planes x pages_per_block` programs), its effect settles after a few dozen.
pub const MAX_TIMED_PRECONDITION_BLOCKS: u32 = 1024;
/// Most writes `device.ftl.precondition_timed_depth` may keep in flight (each is one transaction in memory).
pub const MAX_TIMED_PRECONDITION_DEPTH: u32 = 1 << 16;

/// Everything the SSD model needs. Every field comes from the preset unless the scenario overrides it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceConfig {
    /// Name of the preset the values started from.
    pub preset: String,
    /// How many drives of this configuration the host has (`nvme0` to `nvme{count-1}`: `config/drives.rs`).
    #[serde(default = "one_drive", skip_serializing_if = "is_one_drive")]
    pub count: u32,
    pub host_interface: HostInterfaceConfig,
    pub controller: ControllerConfig,
    pub cache: CacheConfig,
    pub ftl: FtlConfig,
    pub tsu: TsuConfig,
    pub flash: FlashConfig,
    pub slc: SlcConfig,
    pub variability: VariabilityConfig,
}

fn one_drive() -> u32 {
    1
}

fn is_one_drive(count: &u32) -> bool {
    *count == 1
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostInterfaceConfig {
    pub queue_depth: u32,
    /// Most commands of one submission queue the controller holds at once (fetched, completion not yet
    /// posted); a queue at the bound is not fetched from until one of its commands completes, so what is
    /// beyond it waits in the queue, in host memory (MQSim's `Queue_Fetch_Size`). 0: no bound but the
    /// queue's entries.
    pub max_fetched_per_queue: u32,
    pub arbiter: String,
    pub arbitration_burst: u32,
    /// Weighted round robin: commands the High class may fetch per round (NVMe HPW + 1).
    pub wrr_high_weight: u32,
    /// Weighted round robin: commands the Medium class may fetch per round (NVMe MPW + 1).
    pub wrr_medium_weight: u32,
    /// Weighted round robin: commands the Low class may fetch per round (NVMe LPW + 1).
    pub wrr_low_weight: u32,
    /// `flashshare`: a throughput submission queue holding this many commands is drained before the
    /// latency-critical queues (FlashShare's starvation guard, OSDI'18 §3.3: 8).
    pub flashshare_drain_entries: u32,
    /// `flashshare`: ... or once its oldest command has waited this long (200 us).
    pub flashshare_drain_wait_ns: Nanos,
    pub doorbell_ns: Nanos,
    pub command_fetch_ns: Nanos,
    pub command_process_ns: Nanos,
    pub pcie_lanes: u32,
    /// Raw rate of one lane after line encoding (bytes/s): PCIe 3.0 8 GT/s x 128b/130b = 0.985e9.
    pub pcie_lane_bytes_per_s: f64,
    /// Largest data payload of one TLP (bytes; the platform's Max_Payload_Size).
    pub pcie_max_payload_bytes: u32,
    /// Bytes each TLP adds on the wire around its payload (framing, sequence number, header, LCRC).
    pub pcie_tlp_overhead_bytes: u32,
    /// Share of the link's time taken by data-link packets (ACK/NAK, flow-control updates).
    pub pcie_dllp_overhead: f64,
    /// The controller's read data path (media -> host), bytes/s: reads never leave faster, whatever the link.
    pub max_read_bytes_per_s: f64,
    /// The controller's write data path (host -> media), bytes/s.
    pub max_write_bytes_per_s: f64,
    /// Read commands the controller's read path starts per second (0: no limit beyond `command_process_ns`).
    pub max_read_iops: f64,
    /// Write commands the controller's write path starts per second (0: no limit beyond `command_process_ns`).
    pub max_write_iops: f64,
    pub completion_ns: Nanos,
    /// How a direction of the PCIe link serves the transfers crossing it at once: shared TLP by TLP
    /// (`processor-sharing`) or one whole message after another (`fifo`, MQSim's `PCIe_Link`).
    pub pcie_link_service: LinkService,
}

/// `[device.controller]`: the controller's front end, the command slots that hold what it has fetched and
/// the firmware cores that process each fetched command (`host_interface.command_process_ns` on one core).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerConfig {
    /// Commands the controller holds at once, over all submission queues: a command takes a slot when it is
    /// fetched and frees it when its completion is posted. With every slot held (for instance by writes
    /// waiting for write-buffer space), fetching stops and the commands behind, reads too, wait in their
    /// queues. 0: no bound but the queues' (and `host_interface.max_fetched_per_queue`).
    pub command_slots: u32,
    /// Firmware cores fetching and processing commands in parallel, each taking
    /// `host_interface.command_process_ns` per command.
    pub firmware_cores: u32,
}

/// How a direction of the PCIe link serves concurrent transfers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", remote = "Self")]
pub enum LinkService {
    /// Transfers interleave a TLP at a time: each of `n` in flight moves at `1/n` of the rate (real links).
    ProcessorSharing,
    /// Whole messages in arrival order, commands and completions included (MQSim's `PCIe_Link`).
    Fifo,
}

/// Which chip of a channel gets the bus next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", remote = "Self")]
pub enum ChannelArbitration {
    /// A die starts as soon as it is idle; its transfers take the bus in the order they are requested.
    Fcfs,
    /// A die starts only while its channel is idle (command cycles hold the bus); when the bus frees, the
    /// chips waiting for it are offered it in turn, starting after the last one served (MQSim's TSU).
    RoundRobin,
}

/// `[device.variability]`: where a real drive's service times vary, so a run at QD1 has a tail of its own.
/// Every draw comes from one seeded stream; `enabled = false` makes every time its mean (closed-form tests).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariabilityConfig {
    pub enabled: bool,
    /// Coefficient of variation of the controller's per-command processing time (gamma distributed).
    pub controller_cv: f64,
    /// Chance that a command meets a background firmware stall (media management, logging) in the controller.
    pub firmware_stall_probability: f64,
    /// Mean length of such a stall (exponentially distributed, ns).
    pub firmware_stall_mean_ns: Nanos,
    /// Coefficient of variation of a media read's array time (gamma distributed).
    pub read_cv: f64,
    /// Coefficient of variation of a program's array time (gamma distributed).
    pub program_cv: f64,
    /// Chance that a page read fails ECC and senses again (read retry, each retry another `read_ns`).
    pub read_retry_probability: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    pub enabled: bool,
    pub capacity_bytes: Bytes,
    pub dram_access_ns: Nanos,
    pub cache_reads: bool,
    /// Who may use the write buffer's space: every flow (`shared`) or each flow an equal part (`per-flow`).
    pub write_buffer_sharing: BufferSharing,
    /// Buffered pages each partition may have on their way to flash (destaged, not yet programmed), per plane
    /// of the drive; writes beyond it wait in front of the cache. 0: only the buffer's size bounds them.
    /// MQSim: 1 (its back-pressure depth is planes x page).
    pub destage_limit_pages_per_plane: u32,
    /// The drive keeps enough energy (capacitors) to program its write buffer after a power loss, so
    /// buffered data is already durable: a Flush completes once the controller has processed it and a FUA
    /// write completes like any other. False: the buffer is volatile, a Flush waits for the programs of the
    /// writes completed before it, and a FUA write for its own programs.
    pub power_loss_protection: bool,
    /// Which clean pages the read cache keeps: `shared` (one LRU for every class) or `flashshare`
    /// (FlashShare's two partitions of ways, re-divided each epoch, with ghost-cache read-ahead).
    pub read_policy: String,
    /// `flashshare`: accesses (pages looked up by reads plus pages written, both classes) per epoch.
    pub flashshare_epoch_accesses: u32,
    /// `flashshare`: the read-ahead sizes its ghost caches try (pages after a read that missed), ascending;
    /// each partition starts with the first.
    pub flashshare_prefetch_pages: Vec<u32>,
}

/// How the write buffer's space is divided among flows (MQSim's `Data_Cache_Sharing_Mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", remote = "Self")]
pub enum BufferSharing {
    /// One pool; writes that find it full wait in one arrival-order queue, whatever their flow.
    Shared,
    /// Each of the run's flows owns `capacity / flows` of it and waits only for its own programs
    /// (MQSim's EQUAL_PARTITIONING).
    PerFlow,
}

/// FLIN stage 3: where a transaction's `T_wait` starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", remote = "Self")]
pub enum Stage3Wait {
    /// Queue wait in full: from its request's arrival at the device (`Transaction::arrived_at`; for work no
    /// request waits for, its arrival in its stage-1 queue).
    Queue,
    /// When stage 2 moved it into the read or write slot.
    Slot,
}

/// How logical pages find their physical home.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", remote = "Self")]
pub enum MappingKind {
    /// Page-level map with out-of-place writes and garbage collection (NAND flash).
    Page,
    /// Static striped placement with in-place writes: no map, no erase, no GC (3D XPoint).
    InPlace,
}

/// The state the drive is put in before the run starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", remote = "Self")]
pub enum Precondition {
    /// Fresh drive: nothing mapped, every block free.
    None,
    /// `precondition_fill` of the logical space written once in order: striped, blocks fully valid.
    Sequential,
    /// Filled, then randomly overwritten to garbage-collection steady state: logical pages scattered and
    /// blocks holding a steady-state mix of valid and stale pages; GC has caught up (each plane at its GC
    /// threshold), as after writing at a pace GC keeps up with.
    Random,
    /// As `Random`, but GC is a block behind on every plane (one block under its threshold), as right after
    /// writing faster than GC: GC starts with each plane's first host write.
    RandomGcDue,
    /// MQSim's steady state for a streaming (sequential) writer: logical pages striped in order as
    /// `sequential`, but every used block either fully valid or fully stale and the free pool at the GC
    /// threshold, so GC runs from the start and its victims are mostly stale blocks (erases, few moves).
    Streaming,
}

keyword_serde!(BufferSharing, Stage3Wait, ReadPriority, MappingKind, Precondition, LinkService, ChannelArbitration);

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FtlConfig {
    pub mapping: MappingKind,
    pub overprovisioning: f64,
    pub gc_threshold: f64,
    pub gc_hard_threshold: f64,
    pub gc_policy: String,
    pub gc_d_choices: u32,
    /// Pages of a plane's GC job read and not yet written (held in the controller's GC buffer); 0: no
    /// bound, every valid page of the victim is read at once (MQSim).
    pub gc_read_ahead: u32,
    pub ideal_map: bool,
    pub cmt_capacity_bytes: Bytes,
    pub cmt_entry_bytes: u32,
    pub precondition: Precondition,
    pub precondition_fill: f64,
    /// Blocks' worth of pages per plane (host and GC programs together) the drive writes, timed, before time
    /// 0: uniform random overwrites of its data (`device/timed_precondition.rs`); 0: none.
    pub precondition_timed_writes: u32,
    /// Writes the timed preconditioning keeps in flight (its queue depth).
    pub precondition_timed_depth: u32,
    /// Share of the write buffer's space holding earlier writes' pages at time 0, their programs queued
    /// (`device/buffer_preload.rs`): the state a writing job leaves the next one. 0: an empty buffer.
    pub precondition_buffer_fill: f64,
    /// The SLC cache's region starts exhausted on every plane (host writes go to native blocks until the
    /// drive idles), with no SLC block in use: the state a drive written without a pause for longer than its
    /// cache lasts is left in. Ignored without an SLC cache.
    pub precondition_slc_exhausted: bool,
    /// The FTL's logical page, the unit it maps and allocates: a power of two dividing `flash.page_bytes`
    /// (a flash page then holds several units, programmed together). 0: the flash page.
    pub mapping_unit_bytes: Bytes,
    /// With mapping units smaller than the page: how long a page's first units wait for the rest before the
    /// firmware pads the page and programs what it has.
    pub page_fill_timeout_ns: Nanos,
}

/// `[device.tsu]`: the transaction scheduler and its parameters (each key is documented, with its unit, in
/// docs/scenarios.md; the preset gives the default).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TsuConfig {
    /// Policy name: one of `device::tsu::scheduler_names()`.
    pub scheduler: String,
    /// Batch transactions of the same operation on distinct planes of a die into one operation.
    pub multiplane: bool,
    /// A multi-plane operation joins only transactions at the same page index within their blocks (MQSim
    /// compares `PageID`; the blocks may differ).
    pub multiplane_same_page: bool,
    /// `sprinkler-fairness`: length of a budget epoch (ns).
    pub budget_epoch_ns: Nanos,
    /// `sprinkler-fairness`: die time each flow may use per epoch (ns); 0 shares the dies' time of an epoch
    /// equally among the flows seen so far.
    pub flow_budget_ns: Nanos,
    /// `flin`: epoch over which flow intensity is measured (ns).
    pub flin_epoch_ns: Nanos,
    /// `flin`: a flow that read fewer bytes than this in the last epoch (spread over all dies) is
    /// low-intensity for reads.
    pub flin_alpha_read_bytes: Bytes,
    /// `flin`: the same threshold for writes.
    pub flin_alpha_write_bytes: Bytes,
    /// `flin`: fairness (min / max estimated slowdown in a queue) below which the most slowed-down
    /// high-intensity flow jumps ahead of the other high-intensity flows.
    pub flin_fairness_threshold: f64,
    /// `flin`: stage 1, fairness-aware queue insertion (off: FIFO insertion).
    pub flin_stage1: bool,
    /// `flin`: stage 2, priority-aware weighted round robin over the NVMe classes (off: plain round robin).
    pub flin_stage2: bool,
    /// `flin`: stage 3, wait-balancing choice between the read and write slot (off: reads first).
    pub flin_stage3: bool,
    /// `flin`: where stage 3's `T_wait` starts: at the request's arrival at the device or on entering the slot.
    pub flin_stage3_wait: Stage3Wait,
    /// `fifo`: whether host and mapping reads go before the programs and erases queued on their die.
    pub read_priority: ReadPriority,
    /// `fifo` with `read_priority = "bounded"`: the most times later reads may pass the program or erase
    /// waiting first on a die before it goes.
    pub read_bypass_limit: u32,
}

/// `[device.tsu] read_priority`: how the `fifo` scheduler orders reads against writes on a die.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", remote = "Self")]
pub enum ReadPriority {
    /// Reads first, always (MQSim's TSU): a program or erase waits while any read is queued on its die.
    Always,
    /// Reads first, but a program or erase waiting first on its die is passed by later reads at most
    /// `read_bypass_limit` times.
    Bounded,
    /// Arrival order: a read waits for the programs and erases queued on its die before it.
    Fifo,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlashConfig {
    pub channels: u32,
    pub chips_per_channel: u32,
    pub dies_per_chip: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    pub page_bytes: Bytes,
    pub read_ns: Nanos,
    pub program_ns: Nanos,
    pub erase_ns: Nanos,
    pub command_ns: Nanos,
    pub channel_mts: f64,
    pub channel_width_bytes: u32,
    /// Back-to-back programs on a die use cache programs (ONFI's PROGRAM PAGE CACHE, 80h-15h): a program
    /// that follows a program on its die has its data-in overlapped with the one before (`device/cache_program.rs`).
    pub cache_program: bool,
    /// A host or mapping read queued on a die that is programming may suspend the program.
    pub program_suspend: bool,
    /// A host or mapping read queued on a die that is erasing may suspend the erase.
    pub erase_suspend: bool,
    /// Time from the suspend command until the die can start a read (ns).
    pub suspend_ns: Nanos,
    /// Time added to a suspended operation's remainder when it resumes (ns).
    pub resume_ns: Nanos,
    /// A program is suspended only if at least this much of it is left (ns).
    pub program_suspend_min_remaining_ns: Nanos,
    /// An erase is suspended only if at least this much of it is left (ns).
    pub erase_suspend_min_remaining_ns: Nanos,
    /// Read operations one suspension serves before the operation resumes.
    pub suspend_read_batches: u32,
    /// Times one program or erase may be suspended.
    pub suspend_max_per_op: u32,
    /// A chip runs one die's operation at a time (its other dies wait): MQSim's TSU issues only to an idle
    /// chip, never a multi-die command. Off: dies of a chip interleave.
    pub one_die_per_chip: bool,
    /// A freed chip, or a chip offered its idle channel, goes first to one of its dies with reads queued,
    /// then to the others in turn (MQSim's `process_chip_requests` serves a chip's reads before its writes).
    /// Off: the dies' turn alone decides. Read by the `fifo` scheduler.
    pub chip_reads_first: bool,
    /// Who gets a channel's bus next: `fcfs` or `round-robin` over the channel's chips (MQSim).
    pub channel_arbitration: ChannelArbitration,
}

/// `[device.slc]`: an SLC write cache inside TLC (or MLC/QLC) flash, as consumer drives have (Samsung's
/// Intelligent TurboWrite): blocks written in SLC mode hold `pages_per_block / bits_per_cell` pages and program
/// and read faster; host writes go there while the region has room, and folding later moves their data into
/// native-mode blocks (`device/ftl/slc.rs`, docs/model.md "SLC cache").
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlcConfig {
    pub enabled: bool,
    /// Bits a cell holds in the flash's native mode (3: TLC): an SLC-mode block holds this many times fewer
    /// pages.
    pub bits_per_cell: u32,
    /// The region's static part: SLC capacity the drive keeps whatever the fill (taken from over-provisioning).
    pub static_bytes: Bytes,
    /// The most SLC capacity the dynamic part adds on an empty drive; it shrinks as the drive fills (it may use
    /// at most the free user space, in SLC mode: one SLC byte per `bits_per_cell` free bytes).
    pub dynamic_max_bytes: Bytes,
    /// Array read time of a page in an SLC-mode block (ns).
    pub read_ns: Nanos,
    /// Program time of a page in an SLC-mode block (ns).
    pub program_ns: Nanos,
    /// Folding starts on a plane once its SLC blocks reach this share of its part of the region (1.0: when the
    /// region is full).
    pub fold_threshold: f64,
    /// With no command in the drive for this long, the drive folds every full SLC block and host writes go to
    /// SLC again (ns).
    pub fold_idle_ns: Nanos,
}

impl DeviceConfig {
    /// Bytes of the FTL's mapping unit (`ftl.mapping_unit_bytes`, 0: the flash page).
    pub fn mapping_unit_bytes(&self) -> u64 {
        match self.ftl.mapping_unit_bytes.0 {
            0 => self.flash.page_bytes.0,
            unit => unit,
        }
    }

    /// Mapping units per flash page (1 when the unit is the page).
    pub fn units_per_page(&self) -> u32 {
        (self.flash.page_bytes.0 / self.mapping_unit_bytes().max(1)).max(1) as u32
    }

    /// Mapping units in the flash array, as the FTL numbers them (`device::flash::Geometry::of(..).pages()`).
    pub fn physical_units(&self) -> u64 {
        let f = &self.flash;
        let planes = f.channels * f.chips_per_channel * f.dies_per_chip * f.planes_per_die;
        planes as u64 * f.blocks_per_plane as u64 * (f.pages_per_block * self.units_per_page()) as u64
    }

    /// Whether `ftl.mapping_unit_bytes` is 0 (the flash page) or a power of two of at least 512 B that divides
    /// the page into at most 64 units.
    pub fn mapping_unit_ok(&self) -> bool {
        let (unit, page) = (self.ftl.mapping_unit_bytes.0, self.flash.page_bytes.0);
        unit == 0
            || (unit >= 512 && unit.is_power_of_two() && unit <= page && page.is_multiple_of(unit) && page / unit <= 64)
    }

    /// Flash pages in the array, exactly (a bad geometry's product may pass 64 bits).
    fn flash_pages_exact(&self) -> u128 {
        let f = &self.flash;
        [f.channels, f.chips_per_channel, f.dies_per_chip, f.planes_per_die, f.blocks_per_plane, f.pages_per_block]
            .iter()
            .map(|&n| n as u128)
            .product()
    }

    /// Whether the array's mapping units are numbered below 2^32, as the model's page numbers must be (with a
    /// bad mapping unit, one unit per page).
    pub fn units_fit_in_32_bits(&self) -> bool {
        let units_per_page = if self.mapping_unit_ok() { self.units_per_page() as u128 } else { 1 };
        self.flash_pages_exact() * units_per_page < u32::MAX as u128 - 1
    }

    /// Number of logical pages the host can address.
    pub fn logical_pages(&self) -> u64 {
        let physical = self.physical_units();
        match self.ftl.mapping {
            MappingKind::InPlace => physical,
            MappingKind::Page => (physical as f64 * (1.0 - self.ftl.overprovisioning)).floor() as u64,
        }
    }

    /// Capacity the host sees, in bytes.
    pub fn logical_capacity_bytes(&self) -> u64 {
        self.logical_pages() * self.mapping_unit_bytes()
    }

    /// Check that the values describe a device that can exist. Each message names the key.
    pub fn validate(&self) -> Result<(), Vec<(String, String)>> {
        let mut errors: Vec<(String, String)> = Vec::new();
        let mut check = |ok: bool, key: &str, what: &str| {
            if !ok {
                errors.push((format!("device.{key}"), what.to_string()));
            }
        };
        if let Err(what) = super::drives::check_count(self.count) {
            check(false, "count", &what);
        }
        let f = &self.flash;
        for (key, v) in [
            ("flash.channels", f.channels),
            ("flash.chips_per_channel", f.chips_per_channel),
            ("flash.dies_per_chip", f.dies_per_chip),
            ("flash.planes_per_die", f.planes_per_die),
            ("flash.blocks_per_plane", f.blocks_per_plane),
            ("flash.pages_per_block", f.pages_per_block),
            ("flash.channel_width_bytes", f.channel_width_bytes),
            ("host_interface.queue_depth", self.host_interface.queue_depth),
            ("host_interface.arbitration_burst", self.host_interface.arbitration_burst),
            ("host_interface.flashshare_drain_entries", self.host_interface.flashshare_drain_entries),
            ("host_interface.pcie_lanes", self.host_interface.pcie_lanes),
            ("controller.firmware_cores", self.controller.firmware_cores),
        ] {
            check(v >= 1, key, "expected a whole number >= 1");
        }
        check(
            (1..=1024).contains(&f.suspend_read_batches),
            "flash.suspend_read_batches",
            "expected 1 to 1024 read operations per suspension",
        );
        check(
            (1..=1024).contains(&f.suspend_max_per_op),
            "flash.suspend_max_per_op",
            "expected 1 to 1024 suspensions per operation",
        );
        check(
            self.host_interface.max_fetched_per_queue <= 1 << 16,
            "host_interface.max_fetched_per_queue",
            "expected 0 (no bound but the queue's entries) or at most 65536 commands (an NVMe queue's most entries)",
        );
        check(
            self.controller.command_slots <= 1 << 20,
            "controller.command_slots",
            "expected 0 (no bound) or at most 1048576 commands",
        );
        check(self.controller.firmware_cores <= 64, "controller.firmware_cores", "expected 1 to 64 cores");
        check(self.tsu.read_bypass_limit <= 1 << 16, "tsu.read_bypass_limit", "expected 0 to 65536 reads");
        check(f.planes_per_die <= 64, "flash.planes_per_die", "expected at most 64 planes per die");
        check(
            self.cache.destage_limit_pages_per_plane <= 1 << 16,
            "cache.destage_limit_pages_per_plane",
            "expected 0 (no limit beyond the buffer) or at most 65536 pages per plane",
        );
        let cache = &self.cache;
        check(
            (16..=1 << 26).contains(&cache.flashshare_epoch_accesses),
            "cache.flashshare_epoch_accesses",
            "expected 16 to 67108864 page accesses per epoch",
        );
        let sizes = &cache.flashshare_prefetch_pages;
        check(
            (1..=8).contains(&sizes.len()) && sizes.windows(2).all(|w| w[0] < w[1]) && sizes.iter().all(|&p| p <= 1024),
            "cache.flashshare_prefetch_pages",
            "expected 1 to 8 read-ahead sizes in ascending order, each 0 to 1024 pages",
        );
        if (cache.read_policy == "flashshare" || cache.read_policy == "uniform")
            && cache.enabled
            && cache.capacity_bytes.0 >= f.page_bytes.0
        {
            check(
                cache.capacity_bytes.0 / f.page_bytes.0.max(1) >= 2,
                "cache.capacity_bytes",
                "the flashshare read cache needs at least 2 pages (one way per partition)",
            );
        }
        check(f.pages_per_block <= 65_535, "flash.pages_per_block", "expected at most 65535 pages per block");
        check(
            f.page_bytes.0 >= 512 && f.page_bytes.0.is_power_of_two() && f.page_bytes.0 <= 1 << 20,
            "flash.page_bytes",
            "expected a power of two between 512 B and 1 MiB",
        );
        let unit_ok = self.mapping_unit_ok();
        check(
            unit_ok,
            "ftl.mapping_unit_bytes",
            "expected 0 (the flash page) or a power of two of at least 512 B dividing flash.page_bytes, at most 64 \
             units per page",
        );
        check(
            self.ftl.page_fill_timeout_ns.0 >= 1 && self.ftl.page_fill_timeout_ns.0 <= 1_000_000_000,
            "ftl.page_fill_timeout_ns",
            "expected a time from 1 ns to 1 s",
        );
        let units_per_page = if unit_ok { self.units_per_page() as u128 } else { 1 };
        let physical_pages = self.flash_pages_exact();
        check(
            physical_pages < u32::MAX as u128 - 1,
            "flash",
            "impossible geometry: the device has 2^32 or more physical pages (the model indexes pages with 32 bits)",
        );
        check(
            physical_pages >= u32::MAX as u128 - 1 || physical_pages * units_per_page < u32::MAX as u128 - 1,
            "ftl.mapping_unit_bytes",
            "impossible geometry: the device has 2^32 or more mapping units (the model indexes them with 32 bits)",
        );
        check(
            f.pages_per_block as u128 * units_per_page <= 65_535,
            "ftl.mapping_unit_bytes",
            "expected at most 65535 mapping units per block (pages_per_block x units per page)",
        );
        check(
            (64..=4096).contains(&self.host_interface.pcie_max_payload_bytes)
                && self.host_interface.pcie_max_payload_bytes.is_power_of_two(),
            "host_interface.pcie_max_payload_bytes",
            "expected a power of two from 64 to 4096 bytes (PCIe Max_Payload_Size)",
        );
        check(
            self.host_interface.pcie_tlp_overhead_bytes <= 64,
            "host_interface.pcie_tlp_overhead_bytes",
            "expected at most 64 bytes of framing and header per TLP",
        );
        check(
            (0.0..0.5).contains(&self.host_interface.pcie_dllp_overhead),
            "host_interface.pcie_dllp_overhead",
            "expected a fraction in [0, 0.5)",
        );
        for (key, rate) in [
            ("host_interface.max_read_bytes_per_s", self.host_interface.max_read_bytes_per_s),
            ("host_interface.max_write_bytes_per_s", self.host_interface.max_write_bytes_per_s),
        ] {
            check((1.0e6..=1.0e12).contains(&rate), key, "expected a rate from 1e6 to 1e12 bytes/s");
        }
        for (key, rate) in [
            ("host_interface.max_read_iops", self.host_interface.max_read_iops),
            ("host_interface.max_write_iops", self.host_interface.max_write_iops),
        ] {
            check(
                rate == 0.0 || (1.0..=1.0e9).contains(&rate),
                key,
                "expected 0 (no limit) or a rate from 1 to 1e9 commands/s",
            );
        }
        let v = &self.variability;
        for (key, cv) in [
            ("variability.controller_cv", v.controller_cv),
            ("variability.read_cv", v.read_cv),
            ("variability.program_cv", v.program_cv),
        ] {
            check((0.0..=2.0).contains(&cv), key, "expected a coefficient of variation from 0 to 2");
        }
        for (key, p) in [
            ("variability.firmware_stall_probability", v.firmware_stall_probability),
            ("variability.read_retry_probability", v.read_retry_probability),
        ] {
            check((0.0..=0.5).contains(&p), key, "expected a probability from 0 to 0.5");
        }
        check(
            v.firmware_stall_mean_ns.0 <= crate::engine::SEC,
            "variability.firmware_stall_mean_ns",
            "expected a time of at most 1 s",
        );
        check((1.0..=1.0e6).contains(&f.channel_mts), "flash.channel_mts", "expected a rate from 1 to 1,000,000 MT/s");
        check(
            (1.0e6..=1.0e12).contains(&self.host_interface.pcie_lane_bytes_per_s),
            "host_interface.pcie_lane_bytes_per_s",
            "expected a rate from 1e6 to 1e12 bytes/s per lane",
        );
        check(self.host_interface.pcie_lanes <= 64, "host_interface.pcie_lanes", "expected at most 64 lanes");
        for (key, weight) in [
            ("host_interface.wrr_high_weight", self.host_interface.wrr_high_weight),
            ("host_interface.wrr_medium_weight", self.host_interface.wrr_medium_weight),
            ("host_interface.wrr_low_weight", self.host_interface.wrr_low_weight),
        ] {
            check(
                (1..=MAX_WRR_WEIGHT).contains(&weight),
                key,
                "expected a whole number of commands per round from 1 to 256 (NVMe's weights are 8-bit, 0's based)",
            );
        }
        // Every fixed time of the device must be a plausible hardware time (this also keeps sums far from
        // overflowing the ns clock).
        let hi = &self.host_interface;
        for (key, ns) in [
            ("host_interface.doorbell_ns", hi.doorbell_ns.0),
            ("host_interface.command_fetch_ns", hi.command_fetch_ns.0),
            ("host_interface.command_process_ns", hi.command_process_ns.0),
            ("host_interface.completion_ns", hi.completion_ns.0),
            ("cache.dram_access_ns", self.cache.dram_access_ns.0),
            ("flash.read_ns", f.read_ns.0),
            ("flash.program_ns", f.program_ns.0),
            ("flash.erase_ns", f.erase_ns.0),
            ("flash.command_ns", f.command_ns.0),
            ("flash.suspend_ns", f.suspend_ns.0),
            ("flash.resume_ns", f.resume_ns.0),
            ("flash.program_suspend_min_remaining_ns", f.program_suspend_min_remaining_ns.0),
            ("flash.erase_suspend_min_remaining_ns", f.erase_suspend_min_remaining_ns.0),
            ("slc.read_ns", self.slc.read_ns.0),
            ("slc.program_ns", self.slc.program_ns.0),
        ] {
            check(ns <= 10 * crate::engine::SEC, key, "expected a time of at most 10 s");
        }
        let tsu = &self.tsu;
        for (key, ns) in [("tsu.budget_epoch_ns", tsu.budget_epoch_ns.0), ("tsu.flin_epoch_ns", tsu.flin_epoch_ns.0)] {
            check(
                (crate::engine::US..=10 * crate::engine::SEC).contains(&ns),
                key,
                "expected an epoch from 1 us to 10 s",
            );
        }
        check(
            tsu.flow_budget_ns.0 <= 1_000 * crate::engine::SEC,
            "tsu.flow_budget_ns",
            "expected a budget of at most 1000 s (0: an equal share of the epoch)",
        );
        check(
            (0.0..=1.0).contains(&tsu.flin_fairness_threshold),
            "tsu.flin_fairness_threshold",
            "expected a fraction in [0, 1]",
        );
        let ftl = &self.ftl;
        check((0.0..0.9).contains(&ftl.overprovisioning), "ftl.overprovisioning", "expected a fraction in [0, 0.9)");
        check(ftl.gc_d_choices >= 1, "ftl.gc_d_choices", "expected a whole number >= 1");
        check((0.0..=1.0).contains(&ftl.precondition_fill), "ftl.precondition_fill", "expected a fraction in [0, 1]");
        check(
            ftl.precondition_timed_writes <= MAX_TIMED_PRECONDITION_BLOCKS,
            "ftl.precondition_timed_writes",
            &format!("expected a whole number of blocks per plane from 0 to {MAX_TIMED_PRECONDITION_BLOCKS}"),
        );
        check(
            (0.0..=1.0).contains(&ftl.precondition_buffer_fill),
            "ftl.precondition_buffer_fill",
            "expected a fraction in [0, 1]",
        );
        check(
            (1..=MAX_TIMED_PRECONDITION_DEPTH).contains(&ftl.precondition_timed_depth),
            "ftl.precondition_timed_depth",
            &format!("expected a whole number of writes from 1 to {MAX_TIMED_PRECONDITION_DEPTH}"),
        );
        if ftl.precondition_timed_writes > 0 {
            check(
                ftl.mapping == MappingKind::Page,
                "ftl.precondition_timed_writes",
                "timed preconditioning writes need page mapping (device.ftl.mapping = \"page\"): 0 otherwise",
            );
            check(
                ftl.precondition != Precondition::None && ftl.precondition_fill > 0.0,
                "ftl.precondition_timed_writes",
                "timed preconditioning overwrites the drive's data: it needs precondition other than \"none\" \
                 and precondition_fill above 0",
            );
        }
        check(ftl.cmt_entry_bytes >= 1, "ftl.cmt_entry_bytes", "expected a whole number >= 1");
        let slc = &self.slc;
        check(
            (1..=4).contains(&slc.bits_per_cell),
            "slc.bits_per_cell",
            "expected 1 (SLC) to 4 (QLC) bits per cell in the native mode",
        );
        check(
            slc.fold_threshold > 0.0 && slc.fold_threshold <= 1.0,
            "slc.fold_threshold",
            "expected a fraction in (0, 1] of the SLC region",
        );
        check(
            (crate::engine::US..=10 * crate::engine::SEC).contains(&slc.fold_idle_ns.0),
            "slc.fold_idle_ns",
            "expected a time from 1 us to 10 s",
        );
        if slc.enabled {
            check(
                ftl.mapping == MappingKind::Page,
                "slc.enabled",
                "an SLC cache needs page mapping (device.ftl.mapping = \"page\")",
            );
            check(
                slc.bits_per_cell >= 2,
                "slc.bits_per_cell",
                "an SLC cache needs flash that stores 2 or more bits per cell natively",
            );
            check(
                f.pages_per_block >= slc.bits_per_cell,
                "slc.bits_per_cell",
                "an SLC-mode block holds pages_per_block / bits_per_cell pages: expected at most pages_per_block",
            );
        }
        // Mapping units are numbered like pages: they too must stay below 2^32.
        // The simulator keeps a few bytes per block, per cache page and per cached map entry: bound them so
        // an extreme value is an error, not an out-of-memory abort.
        let blocks = physical_pages / f.pages_per_block.max(1) as u128;
        check(blocks <= 1 << 26, "flash.blocks_per_plane", "impossible geometry: more than 2^26 blocks in the drive");
        check(
            self.cache.capacity_bytes.0 / f.page_bytes.0.max(1) <= 1 << 25,
            "cache.capacity_bytes",
            "expected at most 2^25 cache pages (e.g. 64 GiB of 2 KiB pages)",
        );
        check(
            self.ftl.cmt_capacity_bytes.0 / self.ftl.cmt_entry_bytes.max(1) as u64 <= 1 << 27,
            "ftl.cmt_capacity_bytes",
            "expected at most 2^27 cached map entries",
        );
        if ftl.mapping == MappingKind::Page {
            check(
                ftl.overprovisioning > 0.0,
                "ftl.overprovisioning",
                "a page-mapped drive needs over-provisioning > 0 for garbage collection to make progress",
            );
            check(
                (0.0..0.5).contains(&ftl.gc_threshold) && ftl.gc_threshold > 0.0,
                "ftl.gc_threshold",
                "expected a fraction in (0, 0.5)",
            );
            check(
                ftl.gc_hard_threshold >= 0.0 && ftl.gc_hard_threshold <= ftl.gc_threshold,
                "ftl.gc_hard_threshold",
                "expected a fraction in [0, gc_threshold]",
            );
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}
