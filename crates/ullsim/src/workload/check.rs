//! Checks of a flow's keys against each other, the device and the host, done when a scenario loads, so that
//! a scenario that loads is one that can run. Errors are `(key, what was expected)`.

mod files;

use super::onoff::gap_ns;
use super::{app, synthetic::block_sizes, DEFAULT_BURST_ON_NS};

/// Sector size: offsets and sizes are multiples of it.
pub(super) const SECTOR: u64 = 512;
use crate::config::scenario::{parse_cpu_list, FlowSpec, IoEngine, RateProcess, RwMode};
pub(crate) use crate::config::scenario::{MAX_IODEPTH, MAX_NRFILES, MAX_NUMJOBS};
use crate::config::units::{describe_ns, SizeOrPercent};
use crate::engine::Time;

/// Highest open-loop rate accepted: one arrival per ns, the simulator's time resolution.
pub const MAX_RATE_IOPS: f64 = 1e9;

/// A flow may not name DedCore's polling core (`core`) in its `cpus_allowed`: no task runs there.
pub fn check_dedicated_core(spec: &FlowSpec, core: Option<u32>) -> Result<(), (String, String)> {
    let (Some(list), Some(core)) = (&spec.cpus_allowed, core) else { return Ok(()) };
    if parse_cpu_list(list, core + 1).is_ok_and(|cores| !cores.contains(&core)) {
        return Ok(());
    }
    let what = format!(
        "expected cores 0 to {}: host.completion = \"dedcore\" dedicates core {core}, the last, to polling",
        core.saturating_sub(1)
    );
    Err(("cpus_allowed".into(), what))
}

