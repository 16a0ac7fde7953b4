//! The device-only host (`host.model = "device-only"`): no host time at all, for comparing the device model
//! with device-only simulators such as MQSim, whose host puts each request in its flow's submission queue.
//!
//! Each flow gets one NVMe submission queue of its own on each drive it targets (`flow.device`: a drive, or
//! a list of drives), created with the flow's priority class (`prio`), in list order. An
//! I/O is written into it and its doorbell rung the instant the application issues it, and the flow sees it
//! completed the instant the device posts its completion entry: no system call, block layer, I/O scheduler,
//! driver, interrupt, CPU or context switch, so no CPU contention either. Like the full host, it keeps at
//! most `queue_depth − 1` commands of a queue in the device (its drive's `queue_depth`); an I/O issued while its flow's queue on its drive
//! is full waits, in issue order, for a completion of that queue to free a slot (MQSim's host does the same). That
//! wait, and an open-loop arrival's wait in the workload's backlog, is the only time before the device.
//! (Of the commands in the queue, the controller holds at most `max_fetched_per_queue`: see `device::hil`.)
//!
//! Stamps: `block_entered` when the I/O is issued, `driver_entered` = `submitted` when it enters the
//! submission queue, and `woken` = `running` = `completed` = `device_done`; so the breakdown's `driver`,
//! `completion` and `cpu_wait` are exactly 0 and `block` is the wait for a slot.

use std::collections::VecDeque;

use super::block::BlockResults;
use super::queue::HostQueue;
use super::results::{FlowHost, HostCounters, HostNames, HostResults};
use crate::config::host::HostModel;
use crate::config::scenario::FlowSpec;
use crate::config::target::{target_of, Target};
use crate::device::Device;
use crate::engine::Time;
use crate::request::{ReqId, RequestArena};

/// One flow's submission queue on one drive.
struct FlowQueue {
    /// The drive the queue is on, by index.
    drive: u32,
    /// The queue's index on its drive.
    device_queue: u32,
    /// Most commands of the queue in the device (its drive's `queue_depth − 1`: NVMe keeps one entry empty).
    slots: u32,
    /// The flow's commands in the submission queue or in the device.
    in_device: u32,
    /// I/O issued while the queue was full, oldest first.
    waiting: VecDeque<ReqId>,
}

pub struct DeviceOnlyHost {
    /// By flow, its queues in the order of its drives.
    queues: Vec<Vec<FlowQueue>>,
    /// The job of each request in flight, by request id (the application is told which job's I/O completed).
    job_of: Vec<u32>,
    /// Issued since the last `run_ready` (all at the current instant).
    issued: Vec<ReqId>,
    /// Completed by the device since the last `run_ready`: (request, flow, job).
    completed: Vec<(ReqId, u32, u32)>,
}

impl DeviceOnlyHost {
    /// One submission queue per flow on each of the flow's drives of `devices`, with the flow's priority class.
    pub fn new(flows: &[FlowSpec], devices: &mut [Device]) -> Result<DeviceOnlyHost, String> {
        if let Some(flow) = flows.iter().find(|f| f.is_cpu_only()) {
            return Err(format!(
                "flow \"{}\": ioengine = \"cpuio\" burns CPU, and host.model = \"device-only\" has no CPU",
                flow.name
            ));
        }
        for flow in flows {
            let resolved = crate::workload::app::resolve(flow).ok();
            let spec = resolved.as_deref().unwrap_or(flow);
            for (key, set) in
                [("thinktime_spin", spec.thinktime_spin.is_some()), ("response_cpu", spec.response_cpu.is_some())]
            {
                if set {
                    let by = spec.app.as_ref().map_or(String::new(), |app| format!(" (set by app = \"{app}\")"));
                    return Err(format!(
                        "flow \"{}\": {key}{by} burns CPU, and host.model = \"device-only\" has no CPU",
                        flow.name
                    ));
                }
            }
        }
        let mut queues = Vec::with_capacity(flows.len());
        for flow in flows {
            let drives = match target_of(flow, devices.len() as u32) {
                Ok(Target::Drives(drives)) => drives,
                Ok(Target::Md) => {
                    return Err(format!("flow \"{}\": device: \"md0\" needs the host's md driver", flow.name))
                }
                Err(what) => return Err(format!("flow \"{}\": device: {what}", flow.name)),
            };
            let queue = |drive: u32| FlowQueue {
                drive,
                device_queue: devices[drive as usize].create_queue(flow.prio),
                slots: devices[drive as usize].queue_depth().saturating_sub(1).max(1),
                in_device: 0,
                waiting: VecDeque::new(),
            };
            queues.push(drives.into_iter().map(queue).collect());
        }
        Ok(DeviceOnlyHost { queues, job_of: Vec::new(), issued: Vec::new(), completed: Vec::new() })
    }

