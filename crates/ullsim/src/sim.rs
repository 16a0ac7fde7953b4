//! The simulation: one run of one scenario. Owns the layers and the event queue, hands each event to the
//! layer it belongs to, and moves requests between layers through their narrow calls.

mod drives;

use serde::Serialize;

use crate::config::units::{describe_bytes, describe_ns};
use crate::config::Scenario;
use crate::device::{Device, DeviceCounters, DeviceEvent, DeviceResults, DriveEvent};
use crate::engine::{EventQueue, Time};
use crate::host::{Host, HostCounters, HostEvent, HostResults};
use crate::metrics::energy::{self, Energy};
use crate::metrics::fairness::{self, AloneRun, Fairness};
use crate::metrics::timeseries::{TimeSeries, TimeSeriesResults};
pub use crate::metrics::Window;
use crate::metrics::{FlowResult, Metrics};
use crate::request::{Op, Request, RequestArena, Stamps};
use crate::workload::trace::TraceError;
use crate::workload::{NewIo, Workload, WorkloadEvent};
pub use drives::DriveResults;

/// Every event of the model, tagged with the layer that handles it.
#[derive(Debug, Clone, Copy)]
pub enum Event {
    Workload(WorkloadEvent),
    Host(HostEvent),
    /// An event of the drive whose index it carries.
    Device(u32, DeviceEvent),
}

// Each layer schedules its own event type (`engine::Scheduler`); the queue wraps it as it stores it.
impl From<WorkloadEvent> for Event {
    fn from(event: WorkloadEvent) -> Self {
        Event::Workload(event)
    }
}

impl From<HostEvent> for Event {
    fn from(event: HostEvent) -> Self {
        Event::Host(event)
    }
}

impl From<DriveEvent> for Event {
    fn from((drive, event): DriveEvent) -> Self {
        Event::Device(drive, event)
    }
}

// An alone run is measured here, where runs are: `metrics` sits beneath the simulation.
impl AloneRun {
    /// The first (only) flow of an alone run and its die occupancy.
    pub fn of(run: &RunResults) -> Self {
        AloneRun {
            flow: run.flows[0].clone(),
            die_busy: run.device.die_utilization.mean,
            all_chips_busy: run.device.all_chips_busy,
        }
    }
}

/// Why a run could not produce results.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("{0}")]
    Setup(String),
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error("model invariant violated: {0}")]
    Invariant(String),
    /// More requests waited than [`MAX_IN_FLIGHT`]: the offered load outruns the system without bound.
    #[error("{0}")]
    Overload(String),
    /// The drive's map passed `run.map_memory_limit`.
    #[error("{0}")]
    MapMemory(String),
}

pub use crate::request::MAX_IN_FLIGHT;

/// Events between two checks of the map's size against `run.map_memory_limit`: the map grows by at most a
/// few KiB per event, so a run stops within a few MiB of the limit, and the check costs nothing per event.
const MAP_CHECK_EVERY: u64 = 1 << 10;

/// The largest the drive's map of `scenario` can grow (every logical page rewritten, every block holding
/// pages the run wrote: `Ftl::map_bytes_at_most`), and a note saying so when that is over
/// `run.map_memory_limit`: such a run stops with an error if its map reaches the limit, and a reader should
/// know before it starts. Each run of `[metrics] fairness` has a drive, and a map, of its own.
pub fn map_memory_note(scenario: &Scenario) -> Option<String> {
    map_limit(scenario).map(|(limit, most)| {
        let drives = match scenario.device.count {
            1 => String::new(),
            n => format!("with {n} drives, each with a map of its own: "),
        };
        let shapes: Vec<(u64, u64)> =
            scenario.drive_configs().map(|d| (d.logical_pages(), d.mapping_unit_bytes())).collect();
        let pages = match shapes.windows(2).all(|w| w[0] == w[1]) {
            true => format!("{} logical pages of {} bytes", shapes[0].0, shapes[0].1),
            false => format!("{} logical pages of the drives together", shapes.iter().map(|s| s.0).sum::<u64>()),
        };
        format!(
            "{drives}the drive's map can grow to {} if the run rewrites all of it ({pages}), over \
             run.map_memory_limit ({}): the run stops with an error if its map reaches the limit (the map grows \
             with the pages the run writes; docs/model.md, \"Memory\")",
            describe_bytes(most),
            describe_bytes(limit),
        )
    })
}