/// Check a flow spec against the `capacity` (bytes) of what it targets (a drive, each drive of its list, or the
/// md volume) and the host's `cores`; errors are `(key, what was expected)`.
pub fn check_flow_spec(spec: &FlowSpec, capacity: u64, cores: u32) -> Result<(), (String, String)> {
    let err = |key: &str, what: &str| Err((key.to_string(), what.to_string()));
    if spec.runtime.is_some_and(|r| r.0 == 0) {
        // fio reads 0 as "no limit", a reader of the file may read "never": an error surprises neither.
        return err(
            "runtime",
            "expected a duration > 0 (fio's 0 means no limit: here, omit runtime to run the flow until run.duration)",
        );
    }
    if spec.numjobs.is_some_and(|n| n == 0 || n > MAX_NUMJOBS) {
        return err("numjobs", &format!("expected a whole number from 1 to {MAX_NUMJOBS}"));
    }
    if let Some(list) = &spec.cpus_allowed {
        parse_cpu_list(list, cores).map_err(|m| ("cpus_allowed".to_string(), m))?;
    }
    let engine = spec.ioengine.unwrap_or_default();
    if engine == IoEngine::Cpuio {
        for (key, set) in [
            ("app", spec.app.is_some()),
            ("rw", spec.rw.is_some()),
            ("trace", spec.trace.is_some()),
            ("bs", spec.bs.is_some()),
            ("bssplit", spec.bssplit.is_some()),
            ("iodepth", spec.iodepth.is_some()),
            ("iodepth_batch_submit", spec.iodepth_batch_submit.is_some()),
            ("rate_iops", spec.rate_iops.is_some()),
            ("number_ios", spec.number_ios.is_some()),
            ("hipri", spec.hipri.is_some()),
            ("sqthread_poll", spec.sqthread_poll.is_some()),
            ("thinktime", spec.thinktime.is_some()),
            ("thinktime_spin", spec.thinktime_spin.is_some()),
            ("response_cpu", spec.response_cpu.is_some()),
            ("percentage_random", spec.percentage_random.is_some()),
            ("rwmixread", spec.rwmixread.is_some()),
            ("rate_process", spec.rate_process.is_some()),
            ("burst_factor", spec.burst_factor.is_some()),
            ("burst_on", spec.burst_on.is_some()),
            ("burst_group", spec.burst_group.is_some()),
            ("random_distribution", spec.random_distribution.is_some()),
            ("size", spec.size.is_some()),
            ("offset", spec.offset.is_some()),
            ("format", spec.format.is_some()),
            ("time_scale", spec.time_scale.is_some()),
            ("prioclass", spec.prioclass.is_some()),
            ("latency_from", spec.latency_from.is_some()),
            ("flush_every", spec.flush_every.is_some()),
            ("fua", spec.fua.is_some()),
            ("direct", spec.direct.is_some()),
            ("nrfiles", spec.nrfiles.is_some()),
            ("filesize", spec.filesize.is_some()),
            ("fsync", spec.fsync.is_some()),
            ("fdatasync", spec.fdatasync.is_some()),
        ] {
            if set {
                return err(key, "does not apply to ioengine = \"cpuio\" (a flow that only burns CPU)");
            }
        }
        if spec.cpuload.is_some_and(|l| l == 0 || l > 100) {
            return err("cpuload", "expected a percentage of one core from 1 to 100");
        }
        if spec.cpuchunks.is_some_and(|c| c.0 < 1_000 || c.0 > 10_000_000_000) {
            return err("cpuchunks", "expected a burst length from 1 us to 10 s (bare numbers are us)");
        }
        return Ok(());
    }
    let spec = app::resolve(spec)?;
    let spec = spec.as_ref();
    if spec.cpuload.is_some() || spec.cpuchunks.is_some() {
        return err(
            if spec.cpuload.is_some() { "cpuload" } else { "cpuchunks" },
            "applies only to ioengine = \"cpuio\"",
        );
    }
    if spec.iodepth_batch_submit.is_some_and(|b| b == 0 || b > MAX_IODEPTH) {
        return err("iodepth_batch_submit", &format!("expected a whole number from 1 to {MAX_IODEPTH}"));
    }
    if engine.is_blocking() && spec.iodepth_batch_submit.is_some() {
        return err("iodepth_batch_submit", "psync and pvsync2 submit one blocking I/O per system call");
    }
    if matches!(engine, IoEngine::Psync | IoEngine::Pvsync2) && spec.iodepth.is_some_and(|d| d > 1) {
        return err(
            "iodepth",
            "psync and pvsync2 do one blocking I/O per job: use numjobs, or ioengine = \"io_uring\"",
        );
    }
    if spec.hipri == Some(true) && !matches!(engine, IoEngine::Pvsync2 | IoEngine::IoUring) {
        return err("hipri", "polled I/O needs ioengine = \"io_uring\" or \"pvsync2\"");
    }
    if spec.sqthread_poll == Some(true) && engine != IoEngine::IoUring {
        return err("sqthread_poll", "needs ioengine = \"io_uring\"");
    }
    match (&spec.rw, &spec.trace) {
        (Some(_), Some(_)) => {
            return err("trace", "a flow is either synthetic (rw = ...) or a trace (trace = ...), not both")
        }
        (None, None) => {
            return err(
                "rw",
                "missing: expected rw = \"randread\" (or read, write, randwrite, rw, randrw), app = \"flin.tpcc\" \
                 (an app model) or trace = \"path\"",
            )
        }
        _ => {}
    }
    if spec.trace.is_some() {
        if spec.format.is_none() {
            return err(
                "format",
                "missing: a trace needs format = \"disksim\" | \"msr\" | \"spc\" | \"fio-iolog\" | \"blkparse\"",
            );
        }
        for (key, set) in [
            ("rwmixread", spec.rwmixread.is_some()),
            ("bs", spec.bs.is_some()),
            ("bssplit", spec.bssplit.is_some()),
            ("rate_iops", spec.rate_iops.is_some()),
            ("random_distribution", spec.random_distribution.is_some()),
            ("percentage_random", spec.percentage_random.is_some()),
            ("size", spec.size.is_some()),
            ("offset", spec.offset.is_some()),
        ] {
            if set {
                return err(key, "does not apply to a trace flow (the trace gives directions, sizes and offsets)");
            }
        }
        if let Some(scale) = spec.time_scale {
            if !(scale > 0.0 && scale.is_finite()) {
                return err("time_scale", "expected a number > 0 (2.0 replays twice as slowly)");
            }
            if spec.iodepth.is_some() {
                return err(
                    "time_scale",
                    "does not apply with iodepth (a trace with iodepth replays as fast as the depth allows)",
                );
            }
        }
        for (key, set) in [
            ("rate_process", spec.rate_process.is_some()),
            ("burst_factor", spec.burst_factor.is_some()),
            ("burst_on", spec.burst_on.is_some()),
            ("burst_group", spec.burst_group.is_some()),
        ] {
            if set {
                return err(key, "does not apply to a trace flow (arrivals come from the trace's time stamps)");
            }
        }
        for (key, set) in [("thinktime", spec.thinktime.is_some()), ("thinktime_spin", spec.thinktime_spin.is_some())] {
            if set && spec.iodepth.is_none() {
                return err(key, "applies only to closed-loop replay (set iodepth); a timed trace has its own gaps");
            }
        }
    } else {
        if spec.format.is_some() {
            return err("format", "applies to trace flows only");
        }
        if spec.time_scale.is_some() {
            return err("time_scale", "applies to trace flows only");
        }
        if let Some(mix) = spec.rwmixread {
            if mix > 100 {
                return err("rwmixread", "expected a percentage from 0 to 100");
            }
        }
        let sizes = block_sizes(spec).map_err(|m| ("bssplit".to_string(), m))?;
        let max_bs = sizes.largest();
        for s in sizes.sizes() {
            if s == 0 || !s.is_multiple_of(SECTOR) {
                return err(
                    if spec.bssplit.is_some() { "bssplit" } else { "bs" },
                    "expected a block size that is a non-zero multiple of 512 bytes",
                );
            }
            if s > u32::MAX as u64 {
                return err("bs", "expected a block size below 4 GiB");
            }
        }
        let offset = spec.offset.map_or(0, |o| o.resolve(capacity));
        if matches!(spec.offset, Some(SizeOrPercent::Bytes(_))) && !offset.is_multiple_of(SECTOR) {
            return err("offset", "expected a multiple of 512 bytes (a percentage is rounded down to one)");
        }
        let offset = offset / SECTOR * SECTOR;
        if offset >= capacity {
            return err("offset", &format!("beyond the device's logical capacity of {capacity} bytes"));
        }
        let size = spec.size.map_or(capacity - offset, |s| s.resolve(capacity));
        if offset + size > capacity {
            return err("size", &format!("offset + size exceeds the device's logical capacity of {capacity} bytes"));
        }
        if size < max_bs {
            return err("size", "the region is smaller than the block size");
        }
        if let Some(rate) = spec.rate_iops {
            if !(rate > 0.0 && rate.is_finite()) {
                return err("rate_iops", "expected a rate > 0 I/Os per second");
            }
            if rate > MAX_RATE_IOPS {
                return err(
                    "rate_iops",
                    &format!(
                        "{rate} I/Os per second is above {MAX_RATE_IOPS:e}: arrivals would come less than 1 ns apart, \
                         the simulator's time resolution, and no device approaches such a rate (the fastest NVMe \
                         drives serve a few million IOPS){}",
                        if spec.app.is_some() { " (the app's rate over its time_scale)" } else { "" }
                    ),
                );
            }
            for (key, set) in
                [("thinktime", spec.thinktime.is_some()), ("thinktime_spin", spec.thinktime_spin.is_some())]
            {
                if set {
                    return err(key, "applies only to closed-loop flows (no rate_iops)");
                }
            }
        } else if spec.rate_process.is_some() {
            return err("rate_process", "applies only with rate_iops");
        }
        check_burst(spec)?;
        for (key, set) in [
            ("random_distribution", spec.random_distribution.is_some()),
            ("percentage_random", spec.percentage_random.is_some()),
        ] {
            if set && !spec.rw.is_some_and(RwMode::is_random) {
                return err(key, "applies only to random I/O (rw = randread, randwrite or randrw)");
            }
        }
        if spec.percentage_random.is_some_and(|p| p > 100) {
            return err("percentage_random", "expected a percentage from 0 to 100");
        }
    }
    if spec.iodepth.is_some_and(|d| d == 0 || d > MAX_IODEPTH) {
        return err("iodepth", &format!("expected a whole number from 1 to {MAX_IODEPTH}"));
    }
    let in_flight = spec.iodepth.unwrap_or(1) as u64 * spec.numjobs.unwrap_or(1) as u64;
    if in_flight > crate::request::MAX_IN_FLIGHT {
        return err(
            "iodepth",
            &format!(
                "iodepth x numjobs = {in_flight} requests in flight is above the run's bound of {} (memory); no \
                 host keeps that many I/Os outstanding to one drive",
                crate::request::MAX_IN_FLIGHT
            ),
        );
    }
    if spec.number_ios == Some(0) {
        return err("number_ios", "expected a whole number >= 1");
    }
    check_spins(spec)?;
    check_durability(spec)?;
    files::check_files(spec, capacity)
}

