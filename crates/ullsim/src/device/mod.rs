//! The SSD: host interface -> DRAM cache -> FTL -> transaction scheduler -> flash, and back.
//!
//! `Device` owns the layers and moves commands between them; each layer keeps its own state. The device
//! talks to the rest of the simulation through three calls: `create_queue`, `ring_doorbell` (a command is in
//! a submission queue) and `handle` (its own events), which reports requests whose completion was posted.

mod assembly;
mod buffer_preload;
pub mod buffer_waiters;
pub mod cache;
mod cache_program;
pub mod check;
mod chip_offer;
mod collect;
mod durability;
pub mod flash;
pub mod ftl;
pub mod gc_cost;
pub mod hil;
mod read_path;
mod results;
mod slc;
mod start_gate;
pub mod suspend;
mod timed_precondition;
pub mod transaction;
pub mod tsu;
mod variability;

use std::collections::VecDeque;

use assembly::PageAssembly;

use crate::config::device::{DeviceConfig, MappingKind};
use crate::engine::{Clock, Scheduler, Time};
use crate::request::{Criticality, NvmePriority, Op, ReqId, RequestArena};
use rustc_hash::FxHashMap;

use buffer_waiters::BufferWaiters;
use cache::DataCache;
use durability::Durability;
use flash::{Backend, FlashOp, Geometry, Timing};
use ftl::{Ftl, MappingCache};
use gc_cost::GcCost;
use hil::{Direction, HostInterface, COMMAND_BYTES, COMPLETION_BYTES, MESSAGE_BYTES};
use results::ClassCounters;
pub use results::{
    ByClass, ClassResult, DeviceCounters, DeviceResults, QueueDepth, ReadCacheClass, ReadCacheResults, SlcResults,
    Utilization,
};
use start_gate::{Blocked, StartGate};
use suspend::Suspension;
use transaction::{Purpose, Transaction, TxArena, TxId, NONE};
use tsu::{CompletionView, DispatchView, SchedulerSetup, TransactionScheduler};
use variability::Variability;

/// A device event of one drive (its index, `nvme{index}`): what the device schedules.
pub type DriveEvent = (u32, DeviceEvent);

/// Events the device schedules for itself.
#[derive(Debug, Clone, Copy)]
pub enum DeviceEvent {
    /// The doorbell write reached the controller: the command is visible in its submission queue.
    Doorbell { req: ReqId },
    /// The controller finished its per-command work and can arbitrate again.
    ControllerFree,
    /// A fetched command has been decoded and asks to enter the read or write path.
    CommandReady { req: ReqId },
    /// The read or write path takes the command (it was rate-limited): a read goes to the cache / FTL, a
    /// write's data starts crossing the link.
    PathAdmitted { req: ReqId },
    /// A read's data (from the DRAM cache) is ready to cross the link to the host.
    ReadDataReady { req: ReqId },
    /// Transfers on one direction of the PCIe link may have finished. Stale, and ignored, when the link
    /// scheduled a newer check (see `hil/link.rs`).
    LinkCheck { direction: Direction, generation: u32 },
    /// A channel may have become idle: offer it to the chips waiting for it, in turn (round-robin channel
    /// arbitration, `start_gate.rs`). Stale, and ignored, when a newer wake-up replaced it.
    ChannelIdle { channel: u32 },
    /// A die finished sensing a read; its data now needs the channel.
    DieSensed { die: u32 },
    /// A die finished its operation (including the data transfer). Stale, and ignored, when the die's
    /// generation moved on (the operation was suspended; see `suspend.rs`).
    DieDone { die: u32, generation: u32 },
    /// The completion entry is posted and the interrupt sent: the device is done with the request.
    CompletionPosted { req: ReqId },
    /// The drive has had no command inside for `device.slc.fold_idle_ns` since it emptied after arrival
    /// number `generation`: stale, and ignored, if a command arrived since (`slc.rs`).
    SlcIdle { generation: u32 },
    /// Flash page `page` has waited `device.ftl.page_fill_timeout_ns` for its other mapping units since its
    /// list `generation` started: pad it (`assembly.rs`). Stale, and ignored, if the page filled meanwhile.
    PageFillDue { page: u32, generation: u32 },
}

#[derive(Debug, Clone, Copy, Default)]
struct CommandState {
    queue: u32,
    pending_transactions: u32,
    /// Longest wait of the request's transactions in the scheduler queues, plus any wait for buffer space.
    internal_wait: Time,
    /// When the write's data arrived (start of a wait for buffer space), or when a flush started waiting
    /// for destages.
    data_arrived: Time,
    /// A flush's mark: the destages started before it arrived (see `durability.rs`).
    flush_mark: u64,
    /// When the command arrived at the device (its transactions carry it: `Transaction::arrived_at`).
    arrived_at: Time,
}

