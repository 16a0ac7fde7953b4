//! The host interface: NVMe submission queues, the controller's command fetch with pluggable arbitration,
//! and the PCIe link. One file per arbiter; add one by adding a file and a line in [`make_arbiter`].

mod round_robin;

use std::collections::VecDeque;

use crate::config::device::HostInterfaceConfig;
use crate::engine::Time;
use crate::request::{NvmePriority, ReqId};

/// One NVMe submission queue as the controller sees it.
#[derive(Debug)]
pub struct SubmissionQueue {
    /// QPRIO, fixed when the queue is created (used by weighted round robin).
    pub priority: NvmePriority,
    pending: VecDeque<ReqId>,
}

impl SubmissionQueue {
    /// Commands the controller has not fetched yet.
    pub fn len(&self) -> usize {
        self.pending.len()
    }
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}

/// Chooses the submission queue the controller fetches the next command from.
pub trait Arbiter {
    fn name(&self) -> &'static str;
    /// Index of a non-empty queue, or `None` when all are empty.
    fn pick(&mut self, queues: &[SubmissionQueue]) -> Option<usize>;
}

/// Names accepted by `device.host_interface.arbiter`.
pub fn arbiter_names() -> &'static [&'static str] {
    &["round-robin"]
}

/// Build the arbiter called `name`.
pub fn make_arbiter(name: &str, burst: u32) -> Option<Box<dyn Arbiter>> {
    match name {
        "round-robin" => Some(Box::new(round_robin::RoundRobin::new(burst))),
        _ => None,
    }
}

/// Submission queues, the arbiter, and the two directions of the PCIe link.
pub struct HostInterface {
    queues: Vec<SubmissionQueue>,
    arbiter: Box<dyn Arbiter>,
    pub doorbell_ns: Time,
    pub command_fetch_ns: Time,
    pub command_process_ns: Time,
    pub completion_ns: Time,
    link_bytes_per_s: f64,
    to_host_free_at: Time,
    to_device_free_at: Time,
}

impl HostInterface {
    pub fn new(cfg: &HostInterfaceConfig) -> Result<Self, String> {
        let arbiter = make_arbiter(&cfg.arbiter, cfg.arbitration_burst)
            .ok_or_else(|| format!("device.host_interface.arbiter: unknown arbiter \"{}\"", cfg.arbiter))?;
        Ok(HostInterface {
            queues: Vec::new(),
            arbiter,
            doorbell_ns: cfg.doorbell_ns.0,
            command_fetch_ns: cfg.command_fetch_ns.0,
            command_process_ns: cfg.command_process_ns.0,
            completion_ns: cfg.completion_ns.0,
            link_bytes_per_s: cfg.pcie_lanes as f64 * cfg.pcie_lane_bytes_per_s,
            to_host_free_at: 0,
            to_device_free_at: 0,
        })
    }

    /// Create a submission queue; returns its index.
    pub fn create_queue(&mut self, priority: NvmePriority) -> u32 {
        self.queues.push(SubmissionQueue { priority, pending: VecDeque::new() });
        (self.queues.len() - 1) as u32
    }

    pub fn push(&mut self, queue: u32, req: ReqId) {
        self.queues[queue as usize].pending.push_back(req);
    }

    /// Whether any submission queue holds a command not fetched yet.
    pub fn has_pending(&self) -> bool {
        self.queues.iter().any(|q| !q.is_empty())
    }

    /// Arbitrate and take the next command, if any is waiting.
    pub fn next_command(&mut self) -> Option<ReqId> {
        let q = self.arbiter.pick(&self.queues)?;
        self.queues[q].pending.pop_front()
    }

    fn transfer_ns(&self, bytes: u64) -> Time {
        (bytes as f64 * 1e9 / self.link_bytes_per_s).ceil() as Time
    }

    /// DMA `bytes` device -> host starting no earlier than `earliest`; returns when it ends (FCFS link).
    pub fn transfer_to_host(&mut self, earliest: Time, bytes: u64) -> Time {
        let d = self.transfer_ns(bytes);
        reserve(&mut self.to_host_free_at, earliest, d)
    }

    /// DMA `bytes` host -> device starting no earlier than `earliest`; returns when it ends (FCFS link).
    pub fn transfer_to_device(&mut self, earliest: Time, bytes: u64) -> Time {
        let d = self.transfer_ns(bytes);
        reserve(&mut self.to_device_free_at, earliest, d)
    }
}

/// Reserve a first-come-first-served resource free from `*free_at` for `duration` from `earliest` on;
/// returns the end. FCFS in reservation order; a DRAM-hit read reserves `dram_access_ns` ahead, the only
/// (small, bounded) departure from time order.
fn reserve(free_at: &mut Time, earliest: Time, duration: Time) -> Time {
    let start = earliest.max(*free_at);
    *free_at = start + duration;
    start + duration
}
