//! Reproductions of the papers' evaluations that take more than one scenario: generated workload mixes,
//! stacks side by side, run in parallel and aggregated the way the paper reports them. `ullsim reproduce
//! NAME` runs them; each writes a [`rows::Reproduction`].

pub mod fastresponse22;
pub mod flin18;
pub mod hotstorage23;
pub mod rows;

pub use rows::{Reproduction, Row};

use crate::sim::{run_scenario, RunResults};
use crate::Scenario;

/// Load the scenario `text` (named `source` in messages) with `overrides`, and set its seed.
pub(crate) fn load_toml(text: &str, source: &str, seed: u64, overrides: &[String]) -> Result<Scenario, String> {
    let mut scenario =
        Scenario::from_toml_str(text, source, std::path::Path::new("."), overrides).map_err(|e| e.to_string())?;
    scenario.seed = seed;
    Ok(scenario)
}

/// [`load_toml`], then run it.
pub(crate) fn run_toml(
    text: &str,
    source: &str,
    seed: u64,
    overrides: &[String],
) -> Result<(Scenario, RunResults), String> {
    let scenario = load_toml(text, source, seed, overrides)?;
    let results = run_scenario(&scenario).map_err(|e| e.to_string())?;
    Ok((scenario, results))
}
