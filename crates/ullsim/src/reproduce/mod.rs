//! Reproductions of the papers' evaluations that take more than one scenario: generated workload mixes,
//! stacks side by side, run in parallel and aggregated the way the paper reports them. `ullsim reproduce
//! NAME` runs them ([`named::run`]); each writes a [`rows::Reproduction`].

pub mod aios19;
pub mod fastresponse22;
pub mod flashshare18;
pub mod flin18;
pub mod hotstorage23;
pub mod named;
pub mod roles;
pub mod rows;
pub mod score;
pub mod scorecard;
mod seeds;

pub use rows::{Reproduction, Row};

pub(crate) use seeds::{over_settings, per_seed};

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

/// The overrides of `overrides` that apply to the scenario `text`: one naming a flow (`flow.NAME.key`) where
/// the scenario has a flow NAME, every other one everywhere. For a reproduction whose runs have different
/// flows (FastResponse's read path has `readrandom`, its write path `fillsync`); it checks first with
/// [`check_flow_overrides`] that each names a flow of some run, so none is dropped unseen.
pub(crate) fn overrides_for(text: &str, overrides: &[String]) -> Vec<String> {
    let names = flow_names(text);
    overrides.iter().filter(|o| override_flow(o).is_none_or(|flow| names.iter().any(|n| n == flow))).cloned().collect()
}

/// An error naming the override unless every `flow.NAME.key` override of `overrides` names a flow of one
/// of the scenarios `texts`.
pub(crate) fn check_flow_overrides(texts: &[String], overrides: &[String]) -> Result<(), String> {
    for o in overrides {
        if let Some(flow) = override_flow(o) {
            let mut names: Vec<String> = texts.iter().flat_map(|t| flow_names(t)).collect();
            if !names.iter().any(|n| n == flow) {
                names.sort();
                names.dedup();
                return Err(format!(
                    "--set {o}: no run of this reproduction has a flow named {flow:?} (its flows: {names:?})"
                ));
            }
        }
    }
    Ok(())
}

/// The flow an override names by name (`flow.NAME.key=value`); `None` for other keys and `flow.INDEX.key`.
fn override_flow(o: &str) -> Option<&str> {
    let key = o.split_once('=').map_or(o, |(k, _)| k).trim();
    let name = key.strip_prefix("flow.")?.split('.').next()?;
    name.parse::<usize>().is_err().then_some(name)
}

/// The names of the scenario `text`'s flows (none if it does not parse: loading it says why).
fn flow_names(text: &str) -> Vec<String> {
    let Ok(table) = text.parse::<toml::Table>() else { return Vec::new() };
    let Some(toml::Value::Array(flows)) = table.get("flow") else { return Vec::new() };
    flows.iter().filter_map(|f| f.get("name").and_then(|n| n.as_str()).map(str::to_owned)).collect()
}
