//! Tests of the workload's arrivals, sizes and flushes.
use super::*;
use crate::engine::EventQueue;
use crate::sim::Event;

fn spec_with_bssplit(split: &str) -> FlowSpec {
    let text =
        format!("[device]\npreset = \"flin-eval\"\n[[flow]]\nname = \"f\"\nrw = \"randrw\"\nbssplit = \"{split}\"\n");
    let scenario = crate::Scenario::from_toml_str(&text, "t", std::path::Path::new("."), &[]).unwrap();
    scenario.flows[0].clone()
}

#[test]
fn bssplit_takes_one_list_for_both_directions_or_one_each() {
    let both = block_sizes(&spec_with_bssplit("4k/50:128k/50")).unwrap();
    assert_eq!(both.read, vec![(4096, 50), (131072, 50)]);
    assert_eq!(both.read, both.write);
    let each = block_sizes(&spec_with_bssplit("8k/100, 4k/25:64k/75")).unwrap();
    assert_eq!((each.read, each.write), (vec![(8192, 100)], vec![(4096, 25), (65536, 75)]));
    // Every draw comes from the list of its direction.
    let mut rng = crate::engine::stream_rng(1, "t");
    let each = block_sizes(&spec_with_bssplit("8k/100,4k/25:64k/75")).unwrap();
    assert!((0..1000).all(|_| each.draw(Op::Read, &mut rng) == 8192));
    let large = (0..4000).filter(|_| each.draw(Op::Write, &mut rng) == 65536).count();
    assert!((large as f64 / 4000.0 - 0.75).abs() < 4.0 * (0.75 * 0.25 / 4000.0f64).sqrt(), "{large}");
}

#[test]
fn a_third_bssplit_list_or_an_empty_one_is_an_error_naming_the_key() {
    for (split, expected) in
        [("4k/100,8k/100,16k/100", "trims"), ("4k/100,", "SIZE/PERCENT"), ("4k/60,8k/100", "add up")]
    {
        let text = format!(
            "[device]\npreset = \"flin-eval\"\n[[flow]]\nname = \"f\"\nrw = \"randrw\"\nbssplit = \"{split}\"\n"
        );
        let message =
            crate::Scenario::from_toml_str(&text, "t", std::path::Path::new("."), &[]).unwrap_err().to_string();
        assert!(message.contains("flow[0].bssplit") && message.contains(expected), "{split}: {message}");
    }
}

/// A flin-eval scenario whose one flow, "f", has `flow_keys` (TOML lines).
fn load(flow_keys: &str) -> Result<crate::Scenario, String> {
    let text = format!("[device]\npreset = \"flin-eval\"\n[[flow]]\nname = \"f\"\n{flow_keys}\n");
    crate::Scenario::from_toml_str(&text, "t", std::path::Path::new("."), &[]).map_err(|e| e.to_string())
}

fn load_error(flow_keys: &str) -> String {
    load(flow_keys).err().unwrap_or_else(|| panic!("loads: {flow_keys}"))
}

