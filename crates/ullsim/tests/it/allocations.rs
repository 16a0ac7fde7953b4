//! The hot path allocates nothing per request: a run four times as long makes (almost) no more allocations,
//! counted by this test binary's allocator (`fuzz_scenarios.rs`) per thread (the tests run on threads beside
//! one another, so a thread counts only its own run's).

use std::path::Path;

use ullsim::{Scenario, Simulation};

use crate::fuzz_scenarios::allocations_on_this_thread;

/// Allocations (and growing reallocations) of this thread's run of `scenario` for `duration`, from its first event to
/// its results, and the requests it completed.
fn allocations_of_run(scenario: &str, duration: &str) -> (u64, u64) {
    let overrides = vec![format!("run.duration={duration}"), "run.warmup=0s".to_string()];
    let scenario = Scenario::from_toml_str(scenario, "allocation test", Path::new("."), &overrides)
        .unwrap_or_else(|e| panic!("{e}"));
    let sim = Simulation::new(&scenario).unwrap_or_else(|e| panic!("{e}"));
    let before = allocations_on_this_thread();
    let results = sim.run(&mut |_, _| {}).unwrap_or_else(|e| panic!("{e}"));
    (allocations_on_this_thread() - before, results.requests_completed)
}

/// A run 4x as long (`short` and 4 x `short` ms) makes fewer than one allocation more per 1,000 more
/// requests: what grows (latency counts, queues, slabs) grows by doubling, and nothing is allocated per
/// request or per event.
fn no_allocation_per_request(scenario: &str, short_ms: u64) {
    let (short_allocations, short_requests) = allocations_of_run(scenario, &format!("{short_ms}ms"));
    let (long_allocations, long_requests) = allocations_of_run(scenario, &format!("{}ms", 4 * short_ms));
    let more_requests = long_requests - short_requests;
    assert!(more_requests > 10_000, "the longer run completes many more requests ({short_requests}, {long_requests})");
    let more_allocations = long_allocations.saturating_sub(short_allocations);
    assert!(
        more_allocations * 1000 < more_requests,
        "{more_allocations} more allocations for {more_requests} more requests ({short_allocations} in the short run)"
    );
}

#[test]
fn the_device_only_host_and_a_full_drive_allocate_nothing_per_request() {
    no_allocation_per_request(
        r#"
name = "allocations: device-only"
[host]
model = "device-only"
[device]
preset = "mqsim-mlc"
[[flow]]
name = "randread"
rw = "randread"
bs = "4k"
iodepth = 32
"#,
        50,
    );
}

#[test]
fn the_full_host_stack_allocates_nothing_per_request() {
    no_allocation_per_request(
        r#"
name = "allocations: full stack"
[host]
io_scheduler = "none"
completion = "interrupt"
[device]
preset = "optane-ull"
[[flow]]
name = "randread"
rw = "randread"
bs = "4k"
iodepth = 32
ioengine = "io_uring"
"#,
        20,
    );
}