/// Longest `thinktime_spin` or `response_cpu`: 10 s of CPU per I/O (as `cpuchunks`).
const MAX_SPIN_NS: Time = 10_000_000_000;

/// `thinktime_spin` and `response_cpu`: bounded; the spin is part of `thinktime` when both are set (fio).
fn check_spins(spec: &FlowSpec) -> Result<(), (String, String)> {
    for (key, value) in [("thinktime_spin", spec.thinktime_spin), ("response_cpu", spec.response_cpu)] {
        if value.is_some_and(|v| v.0 > MAX_SPIN_NS) {
            return Err((key.into(), "expected a CPU time per I/O from 0 to 10 s (bare numbers are us)".into()));
        }
    }
    if let (Some(spin), Some(think)) = (spec.thinktime_spin, spec.thinktime) {
        if spin.0 > think.0 {
            return Err((
                "thinktime_spin".into(),
                format!(
                    "is part of thinktime, as in fio (spin, then sleep the rest): expected at most thinktime = {}",
                    describe_ns(think.0)
                ),
            ));
        }
    }
    Ok(())
}

/// `flush_every` and `fua` need a flow that writes; `flush_every` also a closed loop, whose jobs wait for
/// their writes before they flush (fsync and fdatasync, blocking calls, follow the write in an open loop).
fn check_durability(spec: &FlowSpec) -> Result<(), (String, String)> {
    let err = |key: &str, what: &str| Err((key.to_string(), what.to_string()));
    let reads_only = match spec.rw {
        Some(RwMode::Read | RwMode::Randread) => true,
        Some(RwMode::Rw | RwMode::Randrw) => spec.rwmixread == Some(100),
        Some(RwMode::Write | RwMode::Randwrite) | None => false,
    };
    let syncs = [("flush_every", spec.flush_every), ("fsync", spec.fsync), ("fdatasync", spec.fdatasync)];
    for (key, set) in syncs.iter().map(|&(k, v)| (k, v.is_some())).chain([("fua", spec.fua.is_some())]) {
        if set && reads_only {
            return err(
                key,
                "applies only to a flow that writes (rw = write, randwrite, rw or randrw below 100% reads)",
            );
        }
    }
    let given: Vec<&str> = syncs.iter().filter(|s| s.1.is_some()).map(|s| s.0).collect();
    if given.len() > 1 {
        return err(given[1], &format!("give one of flush_every, fsync and fdatasync, not also {}", given[0]));
    }
    let Some(&(key, Some(every))) = syncs.iter().find(|s| s.1.is_some()) else { return Ok(()) };
    if every == 0 {
        return err(key, "expected a whole number of writes >= 1 (omit it for no flushes)");
    }
    let open_loop = spec.rate_iops.is_some() || spec.app.is_some() || (spec.trace.is_some() && spec.iodepth.is_none());
    if open_loop && key == "flush_every" {
        return err(
            key,
            "applies only to closed-loop flows (iodepth, no rate_iops, no timed trace): a job flushes once its \
             writes have completed (an open loop can send fsync calls with its writes: fsync = N)",
        );
    }
    Ok(())
}

