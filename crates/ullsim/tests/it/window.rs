//! The measurement window and overload: a run measures from `run.warmup` to `run.duration` unless every flow
//! finished; each flow's rates are over its own active time; device and host results cover the window; an
//! open-loop flow the system cannot keep up with is reported, and one whose backlog would exhaust memory stops
//! the run with an error.

use crate::common;

use common::{run, scenario, scenario_with};
use ullsim::engine::MS;

const OPTANE: &str = "[device]\npreset = \"optane-ull\"\n";

fn flow(name: &str, keys: &str) -> String {
    format!("[[flow]]\nname = \"{name}\"\n{keys}\n")
}

/// A Poisson flow whose last arrival comes before the end used to end the run at its last completion
/// (890 ms of 1 s at 10 IOPS): the window is the run's duration.
#[test]
fn an_idle_open_loop_flow_keeps_the_window_to_the_runs_duration() {
    let text = format!(
        "[run]\nduration = \"1s\"\n{OPTANE}{}",
        flow("sparse", "rw = \"randread\"\nrate_iops = 10\nrate_process = \"poisson\"")
    );
    let r = run(&scenario(&text));
    assert_eq!(r.window.end_ns, 1000 * MS, "the run ends at run.duration");
    let f = &r.flows[0];
    assert_eq!(f.window, r.window);
    assert!((f.iops - f.completed as f64).abs() < 1e-9, "{} IOPS for {} I/Os over 1 s", f.iops, f.completed);
    assert!(!f.overloaded);
}

/// A flow with a shorter runtime reports its rates over its own active time, as fio does per job.
#[test]
fn a_flow_that_stops_early_reports_rates_over_its_own_active_time() {
    let text = format!(
        "[run]\nduration = \"100ms\"\n{OPTANE}{}{}",
        flow("short", "rw = \"randread\"\niodepth = 4\nruntime = \"20ms\""),
        flow("long", "rw = \"randread\"\niodepth = 4")
    );
    let r = run(&scenario(&text));
    let (short, long) = (&r.flows[0], &r.flows[1]);
    assert_eq!(r.window.end_ns, 100 * MS);
    assert_eq!(long.window, r.window);
    assert_eq!(short.window.start_ns, 0);
    // It stops issuing at 20 ms and its last I/Os complete a few us later.
    assert!((20 * MS..21 * MS).contains(&short.window.end_ns), "{:?}", short.window);
    let seconds = (short.window.end_ns - short.window.start_ns) as f64 / 1e9;
    assert!((short.iops - short.completed as f64 / seconds).abs() < 1e-6 * short.iops);
    // Both flows ran the same way while both ran: their rates agree within a few percent.
    assert!((short.iops / long.iops - 1.0).abs() < 0.05, "short {} vs long {} IOPS", short.iops, long.iops);
}

/// Device and host results cover the window, not the warm-up: a QD1 reader's flash reads in the second half
/// of a run are its completions in that half (one page each), not those of the whole run.
#[test]
fn device_and_host_results_cover_the_window_only() {
    let text = format!(
        "[run]\nduration = \"20ms\"\nwarmup = \"10ms\"\n{OPTANE}{}",
        flow("reader", "rw = \"randread\"\nbs = \"4k\"\niodepth = 1")
    );
    let r = run(&scenario(&text));
    let f = &r.flows[0];
    let reads = r.device.flash_reads;
    assert!(reads.abs_diff(f.completed) <= 2, "{reads} flash reads in the window, {} completions", f.completed);
    assert!(r.requests_completed > f.completed + f.completed / 2, "the warm-up completed about as many");
    // One interrupt per completion, in the window too.
    assert!(r.host.interrupts.abs_diff(f.completed) <= 2, "{} interrupts", r.host.interrupts);
    let busy = r.energy.joules / r.energy.mean_watts;
    assert!((busy - 0.010).abs() < 1e-9, "energy over the 10 ms window, got {busy} s");
}

/// 2M IOPS of 4 KiB random reads on optane-ull: offered far above what the drive serves; the results say so.
#[test]
fn an_overloaded_open_loop_flow_is_reported_with_offered_and_served_rates() {
    let text = format!("[run]\nduration = \"20ms\"\n{OPTANE}{}", flow("hot", "rw = \"randread\"\nrate_iops = 2e6"));
    let r = run(&scenario(&text));
    let f = &r.flows[0];
    let offered = f.offered_iops.expect("open loop");
    assert!((offered / 2e6 - 1.0).abs() < 0.01, "offered {offered}");
    assert!(f.iops < 0.5 * offered, "served {} of {offered}", f.iops);
    assert!(f.backlog_at_end.unwrap() > 1000, "{:?}", f.backlog_at_end);
    assert!(f.overloaded);
    assert!(r.warnings.iter().any(|w| w.contains("\"hot\" is overloaded")), "{:?}", r.warnings);
    // The same flow at 2% of the rate keeps up: no warning.
    let light = run(&scenario_with(&text, &["flow.hot.rate_iops=40000"]));
    let f = &light.flows[0];
    assert!(!f.overloaded && light.warnings.is_empty(), "{:?}", light.warnings);
    assert!((f.iops / f.offered_iops.unwrap() - 1.0).abs() < 0.01);
    // A closed-loop flow offers what it is served: no offered rate, no backlog.
    let closed = format!("[run]\nduration = \"5ms\"\n{OPTANE}{}", flow("qd8", "rw = \"randread\"\niodepth = 8"));
    let closed = run(&scenario(&closed));
    assert_eq!((closed.flows[0].offered_iops, closed.flows[0].backlog_at_end), (None, None));
}

