//! The simulation: one run of one scenario. Owns the layers and the event queue, hands each event to the
//! layer it belongs to, and moves requests between layers through their narrow calls.

use serde::Serialize;

use crate::config::Scenario;
use crate::device::{Device, DeviceEvent, DeviceResults};
use crate::engine::{EventQueue, Time};
use crate::host::{Host, HostEvent, HostResults};
use crate::metrics::energy::{self, Energy};
use crate::metrics::fairness::{self, AloneRun, Fairness};
use crate::metrics::{FlowResult, Metrics};
use crate::request::{Request, RequestArena, Stamps};
use crate::workload::trace::TraceError;
use crate::workload::{NewIo, Workload, WorkloadEvent};

/// Every event of the model, tagged with the layer that handles it.
#[derive(Debug, Clone, Copy)]
pub enum Event {
    Workload(WorkloadEvent),
    Host(HostEvent),
    Device(DeviceEvent),
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
}

/// Version of the JSON result layout (docs/output.md); bumped on incompatible changes.
pub const RESULTS_SCHEMA_VERSION: u32 = 2;

/// What ran.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioInfo {
    pub name: String,
    pub seed: u64,
    pub preset: String,
}

/// The measurement window in simulated ns.
#[derive(Debug, Clone, Serialize)]
pub struct Window {
    pub start_ns: Time,
    pub end_ns: Time,
}

/// Everything a run reports. Serialized as the JSON result (same scenario and seed: same bytes).
#[derive(Debug, Clone, Serialize)]
pub struct RunResults {
    pub schema_version: u32,
    pub scenario: ScenarioInfo,
    pub window: Window,
    pub flows: Vec<FlowResult>,
    pub host: HostResults,
    pub device: DeviceResults,
    /// System energy from the power model (`[host.power]`), over the whole run.
    pub energy: Energy,
    /// Events the engine handled.
    pub events: u64,
    /// Requests completed in the whole run (including warm-up).
    pub requests_completed: u64,
    /// Slowdown-based metrics (only with `[metrics] fairness = true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fairness: Option<Fairness>,
}

/// How often (in events) the progress callback is called.
const PROGRESS_EVERY: u64 = 1 << 16;

pub struct Simulation {
    info: ScenarioInfo,
    q: EventQueue<Event>,
    requests: RequestArena,
    workload: Workload,
    host: Host,
    device: Device,
    power: crate::config::host::PowerConfig,
    metrics: Metrics,
    end_ns: Time,
    warmup_ns: Time,
    check_invariants: bool,
    completed_total: u64,
}

impl Simulation {
    /// Build every layer (including device preconditioning and opening traces).
    pub fn new(scenario: &Scenario) -> Result<Simulation, SimError> {
        let mut device = Device::new(&scenario.device, scenario.seed, scenario.flows.len()).map_err(SimError::Setup)?;
        let capacity = device.logical_capacity_bytes();
        let end_ns = scenario.run.duration.0;
        let workload = Workload::new(&scenario.flows, scenario.seed, capacity, end_ns, &scenario.base_dir)
            .map_err(SimError::Setup)?;
        let host = Host::new(&scenario.host, &scenario.flows, end_ns, &mut device).map_err(SimError::Setup)?;
        let metrics = Metrics::new(
            &scenario.flows.iter().map(|f| (f.name.clone(), f.class, f.prio)).collect::<Vec<_>>(),
            scenario.run.warmup.0,
        );
        Ok(Simulation {
            info: ScenarioInfo {
                name: scenario.name.clone(),
                seed: scenario.seed,
                preset: scenario.device.preset.clone(),
            },
            q: EventQueue::new(),
            requests: RequestArena::default(),
            workload,
            host,
            device,
            power: scenario.host.power.clone(),
            metrics,
            end_ns,
            warmup_ns: scenario.run.warmup.0,
            check_invariants: scenario.run.check_invariants,
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
        let mut end = self.end_ns;
        while let Some(next) = self.q.peek_time() {
            if next > self.end_ns {
                break;
            }
            let (now, event) = self.q.pop().expect("peeked");
            match event {
                Event::Workload(e) => self.workload.handle(e, &mut self.q, &mut new_ios),
                Event::Device(e) => {
                    self.device.handle(e, &mut self.q, &mut self.requests, &mut completed);
                    for req in completed.drain(..) {
                        self.host.on_device_completion(&mut self.q, &mut self.requests, &mut self.device, req);
                    }
                }
                Event::Host(e) => self.host.handle(e, &mut self.q, &mut self.requests, &mut self.device),
            }
            // Hand new I/O to the host, let its tasks run, and give what they completed to the application,
            // until nothing changes at this instant.
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
                        op: io.op,
                        offset: io.offset,
                        len: io.len,
                        class: self.workload.class(io.flow),
                        stamps: Stamps { issued: io.arrived_at, ..Stamps::default() },
                    };
                    let req = self.requests.insert(request);
                    if !io.was_backlogged {
                        self.metrics.change_in_flight(io.flow, now, 1);
                    }
                    self.host.submit(&mut self.q, io.flow, io.job, req);
                }
                self.host.run_ready(&mut self.q, &mut self.requests, &mut self.device, &mut delivered);
                if delivered.is_empty() {
                    break;
                }
                for (req, flow, job) in delivered.drain(..) {
                    if self.check_invariants && crate::metrics::layer_times(&self.requests[req].stamps).is_none() {
                        return Err(SimError::Invariant(format!(
                            "request of flow {flow} has stamps out of order: {:?}",
                            self.requests[req].stamps
                        )));
                    }
                    self.metrics.on_complete(&self.requests[req], now);
                    self.requests.remove(req);
                    self.completed_total += 1;
                    self.workload.on_complete(flow, job, &mut self.q, &mut new_ios);
                }
            }
            if self.requests.live() == 0 && self.workload.finished(now) && !matches!(event, Event::Workload(_)) {
                end = now;
                break;
            }
            if self.q.events_popped().is_multiple_of(PROGRESS_EVERY) {
                progress(now, self.end_ns);
            }
        }
        if self.q.is_empty() && self.requests.live() == 0 {
            end = end.min(self.q.now());
        }
        // Flows that all finished during warm-up leave an empty window, never a negative one.
        let end = end.max(self.warmup_ns);
        if self.check_invariants {
            self.device.check_invariants().map_err(SimError::Invariant)?;
            self.host.check_invariants().map_err(SimError::Invariant)?;
        }
        progress(end, self.end_ns);
        let mut flows = self.metrics.results(end);
        let (host, flow_cpu) = self.host.results(end);
        for (flow, cores) in flows.iter_mut().zip(flow_cpu) {
            flow.cpu_cores = cores;
        }
        let device = self.device.results(end);
        let gc_busy = self.device.gc_busy_by_flow(flows.len());
        for (flow, gc_ns) in flows.iter_mut().zip(gc_busy) {
            flow.gc_busy_ns = gc_ns;
        }
        let energy = energy::estimate(&self.power, &host.cores, device.busy, end as f64 / 1e9, self.completed_total);
        for r in self.requests.iter_live() {
            let oldest = &mut flows[r.flow as usize].oldest_in_flight_ns;
            *oldest = (*oldest).max(end.saturating_sub(r.stamps.issued));
        }
        Ok(RunResults {
            schema_version: RESULTS_SCHEMA_VERSION,
            scenario: self.info,
            window: Window { start_ns: self.warmup_ns, end_ns: end },
            flows,
            host,
            device,
            energy,
            events: self.q.events_popped(),
            requests_completed: self.completed_total,
            fairness: None,
        })
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
