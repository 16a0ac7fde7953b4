//! Service-time variability inside the drive: a real device's QD1 latency has a spread and a tail of its
//! own (controller firmware, media read time, read retries, program time), not only what contention adds.
//!
//! Every draw comes from the device's own seeded stream in event order, so a seed reproduces a run exactly.
//! Disabled (`device.variability.enabled = false`), every time is its configured mean.

use rand::RngExt;
use rand_distr::{Distribution, Exp, Gamma};

use crate::config::device::VariabilityConfig;
use crate::engine::{stream_rng, SimRng, Time};

/// Most read retries one page read takes (firmware gives up and uses its strongest decoding after a few).
const MAX_READ_RETRIES: u32 = 8;

/// Most (mean, cv) pairs whose gamma distributions are kept (a drive draws around a handful of means: its
/// controller, read and program times per page type); others are built per draw.
const MAX_CACHED_GAMMAS: usize = 16;

pub struct Variability {
    rng: SimRng,
    enabled: bool,
    controller_cv: f64,
    stall_probability: f64,
    stall: Option<Exp<f64>>,
    read_cv: f64,
    program_cv: f64,
    retry_probability: f64,
    /// The gamma distributions drawn from so far, by mean and cv's bits: building one takes a square root and
    /// divisions per draw, and a kept one draws the same samples.
    gammas: Vec<(Time, u64, Gamma<f64>)>,
}

impl Variability {
    pub fn new(cfg: &VariabilityConfig, seed: u64) -> Self {
        let stall_mean = cfg.firmware_stall_mean_ns.0 as f64;
        Variability {
            rng: stream_rng(seed, "device:variability"),
            enabled: cfg.enabled,
            controller_cv: cfg.controller_cv,
            stall_probability: cfg.firmware_stall_probability,
            stall: (stall_mean > 0.0).then(|| Exp::new(1.0 / stall_mean).expect("positive rate")),
            read_cv: cfg.read_cv,
            program_cv: cfg.program_cv,
            retry_probability: cfg.read_retry_probability,
            gammas: Vec::with_capacity(MAX_CACHED_GAMMAS),
        }
    }

    /// A gamma-distributed time with mean `mean` and coefficient of variation `cv` (0: exactly `mean`).
    fn spread(&mut self, mean: Time, cv: f64) -> Time {
        if !self.enabled || cv <= 0.0 || mean == 0 {
            return mean;
        }
        let gamma = self.gamma(mean, cv);
        gamma.sample(&mut self.rng).round() as Time
    }

    /// The gamma distribution of mean `mean` and coefficient of variation `cv`.
    fn gamma(&mut self, mean: Time, cv: f64) -> Gamma<f64> {
        let bits = cv.to_bits();
        if let Some(&(_, _, gamma)) = self.gammas.iter().find(|&&(m, c, _)| m == mean && c == bits) {
            return gamma;
        }
        let shape = 1.0 / (cv * cv);
        let gamma = Gamma::new(shape, mean as f64 / shape).expect("shape and scale are positive");
        if self.gammas.len() < MAX_CACHED_GAMMAS {
            self.gammas.push((mean, bits, gamma));
        }
        gamma
    }

    /// The controller's processing time for one command: spread around `mean`, plus a firmware stall now
    /// and then.
    pub fn controller_ns(&mut self, mean: Time) -> Time {
        let mut ns = self.spread(mean, self.controller_cv);
        if self.enabled && self.stall_probability > 0.0 && self.rng.random_bool(self.stall_probability) {
            if let Some(stall) = self.stall {
                ns += stall.sample(&mut self.rng).round() as Time;
            }
        }
        ns
    }

    /// A media read's array time: spread around `read_ns`, plus `read_ns` again for each read retry.
    pub fn read_ns(&mut self, read_ns: Time) -> Time {
        let mut ns = self.spread(read_ns, self.read_cv);
        if self.enabled && self.retry_probability > 0.0 {
            let mut retries = 0;
            while retries < MAX_READ_RETRIES && self.rng.random_bool(self.retry_probability) {
                retries += 1;
                ns += self.spread(read_ns, self.read_cv);
            }
        }
        ns
    }

