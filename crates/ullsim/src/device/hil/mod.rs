//! The host interface: NVMe submission queues, the controller's command fetch with pluggable arbitration,
//! its per-direction read and write paths, and the PCIe link (`link.rs`, or `link_fifo.rs` as MQSim serves it). One file per arbiter; add one by
//! adding a file and a line in [`make_arbiter`].
//!
//! The controller holds a bounded number of each queue's commands (`max_fetched_per_queue`, MQSim's
//! `Queue_Fetch_Size`: `Input_Stream_Manager_NVMe` fetches from a stream only while its on-the-fly requests
//! are fewer): a queue at the bound is not fetched from until the completion of one of its commands is
//! posted, so load beyond what the drive holds waits in the queue, in host memory, and creates no flash work.
//!
//! Over all queues, the controller holds at most `controller.command_slots` commands (its internal command
//! table; an NVMe controller "stops fetching until completions free one", contention.md §2). A command holds
//! its slot from fetch until its completion is posted, whatever it waits for inside: a write that finds the
//! write buffer full keeps its slot, and once writes hold every slot nothing more is fetched, so a read
//! arriving then waits in its submission queue behind them.

mod flashshare;
mod link;
mod link_fifo;
mod round_robin;
mod wrr;

use std::collections::VecDeque;

use crate::config::device::{ControllerConfig, HostInterfaceConfig, LinkService};
use crate::engine::Time;
use crate::request::{NvmePriority, Op, ReqId};
use link::LinkDirection;
use link_fifo::FifoLinkDirection;

/// A direction of the PCIe link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Device to host: read data, completion entries, interrupts.
    ToHost,
    /// Host to device: write data, fetched commands, doorbell writes.
    ToDevice,
}

/// Most data bytes of the commands the controller holds at once: fetching stops at this much (a command
/// larger than it is still fetched when nothing else is held). A bound of the simulator, not of a drive:
/// every page of a held command is a flash transaction in memory, so it bounds a run's memory however large
/// its requests (a 4 GiB request is ~80 MiB of transactions). Real drives hold far less: NVMe caps a command
/// at MDTS (typically 128 KiB to 2 MiB) and the host splits larger I/O.
pub const MAX_BYTES_HELD: u64 = 1 << 30;

/// Bytes of one NVMe submission queue entry (a fetched command).
pub const COMMAND_BYTES: u64 = 64;
/// Bytes of one completion queue entry.
pub const COMPLETION_BYTES: u64 = 16;
/// Bytes of an MSI-X interrupt message or a doorbell register write.
pub const MESSAGE_BYTES: u64 = 4;

/// One NVMe submission queue as the controller sees it.
#[derive(Debug)]
pub struct SubmissionQueue {
    /// QPRIO, fixed when the queue is created (used by weighted round robin).
    pub priority: NvmePriority,
    /// Commands not fetched yet, with the time each became visible to the controller.
    pending: VecDeque<(ReqId, Time)>,
    /// Commands fetched from the queue whose completion is not posted yet.
    fetched: u32,
    /// Most commands of the queue the controller holds at once (0: no bound).
    max_fetched: u32,
}

impl SubmissionQueue {
    /// Commands the controller has not fetched yet.
    pub fn len(&self) -> usize {
        self.pending.len()
    }
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
    /// Whether the controller may fetch from the queue now: it holds a command, and fewer of its commands
    /// than the bound are in the controller.
    pub fn fetchable(&self) -> bool {
        !self.pending.is_empty() && (self.max_fetched == 0 || self.fetched < self.max_fetched)
    }
    /// When the oldest command not fetched became visible to the controller.
    pub fn oldest_arrival(&self) -> Option<Time> {
        self.pending.front().map(|&(_, at)| at)
    }
    fn push(&mut self, req: ReqId, at: Time) {
        self.pending.push_back((req, at));
    }
    fn pop(&mut self) -> Option<ReqId> {
        let req = self.pending.pop_front().map(|(req, _)| req);
        self.fetched += req.is_some() as u32;
        req
    }
}

