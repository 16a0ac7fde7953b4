//! `ullsim reproduce NAME`: a paper's evaluation that takes many runs (generated mixes, alone runs, sweeps
//! over schedulers and depths), written as one `Reproduction` (rows of figure / setting / metric /
//! paper / simulated): JSON with `--json`, and its table. The library's `reproduce::named` runs it by
//! name, and names any flag a reproduction does not take in an error. `ullsim reproduce all` runs every one
//! and ends with their scorecard.

use anyhow::Result;
use ullsim::reproduce::named;

use crate::whole_number;

/// The options `ullsim reproduce NAME` takes; each reproduction names any it does not use in an error.
#[derive(clap::Args)]
pub struct Flags {
    /// Run the full evaluation (default: a subset small enough for CI).
    #[arg(long)]
    pub all: bool,
    /// flin18: mixes per category (overrides the default of the subset or of --all).
    #[arg(long, allow_negative_numbers = true, value_parser = whole_number)]
    pub mixes: Option<u64>,
    /// Simulated time of every run (flin18: every mix run), e.g. 500ms (bare numbers are seconds).
    #[arg(long, allow_hyphen_values = true)]
    pub duration: Option<String>,
    /// flin18: simulated time of the alone runs that classify the apps (long enough for GC to start).
    #[arg(long, allow_hyphen_values = true)]
    pub classify_duration: Option<String>,
    /// Seed of every run (flin18: and of the mix draw).
    #[arg(long, allow_negative_numbers = true, value_parser = whole_number)]
    pub seed: Option<u64>,
    /// flin18: multiply every app's request rate by this factor (default 1: the paper's Table 2 rates).
    #[arg(long, allow_negative_numbers = true)]
    pub load: Option<f64>,
    /// flin18: how apps are classified into high- and low-interference: "measured" (FLIN's 8% die-busy rule on
    /// each app's alone run, the default) or "table2" (the classes printed in FLIN's Table 2).
    #[arg(long, value_name = "RULE")]
    pub classes: Option<String>,
    /// Override a key of every run's scenario, e.g. --set device.flash.program_suspend=true
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

impl From<Flags> for named::Request {
    fn from(f: Flags) -> named::Request {
        let Flags { all, mixes, duration, classify_duration, seed, load, classes, set } = f;
        named::Request { all, mixes, duration, classify_duration, seed, load, classes, set }
    }
}

pub struct Args<'a> {
    pub name: &'a str,
    pub request: named::Request,
    pub html: Option<&'a std::path::Path>,
    pub output: &'a crate::Output,
}

pub fn main(args: Args) -> Result<()> {
    if args.name == "all" {
        if args.html.is_some() {
            anyhow::bail!("--html: `reproduce all` writes no report; run `ullsim report` on one paper's --json");
        }
        let card = named::run_all(&args.request).map_err(anyhow::Error::msg)?;
        return args.output.emit(
            || &card,
            || {
                let tables: Vec<String> = card.reproductions.iter().map(|r| r.table()).collect();
                format!("{}\n{}", tables.join("\n"), card.table())
            },
        );
    }
    let reproduction = named::run(args.name, &args.request).map_err(anyhow::Error::msg)?;
    if let Some(path) = args.html {
        crate::write_html_report(path, &reproduction)?;
    }
    args.output.emit(|| &reproduction, || reproduction.table())
}
