//! `ullsim._ullsim`: the Python package's native core. It takes scenarios as TOML text or JSON (a dict in the
//! scenario schema), runs them with the GIL released, and hands results back as the CLI's JSON text, which
//! the pure-Python layer (`python/ullsim/`) turns into DataFrames. Errors raise `ullsim.UllsimError` with the
//! CLI's message (file, key, line).

use std::path::Path;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

use ullsim::reproduce::named;
use ullsim::Scenario;

create_exception!(_ullsim, UllsimError, PyException, "A scenario, a flag or a run failed; the message says where.");

/// Turn a dict-in-JSON scenario into TOML text, naming the first value TOML cannot hold.
fn json_to_toml(json: &str, source: &str) -> Result<String, String> {
    let value: serde_json::Value = serde_json::from_str(json).map_err(|e| format!("{source}: not JSON: {e}"))?;
    if !value.is_object() {
        return Err(format!("{source}: expected a table of scenario keys (a dict), found {value}"));
    }
    let table: toml::Table = serde_json::from_value::<toml::Table>(value)
        .map_err(|e| format!("{source}: a value TOML cannot hold (None, or a list mixing types?): {e}"))?;
    toml::to_string(&table).map_err(|e| format!("{source}: {e}"))
}

/// Load a scenario from TOML `text` (named `source` in messages; relative trace paths resolve from
/// `base_dir`) with `overrides` (`key.path=value`) and an optional `seed`.
fn load(text: &str, source: &str, base_dir: &str, overrides: &[String], seed: Option<u64>) -> Result<Scenario, String> {
    let mut scenario =
        Scenario::from_toml_str(text, source, Path::new(base_dir), overrides).map_err(|e| e.to_string())?;
    if let Some(seed) = seed {
        scenario.seed = seed;
    }
    Ok(scenario)
}

/// Run a scenario given as TOML text (or, with `is_json`, as a JSON object) and return the results JSON.
/// The simulation runs without the GIL, so other Python threads (and Dask workers' heartbeats) go on.
#[pyfunction]
#[pyo3(signature = (text, source, base_dir, overrides, seed=None, is_json=false))]
fn run_json(
    py: Python<'_>,
    text: String,
    source: String,
    base_dir: String,
    overrides: Vec<String>,
    seed: Option<u64>,
    is_json: bool,
) -> PyResult<String> {
    py.detach(move || {
        let text = if is_json { json_to_toml(&text, &source)? } else { text };
        let scenario = load(&text, &source, &base_dir, &overrides, seed)?;
        let results = ullsim::run_scenario(&scenario).map_err(|e| format!("{source}: {e}"))?;
        serde_json::to_string(&results).map_err(|e| e.to_string())
    })
    .map_err(UllsimError::new_err)
}

/// Run the reproduction `name` (as `ullsim reproduce NAME`, with the same options and messages) and return
/// its JSON, without the GIL.
#[pyfunction]
#[pyo3(signature = (name, all, set, duration=None, seed=None, mixes=None, classify_duration=None, load=None, classes=None))]
#[allow(clippy::too_many_arguments)] // one per option of `ullsim reproduce`
fn reproduce_json(
    py: Python<'_>,
    name: String,
    all: bool,
    set: Vec<String>,
    duration: Option<String>,
    seed: Option<u64>,
    mixes: Option<u64>,
    classify_duration: Option<String>,
    load: Option<f64>,
    classes: Option<String>,
) -> PyResult<String> {
    let request = named::Request { all, mixes, duration, classify_duration, seed, load, classes, set };
    py.detach(move || {
        let reproduction = named::run(&name, &request)?;
        serde_json::to_string(&reproduction).map_err(|e| e.to_string())
    })
    .map_err(UllsimError::new_err)
}

/// Calibrate the device `base` to the fio JSON results at `paths` (as `ullsim calibrate`, with `settings`
/// as its `--set` and `ios` as its `--ios`) and return the calibration's JSON (as `--json`), the preset
/// file named `name`. Runs without the GIL.
#[pyfunction]
#[pyo3(signature = (paths, base, settings, ios=None, name="calibrated".to_string()))]
fn calibrate_json(
    py: Python<'_>,
    paths: Vec<String>,
    base: String,
    settings: Vec<String>,
    ios: Option<u64>,
    name: String,
) -> PyResult<String> {
    use ullsim::calibrate::calibration::{calibrate, Options};
    let mut options = Options::new(&base);
    options.settings = settings;
    // `ios` is checked (at least 100) by the Python layer, as the command checks `--ios`.
    if let Some(ios) = ios {
        options.target_ios = ios as f64;
    }
    let paths: Vec<std::path::PathBuf> = paths.into_iter().map(Into::into).collect();
    py.detach(move || {
        let calibration = calibrate(&paths, &options, &mut |_, _| {})?;
        serde_json::to_string(&calibration.to_json(&name)).map_err(|e| e.to_string())
    })
    .map_err(UllsimError::new_err)
}

/// The self-contained HTML report (as `ullsim report`) of a results, comparison, reproduction or
/// calibration JSON text.
#[pyfunction]
fn report_html(json: &str) -> PyResult<String> {
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|e| UllsimError::new_err(format!("report: not JSON: {e}")))?;
    ullsim_report::results_report(&value).map_err(|e| UllsimError::new_err(format!("report: {e}")))
}

/// `ullsim compare`'s rule of a key both varied and fixed, for `sweep`: raises naming the key.
#[pyfunction]
fn check_varied_not_fixed(varied: Vec<String>, fixed: Vec<String>) -> PyResult<()> {
    let keys: Vec<&str> = varied.iter().map(String::as_str).collect();
    ullsim::config::scenario::check_varied_not_fixed(&keys, &fixed, ("vary", "set"))
        .map_err(|m| UllsimError::new_err(format!("sweep: {m}")))
}

/// The reproductions' names.
#[pyfunction]
fn reproductions() -> Vec<&'static str> {
    named::NAMES.to_vec()
}

/// Check a scenario (as `run_json` takes it) without running it; returns its name.
#[pyfunction]
#[pyo3(signature = (text, source, base_dir, overrides, is_json=false))]
fn validate(text: String, source: String, base_dir: String, overrides: Vec<String>, is_json: bool) -> PyResult<String> {
    let run = || -> Result<String, String> {
        let text = if is_json { json_to_toml(&text, &source)? } else { text };
        Ok(load(&text, &source, &base_dir, &overrides, None)?.name)
    };
    run().map_err(UllsimError::new_err)
}

/// The built-in default scenario's TOML.
#[pyfunction]
fn default_scenario() -> &'static str {
    ullsim::config::scenario::DEFAULT_SCENARIO
}

/// Device presets: (name, summary).
#[pyfunction]
fn presets() -> Vec<(&'static str, &'static str)> {
    ullsim::config::presets::PRESETS.iter().map(|p| (p.name, p.summary)).collect()
}

/// Host stacks: (name, summary).
#[pyfunction]
fn stacks() -> Vec<(&'static str, &'static str)> {
    ullsim::config::stacks::STACKS.iter().map(|s| (s.name, s.summary)).collect()
}

#[pymodule]
fn _ullsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("UllsimError", m.py().get_type::<UllsimError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce_json, m)?)?;
    m.add_function(wrap_pyfunction!(reproductions, m)?)?;
    m.add_function(wrap_pyfunction!(report_html, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate_json, m)?)?;
    m.add_function(wrap_pyfunction!(check_varied_not_fixed, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(default_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(stacks, m)?)?;
    Ok(())
}
