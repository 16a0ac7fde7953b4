//! Who pays for garbage collection. A GC job on a plane reclaims the space that host writes to that plane
//! used up since the plane's previous job started, so the job's die time is charged to the flows in
//! proportion to the host pages each wrote to the plane in that interval (FLIN charges GC "in proportion to
//! the flows' writes"; tracking the writers of each victim block instead would blame whoever wrote the
//! oldest data, often nobody in a preconditioned drive). The shares are frozen when the job starts; a job
//! started with no write since the previous one (a chain of jobs after an erase) reuses the previous shares.

use crate::engine::Time;

use super::tsu::flow_slot;

/// The flows a GC job is charged to: `(flow, host pages written)` for the flows with writes, in flow order,
/// their sum, and the index of the largest share (the first on ties), which takes rounding remainders.
#[derive(Debug, Default, Clone)]
struct JobShares {
    shares: Vec<(u32, u64)>,
    total: u64,
    largest: usize,
}

/// Per-plane write shares and per-flow GC charges.
#[derive(Debug, Default)]
pub struct GcCost {
    /// Per plane: host pages each flow wrote to it since the plane's last GC job started.
    writes_since_job: Vec<Vec<u64>>,
    /// Per plane: the shares of its current (or last) job.
    jobs: Vec<JobShares>,
    /// Per plane: GC die time under its current shares not yet split over the flows (charges are split
    /// lazily, when the shares change or the charges are read, unless a caller wants them at once).
    pending_ns: Vec<Time>,
    /// GC die time charged to each flow.
    charged_ns: Vec<Time>,
    /// GC die time on planes no flow has written to (charged to nobody).
    unattributed_ns: Time,
    /// All GC die time seen.
    total_ns: Time,
}

impl GcCost {
    pub fn new(planes: u32) -> Self {
        GcCost {
            writes_since_job: vec![Vec::new(); planes as usize],
            jobs: vec![JobShares::default(); planes as usize],
            pending_ns: vec![0; planes as usize],
            ..GcCost::default()
        }
    }

    /// `flow` had a host page placed on `plane`.
    #[inline]
    pub fn host_write(&mut self, plane: u32, flow: u32) {
        *flow_slot(&mut self.writes_since_job[plane as usize], flow) += 1;
    }

    /// A GC job started on `plane`: freeze who it is charged to.
    pub fn job_started(&mut self, plane: u32) {
        let writes = &mut self.writes_since_job[plane as usize];
        if writes.iter().all(|&w| w == 0) {
            return; // keep the previous job's shares
        }
        let pending = std::mem::take(&mut self.pending_ns[plane as usize]);
        Self::split(&self.jobs[plane as usize], pending, &mut self.charged_ns, &mut self.unattributed_ns, None);
        let writes = &mut self.writes_since_job[plane as usize];
        let job = &mut self.jobs[plane as usize];
        job.shares.clear();
        job.total = 0;
        job.largest = 0;
        for (flow, w) in writes.iter_mut().enumerate() {
            if *w > 0 {
                if job.shares.get(job.largest).is_some_and(|&(_, top)| *w > top) {
                    job.largest = job.shares.len();
                }
                job.shares.push((flow as u32, *w));
                job.total += *w;
                *w = 0;
            }
        }
        let last = job.shares.last().expect("a flow wrote").0;
        flow_slot(&mut self.charged_ns, last);
    }

    /// Charge `ns` of GC die time on `plane` to its job's flows. With `out`, split it now and add each
    /// flow's part to `out` (merging flows already in it); without, split it later (see `settle`).
    pub fn charge(&mut self, plane: u32, ns: Time, out: Option<&mut Vec<(u32, Time)>>) {
        self.total_ns += ns;
        match out {
            Some(out) => {
                Self::split(&self.jobs[plane as usize], ns, &mut self.charged_ns, &mut self.unattributed_ns, Some(out))
            }
            None => self.pending_ns[plane as usize] += ns,
        }
    }

    /// Split every pending charge over its flows.
    pub fn settle(&mut self) {
        for (job, pending) in self.jobs.iter().zip(&mut self.pending_ns) {
            Self::split(job, std::mem::take(pending), &mut self.charged_ns, &mut self.unattributed_ns, None);
        }
    }

    /// Integer split of `ns` by `job`'s shares: each flow gets `floor(ns × share)`, the remainder goes to
    /// the largest share (lowest flow on ties), so the parts add up to `ns` exactly.
    fn split(
        job: &JobShares,
        ns: Time,
        charged_ns: &mut [Time],
        unattributed_ns: &mut Time,
        mut out: Option<&mut Vec<(u32, Time)>>,
    ) {
        if ns == 0 {
            return;
        }
        if job.total == 0 {
            *unattributed_ns += ns;
            return;
        }
        let mut remainder = ns;
        for &(flow, w) in &job.shares {
            let part = match ns.checked_mul(w) {
                Some(product) => product / job.total,
                None => (ns as u128 * w as u128 / job.total as u128) as Time,
            };
            remainder -= part;
            add(out.as_deref_mut(), charged_ns, flow, part);
        }
        add(out, charged_ns, job.shares[job.largest].0, remainder);
    }

