//! `rate_process = "onoff"`: an interrupted Poisson process (IPP), the two-state Markov-modulated Poisson
//! process whose OFF state has rate 0. ON and OFF periods are exponential; during ON, arrivals are Poisson at
//! `burst_factor` times the flow's mean rate, and the flow is ON a fraction `1 / burst_factor` of the time,
//! so the long-run rate is the mean rate.

use rand::RngExt;
use rand_distr::{Distribution, Exp};

use crate::engine::{SimRng, Time};

/// Default `burst_on`: mean length of an ON period of an on/off flow.
pub(super) const DEFAULT_BURST_ON_NS: Time = 100_000_000;

/// The random stream a burst group's ON and OFF periods are drawn from: every member walks it identically.
pub(super) fn burst_group_stream(group: &str) -> String {
    format!("burst-group:{group}")
}

/// A gap of `ns` nanoseconds as the open-loop clock schedules it: rounded to whole ns, at least 1.
pub(crate) fn gap_ns(ns: f64) -> Time {
    ns.round().max(1.0) as Time
}

/// Where an IPP is: ON or OFF, and the ns left in that period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Phase {
    on: bool,
    left_ns: Time,
}

/// The arrival clock of an on/off flow: successive gaps between arrivals, in ns.
#[derive(Debug, Clone)]
pub struct OnOffClock {
    /// Gaps between arrivals during ON: mean `1 / (burst_factor × rate)`.
    on_gap: Exp<f64>,
    /// ON and OFF period lengths; `None` when `burst_factor` is 1 (always ON: plain Poisson, no period
    /// draws).
    periods: Option<(Exp<f64>, Exp<f64>)>,
    /// Stationary probability of ON, `1 / burst_factor`.
    p_on: f64,
    /// `None` until the first gap (the start state is drawn then).
    phase: Option<Phase>,
    /// Where the start state and period lengths come from when they are shared with other flows (a
    /// `burst_group`): a stream every member walks identically, so their ON periods coincide. `None`: the
    /// flow's own arrivals stream.
    schedule: Option<SimRng>,
}

impl OnOffClock {
    /// A clock of mean rate `1e9 / interval_ns` per second, ON rate `burst_factor` times that, and ON periods
    /// of mean `mean_on_ns` (OFF periods: `mean_on_ns × (burst_factor − 1)`). `None` unless `interval_ns` and
    /// `mean_on_ns` are > 0 and `burst_factor` is a finite number >= 1.
    pub fn new(interval_ns: f64, burst_factor: f64, mean_on_ns: f64) -> Option<OnOffClock> {
        if !(interval_ns > 0.0 && mean_on_ns > 0.0 && burst_factor >= 1.0 && burst_factor.is_finite()) {
            return None;
        }
        // 1 / (interval / 1.0) is 1 / interval exactly: with burst_factor 1 the gaps are the Poisson ones.
        let on_gap = Exp::new(1.0 / (interval_ns / burst_factor)).ok()?;
        let periods = if burst_factor == 1.0 {
            None
        } else {
            // A huge factor can make the mean OFF period infinite: rate 0, OFF for ever.
            let off = mean_on_ns * (burst_factor - 1.0);
            Some((Exp::new(1.0 / mean_on_ns).ok()?, Exp::new(1.0 / off).ok()?))
        };
        Some(OnOffClock { on_gap, periods, p_on: 1.0 / burst_factor, phase: None, schedule: None })
    }

    /// Draw the start state and the period lengths from `schedule` instead of the arrivals stream: clocks
    /// given the same schedule stream (and the same factor and ON mean) have the same ON periods.
    pub fn with_schedule(mut self, schedule: SimRng) -> OnOffClock {
        self.schedule = Some(schedule);
        self
    }

