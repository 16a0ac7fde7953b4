//! `ullsim probe`: the probe set's fio job files (parsed back: every job's shape is the probe set's),
//! destructive jobs only in destructive files, and `--simulate`'s fio JSON (shapes, plausible figures from
//! the preset, same bytes twice).

use std::collections::BTreeMap;
use std::path::Path;

use ullsim::calibrate::probe::{probe_set, ProbePoints};
use ullsim::calibrate::{JobShape, Pattern};

use crate::common::ullsim;

/// A fio job file: its sections in order, each with its `key=value` lines (comments `;`/`#` dropped). Keys
/// without a value (`stonewall`) map to "".
fn parse_fio(text: &str) -> Vec<(String, BTreeMap<String, String>)> {
    let mut sections: Vec<(String, BTreeMap<String, String>)> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with([';', '#']) {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            sections.push((name.to_string(), BTreeMap::new()));
            continue;
        }
        let (key, value) = line.split_once('=').unwrap_or((line, ""));
        let (_, keys) = sections.last_mut().unwrap_or_else(|| panic!("a key before any section: {line}"));
        assert!(keys.insert(key.trim().to_string(), value.trim().to_string()).is_none(), "{key} twice");
    }
    sections
}

/// fio's size (`4k`, `128k`) in bytes.
fn fio_bytes(text: &str) -> u64 {
    let (digits, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len()));
    let unit = match unit {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        other => panic!("unit {other}"),
    };
    digits.parse::<u64>().unwrap() * unit
}

/// The shape a job section's keys give.
fn shape_of(keys: &BTreeMap<String, String>) -> JobShape {
    let rw = keys["rw"].as_str();
    let read_percent = match rw {
        "read" | "randread" => 100,
        "write" | "randwrite" => 0,
        _ => keys["rwmixread"].parse().unwrap(),
    };
    JobShape {
        pattern: if rw.starts_with("rand") { Pattern::Random } else { Pattern::Sequential },
        read_percent,
        block_size: fio_bytes(&keys["bs"]),
        iodepth: keys["iodepth"].parse().unwrap(),
        numjobs: keys["numjobs"].parse().unwrap(),
    }
}

/// Every `*.fio` file of `dir`: stem and text.
fn fio_files(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fio"))
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect()
}

#[test]
fn the_job_files_are_fio_files_of_the_probe_sets_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("probe");
    let run = ullsim(["probe", "-o", out.to_str().unwrap(), "--filename", "/dev/nvme9n1"]).ok();
    assert!(run.stderr.contains("warning:") && run.stderr.contains("DESTRUCTIVE"), "{}", run.describe());
    let files = fio_files(&out);
    let set = probe_set(&ProbePoints::default());
    assert_eq!(files.keys().collect::<Vec<_>>(), {
        let mut s: Vec<_> = set.iter().map(|f| &f.stem).collect();
        s.sort();
        s
    });
    for probe_file in &set {
        let text = &files[&probe_file.stem];
        let sections = parse_fio(text);
        let (global, jobs) = sections.split_first().expect("sections");
        assert_eq!(global.0, "global");
        assert_eq!(global.1["filename"], "/dev/nvme9n1");
        assert_eq!((global.1["direct"].as_str(), global.1["ioengine"].as_str()), ("1", "libaio"));
        let destructive = probe_file.stem.starts_with("DESTRUCTIVE");
        assert_eq!(text.lines().next().unwrap().contains("DESTRUCTIVE"), destructive, "{text}");
        assert_eq!(global.1.get("readonly").map(String::as_str), (!destructive).then_some("1"), "{text}");
        assert_eq!(jobs.len(), probe_file.jobs.len());
        for ((name, keys), job) in jobs.iter().zip(&probe_file.jobs) {
            assert_eq!(name, &job.name);
            assert_eq!(shape_of(keys), job.shape, "{name}");
            // Destructive jobs only in destructive files.
            assert!(destructive || !shape_of(keys).writes(), "{name} writes in {}", probe_file.stem);
            assert!(keys.contains_key("stonewall"), "{name}: jobs run one after another");
            if keys.contains_key("time_based") {
                assert!(keys["runtime"].parse::<u32>().unwrap() > 0, "{name}");
                assert!(keys.contains_key("ramp_time"), "{name}");
            } else {
                assert!(keys.contains_key("loops"), "{name}: a fill");
            }
        }
    }
    // The script runs only the read-only files unless told to destroy data.
    let script = std::fs::read_to_string(out.join("run.sh")).unwrap();
    let guard = script.find("--destroy-data\" ]").expect("a guard");
    for file in &set {
        let at = script.find(&format!("--output={0}.json {0}.fio", file.stem)).expect("each file runs");
        assert_eq!(at > guard, file.destructive(), "{script}");
    }
    // Without --filename: a placeholder fio refuses.
    let placeholder = dir.path().join("placeholder");
    ullsim(["probe", "-o", placeholder.to_str().unwrap()]).ok();
    assert!(fio_files(&placeholder).values().all(|t| t.contains("filename=/dev/CHANGE-ME")));
}

