//! Hybrid polling for every request (Linux io_poll_delay = 0): sleep half the mean service time of recent
//! polled requests, then spin. Saves most of the polling CPU at the cost of the timer's wake-up when the
//! estimate is long. Linux keeps the mean per size bucket; one mean over all requests is kept here.

use super::{CompletionPolicy, WaitMode};
use crate::engine::Time;
use crate::request::Class;

/// Weight of a new sample in the running mean (1/8, as cheap EWMAs in the kernel use).
const EWMA_SHIFT: u32 = 3;

#[derive(Default)]
pub struct Hybrid {
    /// Running mean of the service time, ns (0 until the first sample: no sleep).
    mean_service_ns: Time,
}

impl CompletionPolicy for Hybrid {
    fn name(&self) -> &'static str {
        "hybrid"
    }
    fn mode(&self, _class: Class, _hipri: bool) -> WaitMode {
        WaitMode::Hybrid
    }
    fn observe(&mut self, service_ns: Time) {
        self.mean_service_ns = if self.mean_service_ns == 0 {
            service_ns
        } else {
            self.mean_service_ns - (self.mean_service_ns >> EWMA_SHIFT) + (service_ns >> EWMA_SHIFT)
        };
    }
    fn sleep_before_poll(&self) -> Time {
        self.mean_service_ns / 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleeps_half_the_mean_service_time() {
        let mut h = Hybrid::default();
        assert_eq!(h.sleep_before_poll(), 0);
        for _ in 0..200 {
            h.observe(10_000);
        }
        assert!((4_900..=5_000).contains(&h.sleep_before_poll()), "{}", h.sleep_before_poll());
    }
}
