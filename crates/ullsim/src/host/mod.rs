//! The host side of the I/O path. For now a minimal host: fixed submit and completion costs and NVMe queue
//! pairs (one per flow by default). The seam to the device is `Device::ring_doorbell` on the way down and
//! `on_device_completion` on the way up; the real host stack (CPU, blk-mq, schedulers, driver, interrupts
//! and polling) replaces this module behind the same two calls.

use std::collections::VecDeque;

use crate::config::HostConfig;
use crate::device::Device;
use crate::engine::{EventQueue, Time};
use crate::request::{NvmePriority, ReqId, RequestArena};
use crate::sim::Event;

/// Events the host schedules for itself.
#[derive(Debug, Clone, Copy)]
pub enum HostEvent {
    /// The completion has been processed and the application sees the result.
    Delivered { req: ReqId },
}

struct QueuePair {
    device_queue: u32,
    in_flight: u32,
    waiting: VecDeque<ReqId>,
}

pub struct MinimalHost {
    submit_ns: Time,
    complete_ns: Time,
    /// Commands a queue pair holds at once (the SQ size less the one slot NVMe keeps empty).
    queue_slots: u32,
    queues: Vec<QueuePair>,
    /// The queue pair each flow submits to.
    queue_of_flow: Vec<u32>,
}

impl MinimalHost {
    /// Create the queue pairs on `device` (one per flow unless `queue_pairs` says otherwise); a queue takes
    /// the NVMe priority of the first flow that uses it.
    pub fn new(cfg: &HostConfig, flow_priorities: &[NvmePriority], queue_depth: u32, device: &mut Device) -> Self {
        let count = if cfg.queue_pairs == 0 { flow_priorities.len() } else { cfg.queue_pairs as usize };
        let queue_of_flow: Vec<u32> = (0..flow_priorities.len()).map(|f| (f % count) as u32).collect();
        let queues = (0..count)
            .map(|q| {
                let priority = flow_priorities.get(q).copied().unwrap_or_default();
                QueuePair { device_queue: device.create_queue(priority), in_flight: 0, waiting: VecDeque::new() }
            })
            .collect();
        MinimalHost {
            submit_ns: cfg.submit_ns.0,
            complete_ns: cfg.complete_ns.0,
            queue_slots: queue_depth.saturating_sub(1).max(1),
            queues,
            queue_of_flow,
        }
    }

    /// The application issued `req` now.
    pub fn submit(&mut self, q: &mut EventQueue<Event>, requests: &mut RequestArena, device: &mut Device, req: ReqId) {
        let pair = &mut self.queues[self.queue_of_flow[requests[req].flow as usize] as usize];
        if pair.in_flight >= self.queue_slots {
            pair.waiting.push_back(req);
            return;
        }
        self.send(q, requests, device, req, q.now());
    }

    fn send(
        &mut self,
        q: &mut EventQueue<Event>,
        requests: &mut RequestArena,
        device: &mut Device,
        req: ReqId,
        at: Time,
    ) {
        let pair = &mut self.queues[self.queue_of_flow[requests[req].flow as usize] as usize];
        pair.in_flight += 1;
        let written = at + self.submit_ns;
        requests[req].stamps.submitted = written;
        device.ring_doorbell(q, req, pair.device_queue, written);
    }

    /// The device posted `req`'s completion now.
    pub fn on_device_completion(
        &mut self,
        q: &mut EventQueue<Event>,
        requests: &mut RequestArena,
        device: &mut Device,
        req: ReqId,
    ) {
        q.schedule_in(self.complete_ns, Event::Host(HostEvent::Delivered { req }));
        let pair = &mut self.queues[self.queue_of_flow[requests[req].flow as usize] as usize];
        pair.in_flight -= 1;
        if let Some(next) = pair.waiting.pop_front() {
            self.send(q, requests, device, next, q.now());
        }
    }

    /// Handle a host event; returns the request delivered to the application, if any.
    pub fn handle(&mut self, event: HostEvent, now: Time, requests: &mut RequestArena) -> Option<ReqId> {
        match event {
            HostEvent::Delivered { req } => {
                requests[req].stamps.completed = now;
                Some(req)
            }
        }
    }
}
