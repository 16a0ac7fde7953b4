//! The queue the host schedules on: its own events, and the drives' through the devices it drives. Each is
//! scheduled as its own layer's type (`engine::Scheduler`); the simulation's queue holds both.

use super::HostEvent;
use crate::device::DriveEvent;
use crate::engine::Scheduler;

/// A scheduler of host events and of drive events.
pub trait HostQueue: Scheduler<HostEvent> + Scheduler<DriveEvent> {}

impl<Q: Scheduler<HostEvent> + Scheduler<DriveEvent>> HostQueue for Q {}
