//! The host stack: HotStorage'23 Table 1 calibration, CPU scheduling next to a CPU hog, polling, tags,
//! splitting, the per-layer breakdown, and `none` never losing to a scheduler on IOPS or energy; and the
//! device-only host (`host.model = "device-only"`), which adds no host time at all.

use crate::common;

use common::{run, scenario, scenario_with, MIXED};
use ullsim::RunResults;

/// QD1 4 KB random I/O from one io_uring job on optane-ull (HotStorage'23 §4.1).
pub(crate) const QD1: &str = r#"
[run]
duration = "20ms"
[device]
preset = "optane-ull"
[[flow]]
name = "io"
rw = "randread"
bs = "4k"
ioengine = "io_uring"
"#;

/// HotStorage'23 Table 1: median latency in us for (scheduler, read defaults, write defaults, read with
/// hipri + sqthread_poll, write with hipri + sqthread_poll).
const TABLE1: &[(&str, [f64; 4])] = &[
    ("none", [12.52, 16.55, 7.81, 12.19]),
    ("mq-deadline", [13.39, 17.65, 8.32, 12.83]),
    ("kyber", [13.44, 17.24, 8.33, 12.90]),
    ("bfq", [15.01, 19.43, 9.41, 14.18]),
];

fn table1_cell(scheduler: &str, column: usize) -> f64 {
    let rw = if column.is_multiple_of(2) { "randread" } else { "randwrite" };
    let polled = if column >= 2 { "true" } else { "false" };
    let r = run(&scenario_with(
        QD1,
        &[
            &format!("host.io_scheduler={scheduler}"),
            &format!("flow.io.rw={rw}"),
            &format!("flow.io.hipri={polled}"),
            &format!("flow.io.sqthread_poll={polled}"),
        ],
    ));
    r.flows[0].latency_ns.p50 as f64 / 1000.0
}

#[test]
fn table1_medians_within_ten_percent_and_schedulers_in_order() {
    let mut simulated: Vec<[f64; 4]> = Vec::new();
    for (scheduler, paper) in TABLE1 {
        let row: [f64; 4] = std::array::from_fn(|column| table1_cell(scheduler, column));
        for (column, (&sim, &want)) in row.iter().zip(paper).enumerate() {
            let error = (sim - want).abs() / want;
            println!(
                "{scheduler:<12} column {column}: simulated {sim:.2} us, paper {want:.2} us ({:+.1}%)",
                (sim / want - 1.0) * 100.0
            );
            assert!(error < 0.10, "{scheduler} column {column}: {sim:.2} vs paper {want:.2}");
        }
        simulated.push(row);
    }
    let [none_row, deadline_row, kyber_row, bfq_row] = [0, 1, 2, 3].map(|i: usize| simulated[i]);
    for column in 0..4 {
        let (none, deadline, kyber, bfq) = (none_row[column], deadline_row[column], kyber_row[column], bfq_row[column]);
        assert!(none < deadline && none < kyber, "column {column}: none must be cheapest");
        assert!((deadline - kyber).abs() / deadline < 0.05, "column {column}: mq-deadline and kyber about equal");
        assert!(bfq > deadline && bfq > kyber, "column {column}: bfq must be dearest");
    }
}

/// A reader pinned to core 0, optionally beside a CPU hog on the same core.
fn reader_beside_hog(hog: bool, cpu_scheduler: &str) -> RunResults {
    let mut text = String::from(
        r#"
[run]
duration = "100ms"
[device]
preset = "optane-ull"
[[flow]]
name = "reader"
class = "critical"
rw = "randread"
ioengine = "psync"
cpus_allowed = "0"
"#,
    );
    if hog {
        text.push_str("[[flow]]\nname = \"hog\"\nioengine = \"cpuio\"\ncpus_allowed = \"0\"\n");
    }
    run(&scenario_with(&text, &[&format!("host.cpu_scheduler={cpu_scheduler}")]))
}

#[test]
fn on_an_idle_core_a_woken_task_waits_one_context_switch() {
    let r = reader_beside_hog(false, "cfs");
    let context_switch = ullsim::config::HostConfig::default().cpu.context_switch_ns.0 as f64;
    let wait = r.flows[0].breakdown_ns.cpu_wait.mean;
    assert!((wait - context_switch).abs() < 1.0, "cpu wait {wait} ns vs one context switch {context_switch} ns");
}

#[test]
fn a_cpu_hog_gets_the_rest_of_its_core_and_the_critical_reader_still_runs() {
    for scheduler in ["cfs", "eevdf", "fastresponse"] {
        let r = reader_beside_hog(true, scheduler);
        let (reader, hog) = (&r.flows[0], &r.flows[1]);
        println!(
            "{scheduler}: reader {:.0} IOPS, cpu wait {:.2} us, reader CPU {:.3}, hog CPU {:.3}",
            reader.iops,
            reader.breakdown_ns.cpu_wait.mean / 1000.0,
            reader.cpu_cores,
            hog.cpu_cores
        );
        assert!(hog.cpu_cores > 0.6, "{scheduler}: the hog uses the core when the reader sleeps");
        // Core 0 is never idle: the two tasks share it with the interrupt handlers, whose time is neither's.
        assert!(r.host.cores[0].idle < 0.01, "{scheduler}: core 0 idle {}", r.host.cores[0].idle);
        let tasks = reader.cpu_cores + hog.cpu_cores;
        assert!((0.85..1.0).contains(&tasks), "{scheduler}: the tasks used {tasks} of core 0");
        assert!(reader.iops > 50_000.0, "{scheduler}: a sleeper next to a hog lags and preempts it");
    }
    // FastResponse's critical wake-up: exactly one context switch, every time.
    let r = reader_beside_hog(true, "fastresponse");
    let context_switch = ullsim::config::HostConfig::default().cpu.context_switch_ns.0 as f64;
    assert!((r.flows[0].breakdown_ns.cpu_wait.mean - context_switch).abs() < 1.0);
}

