//! Fit a device's parameters to measured jobs, one parameter at a time in the order the physics separates
//! them, each against the jobs whose figures it decides, then all of them once against every job.
//!
//! Why a staged coordinate search and not a general optimiser: the parameters are mostly identified by
//! different jobs (sequential bandwidths by the large sequential jobs, the flash read time by the QD1
//! reads' mean, the read spread by their 99th percentile, the parallelism and the IOPS cap by the deep
//! reads' IOPS, the program time by the steady-state random writes), so each one-dimensional search is
//! well posed, the order can be explained, and a parameter no job speaks to is left at the base value and
//! reported as not constrained instead of drifting. The simulation is the model: a search evaluates the
//! jobs with the simulator, so effects the closed forms miss (queueing, GC, PCIe sharing) are in the fit.

use std::collections::HashMap;

use serde::Serialize;

use super::fio_latency::LatencyKind;
use super::knobs::Knob;
use super::JobShape;
use crate::engine::Time;

/// A job's measured (or simulated) figures in one direction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Figures {
    pub iops: f64,
    pub mean_ns: f64,
    /// Absent when the source gives no percentiles.
    pub p99_ns: Option<f64>,
}

/// A job's figures, per direction it issued.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct JobFigures {
    pub read: Option<Figures>,
    pub write: Option<Figures>,
}

/// One measured job: its shape, its figures, and where they came from (for the fit table and the preset's
/// `# fitted from:` notes).
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub shape: JobShape,
    pub measured: JobFigures,
    /// `file: job`.
    pub source: String,
    /// What its 99th percentile counts from (fio's `clat` percentiles unless `lat_percentiles=1`).
    pub percentiles: LatencyKind,
    /// How long it was measured (fio's `job_runtime`), ns: a writer's drive drifts over seconds as its
    /// garbage collection settles, so a writer is simulated as long (up to a bound: `evaluate::run_ns`).
    pub runtime_ns: Time,
}

/// Which figure of a job a parameter is fitted to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    Iops,
    Mean,
    P99,
}

/// The error of `simulated` against `measured` over `metrics`: the sum of squared log ratios (so 10% high
/// and 10% low cost the same, and a job of 1K IOPS counts as much as one of 1M). A 99th percentile counts
/// half: it is noisier in both.
pub fn job_error(measured: &JobFigures, simulated: &JobFigures, metrics: &[Metric]) -> f64 {
    let mut error = 0.0;
    for (m, s) in [(measured.read, simulated.read), (measured.write, simulated.write)] {
        let Some(m) = m else { continue };
        // A direction measured and not simulated is as wrong as can be.
        let Some(s) = s else {
            error += 100.0;
            continue;
        };
        for metric in metrics {
            let (mv, sv, weight) = match metric {
                Metric::Iops => (Some(m.iops), Some(s.iops), 1.0),
                Metric::Mean => (Some(m.mean_ns), Some(s.mean_ns), 1.0),
                Metric::P99 => (m.p99_ns, s.p99_ns, 0.5),
            };
            if let (Some(mv), Some(sv)) = (mv, sv) {
                let ratio = sv.max(1e-9) / mv.max(1e-9);
                error += weight * ratio.ln().powi(2);
            }
        }
    }
    error
}

/// What the data said of a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Fitted: jobs spoke to it and moving it changed their error.
    Fitted,
    /// No job of the input speaks to it: left at the base value.
    NoData,
    /// Jobs speak to it, but moving it did not change their error (e.g. a limit nothing reaches): left at
    /// the base value.
    Flat,
}

/// A parameter's value in the fit, and whether the data decided it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fitted {
    pub key: &'static str,
    pub value: f64,
    /// The value as the scenario reads it (`--set`; a choice's literal, `true` or `"fcfs"`: the value of a
    /// choice is its index), for readers of the JSON without the knob table.
    pub text: String,
    /// The base's value so written.
    pub base_text: String,
    /// The base preset's value, for the table.
    pub base: f64,
    pub verdict: Verdict,
    /// The targets it was fitted to (`file: job`).
    pub from: Vec<String>,
}

/// Simulates targets' jobs under settings (`(key, value)` pairs over the base device): one result per
/// target, in order. A target's measured figures may size its run (how long to reach enough I/Os).
pub type Evaluate<'a> = dyn Fn(&[(&'static str, f64)], &[&Target]) -> Result<Vec<JobFigures>, String> + Sync + 'a;

impl Fitted {
    /// What a search of the parameter said: moving it changed its jobs' error (fitted), or not (left at
    /// the base as not binding, unless an earlier pass fitted it).
    fn heard(&mut self, sensitive: bool) {
        if sensitive {
            self.verdict = Verdict::Fitted;
        } else if self.verdict == Verdict::NoData {
            self.verdict = Verdict::Flat;
        }
    }
}

/// How a fit went: each parameter's value, and the error before and after.
#[derive(Debug, Clone, Serialize)]
pub struct FitOutcome {
    pub parameters: Vec<Fitted>,
    pub error_before: f64,
    pub error_after: f64,
    /// Simulations of the set of jobs run.
    pub evaluations: u64,
}

