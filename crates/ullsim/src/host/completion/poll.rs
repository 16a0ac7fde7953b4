//! Classic polling for every request (Linux io_poll_delay = -1 on a polled queue): the waiting task spins
//! on the completion queue, so its core is 100% busy, but no interrupt, wake-up or context switch is paid.

use super::{CompletionPolicy, WaitMode};
use crate::request::Class;

pub struct Poll;

impl CompletionPolicy for Poll {
    fn name(&self) -> &'static str {
        "poll"
    }
    fn mode(&self, _class: Class, _hipri: bool) -> WaitMode {
        WaitMode::Poll
    }
}