/// One direction of the PCIe link: how the transfers crossing it share it (`link.rs`: TLPs interleave, as on
/// a real link; `link_fifo.rs`: whole messages in turn, as in MQSim). Completions are found by checks the
/// device schedules: each call that returns a time asks for a check then, carrying [`Link::generation`].
pub trait Link {
    /// Transfer `id` starts at `now` and needs `service_ns` of the link to itself.
    fn start(&mut self, now: Time, id: u32, service_ns: Time) -> Option<Time>;
    /// A control message (command, completion entry, interrupt) of `service_ns` wire time goes out at `now`.
    fn control(&mut self, now: Time, service_ns: Time);
    /// Run the check of `generation` at `now`: the ids of the transfers done go to `done`. Stale
    /// generations do nothing.
    fn check(&mut self, now: Time, generation: u32, done: &mut Vec<u32>) -> Option<Time>;
    /// The generation a scheduled check must carry to be current.
    fn generation(&self) -> u32;
    /// Time the direction carried traffic up to `now`.
    fn busy_ns(&self, now: Time) -> Time;
    /// Transfers in flight.
    fn in_flight(&self) -> usize;
}

/// A link direction served as `service` says.
fn make_link(service: LinkService) -> Box<dyn Link> {
    match service {
        LinkService::ProcessorSharing => Box::<LinkDirection>::default(),
        LinkService::Fifo => Box::<FifoLinkDirection>::default(),
    }
}

/// Chooses the submission queue the controller fetches the next command from.
pub trait Arbiter {
    fn name(&self) -> &'static str;
    /// Index of a queue the controller may fetch from ([`SubmissionQueue::fetchable`]) at `now`, or `None`
    /// when there is none.
    fn pick(&mut self, queues: &[SubmissionQueue], now: Time) -> Option<usize>;
}

/// Names accepted by `device.host_interface.arbiter`.
pub fn arbiter_names() -> &'static [&'static str] {
    &["round-robin", "weighted-round-robin", "flashshare"]
}

/// Build the arbiter `cfg.arbiter` names, with its parameters from `cfg`.
pub fn make_arbiter(cfg: &HostInterfaceConfig) -> Option<Box<dyn Arbiter>> {
    let burst = cfg.arbitration_burst;
    match cfg.arbiter.as_str() {
        "round-robin" => Some(Box::new(round_robin::RoundRobin::new(burst))),
        "weighted-round-robin" => Some(Box::new(wrr::WeightedRoundRobin::new(
            burst,
            [cfg.wrr_high_weight, cfg.wrr_medium_weight, cfg.wrr_low_weight],
        ))),
        "flashshare" => Some(Box::new(flashshare::FlashShare::new(
            burst,
            cfg.flashshare_drain_entries,
            cfg.flashshare_drain_wait_ns.0,
        ))),
        _ => None,
    }
}

/// Submission queues, the arbiter, the read and write paths, and the two directions of the PCIe link.
pub struct HostInterface {
    queues: Vec<SubmissionQueue>,
    /// Most commands of one queue in the controller at once (0: no bound).
    max_fetched_per_queue: u32,
    /// Most commands in the controller at once, over all queues (0: no bound).
    command_slots: u32,
    /// Commands fetched whose completion is not posted yet: the slots held.
    slots_held: u32,
    /// Data bytes of those commands.
    bytes_held: u64,
    arbiter: Box<dyn Arbiter>,
    pub doorbell_ns: Time,
    pub command_fetch_ns: Time,
    pub command_process_ns: Time,
    pub completion_ns: Time,
    /// Wire bytes per second a direction carries, after data-link packets take their share.
    link_bytes_per_s: f64,
    max_payload_bytes: u64,
    tlp_overhead_bytes: u64,
    /// Payload bytes per second of the read and of the write data path.
    path_bytes_per_s: [f64; 2],
    /// Time between two commands entering the read / the write path (0: no limit).
    path_interval_ns: [f64; 2],
    /// When the read / the write path takes its next command (fractional ns, so that 1/rate does not round).
    path_next_at: [f64; 2],
    /// Whether control TLPs slow the data of each direction (to host, to device): only where the link, not the
    /// controller's data path, is what limits the data. Where the path binds, the link has room to spare for
    /// the few control bytes (e.g. 2.0 GB/s of write data on a 3.4 GB/s link).
    control_delays_data: [bool; 2],
    to_host: Box<dyn Link>,
    to_device: Box<dyn Link>,
}

