//! The host's tasks that are not an application's job: `cpuio` burners and io_uring's sqpoll kernel threads.

use super::*;

impl FullHost {
    /// A `cpuio` job's task (burner `b`): burn, pause or stop.
    pub(super) fn step_burner(&mut self, q: &mut impl HostQueue, task: TaskId, b: u32) {
        let now = q.now();
        match self.burners[b as usize].next(now) {
            BurnStep::Stop => self.cpu.sleep(q, task),
            BurnStep::PauseUntil(at) => {
                self.timer_gen[task as usize] += 1;
                let gen = self.timer_gen[task as usize];
                q.schedule_at(at, HostEvent::TimerWake { task, gen });
                self.cpu.sleep(q, task);
            }
            BurnStep::Burn(ns) => self.cpu.run(q, task, ns, Activity::User),
        }
    }

    /// The sqpoll kernel thread of job `j`: process polled completions, submit from the ring, or spin.
    pub(super) fn step_sqpoll(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        j: u32,
    ) {
        let now = q.now();
        let task = self.jobs[j as usize].sqpoll.expect("an sqpoll role has a thread");
        if let Action::PollComplete(n) = std::mem::replace(&mut self.jobs[j as usize].sq_action, Action::None) {
            self.finish_polled(q, requests, j, n);
        }
        let start = self.cpu.work_starts_at(task, now);
        if !self.jobs[j as usize].found.is_empty() {
            let core = self.cpu.core_of(task);
            let (end, n) = self.poll_complete(q, requests, devices, j, core, start);
            self.jobs[j as usize].sq_action = Action::PollComplete(n);
            self.cpu.run(q, task, end - start, Activity::Kernel);
            return;
        }
        if let Some(req) = self.jobs[j as usize].sq_ring.pop_front() {
            let batch = self.jobs[j as usize].sq_ring.len() + 1;
            let fs_at = start + self.costs.poll_loop_ns;
            let core = self.cpu.core_of(task);
            let end = self.submit_from_batch(q, requests, devices, j, req, batch, core, fs_at);
            self.cpu.run(q, task, end - start, Activity::Kernel);
            return;
        }
        self.cpu.spin(q, task);
    }
}
