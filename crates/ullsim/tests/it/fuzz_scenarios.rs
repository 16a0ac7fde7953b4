//! Fuzzing with mutated scenario files: no input panics, aborts or makes memory grow without bound.
//!
//! **Seeds.** The built-in default scenario and every `*.toml` under the repository's `scenarios/` tree;
//! relative trace paths resolve against the seed file's directory (a trace that cannot be read is an
//! ordinary error result).
//!
//! **Mutants.** `common/mutate.rs` turns case `i` of a generator seed into a mutant, deterministically: the
//! first cases are the seeds themselves, every later one stacks one to six structural mutations on a seed
//! file: delete, duplicate, swap, move or comment out a line; replace a value with an odd one (0, -1, 2^63,
//! nan, inf, 1e12, huge strings, wrong types, dates, ...), a plausible one at an edge of its range, or a
//! nudged number; set a key of the scenario format in one of the file's tables (or in the wrong one); copy
//! a key line into another table; append renamed or same-named copies of a `[[flow]]`; make a flow heavy
//! (deep queues and many jobs, or a rate of up to 1e12 IOPS, or an app model's `time_scale` down to 1e-9);
//! drop, rename or splice in (from another seed) a table; nest a value or a dotted key thousands deep;
//! truncate; insert control characters, quotes, brackets, a BOM or other odd characters; CRLF line ends.
//! `tests/it/bad_input.rs` sets single keys of one fixed scenario through `--set`; this test breaks the files.
//! The seeds are found at run time, so adding a scenario file changes which mutant a case index gives.
//!
//! **Each case.** The mutant is loaded as it is. An error is fine (it must name the file). A scenario that
//! loads is loaded again with overrides that cap it at CI size: `run.duration` at most [`RUN_CAP`]
//! (warm-up and `startdelay`s pulled inside it), a flash array of at most [`BLOCK_CAP`] blocks of at most
//! [`PAGES_PER_BLOCK_CAP`] pages, and `run.check_invariants = true` on drives of at most
//! [`INVARIANT_PAGE_CAP`] pages, and runs under `catch_unwind` (`Simulation::new`, then `run`: what
//! `ullsim::run_scenario` does without fairness); if that passes, one case in four (with at most four
//! flows) runs again through `ullsim::run_scenario` with `[metrics] fairness = true` (every flow alone too).
//! An `Err` is fine, except a model-invariant violation; an `Ok` must pass [`check_results`] (no NaN or
//! infinity anywhere, latency percentiles in order, the breakdown adding up to the mean, each flow within
//! its `number_ios`, utilizations within [0, 1], ...). Note that a test-profile build has debug
//! assertions and overflow checks on and finds more than `--release`.
//!
//! **Aborts and memory.** The cases run in child processes (this test binary again, with
//! `ULLSIM_FUZZ_WORKER=FROM:TO` naming the cases), so an abort (stack overflow, allocation failure, panic
//! while panicking) kills only the child: the parent notes the case that was running and restarts a child
//! after it. Memory is bounded in two ways:
//! - **growth during a run**: a counting global allocator (the system allocator, counting live and peak
//!   bytes; every allocation of the simulator goes through it) measures what a run adds to the heap after
//!   its setup, which must stay under [`RUN_GROWTH_LIMIT_MIB`] plus [`REQUEST_BYTES`] per request the
//!   closed-loop flows may keep in flight (`iodepth` x `numjobs`). Setup is where memory that depends on
//!   the configuration is allocated (block state, maps, cache sets, histograms); during the run only
//!   requests in flight and queued events should come and go, so memory that grows with simulated time
//!   (an open-loop flow whose backlog is never drained, at up to one arrival per ns) passes this bound
//!   within the [`RUN_CAP`] of a case. It is exact and deterministic. (Runs with `[metrics] fairness`,
//!   several simulations at once, come after the measured run and are bounded by the resident set only.)
//! - **resident set**: the process's resident set (`VmRSS`/`VmHWM` in `/proc/self/status`, the peak reset
//!   through `/proc/self/clear_refs` before each case) must stay under [`MEMORY_LIMIT_MIB`]. The resident
//!   set, not the heap, because the model allocates large zeroed tables it touches only in part (the
//!   reverse map has an entry per physical page). Linux only; elsewhere only the first bound holds.
//!
//! A watchdog thread in the child checks both every 10 ms and ends the child, reporting the case, when a
//! bound is passed (or when a case has run [`CASE_TIME_LIMIT_SECS`]); a peak between two checks is caught
//! when the case ends. The allocator keeps memory a case freed, so a child whose resident set stays above
//! [`FRESH_CHILD_ABOVE_MIB`] after a case leaves the next case to a fresh child.
//!
//! **Failures.** Panics (grouped by the library location that panicked), result-invariant violations,
//! model-invariant errors, error messages that do not name the file, memory or time limits and child
//! crashes fail the test. The failure message lists each group with its count and its smallest mutant
//! (case index, seed file, mutations and full text); every failing mutant is also written to
//! `$CARGO_TARGET_TMPDIR/fuzz_scenarios/`.
//!
//! **Knobs** (environment variables):
//! - `ULLSIM_FUZZ_CASES=20000`: number of cases (default [`CI_CASES`]).
//! - `ULLSIM_FUZZ_SEED=N`: generator seed (default [`GENERATOR_SEED`]); the same seed gives the same mutants.
//! - `ULLSIM_FUZZ_CASE=I`: run case `I` only and print its mutant and outcome (to reproduce a failure).
//! - `ULLSIM_FUZZ_JOBS=N`: child processes at once (default: up to 2, as many as there are cores).
//! - `ULLSIM_FUZZ_MEM_MIB=N`: the resident-set limit, in MiB (see above).
//! - `ULLSIM_FUZZ_VERBOSE=1`: also print the most common error messages (to see what the mutants reach).
//!
//! For example `ULLSIM_FUZZ_CASES=20000 cargo test --profile quick -p ullsim --test it fuzz_scenarios -- --nocapture`.