impl HostInterface {
    pub fn new(cfg: &HostInterfaceConfig, controller: &ControllerConfig) -> Result<Self, String> {
        let arbiter = make_arbiter(cfg)
            .ok_or_else(|| format!("device.host_interface.arbiter: unknown arbiter \"{}\"", cfg.arbiter))?;
        Ok(HostInterface {
            queues: Vec::new(),
            max_fetched_per_queue: cfg.max_fetched_per_queue,
            command_slots: controller.command_slots,
            slots_held: 0,
            bytes_held: 0,
            arbiter,
            doorbell_ns: cfg.doorbell_ns.0,
            command_fetch_ns: cfg.command_fetch_ns.0,
            command_process_ns: cfg.command_process_ns.0,
            completion_ns: cfg.completion_ns.0,
            link_bytes_per_s: cfg.pcie_lanes as f64 * cfg.pcie_lane_bytes_per_s * (1.0 - cfg.pcie_dllp_overhead),
            max_payload_bytes: cfg.pcie_max_payload_bytes as u64,
            tlp_overhead_bytes: cfg.pcie_tlp_overhead_bytes as u64,
            path_bytes_per_s: [cfg.max_read_bytes_per_s, cfg.max_write_bytes_per_s],
            path_interval_ns: [cfg.max_read_iops, cfg.max_write_iops]
                .map(|iops| if iops > 0.0 { 1e9 / iops } else { 0.0 }),
            path_next_at: [0.0; 2],
            control_delays_data: [cfg.max_read_bytes_per_s, cfg.max_write_bytes_per_s].map(|path| {
                let mps = cfg.pcie_max_payload_bytes as f64;
                let link_payload = cfg.pcie_lanes as f64
                    * cfg.pcie_lane_bytes_per_s
                    * (1.0 - cfg.pcie_dllp_overhead)
                    * (mps / (mps + cfg.pcie_tlp_overhead_bytes as f64));
                path >= link_payload
            }),
            to_host: make_link(cfg.pcie_link_service),
            to_device: make_link(cfg.pcie_link_service),
        })
    }

    /// Create a submission queue; returns its index.
    pub fn create_queue(&mut self, priority: NvmePriority) -> u32 {
        self.queues.push(SubmissionQueue {
            priority,
            pending: VecDeque::new(),
            fetched: 0,
            max_fetched: self.max_fetched_per_queue,
        });
        (self.queues.len() - 1) as u32
    }

    /// Command `req` became visible in submission queue `queue` at `now`.
    pub fn push(&mut self, queue: u32, req: ReqId, now: Time) {
        self.queues[queue as usize].push(req, now);
    }

    /// Whether every command slot is held (never, without a bound), or the held commands' data reached
    /// [`MAX_BYTES_HELD`].
    fn slots_full(&self) -> bool {
        (self.command_slots > 0 && self.slots_held >= self.command_slots) || self.bytes_held >= MAX_BYTES_HELD
    }

    /// Whether the controller may fetch a command from some submission queue now: a slot is free and a
    /// queue may be fetched from.
    pub fn has_fetchable(&self) -> bool {
        !self.slots_full() && self.queues.iter().any(SubmissionQueue::fetchable)
    }

    /// Arbitrate at `now` and take the next command, if one may be fetched; it holds a slot and its
    /// `bytes_of` data bytes until its completion is posted ([`HostInterface::completed`]).
    pub fn next_command(&mut self, now: Time, bytes_of: impl Fn(ReqId) -> u64) -> Option<ReqId> {
        if self.slots_full() {
            return None;
        }
        let q = self.arbiter.pick(&self.queues, now)?;
        let req = self.queues[q].pop()?;
        self.slots_held += 1;
        self.bytes_held += bytes_of(req);
        Some(req)
    }

    /// The completion of a command fetched from `queue` was posted: it frees its slot and the queue holds one
    /// fewer in the controller. Returns whether that let fetching resume: the queue was at its bound with
    /// commands waiting, or every slot was held while some queue had a command to fetch.
    pub fn completed(&mut self, queue: u32, bytes: u64) -> bool {
        let slots_were_full = self.slots_full();
        let sq = &mut self.queues[queue as usize];
        let was_blocked = !sq.fetchable() && !sq.is_empty();
        sq.fetched -= 1;
        self.slots_held -= 1;
        self.bytes_held -= bytes;
        was_blocked || (slots_were_full && self.has_fetchable())
    }

    /// Commands in the controller now (slots held).
    pub fn slots_held(&self) -> u32 {
        self.slots_held
    }