/// `run.map_memory_limit` and the most the drive's map can reach, when that is over the limit (else the run
/// needs no checks).
fn map_limit(scenario: &Scenario) -> Option<(u64, u64)> {
    // Each drive has a map of its own; the limit bounds them together.
    let most = drives::map_bytes_at_most(scenario);
    let limit = scenario.run.map_memory_limit.0;
    (most > limit).then_some((limit, most))
}

/// Version of the JSON result layout (docs/output.md); bumped on incompatible changes.
pub const RESULTS_SCHEMA_VERSION: u32 = 4;

/// What ran.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioInfo {
    pub name: String,
    pub seed: u64,
    pub preset: String,
    /// The named host stack (`host.stack`) the host keys started from.
    pub stack: String,
    /// The named host platform (`host.platform`) under them, if the scenario names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
}

/// Everything a run reports. Serialized as the JSON result (same scenario and seed: same bytes).
#[derive(Debug, Clone, Serialize)]
pub struct RunResults {
    pub schema_version: u32,
    pub scenario: ScenarioInfo,
    /// The measurement window: from `run.warmup` to `run.duration`, or to when every flow finished (ran out
    /// of I/O or of runtime, and its last I/O completed) if that is earlier. Device, host and energy results
    /// cover it; each flow's rates cover its own active part of it (`flows[].window`).
    pub window: Window,
    /// When the run stopped: `run.duration`, or when every flow had finished if that is earlier. Before
    /// `window.start_ns` when every flow finished during the warm-up (the window is then empty).
    pub stopped_ns: Time,
    pub flows: Vec<FlowResult>,
    pub host: HostResults,
    /// The first drive's (`nvme0`) results; with one drive, the drive's.
    pub device: DeviceResults,
    /// Every drive's results, named, when the host has several (absent with one).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DriveResults>,
    /// System energy from the power model (`[host.power]`), over the window.
    pub energy: Energy,
    /// Events the engine handled.
    pub events: u64,
    /// Requests completed in the whole run (including warm-up).
    pub requests_completed: u64,
    /// Warnings a reader of the results must see (e.g. an overloaded flow); also printed under the table.
    pub warnings: Vec<String>,
    /// Slowdown-based metrics (only with `[metrics] fairness = true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fairness: Option<Fairness>,
    /// Per-interval series of the window (only with `[metrics] timeseries_interval`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeseries: Option<TimeSeriesResults>,
}

/// How often (in events) the progress callback is called.
const PROGRESS_EVERY: u64 = 1 << 16;

pub struct Simulation {
    info: ScenarioInfo,
    q: EventQueue<Event>,
    requests: RequestArena,
    workload: Workload,
    host: Host,
    /// The host's drives, by index (`device.count`; events carry their drive's).
    devices: Vec<Device>,
    power: crate::config::host::PowerConfig,
    metrics: Metrics,
    /// Flows `[metrics] per_job` reports as a group for want of room.
    per_job_warnings: Vec<String>,
    /// Only with `[metrics] timeseries_interval`, so runs without a series pay one branch per event.
    timeseries: Option<TimeSeries>,
    end_ns: Time,
    warmup_ns: Time,
    check_invariants: bool,
    /// `run.map_memory_limit` and the map's most, when the map could pass the limit (else `None`: no checks).
    map_limit: Option<(u64, u64)>,
    completed_total: u64,
}

impl Simulation {
    /// Build every layer (including device preconditioning and opening traces).
    pub fn new(scenario: &Scenario) -> Result<Simulation, SimError> {
        let mut devices = drives::build(scenario).map_err(SimError::Setup)?;
        // A flow's offsets and sizes are within its drive's capacity (a list's smallest), or the md volume's.
        let storage = scenario.storage().map_err(|e| SimError::Setup(e.to_string()))?;
        let end_ns = scenario.run.duration.0;
        let workload = Workload::new(&scenario.flows, scenario.seed, &storage, end_ns, &scenario.base_dir)
            .map_err(SimError::Setup)?;
        let host = Host::new(scenario, &mut devices).map_err(SimError::Setup)?;
        let (jobs_apart, per_job_warnings) = crate::metrics::per_job::jobs_apart(scenario);
        let metrics = Metrics::new(
            &scenario.flows.iter().map(|f| (f.name.clone(), f.class, f.prio)).collect::<Vec<_>>(),
            &jobs_apart,
            &(0..scenario.flows.len() as u32).map(|f| workload.starts_at(f)).collect::<Vec<_>>(),
            scenario.run.warmup.0,
        );
        Ok(Simulation {
            info: ScenarioInfo {
                name: scenario.name.clone(),
                seed: scenario.seed,
                preset: scenario.device.preset.clone(),
                stack: scenario.host.stack.clone(),
                platform: scenario.host.platform.clone(),
            },
            q: EventQueue::new(),
            requests: RequestArena::default(),
            workload,
            host,
            devices,
            power: scenario.host.power.clone(),
            metrics,
            per_job_warnings,
            timeseries: match scenario.metrics.timeseries_interval.0 {
                0 => None,
                interval => Some(TimeSeries::new(interval, scenario.run.warmup.0, scenario.flows.len())),
            },
            end_ns,
            warmup_ns: scenario.run.warmup.0,
            check_invariants: scenario.run.check_invariants,
            map_limit: map_limit(scenario),
            completed_total: 0,
        })
    }