#[path = "common/mutate.rs"]
mod mutate;

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ullsim::{RunResults, Scenario, SimError, Simulation};

/// Cases of a CI run.
const CI_CASES: u64 = 3000;
/// The generator seed of a CI run.
const GENERATOR_SEED: u64 = 20_250_611;
/// Longest simulated run of a case.
const RUN_CAP: &str = "2ms";
const RUN_CAP_NS: u64 = 2_000_000;
/// Most flash blocks a case's drive keeps (setup time and memory grow with the blocks, not the pages: the
/// map is implicit until written). Every preset fits; larger geometries are shrunk, blocks per plane first
/// (to no fewer than 256), then the number of planes.
const BLOCK_CAP: u64 = 1 << 19;
/// Most pages per block a case's drive keeps (setup time grows with them).
const PAGES_PER_BLOCK_CAP: u64 = 128;
/// `run.check_invariants` walks every page: it is on for drives of at most this many pages.
const INVARIANT_PAGE_CAP: u64 = 1 << 19;
/// Resident-set limit of a child process, in MiB.
const MEMORY_LIMIT_MIB: u64 = 768;
/// Heap a run may add after its setup, in MiB, besides [`REQUEST_BYTES`] per request its closed-loop
/// flows may keep in flight.
const RUN_GROWTH_LIMIT_MIB: u64 = 128;
/// Heap one request in flight may take (a request in the simulator takes a few hundred bytes).
const REQUEST_BYTES: usize = 1024;
/// Wall-time limit of one case.
const CASE_TIME_LIMIT_SECS: u64 = 60;
/// A child whose resident set stays above this after a case hands the next case to a fresh child.
const FRESH_CHILD_ABOVE_MIB: u64 = 256;
/// Cases a child is handed at a time.
const CHUNK: u64 = 200;

const TEST_NAME: &str = "fuzz_scenarios::mutated_scenarios_do_not_panic_abort_or_grow_without_bound";
const WORKER_ENV: &str = "ULLSIM_FUZZ_WORKER";
const TAG: &str = "@@fuzz";

/// The allocator of this test binary: the system allocator, counting live and peak bytes, and each thread's
/// allocations (`allocations.rs`).
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
thread_local! {
    /// Allocations and reallocations made by this thread (const-initialized: no allocation, no destructor).
    static ALLOCATIONS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}
impl Counting {
    fn grow(size: usize) {
        let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
        PEAK.fetch_max(live, Ordering::Relaxed);
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
    }
}

/// Allocations (and growing reallocations) this thread has made so far.
pub(crate) fn allocations_on_this_thread() -> u64 {
    ALLOCATIONS.with(|n| n.get())
}

// SAFETY: every call is passed on to the system allocator unchanged; the counters only observe.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Counting::grow(layout.size());
        // SAFETY: the caller's contract for `alloc` is the system allocator's.
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Counting::grow(layout.size());
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, that is from the system allocator, with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            Counting::grow(new_size - layout.size());
        }
        // SAFETY: as for `dealloc`, and `new_size` is the caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            if new_size > layout.size() {
                LIVE.fetch_sub(new_size - layout.size(), Ordering::Relaxed);
            }
        } else if new_size < layout.size() {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Live heap bytes now.
fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// Start a new peak measurement from the live heap now.
fn reset_peak() {
    PEAK.store(live(), Ordering::Relaxed);
}

fn peak() -> usize {
    PEAK.load(Ordering::Relaxed)
}

/// The heap the running case may reach (its live bytes after setup plus the growth limit) while it runs;
/// `usize::MAX` otherwise. Read by the watchdog.
static BUDGET: AtomicUsize = AtomicUsize::new(usize::MAX);
/// Heap a run may add after its setup, in bytes.
static GROWTH_LIMIT: AtomicUsize = AtomicUsize::new(0);
/// What the running case's run added to the heap (0 before it runs, or with fairness).
static GROWTH: AtomicUsize = AtomicUsize::new(0);

/// The failure groups of the two memory bounds, completed by [`HINT`].
const OVER: &str = "resident set over the limit";
const GROWS: &str = "heap grows during the run";
/// What in the running case's scenario may make memory grow (see [`memory_hint`]).
static HINT: Mutex<String> = Mutex::new(String::new());

/// The feature of a scenario that likely made it fail a memory bound, to group those failures by cause:
/// closed-loop flows allowed a million requests or more in flight (`iodepth` x `numjobs`), or open-loop
/// arrivals (rates, app models, timed traces) the drive cannot keep up with.
fn memory_hint(s: &Scenario) -> String {
    let closed = closed_loop_in_flight(s);
    let open: Vec<String> = s.flows.iter().filter_map(open_loop).collect();
    if closed >= 1 << 20 {
        format!("closed-loop flows keep {closed} requests in flight (iodepth x numjobs)")
    } else if !open.is_empty() {
        format!("open-loop arrivals ({})", open.join("; "))
    } else {
        "closed-loop flows only".into()
    }
}

/// What makes `f` an open-loop flow (a rate, an app model, a timed trace), or `None` for a closed loop.
fn open_loop(f: &ullsim::config::scenario::FlowSpec) -> Option<String> {
    match (f.rate_iops, &f.app, &f.trace, f.iodepth) {
        (Some(r), _, _, _) => Some(format!("rate_iops = {r}")),
        (None, Some(app), _, _) => Some(format!("app {app}, time_scale = {}", f.time_scale.unwrap_or(1.0))),
        (None, None, Some(_), None) => Some(format!("trace, time_scale = {}", f.time_scale.unwrap_or(1.0))),
        _ => None,
    }
}

/// Requests the closed-loop flows may keep in flight: the sum of their `iodepth` x `numjobs`.
fn closed_loop_in_flight(s: &Scenario) -> u64 {
    s.flows
        .iter()
        .filter(|f| open_loop(f).is_none() && !f.is_cpu_only())
        .map(|f| f.numjobs.unwrap_or(1) as u64 * f.iodepth.unwrap_or(1) as u64)
        .sum()
}

/// `group` with the running case's hint, for grouping: the cause class, without the numbers.
fn with_hint(group: &str) -> String {
    let hint = HINT.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let class = hint.split(" (").next().unwrap_or("").split(" keep ").next().unwrap_or("");
    if class.is_empty() {
        group.to_string()
    } else {
        format!("{group}: {class}")
    }
}

const MIB: usize = 1 << 20;

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| v.trim().parse().unwrap_or_else(|_| panic!("{name}={v}: expected a number")))
}