pub struct Device {
    /// The drive's index on the host: its events carry it to it.
    drive: u32,
    preset: String,
    page_bytes: u64,
    multiplane: bool,
    multiplane_same_page: bool,
    dram_access_ns: Time,
    logical_capacity_bytes: u64,
    hil: HostInterface,
    cache: DataCache,
    /// Flushes waiting for the write buffer's destages.
    durability: Durability,
    /// Scratch: flushes a finished destage released (reused, not allocated).
    flushes_released: Vec<ReqId>,
    ftl: Ftl,
    cmt: MappingCache,
    tsu: Box<dyn TransactionScheduler>,
    flash: Backend,
    txs: TxArena,
    /// When an idle die may start (one die per chip, channel turns).
    start_gate: StartGate,
    /// Multi-plane operations started, and those joining different page indices.
    multiplane_ops: [u64; 2],
    /// The transactions each die is executing.
    running: Vec<Vec<TxId>>,
    /// Programs and erases set aside for reads.
    suspension: Suspension,
    /// Scratch: an empty batch vector for the reads a suspension starts with (reused, not allocated).
    spare_batch: Vec<TxId>,
    /// Scratch: the dies a read's units were queued on, offered once all are queued (`read_path.rs`).
    read_dies: Vec<u32>,
    commands: Vec<CommandState>,
    /// When each firmware core finishes the command it is processing.
    core_free_at: Vec<Time>,
    /// A `ControllerFree` event is scheduled (commands are waiting for the controller).
    controller_wake_pending: bool,
    /// Writes whose data arrived but found their write-buffer partition full.
    waiting_for_buffer: BufferWaiters,
    /// Host writes with no free page yet (every plane at its GC reserve); retried after each erase.
    waiting_for_space: VecDeque<TxId>,
    /// Translation pages being read, and the mapping-read transaction reading each.
    map_reads_in_flight: FxHashMap<u64, TxId>,
    gc_moves: Vec<(u64, u64)>,
    /// Each plane's GC moves not read yet, the next last (see `collect.rs`).
    gc_unread: Vec<Vec<(u64, u64)>>,
    /// Each plane's GC moves read or being read and not yet written: pages in the GC buffer.
    gc_buffered: Vec<u32>,
    /// Most pages a plane's GC job holds in the GC buffer (0: no bound).
    gc_read_ahead: u32,
    outstanding: u64,
    max_outstanding: u64,
    outstanding_area: u128,
    outstanding_since: Time,
    /// Time with at least one command inside.
    busy_ns: Time,
    /// Entries of each submission queue.
    queue_depth: u32,
    flash_ops: [u64; 3],
    /// Pages programmed (programs finished) for host data and for GC moves.
    host_pages_programmed: u64,
    gc_pages_programmed: u64,
    /// Pages the timed preconditioning's writes (`precondition_flow`) programmed (`timed_precondition.rs`).
    precondition_writes_done: u64,
    /// The flow slot of the timed preconditioning's writes: the one after the run's flows, so that the
    /// per-flow schedulers (FLIN, Sprinkler) see them as the writes of a job of their own.
    precondition_flow: u32,
    /// What the timed preconditioning carries into time 0 (`start` takes it).
    carried: timed_precondition::Carried,
    /// The write buffer's pages at time 0 (`buffer_preload.rs`; `start` takes it).
    buffer_preload: buffer_preload::BufferPreload,
    /// GC die time and the flows it is charged to.
    gc_cost: GcCost,
    /// Scratch: the charges of the GC batch that just finished (only if the scheduler wants them).
    gc_charges: Vec<(u32, Time)>,
    /// The scheduler wants `completed` calls (with GC charges split per batch).
    tsu_wants_completions: bool,
    /// Draws of the controller's and the media's service times.
    variability: Variability,
    /// Scratch: the requests whose link transfer just finished (reused, not allocated).
    link_done: Vec<u32>,
    /// Commands completed per criticality class (critical, normal), as the device sees the attribute.
    by_class: [ClassCounters; 2],
    /// The SLC cache's timing and idle timer (`None` without an SLC cache).
    slc: Option<slc::SlcTiming>,
    /// Programs waiting for the other mapping units of their flash page (`assembly.rs`).
    assembly: PageAssembly,
    /// The dies that just finished a program (`None` without cache programs; `cache_program.rs`).
    cache_program: Option<cache_program::CacheProgram>,
}

impl Device {
    /// Build and precondition the device. Errors name the configuration key at fault.
    /// `flows` is the number of flows the run has (the write buffer may be split among them).
    /// `drive` is the drive's index on the host, which its events carry; `seed` its own
    /// (`config::drives::drive_seed`).
    pub fn new(cfg: &DeviceConfig, seed: u64, flows: usize, drive: u32) -> Result<Device, String> {
        let ftl = Ftl::new(cfg, seed)?;
        if cfg.ftl.precondition_timed_writes == 0 {
            return Ok(Device { drive, ..Device::assemble(cfg, seed, flows, ftl)? });
        }
        let (ftl, carried) = Device::precondition_timed(cfg, seed, flows, ftl)?;
        Ok(Device { drive, carried, ..Device::assemble(cfg, seed, flows, ftl)? })
    }