#[test]
fn burst_keys_out_of_place_or_out_of_range_are_errors_naming_them() {
    const OPEN: &str = "rw = \"randread\"\nrate_iops = 1000";
    const ONOFF: &str = "rw = \"randread\"\nrate_iops = 1000\nrate_process = \"onoff\"";
    const TRACE: &str = "trace = \"t.trace\"\nformat = \"msr\"";
    for (keys, key, expected) in [
        (format!("{OPEN}\nburst_factor = 2"), "burst_factor", "applies only with rate_process = \"onoff\""),
        (format!("{OPEN}\nburst_on = \"10ms\""), "burst_on", "applies only with rate_process = \"onoff\""),
        (format!("{OPEN}\nrate_process = \"poisson\"\nburst_factor = 2"), "burst_factor", "onoff"),
        ("rw = \"randread\"\nburst_on = 1".into(), "burst_on", "applies only with rate_process = \"onoff\""),
        (ONOFF.into(), "burst_factor", "missing"),
        (format!("{ONOFF}\nburst_on = \"10ms\""), "burst_factor", "missing"),
        (format!("{ONOFF}\nburst_factor = 0.5"), "burst_factor", ">= 1"),
        (format!("{ONOFF}\nburst_factor = 0"), "burst_factor", ">= 1"),
        (format!("{ONOFF}\nburst_factor = -3.0"), "burst_factor", ">= 1"),
        (format!("{ONOFF}\nburst_factor = nan"), "burst_factor", ">= 1"),
        (format!("{ONOFF}\nburst_factor = inf"), "burst_factor", ">= 1"),
        (format!("{ONOFF}\nburst_factor = 2\nburst_on = 0"), "burst_on", "> 0"),
        (format!("{ONOFF}\nburst_factor = 2\nburst_on = \"0ms\""), "burst_on", "> 0"),
        ("rw = \"randread\"\nrate_process = \"onoff\"\nburst_factor = 2".into(), "rate_process", "rate_iops"),
        (format!("{TRACE}\nburst_factor = 2"), "burst_factor", "trace flow"),
        (format!("{TRACE}\nburst_on = 1"), "burst_on", "trace flow"),
        (format!("{TRACE}\nrate_process = \"onoff\"\nburst_factor = 2"), "rate_process", "trace flow"),
        ("ioengine = \"cpuio\"\nburst_factor = 2".into(), "burst_factor", "cpuio"),
        ("ioengine = \"cpuio\"\nburst_on = 1".into(), "burst_on", "cpuio"),
        (format!("{OPEN}\nburst_group = \"g\""), "burst_group", "applies only with rate_process = \"onoff\""),
        (format!("{ONOFF}\nburst_factor = 2\nburst_group = \" \""), "burst_group", "non-empty"),
        (format!("{TRACE}\nburst_group = \"g\""), "burst_group", "trace flow"),
        ("ioengine = \"cpuio\"\nburst_group = \"g\"".into(), "burst_group", "cpuio"),
        ("app = \"flin.tpcc\"\nburst_group = \"g\"".into(), "burst_group", "onoff"),
    ] {
        let message = load_error(&keys);
        assert!(message.contains(&format!("flow[0].{key}`")) && message.contains(expected), "{keys}: {message}");
    }
    // A bad duration is the loader's error, under the key.
    let message = load_error(&format!("{ONOFF}\nburst_factor = 2\nburst_on = -1"));
    assert!(message.contains("burst_on") && message.contains("non-negative"), "{message}");
}

/// Every I/O `scenario`'s workload issues over `end_ns`. With `drain_every` = n, the I/Os outstanding
/// complete only at every n-th workload event (all of them, and the backlogged arrivals they let in), and
/// at the end.
fn arrivals(scenario: &crate::Scenario, end_ns: Time, drain_every: usize) -> Vec<NewIo> {
    let storage = scenario.storage().unwrap();
    let mut workload =
        Workload::new(&scenario.flows, scenario.seed, &storage, end_ns, std::path::Path::new(".")).unwrap();
    let mut q = EventQueue::new();
    workload.start(&mut q);
    let (mut issued, mut outstanding, mut out) = (Vec::new(), Vec::new(), Vec::new());
    let mut events: usize = 0;
    loop {
        let more = q.pop();
        if let Some((_, event)) = more {
            let Event::Workload(e) = event else { unreachable!("only the workload schedules events") };
            workload.handle(e, &mut q, &mut out);
            events += 1;
        }
        loop {
            for io in out.drain(..) {
                outstanding.push((io.flow, io.job, io.op));
                issued.push(io);
            }
            if more.is_some() && !events.is_multiple_of(drain_every) {
                break;
            }
            let Some((flow, job, op)) = outstanding.pop() else { break };
            workload.on_complete(flow, job, op, &mut q, &mut out);
        }
        if more.is_none() {
            return issued;
        }
    }
}