impl FitOutcome {
    /// The fitted settings, as `(key, value)` pairs.
    pub fn settings(&self) -> Vec<(&'static str, f64)> {
        self.parameters.iter().map(|p| (p.key, p.value)).collect()
    }
}

/// Error of one figure off by 1% (a squared log ratio): a change in error smaller than this per figure
/// compared is taken as no change. The simulation is deterministic, but a run of a few thousand I/Os has
/// percentiles and rates that move by this much with any change at all [inferred], and a fit must not
/// drift on that.
const NOISE_PER_FIGURE: f64 = 1e-4;

/// How far above the highest rate its jobs measured a fitted limit may be and still be taken as binding
/// them [inferred: a limit binds a job that runs at it within the simulation's few-percent wobble; 25%
/// above, the job is set by something else].
const LIMIT_SLACK: f64 = 1.25;

/// How far below the highest rate its jobs measured a fitted limit may go [inferred: a job measured at
/// a drive's limit runs within a few percent of it; a limit lower than that, the drive did not have].
const LIMIT_FLOOR: f64 = 0.97;

/// How much more a knob's deciding jobs count than the other jobs of its direction in the second pass
/// [inferred: twice keeps a knob on the figure that identifies it (a read time refitted to every read
/// job drifted 7% off the QD1 mean it is the only knob of, to ease a saturation other knobs own) while
/// the others still pull it where it moves them].
const DECIDING_WEIGHT: f64 = 2.0;

/// Steps by a factor of two the scan goes on through without a change in error before it gives up on a
/// direction: a cap 32x above where it binds still gets there [inferred: a base's command cost is within
/// 32x of the drive's (the presets' 200 ns to 5 us), and each step costs one simulation of its jobs].
const FLAT_STEPS: usize = 5;

/// Steps of the golden-section refinement after the bracketing scan (each narrows the bracket by 0.618).
const REFINE_STEPS: usize = 8;

/// Passes over the knobs: the first fits each to the jobs that decide it, in order; the second refits
/// each against every job of its direction ([`same_direction`]), on the figure it decides (a parameter
/// fitted early, such as the read time, also moves figures a later one decides, such as the saturation,
/// and a mixed job checks them all). A figure a
/// parameter does not decide (the 99th percentiles, for all but the read spread) weighs in only through
/// the rule that no step may raise the error of every job of its direction on every figure: it vetoes,
/// it does not pull. Of its direction, not of all jobs: a read parameter's step that the write jobs
/// vetoed (serving one die per chip at a time slows a base's writes, still too slow before their own
/// parameters are fitted) stayed out for good (`flin-eval` from `mqsim-mlc`: 4 jobs' reads 18% fast with
/// the write files, within 5% without them); the writes' parameters come after and fit the writes to it.
const PASSES: usize = 2;