    /// GC die time charged to `flow` so far (after `settle`).
    pub fn charged_ns(&self, flow: u32) -> Time {
        self.charged_ns.get(flow as usize).copied().unwrap_or(0)
    }

    /// All GC die time so far (charged or not).
    pub fn total_ns(&self) -> Time {
        self.total_ns
    }

    /// GC die time that no flow could be charged for.
    pub fn unattributed_ns(&self) -> Time {
        self.unattributed_ns
    }

    /// Every ns of GC die time is charged to exactly one flow or to nobody.
    pub fn check_invariants(&self) -> Result<(), String> {
        let charged: Time = self.charged_ns.iter().sum();
        let pending: Time = self.pending_ns.iter().sum();
        if charged + pending + self.unattributed_ns != self.total_ns {
            return Err(format!(
                "GC cost: {charged} ns charged + {pending} ns pending + {} ns unattributed != {} ns of GC",
                self.unattributed_ns, self.total_ns
            ));
        }
        Ok(())
    }
}

fn add(out: Option<&mut Vec<(u32, Time)>>, charged_ns: &mut [Time], flow: u32, ns: Time) {
    if ns == 0 {
        return;
    }
    charged_ns[flow as usize] += ns;
    if let Some(out) = out {
        match out.iter_mut().find(|(f, _)| *f == flow) {
            Some((_, total)) => *total += ns,
            None => out.push((flow, ns)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_is_charged_by_the_writes_since_the_planes_previous_job() {
        let mut cost = GcCost::new(2);
        let mut charges = Vec::new();
        // Plane 0: flow 0 wrote 3 pages, flow 2 one; plane 1: only flow 1.
        for flow in [0, 0, 2, 0] {
            cost.host_write(0, flow);
        }
        cost.host_write(1, 1);
        cost.job_started(0);
        cost.job_started(1);
        // Writes after the job started belong to the next job.
        cost.host_write(0, 2);
        cost.charge(0, 1000, Some(&mut charges));
        assert_eq!(charges, vec![(0, 750), (2, 250)]);
        cost.charge(1, 10, Some(&mut charges));
        assert_eq!(charges, vec![(0, 750), (2, 250), (1, 10)]);
        // An indivisible remainder goes to the largest share: 3/4 and 1/4 of 7 ns are 5.25 and 1.75.
        charges.clear();
        cost.charge(0, 7, Some(&mut charges));
        assert_eq!(charges, vec![(0, 6), (2, 1)]);
        assert_eq!((cost.charged_ns(0), cost.charged_ns(1), cost.charged_ns(2)), (756, 10, 251));
        // The next job on plane 0 is charged to flow 2 alone (the one write since).
        cost.job_started(0);
        charges.clear();
        cost.charge(0, 100, Some(&mut charges));
        assert_eq!(charges, vec![(2, 100)]);
        // A job started with no write since the previous one keeps the previous shares.
        cost.job_started(0);
        charges.clear();
        cost.charge(0, 100, Some(&mut charges));
        assert_eq!(charges, vec![(2, 100)]);
        assert_eq!(cost.total_ns(), 1217);
        cost.check_invariants().unwrap();
    }

    #[test]
    fn charges_split_later_land_on_the_shares_they_were_made_under() {
        let mut cost = GcCost::new(1);
        cost.host_write(0, 0);
        cost.host_write(0, 1);
        cost.job_started(0);
        cost.charge(0, 300, None);
        cost.charge(0, 100, None);
        assert_eq!(cost.charged_ns(0), 0, "not split yet");
        cost.check_invariants().unwrap();
        // A new job (only flow 1 wrote since) splits what the old shares owe first.
        cost.host_write(0, 1);
        cost.job_started(0);
        cost.charge(0, 50, None);
        cost.settle();
        assert_eq!((cost.charged_ns(0), cost.charged_ns(1)), (200, 250));
        cost.check_invariants().unwrap();
    }

    #[test]
    fn gc_on_a_plane_nobody_wrote_is_unattributed() {
        let mut cost = GcCost::new(1);
        let mut charges = Vec::new();
        cost.job_started(0);
        cost.charge(0, 500, Some(&mut charges));
        assert!(charges.is_empty());
        assert_eq!((cost.unattributed_ns(), cost.total_ns()), (500, 500));
        cost.check_invariants().unwrap();
    }
}
