//! libaio: io_submit takes up to `iodepth_batch_submit` requests and returns; io_getevents enters and
//! waits for a completion. Two system calls per batch, so twice the entries and exits of io_uring.

use super::{take_one, Call, JobView, Step};

/// The next step of an io_submit or io_getevents in progress (`call` is updated).
pub fn next(call: &mut Call, v: &JobView) -> Step {
    if v.to_submit > 0 {
        return match call {
            // Its quota is used up: io_submit returns and the next one enters.
            Call::IoSubmit { left: 0 } => {
                *call = Call::IoSubmit { left: v.batch_submit };
                Step::Reenter
            }
            Call::IoSubmit { left } => take_one(left, v),
            // New requests while io_getevents waits go down in the same kernel visit: fio's rate-limited
            // loop submits them as soon as they are due (a simplification: it saves one exit and entry).
            _ => {
                let mut left = v.batch_submit;
                let step = take_one(&mut left, v);
                *call = Call::IoSubmit { left };
                step
            }
        };
    }
    if v.in_flight == 0 {
        return Step::Return;
    }
    match call {
        // Everything is submitted: io_submit returns, io_getevents enters.
        Call::IoSubmit { .. } => {
            *call = Call::IoGetevents;
            Step::Reenter
        }
        _ => Step::Wait,
    }
}
