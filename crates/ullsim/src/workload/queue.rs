//! The queue the workload schedules its arrivals, starts and think times on, as its own event type
//! (`engine::Scheduler`); the simulation's queue holds them with every other layer's.

use super::WorkloadEvent;
use crate::engine::Scheduler;

/// A scheduler of workload events.
pub trait WorkloadQueue: Scheduler<WorkloadEvent> {}

impl<Q: Scheduler<WorkloadEvent>> WorkloadQueue for Q {}
