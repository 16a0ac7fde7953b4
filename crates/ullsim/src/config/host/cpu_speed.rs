//! `host.cpu.speed`: the host's cores relative to the reference machine the defaults are calibrated to
//! (HotStorage'23's Xeon E3-1230, Sandy Bridge at 3.4 GHz: 1.0). The host is built from its configuration
//! with every cost of work the core executes divided by the factor ([`HostConfig::at_its_cpu_speed`]), so
//! the host model itself never sees the factor but for its few built-in costs ([`cpu_cost`]).
//!
//! Scaled, as code the core runs (twice the speed, half the time): [`SCALED`], and the built-in costs of
//! the same kind, the I/O schedulers' per-request work (`SchedCosts`) and the file system's lock holds.
//!
//! Not scaled ([`NOT_SCALED`]), as time the core's clock does not set:
//! - the memory hierarchy and the interconnect: a line refilled from the last-level cache
//!   (`cpu.cache_refill_line_ns`), a modified line moved between cores (`cpu.cache_line_transfer_ns`,
//!   `cpu.cache_line_transfer_across_ns`), DedCore's notice to another core, mostly an IPI and lines moving
//!   (`dedcore.notify_ns`);
//! - hardware latencies: leaving C1 (`cpu.idle_exit_ns`, the exit latency the platform's idle states
//!   declare, not code), the MSI-X write reaching the handler (`nvme.irq_delivery_ns`), uncached MMIO
//!   writes across PCIe (`nvme.doorbell_ns`, `xler.submit_ns`: the accelerator driver's register writes),
//!   the accelerator's own logic (`xler.issue_ns`, `xler.poll_ns`);
//! - clock times: the tick, CFS's and EEVDF's periods and slices, interrupt coalescing's timer, the I/O
//!   schedulers' expiries and targets, writeback's periods;
//! - sizes and counts, the power model, and the flows' own CPU times (`thinktime_spin`, `response_cpu`,
//!   `cpuchunks`): the workload states those as times of its own.
//!
//! A platform whose memory or interconnect differs from the reference machine's sets those keys itself.

use super::HostConfig;
use crate::config::units::Nanos;
use crate::engine::Time;

/// Slowest factor `host.cpu.speed` takes: a core 20 times slower than the reference [inferred: below any
/// server core of the last two decades; lower is a slip of the decimal point].
pub const MIN_CPU_SPEED: f64 = 0.05;
/// Fastest factor: 20 times the reference [inferred: today's fastest cores run such code ~2-3 times a 2011
/// Sandy Bridge's; the bound leaves room for what-if studies].
pub const MAX_CPU_SPEED: f64 = 20.0;

/// The keys (under `host.`) divided by `cpu.speed`: CPU work of the core that runs it.
pub const SCALED: &[&str] = &[
    "cpu.syscall_entry_ns",
    "cpu.syscall_exit_ns",
    "cpu.fs_submit_ns",
    "cpu.reap_ns",
    "cpu.context_switch_ns",
    "cpu.wakeup_ns",
    "cpu.poll_loop_ns",
    "block.submit_ns",
    "block.complete_ns",
    "block.md_submit_ns",
    "block.merge_check_ns",
    "block.hazard_check_ns",
    "block.bfq_tree_node_ns",
    "nvme.queue_rq_ns",
    "nvme.isr_ns",
    "nvme.cqe_ns",
    "nvme.iommu_map_ns",
    "nvme.iommu_unmap_ns",
    "fs.page_copy_ns",
    "fs.page_alloc_ns",
    "fs.commit_cpu_ns",
    "xler.complete_ns",
];

/// The `*_ns` keys (under `host.`) not scaled, and why (the module's header says more).
pub const NOT_SCALED: &[(&str, &str)] = &[
    ("cpu.cache_refill_line_ns", "the last-level cache's latency"),
    ("cpu.cache_line_transfer_ns", "the interconnect's"),
    ("cpu.cache_line_transfer_across_ns", "the interconnect's"),
    ("cpu.idle_exit_ns", "the idle state's exit latency"),
    ("cpu.tick_ns", "a clock period"),
    ("cpu.sched_latency_ns", "a scheduling period"),
    ("cpu.min_granularity_ns", "a scheduling slice"),
    ("cpu.wakeup_granularity_ns", "a scheduling slice"),
    ("cpu.base_slice_ns", "a scheduling slice"),
    ("nvme.doorbell_ns", "an uncached MMIO write"),
    ("nvme.irq_delivery_ns", "the interrupt's delivery"),
    ("nvme.coalesce_time_ns", "the device's timer"),
    ("xler.submit_ns", "uncached MMIO writes"),
    ("xler.issue_ns", "the accelerator's"),
    ("xler.poll_ns", "the accelerator's"),
    ("dedcore.notify_ns", "an IPI and lines moving between cores"),
];

