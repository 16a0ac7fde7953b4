//! pread/pwrite, the blocking call of fio's psync and pvsync2: enter, submit the one request, wait for its
//! completion (the task sleeps for its interrupt, or polls with `hipri`), return with it.

use super::{JobView, Step};

/// The next step of a pread/pwrite in progress.
pub fn next(v: &JobView) -> Step {
    if v.to_submit > 0 && v.in_flight == 0 {
        return Step::Submit { entering: false, quota: 1 };
    }
    if v.in_flight == 0 {
        return Step::Return;
    }
    Step::Wait
}
