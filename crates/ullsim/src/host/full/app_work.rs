//! The application's work on the completions a job's task reaped, after the reap itself (`reap_ns`):
//! `response_cpu` (a server's work on what it read before it answers, in the request's response time), then
//! `thinktime_spin` (fio's CPU burst before the job issues again, after the response time). Both are
//! user-mode segments on the task's core, competing under the CPU scheduler; the completions go to the
//! application when the last one ends, so what it issues next waits for them.

use super::*;

/// Where a job's task is in the work that follows a reap of `n` completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AfterReap {
    /// The reap segment ended.
    Reaped,
    /// The `response_cpu` segment ended.
    Responded,
    /// The `thinktime_spin` segment ended.
    Spun,
}

/// A job's per-I/O application work, from its flow's `response_cpu` and `thinktime_spin` (app model
/// resolved).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct AppWork {
    pub(super) response_ns: Time,
    pub(super) spin_ns: Time,
}

impl AppWork {
    pub(super) fn of(spec: &FlowSpec) -> AppWork {
        let resolved = crate::workload::app::resolve(spec).ok();
        let spec = resolved.as_deref().unwrap_or(spec);
        AppWork { response_ns: spec.response_cpu.map_or(0, |d| d.0), spin_ns: spec.thinktime_spin.map_or(0, |d| d.0) }
    }
}

impl FullHost {
    /// Job `j`'s task finished `phase` of the work on the first `n` completions of its `done` list: stamp
    /// them completed when their response ends and start the next segment (true), or, when nothing is left
    /// to do, false: the caller hands them to the application.
    pub(super) fn work_after_reap(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        j: u32,
        n: u32,
        phase: AfterReap,
    ) -> bool {
        let now = q.now();
        let job = &mut self.jobs[j as usize];
        let work = job.app_work;
        let (ns, next) = match phase {
            AfterReap::Reaped if work.response_ns > 0 => (work.response_ns, Action::Respond(n)),
            AfterReap::Reaped | AfterReap::Responded => {
                for &req in job.done.iter().take(n as usize) {
                    requests[req].stamps.completed = now;
                }
                if work.spin_ns == 0 {
                    return false;
                }
                (work.spin_ns, Action::Spin(n))
            }
            AfterReap::Spun => return false,
        };
        job.action = next;
        self.cpu.run(q, job.task, ns * u64::from(n), Activity::User);
        true
    }
}