#[test]
fn mutated_scenarios_do_not_panic_abort_or_grow_without_bound() {
    if let Ok(range) = std::env::var(WORKER_ENV) {
        worker(&range);
    } else {
        parent();
    }
}

#[test]
fn the_generator_is_deterministic() {
    let seeds = mutate::seeds();
    assert!(seeds.len() > 10, "expected the scenarios/ tree to hold seed files, found {}", seeds.len());
    let dict = mutate::Dictionary::new();
    let n = seeds.len() as u64;
    for case in [0, n, n + 1, n + 77, 5_000] {
        let a = mutate::mutant(&seeds, &dict, GENERATOR_SEED, case);
        let b = mutate::mutant(&seeds, &dict, GENERATOR_SEED, case);
        assert_eq!((a.seed, &a.text, &a.ops), (b.seed, &b.text, &b.ops), "case {case}");
    }
    let differ = (n..n + 20)
        .filter(|&c| mutate::mutant(&seeds, &dict, GENERATOR_SEED, c).text != mutate::mutant(&seeds, &dict, 1, c).text)
        .count();
    assert!(differ > 15, "another generator seed should give other mutants");
}

// ---------------------------------------------------------------------------------------------------------
// One case (in a child process).

/// What a case did. The first four are fine; the rest are failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// The mutant does not load (an error naming the file).
    Rejected,
    /// It loads, but not with the CI-size caps (e.g. a `size` larger than the shrunk drive).
    CapRejected,
    /// It loads and fails to set up or run with an error (e.g. a trace that cannot be read).
    RunError,
    /// It ran and its results pass the checks.
    Ran,
    Panic,
    ResultInvariant,
    ModelInvariant,
    ErrorMessage,
    Memory,
    Timeout,
    Crash,
}

impl Kind {
    const ALL: [Kind; 11] = [
        Kind::Rejected,
        Kind::CapRejected,
        Kind::RunError,
        Kind::Ran,
        Kind::Panic,
        Kind::ResultInvariant,
        Kind::ModelInvariant,
        Kind::ErrorMessage,
        Kind::Memory,
        Kind::Timeout,
        Kind::Crash,
    ];

    fn name(self) -> &'static str {
        match self {
            Kind::Rejected => "rejected",
            Kind::CapRejected => "cap-rejected",
            Kind::RunError => "run-error",
            Kind::Ran => "ran",
            Kind::Panic => "panic",
            Kind::ResultInvariant => "result-invariant",
            Kind::ModelInvariant => "model-invariant",
            Kind::ErrorMessage => "error-message",
            Kind::Memory => "memory",
            Kind::Timeout => "timeout",
            Kind::Crash => "crash",
        }
    }

    fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    fn is_failure(self) -> bool {
        self >= Kind::Panic
    }
}

/// A case's outcome: its kind, the key failures of one cause share, and the details.
struct Outcome {
    kind: Kind,
    group: String,
    detail: String,
}

impl Outcome {
    fn new(kind: Kind, group: impl Into<String>, detail: impl Into<String>) -> Self {
        Outcome { kind, group: group.into(), detail: detail.into() }
    }
}

/// The overrides that cap a loaded scenario at CI size.
fn caps(s: &Scenario) -> Vec<String> {
    // Fairness is switched on after the first run (see `evaluate`).
    let mut o = vec!["metrics.fairness=false".to_string()];
    if s.run.duration.0 > RUN_CAP_NS {
        o.push(format!("run.duration=\"{RUN_CAP}\""));
        if s.run.warmup.0 >= RUN_CAP_NS / 2 {
            o.push(format!("run.warmup=\"{}ns\"", RUN_CAP_NS / 4));
        }
        for (i, flow) in s.flows.iter().enumerate() {
            if flow.startdelay.is_some_and(|d| d.0 >= RUN_CAP_NS / 2) {
                o.push(format!("flow.{i}.startdelay=\"{}ns\"", RUN_CAP_NS / 2));
            }
        }
    }
    let f = &s.device.flash;
    let keys = ["channels", "chips_per_channel", "dies_per_chip", "planes_per_die"];
    let old = [f.channels, f.chips_per_channel, f.dies_per_chip, f.planes_per_die].map(u64::from);
    let mut planes = old;
    let mut blocks = f.blocks_per_plane as u64;
    if planes.iter().product::<u64>() * blocks > BLOCK_CAP {
        blocks = blocks.min((BLOCK_CAP / planes.iter().product::<u64>()).max(256));
        while planes.iter().product::<u64>() * blocks > BLOCK_CAP {
            let widest = (0..4).max_by_key(|&k| planes[k]).expect("four counts");
            if planes[widest] == 1 {
                break;
            }
            planes[widest] = planes[widest].div_ceil(2);
        }
        for ((key, new), old) in keys.iter().zip(planes).zip(old) {
            if new != old {
                o.push(format!("device.flash.{key}={new}"));
            }
        }
        o.push(format!("device.flash.blocks_per_plane={blocks}"));
    }
    // Preconditioning to steady state costs time in proportion to the pages per block.
    let pages_per_block = (f.pages_per_block as u64).min(PAGES_PER_BLOCK_CAP);
    if pages_per_block != f.pages_per_block as u64 {
        o.push(format!("device.flash.pages_per_block={pages_per_block}"));
    }
    let pages = planes.iter().product::<u64>() * blocks * pages_per_block;
    o.push(format!("run.check_invariants={}", pages <= INVARIANT_PAGE_CAP));
    o
}

