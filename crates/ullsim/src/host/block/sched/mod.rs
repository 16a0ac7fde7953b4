//! blk-mq I/O schedulers, one file each, behind [`IoScheduler`] (Linux's `struct elevator_mq_ops`: insert,
//! dispatch, completed, has_work). Adding a scheduler means adding a file and a name in [`make`].
//!
//! The block layer calls `insert` when a request enters the scheduler and `dispatch` whenever a hardware
//! queue has room; what the scheduler returns goes to the driver at once. The CPU each call costs, and
//! whether it is taken under the scheduler's queue-wide lock, comes from [`IoScheduler::costs`].

mod bfq;
mod kyber;
mod mq_deadline;
mod none;

use crate::engine::Time;
use crate::request::{Op, ReqId};

/// What a scheduler sees of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedRequest {
    pub id: ReqId,
    pub op: Op,
    /// First 512-byte sector and length in sectors.
    pub sector: u64,
    pub sectors: u32,
    /// The flow (application) and task (process) that issued it: bfq queues per process.
    pub flow: u32,
    pub task: u32,
    /// I/O priority class of the issuer: 0 real-time, 1 best-effort, 2 idle (mq-deadline and bfq use it).
    pub prio_class: u8,
    /// When it entered the scheduler.
    pub inserted_at: Time,
}

/// CPU cost of a scheduler's operations, in ns, and whether they hold a queue-wide lock (then concurrent
/// callers on other cores wait for each other).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SchedCosts {
    pub insert_ns: Time,
    pub dispatch_ns: Time,
    pub completed_ns: Time,
    pub global_lock: bool,
}

/// An I/O scheduler.
pub trait IoScheduler {
    fn name(&self) -> &'static str;
    fn costs(&self) -> SchedCosts;
    /// A request enters the scheduler for hardware queue `hwq`.
    fn insert(&mut self, hwq: u32, rq: SchedRequest, now: Time);
    /// The next request to hand to the driver of `hwq`, or None when there is none or the scheduler holds
    /// back (e.g. kyber out of tokens).
    fn dispatch(&mut self, hwq: u32, now: Time) -> Option<SchedRequest>;
    /// A request it dispatched completed; `latency_ns` is its time from insertion to completion.
    fn completed(&mut self, rq: &SchedRequest, latency_ns: Time, now: Time);
    /// Requests waiting in the scheduler for `hwq`.
    fn queued(&self, hwq: u32) -> usize;
}

/// Names of the I/O schedulers.
pub fn names() -> &'static [&'static str] {
    &["none", "mq-deadline", "kyber", "bfq"]
}

/// Build an I/O scheduler for `hw_queues` hardware queues.
pub fn make(name: &str, hw_queues: u32) -> Option<Box<dyn IoScheduler>> {
    match name {
        "none" => Some(Box::new(none::NoneScheduler::new(hw_queues))),
        "mq-deadline" => Some(Box::new(mq_deadline::MqDeadline::new(hw_queues))),
        "kyber" => Some(Box::new(kyber::Kyber::new(hw_queues))),
        "bfq" => Some(Box::new(bfq::Bfq::new(hw_queues))),
        _ => None,
    }
}
