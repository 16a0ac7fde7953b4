//! A reproduction by name, with the options `ullsim reproduce NAME` takes (and `ullsim.reproduce` in
//! Python): one dispatch for every front end, so each names the same options in the same errors.

use super::{aios19, fastresponse22, flashshare18, flin18, hotstorage23, Reproduction};
use crate::config::units::parse_duration;

/// Names of the reproductions, as `ullsim reproduce` takes them.
pub const NAMES: &[&str] = &["aios19", "fastresponse22", "flashshare18", "flin18", "hotstorage23"];

/// What a reproduction is asked for beyond its name. Every field but `all` and `set` is optional: `None`
/// keeps the reproduction's own default. Messages name the fields as the command's flags (`--mixes`).
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The paper's full evaluation rather than the quick subset.
    pub all: bool,
    /// flin18 only: generated mixes per workload category (at least 1).
    pub mixes: Option<u64>,
    /// Simulated time per run, e.g. "200ms" (bare numbers are seconds).
    pub duration: Option<String>,
    /// flin18 only: simulated time of each application's alone run that classifies it.
    pub classify_duration: Option<String>,
    /// The first seed.
    pub seed: Option<u64>,
    /// flin18 only: a multiplier on every application's request rate (> 0).
    pub load: Option<f64>,
    /// flin18 only: the rule that puts applications in intensity classes.
    pub classes: Option<String>,
    /// `key.path=value` overrides applied to every scenario the reproduction runs.
    pub set: Vec<String>,
}

/// Run the reproduction `name` with `request`. Every row it returns is a finite number, marked calibrated
/// or predicted, and the reproduction is scored.
pub fn run(name: &str, request: &Request) -> Result<Reproduction, String> {
    let mut reproduction = dispatch(name, request)?;
    reproduction.check_finite().map_err(|e| format!("{name}: {e}"))?;
    super::roles::assign(&mut reproduction);
    Ok(reproduction)
}

/// Every reproduction, in [`NAMES`]' order, each with `request` (its subset, or with `all` its full set),
/// and their scorecard. Only the options every reproduction takes apply: `all`, `seed` and `set`.
pub fn run_all(request: &Request) -> Result<super::scorecard::Scorecard, String> {
    let duration = request.duration.is_some().then_some("--duration");
    if let Some(flag) = duration.or_else(|| flin18_option_given(request)) {
        return Err(format!(
            "{flag}: not used by `reproduce all` (each paper runs with its own; all takes --all, --seed and --set)"
        ));
    }
    let reproductions = NAMES.iter().map(|name| run(name, request)).collect::<Result<Vec<_>, _>>()?;
    Ok(super::scorecard::Scorecard::of(reproductions))
}

fn dispatch(name: &str, request: &Request) -> Result<Reproduction, String> {
    match name {
        "flin18" => run_flin18(request),
        "fastresponse22" => {
            reject_flin18_options(request, name)?;
            let mut options =
                if request.all { fastresponse22::Options::full() } else { fastresponse22::Options::quick() };
            common_options(request, &mut options.duration_ns, &mut options.seed, &mut options.overrides)?;
            fastresponse22::run(&options).map_err(|e| format!("{name}: {e}"))
        }
        "hotstorage23" => {
            reject_flin18_options(request, name)?;
            let mut options = if request.all { hotstorage23::Options::full() } else { hotstorage23::Options::subset() };
            if let Some(d) = &request.duration {
                options.set_duration(duration_option("--duration", d)?)?;
            }
            if let Some(s) = request.seed {
                options.seed = s;
            }
            options.overrides = request.set.clone();
            hotstorage23::run(&options).map_err(|e| format!("{name}: {e}"))
        }
        "aios19" => {
            reject_flin18_options(request, name)?;
            let mut options = if request.all { aios19::Options::full() } else { aios19::Options::quick() };
            common_options(request, &mut options.duration_ns, &mut options.seed, &mut options.overrides)?;
            aios19::run(&options).map_err(|e| format!("{name}: {e}"))
        }
        "flashshare18" => {
            reject_flin18_options(request, name)?;
            let mut options = if request.all { flashshare18::Options::full() } else { flashshare18::Options::quick() };
            common_options(request, &mut options.duration_ns, &mut options.seed, &mut options.overrides)?;
            flashshare18::run(&options).map_err(|e| format!("{name}: {e}"))
        }
        other => Err(format!("unknown reproduction \"{other}\"; expected one of {NAMES:?}")),
    }
}