#[test]
fn a_polling_core_is_busy_all_the_time_and_skips_interrupts() {
    let polled = run(&scenario_with(QD1, &["flow.io.hipri=true", "flow.io.cpus_allowed=\"2\""]));
    let core = &polled.host.cores[2];
    println!(
        "polling core: user {:.3} kernel {:.3} poll {:.3} idle {:.3}",
        core.user, core.kernel, core.poll, core.idle
    );
    assert!(core.idle < 0.01, "a polling core is ~100% busy: idle {}", core.idle);
    assert!(core.poll > 0.5, "most of it spinning: poll {}", core.poll);
    assert_eq!(polled.host.interrupts, 0);
    assert_eq!(polled.flows[0].breakdown_ns.cpu_wait.mean, 0.0);
    let interrupts = run(&scenario_with(QD1, &["flow.io.cpus_allowed=\"2\""]));
    assert!(interrupts.host.cores[2].idle > 0.5, "with interrupts the core sleeps while the device works");
    // One interrupt per completion (the last may be in its handler when the run ends).
    let (irqs, done) = (interrupts.host.interrupts, interrupts.requests_completed);
    assert!(irqs == done || irqs == done + 1, "{irqs} interrupts for {done} completions");
    // Hybrid polling sleeps first: less spinning than classic polling, no interrupts.
    let hybrid = run(&scenario_with(QD1, &["host.completion=hybrid", "flow.io.cpus_allowed=\"2\""]));
    assert_eq!(hybrid.host.interrupts, 0);
    assert!(
        hybrid.host.cores[2].poll < core.poll * 0.8,
        "hybrid {} vs classic {}",
        hybrid.host.cores[2].poll,
        core.poll
    );
}

#[test]
fn tags_are_conserved_and_waits_happen_when_they_run_out() {
    for scheduler in ["none", "mq-deadline", "kyber", "bfq", "ld"] {
        let r = run(&scenario_with(
            r#"
[run]
duration = "10ms"
check_invariants = true
[host]
queue_pairs = 1
[host.block]
nr_requests = 8
[device]
preset = "optane-ull"
[device.host_interface]
queue_depth = 9
[[flow]]
name = "many"
rw = "randrw"
iodepth = 16
numjobs = 4
"#,
            &[&format!("host.io_scheduler={scheduler}")],
        ));
        assert!(r.flows[0].completed > 1000, "{scheduler}");
        assert!(r.host.block.tag_waits > 0, "{scheduler}: 64 requests for 8 tags must wait");
        assert!(r.device.queue_depth.max <= 8, "{scheduler}: at most queue_depth - 1 commands in the SQ");
    }
}

#[test]
fn large_requests_are_split_at_max_sectors_kb() {
    let text = &common::big_reader("normal");
    let whole = run(&scenario(text));
    let split = run(&scenario_with(text, &["host.block.max_sectors_kb=32"]));
    assert_eq!(whole.device.queue_depth.max, 1);
    assert_eq!(split.device.queue_depth.max, 4, "one 128 KiB request becomes four 32 KiB commands");
    assert!(split.flows[0].completed > 100);
    assert!(split.flows[0].latency_ns.mean < whole.flows[0].latency_ns.mean, "the pieces go in parallel");
}

#[test]
fn layers_add_up_for_every_request_under_every_mode() {
    // check_invariants makes the run fail if any request's stamps are out of order; the parts then add up to
    // the latency by construction, which the means confirm.
    for overrides in [
        &["flow.io.iodepth=8"][..],
        &["flow.io.ioengine=libaio", "flow.io.iodepth=4", "host.io_scheduler=bfq"],
        &["flow.io.ioengine=psync", "flow.io.numjobs=3", "host.io_scheduler=kyber"],
        &["flow.io.hipri=true", "flow.io.sqthread_poll=true", "flow.io.iodepth=4"],
        &["host.completion=hybrid", "flow.io.rw=randrw", "flow.io.iodepth=2"],
        &["host.nvme.coalesce_count=4", "flow.io.iodepth=16", "host.io_scheduler=mq-deadline"],
        &["flow.io.bs=64k", "host.block.max_sectors_kb=16", "flow.io.rw=randwrite"],
        &["host.model=device-only", "flow.io.rw=randrw", "flow.io.iodepth=8", "flow.io.numjobs=2"],
    ] {
        let mut all = vec!["run.check_invariants=true"];
        all.extend_from_slice(overrides);
        let r = run(&scenario_with(QD1, &all));
        let f = &r.flows[0];
        let b = &f.breakdown_ns;
        let sum = b.sum_of_means();
        assert!(f.completed > 100, "{overrides:?}");
        assert!((sum - f.latency_ns.mean).abs() < 1.0, "{overrides:?}: parts {sum} vs latency {}", f.latency_ns.mean);
    }
}

/// IOPS and energy per million I/Os of one variant of the HotStorage'23 microbenchmarks.
fn iops_and_energy(rw: &str, depth: u32, tenants: u32, scheduler: &str) -> (f64, f64) {
    let r = run(&scenario_with(
        r#"
[run]
duration = "10ms"
[device]
preset = "optane-ull"
[[flow]]
name = "fio"
rw = "randread"
bs = "4k"
"#,
        &[
            &format!("flow.fio.rw={rw}"),
            &format!("flow.fio.iodepth={depth}"),
            &format!("flow.fio.numjobs={tenants}"),
            &format!("host.io_scheduler={scheduler}"),
        ],
    ));
    (r.flows[0].iops, r.energy.joules_per_million_ios.expect("I/O completed"))
}

