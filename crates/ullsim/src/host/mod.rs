//! The host side of the I/O path, in one of two models (`host.model`):
//!
//! - [`full::FullHost`] (`"full"`): the application's tasks on CPU cores, the system call, blk-mq with its
//!   I/O scheduler, the NVMe driver, and interrupts or polling on the way back.
//! - [`device_only::DeviceOnlyHost`] (`"device-only"`): no host time at all; each flow's I/O goes straight
//!   into the flow's own submission queue and completes the instant the device posts it (MQSim's host), for
//!   comparing the device model with device-only simulators.
//!
//! The seam to the device is `Device::ring_doorbell` down and [`Host::on_device_completion`] up; the
//! simulation talks to either model through [`Host`].

pub mod block;
pub mod check;
pub mod completion;
pub mod cpu;
pub mod device_only;
pub mod fs;
pub mod full;
pub mod nvme;
pub mod queue;
mod results;
pub mod syscall;

use crate::config::{host::HostModel, Scenario};
use crate::device::Device;
use crate::engine::Time;
use crate::request::{ReqId, RequestArena};
use cpu::{CpuEvent, TaskId};
use device_only::DeviceOnlyHost;
use full::FullHost;
pub use results::{CpuUse, FlowHost, HostCounters, HostResults};

/// Events the host schedules for itself (only the full host has any).
#[derive(Debug, Clone, Copy)]
pub enum HostEvent {
    Cpu(CpuEvent),
    /// Handler run `hwq` (generation `gen`) ends: a hardware queue's interrupt handler, or see `full.rs`.
    IrqDone {
        hwq: u32,
        gen: u32,
    },
    /// Interrupt coalescing timer of `hwq`.
    CoalesceTimer {
        hwq: u32,
        gen: u32,
    },
    /// A sleeping task's timer (hybrid polling's sleep, a CPU burner's pause, a start delay).
    TimerWake {
        task: TaskId,
        gen: u32,
    },
    /// The I/O scheduler's timer (bfq's idle slice) may be due.
    BlockTimer,
}

/// The host of a run, in the model `host.model` names. One per simulation, so the size difference of the
/// variants costs nothing, while a box would add an indirection on every event.
#[allow(clippy::large_enum_variant)]
pub enum Host {
    Full(FullHost),
    DeviceOnly(DeviceOnlyHost),
}

impl Host {
    /// Build the host of `scenario` on `devices`: its queues, and for the full host its cores and tasks.
    pub fn new(scenario: &Scenario, devices: &mut [Device]) -> Result<Host, String> {
        Ok(match scenario.host.model {
            HostModel::Full => Host::Full(FullHost::new(scenario, devices)?),
            HostModel::DeviceOnly => Host::DeviceOnly(DeviceOnlyHost::new(&scenario.flows, devices)?),
        })
    }

    /// Start what runs on its own from the beginning (the full host's CPU burners and sqpoll threads).
    pub fn start(&mut self, q: &mut impl queue::HostQueue) {
        match self {
            Host::Full(h) => h.start(q),
            Host::DeviceOnly(_) => {}
        }
    }

    /// The application (job `job` of flow `flow`) issued `req` now.
    pub fn submit(&mut self, q: &mut impl queue::HostQueue, flow: u32, job: u32, req: ReqId) {
        match self {
            Host::Full(h) => h.submit(q, flow, job, req),
            Host::DeviceOnly(h) => h.submit(job, req),
        }
    }

    /// A drive posted `req`'s completion entry now (the host knows which from the queue it put `req` in).
    pub fn on_device_completion(
        &mut self,
        q: &mut impl queue::HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        req: ReqId,
    ) {
        match self {
            Host::Full(h) => h.on_device_completion(q, requests, devices, req),
            Host::DeviceOnly(h) => h.on_device_completion(q, requests, devices, req),
        }
    }

    /// Handle a host event.
    pub fn handle(
        &mut self,
        event: HostEvent,
        q: &mut impl queue::HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
    ) {
        match self {
            Host::Full(h) => h.handle(event, q, requests, devices),
            Host::DeviceOnly(_) => unreachable!("the device-only host schedules no events, got {event:?}"),
        }
    }

    /// Move what can move at this instant: requests the application now sees completed are appended to
    /// `delivered` with their flow and job; call again once the application issued what follows.
    pub fn run_ready(
        &mut self,
        q: &mut impl queue::HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        delivered: &mut Vec<(ReqId, u32, u32)>,
    ) {
        match self {
            Host::Full(h) => h.run_ready(q, requests, devices, delivered),
            Host::DeviceOnly(h) => h.run_ready(q, requests, devices, delivered),
        }
    }

    /// The cumulative counters at `at`.
    pub fn counters(&mut self, at: Time) -> HostCounters {
        match self {
            Host::Full(h) => h.counters(at),
            Host::DeviceOnly(h) => h.counters(at),
        }
    }

    /// Host results between the snapshots `since` and `now`, and what the host measured of each flow.
    pub fn results(&self, since: &HostCounters, now: &HostCounters) -> (HostResults, Vec<FlowHost>) {
        match self {
            Host::Full(h) => h.results(since, now),
            Host::DeviceOnly(h) => h.results(since, now),
        }
    }

    /// Model invariants (the full host's tags, the device-only host's queue slots).
    pub fn check_invariants(&self) -> Result<(), String> {
        match self {
            Host::Full(h) => h.check_invariants(),
            Host::DeviceOnly(h) => h.check_invariants(),
        }
    }
}
