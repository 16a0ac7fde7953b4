//! `[host.xler]` and `[host.dedcore]`: FlashShare's two ways (OSDI'18 §4.3, §5) to take the storage stack's
//! work for latency-critical requests off the application's cores: an I/O-stack accelerator on PCIe (XLER),
//! or a core dedicated to polling the completion queues (DedCore, `host.completion = "dedcore"`).

use serde::{Deserialize, Serialize};

use crate::config::units::Nanos;

/// `[host.xler]`: FlashShare's I/O-stack accelerator (XLER).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct XlerConfig {
    /// Critical flows' requests go through the accelerator: no blk-mq and no nvme_queue_rq; the accelerator
    /// composes the command, rings the doorbell, polls the completion queue and interrupts the driver.
    pub enabled: bool,
    /// The accelerator driver's CPU work per request: writing the bio's fields into the BAR registers.
    pub submit_ns: Nanos,
    /// The accelerator, from the last register write to the SSD's doorbell: CAM search, composing the
    /// command, appending it to the submission queue (no CPU).
    pub issue_ns: Nanos,
    /// The accelerator's polling logic: how late it notices a completion entry (no CPU).
    pub poll_ns: Nanos,
    /// The accelerator driver's interrupt handler per completion, between the interrupt's entry/exit and
    /// the wake-up: reading the completion and ending the bio (no blk-mq request or tag to free).
    pub complete_ns: Nanos,
}

impl Default for XlerConfig {
    fn default() -> Self {
        XlerConfig {
            enabled: false,
            submit_ns: Nanos::from_ns(400),
            issue_ns: Nanos::from_ns(200),
            poll_ns: Nanos::from_ns(500),
            complete_ns: Nanos::from_ns(150),
        }
    }
}

/// `[host.dedcore]`: costs of `host.completion = "dedcore"`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DedCoreConfig {
    /// Per completion, on the dedicated core: telling the waiting task's core (the IPI, the cache lines of
    /// the request and the task moving across, the run-queue spin lock), on top of the wake-up itself.
    pub notify_ns: Nanos,
}

impl Default for DedCoreConfig {
    fn default() -> Self {
        DedCoreConfig { notify_ns: Nanos::from_ns(1_000) }
    }
}

/// The cost keys of both sections, as `(key under host., value in ns)`, for the host's bound check.
pub(super) fn cost_keys(x: &XlerConfig, d: &DedCoreConfig) -> [(&'static str, u64); 5] {
    [
        ("xler.submit_ns", x.submit_ns.0),
        ("xler.issue_ns", x.issue_ns.0),
        ("xler.poll_ns", x.poll_ns.0),
        ("xler.complete_ns", x.complete_ns.0),
        ("dedcore.notify_ns", d.notify_ns.0),
    ]
}
