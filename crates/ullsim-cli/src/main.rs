//! `ullsim`: run, compare, check and inspect scenarios; measure the simulator's own speed.

mod bench;
mod calibrate;
mod compare;
mod probe;
mod progress;
mod reproduce;
mod round_trip;
mod table;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use ullsim::config::builtin::{self, BuiltIn};
use ullsim::config::units::describe_bytes;
use ullsim::config::{platforms, preset_file, presets, stacks};
use ullsim::Scenario;

#[derive(Parser)]
#[command(name = "ullsim", version, about = "Full-stack simulator of low-latency I/O on ultra-low-latency SSDs")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Where results go: a table on the terminal and, optionally, JSON.
#[derive(clap::Args)]
pub struct Output {
    /// Write the results as JSON to this file ("-" for standard output, which then carries only JSON).
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Print no table.
    #[arg(long, short)]
    quiet: bool,
}

impl Output {
    /// Write `value()` as pretty JSON if asked, then print `table()` unless quiet or the JSON went to
    /// standard output.
    pub fn emit<T: serde::Serialize>(&self, value: impl FnOnce() -> T, table: impl FnOnce() -> String) -> Result<()> {
        let to_stdout = match &self.json {
            None => false,
            Some(p) => {
                let text = serde_json::to_string_pretty(&value())? + "\n";
                if p.as_os_str() == "-" {
                    print!("{text}");
                    true
                } else {
                    std::fs::write(p, text).with_context(|| format!("cannot write {}", p.display()))?;
                    false
                }
            }
        };
        if !self.quiet && !to_stdout {
            print!("{}", table());
        }
        Ok(())
    }
}

