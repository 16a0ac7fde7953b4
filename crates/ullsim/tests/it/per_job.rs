//! Per-job results (`[metrics] per_job`): a flow's jobs add up to the flow (completions, bytes, IOPS,
//! flushes, CPU and context switches, sqpoll threads included), each job's latencies lie within the flow's,
//! `group_reporting`, `numjobs = 1` and the key off record none, device-only jobs have no CPU, too many jobs
//! are one warning, and the same seed gives the same bytes.

use crate::common;

use common::{run, scenario_with};
use ullsim::metrics::per_job::{JobResult, MAX_JOBS_APART};
use ullsim::metrics::{FlowResult, OpResult};

/// A mixed flow of three jobs that flushes, beside a single-job reader, on a Z-NAND drive.
const THREE_JOBS: &str = r#"
[run]
duration = "12ms"
warmup = "2ms"
[metrics]
per_job = true
[device]
preset = "znand-ull"
[[flow]]
name = "mixed"
rw = "randrw"
rwmixread = 60
bs = "8k"
iodepth = 4
numjobs = 3
flush_every = 16
[[flow]]
name = "reader"
rw = "randread"
"#;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12)
}

/// One direction (or the flushes) of the jobs, checked against the flow's.
fn check_op(flow: Option<&OpResult>, jobs: Vec<Option<&OpResult>>, what: &str) {
    let Some(flow) = flow else {
        assert!(jobs.iter().all(Option::is_none), "{what}: jobs have what the flow has not");
        return;
    };
    let jobs: Vec<&OpResult> = jobs.into_iter().flatten().collect();
    assert!(!jobs.is_empty(), "{what}: no job has any");
    assert_eq!(jobs.iter().map(|j| j.completed).sum::<u64>(), flow.completed, "{what}: completed");
    assert_eq!(jobs.iter().map(|j| j.detail.bytes).sum::<u64>(), flow.detail.bytes, "{what}: bytes");
    assert!(close(jobs.iter().map(|j| j.iops).sum(), flow.iops), "{what}: iops");
    assert!(close(jobs.iter().map(|j| j.bandwidth_bytes_per_s).sum(), flow.bandwidth_bytes_per_s), "{what}: bw");
    for j in &jobs {
        let (l, f) = (&j.latency_ns, &flow.latency_ns);
        assert!(
            l.min >= f.min && l.max <= f.max,
            "{what}: a job's [{}, {}] outside [{}, {}]",
            l.min,
            l.max,
            f.min,
            f.max
        );
        assert!(l.min <= l.p50 && l.p50 <= l.p99 && l.p99 <= l.max, "{what}: {l:?}");
        assert_eq!(j.detail.latency.count, j.completed, "{what}");
        if let (Some(js), Some(fs)) = (&j.detail.after_submission, &flow.detail.after_submission) {
            assert!(js.min >= fs.min && js.max <= fs.max, "{what}: after submission");
            assert_eq!(js.count, j.completed);
        } else {
            assert_eq!(j.detail.after_submission.is_none(), flow.detail.after_submission.is_none(), "{what}");
        }
    }
}

/// The flow's jobs add up to it; returns them.
fn check_jobs(flow: &FlowResult, numjobs: u32) -> &[JobResult] {
    let name = &flow.name;
    let jobs = flow.jobs.as_deref().unwrap_or_else(|| panic!("{name}: no jobs"));
    assert_eq!(jobs.iter().map(|j| j.job).collect::<Vec<_>>(), (0..numjobs).collect::<Vec<_>>(), "{name}");
    assert_eq!(jobs.iter().map(|j| j.completed).sum::<u64>(), flow.completed, "{name}: completed");
    assert!(close(jobs.iter().map(|j| j.iops).sum(), flow.iops), "{name}: iops");
    assert!(jobs.iter().all(|j| j.completed > 0), "{name}: an idle job: {jobs:?}");
    for j in jobs {
        assert!(j.latency_ns.min >= flow.latency_ns.min && j.latency_ns.max <= flow.latency_ns.max, "{name}");
    }
    check_op(flow.read.as_ref(), jobs.iter().map(|j| j.read.as_ref()).collect(), &format!("{name}.read"));
    check_op(flow.write.as_ref(), jobs.iter().map(|j| j.write.as_ref()).collect(), &format!("{name}.write"));
    check_op(flow.flush.as_ref(), jobs.iter().map(|j| j.flush.as_ref()).collect(), &format!("{name}.flush"));
    // CPU: the jobs' tasks (and sqpoll threads) are the flow's.
    assert!(close(jobs.iter().map(|j| j.cpu_cores).sum(), flow.cpu_cores), "{name}: cpu");
    assert!(close(jobs.iter().map(|j| j.cpu_user_cores).sum(), flow.cpu_user_cores), "{name}: user cpu");
    assert_eq!(jobs.iter().map(|j| j.context_switches).sum::<u64>(), flow.context_switches, "{name}: ctx");
    jobs
}

