//! Select-ISR (FlashShare, OSDI'18; as FastResponse evaluated it): the requests of latency-critical flows
//! are polled, so no interrupt, wake-up or context switch stands between their completion and their task;
//! every other request completes by interrupt, so throughput flows leave their cores free. A critical task
//! polls for its file-system I/O too (its buffered reads' misses, its fsync's own writes): the policy works
//! in the driver, whatever path the request took.

use super::{CompletionPolicy, WaitMode};
use crate::request::{Class, Criticality};

pub struct SelectIsr;

impl CompletionPolicy for SelectIsr {
    fn name(&self) -> &'static str {
        "select-isr"
    }

    fn mode(&self, class: Class, hipri: bool) -> WaitMode {
        if class.criticality == Criticality::Critical || hipri {
            WaitMode::Poll
        } else {
            WaitMode::Interrupt
        }
    }

    fn polls_file_system_io(&self, class: Class) -> bool {
        class.criticality == Criticality::Critical
    }
}