/// What `ullsim run` writes on standard output.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum OutputFormat {
    /// The terminal table.
    Table,
    /// The results as JSON (docs/output.md).
    Json,
    /// The results in fio's JSON layout (docs/output.md, "fio-json").
    FioJson,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario (the built-in default when no file is given) and print its results.
    Run {
        /// Scenario file (TOML). Omit to run the built-in default.
        scenario: Option<PathBuf>,
        /// Override any key, e.g. --set device.flash.read_ns=3000 --set flow.reader.iodepth=4
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Seed (overrides the scenario's).
        #[arg(long, allow_negative_numbers = true, value_parser = whole_number)]
        seed: Option<u64>,
        /// Also run every flow alone and report slowdown, fairness and weighted speedup.
        #[arg(long)]
        fairness: bool,
        /// Write the time series as CSV to this file (needs `[metrics] timeseries_interval`, e.g.
        /// --set metrics.timeseries_interval=1ms).
        #[arg(long, value_name = "PATH")]
        timeseries: Option<PathBuf>,
        /// What standard output carries: the table, the results as JSON (as `--json -`), or the results in
        /// fio's JSON layout (as `--fio-json -`).
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        output_format: OutputFormat,
        /// Write the results in fio's JSON layout (`fio --output-format=json`) to this file ("-" for standard
        /// output).
        #[arg(long, value_name = "PATH")]
        fio_json: Option<PathBuf>,
        /// Also write the results as one self-contained HTML report to this file (as `ullsim report`).
        #[arg(long, value_name = "PATH")]
        html: Option<PathBuf>,
        #[command(flatten)]
        output: Output,
    },
    /// Run a scenario in several variants (every combination of the --vary values) in parallel, side by side.
    Compare {
        /// Scenario file (TOML). Omit to use the built-in default.
        scenario: Option<PathBuf>,
        /// A key and the values to try, e.g. --vary flow.reader.iodepth=1,4,16 (repeat for the product, at most
        /// 10000 variants).
        #[arg(long, value_name = "KEY=V1,V2,...", required = true)]
        vary: Vec<String>,
        /// Override any key in every variant (applied before --vary; a key may not be both set and varied).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Seed (overrides the scenario's).
        #[arg(long, allow_negative_numbers = true, value_parser = whole_number)]
        seed: Option<u64>,
        /// Write every variant's time series as CSV to this file, with a leading `variant` column (needs
        /// `[metrics] timeseries_interval`).
        #[arg(long, value_name = "PATH")]
        timeseries: Option<PathBuf>,
        /// Also write the comparison as one self-contained HTML report to this file (as `ullsim report`).
        #[arg(long, value_name = "PATH")]
        html: Option<PathBuf>,
        #[command(flatten)]
        output: Output,
    },
    /// Reproduce a paper's multi-run evaluation (flin18: FLIN's four-flow mixes under Sprinkler,
    /// Sprinkler+Fairness and FLIN; hotstorage23: Table 1 and Figs. 1-5 under each blk-mq scheduler;
    /// fastresponse22: RocksDB readrandom and fillsync beside five apps under five stacks; aios19: AIOS
    /// against vanilla on fio, RocksDB, Filebench and OLTP models; flashshare18: Table 3's online apps beside
    /// its offline apps under FlashShare's stacks), with the paper's figures beside the simulated ones.
    Reproduce {
        /// Which evaluation: flin18, hotstorage23, fastresponse22, aios19 or flashshare18; or `all`: every
        /// one, then their scorecard (the predicted rows by verdict).
        name: String,
        #[command(flatten)]
        flags: reproduce::Flags,
        /// Also write the reproduction as one self-contained HTML report to this file (as `ullsim report`).
        #[arg(long, value_name = "PATH")]
        html: Option<PathBuf>,
        #[command(flatten)]
        output: Output,
    },
    /// Write one self-contained HTML report (inline SVG charts, no JavaScript, opens offline) of a results
    /// JSON (`ullsim run --json`), a comparison JSON (`ullsim compare --json`), a reproduction JSON
    /// (`ullsim reproduce --json`) or a calibration JSON (`ullsim calibrate --json`):
    /// `ullsim report RESULTS.json report.html`.
    Report {
        /// The JSON file to report on.
        json: PathBuf,
        /// Where to write the HTML (or give it with -o).
        #[arg(value_name = "HTML", required_unless_present = "output", conflicts_with = "output")]
        html: Option<PathBuf>,
        /// Where to write the HTML.
        #[arg(long, short, value_name = "PATH")]
        output: Option<PathBuf>,
    },
    /// Check a scenario without running it (also reads every trace it names to the end).
    Validate {
        scenario: PathBuf,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// List device presets, or print one in full with the source of every value.
    Presets {
        name: Option<String>,
        /// List the preset files (`*.toml`, as `device.preset = "DIR/NAME.toml"` names them) in this directory,
        /// or print the one called NAME, instead of the built-in presets.
        #[arg(long, value_name = "DIR")]
        path: Option<PathBuf>,
    },
    /// List host stacks (named sets of [host] policy choices), or print one with every setting.
    Stacks { name: Option<String> },
    /// List host platforms (the machines the papers ran on: cores, sockets, memory), or print one with the
    /// paper's words beside every value.
    Platforms { name: Option<String> },
    /// Write the probe set: fio job files that measure what a calibration of a drive needs (docs/calibration.md),
    /// read-only ones apart from the DESTRUCTIVE ones that write; with --simulate, also the fio JSON a
    /// simulated drive gives for them.
    Probe(probe::Args),
    /// Fit a device preset to fio results (docs/calibration.md): prints measured beside simulated per job and
    /// writes the preset file, every fitted value with the files it was fitted from.
    Calibrate(calibrate::Args),
    /// Check a calibration where the answer is known: a simulated drive runs the probe set, is calibrated from
    /// another base, and the fitted preset runs the jobs it was given and points it was not beside it.
    RoundTrip(round_trip::Args),
    /// Measure the simulator's speed and memory on fixed cases (each in its own process).
    Bench {
        /// Write the results as JSON to this file.
        #[arg(long, value_name = "PATH")]
        json: Option<PathBuf>,
        /// Run only this case.
        #[arg(long)]
        case: Option<String>,
        /// Internal: run one case in this process and print its JSON line.
        #[arg(long, hide = true)]
        child: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Run { scenario, set, seed, fairness, timeseries, output_format, fio_json, html, output } => {
            let flags = RunFlags {
                fairness,
                timeseries: timeseries.as_deref(),
                output_format,
                fio_json: fio_json.as_deref(),
                html: html.as_deref(),
            };
            run(scenario.as_deref(), &set, seed, &flags, &output)
        }
        Command::Compare { scenario, vary, set, seed, timeseries, html, output } => compare::main(compare::Args {
            path: scenario.as_deref(),
            set: &set,
            vary: &vary,
            seed,
            timeseries: timeseries.as_deref(),
            html: html.as_deref(),
            output: &output,
        }),
        Command::Reproduce { name, flags, html, output } => reproduce::main(reproduce::Args {
            name: &name,
            request: flags.into(),
            html: html.as_deref(),
            output: &output,
        }),
        Command::Report { json, html, output } => match html.or(output) {
            Some(html) => report(&json, &html),
            None => Err(anyhow::anyhow!("report: expected where to write the HTML (ullsim report JSON HTML)")),
        },
        Command::Validate { scenario, set } => validate(&scenario, &set),
        Command::Presets { name, path: None } => show_presets(name.as_deref()),
        Command::Presets { name, path: Some(dir) } => show_preset_files(&dir, name.as_deref()),
        Command::Stacks { name } => show_stacks(name.as_deref()),
        Command::Platforms { name } => show_platforms(name.as_deref()),
        Command::Probe(args) => probe::main(&args),
        Command::Calibrate(args) => calibrate::main(&args),
        Command::RoundTrip(args) => round_trip::main(&args),
        Command::Bench { json, case, child } => bench::main(json.as_deref(), case.as_deref(), child),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// A flag's whole number. Negative numbers reach it (`allow_negative_numbers`) so that `--seed -1` is an error
/// about the value rather than clap's "unexpected argument '-1'", and the error says what is accepted (clap's
/// own says "invalid digit found in string").
fn whole_number(text: &str) -> Result<u64, String> {
    text.parse().map_err(|_| format!("expected a whole number from 0 to {}", u64::MAX))
}

fn load(path: Option<&Path>, set: &[String], seed: Option<u64>) -> Result<Scenario> {
    let mut scenario = match path {
        Some(p) => Scenario::load(p, set)?,
        None => Scenario::builtin_default(set)?,
    };
    // Set directly rather than through TOML, whose integers stop at 2^63 - 1.
    if let Some(seed) = seed {
        scenario.seed = seed;
    }
    Ok(scenario)
}

/// `--timeseries` needs a series to write: say so before running rather than after.
fn check_timeseries_flag(scenario: &Scenario) -> Result<()> {
    if scenario.metrics.timeseries_interval.0 == 0 {
        bail!(
            "--timeseries: {} sets no metrics.timeseries_interval, so there is no series to write; set one in \
             [metrics] or with --set metrics.timeseries_interval=1ms",
            scenario.source_name
        );
    }
    Ok(())
}

/// Create `path` and let `write` fill it (buffered), naming the file in any error.
fn write_file(path: &Path, write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>) -> Result<()> {
    let file = std::fs::File::create(path).with_context(|| format!("cannot write {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    write(&mut out)
        .and_then(|()| std::io::Write::flush(&mut out))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// `ullsim run`'s flags beyond the scenario, its overrides and the shared output ones.
struct RunFlags<'a> {
    fairness: bool,
    timeseries: Option<&'a Path>,
    output_format: OutputFormat,
    fio_json: Option<&'a Path>,
    html: Option<&'a Path>,
}

fn is_stdout(path: Option<&Path>) -> bool {
    path.is_some_and(|p| p.as_os_str() == "-")
}

fn run(path: Option<&Path>, set: &[String], seed: Option<u64>, flags: &RunFlags, output: &Output) -> Result<()> {
    let RunFlags { fairness, timeseries, output_format, fio_json, html } = *flags;
    // Standard output carries one document: say so before running rather than interleave two.
    let native_to_stdout = output_format == OutputFormat::Json || is_stdout(output.json.as_deref());
    let fio_to_stdout = output_format == OutputFormat::FioJson || is_stdout(fio_json);
    if native_to_stdout && fio_to_stdout {
        bail!(
            "the results as JSON (--json - or --output-format json) and in fio's layout (--fio-json - or \
             --output-format fio-json) cannot both go to standard output; write one of them to a file"
        );
    }
    // `--output-format json` is `--json -`; `--json FILE` with it would lose the file.
    if output_format == OutputFormat::Json && output.json.as_ref().is_some_and(|p| p.as_os_str() != "-") {
        bail!("--output-format json writes the JSON to standard output, and --json names a file: use one of them");
    }
    if output_format == OutputFormat::FioJson && fio_json.is_some_and(|p| p.as_os_str() != "-") {
        bail!("--output-format fio-json writes fio's layout to standard output, and --fio-json names a file: use one of them");
    }
    let mut scenario = load(path, set, seed)?;
    if timeseries.is_some() {
        check_timeseries_flag(&scenario)?;
    }
    // A bad line at the end of a trace is found in a read of it, not seconds into the simulation.
    scenario.check_traces()?;
    if let Some(note) = ullsim::map_memory_note(&scenario) {
        eprintln!("note: {}: {note}", scenario.source_name);
    }
    scenario.metrics.fairness |= fairness;
    // fio's layout has one entry per job of a flow unless the flow sets group_reporting, as fio's default.
    scenario.metrics.per_job |= fio_to_stdout || fio_json.is_some();
    let started = Instant::now();
    let progress = progress::Progress::new("{bar:40} {percent:>3}% simulated, {elapsed} elapsed, ~{eta} left")?;
    let outcome = ullsim::run_scenario_with_progress(&scenario, &mut |now, end| progress.set(now, end));
    progress.finish();
    let results = outcome.with_context(|| format!("{}: run failed", scenario.source_name))?;
    let wall = started.elapsed().as_secs_f64();
    if let (Some(path), Some(series)) = (timeseries, &results.timeseries) {
        write_file(path, |out| series.write_csv(out))?;
    }
    if let Some(path) = html {
        write_html_report(path, &results)?;
    }
    if fio_to_stdout || fio_json.is_some() {
        let text = serde_json::to_string_pretty(&ullsim::export::fio_json::fio_json(&scenario, &results))? + "\n";
        match fio_json.filter(|_| !fio_to_stdout) {
            Some(path) => std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?,
            None => print!("{text}"),
        }
    }
    let output = Output {
        json: if output_format == OutputFormat::Json { Some(PathBuf::from("-")) } else { output.json.clone() },
        // Standard output carries fio's layout: no table after it.
        quiet: output.quiet || fio_to_stdout,
    };
    output.emit(|| &results, || table::render(&scenario, &results, wall))
}

/// Write the HTML report of `value` (results, a comparison, a reproduction or a calibration) to `path`.
pub fn write_html_report(path: &Path, value: &impl serde::Serialize) -> Result<()> {
    let json = serde_json::to_value(value)?;
    let html = ullsim_report::results_report(&json).map_err(|e| anyhow::anyhow!("--html: {e}"))?;
    std::fs::write(path, html).with_context(|| format!("cannot write {}", path.display()))
}

/// `ullsim report JSON HTML`: the HTML report of a results, comparison, reproduction or calibration JSON file.
fn report(json_path: &Path, html_path: &Path) -> Result<()> {
    let text = std::fs::read_to_string(json_path).with_context(|| format!("cannot read {}", json_path.display()))?;
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!("{}: not valid JSON ({e}); expected {}", json_path.display(), ullsim_report::EXPECTED)
    })?;
    let html = ullsim_report::results_report(&json).map_err(|e| anyhow::anyhow!("{}: {e}", json_path.display()))?;
    std::fs::write(html_path, html).with_context(|| format!("cannot write {}", html_path.display()))
}

fn validate(path: &Path, set: &[String]) -> Result<()> {
    let scenario = Scenario::load(path, set)?;
    let records = scenario.check_traces()?;
    // Building the device checks what only setup can (e.g. preconditioning fits the drive).
    ullsim::Simulation::new(&scenario).map_err(|e| anyhow::anyhow!("{}: {e}", scenario.source_name))?;
    let map_most = ullsim::device::Device::map_bytes_at_most(&scenario.device);
    // Drives of other presets (`[drives.nvmeN]`) are named each; the capacity and map are nvme0's.
    let presets: Vec<&str> = scenario.drive_configs().map(|d| d.preset.as_str()).collect();
    let device = match presets.windows(2).all(|w| w[0] == w[1]) {
        true => format!("device {}", presets[0]),
        false => format!("drives {}", presets.join(", ")),
    };
    println!(
        "{}: ok ({} flow{}, {device}, {:.1} GiB logical{}{})",
        path.display(),
        scenario.flows.len(),
        if scenario.flows.len() == 1 { "" } else { "s" },
        scenario.device.logical_capacity_bytes() as f64 / (1u64 << 30) as f64,
        if map_most > 0 { format!(", map up to {}", describe_bytes(map_most)) } else { String::new() },
        if records > 0 { format!(", {records} trace records") } else { String::new() }
    );
    if let Some(note) = ullsim::map_memory_note(&scenario) {
        eprintln!("note: {}: {note}", scenario.source_name);
    }
    Ok(())
}

fn show_stacks(name: Option<&str>) -> Result<()> {
    let usage = "`ullsim stacks NAME` prints one in full; use it as [host] stack = \"NAME\" (any [host] key still overrides it).";
    show_catalog("stack", stacks::STACKS, name, usage)
}

fn show_platforms(name: Option<&str>) -> Result<()> {
    let usage = "`ullsim platforms NAME` prints one in full; use it as [host] platform = \"NAME\" (the stack's and \
                 the scenario's [host] keys still override it).";
    show_catalog("platform", platforms::PLATFORMS, name, usage)
}

fn show_presets(name: Option<&str>) -> Result<()> {
    let usage = "`ullsim presets NAME` prints one in full; use it as [device] preset = \"NAME\".";
    show_catalog("preset", presets::PRESETS, name, usage)
}

/// `ullsim presets --path DIR [NAME]`: the preset files in `dir`, or the text of the one called `name` with
/// every key of its bases.
fn show_preset_files(dir: &Path, name: Option<&str>) -> Result<()> {
    let files = preset_file::list(dir).map_err(anyhow::Error::msg)?;
    match name {
        None => {
            let width = files.iter().map(|f| f.name.len()).max().unwrap_or(0).max(16);
            for file in &files {
                println!("{:<width$} {}", file.name, file.summary);
            }
            if files.is_empty() {
                println!("(no preset files, *.toml, in {})", dir.display());
            }
            let example = dir.join("NAME.toml");
            println!(
                "
`ullsim presets --path {} NAME` prints one in full; use it as [device] preset = \"{}\" (relative \
                 to the scenario's directory).",
                dir.display(),
                example.display()
            );
        }
        Some(n) => {
            let Some(file) = files.iter().find(|f| f.name == n) else {
                let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
                bail!("no preset file \"{n}.toml\" in {}; expected one of {names:?}", dir.display());
            };
            let text = preset_file::read(&file.path).map_err(anyhow::Error::msg)?;
            print!("{text}");
            if let Some((base, every_key)) = preset_file::with_base_text(&file.path).map_err(anyhow::Error::msg)? {
                print!("\n# Every key of {n}, with those of its base {base}:\n{}", commented(&every_key));
            }
        }
    }
    Ok(())
}

/// `text` as TOML comments: a preset printed with its base's keys stays one valid preset to copy (the keys
/// it sets, then every key it ends with, whose tables repeat the preset's own).
fn commented(text: &str) -> String {
    text.lines().map(|line| if line.is_empty() { "#\n".to_string() } else { format!("# {line}\n") }).collect()
}

/// List a built-in catalog (presets, stacks), or print the TOML of the entry called `name`.
fn show_catalog(what: &str, list: &'static [BuiltIn], name: Option<&str>, usage: &str) -> Result<()> {
    match name {
        None => {
            // The names' column is as wide as the longest name, and at least 16.
            let width = list.iter().map(|e| e.name.len()).max().unwrap_or(0).max(16);
            for entry in list {
                println!("{:<width$} {}", entry.name, entry.summary);
            }
            println!("\n{usage}");
        }
        Some(n) => match builtin::find(list, n) {
            Some(entry) => {
                print!("{}", entry.toml);
                if let Some((base, text)) = builtin::with_base_text(list, entry).map_err(anyhow::Error::msg)? {
                    print!("\n# Every key of {n}, with those of its base {base}:\n{}", commented(&text));
                }
            }
            None => bail!("unknown {what} \"{n}\"; expected one of {:?}", builtin::names(list)),
        },
    }
    Ok(())
}
