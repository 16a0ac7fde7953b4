//! Reproductions of the papers' evaluations that take more than one scenario: generated workload mixes,
//! stacks side by side, run in parallel and aggregated the way the paper reports them. `ullsim reproduce
//! NAME` runs them; each writes a [`rows::Reproduction`].

pub mod flin18;
pub mod hotstorage23;
pub mod rows;

pub use rows::{Reproduction, Row};