#[test]
fn none_is_best_or_tied_on_iops_and_energy_single_and_multi_tenant() {
    for rw in ["randread", "randwrite", "randrw"] {
        for (depth, tenants) in [(1, 1), (16, 1), (128, 1), (1, 16), (1, 128)] {
            let (none_iops, none_energy) = iops_and_energy(rw, depth, tenants, "none");
            for scheduler in ["mq-deadline", "kyber", "bfq"] {
                let (iops, energy) = iops_and_energy(rw, depth, tenants, scheduler);
                assert!(
                    none_iops >= iops * 0.99,
                    "{rw} depth {depth} x {tenants} tenants: none {none_iops:.0} < {scheduler} {iops:.0} IOPS"
                );
                assert!(
                    none_energy <= energy * 1.01,
                    "{rw} depth {depth} x {tenants}: none {none_energy:.0} > {scheduler} {energy:.0} J per 1M I/Os"
                );
            }
        }
    }
}

#[test]
fn bad_host_keys_name_the_key() {
    for (set, expected) in [
        ("host.io_scheduler=cfq", "key `host.io_scheduler`"),
        ("host.cpu_scheduler=bfs", "key `host.cpu_scheduler`"),
        ("host.completion=sometimes", "key `host.completion`"),
        ("host.cores=0", "key `host.cores`"),
        ("host.block.max_sectors_kb=3", "key `host.block.max_sectors_kb`"),
        ("host.block.ld_depth=0", "key `host.block.ld_depth`"),
        ("host.block.ld_sync_batch=0", "key `host.block.ld_sync_batch`"),
        ("host.block.ld_async_batch=70000", "key `host.block.ld_async_batch`"),
        ("flow.io.cpus_allowed=\"0-9\"", "key `flow[0].cpus_allowed`"),
        ("flow.io.iodepth=4", ""),
    ] {
        let mut overrides = vec![set];
        if set == "flow.io.iodepth=4" {
            overrides.push("flow.io.ioengine=psync");
        }
        let err = ullsim::Scenario::from_toml_str(
            QD1,
            "test.toml",
            std::path::Path::new("."),
            &overrides.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        )
        .expect_err(set)
        .to_string();
        assert!(err.starts_with("test.toml: "), "{err}");
        assert!(err.contains(expected), "{set}: {err}");
    }
}

#[test]
fn a_plugged_batch_of_sequential_reads_merges_and_goes_down_as_one_command() {
    // 32 sequential 4 KiB reads submitted by one system call: each batch merges into 128 KiB commands.
    let text = r#"
[run]
duration = "10ms"
check_invariants = true
[device]
preset = "optane-ull"
[[flow]]
name = "seq"
rw = "read"
bs = "4k"
iodepth = 32
iodepth_batch_submit = 32
"#;
    let merged = run(&scenario(text));
    let f = &merged.flows[0];
    let block = &merged.host.block;
    println!("merges {} plug flushes {} completed {}", block.merges, block.plug_flushes, f.completed);
    assert!(f.completed > 1000);
    assert!(block.plug_flushes > 0);
    // Every batch of 32 becomes one command, so 31 of 32 bios merge; the device never holds more than one.
    assert!(block.merges as f64 > 0.9 * f.completed as f64, "{} merges for {} I/Os", block.merges, f.completed);
    assert_eq!(merged.device.queue_depth.max, 1);
    assert!((f.breakdown_ns.sum_of_means() - f.latency_ns.mean).abs() < 1.0);

    let unmerged = run(&scenario_with(text, &["host.block.merges=false"]));
    assert_eq!(unmerged.host.block.merges, 0);
    assert!(unmerged.device.queue_depth.max > 16, "without merging the batch is 32 commands");
    let unplugged = run(&scenario_with(text, &["host.block.plug=false"]));
    assert_eq!((unplugged.host.block.merges, unplugged.host.block.plug_flushes), (0, 0));
    // Random reads are never adjacent: plugged, not merged.
    let random = run(&scenario_with(text, &["flow.seq.rw=randread"]));
    assert!(random.host.block.plug_flushes > 0);
    assert!(random.host.block.merges * 100 < random.flows[0].completed, "random 4 KiB reads rarely touch");
    // A batch of one or two is not plugged (io_uring's and libaio's threshold).
    let small = run(&scenario_with(text, &["flow.seq.iodepth=2", "flow.seq.iodepth_batch_submit=2"]));
    assert_eq!(small.host.block.plug_flushes, 0);
}

#[test]
fn a_system_call_per_io_by_default_and_per_batch_with_iodepth_batch_submit() {
    // One job at depth 8 is CPU-bound: batching the submissions saves a system call exit and entry per I/O.
    let base = ["flow.io.iodepth=8", "host.block.plug=false", "host.cores=1"];
    let per_io = run(&scenario_with(QD1, &base));
    let mut batched_overrides = base.to_vec();
    batched_overrides.push("flow.io.iodepth_batch_submit=8");
    let batched = run(&scenario_with(QD1, &batched_overrides));
    let (a, b) = (per_io.flows[0].cpu_cores / per_io.flows[0].iops, batched.flows[0].cpu_cores / batched.flows[0].iops);
    let saved_ns = (a - b) * 1e9;
    println!("CPU per I/O: per-I/O calls {:.0} ns, batched {:.0} ns", a * 1e9, b * 1e9);
    // Without batching, a wake-up that reaped n completions submits their n successors in n io_uring_enter
    // calls, one more exit and entry (100 + 100 ns) for each but the first; batched, they go in one call. So
    // the saving is (1 - 1/n) x 200 ns per I/O: positive, below 200 ns, and near 100 ns for n around 2.
    assert!((40.0..=200.0).contains(&saved_ns), "batching saved {saved_ns:.0} ns of CPU per I/O");
}