    /// Run to the end; `progress(now, end)` is called now and then.
    pub fn run(mut self, progress: &mut dyn FnMut(Time, Time)) -> Result<RunResults, SimError> {
        let mut new_ios: Vec<NewIo> = Vec::with_capacity(64);
        let mut completed = Vec::with_capacity(64);
        let mut delivered = Vec::with_capacity(64);
        self.workload.start(&mut self.q);
        self.host.start(&mut self.q);
        self.devices.iter_mut().for_each(|device| device.start(&mut self.q));
        // The timed preconditioning (device.ftl.precondition_timed_writes) may have grown the map already.
        self.check_map_memory(0)?;
        let mut window_opened: Option<(Vec<DeviceCounters>, HostCounters)> = None;
        // The run stops at run.duration unless every flow finishes first (or nothing is left to happen).
        let mut reached_duration = true;
        while let Some(next) = self.q.peek_time() {
            if next > self.end_ns {
                break;
            }
            if window_opened.is_none() && next >= self.warmup_ns {
                window_opened = Some(self.snapshot(self.warmup_ns));
            }
            let (now, event) = self.q.pop().expect("peeked");
            match event {
                Event::Workload(e) => self.workload.handle(e, &mut self.q, &mut new_ios),
                Event::Device(drive, e) => {
                    self.devices[drive as usize].handle(e, &mut self.q, &mut self.requests, &mut completed);
                    if let Some(series) = &mut self.timeseries {
                        series.observe_queue_depth(now, drives::commands_inside(&self.devices));
                    }
                    for req in completed.drain(..) {
                        self.host.on_device_completion(&mut self.q, &mut self.requests, &mut self.devices, req);
                    }
                }
                Event::Host(e) => self.host.handle(e, &mut self.q, &mut self.requests, &mut self.devices),
            }
            self.deliver(now, &mut new_ios, &mut delivered)?;
            if self.map_limit.is_some() && self.q.events_popped().is_multiple_of(MAP_CHECK_EVERY) {
                self.check_map_memory(now)?;
            }
            if self.requests.live() == 0 && self.workload.finished(now) && !matches!(event, Event::Workload(_)) {
                reached_duration = false;
                break;
            }
            if self.q.events_popped().is_multiple_of(PROGRESS_EVERY) {
                progress(now, self.end_ns);
            }
        }
        if self.q.is_empty() && self.requests.live() == 0 {
            reached_duration = false;
        }
        // The window closes at run.duration, or when the last flow stopped being active (with an empty
        // queue that can be later than the last event: an open-loop flow is active until its runtime ends
        // even when its next arrival would have come after it). A window that closes inside the warm-up is
        // empty, never negative.
        let end = if reached_duration {
            self.end_ns
        } else {
            self.workload.all_active_until(self.end_ns).max(self.q.now()).min(self.end_ns)
        };
        let stopped_ns = end;
        let end = end.max(self.warmup_ns);
        let (device_start, host_start) = window_opened.unwrap_or_else(|| self.snapshot(self.warmup_ns));
        let (device_end, host_end) = self.snapshot(end);
        if self.check_invariants {
            for device in &self.devices {
                device.check_invariants().map_err(SimError::Invariant)?;
            }
            self.host.check_invariants().map_err(SimError::Invariant)?;
        }
        progress(end, self.end_ns);
        let window = Window { start_ns: self.warmup_ns, end_ns: end };
        let flow_windows: Vec<Window> = (0..self.metrics.flows() as u32)
            .map(|f| {
                let start_ns = self.workload.starts_at(f).clamp(self.warmup_ns, end);
                Window { start_ns, end_ns: self.workload.active_until(f, end).max(start_ns) }
            })
            .collect();
        let open_loop: Vec<bool> = (0..flow_windows.len() as u32).map(|f| self.workload.is_open_loop(f)).collect();
        let mut flows = self.metrics.results(&flow_windows, &open_loop);
        let (host, flow_host) = self.host.results(&host_start, &host_end);
        for (flow, measured) in flows.iter_mut().zip(flow_host) {
            flow.cpu_cores = measured.cpu.cpu_cores;
            flow.cpu_user_cores = measured.cpu.cpu_user_cores;
            flow.context_switches = measured.cpu.context_switches;
            flow.fsync_phases_ns = measured.fsync_phases_ns;
            // Without CPU (device-only) the host measures no jobs: theirs stays 0, as the flow's.
            for (job, cpu) in flow.jobs.iter_mut().flatten().zip(measured.jobs) {
                job.cpu_cores = cpu.cpu_cores;
                job.cpu_user_cores = cpu.cpu_user_cores;
                job.context_switches = cpu.context_switches;
            }
        }
        let (mut by_drive, gc_by_flow) = drives::results(&self.devices, &device_start, &device_end);
        for (flow, gc_ns) in flows.iter_mut().zip(gc_by_flow) {
            flow.gc_busy_ns = gc_ns;
        }
        let window_completed = flows.iter().map(|f| f.completed).sum();
        let busy: Vec<f64> = by_drive.iter().map(|d| d.busy).collect();
        let energy = energy::estimate(&self.power, &host.cores, &busy, window.seconds(), window_completed);
        let devices = drives::named(&by_drive);
        let device = by_drive.swap_remove(0);
        for r in self.requests.iter_live() {
            let oldest = &mut flows[r.flow as usize].oldest_in_flight_ns;
            *oldest = (*oldest).max(end.saturating_sub(r.stamps.issued));
        }
        let timeseries = self.timeseries.take().map(|series| {
            let names: Vec<String> = flows.iter().map(|f| f.name.clone()).collect();
            series.results(end, &names)
        });
        let issues_io: Vec<bool> = (0..flows.len() as u32).map(|f| self.workload.issues_io(f)).collect();
        // A run that stopped before its window opened measured nothing: one warning says why, rather than one per
        // flow that completed nothing.
        let mut warnings = if stopped_ns <= self.warmup_ns && self.warmup_ns > 0 && issues_io.contains(&true) {
            vec![format!(
                "the run ended at {}, when every flow had finished, before the measurement window began at \
                 run.warmup = {}: nothing was measured, and every figure is 0; lower run.warmup below {}, or give \
                 the flows more to do (number_ios, runtime)",
                describe_ns(stopped_ns),
                describe_ns(self.warmup_ns),
                describe_ns(stopped_ns)
            )]
        } else {
            crate::metrics::warnings(&flows, &issues_io)
        };
        warnings.append(&mut self.per_job_warnings);
        Ok(RunResults {
            schema_version: RESULTS_SCHEMA_VERSION,
            scenario: self.info,
            window,
            stopped_ns,
            flows,
            host,
            device,
            devices,
            energy,
            events: self.q.events_popped(),
            requests_completed: self.completed_total,
            warnings,
            fairness: None,
            timeseries,
        })
    }

