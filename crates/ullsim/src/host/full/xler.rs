//! FlashShare's I/O-stack accelerator (XLER; OSDI'18 §3.4, §4.3, Figs. 7 and 10), `host.xler`: its driver
//! sits above blk-mq and takes the requests of latency-critical flows. It writes each one's operation, LBA,
//! size and data segments into the accelerator's BAR registers (`submit_ns` of CPU) and is done: the
//! accelerator composes the NVMe command, appends it to the core's (urgent) submission queue and rings the
//! SSD's doorbell (`issue_ns`, no CPU), so the request takes no blk-mq tag, scheduler, plug or
//! `nvme_queue_rq`. The accelerator polls the completion queue (`poll_ns` until it notices the entry, no
//! core spins: the task sleeps), then raises an interrupt of its own per completion, to the core that takes
//! the request's NVMe completion queue's interrupts; its driver's handler pays the interrupt's entry and exit (`nvme.isr_ns`), its own completion work (`complete_ns`,
//! instead of `nvme.cqe_ns` and `block.complete_ns`) and the task's wake-up, which then pays its context
//! switch as any woken task does. The accelerator's CAM merge of a bio into a queued command of the same
//! LBA is not modeled: every request is a command of its own.

use super::*;
use crate::config::host::XlerConfig;

pub(super) struct Xler {
    submit_ns: Time,
    issue_ns: Time,
    poll_ns: Time,
    complete_ns: Time,
    /// Handler runs of the accelerator's interrupts: each interrupt is a run of its own (a core runs them
    /// one after another), kept here to be reused once over.
    runs: Vec<u32>,
    /// Interrupts the accelerator raised.
    pub(super) interrupts: u64,
}

impl Xler {
    /// The accelerator, if `cfg` enables it.
    pub(super) fn new(cfg: &XlerConfig) -> Option<Xler> {
        cfg.enabled.then(|| Xler {
            submit_ns: cfg.submit_ns.0,
            issue_ns: cfg.issue_ns.0,
            poll_ns: cfg.poll_ns.0,
            complete_ns: cfg.complete_ns.0,
            runs: Vec::new(),
            interrupts: 0,
        })
    }
}

/// How a job of `class` waits: its requests go through the accelerator if it is on and the class is
/// critical, else as `completion` says.
pub(super) fn job_wait_mode(
    cfg: &XlerConfig,
    completion: &dyn CompletionPolicy,
    class: Class,
    hipri: bool,
) -> WaitMode {
    if cfg.enabled && class.criticality == Criticality::Critical {
        WaitMode::Accelerator
    } else {
        completion.mode(class, hipri)
    }
}

impl FullHost {
    /// Hand request `req` of a job that waits for the accelerator to it from `at`, on hardware queue `hwq`;
    /// returns when the submitting core is done, or `None` if the accelerator does not take it (a flush, or
    /// a request above `max_sectors_kb`, which blk-mq would split): it then takes the normal path and
    /// completes by interrupt.
    pub(super) fn submit_to_accelerator(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        req: ReqId,
        hwq: u32,
        at: Time,
    ) -> Option<Time> {
        let x = self.xler.as_ref()?;
        let r = &requests[req];
        if r.op == Op::Flush || u64::from(r.len) > self.max_request_bytes {
            self.reqs[req.index()].mode = WaitMode::Interrupt;
            return None;
        }
        let written = at + x.submit_ns;
        let doorbell = written + x.issue_ns;
        // No blk-mq: the block layer's part is empty, the driver's is the register writes and the accelerator.
        self.ring_one(q, requests, devices, Dispatched { id: req, hwq, at, done: doorbell }, doorbell);
        Some(written)
    }

    /// The device posted the entry of accelerator request `req` now: the accelerator notices it and
    /// interrupts its driver.
    pub(super) fn accelerator_interrupt(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        req: ReqId,
    ) {
        let hwq = self.reqs[req.index()].hwq;
        let Some(x) = self.xler.as_mut() else { return };
        x.interrupts += 1;
        let raised = q.now() + x.poll_ns;
        let run = match x.runs.iter().find(|&&r| !self.isr[r as usize].active) {
            Some(&r) => r,
            None => {
                self.isr.push(IsrRun::default());
                x.runs.push(self.isr.len() as u32 - 1);
                self.isr.len() as u32 - 1
            }
        };
        let mut entries = std::mem::take(&mut self.scratch);
        entries.push(req);
        self.interrupt_run(q, requests, devices, run, self.nvme.irq_core(hwq), raised, &mut entries);
        self.scratch = entries;
    }

    /// The accelerator driver's completion work for `req`, if it is the accelerator's.
    pub(super) fn xler_complete_ns(&self, req: ReqId) -> Option<Time> {
        let x = self.xler.as_ref()?;
        (self.reqs[req.index()].mode == WaitMode::Accelerator).then_some(x.complete_ns)
    }
}
