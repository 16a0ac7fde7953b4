//! io_uring_enter: one call submits up to `iodepth_batch_submit` requests and then waits for a completion
//! (min_complete = 1), so a batch costs one entry and one exit. With `sqthread_poll` the job makes no
//! call to submit (an sqpoll kernel thread takes its ring), and enters only to sleep for an interrupt.

use super::{take_one, Call, JobView, Step};

/// The next step of an io_uring_enter in progress (`call` is updated).
pub fn next(call: &mut Call, v: &JobView) -> Step {
    let Call::IoUringEnter { left } = call else { unreachable!("io_uring runs only io_uring_enter, not {call:?}") };
    if v.to_submit > 0 {
        if *left == 0 {
            // Its quota is used up: the call returns and the next one enters.
            *left = v.batch_submit;
            return Step::Reenter;
        }
        return take_one(left, v);
    }
    if v.in_flight == 0 {
        return Step::Return;
    }
    Step::Wait
}
