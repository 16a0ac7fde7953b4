//! The full host's completion path: a completion entry the device posted, the interrupt handler (or a poll
//! loop) that processes it, the block layer's completion (which may dispatch waiting requests), and the
//! request handed back to whoever waits for it: the application's task, or the file system.

use super::*;

/// Take the stamps of the layers below the block layer from the request that went down for `to`.
pub(super) fn copy_lower_stamps(from: &Stamps, to: &mut Stamps) {
    to.driver_entered = from.driver_entered;
    to.submitted = from.submitted;
    to.device_arrival = from.device_arrival;
    to.device_fetched = from.device_fetched;
    to.device_internal_wait = from.device_internal_wait;
    to.device_done = from.device_done;
    to.woken = from.woken;
    to.running = from.running;
}

impl FullHost {
    /// The device posted `req`'s completion entry now.
    pub fn on_device_completion(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        req: ReqId,
    ) {
        let now = q.now();
        let r = self.reqs[req.index()];
        // The entry goes to the completion queue of the request's submission queue (FlashShare's two SQs of a
        // core share one).
        let cq = self.nvme.cq_of(r.hwq);
        match r.mode {
            WaitMode::Interrupt => match self.nvme.on_completion_entry(cq, req, now) {
                IrqAction::Fire => self.fire_irq(q, requests, devices, cq),
                IrqAction::ArmTimer(at) => {
                    let gen = self.nvme.timer_gen(cq);
                    q.schedule_at(at, HostEvent::CoalesceTimer { hwq: cq, gen });
                }
                IrqAction::Wait => {}
            },
            WaitMode::Accelerator => self.accelerator_interrupt(q, requests, devices, req),
            WaitMode::DedicatedCore => self.dedicated_core_completion(q, requests, devices, req),
            WaitMode::Poll | WaitMode::Hybrid => {
                let done = &requests[req];
                let service = done.stamps.device_done.saturating_sub(done.stamps.submitted);
                self.completion.observe(done.op, done.len, service);
                let job = &mut self.jobs[r.job as usize];
                job.found.push_back(req);
                let poller = job.sqpoll.unwrap_or(job.task);
                if self.cpu.is_spinning(poller) {
                    if poller == job.task {
                        job.waiting = Waiting::No;
                    }
                    self.cpu.stop_spin(now, poller);
                    self.kicked.push(poller);
                }
            }
        }
    }

    /// Raise hardware queue `hwq`'s interrupt now: its handler completes every pending entry.
    pub(super) fn fire_irq(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        hwq: u32,
    ) {
        let mut entries = std::mem::take(&mut self.scratch);
        self.nvme.fire(hwq, &mut entries);
        let core = self.nvme.irq_core(hwq);
        self.interrupt_run(q, requests, devices, hwq, core, q.now(), &mut entries);
        self.scratch = entries;
    }