/// When a flow may issue: from its `startdelay` until `startdelay + runtime` or `run_end`, whichever comes first.
pub fn active_window(spec: &FlowSpec, run_end: Time) -> (Time, Time) {
    let start_ns = spec.startdelay.map_or(0, |d| d.0);
    let stop_ns = spec.runtime.map_or(run_end, |r| start_ns.saturating_add(r.0).min(run_end));
    (start_ns, stop_ns)
}

/// Check that a checked open-loop flow's `rate_iops` lets it issue before it stops (the run ends at
/// `run_end`). Linear arrivals are deterministic: the first comes one gap after the start (as
/// `schedule_arrival` places it), and at or past the stop the flow never issues. Random arrivals may come
/// early, so only fewer than one expected arrival is an error. App models are not checked: their rates are the
/// model's, and a sparse tenant that issues nothing in a short run is what the model says.
pub fn check_arrivals(spec: &FlowSpec, run_end: Time) -> Result<(), (String, String)> {
    let (Some(rate), None) = (spec.rate_iops, &spec.app) else { return Ok(()) };
    let (start_ns, stop_ns) = active_window(spec, run_end);
    let active_ns = stop_ns.saturating_sub(start_ns);
    let stopped_by = if stop_ns < run_end { "its runtime ends" } else { "run.duration ends" };
    let from = if start_ns > 0 { format!("from startdelay {} ", describe_ns(start_ns)) } else { String::new() };
    let window = format!(
        "the flow is active for only {} ({from}until {stopped_by} at {})",
        describe_ns(active_ns),
        describe_ns(stop_ns)
    );
    let remedy = "raise rate_iops, or let the flow run longer";
    match spec.rate_process.unwrap_or_default() {
        RateProcess::Linear => {
            let first_ns = gap_ns(1e9 / rate);
            if first_ns >= active_ns {
                return Err((
                    "rate_iops".into(),
                    format!(
                        "at {rate} I/Os per second the first arrival comes {} after the flow starts, but {window}: \
                         it would issue no I/O; {remedy}",
                        describe_ns(first_ns)
                    ),
                ));
            }
        }
        RateProcess::Poisson | RateProcess::Onoff => {
            let expected = rate * active_ns as f64 / 1e9;
            if expected < 1.0 {
                return Err((
                    "rate_iops".into(),
                    format!(
                        "at {rate} I/Os per second the flow expects {expected:.3} arrivals in all, fewer than one: \
                         {window}, so it would most likely issue no I/O; {remedy}"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// How long the ON and OFF periods of an on/off flow are: what the flows of a `burst_group` must agree on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BurstShape {
    pub factor: f64,
    pub on_ns: Time,
}

/// The `burst_group` of a checked flow spec (its app model resolved) and its burst shape; `None` when the
/// flow is in no group.
pub fn burst_shape(spec: &FlowSpec) -> Option<(String, BurstShape)> {
    let resolved = app::resolve(spec).ok()?;
    let spec = resolved.as_ref();
    let group = spec.burst_group.clone()?;
    let on_ns = spec.burst_on.map_or(DEFAULT_BURST_ON_NS, |d| d.0);
    Some((group, BurstShape { factor: spec.burst_factor?, on_ns }))
}

/// The flows of a `burst_group` share their ON and OFF periods, so they must agree on how long those are: the
/// index of the first flow that does not, its key and what was expected.
pub fn check_burst_groups(flows: &[FlowSpec]) -> Result<(), (usize, String, String)> {
    let mut first_of_group: std::collections::BTreeMap<String, (usize, BurstShape)> = Default::default();
    for (i, flow) in flows.iter().enumerate() {
        let Some((group, shape)) = burst_shape(flow) else { continue };
        let (j, first) = *first_of_group.entry(group.clone()).or_insert((i, shape));
        if first != shape {
            let what = format!(
                "burst group \"{group}\" has burst_factor = {} and burst_on = {} ms from flow \"{}\", but this flow \
                 has {} and {} ms; the flows of a group share their ON and OFF periods, so both must match",
                first.factor,
                first.on_ns as f64 / 1e6,
                flows[j].name,
                shape.factor,
                shape.on_ns as f64 / 1e6,
            );
            return Err((i, "burst_group".to_string(), what));
        }
    }
    Ok(())
}

/// `burst_factor`, `burst_on` and `burst_group`: only, and `burst_factor` always, with
/// `rate_process = "onoff"`.
fn check_burst(spec: &FlowSpec) -> Result<(), (String, String)> {
    let err = |key: &str, what: &str| Err((key.to_string(), what.to_string()));
    if spec.rate_process != Some(RateProcess::Onoff) {
        for (key, set) in [
            ("burst_factor", spec.burst_factor.is_some()),
            ("burst_on", spec.burst_on.is_some()),
            ("burst_group", spec.burst_group.is_some()),
        ] {
            if set {
                return err(key, "applies only with rate_process = \"onoff\"");
            }
        }
        return Ok(());
    }
    match spec.burst_factor {
        None => {
            return err(
                "burst_factor",
                "missing: rate_process = \"onoff\" needs burst_factor, a number >= 1 (the rate during bursts over \
                 rate_iops)",
            )
        }
        Some(f) if !(f >= 1.0 && f.is_finite()) => {
            return err("burst_factor", "expected a number >= 1 (the rate during bursts over rate_iops)")
        }
        Some(_) => {}
    }
    if spec.burst_on.is_some_and(|d| d.0 == 0) {
        return err("burst_on", "expected a duration > 0 (the mean length of a burst)");
    }
    if spec.burst_group.as_ref().is_some_and(|g| g.trim().is_empty()) {
        return err("burst_group", "expected a non-empty name (flows with the same name burst together)");
    }
    Ok(())
}