#[test]
fn flows_of_a_burst_group_arrive_in_the_same_bursts() {
    // Two flows ON 10% of the time in 5 ms periods: in one group nearly every ms in which the slower one
    // has an arrival also holds one of the faster one's; in separate groups about 10% do.
    let text = |group_b: &str| {
        format!(
            "seed = 3\n[device]\npreset = \"flin-eval\"\n[[flow]]\nname = \"a\"\nrw = \"randread\"\n\
             rate_iops = 10000\nrate_process = \"onoff\"\nburst_factor = 10\nburst_on = \"5ms\"\n\
             burst_group = \"peak\"\n[[flow]]\nname = \"b\"\nrw = \"randwrite\"\nrate_iops = 1000\n\
             rate_process = \"onoff\"\nburst_factor = 10\nburst_on = \"5ms\"\nburst_group = \"{group_b}\"\n"
        )
    };
    let overlap = |group_b: &str| {
        let scenario = crate::Scenario::from_toml_str(&text(group_b), "t", std::path::Path::new("."), &[]).unwrap();
        let ios = arrivals(&scenario, 5_000_000_000, 1);
        let bins = |flow: u32| -> std::collections::BTreeSet<Time> {
            ios.iter().filter(|io| io.flow == flow).map(|io| io.arrived_at / 1_000_000).collect()
        };
        let (a, b) = (bins(0), bins(1));
        assert!(b.len() > 250, "{} busy ms of b", b.len());
        b.intersection(&a).count() as f64 / b.len() as f64
    };
    let (together, apart) = (overlap("peak"), overlap("off-peak"));
    println!("b's busy ms that are a's: {together:.3} in one group, {apart:.3} apart");
    assert!(together > 0.95 && apart < 0.3, "{together} {apart}");
}

#[test]
fn capped_open_loop_arrivals_and_ios_do_not_depend_on_completions() {
    // Draws for issues move to completions when arrivals wait in the backlog: the arrival clock's own
    // stream keeps the arrival times, and so the order of the issue draws, the same whenever the I/Os
    // complete (alone or beside other flows), for bursts and for Poisson arrivals.
    for process in ["\"onoff\"\nburst_factor = 4\nburst_on = \"2ms\"", "\"poisson\""] {
        let keys = format!(
            "rw = \"randrw\"\nbssplit = \"4k/50:8k/50\"\nrate_iops = 20000\niodepth = 1\nrate_process = {process}"
        );
        let scenario = load(&keys).unwrap();
        let run = |drain_every| {
            let ios = arrivals(&scenario, 200_000_000, drain_every);
            let backlogged = ios.iter().filter(|io| io.was_backlogged).count();
            let mut by_arrival: Vec<(Time, Op, u64, u32)> =
                ios.iter().map(|io| (io.arrived_at, io.op, io.offset, io.len)).collect();
            by_arrival.sort_unstable_by_key(|io| io.0);
            (by_arrival, backlogged)
        };
        let ((at_once, none), (late, backlogged)) = (run(1), run(7));
        assert_eq!(none, 0, "{process}");
        assert!(backlogged > at_once.len() / 2, "{process}: {backlogged} of {} arrivals waited", at_once.len());
        assert!(at_once.len() > 1_000, "{process}: {} arrivals in 200 ms (4,000 on average)", at_once.len());
        assert!(at_once == late, "{process}: the arrivals or their I/Os differ");
    }
}

#[test]
fn a_burst_group_must_agree_on_the_burst_shape() {
    let flows_in = |second: &str, group: &str| {
        format!(
            "[device]\npreset = \"flin-eval\"\n[[flow]]\nname = \"a\"\nrw = \"randread\"\nrate_iops = 1000\n\
             rate_process = \"onoff\"\nburst_factor = 4\nburst_group = \"peak\"\n[[flow]]\nname = \"b\"\n\
             rw = \"randwrite\"\nrate_iops = 50\nrate_process = \"onoff\"\nburst_group = \"{group}\"\n{second}\n"
        )
    };
    let flows = |second: &str| flows_in(second, "peak");
    let load = |text: &str| crate::Scenario::from_toml_str(text, "s.toml", std::path::Path::new("."), &[]);
    // Same factor and the default ON mean (100 ms) spelled out: one group.
    load(&flows("burst_factor = 4\nburst_on = \"100ms\"")).unwrap();
    for (second, this) in
        [("burst_factor = 2", "has 2 and 100 ms"), ("burst_factor = 4\nburst_on = 1", "4 and 1000 ms")]
    {
        let message = load(&flows(second)).unwrap_err().to_string();
        assert!(
            message.contains("s.toml")
                && message.contains("flow[1].burst_group")
                && message.contains("burst_factor = 4 and burst_on = 100 ms from flow \"a\"")
                && message.contains(this),
            "{message}"
        );
    }
    // Another group name is another schedule: no constraint.
    load(&flows_in("burst_factor = 2", "other")).unwrap();
}

