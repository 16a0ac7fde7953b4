//! App models: named stand-ins for real workloads, chosen with `app = "FAMILY.NAME"` in a flow. An app model
//! is a set of synthetic-flow keys (`rw`, `rwmixread`, `bssplit`, `percentage_random`; open loop: `rate_iops`,
//! `rate_process`, with bursts `burst_factor` and `burst_on`; closed loop: `thinktime_spin`; and
//! `response_cpu`) derived from published characteristics of the workload; the flow's other keys (`size`,
//! `offset`, `iodepth`, `runtime`, `random_distribution`, ...) apply as to any synthetic flow. One file per
//! family, listed in [`FAMILIES`].

pub mod background;
pub mod fastresponse;
pub mod flashshare;
pub mod flin;

use std::borrow::Cow;
use std::fmt;

use crate::config::scenario::{FlowSpec, IoEngine, RateProcess, RwMode};
use crate::config::units::{Flag, Micros, Seconds};
use crate::request::Criticality;

/// The synthetic-flow keys an app model stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct AppModel {
    pub rw: RwMode,
    pub rwmixread: u32,
    pub bssplit: String,
    /// `percentage_random` of a random `rw`: `None` is fully random.
    pub percentage_random: Option<u32>,
    /// Open loop at this rate (`rate_iops`); `None`: a closed loop (the flow's `iodepth` per job).
    pub rate_iops: Option<f64>,
    pub rate_process: RateProcess,
    /// Bursty arrivals: `Some` makes the flow `rate_process = "onoff"` with these keys.
    pub burst: Option<Burst>,
    /// Closed loop: the application's CPU between a completion and the next I/O (`thinktime_spin`).
    pub thinktime_spin: Option<Micros>,
    /// The application's CPU on each completed I/O before the request is answered (`response_cpu`).
    pub response_cpu: Option<Micros>,
    /// An fsync after every N writes, through the page cache: the flow writes buffered (`direct = 0`) with
    /// blocking calls (`ioengine = "psync"`); defaults the flow may override ([`fill_defaults`]).
    pub fsync: Option<u32>,
    /// Defaults of the flow's `class`, `numjobs` and `ioengine`, which it may override ([`fill_defaults`]).
    pub defaults: FlowDefaults,
    /// Background I/O of the same application (RocksDB's memtable flushes and compaction): a flow of its
    /// own next to the app's ([`background`]).
    pub background: Option<Box<background::Background>>,
}

impl Default for AppModel {
    /// 4 KiB random reads in a closed loop, with nothing else: what the keys' defaults give.
    fn default() -> Self {
        AppModel {
            rw: RwMode::Randread,
            rwmixread: 100,
            bssplit: "4k/100".into(),
            percentage_random: None,
            rate_iops: None,
            rate_process: RateProcess::Linear,
            burst: None,
            thinktime_spin: None,
            response_cpu: None,
            fsync: None,
            defaults: FlowDefaults::default(),
            background: None,
        }
    }
}

/// Keys an app model makes the defaults of its flow.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FlowDefaults {
    pub class: Option<Criticality>,
    pub numjobs: Option<u32>,
    pub ioengine: Option<IoEngine>,
}

/// The bursts of an app model's arrivals (`rate_process = "onoff"`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Burst {
    /// `burst_factor`: the rate during an ON period over the mean rate.
    pub factor: f64,
    /// `burst_on`: the mean length of an ON period.
    pub on: Seconds,
}

impl AppModel {
    /// The `rate_process` the flow runs with: `onoff` when the model has bursts.
    pub fn process(&self) -> RateProcess {
        if self.burst.is_some() {
            RateProcess::Onoff
        } else {
            self.rate_process
        }
    }
}

impl fmt::Display for AppModel {
    /// The model as the flow keys it replaces, ready to paste into a `[[flow]]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rw = {}, rwmixread = {}, bssplit = \"{}\"", quoted(&self.rw)?, self.rwmixread, self.bssplit)?;
        if let Some(p) = self.percentage_random {
            write!(f, ", percentage_random = {p}")?;
        }
        if let Some(rate) = self.rate_iops {
            write!(f, ", rate_iops = {rate}, rate_process = {}", quoted(&self.process())?)?;
        }
        if let Some(burst) = self.burst {
            write!(f, ", burst_factor = {}, burst_on = \"{}ms\"", burst.factor, burst.on.0 as f64 / 1e6)?;
        }
        for (key, cpu) in [("thinktime_spin", self.thinktime_spin), ("response_cpu", self.response_cpu)] {
            if let Some(cpu) = cpu {
                write!(f, ", {key} = \"{}ns\"", cpu.0)?;
            }
        }
        if let Some(every) = self.fsync {
            write!(f, ", direct = 0, fsync = {every}, ioengine = \"psync\"")?;
        }
        let FlowDefaults { class, numjobs, ioengine } = self.defaults;
        if let Some(class) = class {
            write!(f, ", class = {}", quoted(&class)?)?;
        }
        if let Some(n) = numjobs {
            write!(f, ", numjobs = {n}")?;
        }
        if let Some(engine) = ioengine {
            write!(f, ", ioengine = {}", quoted(&engine)?)?;
        }
        Ok(())
    }
}