    /// The gap from the previous arrival (or the flow's start, on the first call) to the next arrival. The
    /// caller places each arrival exactly this gap after the previous one. The first call draws the start
    /// state (ON with probability `1 / burst_factor`) and a fresh length for the first period (memoryless).
    /// Then: while ON with `R` ns left, a gap `g` is drawn; if `g < R` the arrival is `g` away, else the
    /// clock jumps to the period's end, draws an OFF period and a new ON period, and redraws `g`. Past
    /// `horizon` ns (when the flow stops) it walks no further periods and returns `Time::MAX`.
    pub fn next_gap(&mut self, rng: &mut SimRng, horizon: Time) -> Time {
        if self.periods.is_none() {
            return gap_ns(self.on_gap.sample(rng));
        }
        let mut phase = match self.phase {
            Some(phase) => phase,
            None => {
                let on = self.schedule.as_mut().unwrap_or(rng).random::<f64>() < self.p_on;
                self.period(on, rng)
            }
        };
        let mut waited: Time = 0;
        loop {
            if phase.on {
                let gap = gap_ns(self.on_gap.sample(rng));
                if gap < phase.left_ns {
                    self.phase = Some(Phase { on: true, left_ns: phase.left_ns - gap });
                    return waited.saturating_add(gap);
                }
            }
            waited = waited.saturating_add(phase.left_ns);
            if waited >= horizon {
                return Time::MAX;
            }
            phase = self.period(!phase.on, rng);
        }
    }

    /// A fresh ON or OFF period, its length drawn from the shared schedule if there is one, else from `rng`.
    fn period(&mut self, on: bool, rng: &mut SimRng) -> Phase {
        let (on_len, off_len) = self.periods.expect("periods exist when the factor is above 1");
        let rng = self.schedule.as_mut().unwrap_or(rng);
        let length = if on { on_len.sample(rng) } else { off_len.sample(rng) };
        Phase { on, left_ns: length.round() as Time }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream_rng;

    #[test]
    fn burst_factor_one_is_the_poisson_clock_draw_for_draw() {
        // Always ON: no start-state or period draws, so the same stream gives the Poisson path's gaps exactly
        // (Exp of rate 1 / interval, rounded to ns, at least 1).
        let interval_ns = 1e9 / 10_000.0;
        let mut clock = OnOffClock::new(interval_ns, 1.0, 1e6).unwrap();
        assert!(clock.periods.is_none());
        let (mut a, mut b) = (stream_rng(3, "flow:f"), stream_rng(3, "flow:f"));
        let poisson = Exp::new(1.0 / interval_ns).unwrap();
        for _ in 0..100_000 {
            assert_eq!(clock.next_gap(&mut a, Time::MAX), gap_ns(poisson.sample(&mut b)));
        }
    }

    #[test]
    fn gaps_have_the_mean_and_squared_coefficient_of_variation_of_the_ipp() {
        // Every arrival comes in ON and ON is memoryless, so an IPP is a renewal process, and the squared
        // coefficient of variation of its gaps is its index of dispersion for long windows (Cox & Lewis),
        // IDC(∞) = 1 + 2 λ a / (a + b)² with λ the ON rate, a (b) the ON->OFF (OFF->ON) rates: 65 for this
        // (10,000/s, factor 5, 1 ms ON) clock. Over 400,000 gaps the mean's sd is sqrt(65 / n) = 1.3% and the
        // second moment's ~3% (the gaps that span OFF periods dominate it): bounds 5% and 12%.
        let (rate, factor, on_ns) = (10_000.0, 5.0, 1e6);
        let mut clock = OnOffClock::new(1e9 / rate, factor, on_ns).unwrap();
        let mut rng = stream_rng(1, "flow:f:arrivals");
        let n = 400_000;
        let gaps: Vec<f64> = (0..n).map(|_| clock.next_gap(&mut rng, Time::MAX) as f64 / 1e9).collect();
        let mean = gaps.iter().sum::<f64>() / n as f64;
        let scv = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1) as f64 / (mean * mean);
        let (lambda, a, b) = (factor * rate, 1e9 / on_ns, 1e9 / (on_ns * (factor - 1.0)));
        let idc = 1.0 + 2.0 * lambda * a / (a + b).powi(2);
        println!("mean gap {:.2} us; squared coefficient of variation {scv:.2} vs IDC(∞) {idc:.2}", mean * 1e6);
        assert!((mean * rate - 1.0).abs() < 0.05, "mean gap {mean} s");
        assert!((scv / idc - 1.0).abs() < 0.12, "squared coefficient of variation {scv} vs {idc}");
    }