#[test]
fn three_jobs_add_up_to_their_flow() {
    let results = run(&scenario_with(THREE_JOBS, &[]));
    let [mixed, reader] = &results.flows[..] else { panic!("two flows") };
    let jobs = check_jobs(mixed, 3);
    assert!(mixed.read.is_some() && mixed.write.is_some() && mixed.flush.is_some());
    assert!(jobs.iter().all(|j| j.cpu_cores > 0.0 && j.context_switches > 0), "{jobs:?}");
    // A single-job flow keeps its one set of results.
    assert!(reader.jobs.is_none());
    // The jobs are reported, the flow's own figures are as without the key.
    let off = run(&scenario_with(THREE_JOBS, &["metrics.per_job=false"]));
    let mut with = results.flows.clone();
    with.iter_mut().for_each(|f| f.jobs = None);
    assert_eq!(with, off.flows, "recording jobs apart changed the flows' results");
}

#[test]
fn sqpoll_threads_count_in_their_jobs_cpu() {
    let s = scenario_with(THREE_JOBS, &["flow.mixed.sqthread_poll=true", "flow.mixed.flush_every=32", "host.cores=8"]);
    let results = run(&s);
    let jobs = check_jobs(&results.flows[0], 3);
    // Each job's sqpoll thread spins on a core of its own for the whole window.
    assert!(jobs.iter().all(|j| j.cpu_cores > 0.9), "{:?}", jobs.iter().map(|j| j.cpu_cores).collect::<Vec<_>>());
}

#[test]
fn device_only_jobs_have_no_cpu() {
    let results = run(&scenario_with(THREE_JOBS, &["host.model=device-only"]));
    let jobs = check_jobs(&results.flows[0], 3);
    assert!(jobs.iter().all(|j| j.cpu_cores == 0.0 && j.cpu_user_cores == 0.0 && j.context_switches == 0));
}

#[test]
fn group_reporting_and_the_key_off_record_no_jobs() {
    for set in ["flow.mixed.group_reporting=true", "metrics.per_job=false"] {
        let results = run(&scenario_with(THREE_JOBS, &[set]));
        assert!(results.flows.iter().all(|f| f.jobs.is_none()), "{set}");
        let json = serde_json::to_string(&results).unwrap();
        assert!(!json.contains("\"jobs\""), "{set}: the JSON has a jobs key");
    }
}

#[test]
fn per_job_results_are_deterministic() {
    let s = scenario_with(THREE_JOBS, &[]);
    let (a, b) = (serde_json::to_string(&run(&s)).unwrap(), serde_json::to_string(&run(&s)).unwrap());
    assert_eq!(a, b, "same seed, different bytes");
    assert!(a.contains("\"jobs\":[{\"job\":0,"), "no jobs in the JSON");
    let other = serde_json::to_string(&run(&scenario_with(THREE_JOBS, &["seed=2"]))).unwrap();
    assert_ne!(a, other);
}

#[test]
fn too_many_jobs_are_reported_as_a_group_with_a_warning() {
    let many = format!("flow.mixed.numjobs={}", MAX_JOBS_APART + 1);
    let s = scenario_with(THREE_JOBS, &[&many, "flow.mixed.iodepth=1", "run.duration=3ms", "run.warmup=0"]);
    let results = run(&s);
    assert!(results.flows[0].jobs.is_none());
    let warning = results.warnings.iter().find(|w| w.contains("group_reporting")).expect("a warning");
    assert!(warning.contains("\"mixed\"") && warning.contains(&MAX_JOBS_APART.to_string()), "{warning}");
}
