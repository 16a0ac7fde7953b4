//! `ullsim round-trip TRUTH --base BASE -o DIR`: a simulated drive's probe results calibrated from another
//! base, and the preset that comes out checked against the truth on the jobs it was given and on points it
//! was not (`calibrate/round_trip.rs`, docs/calibration.md).

use std::path::PathBuf;

use anyhow::{bail, Result};
use ullsim::calibrate::calibration::Options;
use ullsim::calibrate::round_trip::{round_trip, RoundTripOptions};

use crate::progress::Progress;

/// `ullsim round-trip`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// The drive to recover: a built-in preset or a preset file.
    #[arg(value_name = "TRUTH")]
    truth: String,
    /// The device the calibration starts from: a built-in preset or a preset file.
    #[arg(long, value_name = "PRESET")]
    base: String,
    /// A directory for the probe results (`truth/`, `fitted/`), the fitted preset (`fitted.toml`) and the
    /// round trip as JSON (`round-trip.json`); created, and refused if it holds anything.
    #[arg(long, short, value_name = "DIR")]
    output: PathBuf,
    /// Each read job's measured time, on both sides.
    #[arg(long, value_name = "TIME", default_value = "100ms")]
    duration: String,
    /// Each write job's measured time, on both sides.
    #[arg(long, value_name = "TIME", default_value = "2s")]
    write_duration: String,
    /// I/Os each of the calibration's simulated jobs aims for.
    #[arg(long, value_name = "N", default_value_t = ullsim::calibrate::evaluate::TARGET_IOS as u64)]
    ios: u64,
    /// The read files only (no DESTRUCTIVE write files).
    #[arg(long)]
    reads_only: bool,
    /// Settings over both drives for every simulated job, as `run --set` takes them.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
}

pub fn main(args: &Args) -> Result<()> {
    crate::calibrate::check_ios(args.ios)?;
    if args.output.exists() && std::fs::read_dir(&args.output)?.next().is_some() {
        bail!("{}: not empty; round-trip writes into a new or empty directory", args.output.display());
    }
    let duration = |flag: &str, text: &str| {
        ullsim::config::units::parse_duration(text, 1_000_000_000).map_err(|e| anyhow::anyhow!("{flag} {text}: {e}"))
    };
    let duration_ns = duration("--duration", &args.duration)?;
    let write_duration_ns = duration("--write-duration", &args.write_duration)?;
    std::fs::create_dir_all(&args.output)?;
    let options = RoundTripOptions {
        truth: args.truth.clone(),
        calibration: Options { base: args.base.clone(), settings: args.set.clone(), target_ios: args.ios as f64 },
        duration_ns,
        write_duration_ns,
        writes: !args.reads_only,
    };
    let progress = Progress::new(crate::calibrate::FIT_PROGRESS)?;
    let outcome = round_trip(&options, &args.output, &mut |done, total| progress.set(done as u64, total as u64));
    progress.finish();
    let outcome = outcome.map_err(anyhow::Error::msg)?;
    print!("{}", outcome.table_text());
    let json = args.output.join("round-trip.json");
    std::fs::write(&json, serde_json::to_string_pretty(&outcome)? + "\n")?;
    eprintln!("wrote {} and {}", outcome.preset.display(), json.display());
    Ok(())
}
