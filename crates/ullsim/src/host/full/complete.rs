//! The full host's completion path: a completion entry the device posted, the interrupt handler (or a poll
//! loop) that processes it, the block layer's completion (which may dispatch waiting requests), and the
//! request handed back to whoever waits for it: the application's task, or the file system.

use super::*;

impl FullHost {
    /// The device posted `req`'s completion entry now.
    pub fn on_device_completion(
        &mut self,
        q: &mut EventQueue<Event>,
        requests: &mut RequestArena,
        device: &mut Device,
        req: ReqId,
    ) {
        let now = q.now();
        let r = self.reqs[req.index()];
        // The entry goes to the completion queue of the request's submission queue (FlashShare's two SQs of a
        // core share one).
        let cq = self.nvme.cq_of(r.hwq);
        match r.mode {
            WaitMode::Interrupt => match self.nvme.on_completion_entry(cq, req, now) {
                IrqAction::Fire => self.fire_irq(q, requests, device, cq),
                IrqAction::ArmTimer(at) => {
                    let gen = self.nvme.timer_gen(cq);
                    q.schedule_at(at, Event::Host(HostEvent::CoalesceTimer { hwq: cq, gen }));
                }
                IrqAction::Wait => {}
            },
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
        q: &mut EventQueue<Event>,
        requests: &mut RequestArena,
        device: &mut Device,
        hwq: u32,
    ) {
        let now = q.now();
        let mut entries = std::mem::take(&mut self.scratch);
        self.nvme.fire(hwq, &mut entries);
        let core = self.nvme.irq_core(hwq);
        let run = &self.isr[hwq as usize];
        // A handler still running processes new entries in the same run.
        let joins = run.active && run.end > now;
        let start = if joins { run.end } else { self.cpu.irq_start(core, now + self.nvme.irq_delivery_ns) };
        let mut t = if joins { start } else { start + self.nvme.isr_ns };
        let mut woken = std::mem::take(&mut self.woken_in_irq);
        for &req in &entries {
            t += self.cqe_ns_of(requests, req);
            let task = self.waiter_of(req);
            // Waking a sleeping task costs once per handler run, however many of its requests complete.
            if self.cpu.is_sleeping(task) && !woken.contains(&task) {
                woken.push(task);
                t += self.costs.wakeup_ns;
            }
            t = self.complete_in_block(q, requests, device, req, t);
        }
        woken.clear();
        self.woken_in_irq = woken;
        self.cpu.book_irq(core, start, t - start);
        let run = &mut self.isr[hwq as usize];
        run.reqs.append(&mut entries);
        run.end = t;
        run.gen = run.gen.wrapping_add(1);
        run.active = true;
        let gen = run.gen;
        self.scratch = entries;
        q.schedule_at(t, Event::Host(HostEvent::IrqDone { hwq, gen }));
    }

    /// Complete `req` in the block layer from `at` (in an interrupt handler or a poll loop); requests that
    /// were waiting go to the driver. Returns when that work ends.
    pub(super) fn complete_in_block(
        &mut self,
        q: &mut EventQueue<Event>,
        requests: &mut RequestArena,
        device: &mut Device,
        req: ReqId,
        at: Time,
    ) -> Time {
        if self.reqs[req.index()].lbio {
            // LBIO has no block layer to complete in: its descriptor is freed with the bio.
            return at;
        }
        let mut out = std::mem::take(&mut self.dispatched);
        let t = self.block.complete(req, at, self.nvme.submit_ns, &mut out);
        self.ring_all(q, requests, device, &mut out, None);
        self.dispatched = out;
        t
    }

    /// `req`'s completion was processed and its task told: it waits for the application to reap it.
    pub(super) fn request_done(&mut self, q: &mut EventQueue<Event>, requests: &mut RequestArena, req: ReqId) {
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
        let done = if r.parent != NO_PARENT {
            // A piece of a split request: the request is done with its last piece, whose path it takes.
            let parent = ReqId(r.parent);
            let piece = requests[req].stamps;
            requests.remove(req);
            let p = &mut self.reqs[parent.index()];
            p.pieces_left -= 1;
            if p.pieces_left > 0 {
                return;
            }
            copy_lower_stamps(&piece, &mut requests[parent].stamps);
            parent
        } else {
            req
        };
        if self.reqs[done.index()].fs_bio {
            self.fs_bio_done(q, requests, done);
            return;
        }
        self.app_request_done(q, r.job, done);
    }

    /// Application request `done` of job `j` completed: it waits to be reaped; wake the job if it waits.
    pub(super) fn app_request_done(&mut self, q: &mut EventQueue<Event>, j: u32, done: ReqId) {
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

    /// Process polled completion entries in `found` from `at` (detection and completion work); returns the
    /// end and how many were taken.
    pub(super) fn poll_complete(
        &mut self,
        q: &mut EventQueue<Event>,
        requests: &mut RequestArena,
        device: &mut Device,
        j: u32,
        at: Time,
    ) -> (Time, u32) {
        let mut t = at + self.costs.poll_loop_ns;
        let count = self.jobs[j as usize].found.len();
        for i in 0..count {
            let req = self.jobs[j as usize].found[i];
            t += self.cqe_ns_of(requests, req);
            t = self.complete_in_block(q, requests, device, req, t);
        }
        (t, count as u32)
    }

    /// Mark the first `n` polled entries of job `j` completed at `now`.
    pub(super) fn finish_polled(&mut self, q: &mut EventQueue<Event>, requests: &mut RequestArena, j: u32, n: u32) {
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