/// A cost of `reference_ns` on the reference machine, on cores `speed` times as fast, to the nearest ns.
/// The identity at 1.0.
pub fn cpu_cost(reference_ns: Time, speed: f64) -> Time {
    if speed == 1.0 {
        return reference_ns;
    }
    (reference_ns as f64 / speed).round() as Time
}

impl HostConfig {
    /// The host as it is built: every key of [`SCALED`] divided by `cpu.speed` ([`cpu_cost`]). `cpu.speed`
    /// stays as given, for the built-in costs scaled where they are made; the result is not to be scaled
    /// again.
    pub fn at_its_cpu_speed(&self) -> HostConfig {
        let mut host = self.clone();
        let speed = self.cpu.speed;
        for (_, cost) in host.cpu_work_mut() {
            cost.0 = cpu_cost(cost.0, speed);
        }
        host
    }

    /// Each key of [`SCALED`] and its value, in that order.
    fn cpu_work_mut(&mut self) -> [(&'static str, &mut Nanos); SCALED.len()] {
        let (c, b, n, f) = (&mut self.cpu, &mut self.block, &mut self.nvme, &mut self.fs);
        let work = [
            &mut c.syscall_entry_ns,
            &mut c.syscall_exit_ns,
            &mut c.fs_submit_ns,
            &mut c.reap_ns,
            &mut c.context_switch_ns,
            &mut c.wakeup_ns,
            &mut c.poll_loop_ns,
            &mut b.submit_ns,
            &mut b.complete_ns,
            &mut b.md_submit_ns,
            &mut b.merge_check_ns,
            &mut b.hazard_check_ns,
            &mut b.bfq_tree_node_ns,
            &mut n.queue_rq_ns,
            &mut n.isr_ns,
            &mut n.cqe_ns,
            &mut n.iommu_map_ns,
            &mut n.iommu_unmap_ns,
            &mut f.page_copy_ns,
            &mut f.page_alloc_ns,
            &mut f.commit_cpu_ns,
            &mut self.xler.complete_ns,
        ];
        let mut keys = SCALED.iter();
        work.map(|cost| (*keys.next().expect("one key per cost"), cost))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_ns_key_is_scaled_or_says_why_not() {
        let mut listed: Vec<&str> = SCALED.iter().copied().chain(NOT_SCALED.iter().map(|(k, _)| *k)).collect();
        listed.sort();
        let before = listed.len();
        listed.dedup();
        assert_eq!(listed.len(), before, "a key in both lists");
        let mut ns_keys: Vec<String> = HostConfig::keys()
            .into_iter()
            .filter(|k| k.ends_with("_ns"))
            .map(|k| k.strip_prefix("host.").expect("under host.").to_string())
            .collect();
        ns_keys.sort();
        assert_eq!(listed, ns_keys);
    }

    #[test]
    fn the_scaled_keys_are_their_names_values() {
        let mut host = HostConfig::default();
        host.cpu.speed = 2.0;
        // Each key its own value, so a name paired with the wrong field shows.
        for (i, (_, cost)) in host.cpu_work_mut().into_iter().enumerate() {
            cost.0 = 1_000 * (i as u64 + 1);
        }
        let table = toml::Value::try_from(host.at_its_cpu_speed()).unwrap();
        for (i, key) in SCALED.iter().enumerate() {
            let value = key.split('.').fold(&table, |v, part| &v[part]);
            assert_eq!(value.as_integer(), Some(500 * (i as i64 + 1)), "{key}");
        }
        // Not scaled: as given.
        let scaled = host.at_its_cpu_speed();
        assert_eq!(scaled.cpu.idle_exit_ns, host.cpu.idle_exit_ns);
        assert_eq!(scaled.nvme.doorbell_ns, host.nvme.doorbell_ns);
        assert_eq!(scaled.cpu.speed, 2.0);
    }

    #[test]
    fn costs_round_to_the_nearest_ns_and_one_is_the_identity() {
        assert_eq!(cpu_cost(1_400, 1.0), 1_400);
        assert_eq!(cpu_cost(u64::MAX, 1.0), u64::MAX);
        assert_eq!(cpu_cost(100, 3.0), 33);
        assert_eq!(cpu_cost(350, 0.5), 700);
        assert_eq!(cpu_cost(5, 2.0), 3);
    }
}