    /// An interrupt raised at `raised` on `core` for handler run `run` (an NVMe vector's or the
    /// accelerator's) completes `entries`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn interrupt_run(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        run: u32,
        core: u32,
        raised: Time,
        entries: &mut Vec<ReqId>,
    ) {
        // A handler still running processes new entries in the same run.
        let (start, work_from) = match self.run_in_progress(run, raised) {
            Some(end) => (end, end),
            None => {
                let start = self.cpu.irq_start(core, raised + self.nvme.irq_delivery_ns);
                (start, start + self.nvme.isr_ns)
            }
        };
        let end = self.complete_in_run(q, requests, devices, run, core, entries, work_from, 0);
        self.cpu.book_irq(core, start, end - start);
    }

    /// When handler run `run` ends, if it is still running at `at` (new entries then join it).
    pub(super) fn run_in_progress(&self, run: u32, at: Time) -> Option<Time> {
        let r = &self.isr[run as usize];
        (r.active && r.end > at).then_some(r.end)
    }

    /// Complete `entries` in handler run `run` on `core` from `at`: per entry the driver's work, `extra_ns`, a wake-up
    /// per sleeping task and the block layer's completion. Their tasks are told when the run ends, which is
    /// returned.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn complete_in_run(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        run: u32,
        core: u32,
        entries: &mut Vec<ReqId>,
        at: Time,
        extra_ns: Time,
    ) -> Time {
        let mut t = at;
        let mut woken = std::mem::take(&mut self.woken_in_irq);
        for &req in entries.iter() {
            t += self.cqe_ns_of(requests, req) + extra_ns;
            let task = self.waiter_of(req);
            // Waking a sleeping task costs once per handler run, however many of its requests complete.
            if self.cpu.is_sleeping(task) && !woken.contains(&task) {
                woken.push(task);
                t += self.costs.wakeup_ns;
            }
            t = self.complete_in_block(q, requests, devices, req, core, t);
        }
        woken.clear();
        self.woken_in_irq = woken;
        let r = &mut self.isr[run as usize];
        r.reqs.append(entries);
        r.end = t;
        r.gen = r.gen.wrapping_add(1);
        r.active = true;
        let gen = r.gen;
        q.schedule_at(t, HostEvent::IrqDone { hwq: run, gen });
        t
    }

    /// Complete `req` in the block layer from `at` on `core` (in an interrupt handler or a poll loop);
    /// requests that were waiting go to the driver. Returns when that work ends.
    pub(super) fn complete_in_block(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        req: ReqId,
        core: u32,
        at: Time,
    ) -> Time {
        let r = self.reqs[req.index()];
        if r.lbio || r.mode == WaitMode::Accelerator {
            // LBIO and the accelerator have no block layer to complete in: their descriptors go with the bio.
            return at;
        }
        // An interrupt completing another core's request first pulls the lines its submission wrote (the
        // poll loops complete their own core's; DedCore's notify cost stands for its traffic).
        let remote = if r.mode == WaitMode::Interrupt && r.submit_core != core {
            self.costs.remote_completion_lines * self.costs.line.ns(r.submit_core, core)
        } else {
            0
        };
        let mut out = std::mem::take(&mut self.dispatched);
        let t = self.block.complete(req, self.nvme.caller(core), at + remote, &mut out);
        self.ring_all(q, requests, devices, &mut out, None);
        self.dispatched = out;
        self.arm_block_timer(q);
        t
    }

    /// `req`'s completion was processed and its task told: it waits for the application to reap it.
    pub(super) fn request_done(&mut self, q: &mut impl HostQueue, requests: &mut RequestArena, req: ReqId) {
        let r = self.reqs[req.index()];
        if let Some((new, old)) = r.hazard_merged {
            self.hazard_merge_done(q, requests, req, new, old);
            return;
        }
        if r.riders != NO_PARENT {
            // A request made of merged bios: each application request it carried is done.
            let lower = requests[req].stamps;
            requests.remove(req);
            let mut next = r.riders;
            while next != NO_PARENT {
                let rider = ReqId(next);
                next = self.reqs[rider.index()].next_rider;
                copy_lower_stamps(&lower, &mut requests[rider].stamps);
                self.app_request_done(q, r.job, rider);
            }
            return;
        }
        // A piece of a split request: the request is done with its last piece, whose path it takes; a piece
        // may be a piece itself (md's piece split at max_sectors_kb).
        let mut done = req;
        while self.reqs[done.index()].parent != NO_PARENT {
            let parent = ReqId(self.reqs[done.index()].parent);
            let piece = requests[done].stamps;
            requests.remove(done);
            let p = &mut self.reqs[parent.index()];
            p.pieces_left -= 1;
            if p.pieces_left > 0 {
                return;
            }
            copy_lower_stamps(&piece, &mut requests[parent].stamps);
            done = parent;
        }
        if self.reqs[done.index()].fs_bio {
            self.fs_bio_done(q, requests, done);
            return;
        }
        self.app_request_done(q, r.job, done);
    }

    /// Application request `done` of job `j` completed: it waits to be reaped; wake the job if it waits.
    pub(super) fn app_request_done(&mut self, q: &mut impl HostQueue, j: u32, done: ReqId) {
        let job = &mut self.jobs[j as usize];
        job.in_flight -= 1;
        job.done.push_back(done);
        let task = job.task;
        match job.waiting {
            Waiting::Sleeping => {
                job.waiting = Waiting::No;
                self.cpu.wake(q, task);
            }
            Waiting::Spinning => {
                // A user-space spin on the completion ring (sqpoll) sees it at the next loop.
                job.waiting = Waiting::No;
                self.stop_spinning(q.now(), task);
            }
            Waiting::HybridSleep | Waiting::No => {}
        }
    }

    /// Process polled completion entries in `found` from `at` on `core` (detection and completion work);
    /// returns the end and how many were taken.
    pub(super) fn poll_complete(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        j: u32,
        core: u32,
        at: Time,
    ) -> (Time, u32) {
        let mut t = at + self.costs.poll_loop_ns;
        let count = self.jobs[j as usize].found.len();
        for i in 0..count {
            let req = self.jobs[j as usize].found[i];
            t += self.cqe_ns_of(requests, req);
            t = self.complete_in_block(q, requests, devices, req, core, t);
        }
        (t, count as u32)
    }

    /// Mark the first `n` polled entries of job `j` completed at `now`.
    pub(super) fn finish_polled(&mut self, q: &mut impl HostQueue, requests: &mut RequestArena, j: u32, n: u32) {
        let now = q.now();
        for _ in 0..n {
            let req = self.jobs[j as usize].found.pop_front().expect("n entries were processed");
            let s = &mut requests[req].stamps;
            s.woken = now;
            s.running = now;
            self.request_done(q, requests, req);
        }
    }
}
