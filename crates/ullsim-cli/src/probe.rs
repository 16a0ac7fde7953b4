//! `ullsim probe -o DIR`: the probe set's fio job files (and `run.sh`) for the user's drive, or with
//! `--simulate DEVICE` also the fio JSON a simulated drive gives for them (`calibrate/probe*.rs`).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use ullsim::calibrate::probe::{self, ProbePoints, PLACEHOLDER_FILENAME};
use ullsim::calibrate::probe_sim::SimulatedProbe;

/// `ullsim probe`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// Directory to write the job files (and with --simulate, their JSON results) to; made if missing.
    #[arg(long, short, value_name = "DIR")]
    output: PathBuf,
    /// The device the jobs run on (fio's `filename`). The default is a placeholder fio refuses.
    #[arg(long, value_name = "DEVICE", default_value = PLACEHOLDER_FILENAME)]
    filename: String,
    /// Queue depths of the one-job 4 KiB random-read sweep (default 1,4,16,64,256).
    #[arg(long, value_name = "QD,...", value_delimiter = ',')]
    qd: Vec<u32>,
    /// Job counts of the QD 32 4 KiB random-read sweep (default 1,4).
    #[arg(long, value_name = "N,...", value_delimiter = ',')]
    numjobs: Vec<u32>,
    /// Also run the measured jobs in the simulator on this device (a built-in preset, a preset file or a
    /// scenario file, whose device and host are used) and write fio's JSON of each file, as fio would.
    #[arg(long, value_name = "PRESET_OR_SCENARIO")]
    simulate: Option<String>,
    /// With --simulate: the measured time of each simulated job (after a ramp of a fifth of it).
    #[arg(long, value_name = "TIME", default_value = "50ms", requires = "simulate")]
    duration: String,
    /// With --simulate: settings over the device for every job, as `run --set` takes them (the host the
    /// jobs run on: `--set host.cpu.speed=0.8`).
    #[arg(long = "set", value_name = "KEY=VALUE", requires = "simulate")]
    set: Vec<String>,
}

pub fn main(args: &Args) -> Result<()> {
    let mut points = ProbePoints::default();
    for (given, into, flag, most) in [
        (&args.qd, &mut points.queue_depths, "--qd", ullsim::config::scenario::MAX_IODEPTH),
        (&args.numjobs, &mut points.job_counts, "--numjobs", ullsim::config::scenario::MAX_NUMJOBS),
    ] {
        if let Some(bad) = given.iter().find(|&&n| n == 0 || n > most) {
            bail!("{flag} {bad}: expected whole numbers from 1 to {most}");
        }
        if !given.is_empty() {
            *into = given.clone();
            into.sort_unstable();
            into.dedup();
        }
    }
    if args.filename.trim().is_empty() || args.filename.contains(['\n', '\r']) {
        bail!("--filename: expected a device path like /dev/nvme0n1");
    }
    let files = probe::probe_set(&points);
    // Simulated results: check the device before anything is written.
    let simulated = match &args.simulate {
        None => None,
        Some(what) => {
            let ns = ullsim::config::units::parse_duration(&args.duration, 1_000_000_000)
                .map_err(|e| anyhow::anyhow!("--duration {}: {e}", args.duration))?;
            let probe = SimulatedProbe::new(what, ns).and_then(|p| p.with_settings(args.set.clone()));
            Some(probe.map_err(anyhow::Error::msg)?)
        }
    };
    let dir = &args.output;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot make {}", dir.display()))?;
    if simulated.is_some() {
        // fio's results of the user's drive may be there: never replace them with simulated ones.
        for file in files.iter().filter(|f| f.measured) {
            let json = dir.join(format!("{}.json", file.stem));
            if json.exists() {
                bail!(
                    "{} exists (results of an earlier run?): remove it or write to another directory",
                    json.display()
                );
            }
        }
    }
    for file in &files {
        write(&dir.join(format!("{}.fio", file.stem)), &probe::job_file_text(file, &args.filename))?;
    }
    let script = dir.join("run.sh");
    write(&script, &probe::run_script(&files, &args.filename))?;
    make_executable(&script)?;
    let jobs: usize = files.iter().map(|f| f.jobs.len()).sum();
    println!("{}: {} fio job files ({jobs} jobs) and run.sh", dir.display(), files.len());
    for file in &files {
        println!(
            "  {}.fio  {} job{}: {}",
            file.stem,
            file.jobs.len(),
            if file.jobs.len() == 1 { "" } else { "s" },
            file.what
        );
    }
    eprintln!(
        "warning: the DESTRUCTIVE-*.fio files WRITE to {} and destroy all data on it; run.sh runs them only when \
         given --destroy-data",
        args.filename
    );
    if let Some(simulated) = simulated {
        let measured: usize = files.iter().filter(|f| f.measured).map(|f| f.jobs.len()).sum();
        eprintln!("simulating {measured} jobs of {} each ...", simulated.describe_duration());
        for (stem, document) in simulated.run(&files).map_err(anyhow::Error::msg)? {
            let text = serde_json::to_string_pretty(&document)? + "\n";
            let path = dir.join(format!("{stem}.json"));
            write(&path, &text)?;
            println!("  {}  simulated", path.display());
        }
    } else {
        println!("Run the read-only probes: {}/run.sh (see docs/calibration.md)", dir.display());
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(unix)]
fn make_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot make {} executable", path.display()))
}

#[cfg(not(unix))]
fn make_executable(_: &Path) -> Result<()> {
    Ok(())
}
