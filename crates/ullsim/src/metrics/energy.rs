//! A simple power model for energy per I/O (HotStorage'23 Figs. 3-4 measure the whole system at the wall):
//! a constant base draw for the rest of the machine, each core at its active power while busy (user, kernel
//! or polling) and its idle power otherwise, and each SSD at its active power while it holds a command and
//! its idle power otherwise. Frequency scaling, deep idle states and DRAM traffic are ignored.

use serde::Serialize;

use super::core_usage::CoreUsage;
use crate::config::host::PowerConfig;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Energy {
    /// Mean system power over the run, watts.
    pub mean_watts: f64,
    /// Energy over the run, joules.
    pub joules: f64,
    /// Joules per million completed I/Os; null when none completed.
    pub joules_per_million_ios: Option<f64>,
}

/// Energy over a run of `seconds` in which `ios` I/Os completed.
/// `devices_busy`: the share of the window each drive had a command inside.
pub fn estimate(power: &PowerConfig, cores: &[CoreUsage], devices_busy: &[f64], seconds: f64, ios: u64) -> Energy {
    let cores_w: f64 = cores
        .iter()
        .map(|c| {
            let busy = 1.0 - c.idle;
            busy * power.core_active_w + c.idle * power.core_idle_w
        })
        .sum();
    let device_w: f64 =
        devices_busy.iter().map(|&busy| busy * power.device_active_w + (1.0 - busy) * power.device_idle_w).sum();
    let mean_watts = power.base_w + cores_w + device_w;
    let joules = mean_watts * seconds;
    Energy { mean_watts, joules, joules_per_million_ios: (ios > 0).then(|| joules / ios as f64 * 1e6) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn core(idle: f64) -> CoreUsage {
        CoreUsage { user: 0.0, kernel: 1.0 - idle, poll: 0.0, idle, context_switches: 0 }
    }

    #[test]
    fn closed_form() {
        let p = PowerConfig {
            base_w: 40.0,
            core_active_w: 10.0,
            core_idle_w: 1.0,
            device_active_w: 12.0,
            device_idle_w: 4.0,
        };
        // Two cores, one busy half the time, one idle; device busy a quarter: 40 + (5.5 + 1) + (3 + 3) = 52.5 W.
        let e = estimate(&p, &[core(0.5), core(1.0)], &[0.25], 2.0, 1_000_000);
        assert!((e.mean_watts - 52.5).abs() < 1e-9);
        assert!((e.joules - 105.0).abs() < 1e-9);
        assert!((e.joules_per_million_ios.unwrap() - 105.0).abs() < 1e-9);
        assert_eq!(estimate(&p, &[], &[0.0], 1.0, 0).joules_per_million_ios, None);
        // A second drive, idle: its idle power on top (4 W).
        let two = estimate(&p, &[core(0.5), core(1.0)], &[0.25, 0.0], 2.0, 1_000_000);
        assert!((two.mean_watts - 56.5).abs() < 1e-9);
    }
}