#[test]
fn rt_requests_go_first_in_mq_deadline_and_idle_ones_last() {
    // A device that holds two commands, so requests queue in the scheduler, where the I/O priority class
    // decides the order: a light real-time flow beside two closed-loop ones, best effort and idle.
    let text = r#"
[run]
duration = "20ms"
[host]
io_scheduler = "mq-deadline"
[device]
preset = "optane-ull"
[device.host_interface]
queue_depth = 3
[[flow]]
name = "rt"
rw = "randread"
rate_iops = 50000
iodepth = 8
prioclass = "rt"
[[flow]]
name = "be"
rw = "randread"
iodepth = 8
[[flow]]
name = "idle"
rw = "randread"
iodepth = 8
prioclass = "idle"
"#;
    let r = run(&scenario(text));
    let mean = |i: usize| r.flows[i].latency_ns.mean;
    let done = |i: usize| r.flows[i].completed;
    println!("mean latency rt {:.0} be {:.0} idle {:.0} ns", mean(0), mean(1), mean(2));
    println!("completed rt {} be {} idle {}", done(0), done(1), done(2));
    assert!(mean(0) * 1.5 < mean(1), "rt {} vs be {}", mean(0), mean(1));
    // Idle requests go only when nothing else waits, and the closed-loop best-effort flow always has some
    // waiting: idle starves (mq-deadline's aging rescues it only after 10 s).
    assert!(done(1) > 1000 && done(2) * 20 < done(1), "be {} vs idle {} completions", done(1), done(2));
    // `none` has no notion of priority: the three are served alike.
    let none = run(&scenario_with(text, &["host.io_scheduler=none"]));
    let (be, idle) = (none.flows[1].completed as f64, none.flows[2].completed as f64);
    assert!((be / idle - 1.0).abs() < 0.1, "none: be {be} vs idle {idle} completions");
}

#[test]
fn a_psync_job_never_has_two_ios_in_flight_even_when_arrivals_outrun_it() {
    let r = run(&scenario_with(
        QD1,
        &[
            "flow.io.ioengine=psync",
            "flow.io.rate_iops=500000",
            "flow.io.rate_process=poisson",
            "run.check_invariants=true",
        ],
    ));
    assert_eq!(r.device.queue_depth.max, 1, "one blocking job: one command at a time");
    assert!(r.flows[0].completed > 500);
}

#[test]
fn an_sqpoll_thread_starts_with_its_flow() {
    let r = run(&scenario_with(
        QD1,
        &["flow.io.sqthread_poll=true", "flow.io.startdelay=\"10ms\"", "flow.io.cpus_allowed=\"0\""],
    ));
    // The thread spins on core 1 for the second half of the run only.
    let spin = r.host.cores[1].poll + r.host.cores[1].kernel;
    assert!((0.45..0.55).contains(&spin), "sqpoll core busy {spin} of a run it spent half of");
}

#[test]
fn keys_that_do_not_apply_to_a_cpu_burner_are_errors() {
    let hog = "[device]\npreset = \"optane-ull\"\n[[flow]]\nname = \"hog\"\nioengine = \"cpuio\"\n";
    for key in [
        "size = \"1GiB\"",
        "offset = 0",
        "rwmixread = 50",
        "random_distribution = \"random\"",
        "rate_process = \"poisson\"",
        "time_scale = 2.0",
        "format = \"msr\"",
        "prioclass = \"rt\"",
        "iodepth_batch_submit = 4",
    ] {
        let text = format!("{hog}{key}\n");
        let err = ullsim::Scenario::from_toml_str(&text, "t.toml", std::path::Path::new("."), &[])
            .expect_err(key)
            .to_string();
        let name = key.split(' ').next().unwrap();
        assert!(err.contains(&format!("key `flow[0].{name}`")) && err.contains("cpuio"), "{key}: {err}");
    }
}

/// Three flows of three NVMe classes that saturate optane-ull's controller (555K commands/s), under weighted
/// round robin; each job pinned to a core of its own, so that each keeps to one submission queue (a job that
/// moves between cores has requests in two queues for a while, and round robin then gives it two turns).
const THREE_CLASSES: &str = r#"
[run]
duration = "10ms"
check_invariants = true
[host]
cores = 5
[device]
preset = "optane-ull"
[device.host_interface]
arbiter = "weighted-round-robin"
[[flow]]
name = "urgent"
rw = "randread"
iodepth = 32
prio = "urgent"
cpus_allowed = "0"
rate_iops = 100000
[[flow]]
name = "high"
rw = "randread"
iodepth = 32
numjobs = 2
prio = "high"
cpus_allowed = "1-2"
cpus_allowed_policy = "split"
[[flow]]
name = "low"
rw = "randread"
iodepth = 32
numjobs = 2
prio = "low"
cpus_allowed = "3-4"
cpus_allowed_policy = "split"
"#;

