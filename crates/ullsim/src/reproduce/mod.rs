//! Reproductions of the papers' evaluations that take more than one scenario: generated workload mixes, run
//! in parallel and aggregated the way the paper reports them. `ullsim reproduce NAME` runs them.

pub mod flin18;
