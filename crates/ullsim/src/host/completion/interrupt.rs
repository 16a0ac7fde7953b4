//! Interrupts, as Linux does by default: every request raises an interrupt when it completes, except those of
//! flows that ask to poll (`hipri`), which spin.

use super::{CompletionPolicy, WaitMode};
use crate::request::Class;

pub struct Interrupt;

impl CompletionPolicy for Interrupt {
    fn name(&self) -> &'static str {
        "interrupt"
    }
    fn mode(&self, _class: Class, hipri: bool) -> WaitMode {
        if hipri {
            WaitMode::Poll
        } else {
            WaitMode::Interrupt
        }
    }
}