/// Fit `knobs` (with their base values `base`) to `targets`. `progress(done, total)` is called after each
/// knob of each pass. The error over the jobs of a knob's direction (reads; or writes and mixes) never
/// rises from one step to the next: a value that fits its own jobs better but those jobs worse is not
/// taken.
pub fn fit(
    targets: &[Target],
    knobs: &[&Knob],
    base: &[f64],
    evaluate: &Evaluate,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<FitOutcome, String> {
    let mut settings: Vec<(&'static str, f64)> = knobs.iter().zip(base).map(|(k, &v)| (k.key, v)).collect();
    let mut evaluations = 0u64;
    let all_metrics = [Metric::Iops, Metric::Mean, Metric::P99];
    let total_error =
        |settings: &[(&'static str, f64)], chosen: &[(&Target, f64)], metrics: &[Metric], evals: &mut u64| {
            *evals += 1;
            let jobs: Vec<&Target> = chosen.iter().map(|(t, _)| *t).collect();
            let simulated = evaluate(settings, &jobs)?;
            Ok::<f64, String>(
                chosen.iter().zip(&simulated).map(|((t, weight), s)| weight * job_error(&t.measured, s, metrics)).sum(),
            )
        };
    let noise = |jobs: usize, metrics: usize| NOISE_PER_FIGURE * (jobs * metrics) as f64;
    let everything: Vec<(&Target, f64)> = targets.iter().map(|t| (t, 1.0)).collect();
    let error_before = total_error(&settings, &everything, &all_metrics, &mut evaluations)?;
    // The veto's error of the readers' and of the writers' jobs at the current settings, once simulated;
    // a step taken forgets both.
    let mut vetoes: [Option<f64>; 2] = [None, None];
    let mut parameters: Vec<Fitted> = knobs
        .iter()
        .zip(base)
        .map(|(knob, &base)| Fitted {
            key: knob.key,
            value: base,
            text: knob.value_text(base),
            base_text: knob.value_text(base),
            base,
            verdict: Verdict::NoData,
            from: targets.iter().filter(|t| (knob.decided_by)(&t.shape)).map(|t| t.source.clone()).collect(),
        })
        .collect();
    for pass in 0..PASSES {
        for (i, knob) in knobs.iter().enumerate() {
            progress(pass * knobs.len() + i, PASSES * knobs.len());
            if parameters[i].from.is_empty() {
                continue;
            }
            let deciding: Vec<&Target> = targets.iter().filter(|t| (knob.decided_by)(&t.shape)).collect();
            let direction = same_direction(&deciding, targets);
            // Past the first pass, a knob's own jobs count twice among those of its direction: the others
            // check it, its own decide it (the read time is the QD1 mean's, not the saturation's).
            let chosen: Vec<(&Target, f64)> = match pass {
                0 => deciding.iter().map(|t| (*t, 1.0)).collect(),
                _ => direction
                    .iter()
                    .map(|&t| (t, if deciding.iter().any(|d| std::ptr::eq(*d, t)) { DECIDING_WEIGHT } else { 1.0 }))
                    .collect(),
            };
            let metrics = knob.metrics;
            let threshold = noise(chosen.len(), metrics.len());
            // The knobs this step moves: this one, or the choices next to it (`group_at`).
            let Some(group) = group_at(knobs, i) else { continue };
            // A knob that holds its product with another (`Knob::keeps_product_with`) moves that one the
            // other way, if the data fits it.
            let partner = knob
                .keeps_product_with
                .and_then(|key| knobs.iter().position(|k| k.key == key))
                .filter(|&j| !parameters[j].from.is_empty());
            let with = |values: &[f64]| {
                let mut trial = settings.clone();
                for (&k, &value) in group.iter().zip(values) {
                    trial[k].1 = value;
                }
                if let Some(j) = partner.filter(|_| values[0] > 0.0) {
                    let product = settings[j].1 * settings[i].1;
                    trial[j].1 = (product / values[0]).clamp(knobs[j].min, knobs[j].max);
                }
                trial
            };
            // A trial value the device refuses (a page size its mapping unit does not divide) is the worst
            // fit, not the end of the calibration: the base's values ran above, so the input is not at fault.
            let mut error_at = |values: &[f64], evals: &mut u64| {
                Ok(total_error(&with(values), &chosen, metrics, evals).unwrap_or(f64::INFINITY))
            };
            // The values found, whether moving them changed the error, and whether they fit better.
            let (found, sensitive, better) = if knob.choices.is_empty() {
                let step = Step { knob, current: settings[i].1, chosen: &chosen, deciding: &deciding, threshold };
                let (value, sensitive, better) = search_number(&step, &mut error_at, &mut evaluations)?;
                (vec![value], sensitive, better)
            } else {
                let current: Vec<f64> = group.iter().map(|&c| settings[c].1).collect();
                let sizes: Vec<usize> = group.iter().map(|&c| knobs[c].choices.len()).collect();
                let (best, sensitive) = search_choices(&current, &sizes, threshold, &mut error_at, &mut evaluations)?;
                let better = best != current;
                (best, sensitive, better)
            };
            for &k in &group {
                if !parameters[k].from.is_empty() {
                    parameters[k].heard(sensitive);
                }
            }
            if !better {
                continue;
            }
            // Better for its own jobs: taken only if no worse for every job of its direction on every figure.
            let writer = deciding.iter().any(|t| t.shape.writes());
            let veto: Vec<(&Target, f64)> = direction.iter().map(|&t| (t, 1.0)).collect();
            let error_now = match vetoes[usize::from(writer)] {
                Some(error) => error,
                None => total_error(&settings, &veto, &all_metrics, &mut evaluations)?,
            };
            let trial = with(&found);
            let error_new = total_error(&trial, &veto, &all_metrics, &mut evaluations)?;
            let taken = error_new <= error_now + noise(veto.len(), all_metrics.len());
            if taken {
                for k in group.iter().copied().chain(partner) {
                    let value = trial[k].1;
                    settings[k].1 = value;
                    parameters[k].value = value;
                    parameters[k].text = knobs[k].value_text(value);
                }
                // The partner moved with the data: it is fitted, whatever its own search says.
                if let Some(j) = partner.filter(|&j| parameters[j].value != parameters[j].base) {
                    parameters[j].verdict = Verdict::Fitted;
                }
                vetoes = [None, None];
            }
            vetoes[usize::from(writer)] = Some(if taken { error_new } else { error_now });
        }
    }
    progress(PASSES * knobs.len(), PASSES * knobs.len());
    // What the fit simulated with is what the preset writes: a value moved off the base is a fitted one.
    for p in &parameters {
        assert!(p.value == p.base || p.verdict == Verdict::Fitted, "{} moved but not fitted: {p:?}", p.key);
    }
    let error_after = total_error(&settings, &everything, &all_metrics, &mut evaluations)?;
    Ok(FitOutcome { parameters, error_before, error_after, evaluations })
}

/// A number's step of the fit: the knob, its current value, the jobs it is fitted to (with their weights)
/// and those that decide it, and the change in error taken as none.
struct Step<'a> {
    knob: &'a Knob,
    current: f64,
    chosen: &'a [(&'a Target, f64)],
    deciding: &'a [&'a Target],
    threshold: f64,
}