    /// The device around an FTL already preconditioned.
    fn assemble(cfg: &DeviceConfig, seed: u64, flows: usize, ftl: Ftl) -> Result<Device, String> {
        let geometry = Geometry::of(cfg);
        let tsu = tsu::make(&SchedulerSetup {
            dies: geometry.dies(),
            planes_per_die: geometry.planes_per_die,
            page_bytes: geometry.page_bytes,
            timing: Timing::from_config(&cfg.flash),
            config: &cfg.tsu,
        })
        .ok_or_else(|| format!("device.tsu.scheduler: unknown scheduler \"{}\"", cfg.tsu.scheduler))?;
        let tsu_wants_completions = tsu.wants_completions();
        let ideal_map = cfg.ftl.ideal_map || cfg.ftl.mapping == MappingKind::InPlace;
        let cache = DataCache::new(&cfg.cache, geometry.page_bytes, geometry.planes(), flows)?;
        let waiting_for_buffer = BufferWaiters::new(cache.partitions());
        Ok(Device {
            drive: 0,
            preset: cfg.preset.clone(),
            page_bytes: geometry.page_bytes,
            multiplane: cfg.tsu.multiplane,
            multiplane_same_page: cfg.tsu.multiplane_same_page,
            dram_access_ns: cfg.cache.dram_access_ns.0,
            logical_capacity_bytes: cfg.logical_capacity_bytes(),
            hil: HostInterface::new(&cfg.host_interface, &cfg.controller)?,
            cache,
            durability: Durability::new(cfg.cache.power_loss_protection),
            flushes_released: Vec::new(),
            ftl,
            precondition_writes_done: 0,
            precondition_flow: flows as u32,
            carried: Default::default(),
            buffer_preload: buffer_preload::BufferPreload::new(cfg, seed),
            cmt: MappingCache::new(
                ideal_map,
                cfg.ftl.cmt_capacity_bytes.0,
                cfg.ftl.cmt_entry_bytes,
                // Translation pages are flash pages, whatever the mapping unit.
                cfg.flash.page_bytes.0,
            ),
            tsu,
            flash: Backend::new(geometry, Timing::from_config(&cfg.flash)),
            start_gate: StartGate::new(&cfg.flash, &geometry),
            multiplane_ops: [0; 2],
            txs: TxArena::default(),
            running: (0..geometry.dies()).map(|_| Vec::with_capacity(geometry.planes_per_die as usize)).collect(),
            suspension: Suspension::new(&cfg.flash, geometry.dies()),
            spare_batch: Vec::new(),
            read_dies: Vec::new(),
            commands: Vec::new(),
            core_free_at: vec![0; cfg.controller.firmware_cores as usize],
            controller_wake_pending: false,
            waiting_for_buffer,
            waiting_for_space: VecDeque::new(),
            map_reads_in_flight: FxHashMap::default(),
            gc_moves: Vec::new(),
            gc_unread: vec![Vec::new(); geometry.planes() as usize],
            gc_buffered: vec![0; geometry.planes() as usize],
            // The key counts flash pages; the buffer holds whole pages of mapping units, so that a GC page fills
            // before its program (fewer would pad every GC page and waste its other units).
            gc_read_ahead: cfg.ftl.gc_read_ahead * geometry.units_per_page,
            outstanding: 0,
            max_outstanding: 0,
            outstanding_area: 0,
            outstanding_since: 0,
            busy_ns: 0,
            queue_depth: cfg.host_interface.queue_depth,
            flash_ops: [0; 3],
            host_pages_programmed: 0,
            gc_pages_programmed: 0,
            gc_cost: GcCost::new(geometry.planes()),
            gc_charges: Vec::new(),
            tsu_wants_completions,
            variability: Variability::new(&cfg.variability, seed),
            link_done: Vec::new(),
            by_class: [ClassCounters::default(); 2],
            slc: slc::SlcTiming::new(cfg),
            assembly: PageAssembly::new(cfg.ftl.page_fill_timeout_ns.0),
            cache_program: cache_program::CacheProgram::new(cfg.flash.cache_program, geometry.dies()),
        })
    }

    /// Whether the drive reports a volatile write cache (NVMe's VWC bit): its write buffer has no power-loss
    /// protection. Linux sends PREFLUSH and FUA only to such a drive.
    pub fn has_volatile_write_cache(&self) -> bool {
        self.durability.fua_waits_for_media()
    }

    /// Entries of each submission queue (the host keeps at most one fewer commands in it).
    pub fn queue_depth(&self) -> u32 {
        self.queue_depth
    }

    /// Bytes the host can address.
    pub fn logical_capacity_bytes(&self) -> u64 {
        self.logical_capacity_bytes
    }

    /// Heap bytes the FTL's map and per-block state hold now (they grow as the run writes pages).
    pub fn map_bytes(&self) -> u64 {
        self.ftl.map_bytes()
    }

    /// The most [`Device::map_bytes`] can reach on a drive of `cfg` (every page rewritten).
    pub fn map_bytes_at_most(cfg: &DeviceConfig) -> u64 {
        ftl::Ftl::map_bytes_at_most(cfg)
    }

    /// Create an NVMe submission queue (with its completion queue); returns its index.
    pub fn create_queue(&mut self, priority: NvmePriority) -> u32 {
        self.hil.create_queue(priority)
    }

    /// The host wrote command `req` into submission queue `queue` and rang the doorbell at `written_at`.
    pub fn ring_doorbell(&mut self, q: &mut impl Scheduler<DriveEvent>, req: ReqId, queue: u32, written_at: Time) {
        if self.commands.len() <= req.index() {
            self.commands.resize(req.index() + 1, CommandState::default());
        }
        self.commands[req.index()] = CommandState { queue, ..CommandState::default() };
        q.schedule_at(written_at + self.hil.doorbell_ns, (self.drive, DeviceEvent::Doorbell { req }));
    }

