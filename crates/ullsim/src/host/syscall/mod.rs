//! System calls as programs. A job's task that is in a system call runs it one step at a time: kernel
//! entry, submitting the application's requests (file system, block layer, driver), waiting for a
//! completion, the exit. Each call is a small program in its own file, written as "what next, given where
//! the call is and what the job has": [`rw`] (pread/pwrite of psync and pvsync2), [`libaio`] (io_submit and
//! io_getevents) and [`io_uring`] (io_uring_enter). The runner, `FullHost::step_job`, carries each
//! [`Step`] out on the task's core and asks again when the step's CPU work ends or the task is woken.
//!
//! Returning to user space is not a step of its own here: the exit's cost is paid with the application's
//! reaping of what the call completed (one user-mode segment), or by [`Step::Return`] when the call ends
//! with nothing to reap.

pub mod buffered;
pub mod fs_step;
pub mod fsync;
pub mod io_uring;
pub mod libaio;
pub mod rw;

use crate::config::scenario::IoEngine;

/// The system call a job's task is in, and how far it got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// pread/pwrite (psync, pvsync2): submit one request, wait for it.
    Rw,
    /// libaio's io_submit, which may take `left` more requests.
    IoSubmit { left: u32 },
    /// libaio's io_getevents, waiting for a completion.
    IoGetevents,
    /// io_uring_enter: submit up to `left` more requests, then wait for a completion.
    IoUringEnter { left: u32 },
    /// A call the file system runs with its own program (a buffered read or write, an fsync:
    /// [`buffered`], [`fsync`]); the runner steps it, not [`next`].
    FileSystem,
}

/// What the task does next in (or on the way into) a system call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Nothing to submit and nothing in flight: sleep until the application issues more.
    Idle,
    /// Enter the kernel into a call that waits (kernel entry's CPU work).
    Enter,
    /// Submit the application's next request in the current call (paying kernel entry first if
    /// `entering`); the call may take `quota` requests including this one, which the runner plugs together.
    Submit { entering: bool, quota: u32 },
    /// Leave the call and enter the next (kernel exit and entry).
    Reenter,
    /// Wait for a completion as the job's wait mode says (sleep, spin, or hybrid polling's sleep then spin).
    Wait,
    /// Spin in user space on the completion ring (an sqpoll thread polls the device for the job).
    SpinUser,
    /// Return to user space with nothing to reap (kernel exit).
    Return,
}

/// What a call's program sees of its job.
#[derive(Debug, Clone, Copy)]
pub struct JobView {
    pub engine: IoEngine,
    /// Requests the application issued that this task may submit now (none for a blocking call with its
    /// request in flight, none when an sqpoll thread submits).
    pub to_submit: usize,
    pub in_flight: u32,
    /// Most requests one submitting call takes (`iodepth_batch_submit`; 1 for blocking engines).
    pub batch_submit: u32,
    /// The job waits for completions by polling in user space (an sqpoll thread polls the device for it).
    pub spins_in_user_space: bool,
}

/// The next step of a job's task: in its current call `call` (updated in place), or into a new one.
pub fn next(call: &mut Option<Call>, v: &JobView) -> Step {
    let step = match call {
        Some(Call::Rw) => rw::next(v),
        Some(c @ Call::IoSubmit { .. }) | Some(c @ Call::IoGetevents) => libaio::next(c, v),
        Some(c @ Call::IoUringEnter { .. }) => io_uring::next(c, v),
        // The runner never asks: a file-system call is stepped by its program until it returns.
        Some(Call::FileSystem) => Step::Wait,
        None => return outside(call, v),
    };
    if matches!(step, Step::Return) {
        *call = None;
    }
    step
}

/// Not in a system call: make one that submits, make one that waits, or go idle.
fn outside(call: &mut Option<Call>, v: &JobView) -> Step {
    if v.to_submit > 0 {
        let (first, quota) = match v.engine {
            IoEngine::Psync | IoEngine::Pvsync2 => (Call::Rw, 1),
            IoEngine::Libaio => (Call::IoSubmit { left: v.batch_submit }, v.batch_submit),
            IoEngine::IoUring | IoEngine::Cpuio => (Call::IoUringEnter { left: v.batch_submit }, v.batch_submit),
        };
        *call = Some(first);
        // The program takes the first request itself, so the call starts with its whole quota.
        return match next(call, v) {
            Step::Submit { quota: _, .. } => Step::Submit { entering: true, quota },
            other => unreachable!("a new submitting call submits first, not {other:?}"),
        };
    }
    if v.in_flight == 0 {
        return Step::Idle;
    }
    if v.spins_in_user_space {
        return Step::SpinUser;
    }
    *call = Some(match v.engine {
        IoEngine::Libaio => Call::IoGetevents,
        _ => Call::IoUringEnter { left: v.batch_submit },
    });
    Step::Enter
}