#[test]
fn other_points_are_asked_for_by_flags() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    ullsim(["probe", "-o", out, "--qd", "2,8,128", "--numjobs", "8,2"]).ok();
    let files = fio_files(dir.path());
    let depths: Vec<u32> =
        parse_fio(&files["randread-4k-qd"])[1..].iter().map(|(_, k)| k["iodepth"].parse().unwrap()).collect();
    assert_eq!(depths, [2, 8, 128]);
    let jobs: Vec<u32> =
        parse_fio(&files["randread-4k-jobs"])[1..].iter().map(|(_, k)| k["numjobs"].parse().unwrap()).collect();
    assert_eq!(jobs, [2, 8]);
    ullsim(["probe", "-o", out, "--qd", "0"]).fails_with(&["--qd 0", "from 1 to"]);
}

/// `probe --simulate DEVICE` into `dir`: each written JSON file's stem and document.
fn simulate(dir: &Path, device: &str) -> BTreeMap<String, serde_json::Value> {
    ullsim(["probe", "-o", dir.to_str().unwrap(), "--simulate", device, "--duration", "20ms"]).ok();
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            (stem, serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap())
        })
        .collect()
}

#[test]
fn simulate_writes_fio_json_of_every_measured_job_with_plausible_figures() {
    let dir = tempfile::tempdir().unwrap();
    let documents = simulate(dir.path(), "optane-ull");
    let set = probe_set(&ProbePoints::default());
    let measured: Vec<_> = set.iter().filter(|f| f.measured).collect();
    assert_eq!(documents.len(), measured.len(), "one JSON per measured file: {:?}", documents.keys());
    let mut by_name = BTreeMap::new();
    for file in &measured {
        let jobs = documents[&file.stem]["jobs"].as_array().expect("jobs");
        assert_eq!(jobs.len(), file.jobs.len(), "{}", file.stem);
        for (i, (entry, job)) in jobs.iter().zip(&file.jobs).enumerate() {
            assert_eq!(entry["jobname"], job.name.as_str());
            assert_eq!(entry["groupid"], i, "each job its own group, as after fio's stonewall");
            let options = &entry["job options"];
            let text = |key: &str| options[key].as_str().unwrap_or_else(|| panic!("{key} in {options}")).to_string();
            let keys: BTreeMap<String, String> = ["rw", "bs", "iodepth", "numjobs"]
                .iter()
                .map(|k| (k.to_string(), text(k)))
                .chain(options.get("rwmixread").map(|m| ("rwmixread".to_string(), m.as_str().unwrap().to_string())))
                .collect();
            assert_eq!(shape_of(&keys), job.shape, "{}", job.name);
            by_name.insert(job.name.clone(), entry.clone());
        }
    }
    // QD 1 4 KiB reads: above the preset's serial device stages (doorbell, fetch, command, media read, one
    // 4 KiB transfer on the link), and at the end-to-end latency the preset is calibrated to with the
    // default host (optane-ull's file: ~12.5 us, HotStorage'23 Table 1's fio median 12.52 us).
    let scenario = ullsim::Scenario::from_toml_str(
        "[device]\npreset = \"optane-ull\"\n[[flow]]\nname = \"r\"\nrw = \"randread\"\n",
        "t",
        Path::new("."),
        &[],
    )
    .unwrap();
    let d = &scenario.device;
    let hi = &d.host_interface;
    let link = hi.pcie_lanes as f64 * hi.pcie_lane_bytes_per_s;
    let device_ns = (hi.doorbell_ns.0 + hi.command_fetch_ns.0 + hi.command_process_ns.0 + d.flash.read_ns.0) as f64
        + 4096.0 / link * 1e9;
    let qd1 = by_name["randread-4k-qd1"]["read"]["lat_ns"]["mean"].as_f64().unwrap();
    assert!(qd1 > device_ns, "QD1 mean {qd1} ns, device stages {device_ns} ns");
    assert!((10_000.0..13_000.0).contains(&qd1), "QD1 mean {qd1} ns");
    // Deep queues reach the controller's pipeline limit, 1 / command_process_ns, and not beyond.
    let limit = 1e9 / hi.command_process_ns.0 as f64;
    let iops = |name: &str, dir: &str| by_name[name][dir]["iops"].as_f64().unwrap();
    let qd256 = iops("randread-4k-qd256", "read");
    assert!(qd256 > 0.8 * limit && qd256 < 1.02 * limit, "QD256 {qd256} IOPS, pipeline limit {limit}");
    assert!(iops("randread-4k-qd1", "read") < iops("randread-4k-qd4", "read"));
    // Sequential 128 KiB reads: the read path's bandwidth.
    let bw = by_name["read-128k-qd32"]["read"]["bw_bytes"].as_f64().unwrap();
    assert!(bw > 0.8 * hi.max_read_bytes_per_s && bw <= 1.01 * hi.max_read_bytes_per_s, "{bw} B/s");
    // The writes wrote, the mix both ways.
    assert!(iops("randwrite-4k-qd32", "write") > 0.0 && iops("randwrite-4k-qd32", "read") == 0.0);
    let (r, w) = (iops("randrw70-4k-qd32", "read"), iops("randrw70-4k-qd32", "write"));
    assert!((r / (r + w) - 0.7).abs() < 0.03, "70/30 mix: {r} reads, {w} writes");
}