    /// Handle one of the device's events. Requests whose completion was posted are appended to `completed`.
    pub fn handle(
        &mut self,
        event: DeviceEvent,
        q: &mut impl Scheduler<DriveEvent>,
        requests: &mut RequestArena,
        completed: &mut Vec<ReqId>,
    ) {
        let now = q.now();
        match event {
            DeviceEvent::Doorbell { req } => {
                requests[req].stamps.device_arrival = now;
                self.hil.control(now, Direction::ToDevice, 1, MESSAGE_BYTES);
                self.commands[req.index()].arrived_at = now;
                self.commands[req.index()].flush_mark = self.durability.mark();
                self.change_outstanding(now, 1);
                self.slc_command_arrived();
                self.hil.push(self.commands[req.index()].queue, req, now);
                self.wake_controller(q, requests);
            }
            DeviceEvent::ControllerFree => {
                self.controller_wake_pending = false;
                self.fetch_next(q, requests);
            }
            DeviceEvent::CommandReady { req } => {
                let admitted = self.hil.admit(now, requests[req].op);
                if admitted > now {
                    q.schedule_at(admitted, (self.drive, DeviceEvent::PathAdmitted { req }));
                } else {
                    self.enter_path(q, requests, req);
                }
            }
            DeviceEvent::PathAdmitted { req } => self.enter_path(q, requests, req),
            DeviceEvent::ReadDataReady { req } => self.send_to_host(q, requests, req),
            DeviceEvent::LinkCheck { direction, generation } => {
                let mut done = std::mem::take(&mut self.link_done);
                done.clear();
                if let Some((at, generation)) = self.hil.check_link(now, direction, generation, &mut done) {
                    q.schedule_at(at, (self.drive, DeviceEvent::LinkCheck { direction, generation }));
                }
                for &req in &done {
                    let req = ReqId(req);
                    match direction {
                        Direction::ToHost => self.post_completion(q, req, now),
                        Direction::ToDevice => {
                            self.commands[req.index()].data_arrived = now;
                            self.accept_write(q, requests, req);
                        }
                    }
                }
                self.link_done = done;
            }
            DeviceEvent::DieSensed { die } => {
                let bytes: u64 = self.running[die as usize].iter().map(|&t| self.txs[t].bytes as u64).sum();
                let end = self.flash.reserve_channel(die, now, bytes);
                let generation = self.suspension.generation(die);
                q.schedule_at(end, (self.drive, DeviceEvent::DieDone { die, generation }));
            }
            DeviceEvent::DieDone { die, generation } => {
                if generation != self.suspension.generation(die) {
                    return; // the operation was suspended; it ends at its resumed DieDone
                }
                // The die stays busy while its transactions finish, so work they queue on it waits for the
                // dispatch below instead of starting inside this loop.
                let mut batch = std::mem::take(&mut self.running[die as usize]);
                let op = batch.first().map(|&tx| self.txs[tx].op);
                self.batch_done(die, &batch, now);
                for &tx in &batch {
                    self.finish_transaction(q, requests, tx);
                }
                batch.clear();
                self.running[die as usize] = batch;
                if self.suspension.is_open(die) {
                    self.continue_suspension(q, die);
                } else {
                    self.cache_program_released(die, op, now);
                    self.flash.release_die(die, now);
                    self.offer_released_chip(q, die);
                }
            }
            DeviceEvent::ChannelIdle { channel } => {
                if self.start_gate.woken(channel as usize, now) {
                    self.offer_channel(q, channel);
                }
            }
            DeviceEvent::CompletionPosted { req } => {
                // The completion entry and the interrupt message cross the link as two small TLPs.
                self.hil.control(now, Direction::ToHost, 2, COMPLETION_BYTES + MESSAGE_BYTES);
                let class = (requests[req].class.criticality != Criticality::Critical) as usize;
                let stamps = &mut requests[req].stamps;
                stamps.device_done = now;
                stamps.device_internal_wait = self.commands[req.index()].internal_wait;
                self.by_class[class].record(now - stamps.device_arrival, stamps.device_internal_wait);
                self.change_outstanding(now, -1);
                self.slc_arm_idle(q);
                if self.hil.completed(self.commands[req.index()].queue, requests[req].len as u64) {
                    // Its queue was at its bound of commands in the controller, with more waiting.
                    self.wake_controller(q, requests);
                }
                completed.push(req);
            }
            DeviceEvent::SlcIdle { generation } => self.slc_idle(q, generation),
            DeviceEvent::PageFillDue { page, generation } => self.page_fill_due(q, page, generation),
        }
    }

    fn change_outstanding(&mut self, now: Time, delta: i64) {
        self.outstanding_area += self.outstanding as u128 * (now - self.outstanding_since) as u128;
        if self.outstanding > 0 {
            self.busy_ns += now - self.outstanding_since;
        }
        self.outstanding_since = now;
        self.outstanding = (self.outstanding as i64 + delta) as u64;
        self.max_outstanding = self.max_outstanding.max(self.outstanding);
    }

    /// The firmware core that frees first, and when.
    fn first_free_core(&self) -> (usize, Time) {
        let (core, &at) = self.core_free_at.iter().enumerate().min_by_key(|&(_, &at)| at).expect("at least one core");
        (core, at)
    }