/// Take one request of the call's quota `left` (the program's part of [`Step::Submit`]). Requests that
/// arrive while the call is submitting join it; once the application has no more, a later arrival starts
/// a fresh quota.
fn take_one(left: &mut u32, v: &JobView) -> Step {
    let quota = *left;
    *left = if v.to_submit > 1 { quota - 1 } else { v.batch_submit };
    Step::Submit { entering: false, quota }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(engine: IoEngine, to_submit: usize, in_flight: u32, batch_submit: u32) -> JobView {
        JobView { engine, to_submit, in_flight, batch_submit, spins_in_user_space: false }
    }

    /// Runs the program as the runner would, submitting when told, until it waits or goes idle.
    fn steps(
        call: &mut Option<Call>,
        engine: IoEngine,
        mut to_submit: usize,
        mut in_flight: u32,
        batch: u32,
    ) -> Vec<Step> {
        let mut out = Vec::new();
        loop {
            let step = next(call, &view(engine, to_submit, in_flight, batch));
            out.push(step);
            match step {
                Step::Submit { .. } => {
                    to_submit -= 1;
                    in_flight += 1;
                }
                Step::Wait | Step::Idle | Step::SpinUser => return out,
                _ => {}
            }
        }
    }

    #[test]
    fn io_uring_submits_a_batch_per_call_and_waits_in_the_last() {
        let mut call = None;
        let s = steps(&mut call, IoEngine::IoUring, 5, 0, 2);
        use Step::*;
        let sub = |entering, quota| Submit { entering, quota };
        assert_eq!(
            s,
            vec![sub(true, 2), sub(false, 1), Reenter, sub(false, 2), sub(false, 1), Reenter, sub(false, 2), Wait]
        );
        assert_eq!(call, Some(Call::IoUringEnter { left: 2 }));
    }

    #[test]
    fn libaio_leaves_io_submit_for_io_getevents_before_it_waits() {
        let mut call = None;
        let s = steps(&mut call, IoEngine::Libaio, 1, 0, 1);
        assert_eq!(s, vec![Step::Submit { entering: true, quota: 1 }, Step::Reenter, Step::Wait]);
        assert_eq!(call, Some(Call::IoGetevents));
        // With nothing in flight any more (all reaped elsewhere), the call returns and the task idles.
        assert_eq!(next(&mut call, &view(IoEngine::Libaio, 0, 0, 1)), Step::Return);
        assert_eq!(call, None);
        assert_eq!(next(&mut call, &view(IoEngine::Libaio, 0, 0, 1)), Step::Idle);
    }

    #[test]
    fn a_blocking_call_submits_one_request_and_waits_for_it() {
        let mut call = None;
        let s = steps(&mut call, IoEngine::Psync, 1, 0, 1);
        assert_eq!(s, vec![Step::Submit { entering: true, quota: 1 }, Step::Wait]);
        // The runner hides the queue from a blocking call with its request in flight.
        assert_eq!(next(&mut call, &view(IoEngine::Psync, 0, 1, 1)), Step::Wait);
    }

    #[test]
    fn a_task_with_requests_in_flight_and_nothing_to_submit_enters_a_call_to_wait() {
        for (engine, call_made) in
            [(IoEngine::Libaio, Call::IoGetevents), (IoEngine::IoUring, Call::IoUringEnter { left: 4 })]
        {
            let mut call = None;
            assert_eq!(next(&mut call, &view(engine, 0, 3, 4)), Step::Enter);
            assert_eq!(call, Some(call_made));
            assert_eq!(next(&mut call, &view(engine, 0, 3, 4)), Step::Wait);
        }
        // With an sqpoll thread polling for it, the task spins on its completion ring without a call.
        let mut call = None;
        let v = JobView { spins_in_user_space: true, ..view(IoEngine::IoUring, 0, 3, 1) };
        assert_eq!(next(&mut call, &v), Step::SpinUser);
        assert_eq!(call, None);
    }
}