    /// Model invariants: no queue holds more commands in the controller than its bound, the controller no
    /// more than its slots, and the slots held are the queues' commands in the controller.
    pub fn check_invariants(&self) -> Result<(), String> {
        if let Some(i) = self.queues.iter().position(|q| q.max_fetched > 0 && q.fetched > q.max_fetched) {
            return Err(format!(
                "submission queue {i} has {} commands in the controller, above its bound of {}",
                self.queues[i].fetched, self.queues[i].max_fetched
            ));
        }
        if self.command_slots > 0 && self.slots_held > self.command_slots {
            return Err(format!(
                "the controller holds {} commands, above its {} command slots",
                self.slots_held, self.command_slots
            ));
        }
        let fetched: u64 = self.queues.iter().map(|q| q.fetched as u64).sum();
        if fetched != self.slots_held as u64 {
            return Err(format!(
                "{} slots held but the queues have {fetched} commands in the controller",
                self.slots_held
            ));
        }
        Ok(())
    }

    /// When a `op` command that finished its fetch at `now` may enter its path: at once unless the path
    /// started its last command less than 1/`max_{read,write}_iops` ago (a rate limit: no delay at low load).
    /// A flush moves no data and takes neither path.
    pub fn admit(&mut self, now: Time, op: Op) -> Time {
        let path = match op {
            Op::Read => 0,
            Op::Write => 1,
            Op::Flush => return now,
        };
        let interval = self.path_interval_ns[path];
        if interval == 0.0 {
            return now;
        }
        let admitted = self.path_next_at[path].max(now as f64);
        self.path_next_at[path] = admitted + interval;
        admitted.ceil() as Time
    }

    /// Bytes on the wire for `payload` bytes cut into max-payload TLPs.
    fn wire_bytes(&self, payload: u64) -> u64 {
        payload + payload.div_ceil(self.max_payload_bytes).max(1) * self.tlp_overhead_bytes
    }

    /// Time a data transfer of `bytes` needs with the direction to itself: the slower of the link (with
    /// its TLP overhead) and the controller's data path for that direction.
    pub fn data_service_ns(&self, direction: Direction, bytes: u64) -> Time {
        let path = self.path_bytes_per_s[(direction == Direction::ToDevice) as usize];
        let link_ns = self.wire_bytes(bytes) as f64 * 1e9 / self.link_bytes_per_s;
        let path_ns = bytes as f64 * 1e9 / path;
        link_ns.max(path_ns).ceil() as Time
    }

    fn link(&mut self, direction: Direction) -> &mut dyn Link {
        match direction {
            Direction::ToHost => self.to_host.as_mut(),
            Direction::ToDevice => self.to_device.as_mut(),
        }
    }

    /// Start moving `bytes` of request `req`'s data in `direction` at `now`, sharing the link with the other
    /// transfers in flight. Returns a link check to schedule (time and generation), if one is needed.
    pub fn start_transfer(&mut self, now: Time, direction: Direction, req: ReqId, bytes: u64) -> Option<(Time, u32)> {
        let service = self.data_service_ns(direction, bytes);
        let link = self.link(direction);
        link.start(now, req.0, service).map(|at| (at, link.generation()))
    }

    /// `tlps` small control TLPs carrying `bytes` in all go out in `direction` at `now`.
    pub fn control(&mut self, now: Time, direction: Direction, tlps: u64, bytes: u64) {
        if !self.control_delays_data[(direction == Direction::ToDevice) as usize] {
            return;
        }
        let wire = bytes + tlps * self.tlp_overhead_bytes;
        let service = (wire as f64 * 1e9 / self.link_bytes_per_s).ceil() as Time;
        self.link(direction).control(now, service);
    }

    /// Run a scheduled link check: the requests whose transfer finished go to `done`. Returns the next
    /// check to schedule, if any.
    pub fn check_link(
        &mut self,
        now: Time,
        direction: Direction,
        generation: u32,
        done: &mut Vec<u32>,
    ) -> Option<(Time, u32)> {
        let link = self.link(direction);
        link.check(now, generation, done).map(|at| (at, link.generation()))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};

    /// A submission queue of class `priority` holding `commands` commands.
    pub fn queue(priority: NvmePriority, commands: u32) -> SubmissionQueue {
        SubmissionQueue {
            priority,
            pending: (0..commands).map(|i| (ReqId(i), 0)).collect(),
            fetched: 0,
            max_fetched: 0,
        }
    }

    /// Let `arbiter` fetch until every queue is empty; the queue of each fetch, in order.
    pub fn drain(arbiter: &mut dyn Arbiter, queues: &mut [SubmissionQueue]) -> Vec<usize> {
        let mut order = Vec::new();
        while let Some(q) = arbiter.pick(queues, 0) {
            assert!(queues[q].pop().is_some(), "{} picked empty queue {q}", arbiter.name());
            order.push(q);
        }
        order
    }