#[test]
fn flow_priorities_reach_the_device_and_weighted_round_robin_serves_them_in_order() {
    // With weighted round robin the urgent flow's queues are fetched first, and high gets four times low's
    // share (weights high 4, low 1); round robin treats all alike.
    let text = THREE_CLASSES;
    let wrr = run(&scenario(text));
    let (urgent, high, low) = (&wrr.flows[0], &wrr.flows[1], &wrr.flows[2]);
    println!(
        "wrr: urgent {:.0} IOPS {:.1} us; high {:.0} IOPS; low {:.0} IOPS",
        urgent.iops,
        urgent.latency_ns.mean / 1e3,
        high.iops,
        low.iops
    );
    let ratio = high.iops / low.iops;
    assert!((3.6..4.4).contains(&ratio), "high/low fetch share {ratio}, weights 4:1");
    let rr = run(&scenario_with(text, &["device.host_interface.arbiter=round-robin"]));
    println!(
        "rr: urgent {:.1} us, high {:.0} IOPS, low {:.0} IOPS",
        rr.flows[0].latency_ns.mean / 1e3,
        rr.flows[1].iops,
        rr.flows[2].iops
    );
    assert!(urgent.latency_ns.mean * 2.0 < rr.flows[0].latency_ns.mean, "urgent goes first only under wrr");
    assert!((rr.flows[1].iops / rr.flows[2].iops - 1.0).abs() < 0.1, "round robin: high and low alike");
}

// ---- the device-only host ---------------------------------------------------------------------------------

/// The host parts of a flow's breakdown (everything but the device's two), in ns.
fn host_parts(f: &ullsim::metrics::FlowResult) -> Vec<f64> {
    let parts = f.breakdown_ns.parts();
    parts.iter().filter(|(name, _)| !name.starts_with("device_")).map(|(_, p)| p.mean).collect()
}

#[test]
fn device_only_adds_no_host_time_and_the_full_host_adds_its_share() {
    // Without the device's own spread, every QD1 read takes the device the same time under either host.
    let fixed = "device.variability.enabled=false";
    let device_only = run(&scenario_with(QD1, &["host.model=device-only", "run.check_invariants=true", fixed]));
    let full = run(&scenario_with(QD1, &[fixed]));
    let (d, f) = (&device_only.flows[0], &full.flows[0]);
    // Each part is a mean of non-negative per-request times: 0.0 means every request spent exactly 0 there.
    assert_eq!(host_parts(d), [0.0; 7], "device-only host time: {:?}", d.breakdown_ns);
    let device_time =
        |f: &ullsim::metrics::FlowResult| f.breakdown_ns.device_queued.mean + f.breakdown_ns.device_service.mean;
    assert!(
        (d.latency_ns.mean - device_time(d)).abs() < 1e-6,
        "latency {} vs device {}",
        d.latency_ns.mean,
        device_time(d)
    );
    // At QD1 every read takes the device the same time under either host, so the full host is slower by
    // exactly its own parts (~6 us of its 12.5).
    let host_share: f64 = host_parts(f).iter().sum();
    assert!((device_time(f) - device_time(d)).abs() < 1.0, "device time {} vs {}", device_time(f), device_time(d));
    assert!((f.latency_ns.mean - d.latency_ns.mean - host_share).abs() < 1.0, "host share {host_share}");
    assert!((5_000.0..7_000.0).contains(&host_share), "the default host's share of a QD1 read: {host_share} ns");
    // No cores, no CPU, no interrupts, no block layer: all reported as such, not as a configured machine.
    let h = &device_only.host;
    assert_eq!(h.model, ullsim::config::host::HostModel::DeviceOnly);
    assert!(h.cores.is_empty() && h.busy_cores == 0.0 && h.interrupts == 0, "{h:?}");
    assert_eq!(
        (h.cpu_scheduler.as_str(), h.completion.as_str(), h.block.io_scheduler.as_str()),
        ("none", "none", "none")
    );
    assert_eq!(d.cpu_cores, 0.0);
    // Power: the base and the SSD only.
    let p = &device_only_power();
    let busy = device_only.device.busy;
    let watts = p.base_w + busy * p.device_active_w + (1.0 - busy) * p.device_idle_w;
    assert!((device_only.energy.mean_watts - watts).abs() < 1e-9, "{} W vs {watts} W", device_only.energy.mean_watts);
}

fn device_only_power() -> ullsim::config::host::PowerConfig {
    scenario(QD1).host.power
}

#[test]
fn device_only_qd1_read_latency_is_the_sum_of_the_device_stages() {
    // optane-ull at QD1 without its service-time spread is deterministic: no queueing anywhere, one die per
    // read, no cache, in-place map.
    let s = scenario_with(QD1, &["host.model=device-only", "device.variability.enabled=false"]);
    let (hi, flash) = (&s.device.host_interface, &s.device.flash);
    // The data crosses the link in 256-byte TLPs (24 bytes of overhead each) at the lanes' rate less the
    // DLLPs' share, or at the controller's read path if that is slower.
    let tlps = 4096u64.div_ceil(u64::from(hi.pcie_max_payload_bytes));
    let wire = (4096 + tlps * u64::from(hi.pcie_tlp_overhead_bytes)) as f64;
    let link = f64::from(hi.pcie_lanes) * hi.pcie_lane_bytes_per_s * (1.0 - hi.pcie_dllp_overhead);
    let pcie = (wire * 1e9 / link).max(4096.0 * 1e9 / hi.max_read_bytes_per_s).ceil() as u64;
    let channel = (4096.0 * 1000.0 / (flash.channel_mts * flash.channel_width_bytes as f64)).ceil() as u64;
    let expected = hi.doorbell_ns.0
        + hi.command_process_ns.0
        + hi.command_fetch_ns.0
        + flash.command_ns.0
        + flash.read_ns.0
        + channel
        + pcie
        + hi.completion_ns.0;
    let r = run(&s);
    let f = &r.flows[0];
    println!("QD1 read: {} ns measured, {expected} ns from the device's stages", f.latency_ns.mean);
    assert!(f.completed > 1_000);
    // The mean is exact (a sum over requests, not a histogram bucket): every read took exactly this long.
    assert_eq!(f.latency_ns.mean, expected as f64);
    assert_eq!(f.breakdown_ns.device_queued.mean, 0.0);
    // Closed loop at QD1 with no host time: the device is never idle between reads.
    assert!((f.iops * expected as f64 / 1e9 - 1.0).abs() < 1e-3, "IOPS {} x latency {expected} ns", f.iops);
}