/// Load, cap and run one mutant.
fn evaluate(text: &str, base_dir: &Path, case: u64) -> Outcome {
    let name = format!("fuzz-case-{case}.toml");
    let scenario = match Scenario::from_toml_str(text, &name, base_dir, &[]) {
        Ok(s) => s,
        Err(e) => {
            let message = e.to_string();
            if !message.starts_with(&format!("{name}: ")) {
                return Outcome::new(Kind::ErrorMessage, "load error does not name the file", message);
            }
            return Outcome::new(Kind::Rejected, "", message);
        }
    };
    *HINT.lock().unwrap_or_else(|e| e.into_inner()) = memory_hint(&scenario);
    let overrides = caps(&scenario);
    let scenario = match Scenario::from_toml_str(text, &name, base_dir, &overrides) {
        Ok(s) => s,
        Err(e) => return Outcome::new(Kind::CapRejected, "", format!("{e} (caps: {overrides:?})")),
    };
    // First the scenario alone, with the heap measured between setup and run; then, for a quarter of the
    // cases, with fairness (every flow alone as well).
    let outcome = run_measured(&scenario);
    if outcome.kind != Kind::Ran || !fairness_case(&scenario, case) {
        return outcome;
    }
    let mut with_fairness = scenario;
    with_fairness.metrics.fairness = true;
    judge(&with_fairness, ullsim::run_scenario(&with_fairness))
}

/// Whether a case also runs with `[metrics] fairness`: one in four, with at most four flows.
fn fairness_case(s: &Scenario, case: u64) -> bool {
    case % 4 == 1 && s.flows.len() <= 4
}

/// What `run_scenario` does without fairness (`Simulation::new`, then `run`), with the heap the run adds
/// after setup bounded.
fn run_measured(scenario: &Scenario) -> Outcome {
    let simulation = match Simulation::new(scenario) {
        Ok(s) => s,
        Err(e) => return judge(scenario, Err(e)),
    };
    let after_setup = live();
    // Requests in flight take heap; the closed loops bound how many there can be.
    let in_flight = closed_loop_in_flight(scenario) as usize;
    let limit = GROWTH_LIMIT.load(Ordering::Relaxed).saturating_add(in_flight.saturating_mul(REQUEST_BYTES));
    reset_peak();
    BUDGET.store(after_setup.saturating_add(limit), Ordering::SeqCst);
    let run = simulation.run(&mut |_, _| {});
    BUDGET.store(usize::MAX, Ordering::SeqCst);
    let grown = peak().saturating_sub(after_setup);
    GROWTH.store(grown, Ordering::SeqCst);
    if grown > limit {
        let hint = HINT.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let detail = format!("the run added {} MiB to the heap; {hint}", grown / MIB);
        return Outcome::new(Kind::Memory, with_hint(GROWS), detail);
    }
    judge(scenario, run)
}

/// The outcome of a run: an error (fine unless a model invariant broke) or results to check.
fn judge(scenario: &Scenario, run: Result<RunResults, SimError>) -> Outcome {
    match run {
        Err(SimError::Invariant(m)) => {
            let group = m.split(':').next().unwrap_or("").to_string();
            Outcome::new(Kind::ModelInvariant, group, m)
        }
        Err(e) => Outcome::new(Kind::RunError, "", e.to_string()),
        Ok(results) => match check_results(scenario, &results) {
            Ok(()) => Outcome::new(Kind::Ran, "", format!("{} events", results.events)),
            Err((group, detail)) => Outcome::new(Kind::ResultInvariant, group, detail),
        },
    }
}

/// The first non-finite float in `debug` (a `{:?}` rendering), with what precedes it; string literals are
/// skipped, so a flow named "NaN" is no finding.
fn non_finite(debug: &str) -> Option<String> {
    let bytes = debug.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'N' | b'i' if !bytes[i.saturating_sub(1)].is_ascii_alphanumeric() || i == 0 => {
                let rest = &debug[i..];
                let word_end = rest.find(|c: char| !c.is_ascii_alphanumeric() && c != '_').unwrap_or(rest.len());
                let word = &rest[..word_end];
                if word == "NaN" || word == "inf" {
                    let mut from = i.saturating_sub(100);
                    while !debug.is_char_boundary(from) {
                        from -= 1;
                    }
                    return Some(format!("...{}{word}", &debug[from..i]));
                }
                i += word_end.max(1);
            }
            _ => i += 1,
        }
    }
    None
}