    /// The flin-eval preset's host interface with `arbiter`.
    pub fn config(arbiter: &str) -> HostInterfaceConfig {
        let preset = crate::config::presets::find("flin-eval").expect("preset exists");
        let table: toml::Table = preset.toml.parse().expect("valid preset");
        let mut cfg: HostInterfaceConfig = table["host_interface"].clone().try_into().expect("valid section");
        cfg.arbiter = arbiter.to_string();
        cfg
    }

    #[test]
    fn every_arbiter_is_work_conserving() {
        // Random queues, classes, bounds, arrivals, fetches and completions: an arbiter picks a queue it may
        // fetch from whenever one exists, and `None` only when there is none.
        const CLASSES: [NvmePriority; 4] =
            [NvmePriority::Urgent, NvmePriority::High, NvmePriority::Medium, NvmePriority::Low];
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(4);
        for &name in arbiter_names() {
            for _ in 0..200 {
                let mut cfg = config(name);
                cfg.arbitration_burst = rng.random_range(1..5);
                cfg.wrr_high_weight = rng.random_range(1..6);
                cfg.wrr_medium_weight = rng.random_range(1..6);
                cfg.wrr_low_weight = rng.random_range(1..6);
                let mut arbiter = make_arbiter(&cfg).expect("registered name");
                assert_eq!(arbiter.name(), name);
                let mut queues: Vec<SubmissionQueue> = (0..rng.random_range(1..7))
                    .map(|_| SubmissionQueue {
                        max_fetched: rng.random_range(0..4),
                        ..queue(CLASSES[rng.random_range(0..4)], rng.random_range(0..4))
                    })
                    .collect();
                for _ in 0..100 {
                    let q = rng.random_range(0..queues.len());
                    match rng.random_range(0..4) {
                        0 => queues[q].push(ReqId(0), 0),
                        1 if queues[q].fetched > 0 => queues[q].fetched -= 1,
                        _ => {}
                    }
                    let any = queues.iter().any(SubmissionQueue::fetchable);
                    match arbiter.pick(&queues, 0) {
                        Some(q) => {
                            assert!(queues[q].fetchable(), "{name} picked a queue it may not fetch from");
                            queues[q].pop();
                        }
                        None => assert!(!any, "{name} left work waiting"),
                    }
                }
            }
        }
    }

    #[test]
    fn a_queue_at_its_bound_is_not_fetched_from_until_one_of_its_commands_completes() {
        let mut cfg = config("round-robin");
        cfg.max_fetched_per_queue = 2;
        let mut hil = HostInterface::new(&cfg, &UNBOUNDED).expect("valid");
        let (a, b) = (hil.create_queue(NvmePriority::Medium), hil.create_queue(NvmePriority::Medium));
        for i in 0..4 {
            hil.push(a, ReqId(i), 0);
        }
        hil.push(b, ReqId(9), 0);
        let fetched: Vec<u32> = std::iter::from_fn(|| hil.next_command(0, |_| 0)).map(|r| r.0).collect();
        assert_eq!(fetched, [0, 1, 9], "two of a's, then b's; a's other two wait");
        assert!(!hil.has_fetchable());
        assert!(!hil.completed(b, 0), "b had nothing waiting");
        assert!(hil.completed(a, 0), "a was at its bound with commands waiting");
        assert_eq!(hil.next_command(0, |_| 0), Some(ReqId(2)));
        assert_eq!(hil.next_command(0, |_| 0), None);
        hil.check_invariants().expect("within the bound");

        cfg.max_fetched_per_queue = 0;
        let mut unbounded = HostInterface::new(&cfg, &UNBOUNDED).expect("valid");
        let q = unbounded.create_queue(NvmePriority::Medium);
        for i in 0..1000 {
            unbounded.push(q, ReqId(i), 0);
        }
        assert_eq!(std::iter::from_fn(|| unbounded.next_command(0, |_| 0)).count(), 1000, "0: no bound");
    }

    const UNBOUNDED: ControllerConfig = ControllerConfig { command_slots: 0, firmware_cores: 1 };

