//! The host's drives in a run: building them (each with its own seed), their snapshots and results, and their
//! maps' memory taken together.

use serde::Serialize;

use crate::config::drives::{drive_name, drive_seed};
use crate::config::Scenario;
use crate::device::{Device, DeviceCounters, DeviceResults};
use crate::engine::Time;

/// One drive's results, under its name (`devices[]` of the results, with several drives).
#[derive(Debug, Clone, Serialize)]
pub struct DriveResults {
    pub name: String,
    #[serde(flatten)]
    pub results: DeviceResults,
}

/// Build and precondition the `device.count` drives of `scenario`, each of its own configuration
/// (`Scenario::drive_config`); drive `i`'s events carry `i`.
pub(super) fn build(scenario: &Scenario) -> Result<Vec<Device>, String> {
    (0..scenario.device.count)
        .map(|i| Device::new(scenario.drive_config(i), drive_seed(scenario.seed, i), scenario.flows.len(), i))
        .collect()
}

/// The most the drives' maps can grow to together (each `Device::map_bytes_at_most`).
pub(super) fn map_bytes_at_most(scenario: &Scenario) -> u64 {
    scenario.drive_configs().map(Device::map_bytes_at_most).sum()
}

/// Every drive's cumulative counters at `at`.
pub(super) fn counters(devices: &mut [Device], at: Time, flows: usize) -> Vec<DeviceCounters> {
    devices.iter_mut().map(|d| d.counters(at, flows)).collect()
}

/// Each drive's results between the snapshots `since` and `now`, and the GC die time charged to each flow on
/// any of them.
pub(super) fn results(
    devices: &[Device],
    since: &[DeviceCounters],
    now: &[DeviceCounters],
) -> (Vec<DeviceResults>, Vec<Time>) {
    let mut gc_by_flow: Vec<Time> = Vec::new();
    let mut results = Vec::with_capacity(devices.len());
    for ((device, since), now) in devices.iter().zip(since).zip(now) {
        results.push(device.results(since, now));
        let charged = now.gc_busy_by_flow_since(since);
        gc_by_flow.resize(charged.len(), 0);
        gc_by_flow.iter_mut().zip(charged).for_each(|(total, ns)| *total += ns);
    }
    (results, gc_by_flow)
}

/// The results' `devices`: every drive's, named, with several drives; none with one (its are `device`).
pub(super) fn named(results: &[DeviceResults]) -> Vec<DriveResults> {
    if results.len() < 2 {
        return Vec::new();
    }
    results.iter().enumerate().map(|(i, r)| DriveResults { name: drive_name(i as u32), results: r.clone() }).collect()
}

/// Commands inside all drives now.
pub(super) fn commands_inside(devices: &[Device]) -> u64 {
    devices.iter().map(Device::commands_inside).sum()
}

/// Bytes the drives' maps hold now, together.
pub(super) fn map_bytes(devices: &[Device]) -> u64 {
    devices.iter().map(Device::map_bytes).sum()
}

#[cfg(test)]
mod tests {
    /// The drive's index rides in the event without making it, or the queue's entry, larger: the queue moves
    /// entries on every push and pop.
    #[test]
    fn the_drive_index_costs_an_event_no_bytes() {
        assert!(std::mem::size_of::<super::super::Event>() <= 16, "{}", std::mem::size_of::<super::super::Event>());
    }
}