/// What must hold of any results, whatever the scenario. `Err((group, detail))`.
fn check_results(s: &Scenario, r: &RunResults) -> Result<(), (String, String)> {
    let fail = |group: &str, detail: String| Err((group.to_string(), detail));
    if let Err(e) = serde_json::to_string(r) {
        return fail("results do not serialize to JSON", e.to_string());
    }
    if let Some(context) = non_finite(&format!("{r:?}")) {
        return fail("NaN or infinity in the results", context);
    }
    if r.window.end_ns > s.run.duration.0 || r.window.start_ns > r.window.end_ns {
        return fail(
            "measurement window outside the run",
            format!("window {:?} for duration {} ns", r.window, s.run.duration.0),
        );
    }
    let completed: u64 = r.flows.iter().map(|f| f.completed).sum();
    if completed > r.requests_completed {
        return fail(
            "flows completed more than the run",
            format!("flows {completed} > requests_completed {}", r.requests_completed),
        );
    }
    let near = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(b.abs()) + 1e-6;
    let unit = |x: f64| (-1e-9..=1.0 + 1e-9).contains(&x);
    for (f, spec) in r.flows.iter().zip(&s.flows) {
        let who = format!("flow {:?}", f.name);
        let rw = f.read.as_ref().map_or(0, |o| o.completed) + f.write.as_ref().map_or(0, |o| o.completed);
        if rw != f.completed {
            return fail("reads + writes != completed", format!("{who}: {rw} != {}", f.completed));
        }
        if let Some(n) = spec.number_ios {
            if f.completed > n {
                return fail("more completed than number_ios", format!("{who}: {} > {n}", f.completed));
            }
        }
        for (what, l) in [("all", Some(&f.latency_ns)), ("read", f.read.as_ref().map(|o| &o.latency_ns))]
            .into_iter()
            .chain([("write", f.write.as_ref().map(|o| &o.latency_ns))])
        {
            let Some(l) = l else { continue };
            let order = [l.min, l.p50, l.p90, l.p99, l.p99_9, l.p99_99, l.p99_999, l.max];
            if order.windows(2).any(|w| w[0] > w[1]) {
                return fail("latency percentiles out of order", format!("{who} {what}: {l:?}"));
            }
            if f.completed > 0 && !(l.min as f64 <= l.mean * (1.0 + 1e-9) && l.mean <= l.max as f64 * (1.0 + 1e-9)) {
                return fail("latency mean outside [min, max]", format!("{who} {what}: {l:?}"));
            }
        }
        if f.completed == 0 && (f.latency_ns.max != 0 || f.latency_ns.mean != 0.0) {
            return fail("latency without completions", format!("{who}: {:?}", f.latency_ns));
        }
        let b = &f.breakdown_ns;
        let sum = b.sum_of_means();
        if f.completed > 0 && !near(sum, f.latency_ns.mean) {
            return fail(
                "breakdown does not add up to the mean latency",
                format!("{who}: sum {sum} != mean {}: {b:?}", f.latency_ns.mean),
            );
        }
        if f.iops < 0.0 || f.bandwidth_bytes_per_s < 0.0 || f.mean_in_flight < 0.0 || f.cpu_cores < 0.0 {
            return fail("negative rate", format!("{who}: {f:?}"));
        }
        if f.slowdown.is_some_and(|x| x <= 0.0) {
            return fail("slowdown <= 0", format!("{who}: {:?}", f.slowdown));
        }
    }
    let d = &r.device;
    for (what, x) in [
        ("die_utilization.mean", d.die_utilization.mean),
        ("die_utilization.max", d.die_utilization.max),
        ("channel_utilization.mean", d.channel_utilization.mean),
        ("channel_utilization.max", d.channel_utilization.max),
        ("all_chips_busy", d.all_chips_busy),
        ("busy", d.busy),
        ("cache_hit_rate", d.cache_hit_rate.unwrap_or(0.0)),
        ("cmt_hit_rate", d.cmt_hit_rate.unwrap_or(0.0)),
    ] {
        if !unit(x) {
            return fail("device fraction outside [0, 1]", format!("{what} = {x}"));
        }
    }
    if d.die_utilization.mean > d.die_utilization.max + 1e-9 {
        return fail("die utilization mean > max", format!("{:?}", d.die_utilization));
    }
    if d.write_amplification.is_some_and(|w| w < 1.0 - 1e-9) {
        return fail("write amplification < 1", format!("{:?}", d.write_amplification));
    }
    for (i, c) in r.host.cores.iter().enumerate() {
        // Not "adds up to exactly 1": an interrupt handler is booked whole when it starts, so one that runs
        // past the end of the run makes busy exceed 1 by its length (idle is clamped at 0 then).
        if ![c.user, c.kernel, c.poll, c.idle].into_iter().all(unit) || c.user + c.kernel + c.poll + c.idle < 1.0 - 1e-6
        {
            return fail("core time fractions outside [0, 1] or adding up to less than 1", format!("core {i}: {c:?}"));
        }
    }
    if let Some(fair) = &r.fairness {
        if !(fair.fairness > 0.0 && fair.fairness <= 1.0 + 1e-9 && fair.max_slowdown > 0.0) {
            return fail("fairness outside (0, 1]", format!("{fair:?}"));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------------------
// The child: runs cases FROM..TO, one line per event on stdout.

/// The first panic of the running case (the hook keeps it; `catch_unwind` only sees the payload).
static PANIC: Mutex<Option<(String, String)>> = Mutex::new(None);
/// Panics seen per location (backtraces are taken for the first few only: symbolizing is slow).
static PANIC_COUNTS: Mutex<BTreeMap<String, u32>> = Mutex::new(BTreeMap::new());

const NO_CASE: u64 = u64::MAX;

fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(non-string payload)".into());
        let location = info.location().map_or("(unknown)".into(), |l| format!("{}:{}", l.file(), l.line()));
        let first = {
            let mut counts = PANIC_COUNTS.lock().unwrap_or_else(|e| e.into_inner());
            let n = counts.entry(location.clone()).or_insert(0);
            *n += 1;
            *n <= 2
        };
        let frames = if first { library_frames() } else { String::new() };
        let mut slot = PANIC.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some((location.clone(), format!("panicked at {location}: {message}{frames}")));
        }
    }));
}