    /// Stop a run whose backlog passed [`MAX_IN_FLIGHT`], naming the flow that holds the most of it.
    fn check_backlog(&self, now: Time) -> Result<(), SimError> {
        if self.metrics.total_in_flight() <= MAX_IN_FLIGHT {
            return Ok(());
        }
        let (name, arrived, completed) = self.metrics.most_backlogged();
        let seconds = now.max(1) as f64 / 1e9;
        Err(SimError::Overload(format!(
            "flow \"{name}\": {} requests waiting at {:.3} ms simulated (offered {:.0} IOPS, served {:.0} IOPS so \
             far): the system cannot keep up and the backlog would grow without bound (the limit is {MAX_IN_FLIGHT} \
             requests in flight); lower its rate_iops (or iodepth x numjobs), cap it with iodepth, or shorten \
             run.duration",
            self.metrics.total_in_flight(),
            now as f64 / 1e6,
            arrived as f64 / seconds,
            completed as f64 / seconds,
        )))
    }

    /// Stop a run whose drive map passed `run.map_memory_limit`.
    fn check_map_memory(&self, now: Time) -> Result<(), SimError> {
        let Some((limit, most)) = self.map_limit else { return Ok(()) };
        let bytes = drives::map_bytes(&self.devices);
        if bytes <= limit {
            return Ok(());
        }
        Err(SimError::MapMemory(format!(
            "run.map_memory_limit: the drive's map holds {bytes} bytes ({}) at {} simulated, over the limit of \
             {limit} bytes ({}) (the map grows with the pages the run writes, up to {} if it rewrites the whole \
             drive); raise run.map_memory_limit if the machine has the memory, or shorten run.duration",
            describe_bytes(bytes),
            describe_ns(now),
            describe_bytes(limit),
            describe_bytes(most),
        )))
    }