    /// A command may have become fetchable: start a firmware core on it now if one is idle, else when the
    /// first frees (unless a wake-up is already scheduled).
    fn wake_controller(&mut self, q: &mut impl Scheduler<DriveEvent>, requests: &mut RequestArena) {
        if self.controller_wake_pending {
            return;
        }
        let free_at = self.first_free_core().1;
        if q.now() >= free_at {
            self.fetch_next(q, requests);
        } else {
            self.controller_wake_pending = true;
            q.schedule_at(free_at, (self.drive, DeviceEvent::ControllerFree));
        }
    }

    /// Arbitrate among submission queues and start each idle firmware core on a winner. A core is a single
    /// server; a `ControllerFree` event is scheduled only while commands wait for one, so an idle controller
    /// costs no events.
    fn fetch_next(&mut self, q: &mut impl Scheduler<DriveEvent>, requests: &mut RequestArena) {
        let now = q.now();
        loop {
            let (core, free_at) = self.first_free_core();
            if free_at > now {
                break;
            }
            let Some(req) = self.hil.next_command(now, |r| requests[r].len as u64) else { return };
            requests[req].stamps.device_fetched = now;
            self.hil.control(now, Direction::ToDevice, 1, COMMAND_BYTES);
            let processed = now + self.variability.controller_ns(self.hil.command_process_ns);
            self.core_free_at[core] = processed;
            q.schedule_at(processed + self.hil.command_fetch_ns, (self.drive, DeviceEvent::CommandReady { req }));
        }
        if self.hil.has_fetchable() {
            self.controller_wake_pending = true;
            q.schedule_at(self.first_free_core().1, (self.drive, DeviceEvent::ControllerFree));
        }
    }

    /// The command's path took it: a read looks up its pages, a write's data starts crossing the link, a
    /// flush (no data, no path) completes now or when the destages it covers are programmed.
    fn enter_path(&mut self, q: &mut impl Scheduler<DriveEvent>, requests: &mut RequestArena, req: ReqId) {
        match requests[req].op {
            Op::Read => self.start_read(q, requests, req),
            Op::Write => self.start_transfer(q, Direction::ToDevice, req, requests[req].len as u64),
            Op::Flush => {
                let cmd = &mut self.commands[req.index()];
                cmd.data_arrived = q.now();
                if self.durability.flush(req, cmd.flush_mark) {
                    self.post_completion(q, req, q.now());
                } else {
                    // Buffered data the flush waits for may sit in pages still filling: pad them now.
                    self.pad_waiting_pages(q);
                }
            }
        }
    }

    fn start_transfer(&mut self, q: &mut impl Scheduler<DriveEvent>, direction: Direction, req: ReqId, bytes: u64) {
        if let Some((at, generation)) = self.hil.start_transfer(q.now(), direction, req, bytes) {
            q.schedule_at(at, (self.drive, DeviceEvent::LinkCheck { direction, generation }));
        }
    }

    /// Logical pages a request touches, with the bytes of each it moves.
    fn pages(&self, offset: u64, len: u32) -> impl Iterator<Item = (u64, u32)> {
        let page = self.page_bytes;
        let end = offset + len as u64;
        (offset / page..end.div_ceil(page)).map(move |lpa| {
            let lo = (lpa * page).max(offset);
            let hi = ((lpa + 1) * page).min(end);
            (lpa, (hi - lo) as u32)
        })
    }

    fn accept_write(&mut self, q: &mut impl Scheduler<DriveEvent>, requests: &mut RequestArena, req: ReqId) {
        let (offset, len) = (requests[req].offset, requests[req].len);
        let pages = self.pages(offset, len).count();
        // A FUA write to a volatile buffer goes around it: the host waits for its programs.
        let fua_bypass = requests[req].fua && self.durability.fua_waits_for_media();
        if self.cache.buffers_writes() && pages <= self.cache.partition_pages() && !fua_bypass {
            let part = self.cache.partition(requests[req].flow);
            if !self.waiting_for_buffer.any(part) && self.cache.can_buffer(part, pages) {
                self.buffer_write(q, requests, req, part);
            } else {
                self.waiting_for_buffer.push(part, req, q.now());
            }
            return;
        }
        // No buffer (or larger than it): the host waits for the programs.
        let (flow, priority) = (requests[req].flow, requests[req].class.priority);
        self.commands[req.index()].pending_transactions = pages as u32;
        let page_list: Vec<(u64, u32)> = self.pages(offset, len).collect();
        for (lpa, bytes) in page_list {
            self.write_page(q, lpa, bytes, req.0, flow, priority);
        }
    }

    /// Put a write in buffer partition `part`, start destaging it, and complete it.
    fn buffer_write(
        &mut self,
        q: &mut impl Scheduler<DriveEvent>,
        requests: &mut RequestArena,
        req: ReqId,
        part: usize,
    ) {
        let now = q.now();
        let (offset, len, flow, class) =
            (requests[req].offset, requests[req].len, requests[req].flow, requests[req].class);
        let cmd = &mut self.commands[req.index()];
        cmd.internal_wait = now - cmd.data_arrived;
        let first = offset / self.page_bytes;
        let last = (offset + len as u64).div_ceil(self.page_bytes);
        for lpa in first..last {
            self.cache.buffer_write(lpa, part, class.criticality);
            // Destages always program a whole page (the buffer holds the page image).
            let bytes = self.page_bytes as u32;
            let tx =
                self.new_transaction(FlashOp::Program, Purpose::UserWrite, 0, lpa, bytes, NONE, flow, class.priority);
            self.txs[tx].destage = self.durability.destage_started();
            self.place_write(q, tx);
        }
        self.post_completion(q, req, now + self.dram_access_ns);
    }