/// The frames of the current backtrace inside the ullsim library, innermost first.
fn library_frames() -> String {
    let trace = std::backtrace::Backtrace::force_capture().to_string();
    let lines: Vec<&str> = trace.lines().collect();
    let mut out = String::new();
    let mut shown = 0;
    for (i, line) in lines.iter().enumerate() {
        let is_frame = line.trim_start().split_once(": ").is_some_and(|(n, _)| n.chars().all(|c| c.is_ascii_digit()));
        if is_frame && line.contains("ullsim::") && !line.contains("fuzz_scenarios::") {
            out.push_str("\n    ");
            out.push_str(line.trim());
            if let Some(at) = lines.get(i + 1).filter(|l| l.trim_start().starts_with("at ")) {
                out.push_str("  ");
                out.push_str(at.trim());
            }
            shown += 1;
            if shown == 6 {
                break;
            }
        }
    }
    out
}

fn emit(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{TAG}\t{line}");
    let _ = out.flush();
}

/// Resident set and its peak, in KiB (`None` off Linux).
fn resident_kib() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        line[name.len()..].trim().trim_end_matches("kB").trim().parse().ok()
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

fn worker(range: &str) {
    let (from, to) = range.split_once(':').expect("FROM:TO");
    let (from, to): (u64, u64) = (from.parse().expect("FROM"), to.parse().expect("TO"));
    let generator_seed = env_u64("ULLSIM_FUZZ_SEED").unwrap_or(GENERATOR_SEED);
    let rss_limit_kib = env_u64("ULLSIM_FUZZ_MEM_MIB").unwrap_or(MEMORY_LIMIT_MIB) * 1024;
    GROWTH_LIMIT.store(RUN_GROWTH_LIMIT_MIB as usize * MIB, Ordering::SeqCst);
    let seeds = mutate::seeds();
    let dict = mutate::Dictionary::new();
    install_panic_hook();

    // The watchdog: ends the process when the running case takes too much memory or time.
    let running = Arc::new(AtomicU64::new(NO_CASE));
    let started = Instant::now();
    let case_start_ms = Arc::new(AtomicU64::new(0));
    {
        let (running, case_start_ms) = (running.clone(), case_start_ms.clone());
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(10));
            let case = running.load(Ordering::SeqCst);
            if case == NO_CASE {
                continue;
            }
            let (heap, budget) = (live(), BUDGET.load(Ordering::SeqCst));
            let rss = resident_kib().map_or(0, |(rss, _)| rss);
            let detail = if heap > budget {
                Some((GROWS, format!("the run's heap passed its bound by {} MiB", (heap - budget) / MIB)))
            } else if rss > rss_limit_kib {
                Some((OVER, format!("resident set {} MiB", rss / 1024)))
            } else {
                None
            };
            if let Some((group, detail)) = detail {
                if running.load(Ordering::SeqCst) == case {
                    let json = |s: &str| serde_json::to_string(s).expect("a string serializes");
                    let hint = HINT.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    let (group, detail) = (with_hint(group), format!("{detail}; {hint}"));
                    emit(&format!("memory\t{case}\t{}\t{}", json(&group), json(&detail)));
                    std::process::exit(3);
                }
            }
            let elapsed = (started.elapsed().as_millis() as u64).saturating_sub(case_start_ms.load(Ordering::SeqCst));
            if elapsed > CASE_TIME_LIMIT_SECS * 1000 {
                emit(&format!("timeout\t{case}\t{elapsed}"));
                std::process::exit(4);
            }
        });
    }

    for case in from..to {
        let mutant = mutate::mutant(&seeds, &dict, generator_seed, case);
        let base_dir = &seeds[mutant.seed].base_dir;
        *PANIC.lock().unwrap_or_else(|e| e.into_inner()) = None;
        HINT.lock().unwrap_or_else(|e| e.into_inner()).clear();
        emit(&format!("start\t{case}"));
        let _ = std::fs::write("/proc/self/clear_refs", "5"); // resets VmHWM to VmRSS
        GROWTH.store(0, Ordering::SeqCst);
        case_start_ms.store(started.elapsed().as_millis() as u64, Ordering::SeqCst);
        running.store(case, Ordering::SeqCst);
        let t0 = Instant::now();
        let mut outcome =
            catch_unwind(AssertUnwindSafe(|| evaluate(&mutant.text, base_dir, case))).unwrap_or_else(|_| {
                let (location, detail) = PANIC
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take()
                    .unwrap_or_else(|| ("(no hook)".into(), "panicked".into()));
                Outcome::new(Kind::Panic, location, detail)
            });
        running.store(NO_CASE, Ordering::SeqCst);
        BUDGET.store(usize::MAX, Ordering::SeqCst);
        let millis = t0.elapsed().as_millis();
        let peak_rss = resident_kib().map_or(0, |(_, hwm)| hwm);
        if peak_rss > rss_limit_kib && !outcome.kind.is_failure() {
            let hint = HINT.lock().unwrap_or_else(|e| e.into_inner()).clone();
            let detail = format!("resident set peaked at {} MiB; {hint}", peak_rss / 1024);
            outcome = Outcome::new(Kind::Memory, with_hint(OVER), detail);
        }
        emit(&format!(
            "done\t{case}\t{}\t{peak_rss}\t{}\t{millis}\t{}\t{}",
            outcome.kind.name(),
            GROWTH.load(Ordering::SeqCst) / 1024,
            serde_json::to_string(&outcome.group).expect("a string serializes"),
            serde_json::to_string(&outcome.detail).expect("a string serializes"),
        ));
        // The allocator keeps freed memory: after a big case, a fresh child starts the next one, so that
        // no case inherits another's resident set.
        if case + 1 < to && resident_kib().is_some_and(|(rss, _)| rss > FRESH_CHILD_ABOVE_MIB * 1024) {
            emit(&format!("restart\t{}", case + 1));
            return;
        }
    }
    emit("end");
}

