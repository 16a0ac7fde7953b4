//! FlashShare's workloads (Table 3, OSDI'18) as app models, and fio's `thinktime_spin` and the
//! `response_cpu` they run on: CPU between or after I/Os on the job's core.

use crate::common;

use common::{run, scenario, scenario_with};
use ullsim::workload::app::flashshare::{self, CLIENT_SERVER_CPU_NS};

/// A QD1 psync reader of 4 KiB on core 0 of a znand-ull host, with `extra` flow keys, beside a CPU hog on
/// the same core if `hog`.
fn reader(extra: &str, hog: bool) -> ullsim::RunResults {
    let mut text = format!(
        "seed = 1\n[run]\nduration = \"200ms\"\nwarmup = \"10ms\"\n[device]\npreset = \"znand-ull\"\n[[flow]]\nname = \
         \"reader\"\nrw = \"randread\"\nbs = \"4k\"\nioengine = \"psync\"\ncpus_allowed = \"0\"\n{extra}\n"
    );
    if hog {
        text.push_str("[[flow]]\nname = \"hog\"\nioengine = \"cpuio\"\ncpus_allowed = \"0\"\n");
    }
    run(&scenario(&text))
}

#[test]
fn thinktime_spin_adds_its_cpu_between_ios_on_an_idle_core() {
    let plain = reader("", false);
    let spun = reader("thinktime_spin = 50", false);
    let (p, s) = (&plain.flows[0], &spun.flows[0]);
    // The completion is stamped before the spin: the latency does not hold it, the gap to the next I/O does.
    let latency_s = s.latency_ns.mean / 1e9;
    let closed_form = 1.0 / (latency_s + 50e-6);
    println!(
        "plain {:.0} IOPS, spun {:.0} IOPS (closed form {closed_form:.0}), latency {:.2} us",
        p.iops,
        s.iops,
        latency_s * 1e6
    );
    assert!((s.iops / closed_form - 1.0).abs() < 0.02, "{} IOPS vs {closed_form}", s.iops);
    assert!(
        (s.latency_ns.mean / p.latency_ns.mean - 1.0).abs() < 0.05,
        "{} vs {}",
        s.latency_ns.mean,
        p.latency_ns.mean
    );
    // Its CPU: what the plain reader spends per I/O, plus 50 us per I/O.
    let per_io = p.cpu_cores / p.iops;
    let spin_share = s.cpu_cores - per_io * s.iops;
    let expected = 50e-6 * s.iops;
    println!(
        "cpu_cores plain {:.3}, spun {:.3}; spin share {spin_share:.3} vs {expected:.3}",
        p.cpu_cores, s.cpu_cores
    );
    assert!((spin_share / expected - 1.0).abs() < 0.05, "{spin_share} vs {expected}");
    // fio's thinktime holds its spin: 50 us of spin in a thinktime of 80 us leaves 30 us of sleep.
    let both = &reader("thinktime = 80\nthinktime_spin = 50", false).flows[0];
    let closed_form = 1.0 / (both.latency_ns.mean / 1e9 + 80e-6);
    assert!((both.iops / closed_form - 1.0).abs() < 0.02, "{} IOPS vs {closed_form}", both.iops);
}

#[test]
fn beside_a_cpu_hog_the_spin_competes_for_the_core() {
    let alone = reader("thinktime_spin = 50", false);
    let shared = reader("thinktime_spin = 50", true);
    let (r, hog) = (&shared.flows[0], &shared.flows[1]);
    println!(
        "alone {:.0} IOPS; beside the hog {:.0} IOPS, reader CPU {:.3}, hog CPU {:.3}, cpu wait {:.1} us",
        alone.flows[0].iops,
        r.iops,
        r.cpu_cores,
        hog.cpu_cores,
        r.breakdown_ns.cpu_wait.mean / 1e3
    );
    // The spin takes turns with the hog: the reader is slower than alone, and the core is full.
    assert!(r.iops < 0.9 * alone.flows[0].iops, "{} vs {}", r.iops, alone.flows[0].iops);
    assert!(r.cpu_cores + hog.cpu_cores > 0.9, "{} + {}", r.cpu_cores, hog.cpu_cores);
    assert!(hog.cpu_cores > 0.2 && r.cpu_cores > 0.2, "{} / {}", r.cpu_cores, hog.cpu_cores);
}

/// A znand-ull host of 8 cores with `flows` (TOML `[[flow]]` tables), run for `duration`.
fn system(duration: &str, flows: &str) -> ullsim::RunResults {
    let text = format!(
        "seed = 1\n[run]\nduration = \"{duration}\"\nwarmup = \"10ms\"\n[host]\ncores = 8\n[device]\npreset = \"znand-ull\"\n{flows}"
    );
    run(&scenario(&text))
}