/// An overloaded open-loop flow whose `runtime` ends drops the arrivals still waiting (as fio does); they
/// still arrived, so the flow is flagged and its offered rate is what arrived, not what was served.
#[test]
fn an_overloaded_flow_is_flagged_whatever_ends_it() {
    let keys = "rw = \"randread\"\niodepth = 1\nrate_iops = 400000";
    for (runtime, ended_by) in [("", "the run"), ("runtime = \"40ms\"\n", "its runtime")] {
        let text = format!(
            "[run]\nduration = \"60ms\"\nwarmup = \"10ms\"\n{OPTANE}{}",
            flow("hot", &format!("{runtime}{keys}"))
        );
        let r = run(&scenario(&text));
        let f = &r.flows[0];
        let offered = f.offered_iops.expect("open loop");
        assert!((offered / 4e5 - 1.0).abs() < 0.01, "ended by {ended_by}: offered {offered}");
        assert!(f.overloaded, "ended by {ended_by}: not flagged: {f:?}");
        let backlog = f.backlog_at_end.unwrap();
        let window_arrivals = (offered * f.window.seconds()).round() as u64;
        assert_eq!(backlog, window_arrivals - f.completed, "ended by {ended_by}");
        assert!(r.warnings.iter().any(|w| w.contains("\"hot\" is overloaded")), "{:?}", r.warnings);
        match runtime {
            "" => assert_eq!(f.dropped_at_stop, None),
            _ => {
                // Every arrival of the window was dropped or completed; none is still in flight.
                assert_eq!(f.in_flight_at_end, 0);
                assert!(f.dropped_at_stop.unwrap() >= backlog, "{:?} dropped, {backlog} unserved", f.dropped_at_stop);
                assert!(r.warnings.iter().any(|w| w.contains("dropped")), "{:?}", r.warnings);
            }
        }
    }
}

/// Rates above one arrival per ns are rejected when the scenario loads, naming the key and why.
#[test]
fn an_absurd_rate_is_rejected_with_the_reason() {
    let text = format!("{OPTANE}{}", flow("hot", "rw = \"randread\"\nrate_iops = 1e12"));
    let err = ullsim::Scenario::from_toml_str(&text, "t.toml", std::path::Path::new("."), &[]).unwrap_err().to_string();
    assert!(err.contains("flow[0].rate_iops") && err.contains("1 ns apart"), "{err}");
    let app = format!("{OPTANE}{}", flow("app", "app = \"flin.tpcc\"\ntime_scale = 1e-9"));
    let err = ullsim::Scenario::from_toml_str(&app, "t.toml", std::path::Path::new("."), &[]);
    assert!(err.is_err(), "an app at 1e9 times its rate must be rejected");
}

/// A rate the simulator accepts but no system serves: the backlog passes the bound and the run stops with an
/// error naming the flow and its offered and served rates, instead of growing until the process aborts.
#[test]
fn a_backlog_past_the_bound_stops_the_run_with_an_error() {
    let text = format!("[run]\nduration = \"1s\"\n{OPTANE}{}", flow("flood", "rw = \"randread\"\nrate_iops = 5e8"));
    let err = ullsim::run_scenario(&scenario(&text)).unwrap_err().to_string();
    assert!(err.contains("flow \"flood\"") && err.contains("offered") && err.contains("rate_iops"), "{err}");
    // With an iodepth cap the backlog waits in the workload: bounded the same way.
    let capped = scenario_with(&text, &["flow.flood.iodepth=32"]);
    let err = ullsim::run_scenario(&capped).unwrap_err().to_string();
    assert!(err.contains("flow \"flood\""), "{err}");
}

/// A closed loop deeper than the run's in-flight bound is rejected when the scenario loads.
#[test]
fn a_closed_loop_deeper_than_the_bound_is_rejected() {
    let text = format!("{OPTANE}{}", flow("deep", "rw = \"randread\"\niodepth = 65536\nnumjobs = 4096"));
    let err = ullsim::Scenario::from_toml_str(&text, "t.toml", std::path::Path::new("."), &[]).unwrap_err().to_string();
    assert!(err.contains("flow[0].iodepth") && err.contains("iodepth x numjobs = 268435456"), "{err}");
}

/// A run whose flows all finish during the warm-up measures nothing: the results say when it stopped (before
/// the window) and one warning says so and what to change, rather than a window that seems to have run.
#[test]
fn a_run_that_ends_during_the_warm_up_says_so() {
    let text = format!(
        "[run]\nduration = \"100ms\"\nwarmup = \"20ms\"\n{OPTANE}{}{}",
        flow("a", "rw = \"randread\"\nnumber_ios = 20"),
        flow("b", "rw = \"randwrite\"\nnumber_ios = 5")
    );
    let r = run(&scenario(&text));
    assert!(r.stopped_ns > 0 && r.stopped_ns < MS, "20 reads take well under 1 ms: stopped at {}", r.stopped_ns);
    assert_eq!((r.window.start_ns, r.window.end_ns), (20 * MS, 20 * MS));
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    for needle in ["the run ended at ", "before the measurement window began at run.warmup = 20 ms", "lower run.warmup"]
    {
        assert!(r.warnings[0].contains(needle), "{needle:?}: {}", r.warnings[0]);
    }
    // A run that reaches its window stops where the window ends.
    let r = run(&scenario(&text.replace("warmup = \"20ms\"", "warmup = \"10us\"")));
    assert!(r.stopped_ns > 10_000 && r.stopped_ns == r.window.end_ns, "{} vs {:?}", r.stopped_ns, r.window);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}