    /// Allocate a page for host data of `lpa` and queue its program.
    #[allow(clippy::too_many_arguments)]
    fn write_page(
        &mut self,
        q: &mut impl Scheduler<DriveEvent>,
        lpa: u64,
        bytes: u32,
        req: u32,
        flow: u32,
        priority: NvmePriority,
    ) {
        let tx = self.new_transaction(FlashOp::Program, Purpose::UserWrite, 0, lpa, bytes, req, flow, priority);
        self.place_write(q, tx);
    }

    fn place_write(&mut self, q: &mut impl Scheduler<DriveEvent>, tx: TxId) {
        let lpa = self.txs[tx].lpa;
        match self.ftl.allocate_user(lpa) {
            Some(ppa) => {
                self.cmt.fill(lpa);
                self.locate(tx, ppa);
                let unit = self.flash.geometry().plane_of_page(ppa);
                let flow = self.txs[tx].flow;
                // GC after the timed preconditioning's writes stays charged to the run's flows, as in a run
                // without them.
                if flow != NONE && flow != self.precondition_flow {
                    self.gc_cost.host_write(unit, flow);
                }
                self.queue_program(q, tx);
                self.maybe_collect(q, unit);
            }
            None => self.waiting_for_space.push_back(tx),
        }
    }

    fn locate(&mut self, tx: TxId, ppa: u64) {
        let geometry = self.flash.geometry();
        let unit = geometry.plane_of_page(ppa);
        let t = &mut self.txs[tx];
        t.ppa = ppa;
        t.die = geometry.die_of_plane(unit);
        t.plane = geometry.plane_in_die(unit);
    }

    #[allow(clippy::too_many_arguments)]
    fn new_transaction(
        &mut self,
        op: FlashOp,
        purpose: Purpose,
        ppa: u64,
        lpa: u64,
        bytes: u32,
        req: u32,
        flow: u32,
        priority: NvmePriority,
    ) -> TxId {
        let tx = self.txs.insert(Transaction {
            op,
            purpose,
            req,
            flow,
            priority,
            die: 0,
            plane: 0,
            ppa,
            lpa,
            bytes,
            // Background work (req NONE) is stamped when queued (`enqueue`).
            arrived_at: if req == NONE { 0 } else { self.commands[req as usize].arrived_at },
            enqueued_at: 0,
            dispatched_at: 0,
            link: NONE,
            destage: 0,
        });
        self.locate(tx, ppa);
        tx
    }

    fn enqueue(&mut self, q: &mut impl Scheduler<DriveEvent>, tx: TxId) {
        self.stamp_and_queue(q, tx);
        let read = matches!(self.txs[tx].purpose, Purpose::UserRead | Purpose::MapRead);
        self.offer_die(q, self.txs[tx].die, read);
    }

    /// Work was queued on `die` (`read`: a host or mapping read): start the die if it is idle, else try to
    /// suspend what it runs for the read.
    fn offer_die(&mut self, q: &mut impl Scheduler<DriveEvent>, die: u32, read: bool) {
        if self.flash.die_is_busy(die) {
            if self.suspension.enabled() && read {
                self.try_suspend(q, die);
            }
        } else {
            self.dispatch(q, die);
        }
    }

    /// Stamp `tx` queued now and hand it to the scheduler (without starting its die).
    fn stamp_and_queue(&mut self, q: &impl Clock, tx: TxId) {
        let t = &mut self.txs[tx];
        t.enqueued_at = q.now();
        if t.req == NONE {
            t.arrived_at = t.enqueued_at;
        }
        self.tsu.enqueue(tx, &self.txs);
    }

    /// Ask the scheduler what `die` runs next (`reads_only`: inside a suspension) into `batch`.
    fn ask_scheduler(&mut self, die: u32, now: Time, reads_only: bool, batch: &mut Vec<TxId>) {
        let view = DispatchView {
            txs: &self.txs,
            now,
            gc_urgent: self.ftl.gc_urgent(die),
            gc_pace: self.ftl.gc_pace(die),
            multiplane: self.multiplane,
            multiplane_same_page: self.multiplane_same_page,
            pages_per_block: self.flash.geometry.pages_per_block,
            units_per_page: self.flash.geometry.units_per_page,
            host_writes_blocked_since: self.waiting_for_buffer.blocked_since(),
            reads_only,
        };
        self.tsu.dispatch(die, &view, batch);
    }

    /// If `die` is idle, ask the scheduler for work and start it.
    fn dispatch(&mut self, q: &mut impl Scheduler<DriveEvent>, die: u32) {
        if self.flash.die_is_busy(die) {
            return;
        }
        let now = q.now();
        if let Err(blocked) = self.start_gate.check(&self.flash, die, now) {
            if let Blocked::Channel { wake_at: Some(at) } = blocked {
                let channel = self.flash.geometry.channel_of_die(die);
                q.schedule_at(at, (self.drive, DeviceEvent::ChannelIdle { channel }));
            }
            return; // the chip's release or the channel's wake-up offers it again
        }
        let mut batch = std::mem::take(&mut self.running[die as usize]);
        self.ask_scheduler(die, now, false, &mut batch);
        if batch.is_empty() {
            self.running[die as usize] = batch;
            return;
        }
        self.flash.occupy_die(die, now);
        let (array_start, end) = self.start_batch(q, die, &batch, now);
        self.suspension.started(die, self.txs[batch[0]].op, array_start, end);
        self.running[die as usize] = batch;
    }

