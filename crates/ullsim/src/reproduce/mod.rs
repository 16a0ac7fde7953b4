//! Reproductions of the papers' evaluations that take more than one scenario: generated workload mixes,
//! stacks side by side, run in parallel and aggregated the way the paper reports them. `ullsim reproduce
//! NAME` runs them ([`named::run`]); each writes a [`rows::Reproduction`].

pub mod aios19;
pub mod fastresponse22;
pub mod flashshare18;
pub mod flin18;
pub mod hotstorage23;
pub mod named;
pub mod rows;

pub use rows::{Reproduction, Row};

use rayon::prelude::*;

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

/// Run every one of `settings` settings with `seeds` seeds from `seed` (at least one), all in parallel
/// (`run(setting, seed)`), and combine each setting's runs with `combine`, in setting order.
pub(crate) fn over_settings<T: Send>(
    settings: usize,
    seed: u64,
    seeds: u32,
    run: impl Fn(usize, u64) -> Result<T, String> + Sync,
    combine: impl Fn(&[T]) -> T,
) -> Result<Vec<T>, String> {
    let seeds = u64::from(seeds.max(1));
    let jobs: Vec<(usize, u64)> =
        (0..settings).flat_map(|i| (0..seeds).map(move |k| (i, seed.wrapping_add(k)))).collect();
    let runs: Vec<T> = jobs.par_iter().map(|&(i, seed)| run(i, seed)).collect::<Result<_, String>>()?;
    Ok(runs.chunks(seeds as usize).map(combine).collect())
}