#[test]
fn simulate_gives_the_same_bytes_twice_and_keeps_real_results() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // A page-mapped drive, whose writes start preconditioned.
    let first = simulate(a.path(), "mqsim-mlc");
    let second = simulate(b.path(), "mqsim-mlc");
    for stem in first.keys() {
        let read = |dir: &Path| std::fs::read(dir.join(format!("{stem}.json"))).unwrap();
        assert_eq!(read(a.path()), read(b.path()), "{stem}.json differs between two runs");
    }
    assert_eq!(first.len(), second.len());
    // Results already in the directory are not replaced.
    ullsim(["probe", "-o", a.path().to_str().unwrap(), "--simulate", "mqsim-mlc"])
        .fails_with(&["randread-4k-qd.json exists"]);
    ullsim(["probe", "-o", b.path().join("x").to_str().unwrap(), "--simulate", "optane-ul"])
        .fails_with(&["unknown preset \"optane-ul\""]);
}

#[test]
fn simulate_takes_settings_for_the_host_the_jobs_ran_on() {
    let (reference, slower) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let qd64 = |dir: &Path, set: &[&str]| {
        let out = dir.to_str().unwrap();
        let mut args = vec!["probe", "-o", out, "--simulate", "optane-ull", "--duration", "10ms", "--qd", "64"];
        args.extend(set.iter().flat_map(|s| ["--set", s]));
        ullsim(args).ok();
        let document: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("randread-4k-qd.json")).unwrap()).unwrap();
        document["jobs"][0]["read"]["iops"].as_f64().unwrap()
    };
    // One job's deep reads are its core's: at 0.6 of the reference speed, ~0.6 of the IOPS.
    let (fast, slow) = (qd64(reference.path(), &[]), qd64(slower.path(), &["host.cpu.speed=0.6"]));
    assert!((slow / fast / 0.6 - 1.0).abs() < 0.05, "{slow} IOPS at 0.6 against {fast}");
    let out = reference.path().join("x");
    ullsim(["probe", "-o", out.to_str().unwrap(), "--simulate", "optane-ull", "--set", "host.cpu.speed=0"])
        .fails_with(&["key `host.cpu.speed`", "from 0.05 to 20"]);
}