// ---------------------------------------------------------------------------------------------------------
// The parent: hands out chunks of cases to child processes and collects what they report.

struct Record {
    case: u64,
    kind: Kind,
    group: String,
    detail: String,
    /// Peak resident set of the child during the case.
    peak_rss_kib: u64,
    /// What the run added to the heap after setup.
    growth_kib: u64,
    millis: u64,
}

/// Run cases `from..to` in children (a new child after each one that dies) and return one record per case.
fn run_chunk(from: u64, to: u64) -> Vec<Record> {
    let exe = std::env::current_exe().expect("the test binary");
    let mut records = Vec::new();
    let mut next = from;
    while next < to {
        let mut child = Command::new(&exe)
            .args([TEST_NAME, "--exact", "--nocapture", "--test-threads", "1"])
            .env(WORKER_ENV, format!("{next}:{to}"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the fuzz worker");
        let mut stderr = child.stderr.take().expect("piped");
        let stderr_reader = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        let mut current: Option<(u64, Instant)> = None;
        let mut ended = false;
        // The case the watchdog ended the child for (the main thread may still have finished it).
        let mut killed: Option<u64> = None;
        // The case the child asked a fresh child to go on from.
        let mut restart: Option<u64> = None;
        for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
            let Ok(line) = line else { break };
            let Some(rest) = line.strip_prefix(TAG).and_then(|r| r.strip_prefix('\t')) else { continue };
            let fields: Vec<&str> = rest.splitn(8, '\t').collect();
            match fields[0] {
                "start" => current = Some((fields[1].parse().expect("case"), Instant::now())),
                "done" if killed.is_some() => {}
                "done" => {
                    let json = |s: &str| serde_json::from_str::<String>(s).expect("a JSON string");
                    records.push(Record {
                        case: fields[1].parse().expect("case"),
                        kind: Kind::parse(fields[2]).expect("a kind"),
                        peak_rss_kib: fields[3].parse().expect("peak"),
                        growth_kib: fields[4].parse().expect("growth"),
                        millis: fields[5].parse().expect("millis"),
                        group: json(fields[6]),
                        detail: json(fields[7]),
                    });
                    current = None;
                }
                "memory" => {
                    let json = |s: &str| serde_json::from_str::<String>(s).expect("a JSON string");
                    let millis = current.map_or(0, |(_, t)| t.elapsed().as_millis() as u64);
                    let case = fields[1].parse().expect("case");
                    records.retain(|r: &Record| r.case != case);
                    records.push(Record {
                        case,
                        kind: Kind::Memory,
                        group: json(fields[2]),
                        detail: json(fields[3]),
                        peak_rss_kib: 0,
                        growth_kib: 0,
                        millis,
                    });
                    killed = Some(case);
                }
                "timeout" => {
                    let millis: u64 = fields[2].parse().expect("millis");
                    let case = fields[1].parse().expect("case");
                    records.retain(|r: &Record| r.case != case);
                    records.push(Record {
                        case,
                        kind: Kind::Timeout,
                        group: "case over the time limit".into(),
                        detail: format!("still running after {millis} ms"),
                        peak_rss_kib: 0,
                        growth_kib: 0,
                        millis,
                    });
                    killed = Some(case);
                }
                "end" => ended = true,
                "restart" => restart = Some(fields[1].parse().expect("case")),
                _ => {}
            }
        }
        let status = child.wait().expect("wait for the fuzz worker");
        let stderr = stderr_reader.join().unwrap_or_default();
        if ended && status.success() {
            break;
        }
        if let (Some(case), true) = (restart, status.success()) {
            next = case;
            continue;
        }
        if let Some(case) = killed {
            next = case + 1;
            continue;
        }
        let Some((case, t0)) = current else {
            panic!("the fuzz worker for cases {next}..{to} failed outside any case ({status}):\n{stderr}");
        };
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = lines[lines.len().saturating_sub(5)..].join("\n");
        let first = tail.lines().find(|l| !l.starts_with("running") && !l.starts_with("test ")).unwrap_or("");
        let group = format!("child died ({status}): {}", first.chars().take(120).collect::<String>());
        let millis = t0.elapsed().as_millis() as u64;
        records.push(Record { case, kind: Kind::Crash, group, detail: tail, peak_rss_kib: 0, growth_kib: 0, millis });
        next = case + 1;
    }
    records
}

fn parent() {
    let generator_seed = env_u64("ULLSIM_FUZZ_SEED").unwrap_or(GENERATOR_SEED);
    let single = env_u64("ULLSIM_FUZZ_CASE");
    let (from, to) = match single {
        Some(case) => (case, case + 1),
        None => (0, env_u64("ULLSIM_FUZZ_CASES").unwrap_or(CI_CASES)),
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    let jobs = env_u64("ULLSIM_FUZZ_JOBS").unwrap_or(cores.min(2)).max(1);
    let seeds = mutate::seeds();
    let dict = mutate::Dictionary::new();
    let t0 = Instant::now();

    let chunks: Vec<(u64, u64)> = (from..to).step_by(CHUNK as usize).map(|s| (s, (s + CHUNK).min(to))).collect();
    let queue = Mutex::new(chunks.into_iter());
    let records: Mutex<Vec<Record>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let next = queue.lock().expect("queue").next();
                let Some((a, b)) = next else { break };
                let done = run_chunk(a, b);
                records.lock().expect("records").extend(done);
            });
        }
    });
    let mut records = records.into_inner().expect("records");
    records.sort_by_key(|r| r.case);
    let elapsed = t0.elapsed();

    // Summary.
    let mut counts: BTreeMap<Kind, u64> = BTreeMap::new();
    for r in &records {
        *counts.entry(r.kind).or_default() += 1;
    }
    let counts_text: Vec<String> = counts.iter().map(|(k, n)| format!("{} {n}", k.name())).collect();
    println!(
        "fuzz_scenarios: generator seed {generator_seed}, cases {from}..{to}, {} seeds, {jobs} jobs, {:.1} s: {}",
        seeds.len(),
        elapsed.as_secs_f64(),
        counts_text.join(", ")
    );
    let mut slowest: Vec<&Record> = records.iter().collect();
    slowest.sort_by_key(|r| std::cmp::Reverse(r.millis));
    for r in slowest.iter().take(3) {
        println!("  slow: case {} {} ms ({})", r.case, r.millis, r.kind.name());
    }
    let mut biggest: Vec<&Record> = records.iter().filter(|r| !r.kind.is_failure()).collect();
    biggest.sort_by_key(|r| std::cmp::Reverse(r.peak_rss_kib));
    for r in biggest.iter().take(3) {
        println!("  peak resident set: case {} {} MiB ({})", r.case, r.peak_rss_kib / 1024, r.kind.name());
    }
    biggest.sort_by_key(|r| std::cmp::Reverse(r.growth_kib));
    for r in biggest.iter().take(3) {
        println!("  heap growth during the run: case {} {} KiB ({})", r.case, r.growth_kib, r.kind.name());
    }
    if std::env::var_os("ULLSIM_FUZZ_VERBOSE").is_some() {
        // What the errors were about, for tuning the generator: the most common messages (digits elided).
        let mut reasons: BTreeMap<(Kind, String), u64> = BTreeMap::new();
        for r in records.iter().filter(|r| !r.kind.is_failure() && r.kind != Kind::Ran) {
            let message = r.detail.split_once(": ").map_or(r.detail.as_str(), |(_, m)| m);
            let last = message.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
            let first = message.lines().next().unwrap_or("");
            let text = if first.starts_with("invalid TOML") { last } else { first };
            let reason: String = text.chars().filter(|c| !c.is_ascii_digit()).take(70).collect();
            *reasons.entry((r.kind, reason)).or_default() += 1;
        }
        let mut reasons: Vec<_> = reasons.into_iter().collect();
        reasons.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
        for ((kind, reason), n) in reasons.iter().take(50) {
            println!("  {n:5} {} {reason}", kind.name());
        }
    }
    if single.is_some() {
        for r in &records {
            let m = mutate::mutant(&seeds, &dict, generator_seed, r.case);
            println!(
                "case {} from {} ({}):\n{}\n----\n{}: {} {}",
                r.case,
                seeds[m.seed].name,
                m.ops.join("; "),
                m.text,
                r.kind.name(),
                r.group,
                r.detail
            );
        }
    }
    assert_eq!(records.len() as u64, to - from, "every case reports once");

    // Failures, grouped by cause, each with its smallest mutant.
    let mut groups: BTreeMap<(Kind, String), Vec<&Record>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.kind.is_failure()) {
        groups.entry((r.kind, r.group.clone())).or_default().push(r);
    }
    if groups.is_empty() {
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz_scenarios");
    let _ = std::fs::create_dir_all(&dir);
    let mut report = format!(
        "{} of {} mutated scenarios failed, in {} groups (generator seed {generator_seed}; rerun one case with \
         ULLSIM_FUZZ_SEED={generator_seed} ULLSIM_FUZZ_CASE=N; mutants written to {}):\n",
        groups.values().map(Vec::len).sum::<usize>(),
        to - from,
        groups.len(),
        dir.display()
    );
    for ((kind, group), members) in &groups {
        let mutants: Vec<(&Record, mutate::Mutant)> =
            members.iter().map(|r| (*r, mutate::mutant(&seeds, &dict, generator_seed, r.case))).collect();
        for (r, m) in &mutants {
            let header = format!(
                "# fuzz case {} of generator seed {generator_seed}: {} {}\n# seed {} (base dir {}); mutations: {}\n",
                r.case,
                kind.name(),
                group,
                seeds[m.seed].name,
                seeds[m.seed].base_dir.display(),
                m.ops.join("; ")
            );
            let _ = std::fs::write(dir.join(format!("case-{}.toml", r.case)), format!("{header}{}", m.text));
        }
        let (r, m) = mutants.iter().min_by_key(|(r, m)| (m.text.len(), r.case)).expect("a group has members");
        let cases: Vec<String> = members.iter().take(12).map(|r| r.case.to_string()).collect();
        let text = if m.text.len() > 3000 {
            format!("{}\n... ({} bytes in all)", &m.text[..m.text.floor_char_boundary_compat(3000)], m.text.len())
        } else {
            m.text.clone()
        };
        report.push_str(&format!(
            "\n=== {} [{}]: {} cases ({}{})\n  smallest: case {} from {}, mutations: {}\n  {}\n--- mutant ---\n{}\n--------------\n",
            kind.name(),
            group,
            members.len(),
            cases.join(", "),
            if members.len() > 12 { ", ..." } else { "" },
            r.case,
            seeds[m.seed].name,
            m.ops.join("; "),
            r.detail.replace('\n', "\n  "),
            text
        ));
    }
    panic!("{report}");
}

/// `str::floor_char_boundary` is unstable: the largest char boundary at or below `at`.
trait FloorCharBoundary {
    fn floor_char_boundary_compat(&self, at: usize) -> usize;
}

impl FloorCharBoundary for String {
    fn floor_char_boundary_compat(&self, at: usize) -> usize {
        let mut at = at.min(self.len());
        while !self.is_char_boundary(at) {
            at -= 1;
        }
        at
    }
}