/// A keyword as TOML writes it (`"randrw"`), for [`AppModel`]'s `Display`.
fn quoted<T: serde::Serialize>(keyword: &T) -> Result<String, fmt::Error> {
    serde_json::to_string(keyword).map_err(|_| fmt::Error)
}

/// A family of app models, each named `PREFIX.NAME`.
pub trait AppFamily: Sync {
    fn prefix(&self) -> &'static str;
    /// The names of its models, without the prefix.
    fn names(&self) -> Vec<&'static str>;
    /// The model called `name` (without the prefix).
    fn model(&self, name: &str) -> Option<AppModel>;
}

/// Every family of app models.
pub const FAMILIES: &[&dyn AppFamily] =
    &[&flin::FlinTraces, &fastresponse::FastResponseApps, &flashshare::FlashShareApps];

/// Every app name `app` accepts.
pub fn names() -> Vec<String> {
    FAMILIES.iter().flat_map(|f| f.names().into_iter().map(move |n| format!("{}.{n}", f.prefix()))).collect()
}

/// The app model called `name` (with its family prefix).
pub fn find(name: &str) -> Option<AppModel> {
    let (prefix, rest) = name.split_once('.')?;
    FAMILIES.iter().find(|f| f.prefix() == prefix)?.model(rest)
}

/// Fill in the keys an app model makes the defaults of its flow, which the flow may still set itself (the
/// scenario does this when it loads, so the host sees them): a model that syncs writes through the page
/// cache (`direct = 0`) with blocking calls (`ioengine = "psync"`), an fsync after every N writes; and the
/// model's `numjobs` and `ioengine` (its `class` is a default of the flow's table: [`fill_table_defaults`]).
pub fn fill_defaults(spec: &mut FlowSpec) {
    let Some(model) = spec.app.as_deref().and_then(find) else { return };
    if let Some(every) = model.fsync {
        spec.direct.get_or_insert(Flag(false));
        if spec.fsync.is_none() && spec.fdatasync.is_none() && spec.flush_every.is_none() {
            spec.fsync = Some(every);
        }
        spec.ioengine.get_or_insert(IoEngine::Psync);
    }
    if let Some(n) = model.defaults.numjobs {
        spec.numjobs.get_or_insert(n);
    }
    if let Some(engine) = model.defaults.ioengine {
        spec.ioengine.get_or_insert(engine);
    }
}

/// Give a `[[flow]]` table whose app model has a default `class` that class, unless it sets one: `class`
/// has a default of its own (`"normal"`), so only the table tells whether the flow chose it.
pub fn fill_table_defaults(flow: &mut toml::Table) {
    let Some(model) = flow.get("app").and_then(toml::Value::as_str).and_then(find) else { return };
    if let Some(class) = model.defaults.class {
        let name = match class {
            Criticality::Critical => "critical",
            Criticality::Normal => "normal",
        };
        flow.entry("class").or_insert_with(|| toml::Value::String(name.into()));
    }
}

/// The spec the flow runs: `spec` itself, or, with `app`, a synthetic flow with the model's keys and its
/// rate divided by `time_scale` (`burst_on` is left as it is). Errors are `(key, what was expected)`.
pub fn resolve(spec: &FlowSpec) -> Result<Cow<'_, FlowSpec>, (String, String)> {
    let Some(name) = &spec.app else { return Ok(Cow::Borrowed(spec)) };
    let Some(model) = find(name) else {
        return Err(("app".into(), format!("unknown app {name:?}; expected one of {:?}", names())));
    };
    apply(spec, name, model).map(Cow::Owned)
}