    /// Issue `batch` on `die` (marked busy) at `start`; returns when its array phase starts and when it ends
    /// (for a read: when sensing ends, its transfer follows).
    fn start_batch(
        &mut self,
        q: &mut impl Scheduler<DriveEvent>,
        die: u32,
        batch: &[TxId],
        start: Time,
    ) -> (Time, Time) {
        let now = q.now();
        for &tx in batch {
            self.txs[tx].dispatched_at = now;
        }
        let page_ops = self.page_operations(batch);
        if page_ops > 1 {
            self.count_multiplane(batch);
        }
        let timing = self.flash.timing;
        let op = self.txs[batch[0]].op;
        let generation = self.suspension.generation(die);
        // Command and address cycles: on the bus when chips take turns for it, else a fixed delay.
        let commanded = if self.start_gate.commands_hold_channel() {
            self.flash.reserve_channel_ns(die, start, timing.command_ns)
        } else {
            start + timing.command_ns
        };
        match op {
            FlashOp::Read => {
                self.flash_ops[0] += page_ops;
                let sensed = commanded + self.variability.read_ns(self.array_ns(op, timing.read_ns, batch));
                q.schedule_at(sensed, (self.drive, DeviceEvent::DieSensed { die }));
                (commanded, sensed)
            }
            FlashOp::Program => {
                self.flash_ops[1] += page_ops;
                let bytes: u64 = batch.iter().map(|&t| self.txs[t].bytes as u64).sum();
                let array_ns = self.variability.program_ns(self.array_ns(op, timing.program_ns, batch));
                let (array_start, end) = self.program_phases(die, start, commanded, bytes, array_ns);
                q.schedule_at(end, (self.drive, DeviceEvent::DieDone { die, generation }));
                (array_start, end)
            }
            FlashOp::Erase => {
                self.flash_ops[2] += page_ops;
                let end = commanded + timing.erase_ns;
                q.schedule_at(end, (self.drive, DeviceEvent::DieDone { die, generation }));
                (commanded, end)
            }
        }
    }

    /// Flash page (or block) operations of `batch`: one per plane it uses (units of one page are one
    /// operation), its length when the unit is the page.
    fn page_operations(&self, batch: &[TxId]) -> u64 {
        if self.flash.geometry.units_per_page == 1 {
            return batch.len() as u64;
        }
        batch.iter().fold(0u64, |planes, &tx| planes | 1 << self.txs[tx].plane).count_ones() as u64
    }

    /// A read was queued on busy `die`: suspend the program or erase it runs, if allowed and the scheduler
    /// has a read to run in its place.
    fn try_suspend(&mut self, q: &mut impl Scheduler<DriveEvent>, die: u32) {
        let now = q.now();
        if !self.suspension.can_suspend(die, now) {
            return;
        }
        let mut reads = std::mem::take(&mut self.spare_batch);
        self.ask_scheduler(die, now, true, &mut reads);
        if reads.is_empty() {
            self.spare_batch = reads;
            return;
        }
        let start = self.suspension.suspend(die, now, &mut self.running[die as usize]);
        self.start_batch(q, die, &reads, start);
        self.running[die as usize] = reads;
    }

    /// A read batch inside a suspension finished on `die`: run another read if the suspension has turns
    /// left and the scheduler has one, else resume the suspended operation.
    fn continue_suspension(&mut self, q: &mut impl Scheduler<DriveEvent>, die: u32) {
        let now = q.now();
        let mut batch = std::mem::take(&mut self.running[die as usize]);
        if self.suspension.take_read_turn(die) {
            self.ask_scheduler(die, now, true, &mut batch);
            if !batch.is_empty() {
                self.start_batch(q, die, &batch, now);
                self.running[die as usize] = batch;
                return;
            }
        }
        let (end, spare) = self.suspension.resume(die, now, &mut batch);
        self.spare_batch = spare;
        let generation = self.suspension.generation(die);
        q.schedule_at(end, (self.drive, DeviceEvent::DieDone { die, generation }));
        self.running[die as usize] = batch;
    }

    /// `die` finished `batch` at `now`: charge garbage collection to the flows that caused it and tell the
    /// scheduler.
    fn batch_done(&mut self, die: u32, batch: &[TxId], now: Time) {
        let wanted = self.tsu_wants_completions;
        self.gc_charges.clear();
        if let Some(&first) = batch.first() {
            let t = &self.txs[first];
            if t.purpose == Purpose::Gc {
                // The batch's die time, split evenly over its transactions (each may be on another plane).
                let busy = now - t.dispatched_at - self.suspension.paused_ns(die);
                let n = batch.len() as Time;
                for (i, &tx) in batch.iter().enumerate() {
                    let share = busy / n + Time::from((i as Time) < busy % n);
                    let out = if wanted { Some(&mut self.gc_charges) } else { None };
                    self.gc_cost.charge(self.txs[tx].link, share, out);
                }
            }
        }
        if wanted {
            let view = CompletionView { txs: &self.txs, now, gc_charges: &self.gc_charges };
            self.tsu.completed(die, batch, &view);
        }
    }