/// Search a number's value (`error_at` of one value): the value found, whether moving it changed the
/// error, and whether it fits better than the current one. Each value is simulated once: the scan's
/// start is the current value, and the golden sections come back to points they have (the simulation is
/// deterministic).
fn search_number(step: &Step, error_at: &mut StepError, evaluations: &mut u64) -> Result<(f64, bool, bool), String> {
    let Step { knob, current, chosen, deciding, threshold } = *step;
    let mut seen: HashMap<u64, f64> = HashMap::new();
    let mut at = |value: f64, evals: &mut u64| {
        if let Some(&error) = seen.get(&same_value(value)) {
            return Ok(error);
        }
        let error = error_at(&[value], evals)?;
        seen.insert(same_value(value), error);
        Ok(error)
    };
    // A limit of 0 (none), or one less than a doubling above the highest figure measured, starts from that
    // figure: a limit there binds just so, and the scan's halvings from the base's would step over it (a
    // 4 GB/s base for a drive reading 3.2 GB/s). From a base's limit further above, the halvings get there
    // when each binds the jobs more; started at the peak, a limit would be tried where something else sets
    // their rate (a 4 GB/s write limit taken down to the 90 MB/s a drive's garbage collection allows).
    let peak = knob.limit_of.map(|peak| chosen.iter().map(|(t, _)| peak(t)).fold(0.0, f64::max));
    let start = match peak {
        Some(peak) if current == 0.0 || (current > peak && current < 2.0 * peak) => peak,
        _ => current,
    };
    // A limit below what a job of its measured cannot be the drive's: the job ran faster than it allows.
    // (Fitted against every job of its direction, a write bandwidth limit went to a third of the 3.2 GB/s
    // a 128 KiB writer measured, to slow writes a base's other parameters still made too fast.)
    let deciding_peak = knob.limit_of.map(|peak| deciding.iter().map(|t| peak(t)).fold(0.0, f64::max));
    let floor = deciding_peak.map_or(knob.min, |peak| knob.min.max(LIMIT_FLOOR * peak));
    let current_error = at(current, evaluations)?;
    let found = search(knob, start, floor, threshold, &mut at, evaluations)?;
    // A limit found well above what its jobs moved does not bind them: whatever moved their error there, it
    // was not the limit (a lower value raised it). Left as the base has it.
    let unbinding = deciding_peak.is_some_and(|peak| found.value > LIMIT_SLACK * peak);
    let better = !unbinding && found.error < current_error - threshold;
    // Moved off the current value by its start (a limit raised to its floor), a knob the scan then found
    // flat still changed its jobs' error: it is heard, and the preset writes it (a read bandwidth limit
    // taken from the base's 3.2 GB/s to the 6.6 GB/s floor, then flat against the link's rate, was kept out
    // of the preset as "not binding").
    let sensitive = found.sensitive || (found.error - current_error).abs() > threshold;
    Ok((found.value, sensitive && !unbinding, better))
}

/// The knobs a step at knob `i` moves: a number alone; choices next to each other together, at the first
/// one's place and on its jobs (they share them: `knobs::choice`), since each alone may change
/// nothing while another holds the drive back (a base serving one die per chip at a time gains nothing
/// from pairing any planes, and the other way round), and their combinations are few. None at a choice
/// its group's first moves.
fn group_at(knobs: &[&Knob], i: usize) -> Option<Vec<usize>> {
    let is_choice = |i: usize| !knobs[i].choices.is_empty();
    match (is_choice(i), i > 0 && is_choice(i - 1)) {
        (false, _) => Some(vec![i]),
        (true, false) => Some((i..knobs.len()).take_while(|&c| is_choice(c)).collect()),
        (true, true) => None,
    }
}

/// The targets that issue the same kind of I/O as `deciding` (a knob's deciding jobs): reads only, or
/// writes (mixed jobs are writers). The second pass refits a read parameter to every read job and a write
/// parameter to every job that writes, not to all: a base that cannot reach the drive's writes (another
/// write path: an SLC cache, another garbage collector) would otherwise pull the read parameters to
/// wherever they slow its writes most (one channel, 9 us per command: every read 80% off, as a trial of
/// `tlc-enterprise` from `tlc-consumer` did).
fn same_direction<'a>(deciding: &[&Target], targets: &'a [Target]) -> Vec<&'a Target> {
    let writer = deciding.iter().any(|t| t.shape.writes());
    targets.iter().filter(|t| t.shape.writes() == writer).collect()
}

/// The error of the values of a step's knobs (one number, or a combination of choices), counting the
/// simulation in the evaluations.
type StepError<'a> = dyn FnMut(&[f64], &mut u64) -> Result<f64, String> + 'a;

/// The search of choices together: every combination of `sizes` choices (each an index), from
/// `current`; the best, and whether any changed the error by more than `threshold`.
fn search_choices(
    current: &[f64],
    sizes: &[usize],
    threshold: f64,
    at: &mut StepError,
    evals: &mut u64,
) -> Result<(Vec<f64>, bool), String> {
    let start_error = at(current, evals)?;
    let mut best = (current.to_vec(), start_error);
    let mut sensitive = false;
    for combination in combinations(sizes).into_iter().filter(|c| c != current) {
        let error = at(&combination, evals)?;
        sensitive |= (error - start_error).abs() > threshold;
        if error < best.1 - threshold {
            best = (combination, error);
        }
    }
    Ok((best.0, sensitive))
}