    #[test]
    fn a_clock_starts_on_with_probability_one_over_the_factor() {
        // Periods of ~1000 s: a clock that starts ON fires within 1 ms, one that starts OFF does not. Over
        // 20,000 fresh clocks of factor 4 a quarter start ON (4 sd of the binomial share: 1.2%).
        let mut rng = stream_rng(9, "t");
        let n = 20_000;
        let on = (0..n)
            .filter(|_| OnOffClock::new(1_000.0, 4.0, 1e12).unwrap().next_gap(&mut rng, Time::MAX) < 1_000_000)
            .count();
        let share = on as f64 / n as f64;
        assert!((share - 0.25).abs() < 4.0 * (0.25 * 0.75 / n as f64).sqrt(), "{share}");
    }

    #[test]
    fn the_clock_walks_no_period_past_its_horizon() {
        // Mean rate 10^-6/s and factor 10^6: ON rate 1/s, ON periods 1 ns, OFF ~1 ms. An ON period holds an
        // arrival with probability ~10^-9 (its gap must round to 1 ns and the period to 2 ns or more), so
        // walking to the next arrival would take ~10^9 periods; with a 1 s horizon it stops after ~1,000.
        let mut clock = OnOffClock::new(1e15, 1e6, 1.0).unwrap();
        let mut rng = stream_rng(1, "t");
        assert_eq!(clock.next_gap(&mut rng, 1_000_000_000), Time::MAX);
    }

    #[test]
    fn odd_parameters_give_no_clock_or_one_that_never_fires() {
        for (interval, factor, on) in
            [(0.0, 2.0, 1e6), (1e3, 0.5, 1e6), (1e3, f64::NAN, 1e6), (1e3, f64::INFINITY, 1e6), (1e3, 2.0, 0.0)]
        {
            assert!(OnOffClock::new(interval, factor, on).is_none(), "{interval} {factor} {on}");
        }
        // A factor so large the mean OFF period overflows: the clock starts OFF for ever (the first gap is
        // the end of time), without a panic.
        let mut clock = OnOffClock::new(1e9, 1e308, 1e308).unwrap();
        assert_eq!(clock.next_gap(&mut stream_rng(1, "t"), Time::MAX), Time::MAX);
    }

    /// The 1 ms bins of the first 10 s in which `clock` has an arrival.
    fn busy_bins(mut clock: OnOffClock, mut arrivals: SimRng) -> std::collections::BTreeSet<Time> {
        let (mut at, mut bins) = (0, std::collections::BTreeSet::new());
        loop {
            at += clock.next_gap(&mut arrivals, Time::MAX);
            if at >= 10_000_000_000 {
                return bins;
            }
            bins.insert(at / 1_000_000);
        }
    }

    #[test]
    fn clocks_with_one_schedule_are_on_together() {
        // Factor 10, 5 ms ON periods: each clock is ON 10% of the time. A (10,000/s) fires ~100 times in an
        // ON ms, B (1,000/s) ~10. Given the same schedule stream, B's busy bins are A's (but for bins where
        // an ON period starts or ends, a few percent at 5 ms periods); each with its own schedule, B's bins
        // meet A's about as often as A is ON (10%, plus the edges).
        let clock = |rate: f64| OnOffClock::new(1e9 / rate, 10.0, 5e6).unwrap();
        let shared = |seed| clock(10_000.0).with_schedule(stream_rng(seed, "burst-group:g"));
        let overlap = |a: &std::collections::BTreeSet<Time>, b: &std::collections::BTreeSet<Time>| {
            b.intersection(a).count() as f64 / b.len() as f64
        };
        let a = busy_bins(shared(1), stream_rng(1, "flow:a:arrivals"));
        let b =
            busy_bins(clock(1_000.0).with_schedule(stream_rng(1, "burst-group:g")), stream_rng(1, "flow:b:arrivals"));
        let b_alone = busy_bins(clock(1_000.0), stream_rng(1, "flow:b:arrivals"));
        let (together, apart) = (overlap(&a, &b), overlap(&a, &b_alone));
        println!("B's busy ms that are A's: {together:.3} in one group, {apart:.3} apart ({} of 10,000 A)", a.len());
        assert!(b.len() > 500 && b_alone.len() > 500, "{} {}", b.len(), b_alone.len());
        assert!(together > 0.95, "{together}");
        assert!(apart < 0.3, "{apart}");
        // The schedule is a function of its stream alone: another seed's group is ON at other times.
        let other = busy_bins(shared(2), stream_rng(1, "flow:a:arrivals"));
        assert!(overlap(&other, &b) < 0.3);
    }
}