fn run_flin18(request: &Request) -> Result<Reproduction, String> {
    let apps = crate::workload::app::names().into_iter().filter(|n| n.starts_with("flin.")).collect();
    let mut options = if request.all { flin18::Options::full(apps) } else { flin18::Options::quick(apps) };
    if let Some(m) = request.mixes {
        if m == 0 {
            return Err("--mixes: expected at least 1 mix per category".into());
        }
        options.mixes_per_category = usize::try_from(m).map_err(|_| format!("--mixes: {m} is too many"))?;
    }
    if let Some(d) = &request.duration {
        options.duration_ns = duration_option("--duration", d)?;
    }
    if let Some(s) = request.seed {
        options.seed = s;
    }
    if let Some(load) = request.load {
        if !(load.is_finite() && load > 0.0) {
            return Err(format!("--load: expected a rate multiplier > 0, got {load}"));
        }
        options.load = load;
    }
    if let Some(name) = &request.classes {
        options.classes = flin18::Classes::from_name(name).ok_or_else(|| {
            format!("--classes: unknown rule \"{name}\"; expected one of {:?}", flin18::Classes::NAMES)
        })?;
    }
    options.overrides = request.set.clone();
    if let Some(d) = &request.classify_duration {
        options.classify_duration_ns = duration_option("--classify-duration", d)?;
    }
    let report = flin18::run(&options).map_err(|e| format!("flin18: {e}"))?;
    Ok(report.reproduction())
}

/// An error naming the first of flin18's own options given to the reproduction `name`, which takes only
/// --all, --duration, --seed and --set.
fn reject_flin18_options(request: &Request, name: &str) -> Result<(), String> {
    match flin18_option_given(request) {
        Some(flag) => Err(format!(
            "{flag}: not used by {name} (only flin18 takes it); {name} takes --all, --duration, --seed and --set"
        )),
        None => Ok(()),
    }
}

/// The first of flin18's own options `request` gives, as its flag.
fn flin18_option_given(request: &Request) -> Option<&'static str> {
    [
        ("--mixes", request.mixes.is_some()),
        ("--classify-duration", request.classify_duration.is_some()),
        ("--load", request.load.is_some()),
        ("--classes", request.classes.is_some()),
    ]
    .into_iter()
    .find_map(|(flag, given)| given.then_some(flag))
}

/// --duration, --seed and --set into a reproduction's options.
fn common_options(
    request: &Request,
    duration_ns: &mut u64,
    seed: &mut u64,
    overrides: &mut Vec<String>,
) -> Result<(), String> {
    if let Some(d) = &request.duration {
        *duration_ns = duration_option("--duration", d)?;
    }
    if let Some(s) = request.seed {
        *seed = s;
    }
    *overrides = request.set.clone();
    Ok(())
}

/// A duration option's value (bare numbers are seconds), which must be > 0.
fn duration_option(flag: &str, text: &str) -> Result<u64, String> {
    let ns = parse_duration(text, 1_000_000_000).map_err(|e| format!("{flag}: {e}"))?;
    if ns == 0 {
        return Err(format!("{flag}: expected a duration > 0"));
    }
    Ok(ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_name_lists_the_known_ones() {
        let e = run("flin19", &Request::default()).unwrap_err();
        assert!(e.contains("unknown reproduction \"flin19\"") && e.contains("hotstorage23"), "{e}");
    }

    #[test]
    fn flin18_options_are_refused_by_the_others_before_running() {
        for name in NAMES.iter().filter(|n| **n != "flin18") {
            let request = Request { load: Some(2.0), ..Request::default() };
            let e = run(name, &request).unwrap_err();
            assert!(e.starts_with("--load: not used by") && e.contains(name), "{e}");
        }
    }

    #[test]
    fn bad_values_name_the_option() {
        let zero = Request { duration: Some("0ms".into()), ..Request::default() };
        assert_eq!(run("aios19", &zero).unwrap_err(), "--duration: expected a duration > 0");
        let no_mix = Request { mixes: Some(0), ..Request::default() };
        assert!(run("flin18", &no_mix).unwrap_err().starts_with("--mixes:"));
        let bad_load = Request { load: Some(f64::NAN), ..Request::default() };
        assert!(run("flin18", &bad_load).unwrap_err().starts_with("--load:"));
        let bad_rule = Request { classes: Some("loud".into()), ..Request::default() };
        assert!(run("flin18", &bad_rule).unwrap_err().starts_with("--classes: unknown rule \"loud\""));
    }
}