    /// The device's and the host's cumulative counters at `at`.
    fn snapshot(&mut self, at: Time) -> (Vec<DeviceCounters>, HostCounters) {
        (drives::counters(&mut self.devices, at, self.metrics.flows()), self.host.counters(at))
    }

    /// Hand new I/O to the host, let its tasks run, and give what they completed to the application, until
    /// nothing changes at this instant.
    fn deliver(
        &mut self,
        now: Time,
        new_ios: &mut Vec<NewIo>,
        delivered: &mut Vec<(crate::request::ReqId, u32, u32)>,
    ) -> Result<(), SimError> {
        loop {
            if let Some(e) = self.workload.take_error() {
                return Err(e.into());
            }
            for (flow, delta) in self.workload.take_backlog_changes() {
                self.metrics.change_in_flight(flow, now, delta);
            }
            for io in new_ios.drain(..) {
                let request = Request {
                    flow: io.flow,
                    drive: io.drive,
                    op: io.op,
                    offset: io.offset,
                    len: io.len,
                    fua: io.op == Op::Write && self.workload.fua(io.flow),
                    writeback: false,
                    class: self.workload.class(io.flow),
                    stamps: Stamps { issued: io.arrived_at, ..Stamps::default() },
                };
                let req = self.requests.insert(request);
                if !io.was_backlogged {
                    self.metrics.change_in_flight(io.flow, now, 1);
                }
                self.host.submit(&mut self.q, io.flow, io.job, req);
            }
            self.check_backlog(now)?;
            self.host.run_ready(&mut self.q, &mut self.requests, &mut self.devices, delivered);
            if delivered.is_empty() {
                return Ok(());
            }
            for (req, flow, job) in delivered.drain(..) {
                if self.check_invariants && crate::metrics::layer_times(&self.requests[req].stamps).is_none() {
                    return Err(SimError::Invariant(format!(
                        "request of flow {flow} has stamps out of order: {:?}",
                        self.requests[req].stamps
                    )));
                }
                self.metrics.on_complete(&self.requests[req], job, now);
                if let Some(series) = &mut self.timeseries {
                    series.on_complete(&self.requests[req], now);
                }
                let op = self.requests[req].op;
                self.requests.remove(req);
                self.completed_total += 1;
                self.workload.on_complete(flow, job, op, &mut self.q, new_ios);
            }
        }
    }
}

/// Build and run `scenario` with no progress reporting.
pub fn run_scenario(scenario: &Scenario) -> Result<RunResults, SimError> {
    run_scenario_with_progress(scenario, &mut |_, _| {})
}

/// Build and run `scenario`; with `[metrics] fairness = true` every flow also runs alone, in parallel, and
/// the results carry slowdowns. `progress(now, end)` follows the shared run.
pub fn run_scenario_with_progress(
    scenario: &Scenario,
    progress: &mut (dyn FnMut(Time, Time) + Send),
) -> Result<RunResults, SimError> {
    if !scenario.metrics.fairness {
        return Simulation::new(scenario)?.run(progress);
    }
    let (shared, alone) = rayon::join(
        || Simulation::new(scenario)?.run(progress),
        || {
            use rayon::prelude::*;
            (0..scenario.flows.len())
                .into_par_iter()
                .map(|i| run_scenario(&scenario.alone(i)))
                .collect::<Result<Vec<_>, _>>()
        },
    );
    let mut shared = shared?;
    let alone: Vec<AloneRun> = alone?.into_iter().map(|r| AloneRun::of(&r)).collect();
    shared.fairness = fairness::attach(&mut shared.flows, &alone);
    Ok(shared)
}
