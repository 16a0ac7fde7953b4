//! How the host notices that a request completed, behind [`CompletionPolicy`]: by interrupt (the handler
//! wakes the sleeping task), by classic polling (the waiting task spins on the completion queue; its core
//! is busy all the while), by hybrid polling (sleep about half the expected service time, then spin) or by a
//! core dedicated to polling (DedCore).
//! Adding a policy means a file here and a name in [`make`].

mod dedcore;
mod hybrid;
mod interrupt;
mod poll;
mod select_isr;

use crate::engine::Time;
use crate::request::{Class, Op};

/// How a task waits for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitMode {
    /// Sleep; the interrupt handler wakes the task.
    Interrupt,
    /// Spin until the completion shows up (no interrupt is raised for it).
    Poll,
    /// Sleep for [`CompletionPolicy::sleep_before_poll`], then spin (no interrupt).
    Hybrid,
    /// Sleep; DedCore's polling core completes the request and wakes the task (no interrupt).
    DedicatedCore,
    /// Sleep; FlashShare's accelerator (`host.xler`) submitted it, polls for it and interrupts its driver.
    Accelerator,
}

impl WaitMode {
    /// The waiting task sleeps rather than spins.
    pub fn sleeps(self) -> bool {
        matches!(self, WaitMode::Interrupt | WaitMode::DedicatedCore | WaitMode::Accelerator)
    }
}

pub trait CompletionPolicy {
    fn name(&self) -> &'static str;
    /// How the request of a flow with this class waits; `hipri` is the flow's own request to poll (fio's
    /// `hipri`).
    fn mode(&self, class: Class, hipri: bool) -> WaitMode;
    /// A polled `op` of `bytes` took `service_ns` from doorbell to completion entry (hybrid polling learns
    /// from it).
    fn observe(&mut self, _op: Op, _bytes: u32, _service_ns: Time) {}
    /// Whether a task of this class polls for the file system's bios it waits for (its buffered reads'
    /// misses, its fsync's writes). Linux polls only direct I/O; FlashShare's Select-ISR polls a critical
    /// task's I/O whatever path it takes.
    fn polls_file_system_io(&self, _class: Class) -> bool {
        false
    }
    /// How long a hybrid-polling task waiting for an `op` of `bytes` sleeps before it starts spinning.
    fn sleep_before_poll(&self, _op: Op, _bytes: u32) -> Time {
        0
    }
}

/// Names of the completion policies.
pub fn names() -> &'static [&'static str] {
    &["interrupt", "poll", "hybrid", "select-isr", "dedcore"]
}

pub fn make(name: &str) -> Option<Box<dyn CompletionPolicy>> {
    match name {
        "interrupt" => Some(Box::new(interrupt::Interrupt)),
        "poll" => Some(Box::new(poll::Poll)),
        "hybrid" => Some(Box::new(hybrid::Hybrid::default())),
        "select-isr" => Some(Box::new(select_isr::SelectIsr)),
        "dedcore" => Some(Box::new(dedcore::DedCore)),
        _ => None,
    }
}