    #[test]
    fn with_every_slot_held_nothing_is_fetched_until_a_completion_frees_one() {
        let cfg = config("round-robin");
        let mut hil =
            HostInterface::new(&cfg, &ControllerConfig { command_slots: 3, firmware_cores: 1 }).expect("valid");
        let (writes, reads) = (hil.create_queue(NvmePriority::Medium), hil.create_queue(NvmePriority::Medium));
        for i in 0..4 {
            hil.push(writes, ReqId(i), 0);
        }
        let fetched: Vec<u32> = std::iter::from_fn(|| hil.next_command(0, |_| 0)).map(|r| r.0).collect();
        assert_eq!(fetched, [0, 1, 2], "three slots: the fourth write waits");
        hil.push(reads, ReqId(7), 1);
        assert!(!hil.has_fetchable(), "the read waits behind the writes holding every slot");
        assert_eq!(hil.next_command(1, |_| 0), None);
        hil.check_invariants().expect("within the slots");
        assert!(hil.completed(writes, 0), "a slot freed while commands wait");
        assert_eq!(hil.slots_held(), 2);
        let next = hil.next_command(2, |_| 0).expect("a slot is free");
        assert!(next == ReqId(7) || next == ReqId(3));
        assert_eq!(hil.next_command(2, |_| 0), None, "full again");
        assert!(hil.completed(writes, 0), "the other command still waits");
        assert!(hil.next_command(3, |_| 0).is_some());
        assert!(!hil.completed(writes, 0), "nothing waits any more");
        hil.check_invariants().expect("within the slots");
    }

    #[test]
    fn fetching_stops_once_the_held_commands_data_reaches_the_bound() {
        let mut hil = HostInterface::new(&config("round-robin"), &UNBOUNDED).expect("valid");
        let q = hil.create_queue(NvmePriority::Medium);
        for i in 0..4 {
            hil.push(q, ReqId(i), 0);
        }
        let half = MAX_BYTES_HELD / 2;
        let fetched = std::iter::from_fn(|| hil.next_command(0, |_| half)).count();
        assert_eq!(fetched, 2, "two halves reach the bound");
        assert!(hil.completed(q, half), "a command's data freed: fetching resumes");
        assert!(hil.next_command(0, |_| 3 * MAX_BYTES_HELD).is_some(), "below the bound: even a huge one");
        assert_eq!(hil.next_command(0, |_| 0), None);
    }

    /// Two closed-loop readers on their own cores, so on their own submission queues.
    const TWO_QUEUES: &str = r#"
[run]
duration = "5ms"
[device]
preset = "optane-ull"
[[flow]]
name = "a"
rw = "randread"
iodepth = 16
cpus_allowed = "0"
[[flow]]
name = "b"
rw = "randread"
iodepth = 16
cpus_allowed = "1"
"#;

    fn load(overrides: &[&str]) -> Result<crate::Scenario, crate::config::ConfigError> {
        let overrides: Vec<String> = overrides.iter().map(|o| o.to_string()).collect();
        crate::Scenario::from_toml_str(TWO_QUEUES, "t", std::path::Path::new("."), &overrides)
    }

    fn json(overrides: &[&str]) -> String {
        let results = crate::run_scenario(&load(overrides).expect("valid")).expect("runs");
        serde_json::to_string(&results).expect("serializes")
    }

    #[test]
    fn weighted_round_robin_over_one_class_is_round_robin() {
        // Every queue the host creates is `medium`: weighted round robin is then round robin with turns of
        // min(burst, medium weight), fetch for fetch.
        let rr = json(&["device.host_interface.arbitration_burst=2"]);
        let wrr =
            json(&["device.host_interface.arbiter=weighted-round-robin", "device.host_interface.wrr_medium_weight=2"]);
        assert_eq!(rr, wrr);
        let wrr_weight_one =
            json(&["device.host_interface.arbiter=weighted-round-robin", "device.host_interface.wrr_medium_weight=1"]);
        assert_ne!(wrr, wrr_weight_one, "turns of 1 and of 2 fetches should differ somewhere");
    }

    #[test]
    fn wrr_weights_are_checked_and_named() {
        for key in ["wrr_high_weight", "wrr_medium_weight", "wrr_low_weight"] {
            for bad in ["0", "257", "-1", "\"4\""] {
                let message = load(&[&format!("device.host_interface.{key}={bad}")]).expect_err(bad).to_string();
                assert!(message.contains(&format!("device.host_interface.{key}")), "{message}");
            }
            assert!(load(&[&format!("device.host_interface.{key}=256")]).is_ok());
        }
        let message = load(&["device.host_interface.wrr_low_weight=0"]).unwrap_err().to_string();
        assert!(message.contains("from 1 to 256"), "{message}");
        let message = load(&["device.host_interface.arbiter=wrr"]).unwrap_err().to_string();
        assert!(message.contains("weighted-round-robin"), "{message}");
    }
}