/// `spec` with the keys of `model` (called `name`).
fn apply(spec: &FlowSpec, name: &str, model: AppModel) -> Result<FlowSpec, (String, String)> {
    let err = |key: &str, what: String| Err((key.to_string(), what));
    // An app model is one calibrated workload, and a mixture of it and other values would be neither: the
    // keys it sets are errors (copy its keys into a plain flow to vary them; time_scale scales its rate).
    let set_by_app = [
        ("rw", spec.rw.is_some()),
        ("rwmixread", spec.rwmixread.is_some()),
        ("bs", spec.bs.is_some()),
        ("bssplit", spec.bssplit.is_some()),
        ("rate_iops", spec.rate_iops.is_some()),
        ("rate_process", spec.rate_process.is_some()),
        ("burst_factor", spec.burst_factor.is_some()),
        ("burst_on", spec.burst_on.is_some()),
        ("percentage_random", spec.percentage_random.is_some()),
        ("thinktime_spin", spec.thinktime_spin.is_some()),
        ("response_cpu", spec.response_cpu.is_some()),
    ];
    if let Some((key, _)) = set_by_app.iter().find(|(_, set)| *set) {
        return err(
            key,
            format!(
                "is set by app = \"{name}\" ({model}); remove it (time_scale scales the rate), or replace app with \
                 these keys and change them"
            ),
        );
    }
    for (key, set) in [("trace", spec.trace.is_some()), ("format", spec.format.is_some())] {
        if set {
            return err(key, "does not apply to an app flow: give app or trace, not both".into());
        }
    }
    if spec.thinktime.is_some() {
        return err(
            "thinktime",
            "does not apply to an app flow: the model sets its pacing (open loop arrivals, or a closed loop with \
             thinktime_spin between I/Os)"
                .into(),
        );
    }
    let time_scale = spec.time_scale.unwrap_or(1.0);
    if !(time_scale > 0.0 && time_scale.is_finite()) {
        return err("time_scale", "expected a number > 0 (2.0 makes the app's gaps twice as long)".into());
    }
    let mut resolved = spec.clone();
    resolved.rate_process = model.rate_iops.map(|_| model.process());
    resolved.burst_factor = model.burst.map(|b| b.factor);
    resolved.burst_on = model.burst.map(|b| b.on);
    resolved.rw = Some(model.rw);
    resolved.rwmixread = Some(model.rwmixread);
    resolved.bssplit = Some(model.bssplit);
    resolved.percentage_random = model.percentage_random;
    resolved.rate_iops = model.rate_iops.map(|rate| rate / time_scale);
    // A closed loop's gaps are its CPU between I/Os: time_scale stretches them as it stretches an open
    // loop's (rounded to the ns).
    resolved.thinktime_spin = model.thinktime_spin.map(|d| Micros::from_ns((d.0 as f64 * time_scale).round() as u64));
    resolved.response_cpu = model.response_cpu;
    resolved.time_scale = None;
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Scenario;
    use crate::engine::{EventQueue, Time};
    use crate::request::Op;
    use crate::sim::Event;
    use crate::workload::{NewIo, Workload};

    /// A flin-eval scenario with one flow whose keys are `flow_keys` (TOML lines).
    fn load(flow_keys: &str) -> Result<Scenario, String> {
        let text = format!("[device]\npreset = \"flin-eval\"\n[[flow]]\nname = \"f\"\n{flow_keys}\n");
        Scenario::from_toml_str(&text, "t", std::path::Path::new("."), &[]).map_err(|e| e.to_string())
    }

    /// Every I/O the scenario's single flow issues before `end_ns`, with its arrival time (open loop: nothing
    /// needs to complete).
    fn arrivals(scenario: &Scenario, end_ns: Time) -> Vec<NewIo> {
        let storage = scenario.storage().unwrap();
        let mut workload =
            Workload::new(&scenario.flows, scenario.seed, &storage, end_ns, std::path::Path::new(".")).unwrap();
        let mut q = EventQueue::new();
        workload.start(&mut q);
        let mut out = Vec::new();
        while let Some((_, event)) = q.pop() {
            let Event::Workload(e) = event else { unreachable!("only the workload schedules events") };
            workload.handle(e, &mut q, &mut out);
        }
        out
    }

    #[test]
    fn every_flin_app_reproduces_its_table_row() {
        const ARRIVALS: f64 = 40_000.0;
        for t in flin::TABLE2 {
            let scenario = load(&format!("app = \"flin.{}\"", t.name)).unwrap();
            let capacity = scenario.device.logical_capacity_bytes();
            let end_ns = (ARRIVALS / t.rate_iops() * 1e9) as Time;
            let ios = arrivals(&scenario, end_ns);
            let n = ios.len() as f64;
            // Poisson count: sd sqrt(N); binomial read share: sd sqrt(r (1 - r) / N). Four sd each.
            let rate = n / (end_ns as f64 / 1e9);
            assert!(
                (rate / t.rate_iops() - 1.0).abs() < 4.0 / n.sqrt(),
                "{}: {rate} vs {} IOPS",
                t.name,
                t.rate_iops()
            );
            let reads: Vec<&NewIo> = ios.iter().filter(|io| io.op == Op::Read).collect();
            let read_share = reads.len() as f64 / n;
            let sd = (t.read_ratio * (1.0 - t.read_ratio) / n).sqrt();
            assert!((read_share - t.read_ratio).abs() < 4.0 * sd, "{}: read share {read_share}", t.name);
            for (op, table_kib) in [(Op::Read, t.read_kib), (Op::Write, t.write_kib)] {
                let sizes: Vec<f64> = ios.iter().filter(|io| io.op == op).map(|io| io.len as f64).collect();
                let mean_kib = sizes.iter().sum::<f64>() / sizes.len() as f64 / 1024.0;
                assert!((mean_kib / table_kib - 1.0).abs() < 0.01, "{} {op:?}: {mean_kib} KiB vs {table_kib}", t.name);
            }
            assert!(ios.iter().all(|io| io.offset.is_multiple_of(512) && io.offset + io.len as u64 <= capacity));
            // Offsets are spread over the whole drive.
            let top_half = ios.iter().filter(|io| io.offset >= capacity / 2).count() as f64 / n;
            assert!((top_half - 0.5).abs() < 4.0 * (0.25 / n).sqrt(), "{}: {top_half} in the upper half", t.name);
        }
    }

    #[test]
    fn time_scale_stretches_the_gaps_and_other_keys_apply() {
        let tpcc = flin::TABLE2.iter().find(|t| t.name == "tpcc").unwrap();
        let scenario =
            load("app = \"flin.tpcc\"\ntime_scale = 4.0\nsize = \"1GiB\"\noffset = \"2GiB\"\niodepth = 8").unwrap();
        let resolved = resolve(&scenario.flows[0]).unwrap();
        assert_eq!(resolved.rate_iops, Some(tpcc.rate_iops() / 4.0));
        assert_eq!(
            (resolved.time_scale, resolved.iodepth, resolved.app.as_deref()),
            (None, Some(8), Some("flin.tpcc"))
        );
        // (iodepth caps what is outstanding, and nothing completes here: count arrivals without it.)
        let scenario = load("app = \"flin.tpcc\"\ntime_scale = 4.0\nsize = \"1GiB\"\noffset = \"2GiB\"").unwrap();
        let ios = arrivals(&scenario, 1_000_000_000);
        assert!((ios.len() as f64 - 2_500.0).abs() < 4.0 * 50.0, "{} arrivals in 1 s", ios.len());
        assert!(ios.iter().all(|io| io.offset >= 2 << 30 && io.offset + io.len as u64 <= 3 << 30));
    }

    #[test]
    fn keys_an_app_sets_and_keys_that_do_not_apply_are_errors_naming_them() {
        let names = names();
        assert_eq!(names.len(), 40);
        let unknown = load("app = \"flin.nope\"").unwrap_err();
        assert!(unknown.contains("flow[0].app") && unknown.contains("unknown app \"flin.nope\""), "{unknown}");
        assert!(names.iter().all(|n| unknown.contains(&format!("\"{n}\""))), "{unknown}");
        assert!(load("app = \"tpcc\"").unwrap_err().contains("\"flin.tpcc\""));
        for (key, value) in [
            ("rw", "\"randread\""),
            ("rwmixread", "50"),
            ("bs", "\"4k\""),
            ("bssplit", "\"4k/100\""),
            ("rate_iops", "100"),
            ("rate_process", "\"linear\""),
            ("burst_factor", "2"),
            ("burst_on", "\"10ms\""),
        ] {
            let message = load(&format!("app = \"flin.fin1\"\n{key} = {value}")).unwrap_err();
            assert!(
                message.contains(&format!("flow[0].{key}`")) && message.contains("is set by app = \"flin.fin1\""),
                "{message}"
            );
            // The message gives the model's keys, which load as a plain flow.
            let keys = message.split_once("fin1\" (").unwrap().1.split_once("); remove").unwrap().0;
            let plain = load(&keys.replace(", rw", "\nrw").replace(", ", "\n")).unwrap();
            assert_eq!(
                plain.flows[0].rate_iops,
                resolve(&load("app = \"flin.fin1\"").unwrap().flows[0]).unwrap().rate_iops
            );
        }
        for (key, value, expected) in [
            ("trace", "\"t.trace\"", "give app or trace"),
            ("thinktime", "10", "open loop"),
            ("time_scale", "0", "> 0"),
            ("time_scale", "-2.0", "> 0"),
        ] {
            let message = load(&format!("app = \"flin.fin1\"\n{key} = {value}")).unwrap_err();
            assert!(message.contains(&format!("flow[0].{key}`")) && message.contains(expected), "{message}");
        }
        let cpu = load("app = \"flin.fin1\"\nioengine = \"cpuio\"").unwrap_err();
        assert!(cpu.contains("flow[0].app`") && cpu.contains("cpuio"), "{cpu}");
    }

    #[test]
    fn a_model_with_bursts_makes_an_onoff_flow_and_lists_its_burst_keys() {
        let model = AppModel {
            burst: Some(Burst { factor: 4.0, on: Seconds::from_ns(2_500_000) }),
            ..find("flin.fin1").unwrap()
        };
        assert!(model.to_string().ends_with(", rate_process = \"onoff\", burst_factor = 4, burst_on = \"2.5ms\""));
        assert!(!find("flin.fin1").unwrap().to_string().contains("burst"));
        // time_scale divides the rate and leaves the ON periods alone.
        let spec = load("app = \"flin.fin1\"\ntime_scale = 2.0").unwrap().flows[0].clone();
        let resolved = apply(&spec, "test.bursty", model.clone()).unwrap();
        assert_eq!(resolved.rate_process, Some(RateProcess::Onoff));
        assert_eq!((resolved.burst_factor, resolved.burst_on), (Some(4.0), Some(Seconds::from_ns(2_500_000))));
        assert_eq!(resolved.rate_iops, model.rate_iops.map(|rate| rate / 2.0));
        // The model's keys, pasted into a plain flow, load as the same flow.
        let plain = load(&model.to_string().replace(", rw", "\nrw").replace(", ", "\n")).unwrap().flows[0].clone();
        assert_eq!(
            (plain.rate_process, plain.burst_factor, plain.burst_on, plain.rate_iops),
            (Some(RateProcess::Onoff), Some(4.0), Some(Seconds::from_ns(2_500_000)), model.rate_iops)
        );
        // Setting a key the model sets is an error that gives the model's burst keys.
        for set in [
            FlowSpec { burst_factor: Some(2.0), ..spec.clone() },
            FlowSpec { burst_on: Some(Seconds::from_ns(1)), ..spec.clone() },
        ] {
            let (key, what) = apply(&set, "test.bursty", model.clone()).unwrap_err();
            assert!(key.starts_with("burst_") && what.contains("burst_factor = 4, burst_on = \"2.5ms\""), "{what}");
        }
    }

    #[test]
    fn fillsync_sends_an_fsync_with_each_append_at_a_fixed_rate_and_its_keys_can_be_overridden() {
        let scenario = load("app = \"fastresponse.fillsync\"\nsize = \"1g\"").unwrap();
        let f = &scenario.flows[0];
        // The model's file keys are the flow's defaults: the host sees a buffered flow that syncs.
        assert_eq!((f.is_direct(), f.fsync, f.ioengine), (false, Some(1), Some(IoEngine::Psync)));
        // (Flow 1 is its background, `background.rs`.)
        let foreground =
            |s: &Scenario| -> Vec<NewIo> { arrivals(s, 10_000_000).into_iter().filter(|io| io.flow == 0).collect() };
        let ios = foreground(&scenario);
        // 2,000 appends per second, evenly spaced from one gap on, each followed by its fsync, arriving with it.
        assert_eq!(ios.len(), 2 * 19, "{ios:?}");
        for (k, pair) in ios.chunks(2).enumerate() {
            assert_eq!((pair[0].op, pair[1].op), (Op::Write, Op::Flush));
            assert_eq!((pair[1].arrived_at, pair[1].job), (pair[0].arrived_at, pair[0].job));
            assert_eq!(pair[0].arrived_at, (k as Time + 1) * 500_000);
        }
        // A flow's own keys win: an fsync every 4 appends.
        let every4 = load("app = \"fastresponse.fillsync\"\nsize = \"1g\"\nfsync = 4").unwrap();
        let ios = foreground(&every4);
        assert_eq!(ios.iter().filter(|io| io.op == Op::Flush).count(), 19 / 4);
        assert_eq!(ios.iter().position(|io| io.op == Op::Flush), Some(4));
        // flush_every (an NVMe Flush from any engine) still needs a closed loop.
        let e = load("app = \"fastresponse.fillsync\"\nsize = \"1g\"\nflush_every = 1").unwrap_err();
        assert!(e.contains("flush_every") && e.contains("closed-loop"), "{e}");
        assert!(fastresponse::fillsync().to_string().ends_with(", direct = 0, fsync = 1, ioengine = \"psync\""));
    }
}