/// Flows of every kind, two priority classes and two jobs sharing a queue, under the device-only host (no
/// `check_invariants`: it is linear in the size of the drive, and znand-ull is large).
const DEVICE_ONLY_MIX: [&str; 6] = [
    "host.model=device-only",
    "run.duration=30ms",
    "run.warmup=5ms",
    "flow.reader.prio=high",
    "flow.reader.numjobs=2",
    "flow.writer.prio=low",
];

#[test]
fn device_only_runs_are_deterministic() {
    let json = |seed: &str| {
        let mut overrides = DEVICE_ONLY_MIX.to_vec();
        overrides.push(seed);
        serde_json::to_vec(&run(&scenario_with(MIXED, &overrides))).unwrap()
    };
    let first = json("seed=11");
    assert!(first == json("seed=11"), "same scenario and seed, different JSON");
    assert!(first != json("seed=12"), "another seed, same JSON");
    let r: serde_json::Value = serde_json::from_slice(&first).unwrap();
    assert_eq!(r["host"]["model"], "device-only");
    for f in r["flows"].as_array().unwrap() {
        assert!(f["completed"].as_u64().unwrap() > 100, "{}", f["name"]);
        for part in ["syscall", "page_cache", "file_system", "driver", "completion", "cpu_wait"] {
            assert_eq!(f["breakdown_ns"][part]["mean"], 0.0, "{} {part}", f["name"]);
        }
    }
}

#[test]
fn device_only_host_keys_are_ignored() {
    // Every [host] key but model and power, and the flows' engine and core keys, change nothing.
    let base = serde_json::to_value(run(&scenario_with(MIXED, &DEVICE_ONLY_MIX)).flows).unwrap();
    let other = run(&scenario_with(
        MIXED,
        &[
            &DEVICE_ONLY_MIX[..],
            &[
                "host.cores=1",
                "host.cpu_scheduler=eevdf",
                "host.io_scheduler=bfq",
                "host.completion=poll",
                "host.queue_pairs=1",
                "host.cpu.context_switch_ns=50000",
                "host.block.max_sectors_kb=4",
                "host.nvme.coalesce_count=8",
                "flow.reader.ioengine=libaio",
                "flow.reader.cpus_allowed=\"0\"",
                "flow.writer.sqthread_poll=true",
                "flow.writer.hipri=true",
                "flow.writer.iodepth_batch_submit=8",
                "flow.writer.prioclass=idle",
            ],
        ]
        .concat(),
    ));
    assert_eq!(serde_json::to_value(other.flows).unwrap(), base);
}

#[test]
fn device_only_gives_each_flow_its_own_queue_with_its_priority() {
    // As with the full host (above), now with one queue per flow (the two jobs of high and of low share
    // theirs): weighted round robin fetches urgent first and high four times as often as low.
    let wrr = run(&scenario_with(THREE_CLASSES, &["host.model=device-only"]));
    let (urgent, high, low) = (&wrr.flows[0], &wrr.flows[1], &wrr.flows[2]);
    let ratio = high.iops / low.iops;
    assert!((3.8..4.2).contains(&ratio), "high/low fetch share {ratio}, weights 4:1");
    let rr =
        run(&scenario_with(THREE_CLASSES, &["host.model=device-only", "device.host_interface.arbiter=round-robin"]));
    assert!(urgent.latency_ns.mean * 2.0 < rr.flows[0].latency_ns.mean, "urgent goes first only under wrr");
    let ratio = rr.flows[1].iops / rr.flows[2].iops;
    assert!((0.95..1.05).contains(&ratio), "round robin: one queue each, equal turns: {ratio}");
}

#[test]
fn device_only_io_beyond_the_queue_waits_for_a_slot_in_the_host() {
    // A 4-entry queue holds 3 commands: the other 13 of QD16 wait in the host (the `block` part) for a slot.
    let r = run(&scenario_with(
        QD1,
        &[
            "host.model=device-only",
            "device.host_interface.queue_depth=4",
            "flow.io.iodepth=16",
            "run.check_invariants=true",
        ],
    ));
    let f = &r.flows[0];
    assert_eq!(r.device.queue_depth.max, 3);
    assert!(f.breakdown_ns.block.mean > 10.0 * f.breakdown_ns.device_service.mean / 3.0, "{:?}", f.breakdown_ns);
    let b = &f.breakdown_ns;
    let others = f
        .breakdown_ns
        .parts()
        .into_iter()
        .filter(|&(name, _)| !["block", "device_queued", "device_service"].contains(&name));
    assert!(others.clone().all(|(_, p)| p.mean == 0.0), "{b:?}");
    assert_eq!(others.count(), 6);
    assert!((f.breakdown_ns.sum_of_means() - f.latency_ns.mean).abs() < 1.0);
}

