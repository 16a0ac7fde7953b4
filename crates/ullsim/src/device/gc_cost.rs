//! Who pays for garbage collection. A GC job on a plane reclaims the space that host writes to that plane
//! used up since the plane's previous job started, so the job's die time is charged to the flows in
//! proportion to the host pages each wrote to the plane in that interval (FLIN charges GC "in proportion to
//! the flows' writes"; tracking the writers of each victim block instead would blame whoever wrote the
//! oldest data, often nobody in a preconditioned drive). The shares are frozen when the job starts; a job
//! started with no write since the previous one (a chain of jobs after an erase) reuses the previous shares.

use crate::engine::Time;

use super::tsu::flow_slot;

/// Per-plane write shares and per-flow GC charges.
#[derive(Debug, Default)]
pub struct GcCost {
    /// Per plane: host pages each flow wrote to it since the plane's last GC job started.
    writes_since_job: Vec<Vec<u64>>,
    /// Per plane: the shares of its current (or last) job.
    job_shares: Vec<Vec<u64>>,
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
            job_shares: vec![Vec::new(); planes as usize],
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
        let p = plane as usize;
        if self.writes_since_job[p].iter().any(|&w| w > 0) {
            std::mem::swap(&mut self.writes_since_job[p], &mut self.job_shares[p]);
            self.writes_since_job[p].iter_mut().for_each(|w| *w = 0);
        }
    }

    /// Charge `ns` of GC die time on `plane` to its job's flows; adds `(flow, ns)` to `out`, merging flows
    /// already in it. Integer split: each flow gets `floor(ns × share)`, the remainder goes to the largest
    /// share (lowest flow on ties), so the charges add up to `ns` exactly.
    pub fn charge(&mut self, plane: u32, ns: Time, out: &mut Vec<(u32, Time)>) {
        self.total_ns += ns;
        let shares = &self.job_shares[plane as usize];
        let total: u64 = shares.iter().sum();
        if total == 0 {
            self.unattributed_ns += ns;
            return;
        }
        let mut given = 0;
        let mut largest = 0;
        for (flow, &w) in shares.iter().enumerate() {
            if w > shares[largest] {
                largest = flow;
            }
            let part = (ns as u128 * w as u128 / total as u128) as Time;
            if part > 0 {
                given += part;
                add(out, &mut self.charged_ns, flow as u32, part);
            }
        }
        if ns > given {
            add(out, &mut self.charged_ns, largest as u32, ns - given);
        }
    }

    /// GC die time charged to `flow` so far.
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
        if charged + self.unattributed_ns != self.total_ns {
            return Err(format!(
                "GC cost: {charged} ns charged + {} ns unattributed != {} ns of GC",
                self.unattributed_ns, self.total_ns
            ));
        }
        Ok(())
    }
}

fn add(out: &mut Vec<(u32, Time)>, charged_ns: &mut Vec<Time>, flow: u32, ns: Time) {
    *flow_slot(charged_ns, flow) += ns;
    match out.iter_mut().find(|(f, _)| *f == flow) {
        Some((_, total)) => *total += ns,
        None => out.push((flow, ns)),
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
        cost.charge(0, 1000, &mut charges);
        assert_eq!(charges, vec![(0, 750), (2, 250)]);
        cost.charge(1, 10, &mut charges);
        assert_eq!(charges, vec![(0, 750), (2, 250), (1, 10)]);
        // An indivisible remainder goes to the largest share: 3/4 and 1/4 of 7 ns are 5.25 and 1.75.
        charges.clear();
        cost.charge(0, 7, &mut charges);
        assert_eq!(charges, vec![(0, 6), (2, 1)]);
        assert_eq!((cost.charged_ns(0), cost.charged_ns(1), cost.charged_ns(2)), (756, 10, 251));
        // The next job on plane 0 is charged to flow 2 alone (the one write since).
        cost.job_started(0);
        charges.clear();
        cost.charge(0, 100, &mut charges);
        assert_eq!(charges, vec![(2, 100)]);
        // A job started with no write since the previous one keeps the previous shares.
        cost.job_started(0);
        charges.clear();
        cost.charge(0, 100, &mut charges);
        assert_eq!(charges, vec![(2, 100)]);
        assert_eq!(cost.total_ns(), 1217);
        cost.check_invariants().unwrap();
    }

    #[test]
    fn gc_on_a_plane_nobody_wrote_is_unattributed() {
        let mut cost = GcCost::new(1);
        let mut charges = Vec::new();
        cost.job_started(0);
        cost.charge(0, 500, &mut charges);
        assert!(charges.is_empty());
        assert_eq!((cost.unattributed_ns(), cost.total_ns()), (500, 500));
        cost.check_invariants().unwrap();
    }
}
