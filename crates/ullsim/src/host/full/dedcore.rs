//! DedCore (FlashShare, OSDI'18 §5), `host.completion = "dedcore"`: the last core is taken from the CPU
//! scheduler (no task runs there) and spins on the completion queues for the requests of latency-critical
//! flows, whose tasks sleep. It notices an entry `cpu.poll_loop_ns` after it is posted (at once if it is
//! still busy with earlier ones: it looks again when done), runs the driver's and the block layer's
//! completion (`nvme.cqe_ns`, `block.complete_ns`), then tells the task's core: `dedcore.notify_ns` for the
//! cross-core traffic the paper names (cache lines moving between cores, the spin lock) plus the wake-up
//! itself (`cpu.wakeup_ns`). The task's core then leaves idle and switches to it as for any wake-up. The
//! polling core is 100% busy: its time is polling except for that completion work (kernel).

use super::*;
use crate::config::host::HostConfig;
use crate::host::cpu::CoreTime;

pub(super) struct DedicatedCore {
    core: u32,
    notify_ns: Time,
    /// Its handler run (the completion work it does for a batch of entries).
    run: u32,
    /// The span of its current (or last) batch of completion work.
    batch_start: Time,
    batch_end: Time,
    /// Completion work booked so far, the current batch's included, ns.
    work_ns: Time,
}

impl DedicatedCore {
    /// The polling core, if `cfg` asks for one, with its handler run after the `runs` the host has; returns
    /// the runs the host has then.
    pub(super) fn new(cfg: &HostConfig, runs: u32) -> (Option<DedicatedCore>, u32) {
        let Some(core) = cfg.dedicated_poll_core() else { return (None, runs) };
        let d = DedicatedCore {
            core,
            notify_ns: cfg.dedcore.notify_ns.0,
            run: runs,
            batch_start: 0,
            batch_end: 0,
            work_ns: 0,
        };
        (Some(d), runs + 1)
    }

    /// The core's time up to `at`: polling, but for its completion work before `at`.
    pub(super) fn core_time(&self, at: Time) -> CoreTime {
        let after = self.batch_end.saturating_sub(self.batch_start.max(at));
        let kernel_ns = self.work_ns - after;
        CoreTime { user_ns: 0, kernel_ns, poll_ns: at.saturating_sub(kernel_ns), context_switches: 0 }
    }

    pub(super) fn core(&self) -> u32 {
        self.core
    }
}

impl FullHost {
    /// The device posted the entry of `req`, which DedCore's polling core completes.
    pub(super) fn dedicated_core_completion(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        req: ReqId,
    ) {
        let now = q.now();
        let Some(d) = self.dedcore.as_ref() else { return };
        let (run, core, notify_ns) = (d.run, d.core, d.notify_ns);
        let (joins, from) = match self.run_in_progress(run, now) {
            Some(end) => (true, end),
            None => (false, now + self.costs.poll_loop_ns),
        };
        let mut entries = std::mem::take(&mut self.scratch);
        entries.push(req);
        let end = self.complete_in_run(q, requests, devices, run, core, &mut entries, from, notify_ns);
        self.scratch = entries;
        let d = self.dedcore.as_mut().expect("checked above");
        if !joins {
            d.batch_start = from;
        }
        d.work_ns += end - from;
        d.batch_end = end;
    }
}