    /// A program's array time, spread around `program_ns`.
    pub fn program_ns(&mut self, program_ns: Time) -> Time {
        self.spread(program_ns, self.program_cv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(enabled: bool) -> VariabilityConfig {
        VariabilityConfig {
            enabled,
            controller_cv: 0.25,
            firmware_stall_probability: 0.01,
            firmware_stall_mean_ns: crate::config::units::Duration(20_000),
            read_cv: 0.1,
            program_cv: 0.1,
            read_retry_probability: 0.05,
        }
    }

    #[test]
    fn disabled_gives_every_mean_exactly() {
        let mut v = Variability::new(&config(false), 1);
        for _ in 0..1000 {
            assert_eq!(v.controller_ns(1_800), 1_800);
            assert_eq!(v.read_ns(3_000), 3_000);
            assert_eq!(v.program_ns(100_000), 100_000);
        }
    }

    /// Keeping a gamma distribution per (mean, cv) draws what building one per draw drew, past the cache's
    /// size too (those means are built per draw).
    #[test]
    fn kept_distributions_draw_the_same_samples_as_fresh_ones() {
        let cfg = VariabilityConfig { firmware_stall_probability: 0.0, read_retry_probability: 0.0, ..config(true) };
        let mut v = Variability::new(&cfg, 11);
        let mut rng = stream_rng(11, "device:variability");
        let means: Vec<Time> = (0..2 * MAX_CACHED_GAMMAS as Time).map(|i| 1_000 + 37 * i).collect();
        for round in 0..50 {
            for (i, &mean) in means.iter().enumerate() {
                let (got, cv) = match (round + i) % 3 {
                    0 => (v.controller_ns(mean), cfg.controller_cv),
                    1 => (v.read_ns(mean), cfg.read_cv),
                    _ => (v.program_ns(mean), cfg.program_cv),
                };
                let shape = 1.0 / (cv * cv);
                let fresh = Gamma::new(shape, mean as f64 / shape).unwrap();
                assert_eq!(got, fresh.sample(&mut rng).round() as Time, "round {round}, mean {mean}");
            }
        }
        assert_eq!(v.gammas.len(), MAX_CACHED_GAMMAS);
    }

    #[test]
    fn draws_have_the_configured_moments_and_are_reproducible() {
        let n = 200_000;
        let mut v = Variability::new(&config(true), 7);
        let samples: Vec<f64> = (0..n).map(|_| v.program_ns(100_000) as f64).collect();
        let mean = samples.iter().sum::<f64>() / n as f64;
        let var = samples.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / n as f64;
        assert!((mean / 100_000.0 - 1.0).abs() < 0.005, "mean {mean}");
        assert!((var.sqrt() / mean - 0.1).abs() < 0.005, "cv {}", var.sqrt() / mean);
        // Reads: mean = read_ns x (1 + expected retries), retries geometric with p = 0.05.
        let reads: f64 = (0..n).map(|_| v.read_ns(3_000) as f64).sum::<f64>() / n as f64;
        let expected = 3_000.0 * (1.0 + 0.05 / 0.95);
        assert!((reads / expected - 1.0).abs() < 0.01, "read mean {reads} vs {expected}");
        // Controller: mean 1.8 us + 1% x 20 us stalls = 2.0 us; stalls make a long tail.
        let controller: Vec<Time> = (0..n).map(|_| v.controller_ns(1_800)).collect();
        let mean = controller.iter().sum::<Time>() as f64 / n as f64;
        assert!((mean / 2_000.0 - 1.0).abs() < 0.02, "controller mean {mean}");
        let slow = controller.iter().filter(|&&ns| ns > 10_000).count() as f64 / n as f64;
        // P(stall > 10 us - ~1.8 us) = 0.01 x exp(-8.2/20) ~ 0.0066.
        assert!((0.005..0.0085).contains(&slow), "share over 10 us {slow}");
        let again: Vec<Time> = {
            let mut v = Variability::new(&config(true), 7);
            (0..1000).map(|_| v.program_ns(100_000)).collect()
        };
        assert_eq!(again, samples[..1000].iter().map(|&s| s as Time).collect::<Vec<_>>());
    }
}