#[test]
fn an_offline_app_has_its_tables_read_share_size_and_cpu_per_io() {
    // gzip: reads 0.989, 150 KB, 0.105 I/Os per mega-instruction (4.76 ms of CPU per I/O); time_scale = 0.01
    // shortens the CPU a hundredfold to get many I/Os in a short run.
    let r = system("500ms", "[[flow]]\nname = \"gzip\"\napp = \"flashshare.gzip\"\ntime_scale = 0.01\n");
    let f = &r.flows[0];
    let gzip = flashshare::TABLE3.iter().find(|t| t.name == "gzip").unwrap();
    let (reads, writes) =
        (f.read.as_ref().unwrap().completed as f64, f.write.as_ref().map_or(0.0, |w| w.completed as f64));
    let n = reads + writes;
    let share = reads / n;
    // The model's rwmixread is the table's ratio to a whole percent (99 for 0.989): within half a point.
    let sd = (0.99 * 0.01 / n).sqrt();
    println!("gzip: {n} I/Os, read share {share:.4}, {:.0} IOPS, cpu_cores {:.3}", f.iops, f.cpu_cores);
    assert!((share - gzip.read_ratio).abs() < 0.005 + 4.0 * sd, "read share {share}");
    let mean_kib = f.bandwidth_bytes_per_s / f.iops / 1024.0;
    assert!((mean_kib - 150.0).abs() < 1e-6, "{mean_kib} KiB");
    // The spin shows in the flow's CPU: at least its 47.6 us per I/O.
    let spin_s = gzip.cpu_per_io_ns() as f64 * 0.01 / 1e9;
    assert!(f.cpu_cores > spin_s * f.iops && f.cpu_cores < 1.0, "{} cores at {} IOPS", f.cpu_cores, f.iops);
    assert!(f.iops < 1.0 / spin_s, "{} IOPS", f.iops);
}

#[test]
fn an_online_app_answers_400_requests_a_second_with_its_cpu_in_the_response_time() {
    let r = system("1s", "[[flow]]\nname = \"ap\"\napp = \"flashshare.ap\"\n");
    let f = &r.flows[0];
    let ap = flashshare::TABLE3.iter().find(|t| t.name == "ap").unwrap();
    let response_cpu = (ap.cpu_per_io_ns() + CLIENT_SERVER_CPU_NS) as f64;
    println!(
        "ap alone: {:.1} IOPS, response mean {:.1} us, p99 {:.1} us, cpu_cores {:.3}",
        f.iops,
        f.latency_ns.mean / 1e3,
        f.latency_ns.p99 as f64 / 1e3,
        f.cpu_cores
    );
    assert_eq!(f.class, ullsim::request::Criticality::Critical);
    assert!((f.iops - 400.0).abs() < 2.0, "{} IOPS", f.iops);
    assert!(f.latency_ns.mean > response_cpu && f.latency_ns.mean < response_cpu + 200_000.0, "{}", f.latency_ns.mean);
    assert!((f.cpu_cores - 400.0 * response_cpu / 1e9).abs() < 0.05, "{}", f.cpu_cores);
    // class is only the model's default: the flow may choose otherwise.
    let text = "seed = 1\n[device]\npreset = \"znand-ull\"\n[[flow]]\nname = \"ap\"\napp = \"flashshare.ap\"\n";
    let normal = scenario_with(text, &["flow.ap.class=\"normal\"", "flow.ap.numjobs=2"]);
    assert_eq!((normal.flows[0].class, normal.flows[0].numjobs), (ullsim::request::Criticality::Normal, Some(2)));
    let default = scenario(text);
    assert_eq!((default.flows[0].class, default.flows[0].numjobs), (ullsim::request::Criticality::Critical, Some(1)));
}

#[test]
fn app_keys_and_cpu_keys_out_of_place_are_errors_naming_them() {
    let load = |keys: &str, host: &str| {
        let text = format!("[host]\n{host}\n[device]\npreset = \"znand-ull\"\n[[flow]]\nname = \"f\"\n{keys}\n");
        ullsim::Scenario::from_toml_str(&text, "t", std::path::Path::new("."), &[])
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    for (keys, key, expected) in [
        ("app = \"flashshare.bfs\"\nthinktime_spin = 10", "thinktime_spin", "is set by app"),
        ("app = \"flashshare.bfs\"\npercentage_random = 10", "percentage_random", "is set by app"),
        ("app = \"flashshare.ap\"\nresponse_cpu = 10", "response_cpu", "is set by app"),
        ("app = \"flashshare.bfs\"\nthinktime = 10", "thinktime", "pacing"),
    ] {
        let message = load(keys, "").unwrap_err();
        assert!(message.contains(&format!("flow[0].{key}`")) && message.contains(expected), "{message}");
    }
    // The message's keys load as a plain flow.
    let message = load("app = \"flashshare.bfs\"\nrw = \"read\"", "").unwrap_err();
    let keys = message.split_once("bfs\" (").unwrap().1.split_once("); remove").unwrap().0;
    load(&keys.replace(", ", "\n"), "").unwrap_or_else(|e| panic!("{keys}: {e}"));
    // A host without CPU cannot burn it.
    let run_on_device_only = |keys: &str| {
        let text = format!(
            "[run]\nduration = \"1ms\"\n[host]\nmodel = \"device-only\"\n[device]\npreset = \"znand-ull\"\n[[flow]]\nname = \"f\"\n{keys}\n"
        );
        ullsim::run_scenario(&scenario(&text)).map(|_| ()).map_err(|e| e.to_string())
    };
    let e = run_on_device_only("app = \"flashshare.ap\"").unwrap_err();
    assert!(e.contains("response_cpu") && e.contains("flashshare.ap") && e.contains("no CPU"), "{e}");
    assert!(run_on_device_only("rw = \"randread\"\nthinktime_spin = 5").unwrap_err().contains("thinktime_spin"));
}