    fn finish_transaction(&mut self, q: &mut impl Scheduler<DriveEvent>, requests: &mut RequestArena, tx: TxId) {
        let t = self.txs[tx].clone();
        match t.purpose {
            Purpose::UserRead if t.req == NONE => self.prefetch_done(q, requests, &t),
            Purpose::UserRead => {
                self.cache.fill_after_read(t.lpa, requests[ReqId(t.req)].class.criticality);
                self.request_part_done(q, requests, ReqId(t.req), t.dispatched_at - t.enqueued_at);
            }
            Purpose::MapRead => {
                self.map_reads_in_flight.remove(&t.lpa);
                let mut waiter = t.link;
                while waiter != NONE {
                    let next = self.txs[waiter].link;
                    self.txs[waiter].link = NONE;
                    self.cmt.fill(self.txs[waiter].lpa);
                    self.enqueue(q, waiter);
                    waiter = next;
                }
            }
            Purpose::UserWrite if t.req != NONE => {
                self.host_pages_programmed += 1;
                self.request_part_done(q, requests, ReqId(t.req), t.dispatched_at - t.enqueued_at);
            }
            // The timed preconditioning's (`timed_precondition.rs`): no flow's, not host data of the run.
            Purpose::UserWrite if t.flow == self.precondition_flow && t.link == NONE => {
                self.precondition_writes_done += 1
            }
            Purpose::UserWrite => {
                // A page the buffer held at time 0 (`buffer_preload.rs`) is no flow's: its partition is in `link`.
                let part = if t.flow == self.precondition_flow {
                    t.link as usize
                } else {
                    self.host_pages_programmed += 1;
                    self.cache.partition(t.flow)
                };
                self.cache.destaged(t.lpa, part);
                self.release_flushes(q, t.destage);
                self.admit_waiting_writes(q, requests, part);
            }
            Purpose::Gc => self.finish_gc_step(q, &t),
        }
        self.txs.remove(tx);
    }

    /// One transaction of a request is done; the last one completes the request.
    fn request_part_done(
        &mut self,
        q: &mut impl Scheduler<DriveEvent>,
        requests: &mut RequestArena,
        req: ReqId,
        waited: Time,
    ) {
        let cmd = &mut self.commands[req.index()];
        cmd.internal_wait = cmd.internal_wait.max(waited);
        cmd.pending_transactions -= 1;
        if cmd.pending_transactions == 0 {
            match requests[req].op {
                Op::Read => self.finish_read(q, requests, req, q.now()),
                // A flush has no transactions of its own; were it given some, their end would complete it.
                Op::Write | Op::Flush => self.post_completion(q, req, q.now()),
            }
        }
    }

    /// Destage `destage` is programmed: complete the flushes it was the last to hold up (their wait for the
    /// destages counts as time in device queues).
    fn release_flushes(&mut self, q: &mut impl Scheduler<DriveEvent>, destage: u64) {
        let mut released = std::mem::take(&mut self.flushes_released);
        self.durability.destaged(destage, &mut released);
        let now = q.now();
        for &req in &released {
            let cmd = &mut self.commands[req.index()];
            cmd.internal_wait = now - cmd.data_arrived;
            self.post_completion(q, req, now);
        }
        released.clear();
        self.flushes_released = released;
    }

    /// Admit the writes waiting for partition `part`, in arrival order, while they fit.
    fn admit_waiting_writes(&mut self, q: &mut impl Scheduler<DriveEvent>, requests: &mut RequestArena, part: usize) {
        while let Some(req) = self.waiting_for_buffer.front(part) {
            let (offset, len) = (requests[req].offset, requests[req].len);
            if !self.cache.can_buffer(part, self.pages(offset, len).count()) {
                break;
            }
            self.waiting_for_buffer.pop(part);
            self.buffer_write(q, requests, req, part);
        }
    }

    /// The read's data is in the controller at `ready`: DMA it to the host, then post the completion.
    fn finish_read(&mut self, q: &mut impl Scheduler<DriveEvent>, requests: &RequestArena, req: ReqId, ready: Time) {
        if ready > q.now() {
            q.schedule_at(ready, (self.drive, DeviceEvent::ReadDataReady { req }));
        } else {
            self.send_to_host(q, requests, req);
        }
    }

    fn send_to_host(&mut self, q: &mut impl Scheduler<DriveEvent>, requests: &RequestArena, req: ReqId) {
        self.start_transfer(q, Direction::ToHost, req, requests[req].len as u64);
    }

    fn post_completion(&mut self, q: &mut impl Scheduler<DriveEvent>, req: ReqId, at: Time) {
        q.schedule_at(at + self.hil.completion_ns, (self.drive, DeviceEvent::CompletionPosted { req }));
    }

    /// Check the FTL's map invariants (linear in drive size; for tests).
    pub fn check_invariants(&self) -> Result<(), String> {
        self.hil.check_invariants()?;
        self.ftl.check_invariants()?;
        self.gc_cost.check_invariants()
    }
}

impl Backend {
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }
}