/// The first `n` I/Os of the one flow of `load(flow_keys)`, in a closed loop whose I/Os complete at once.
fn first_ios(flow_keys: &str, n: usize) -> Vec<NewIo> {
    let scenario = load(flow_keys).unwrap();
    let storage = scenario.storage().unwrap();
    let mut workload = Workload::new(&scenario.flows, 1, &storage, u64::MAX, std::path::Path::new(".")).unwrap();
    let mut q: EventQueue<WorkloadEvent> = EventQueue::new();
    let mut out = Vec::new();
    workload.handle(WorkloadEvent::Start { flow: 0 }, &mut q, &mut out);
    while out.len() < n {
        let last = *out.last().unwrap();
        workload.on_complete(0, last.job, last.op, &mut q, &mut out);
    }
    out
}

#[test]
fn percentage_random_sends_the_rest_on_from_the_previous_io() {
    let follows = |ios: &[NewIo]| ios.windows(2).filter(|w| w[1].offset == w[0].offset + u64::from(w[0].len)).count();
    let n = 20_000;
    let ios = first_ios("rw = \"randrw\"\nbssplit = \"4k/50:16k/50\"\npercentage_random = 30", n);
    let sequential = follows(&ios) as f64 / (n - 1) as f64;
    // 70% follow the previous I/O (a random draw lands right after it almost never).
    assert!((sequential - 0.7).abs() < 4.0 * (0.21 / n as f64).sqrt(), "{sequential}");
    // 100 (the default) is fully random, with the same draws as before the key existed; 0 is sequential.
    let plain = first_ios("rw = \"randread\"", 1000);
    assert_eq!(plain, first_ios("rw = \"randread\"\npercentage_random = 100", 1000));
    assert!(follows(&plain) < 5);
    assert_eq!(follows(&first_ios("rw = \"randread\"\npercentage_random = 0", 1000)), 999);
    for (keys, expected) in [
        ("rw = \"read\"\npercentage_random = 50", "applies only to random I/O"),
        ("rw = \"randread\"\npercentage_random = 101", "from 0 to 100"),
        ("ioengine = \"cpuio\"\npercentage_random = 50", "cpuio"),
    ] {
        let message = load_error(keys);
        assert!(message.contains("flow[0].percentage_random`") && message.contains(expected), "{message}");
    }
}

#[test]
fn thinktime_spin_is_closed_loop_cpu_within_thinktime() {
    for (keys, key, expected) in [
        ("rw = \"randread\"\nrate_iops = 100\nthinktime_spin = 10", "thinktime_spin", "closed-loop"),
        ("ioengine = \"cpuio\"\nthinktime_spin = 10", "thinktime_spin", "cpuio"),
        ("ioengine = \"cpuio\"\nresponse_cpu = 10", "response_cpu", "cpuio"),
        ("rw = \"randread\"\nthinktime = 10\nthinktime_spin = 20", "thinktime_spin", "part of thinktime"),
        ("rw = \"randread\"\nthinktime_spin = \"11s\"", "thinktime_spin", "10 s"),
        ("trace = \"t.trace\"\nformat = \"msr\"\nthinktime_spin = 5", "thinktime_spin", "closed-loop replay"),
    ] {
        let message = load_error(keys);
        assert!(message.contains(&format!("flow[0].{key}`")) && message.contains(expected), "{message}");
    }
    // The job sleeps what is left of thinktime after its spin.
    let spec = load("rw = \"randread\"\nthinktime = 100\nthinktime_spin = 30").unwrap().flows[0].clone();
    assert_eq!(sleep_after_completion_ns(&spec), 70_000);
    let spin_only = load("rw = \"randread\"\nthinktime_spin = 30").unwrap().flows[0].clone();
    assert_eq!(sleep_after_completion_ns(&spin_only), 0);
}
