//! DedCore (FlashShare, OSDI'18 §5): one core, taken from the CPU scheduler, spins on the completion queues
//! for the requests of latency-critical flows; their tasks sleep, and the polling core completes the request
//! and wakes them across cores (`host/full/dedcore.rs`). Every other request completes by interrupt, except
//! those of `hipri` flows, which their task polls as Linux does.

use super::{CompletionPolicy, WaitMode};
use crate::request::{Class, Criticality};

pub struct DedCore;

impl CompletionPolicy for DedCore {
    fn name(&self) -> &'static str {
        "dedcore"
    }

    fn mode(&self, class: Class, hipri: bool) -> WaitMode {
        if class.criticality == Criticality::Critical {
            WaitMode::DedicatedCore
        } else if hipri {
            WaitMode::Poll
        } else {
            WaitMode::Interrupt
        }
    }
}