#[test]
fn device_only_bad_input_names_the_key() {
    let load = |overrides: &[&str]| {
        ullsim::Scenario::from_toml_str(
            QD1,
            "test.toml",
            std::path::Path::new("."),
            &overrides.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        )
        .expect_err("must be rejected")
        .to_string()
    };
    let err = load(&["host.model=device_only"]);
    assert!(err.contains("key `host.model`") && err.contains(r#"expected one of "full", "device-only""#), "{err}");
    let err = load(&["host.model=3"]);
    assert!(err.contains("key `host.model`") && err.contains("found 3"), "{err}");
    // A CPU burner needs a CPU: one error naming the flow's key and the host model.
    let text = format!("{QD1}\n[[flow]]\nname = \"hog\"\nioengine = \"cpuio\"\n");
    let err =
        ullsim::Scenario::from_toml_str(&text, "t.toml", std::path::Path::new("."), &["host.model=device-only".into()])
            .expect_err("a cpuio flow under device-only")
            .to_string();
    assert!(
        err.contains("key `flow[1].ioengine` (flow \"hog\")") && err.contains("host.model = \"device-only\""),
        "{err}"
    );
    assert!(err.starts_with("t.toml: --set host.model=device-only") || err.starts_with("t.toml: key"), "{err}");
}

/// A non-critical 128 KB QD64 reader on optane-ull under `ld` with 8 tokens.
const LD_BULK: &str = r#"
[run]
duration = "30ms"
warmup = "2ms"
check_invariants = true
[host]
io_scheduler = "ld"
[host.block]
ld_depth = 8
[device]
preset = "optane-ull"
[[flow]]
name = "bulk"
rw = "randread"
bs = "128k"
ioengine = "io_uring"
iodepth = 64
"#;

/// The same beside a critical 4 KB QD1 reader.
fn ld_mix() -> String {
    format!("{LD_BULK}\n[[flow]]\nname = \"critical\"\nclass = \"critical\"\nrw = \"randread\"\nbs = \"4k\"\n")
}

#[test]
fn ld_keeps_at_most_depth_non_critical_requests_in_the_device() {
    let ld = run(&scenario_with(LD_BULK, &[]));
    assert!(ld.flows[0].completed > 100);
    assert_eq!(ld.device.queue_depth.max, 8, "the QD64 reader fills exactly the 8 tokens, never more");
    let none = run(&scenario_with(LD_BULK, &["host.io_scheduler=none"]));
    assert!(none.device.queue_depth.max > 60, "without ld the device sees the reader's whole depth");
}

#[test]
fn ld_lets_a_critical_reader_bypass_the_tokens_and_beat_kyber_and_none() {
    let mix = ld_mix();
    let with = |scheduler: &str| run(&scenario_with(&mix, &[&format!("host.io_scheduler={scheduler}")]));
    let (ld, kyber, none) = (with("ld"), with("kyber"), with("none"));
    let alone = run(&scenario_with(&mix, &["flow.bulk.number_ios=1"]));
    let latency = |r: &RunResults| r.flows[1].latency_ns.mean;
    let (bulk, critical) = (&ld.flows[0].breakdown_ns, &ld.flows[1].breakdown_ns);
    // The critical reader never waits for a token: its block time is the block layer's and ld's CPU costs
    // (submit 200 + insert 200 + dispatch 300 ns), while the bulk reader waits there for its tokens.
    assert!(critical.block.mean < 1_000.0, "critical block {} ns", critical.block.mean);
    assert!(bulk.block.mean > 100.0 * critical.block.mean, "bulk block {} ns", bulk.block.mean);
    // What the bulk reader adds to the critical reader's latency scales with the commands ahead of it in the
    // device: at most depth + 1 = 9 of them under ld against 65 under none.
    let extra_none = latency(&none) - latency(&alone);
    let extra_ld = latency(&ld) - latency(&alone);
    assert!(extra_ld <= 1.5 * extra_none * 9.0 / 65.0, "ld adds {extra_ld} ns, none {extra_none} ns");
    assert!(latency(&ld) < 0.5 * latency(&kyber) && latency(&ld) < 0.5 * latency(&none));
    // Determinism: the same run gives the same JSON.
    let json = |r: &RunResults| serde_json::to_vec(r).unwrap();
    assert!(json(&ld) == json(&with("ld")));
}

#[test]
fn latency_from_submit_starts_the_clock_when_the_task_submits() {
    // A QD1 psync reader that thinks 50 us between reads: each read arrives while its task sleeps, so from
    // the arrival its time includes the timer wake-up and the context switch; from the submission only the
    // system call's entry and the file-system path remain before the block layer.
    let text = |from: &str| {
        format!(
            "[run]\nduration = \"50ms\"\n[device]\npreset = \"optane-ull\"\n[[flow]]\nname = \"reader\"\nrw = \
             \"randread\"\nioengine = \"psync\"\nthinktime = 50\nlatency_from = \"{from}\"\n"
        )
    };
    let (arrival, submit) = (run(&scenario(&text("arrival"))), run(&scenario(&text("submit"))));
    let (a, s) = (&arrival.flows[0], &submit.flows[0]);
    let cpu = ullsim::config::HostConfig::default().cpu;
    let syscall_cpu = cpu.syscall_entry_ns.0 as f64;
    assert_eq!(s.breakdown_ns.syscall.mean, syscall_cpu, "only the system call's own work");
    assert_eq!(s.breakdown_ns.file_system.mean, cpu.fs_submit_ns.0 as f64, "then the file-system path");
    assert!(a.breakdown_ns.syscall.mean > syscall_cpu + 1_000.0, "the wake-up: {}", a.breakdown_ns.syscall.mean);
    // The same run either way (the clock only reads it): same completions, same later layers.
    assert_eq!(a.completed, s.completed);
    assert_eq!(a.breakdown_ns.device_service, s.breakdown_ns.device_service);
    let moved = a.breakdown_ns.syscall.mean - s.breakdown_ns.syscall.mean;
    assert!((a.latency_ns.mean - s.latency_ns.mean - moved).abs() < 1.0, "the mean moves by the syscall part");
    // It is about the I/O path, so it is an error on a flow that only burns CPU.
    let cpu_flow = "[device]\npreset = \"optane-ull\"\n[[flow]]\nname = \"hog\"\nioengine = \"cpuio\"\nlatency_from = \"submit\"\n";
    let message =
        ullsim::Scenario::from_toml_str(cpu_flow, "t", std::path::Path::new("."), &[]).unwrap_err().to_string();
    assert!(message.contains("flow[0].latency_from") && message.contains("cpuio"), "{message}");
}

#[test]
fn every_core_accounts_each_instant_once_under_thousands_of_waking_jobs() {
    // 1,024 jobs at depth 64 keep 4 cores busy in the kernel: interrupts are raised while one task runs and
    // handled once another has the core. Each handler's time is the core's kernel time once, never also the
    // next task's (counted twice, a core was 1.000138 busy before).
    let many =
        scenario_with(QD1, &["flow.io.numjobs=1024", "flow.io.iodepth=64", "run.duration=0.004", "run.warmup=0.001"]);
    let r = run(&many);
    for (i, c) in r.host.cores.iter().enumerate() {
        let sum = c.user + c.kernel + c.poll + c.idle;
        assert!(c.kernel <= 1.0 + 1e-9 && (1.0 - 1e-6..=1.0 + 1e-9).contains(&sum), "core {i}: {c:?}");
    }
}

/// The schedulers' sysfs tunables are keys in Linux's units: Kyber's targets in ns, mq-deadline's expiries
/// in ms (bare numbers), with Linux's defaults. (What each does: the schedulers' unit tests.)
#[test]
fn scheduler_tunables_are_keys_in_linux_units() {
    let s = scenario_with(
        QD1,
        &[
            "host.block.kyber_read_lat_nsec=40000000",
            "host.block.kyber_write_lat_nsec=\"3ms\"",
            "host.block.deadline_read_expire=20",
            "host.block.deadline_write_expire=\"1s\"",
            "host.block.deadline_fifo_batch=1",
            "host.block.deadline_writes_starved=0",
        ],
    );
    let b = &s.host.block;
    assert_eq!((b.kyber_read_lat_nsec.0, b.kyber_write_lat_nsec.0), (40_000_000, 3_000_000));
    assert_eq!((b.deadline_read_expire.0, b.deadline_write_expire.0), (20_000_000, 1_000_000_000));
    assert_eq!((b.deadline_fifo_batch, b.deadline_writes_starved), (1, 0));
    // Linux's defaults when not given.
    let d = scenario(QD1);
    let b = &d.host.block;
    assert_eq!((b.kyber_read_lat_nsec.0, b.kyber_write_lat_nsec.0), (2_000_000, 10_000_000));
    assert_eq!((b.deadline_read_expire.0, b.deadline_write_expire.0), (500_000_000, 5_000_000_000));
    assert_eq!((b.deadline_fifo_batch, b.deadline_writes_starved), (16, 2));
    let e = common::load_error(QD1, &["host.block.deadline_fifo_batch=-1"]);
    assert!(e.contains("host.block.deadline_fifo_batch"), "{e}");
}

/// mq-deadline's `front_merges` and bfq's `slice_idle` (ms, as its sysfs file), `low_latency`,
/// `back_seek_max` (KiB) and `back_seek_penalty` are keys with Linux's defaults; out-of-range values are
/// errors naming the key (sysfs would clamp them).
#[test]
fn merge_and_bfq_tunables_are_keys_in_linux_units() {
    let s = scenario_with(
        QD1,
        &[
            "host.block.deadline_front_merges=false",
            "host.block.bfq_slice_idle=0",
            "host.block.bfq_low_latency=false",
            "host.block.bfq_back_seek_max=0",
            "host.block.bfq_back_seek_penalty=1",
        ],
    );
    let b = &s.host.block;
    assert!(!b.deadline_front_merges && !b.bfq_low_latency);
    assert_eq!((b.bfq_slice_idle.0, b.bfq_back_seek_max, b.bfq_back_seek_penalty), (0, 0, 1));
    let s = scenario_with(QD1, &["host.block.bfq_slice_idle=\"250us\""]);
    assert_eq!(s.host.block.bfq_slice_idle.0, 250_000);
    let d = scenario(QD1);
    let b = &d.host.block;
    assert!(b.deadline_front_merges && b.bfq_low_latency);
    assert_eq!((b.bfq_slice_idle.0, b.bfq_back_seek_max, b.bfq_back_seek_penalty), (8_000_000, 16_384, 2));
    for (key, bad) in [("host.block.bfq_back_seek_penalty", "0"), ("host.block.bfq_back_seek_max", "2147483648")] {
        let e = common::load_error(QD1, &[&format!("{key}={bad}")]);
        assert!(e.contains(key), "{e}");
    }
}

/// With bfq idling for a weight-raised reader (a queue of its own: it starts 200 ms after the writers, whose
/// queues are merged), the writers' requests wait in the scheduler while the reader is in service; with
/// `low_latency` off nothing is raised and nothing plugs.
#[test]
fn bfq_plugs_for_a_weight_raised_reader_beside_writers() {
    let toml = r#"
name = "reader beside writers"
seed = 1
[run]
duration = "400ms"
warmup = "250ms"
[host]
io_scheduler = "bfq"
[device]
preset = "optane-ull"
[[flow]]
name = "reader"
rw = "randread"
bs = "4k"
startdelay = "200ms"
cpus_allowed = "0"
[[flow]]
name = "writer"
rw = "randwrite"
bs = "4k"
ioengine = "io_uring"
iodepth = 32
numjobs = 2
cpus_allowed = "1-2"
"#;
    let raised = run(&scenario_with(toml, &[]));
    let plain = run(&scenario_with(toml, &["host.block.bfq_low_latency=false"]));
    assert!(raised.host.block.max_sched_queued > 32, "{:?}", raised.host.block);
    assert!(plain.host.block.max_sched_queued <= 2, "{:?}", plain.host.block);
}