    /// The application issued `req` on job `job` now; it enters its queue at the next `run_ready`, which the
    /// simulation calls at this same instant.
    pub fn submit(&mut self, job: u32, req: ReqId) {
        let i = req.index();
        if self.job_of.len() <= i {
            self.job_of.resize(i + 1, 0);
        }
        self.job_of[i] = job;
        self.issued.push(req);
    }

    /// Write what was issued into the submission queues, and hand what completed to the application.
    pub fn run_ready(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        delivered: &mut Vec<(ReqId, u32, u32)>,
    ) {
        // Most calls (one per event) find nothing to do.
        if self.issued.is_empty() && self.completed.is_empty() {
            return;
        }
        let now = q.now();
        for req in self.issued.drain(..) {
            requests[req].stamps.block_entered = now;
            let queue = queue_of(&mut self.queues, requests[req].flow, requests[req].drive);
            if queue.in_device < queue.slots {
                write_command(q, requests, devices, queue, req);
            } else {
                queue.waiting.push_back(req);
            }
        }
        // Most calls have nothing to hand over: skip append's reserve and copy.
        if !self.completed.is_empty() {
            delivered.append(&mut self.completed);
        }
    }

    /// The device posted `req`'s completion entry now: the flow sees it now, and its slot takes the flow's
    /// oldest waiting I/O.
    pub fn on_device_completion(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        req: ReqId,
    ) {
        let now = q.now();
        let r = &mut requests[req];
        r.stamps.woken = now;
        r.stamps.running = now;
        r.stamps.completed = now;
        let flow = r.flow;
        let queue = queue_of(&mut self.queues, flow, r.drive);
        queue.in_device -= 1;
        if let Some(next) = queue.waiting.pop_front() {
            write_command(q, requests, devices, queue, next);
        }
        self.completed.push((req, flow, self.job_of[req.index()]));
    }

    /// The cumulative counters at `at`: no cores, no CPU time, no interrupts, no block layer.
    pub fn counters(&mut self, at: Time) -> HostCounters {
        HostCounters {
            at,
            cores: Vec::new(),
            flow_cpu: vec![Vec::new(); self.queues.len()],
            interrupts: 0,
            block: BlockResults::zero("none"),
            fs: None,
        }
    }

    /// Host results between the snapshots `since` and `now`: all empty or zero, named "none".
    pub fn results(&self, since: &HostCounters, now: &HostCounters) -> (HostResults, Vec<FlowHost>) {
        let names = HostNames { model: HostModel::DeviceOnly, cpu_scheduler: "none".into(), completion: "none".into() };
        since.until(now, names)
    }

    /// Model invariants: no queue holds more than its slots, and nothing waits while a slot is free.
    pub fn check_invariants(&self) -> Result<(), String> {
        for (flow, queues) in self.queues.iter().enumerate() {
            for queue in queues {
                let drive = queue.drive;
                if queue.in_device > queue.slots {
                    return Err(format!(
                        "flow {flow} has {} commands in drive {drive}, above its queue's {} slots",
                        queue.in_device, queue.slots
                    ));
                }
                if !queue.waiting.is_empty() && queue.in_device < queue.slots {
                    return Err(format!(
                        "flow {flow} has I/O waiting while its submission queue on drive {drive} has a free slot"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// `flow`'s queue on `drive`: a flow has a queue on each drive of its list, so few that a scan finds it.
fn queue_of(queues: &mut [Vec<FlowQueue>], flow: u32, drive: u32) -> &mut FlowQueue {
    let queues = &mut queues[flow as usize];
    let i = queues.iter().position(|q| q.drive == drive).expect("requests go to one of their flow's drives");
    &mut queues[i]
}

/// Write `req` into `queue` and ring its doorbell now.
fn write_command(
    q: &mut impl HostQueue,
    requests: &mut RequestArena,
    devices: &mut [Device],
    queue: &mut FlowQueue,
    req: ReqId,
) {
    let now = q.now();
    let stamps = &mut requests[req].stamps;
    stamps.driver_entered = now;
    stamps.submitted = now;
    queue.in_device += 1;
    devices[queue.drive as usize].ring_doorbell(q, req, queue.device_queue, now);
}
