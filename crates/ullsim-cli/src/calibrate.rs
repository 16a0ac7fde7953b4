//! `ullsim calibrate RESULTS... --base PRESET -o mydrive.toml`: fit a device preset to fio results
//! (`calibrate/calibration.rs`), print the fit table, write the preset file.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use ullsim::calibrate::calibration::{calibrate, Options};

use crate::progress::Progress;

/// `ullsim calibrate`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// fio JSON results (`fio --output-format=json`, `json+`, or ullsim's `--fio-json`), one or more files.
    #[arg(required = true, value_name = "RESULTS")]
    results: Vec<PathBuf>,
    /// The device to start from: a built-in preset (`ullsim presets`) or a preset file.
    #[arg(long, value_name = "PRESET", default_value = "tlc-enterprise")]
    base: String,
    /// Settings over the base for every simulated job, as `run --set` takes them (the host your fio ran
    /// on: `--set host.cores=8`).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Write the fitted preset here (a TOML preset file: `device.preset = "PATH"` uses it).
    #[arg(long, short, value_name = "FILE")]
    output: PathBuf,
    /// Also write the calibration as JSON (fit table, parameters, warnings, the preset's text) to this file.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Also write the calibration's self-contained HTML report (latency against IOPS per job family,
    /// measured beside simulated; the parameters; the warnings) to this file (as `ullsim report` of the JSON).
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// I/Os each simulated job aims for: fewer is a faster, rougher fit.
    #[arg(long, value_name = "N", default_value_t = ullsim::calibrate::evaluate::TARGET_IOS as u64)]
    ios: u64,
}

/// The progress bar of a fit's stages.
pub const FIT_PROGRESS: &str = "{bar:40} {pos}/{len} fit stages, {elapsed} elapsed, ~{eta} left";

/// `--ios`: enough I/Os per simulated job for a rate and a mean to mean something.
pub fn check_ios(ios: u64) -> Result<()> {
    if ios < 100 {
        bail!("--ios {ios}: expected at least 100 I/Os per simulated job");
    }
    Ok(())
}

pub fn main(args: &Args) -> Result<()> {
    check_ios(args.ios)?;
    if args.output.exists() {
        bail!("{}: exists; calibrate does not overwrite a preset (remove it or name another)", args.output.display());
    }
    // A fit takes minutes: a file it could not write is found before it, not after.
    for (flag, path) in [("-o", Some(&args.output)), ("--json", args.json.as_ref()), ("--html", args.html.as_ref())] {
        if let Some(dir) = path.and_then(|p| p.parent()).filter(|d| !d.as_os_str().is_empty() && !d.is_dir()) {
            bail!("{flag} {}: the directory {} does not exist", path.unwrap().display(), dir.display());
        }
    }
    let options = Options { base: args.base.clone(), settings: args.set.clone(), target_ios: args.ios as f64 };
    let progress = Progress::new(FIT_PROGRESS)?;
    let outcome = calibrate(&args.results, &options, &mut |done, total| progress.set(done as u64, total as u64));
    progress.finish();
    let calibration = outcome.map_err(anyhow::Error::msg)?;
    for warning in &calibration.warnings {
        eprintln!("warning: {warning}");
    }
    print!("{}", calibration.table_text());
    let name = args.output.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    std::fs::write(&args.output, calibration.preset_toml(&name))
        .with_context(|| format!("{}: cannot write the preset", args.output.display()))?;
    let json = calibration.to_json(&name);
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&json)?;
        std::fs::write(path, text + "\n").with_context(|| format!("{}: cannot write the JSON", path.display()))?;
    }
    if let Some(path) = &args.html {
        crate::write_html_report(path, &json)?;
    }
    eprintln!(
        "wrote {} ({} simulations of the jobs); use it with device.preset = \"{}\"",
        args.output.display(),
        calibration.outcome.evaluations,
        args.output.display()
    );
    Ok(())
}
