//! The full host's counters and results: what `sim.rs` snapshots at the window's edges, and the invariants
//! it asserts.

use super::*;

impl FullHost {
    /// Model invariants: tags conserved, the page cache consistent.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.block.check_tags()?;
        self.fs.as_deref().map_or(Ok(()), FsHost::check_invariants)
    }

    /// The cumulative counters at `at`.
    pub fn counters(&mut self, at: Time) -> HostCounters {
        let mut cores = self.cpu.core_times(at);
        if let Some(d) = &self.dedcore {
            // No task runs on DedCore's polling core: its time is the poller's.
            cores[d.core() as usize] = d.core_time(at);
        }
        let flow_cpu = self
            .flow_tasks
            .iter()
            .map(|jobs| {
                jobs.iter()
                    .map(|tasks| FlowCpu {
                        cpu_ns: tasks.iter().map(|&t| self.cpu.task_cpu_ns(t)).sum(),
                        user_ns: tasks.iter().map(|&t| self.cpu.task_user_ns(t)).sum(),
                        context_switches: tasks.iter().map(|&t| self.cpu.task_switches(t)).sum(),
                    })
                    .collect()
            })
            .collect();
        HostCounters {
            at,
            cores,
            flow_cpu,
            interrupts: self.nvme.interrupts() + self.xler.as_ref().map_or(0, |x| x.interrupts),
            block: self.block.results(),
            fs: self.fs.as_deref().map(FsHost::counters),
        }
    }

    /// Host results between the snapshots `since` and `now`, and what the host measured of each flow.
    pub fn results(&self, since: &HostCounters, now: &HostCounters) -> (HostResults, Vec<FlowHost>) {
        let names = HostNames {
            model: HostModel::Full,
            cpu_scheduler: self.cpu.scheduler_name().to_string(),
            completion: self.completion.name().to_string(),
        };
        let (results, mut flows) = since.until(now, names);
        if let Some(fsh) = self.fs.as_deref() {
            for (flow, phases) in flows.iter_mut().zip(fsh.phases()) {
                flow.fsync_phases_ns = phases;
            }
        }
        (results, flows)
    }
}