/// Every combination of choices of `sizes` (each an index as the fit's value), the first choice's
/// index changing slowest.
fn combinations(sizes: &[usize]) -> Vec<Vec<f64>> {
    sizes.iter().fold(vec![Vec::new()], |partial, &size| {
        partial.iter().flat_map(|p| (0..size).map(move |i| [&p[..], &[i as f64]].concat())).collect()
    })
}

/// A value's key among those a search has simulated: the golden sections recompute a point they keep
/// from the bracket's ends, and it comes back a few ulps off; a value within a part in 10^12 is the
/// same setting (the scenario reads nothing finer) [inferred].
fn same_value(value: f64) -> u64 {
    if value == 0.0 {
        return 0;
    }
    let digits = 12 - value.abs().log10().floor() as i32;
    (value * 10f64.powi(digits)).round().to_bits()
}

/// What one parameter's search found.
struct Found {
    value: f64,
    error: f64,
    /// Moving the parameter changed the error by more than the noise.
    sensitive: bool,
}

/// One parameter's search, from `start`: a scan by factors of two in both directions while the error
/// falls, then golden sections in log space around the best point of the scan, never below `floor` (the
/// knob's bound, or higher). Changes in error below `threshold` are no change.
fn search(
    knob: &Knob,
    start: f64,
    floor: f64,
    threshold: f64,
    at: &mut dyn FnMut(f64, &mut u64) -> Result<f64, String>,
    evals: &mut u64,
) -> Result<Found, String> {
    let clamp = |v: f64| {
        let v = v.clamp(floor.min(knob.max), knob.max);
        if knob.power_of_two {
            v.log2().round().exp2()
        } else if knob.integer {
            v.round()
        } else {
            v
        }
    };
    let start = clamp(start);
    let start_error = at(start, evals)?;
    let mut best = (start, start_error);
    let mut sensitive = false;
    // The scan: each direction by doubling (halving) while it keeps improving, and across a plateau of
    // up to FLAT_STEPS steps that neither improve nor worsen (a cap far above what the jobs reach changes
    // nothing until it binds them).
    // A limit starts where its jobs' peak is (or from the base's) and has no plateau to cross on the way
    // to it: above the peak it binds nothing.
    let flat_steps = if knob.limit_of.is_some() { 0 } else { FLAT_STEPS };
    for factor in [2.0, 0.5] {
        let mut value = start;
        let mut flat = 0;
        loop {
            let next = clamp(value * factor);
            if next == value {
                break;
            }
            let error = at(next, evals)?;
            sensitive |= (error - start_error).abs() > threshold;
            if error < best.1 - threshold {
                best = (next, error);
                flat = 0;
            } else if error <= best.1 + threshold && flat < flat_steps {
                flat += 1;
            } else {
                break;
            }
            value = next;
        }
    }
    // A power of two has no values between the scan's steps. A limit the scan left where it started (its
    // jobs' peak, or the base's) binds them there or not at all: refining it would cost a write job's
    // simulations for a percent.
    if !sensitive || knob.power_of_two || (knob.limit_of.is_some() && best.0 == start) {
        return Ok(Found { value: best.0, error: best.1, sensitive });
    }
    // Golden sections between the neighbours of the best point of the scan.
    let (mut lo, mut hi) = (clamp(best.0 / 2.0).ln(), clamp(best.0 * 2.0).ln());
    const INVERSE_PHI: f64 = 0.618_033_988_749_895;
    for _ in 0..REFINE_STEPS {
        let a = hi - INVERSE_PHI * (hi - lo);
        let b = lo + INVERSE_PHI * (hi - lo);
        let (va, vb) = (clamp(a.exp()), clamp(b.exp()));
        let (ea, eb) = (at(va, evals)?, at(vb, evals)?);
        for (v, e) in [(va, ea), (vb, eb)] {
            if e < best.1 {
                best = (v, e);
            }
        }
        if ea <= eb {
            hi = b;
        } else {
            lo = a;
        }
        if knob.integer && (hi.exp() - lo.exp()) < 1.0 {
            break;
        }
    }
    Ok(Found { value: best.0, error: best.1, sensitive })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::knobs::knob;
    use crate::calibrate::Pattern;

    fn shape(read_percent: u8, block_size: u64, iodepth: u32) -> JobShape {
        JobShape { pattern: Pattern::Random, read_percent, block_size, iodepth, numjobs: 1 }
    }

    /// A closed-form drive: a QD-deep read of `bs` takes `read_ns` plus transfer, IOPS = depth / latency up
    /// to `cap`; the fit must find `read_ns` and `cap` from figures made with other values.
    fn closed_form(settings: &[(&'static str, f64)], targets: &[&Target]) -> Result<Vec<JobFigures>, String> {
        let shapes: Vec<JobShape> = targets.iter().map(|t| t.shape).collect();
        Ok(closed_form_shapes(settings, &shapes))
    }

    fn closed_form_shapes(settings: &[(&'static str, f64)], shapes: &[JobShape]) -> Vec<JobFigures> {
        let get = |k: &str| settings.iter().find(|(key, _)| *key == k).map(|s| s.1).unwrap();
        let (read_ns, cap) = (get("device.flash.read_ns"), get("device.host_interface.max_read_iops"));
        shapes
            .iter()
            .map(|s| {
                let iops = (s.outstanding() as f64 * 1e9 / read_ns).min(cap);
                let mean = s.outstanding() as f64 * 1e9 / iops;
                JobFigures { read: Some(Figures { iops, mean_ns: mean, p99_ns: Some(mean * 1.5) }), write: None }
            })
            .collect()
    }

    #[test]
    fn recovers_a_closed_form_drive_and_leaves_unconstrained_keys() {
        let truth = [("device.flash.read_ns", 12_000.0), ("device.host_interface.max_read_iops", 400_000.0)];
        let shapes = [shape(100, 4096, 1), shape(100, 4096, 4), shape(100, 4096, 32), shape(100, 4096, 64)];
        let measured = closed_form_shapes(&truth, &shapes);
        let targets: Vec<Target> = shapes
            .iter()
            .zip(measured)
            .enumerate()
            .map(|(i, (s, m))| Target {
                shape: *s,
                measured: m,
                source: format!("t.json: job{i}"),
                percentiles: LatencyKind::Total,
                runtime_ns: 1_000_000_000,
            })
            .collect();
        let cap = Knob {
            key: "device.host_interface.max_read_iops",
            what: "read IOPS limit",
            min: 1e4,
            max: 1e8,
            integer: false,
            power_of_two: false,
            decided_by: |s| s.outstanding() >= 32,
            metrics: &[Metric::Iops],
            limit_of: Some(|t| t.measured.read.map_or(0.0, |r| r.iops)),
            requires: None,
            keeps_product_with: None,
            choices: &[],
        };
        let knobs = [knob("device.flash.read_ns").unwrap(), &cap, knob("device.flash.program_ns").unwrap()];
        // The base has no cap, one 25% above the drive's (the scan's halvings from it would step over the
        // drive's), or one 5x above (each halving binds the simulated drive more, as the measured one is).
        for base_cap in [0.0, 500_000.0, 2e6] {
            let outcome = fit(&targets, &knobs, &[30_000.0, base_cap, 1e6], &closed_form, &mut |_, _| {}).unwrap();
            let p = &outcome.parameters;
            assert!((p[0].value / 12_000.0 - 1.0).abs() < 0.01, "{p:?}");
            assert!((p[1].value / 400_000.0 - 1.0).abs() < 0.01, "base cap {base_cap}: {p:?}");
            assert_eq!((p[0].verdict, p[1].verdict), (Verdict::Fitted, Verdict::Fitted));
            // No write job: the program time stays where it was, and says so.
            assert_eq!((p[2].value, p[2].verdict), (1e6, Verdict::NoData));
            assert!(p[2].from.is_empty());
            assert!(outcome.error_after < 1e-3 && outcome.error_before > 1.0, "{outcome:?}");
        }
    }

    #[test]
    fn the_scan_crosses_a_plateau_where_a_cap_does_not_bind_yet() {
        // Reads at QD8 of 12 us run at 667K IOPS unless capped; the drive caps them at 400K. From a cap of
        // 20M the first four halvings change nothing (they stay above 667K): the scan must go on through.
        let truth = [("device.flash.read_ns", 12_000.0), ("device.host_interface.max_read_iops", 400_000.0)];
        let shapes = [shape(100, 4096, 8)];
        let measured = closed_form_shapes(&truth, &shapes);
        let target = Target {
            shape: shapes[0],
            measured: measured[0],
            source: "t.json: qd8".into(),
            percentiles: LatencyKind::Total,
            runtime_ns: 1_000_000_000,
        };
        let cap = Knob {
            key: "device.host_interface.max_read_iops",
            what: "read IOPS cap",
            min: 1e4,
            max: 1e8,
            integer: false,
            power_of_two: false,
            decided_by: |s| s.outstanding() >= 8,
            metrics: &[Metric::Iops],
            limit_of: None,
            requires: None,
            keeps_product_with: None,
            choices: &[],
        };
        let read = knob("device.flash.read_ns").unwrap();
        let outcome = fit(&[target], &[read, &cap], &[12_000.0, 2e7], &closed_form, &mut |_, _| {}).unwrap();
        let p = &outcome.parameters;
        assert!((p[1].value / 400_000.0 - 1.0).abs() < 0.01, "{p:?}");
        assert_eq!(p[1].verdict, Verdict::Fitted);
    }

    fn target(shape: JobShape, measured: JobFigures, name: &str) -> Target {
        Target {
            shape,
            measured,
            source: format!("t.json: {name}"),
            percentiles: LatencyKind::Total,
            runtime_ns: 1_000_000_000,
        }
    }

    #[test]
    fn a_limit_is_not_fitted_below_what_a_job_of_its_measured() {
        // QD64 runs at the drive's 400K cap; QD4 measured 80K where 12 us reads give 333K. Refitted against
        // both (the second pass), a cap of ~234K eases QD4 more than it costs QD64, and the veto lets it
        // (error 3.6 against 5.1): but the drive ran QD64 at 400K, so its cap is not below that.
        let truth = [("device.flash.read_ns", 12_000.0), ("device.host_interface.max_read_iops", 400_000.0)];
        let deep = closed_form_shapes(&truth, &[shape(100, 4096, 64)])[0];
        let slow = JobFigures {
            read: Some(Figures { iops: 80e3, mean_ns: 4e9 / 80e3, p99_ns: Some(6e9 / 80e3) }),
            write: None,
        };
        let targets = [target(shape(100, 4096, 64), deep, "qd64"), target(shape(100, 4096, 4), slow, "qd4")];
        let cap = knob("device.host_interface.max_read_iops").unwrap();
        let fixed_read = Knob { decided_by: |_| false, ..*knob("device.flash.read_ns").unwrap() };
        let outcome = fit(&targets, &[&fixed_read, cap], &[12_000.0, 0.0], &closed_form, &mut |_, _| {}).unwrap();
        let fitted = outcome.parameters[1].value;
        assert!((0.97 * 400e3..1.01 * 400e3).contains(&fitted), "{outcome:?}");
    }

    #[test]
    fn a_limit_raised_to_its_floor_is_fitted_though_flat_above_it() {
        // The drive ran QD64 at 400K; the base caps reads at 200K and its read time (fixed here) allows
        // 300K. Raised to its floor (388K) the cap no longer binds, and above it nothing changes: flat, but
        // moved, so fitted and written, not left out as "not binding" while the fit ran with it.
        let measured = closed_form_shapes(
            &[("device.flash.read_ns", 12_000.0), ("device.host_interface.max_read_iops", 400e3)],
            &[shape(100, 4096, 64)],
        )[0];
        let targets = [target(shape(100, 4096, 64), measured, "qd64")];
        let cap = knob("device.host_interface.max_read_iops").unwrap();
        let fixed_read = Knob { decided_by: |_| false, ..*knob("device.flash.read_ns").unwrap() };
        let slow_read = 64e9 / 300e3;
        let outcome = fit(&targets, &[&fixed_read, cap], &[slow_read, 200e3], &closed_form, &mut |_, _| {}).unwrap();
        let p = &outcome.parameters[1];
        assert!(p.value >= LIMIT_FLOOR * 400e3 && p.verdict == Verdict::Fitted, "{p:?}");
    }

    #[test]
    fn a_read_time_moves_with_its_spread_held_wide_as_it_is() {
        // QD1 reads: 13 us of controller and link, the read time, and its spread: p99 = mean + 2.33 sd; the
        // drive's are 3 us and cv 0.3. From
        // a fit stuck at 0.134 us and cv 2 (a sd of 0.27 us), a read time raised alone to 3 us takes a sd of
        // 6 us and a p99 far past the measured one, and the veto refuses it; cv 2 at 0.134 us is flat.
        let spread_form = |settings: &[(&'static str, f64)], targets: &[&Target]| {
            let get = |k: &str| settings.iter().find(|(key, _)| *key == k).map(|s| s.1).unwrap();
            let (read_ns, cv) = (get("device.flash.read_ns"), get("device.variability.read_cv"));
            let mean = 13_000.0 + read_ns;
            let p99 = mean + 2.33 * cv * read_ns;
            Ok(targets
                .iter()
                .map(|_| JobFigures {
                    read: Some(Figures { iops: 1e9 / mean, mean_ns: mean, p99_ns: Some(p99) }),
                    write: None,
                })
                .collect())
        };
        let measured = JobFigures {
            read: Some(Figures { iops: 1e9 / 16_000.0, mean_ns: 16_000.0, p99_ns: Some(16_000.0 + 2.33 * 900.0) }),
            write: None,
        };
        let targets = [target(shape(100, 4096, 1), measured, "qd1")];
        let knobs = [knob("device.flash.read_ns").unwrap(), knob("device.variability.read_cv").unwrap()];
        let outcome = fit(&targets, &knobs, &[134.0, 2.0], &spread_form, &mut |_, _| {}).unwrap();
        let p = &outcome.parameters;
        assert!((p[0].value / 3000.0 - 1.0).abs() < 0.02, "{p:?}");
        assert!((p[1].value / 0.3 - 1.0).abs() < 0.05, "{p:?}");
        // Not with a spread the data does not fit: the read time moves alone.
        let unfitted = Knob { decided_by: |_| false, ..*knobs[1] };
        let outcome = fit(&targets, &[knobs[0], &unfitted], &[134.0, 0.3], &spread_form, &mut |_, _| {}).unwrap();
        assert_eq!(outcome.parameters[1].value, 0.3);
        assert!((outcome.parameters[0].value / 3000.0 - 1.0).abs() < 0.05, "{outcome:?}");
    }

    #[test]
    fn a_value_a_few_ulps_off_is_the_same_setting_and_a_part_in_a_billion_is_not() {
        let kept = 1_177_778_283.330_362_f64;
        assert_eq!(same_value(kept), same_value(1_177_778_283.330_357_8));
        assert_ne!(same_value(kept), same_value(kept * (1.0 + 1e-9)));
        assert_eq!(same_value(0.25), same_value(0.25 + 1e-17));
        assert_ne!(same_value(0.25), same_value(0.250_000_001));
        assert_ne!(same_value(0.0), same_value(1e-3));
    }

    #[test]
    fn choices_next_to_each_other_move_together_and_numbers_alone() {
        let keys = [
            "device.flash.read_ns",
            "device.flash.one_die_per_chip",
            "device.flash.channel_arbitration",
            "device.flash.channel_mts",
            "device.slc.enabled",
            "device.ftl.gc_policy",
            "device.flash.program_ns",
        ];
        let knobs: Vec<&Knob> = keys.iter().map(|k| knob(k).unwrap()).collect();
        let groups: Vec<Option<Vec<usize>>> = (0..knobs.len()).map(|i| group_at(&knobs, i)).collect();
        assert_eq!(
            groups,
            [Some(vec![0]), Some(vec![1, 2]), None, Some(vec![3]), Some(vec![4, 5]), None, Some(vec![6])]
        );
    }

    #[test]
    fn choices_are_searched_together() {
        // Either switch alone slows the drive; both together make it 1.5x as fast, as measured. A search of
        // one at a time would keep neither.
        let rate = |settings: &[(&'static str, f64)]| match (settings[0].1 as u8, settings[1].1 as u8) {
            (0, 0) => 100.0,
            (1, 1) => 150.0,
            _ => 90.0,
        };
        let figures = |iops: f64| JobFigures {
            read: Some(Figures { iops, mean_ns: 4e10 / iops, p99_ns: Some(6e10 / iops) }),
            write: None,
        };
        let evaluate = |settings: &[(&'static str, f64)], targets: &[&Target]| {
            Ok(targets.iter().map(|_| figures(rate(settings))).collect())
        };
        let switch = |key| Knob {
            key,
            what: "a switch",
            min: 0.0,
            max: 1.0,
            integer: true,
            power_of_two: false,
            decided_by: |s| s.outstanding() >= 2,
            metrics: &[Metric::Iops, Metric::P99],
            limit_of: None,
            requires: None,
            keeps_product_with: None,
            choices: &["false", "true"],
        };
        let (a, b) = (switch("device.a"), switch("device.b"));
        let target = Target {
            shape: shape(100, 4096, 4),
            measured: figures(150.0),
            source: "t.json: qd4".into(),
            percentiles: LatencyKind::Total,
            runtime_ns: 1_000_000_000,
        };
        let outcome = fit(&[target], &[&a, &b], &[0.0, 0.0], &evaluate, &mut |_, _| {}).unwrap();
        let values: Vec<f64> = outcome.parameters.iter().map(|p| p.value).collect();
        assert_eq!(values, [1.0, 1.0], "{outcome:?}");
        assert!(outcome.parameters.iter().all(|p| p.verdict == Verdict::Fitted));
        assert!(outcome.error_after < 1e-9, "{outcome:?}");
        assert_eq!(combinations(&[2, 3]).len(), 6);
        assert_eq!(combinations(&[2, 3])[5], [1.0, 2.0]);
    }

    #[test]
    fn a_power_of_two_knob_takes_only_powers_of_two_and_a_refused_value_is_the_worst_fit() {
        // A 128 KiB write programs 128 KiB / page_bytes pages, at 1 ms each; pages under 4 KiB are refused.
        let figures = |page: f64, bs: u64| {
            let iops = 1e3 * page / bs as f64;
            JobFigures { read: None, write: Some(Figures { iops, mean_ns: 32e9 / iops, p99_ns: None }) }
        };
        let evaluate = |settings: &[(&'static str, f64)], targets: &[&Target]| {
            let page = settings[0].1;
            if page < 4096.0 {
                return Err("device.flash.page_bytes: refused".to_string());
            }
            Ok(targets.iter().map(|t| figures(page, t.shape.block_size)).collect())
        };
        let page = knob("device.flash.page_bytes").unwrap();
        for (truth, base) in [(16384.0, 8192.0), (4096.0, 32768.0)] {
            let target = Target {
                shape: shape(0, 131072, 32),
                measured: figures(truth, 131072),
                source: "w.json: write".into(),
                percentiles: LatencyKind::Total,
                runtime_ns: 1_000_000_000,
            };
            let outcome = fit(&[target], &[page], &[base], &evaluate, &mut |_, _| {}).unwrap();
            assert_eq!(outcome.parameters[0].value, truth, "{outcome:?}");
            assert_eq!(outcome.parameters[0].verdict, Verdict::Fitted);
        }
    }

    #[test]
    fn error_is_symmetric_in_ratio_and_counts_a_missing_direction() {
        let f = |iops| Some(Figures { iops, mean_ns: 10.0, p99_ns: None });
        let m = JobFigures { read: f(100.0), write: None };
        let high = job_error(&m, &JobFigures { read: f(110.0), write: None }, &[Metric::Iops]);
        let low = job_error(&m, &JobFigures { read: f(100.0 / 1.1), write: None }, &[Metric::Iops]);
        assert!((high - low).abs() < 1e-12 && high > 0.0);
        assert!(job_error(&m, &JobFigures::default(), &[Metric::Iops]) >= 100.0);
    }
}
