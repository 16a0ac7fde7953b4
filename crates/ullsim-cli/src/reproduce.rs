//! `ullsim reproduce NAME`: a paper's evaluation that takes many runs (generated mixes, alone runs, sweeps
//! over schedulers and depths), written as one `Reproduction` (rows of figure / setting / metric / paper /
//! simulated): JSON with `--json`, and its table. Each NAME takes the flags that apply to it and names any
//! other it is given in an error.

use anyhow::{bail, Result};
use ullsim::reproduce::{aios19, fastresponse22, flashshare18, flin18, hotstorage23, Reproduction};

/// Names accepted by `ullsim reproduce`.
pub const NAMES: &[&str] = &["aios19", "fastresponse22", "flashshare18", "flin18", "hotstorage23"];

pub struct Args<'a> {
    pub name: &'a str,
    pub all: bool,
    pub mixes: Option<u64>,
    pub duration: Option<&'a str>,
    pub classify_duration: Option<&'a str>,
    pub seed: Option<u64>,
    pub load: Option<f64>,
    pub classes: Option<&'a str>,
    pub set: &'a [String],
    pub html: Option<&'a std::path::Path>,
    pub output: &'a crate::Output,
}

pub fn main(args: Args) -> Result<()> {
    match args.name {
        "flin18" => flin18_main(&args),
        "fastresponse22" => fastresponse22_main(&args),
        "hotstorage23" => hotstorage23_main(&args),
        "aios19" => aios19_main(&args),
        "flashshare18" => flashshare18_main(&args),
        other => bail!("unknown reproduction \"{other}\"; expected one of {NAMES:?}"),
    }
}

fn flin18_main(args: &Args) -> Result<()> {
    let apps = ullsim::workload::app::names().into_iter().filter(|n| n.starts_with("flin.")).collect();
    let mut options = if args.all { flin18::Options::full(apps) } else { flin18::Options::quick(apps) };
    if let Some(m) = args.mixes {
        if m == 0 {
            bail!("--mixes: expected at least 1 mix per category");
        }
        options.mixes_per_category = usize::try_from(m).map_err(|_| anyhow::anyhow!("--mixes: {m} is too many"))?;
    }
    if let Some(d) = args.duration {
        options.duration_ns = duration_arg("--duration", d)?;
    }
    if let Some(s) = args.seed {
        options.seed = s;
    }
    if let Some(load) = args.load {
        if !(load.is_finite() && load > 0.0) {
            bail!("--load: expected a rate multiplier > 0, got {load}");
        }
        options.load = load;
    }
    if let Some(name) = args.classes {
        options.classes = flin18::Classes::from_name(name).ok_or_else(|| {
            anyhow::anyhow!("--classes: unknown rule \"{name}\"; expected one of {:?}", flin18::Classes::NAMES)
        })?;
    }
    options.overrides = args.set.to_vec();
    if let Some(d) = args.classify_duration {
        options.classify_duration_ns = duration_arg("--classify-duration", d)?;
    }
    let report = flin18::run(&options).map_err(|e| anyhow::anyhow!("flin18: {e}"))?;
    emit(args, &report.reproduction())
}

/// An error naming the first of flin18's own flags given to the reproduction `name`, which takes only
/// --all, --duration, --seed and --set.
fn reject_flin18_flags(args: &Args, name: &str) -> Result<()> {
    let flin18_only = [
        ("--mixes", args.mixes.is_some()),
        ("--classify-duration", args.classify_duration.is_some()),
        ("--load", args.load.is_some()),
        ("--classes", args.classes.is_some()),
    ];
    if let Some((flag, _)) = flin18_only.iter().find(|(_, given)| *given) {
        bail!("{flag}: not used by {name} (only flin18 takes it); {name} takes --all, --duration, --seed and --set");
    }
    Ok(())
}

fn hotstorage23_main(args: &Args) -> Result<()> {
    reject_flin18_flags(args, "hotstorage23")?;
    let mut options = if args.all { hotstorage23::Options::full() } else { hotstorage23::Options::subset() };
    if let Some(d) = args.duration {
        options.set_duration(duration_arg("--duration", d)?).map_err(anyhow::Error::msg)?;
    }
    if let Some(s) = args.seed {
        options.seed = s;
    }
    options.overrides = args.set.to_vec();
    let reproduction = hotstorage23::run(&options).map_err(|e| anyhow::anyhow!("hotstorage23: {e}"))?;
    emit(args, &reproduction)
}

/// Write the reproduction as JSON (`--json`) and as its table.
fn emit(args: &Args, reproduction: &Reproduction) -> Result<()> {
    if let Some(path) = args.html {
        crate::write_html_report(path, reproduction)?;
    }
    args.output.emit(|| reproduction, || reproduction.table())
}

fn fastresponse22_main(args: &Args) -> Result<()> {
    reject_flin18_flags(args, "fastresponse22")?;
    let mut options = if args.all { fastresponse22::Options::full() } else { fastresponse22::Options::quick() };
    common_flags(args, &mut options.duration_ns, &mut options.seed, &mut options.overrides)?;
    let reproduction = fastresponse22::run(&options).map_err(|e| anyhow::anyhow!("fastresponse22: {e}"))?;
    emit(args, &reproduction)
}

fn aios19_main(args: &Args) -> Result<()> {
    reject_flin18_flags(args, "aios19")?;
    let mut options = if args.all { aios19::Options::full() } else { aios19::Options::quick() };
    common_flags(args, &mut options.duration_ns, &mut options.seed, &mut options.overrides)?;
    let reproduction = aios19::run(&options).map_err(|e| anyhow::anyhow!("aios19: {e}"))?;
    emit(args, &reproduction)
}

fn flashshare18_main(args: &Args) -> Result<()> {
    reject_flin18_flags(args, "flashshare18")?;
    let mut options = if args.all { flashshare18::Options::full() } else { flashshare18::Options::quick() };
    common_flags(args, &mut options.duration_ns, &mut options.seed, &mut options.overrides)?;
    let reproduction = flashshare18::run(&options).map_err(|e| anyhow::anyhow!("flashshare18: {e}"))?;
    emit(args, &reproduction)
}

/// --duration, --seed and --set into a reproduction's options.
fn common_flags(args: &Args, duration_ns: &mut u64, seed: &mut u64, overrides: &mut Vec<String>) -> Result<()> {
    if let Some(d) = args.duration {
        *duration_ns = duration_arg("--duration", d)?;
    }
    if let Some(s) = args.seed {
        *seed = s;
    }
    *overrides = args.set.to_vec();
    Ok(())
}

/// A duration flag's value (bare numbers are seconds), which must be > 0.
fn duration_arg(flag: &str, text: &str) -> Result<u64> {
    let ns = ullsim::config::units::parse_duration(text, 1_000_000_000).map_err(|e| anyhow::anyhow!("{flag}: {e}"))?;
    if ns == 0 {
        bail!("{flag}: expected a duration > 0");
    }
    Ok(ns)
}
