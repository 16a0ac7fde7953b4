//! Sampling fio's `random_distribution` ([`RandomDistribution`], parsed by `config::distribution`, whose
//! docs give fio's semantics): which block a random I/O touches.

use rand::RngExt;
use rand_distr::Distribution;

pub use crate::config::distribution::{RandomDistribution, Zone};
use crate::util::perm::Permutation;

/// fio's gauss averages this many uniform draws.
const GAUSS_DRAWS: u32 = 12;

/// A zone of the range, ready for sampling.
#[derive(Debug, Clone)]
struct ZoneSpan {
    /// Running total of access percentages up to and including this zone.
    cumulative_access_pct: f64,
    first_block: u64,
    n_blocks: u64,
}

#[derive(Debug, Clone)]
enum Sampler {
    Uniform,
    Zipf { ranks: rand_distr::Zipf<f64>, scatter: Permutation },
    Pareto { exponent: f64, scatter: Permutation },
    Normal { jitter_width: u64, scatter: Permutation },
    Zoned { spans: Vec<ZoneSpan>, total_access_pct: f64 },
}

/// Picks block indices in [0, n_blocks) following the distribution.
#[derive(Debug, Clone)]
pub struct BlockPicker {
    n_blocks: u64,
    sampler: Sampler,
}

/// `pct` percent of `n`, rounded down, but robust to decimal percentages that are a hair off in binary.
fn percent_of(n: u64, pct: f64) -> u64 {
    let exact = n as f64 * pct / 100.0;
    let nearest = exact.round();
    let blocks = if (exact - nearest).abs() <= 1e-9 * nearest.max(1.0) { nearest } else { exact.floor() };
    (blocks.max(0.0) as u64).min(n)
}

fn zone_spans(zones: &[Zone], n_blocks: u64) -> Vec<ZoneSpan> {
    let mut spans = Vec::with_capacity(zones.len());
    let mut access_so_far = 0.0;
    let mut range_so_far = 0.0;
    for zone in zones {
        let start = percent_of(n_blocks, range_so_far);
        range_so_far += zone.range_pct;
        let end = percent_of(n_blocks, range_so_far);
        access_so_far += zone.access_pct;
        // A zone nobody accesses only shifts the following zones.
        if zone.access_pct <= 0.0 {
            continue;
        }
        // With few blocks a zone may round to nothing; keep it one block wide so it still gets its share.
        let (first_block, len) = if end > start { (start, end - start) } else { (start.min(n_blocks - 1), 1) };
        spans.push(ZoneSpan { cumulative_access_pct: access_so_far, first_block, n_blocks: len });
    }
    spans
}

impl BlockPicker {
    /// `scatter_key`: like fio, popular ranks of zipf/pareto/normal are scattered over the range with a keyed
    /// permutation (so the hottest blocks are not all at offset 0); zoned keeps zones contiguous (fio does).
    ///
    /// # Panics
    /// If `n_blocks` is 0 or `dist` fails [`RandomDistribution::validate`] (parsed values always pass).
    pub fn new(dist: &RandomDistribution, n_blocks: u64, scatter_key: u64) -> Self {
        assert!(n_blocks >= 1, "BlockPicker needs at least one block");
        if let Err(problem) = dist.validate() {
            panic!("invalid random distribution {dist:?}: {problem}");
        }
        let scatter = || Permutation::new(n_blocks, scatter_key);
        let sampler = match dist {
            RandomDistribution::Uniform => Sampler::Uniform,
            RandomDistribution::Zipf { theta } => Sampler::Zipf {
                ranks: rand_distr::Zipf::new(n_blocks as f64, *theta)
                    .expect("theta > 0 and n >= 1 were checked by validate"),
                scatter: scatter(),
            },
            RandomDistribution::Pareto { h } => Sampler::Pareto {
                // ln_1p keeps a tiny h extreme (ln(1 - 1e-300) would round to 0 and flip the sign).
                exponent: h.ln() / (-h).ln_1p(),
                scatter: scatter(),
            },
            RandomDistribution::Normal { deviation_pct } => {
                // fio: width = ceil(n * dev / 100) blocks, at most half the range.
                let width = (n_blocks as f64 * deviation_pct / 100.0).ceil() as u64;
                Sampler::Normal { jitter_width: width.min(n_blocks / 2), scatter: scatter() }
            }
            RandomDistribution::Zoned(zones) => {
                let spans = zone_spans(zones, n_blocks);
                let total_access_pct = spans.last().map_or(100.0, |span| span.cumulative_access_pct);
                Sampler::Zoned { spans, total_access_pct }
            }
        };
        BlockPicker { n_blocks, sampler }
    }

    /// Number of blocks in the range.
    pub fn n_blocks(&self) -> u64 {
        self.n_blocks
    }

    /// The next block, in [0, n_blocks).
    pub fn next_block<R: rand::Rng + ?Sized>(&mut self, rng: &mut R) -> u64 {
        let n = self.n_blocks;
        let last = n - 1;
        match &self.sampler {
            Sampler::Uniform => rng.random_range(0..n),
            Sampler::Zipf { ranks, scatter } => {
                // Ranks come back as 1..=n in f64.
                let rank = (ranks.sample(rng) as u64).saturating_sub(1).min(last);
                scatter.apply(rank)
            }
            Sampler::Pareto { exponent, scatter } => {
                let u: f64 = rng.random();
                let rank = ((n as f64 * u.powf(*exponent)) as u64).min(last);
                scatter.apply(rank)
            }
            Sampler::Normal { jitter_width, scatter } => {
                let mut sum = 0.0;
                for _ in 0..GAUSS_DRAWS {
                    sum += rng.random::<f64>();
                }
                let bell = ((n as f64 * sum / f64::from(GAUSS_DRAWS)) as u64).min(last);
                let rank = if *jitter_width == 0 {
                    bell
                } else {
                    let width = *jitter_width as i128;
                    let mut jitter = rng.random_range(0..*jitter_width) as i128 - width / 2;
                    // fio halves the jitter until the result lands in range (jitter 0 always does).
                    while !(0..n as i128).contains(&(bell as i128 + jitter)) {
                        jitter /= 2;
                    }
                    (bell as i128 + jitter) as u64
                };
                scatter.apply(rank)
            }
            Sampler::Zoned { spans, total_access_pct } => {
                let point = rng.random::<f64>() * total_access_pct;
                let span = spans
                    .iter()
                    .find(|span| point < span.cumulative_access_pct)
                    .unwrap_or_else(|| spans.last().expect("a validated zoned distribution has an accessed zone"));
                span.first_block + rng.random_range(0..span.n_blocks)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::distribution::EXPECTED;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn parse(text: &str) -> RandomDistribution {
        text.parse().unwrap_or_else(|e| panic!("{text:?} should parse: {e}"))
    }

    fn parse_error(text: &str) -> String {
        match text.parse::<RandomDistribution>() {
            Ok(d) => panic!("{text:?} should not parse, got {d:?}"),
            Err(e) => e,
        }
    }

    /// Hit counts per block for `samples` draws.
    fn histogram(dist: &str, n_blocks: u64, samples: usize, seed: u64) -> Vec<u64> {
        let mut picker = BlockPicker::new(&parse(dist), n_blocks, 7);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut counts = vec![0u64; n_blocks as usize];
        for _ in 0..samples {
            counts[picker.next_block(&mut rng) as usize] += 1;
        }
        counts
    }

    /// Share of all hits taken by the `fraction` most-hit blocks.
    fn hottest_share(counts: &[u64], fraction: f64) -> f64 {
        let mut sorted = counts.to_vec();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        let top = (counts.len() as f64 * fraction).round() as usize;
        let total: u64 = counts.iter().sum();
        sorted[..top].iter().sum::<u64>() as f64 / total as f64
    }

    #[test]
    fn display_round_trips_through_parse_and_serde() {
        let cases = [
            ("random", RandomDistribution::Uniform),
            ("zipf:1.2", RandomDistribution::Zipf { theta: 1.2 }),
            ("zipf:0.8", RandomDistribution::Zipf { theta: 0.8 }),
            ("pareto:0.2", RandomDistribution::Pareto { h: 0.2 }),
            ("normal:5", RandomDistribution::Normal { deviation_pct: 5.0 }),
            ("normal:0", RandomDistribution::Normal { deviation_pct: 0.0 }),
            (
                "zoned:60/10:30/20:10/70",
                RandomDistribution::Zoned(vec![
                    Zone { access_pct: 60.0, range_pct: 10.0 },
                    Zone { access_pct: 30.0, range_pct: 20.0 },
                    Zone { access_pct: 10.0, range_pct: 70.0 },
                ]),
            ),
            (
                "zoned:33.3/0.5:66.7/50",
                RandomDistribution::Zoned(vec![
                    Zone { access_pct: 33.3, range_pct: 0.5 },
                    Zone { access_pct: 66.7, range_pct: 50.0 },
                ]),
            ),
        ];
        for (text, expected) in cases {
            let parsed = parse(text);
            assert_eq!(parsed, expected, "{text}");
            assert_eq!(parsed.to_string(), text);
            assert_eq!(parse(&parsed.to_string()), parsed);
            let json = serde_json::to_string(&parsed).expect("serializes");
            assert_eq!(json, format!("{text:?}"));
            let back: RandomDistribution = serde_json::from_str(&json).expect("deserializes");
            assert_eq!(back, parsed);
        }
    }

    #[test]
    fn fio_defaults_and_whitespace() {
        assert_eq!(parse("zipf"), RandomDistribution::Zipf { theta: 1.1 });
        assert_eq!(parse("pareto"), RandomDistribution::Pareto { h: 0.2 });
        assert_eq!(parse("normal"), RandomDistribution::Normal { deviation_pct: 0.0 });
        assert_eq!(parse("  zipf:1.2 "), RandomDistribution::Zipf { theta: 1.2 });
        assert_eq!(RandomDistribution::default(), RandomDistribution::Uniform);
    }

    #[test]
    fn bad_strings_get_clear_errors() {
        let unknown = parse_error("gauss:3");
        assert!(unknown.contains(EXPECTED) && unknown.contains("\"gauss:3\""), "{unknown}");
        assert!(parse_error("").contains(EXPECTED));
        assert!(parse_error("zipf:x").contains("must be a number"));
        assert!(parse_error("zipf:-1.2").contains("> 0"));
        assert!(parse_error("zipf:0").contains("> 0"));
        assert!(parse_error("zipf:1").contains("!= 1"));
        assert!(parse_error("zipf:1.0").contains("!= 1"));
        assert!(parse_error("zipf:inf").contains("finite"));
        assert!(parse_error("zipf:1.2:0.25").contains("center"));
        assert!(parse_error("pareto:0").contains("(0, 1)"));
        assert!(parse_error("pareto:1.5").contains("(0, 1)"));
        assert!(parse_error("normal:100").contains("[0, 100)"));
        assert!(parse_error("normal:-1").contains("[0, 100)"));
        assert!(parse_error("random:3").contains("no parameter"));
        let short = parse_error("zoned:60/10:30/20");
        assert!(short.contains("add up to 100") && short.contains("90"), "{short}");
        assert!(parse_error("zoned:60/10:50/20").contains("add up to 100"));
        assert!(parse_error("zoned:60/60:40/50").contains("at most 100"));
        assert!(parse_error("zoned:100/0").contains("empty"));
        assert!(parse_error("zoned:60:40").contains("ACCESS%/RANGE%"));
        assert!(parse_error("zoned:").contains("needs"));
        assert!(parse_error("zoned").contains("needs"));
        assert!(parse_error("zoned:-10/10:110/10").contains("[0, 100]"));
        assert!(parse_error("zoned:50/50,100/100").contains("not supported"));
        assert!(parse_error("zoned_abs:60/20G:40/100G").contains("zoned_abs"));
        let too_many = format!("zoned{}", ":0.25/0.25".repeat(400));
        assert!(parse_error(&too_many).contains("at most 256"));
        assert!(serde_json::from_str::<RandomDistribution>("\"zipf:1\"").is_err());
    }

    #[test]
    #[should_panic(expected = "invalid random distribution")]
    fn picker_rejects_invalid_values_built_in_code() {
        BlockPicker::new(&RandomDistribution::Zipf { theta: -1.0 }, 10, 0);
    }

    #[test]
    fn uniform_covers_the_range_evenly() {
        let n_blocks = 100;
        let samples = 100_000;
        let counts = histogram("random", n_blocks, samples, 1);
        let expected = samples as f64 / n_blocks as f64;
        let chi_square: f64 = counts.iter().map(|&c| (c as f64 - expected).powi(2) / expected).sum();
        // 99 degrees of freedom: mean 99, sd 14; 170 is five sd out.
        assert!(chi_square < 170.0, "chi-square {chi_square}");
    }

    #[test]
    fn zipf_top_block_gets_its_theoretical_share_and_ranks_are_scattered() {
        let n_blocks = 1000u64;
        let theta = 1.2;
        let samples = 200_000;
        let counts = histogram("zipf:1.2", n_blocks, samples, 2);
        let harmonic: f64 = (1..=n_blocks).map(|k| (k as f64).powf(-theta)).sum();
        let expected_top = 1.0 / harmonic;
        let mut by_hits: Vec<u64> = (0..n_blocks).collect();
        by_hits.sort_by_key(|&b| std::cmp::Reverse(counts[b as usize]));
        let top_share = counts[by_hits[0] as usize] as f64 / samples as f64;
        assert!((top_share / expected_top - 1.0).abs() < 0.10, "top share {top_share}, expected {expected_top}");
        // The hottest block is rank 0 scattered by the keyed permutation.
        assert_eq!(by_hits[0], Permutation::new(n_blocks, 7).apply(0));
        let mut top_ten = by_hits[..10].to_vec();
        top_ten.sort_unstable();
        assert_ne!(top_ten, (0..10).collect::<Vec<_>>());
        // Second rank gets 2^-theta of the first.
        let ratio = counts[by_hits[1] as usize] as f64 / counts[by_hits[0] as usize] as f64;
        assert!((ratio / 2f64.powf(-theta) - 1.0).abs() < 0.10, "ratio {ratio}");
    }

    #[test]
    fn zipf_below_one_is_allowed_and_milder() {
        let steep = hottest_share(&histogram("zipf:1.2", 1000, 100_000, 3), 0.1);
        let mild = hottest_share(&histogram("zipf:0.8", 1000, 100_000, 3), 0.1);
        assert!(mild < steep && mild > 0.2, "zipf:0.8 top-10% share {mild}, zipf:1.2 {steep}");
    }

    #[test]
    fn pareto_skew_grows_as_h_shrinks_below_one_half() {
        let mut previous = 1.0;
        for h in [0.1f64, 0.2, 0.3, 0.4, 0.5] {
            let share = hottest_share(&histogram(&format!("pareto:{h}"), 1000, 200_000, 4), 0.1);
            // fio's rank is n * u^p with p = ln h / ln(1 - h): the lowest 10% of ranks get 0.1^(1/p).
            let p: f64 = h.ln() / (1.0 - h).ln();
            let theory = 0.1f64.powf(1.0 / p);
            assert!(share < previous, "pareto:{h} top-10% share {share} not below {previous}");
            // h = 0.5 is uniform; the top 10% by hit count then sit a little above 10% from noise.
            assert!((share - theory).abs() < 0.03, "pareto:{h} top-10% share {share}, theory {theory}");
            previous = share;
        }
    }

    #[test]
    fn pareto_with_tiny_h_always_hits_the_hottest_block() {
        let counts = histogram("pareto:1e-300", 1000, 1000, 14);
        assert_eq!(counts.iter().max(), Some(&1000));
    }

    #[test]
    fn pareto_h_of_the_range_gets_one_minus_h_of_accesses() {
        // fio's reading of pareto:h, which holds on both sides of 0.5.
        for (h, hot_fraction) in [(0.2, 0.2), (0.8, 0.2), (0.3, 0.3)] {
            let share = hottest_share(&histogram(&format!("pareto:{h}"), 1000, 200_000, 5), hot_fraction);
            let expected = 1.0 - hot_fraction;
            assert!((share - expected).abs() < 0.02, "pareto:{h}: hottest {hot_fraction} got {share}");
        }
    }

    #[test]
    fn normal_is_fios_bell_plus_uniform_jitter() {
        let n_blocks = 1_000_000u64;
        let samples = 100_000;
        let scatter = Permutation::new(n_blocks, 7);
        for (deviation_pct, width_fraction) in [(0.0, 0.0f64), (20.0, 0.2), (80.0, 0.5)] {
            let dist = RandomDistribution::Normal { deviation_pct };
            let mut picker = BlockPicker::new(&dist, n_blocks, 7);
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(6);
            let positions: Vec<f64> =
                (0..samples).map(|_| scatter.invert(picker.next_block(&mut rng)) as f64 / n_blocks as f64).collect();
            let mean = positions.iter().sum::<f64>() / samples as f64;
            let variance = positions.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / samples as f64;
            // Mean of 12 uniforms: variance 1/144; a uniform jitter of width w adds w^2/12 (the halving
            // at the edges trims a little, hence the loose bound for the widest one).
            let expected_sd = (1.0 / 144.0 + width_fraction * width_fraction / 12.0).sqrt();
            assert!((mean - 0.5).abs() < 0.005, "normal:{deviation_pct} mean {mean}");
            let tolerance = if width_fraction >= 0.5 { 0.08 } else { 0.03 };
            assert!(
                (variance.sqrt() / expected_sd - 1.0).abs() < tolerance,
                "normal:{deviation_pct} sd {} expected {expected_sd}",
                variance.sqrt()
            );
        }
        // The bell's centre is scattered, not at block n/2.
        let counts = histogram("normal:0", 1000, 100_000, 8);
        let hottest = (0..1000).max_by_key(|&b| counts[b]).expect("non-empty");
        assert_eq!(scatter.len(), n_blocks);
        assert!(counts[500] < counts[hottest]);
    }

    #[test]
    fn zoned_sends_each_share_to_its_zone() {
        let n_blocks = 1000u64;
        let samples = 100_000;
        let counts = histogram("zoned:60/10:30/20:10/70", n_blocks, samples, 9);
        let share = |range: std::ops::Range<usize>| counts[range].iter().sum::<u64>() as f64 / samples as f64;
        assert!((share(0..100) - 0.60).abs() < 0.015, "first zone {}", share(0..100));
        assert!((share(100..300) - 0.30).abs() < 0.015, "second zone {}", share(100..300));
        assert!((share(300..1000) - 0.10).abs() < 0.015, "third zone {}", share(300..1000));
        // Uniform inside a zone: every block of the hot zone is hit.
        assert!(counts[..100].iter().all(|&c| c > 0));
    }

    #[test]
    fn zoned_leaves_unlisted_range_and_zero_access_zones_untouched() {
        let counts = histogram("zoned:50/10:0/30:50/10", 1000, 50_000, 10);
        assert!(counts[100..400].iter().all(|&c| c == 0), "zero-access zone was hit");
        assert!(counts[500..].iter().all(|&c| c == 0), "range beyond the zones was hit");
        let hot: u64 = counts[..100].iter().sum();
        assert!((hot as f64 / 50_000.0 - 0.5).abs() < 0.02);
    }

    #[test]
    fn every_sample_is_in_range() {
        let distributions = [
            "random",
            "zipf:1.2",
            "zipf:0.5",
            "zipf:5",
            "pareto:0.01",
            "pareto:0.2",
            "pareto:0.99",
            "normal:0",
            "normal:99.9",
            "zoned:60/10:30/20:10/70",
            "zoned:99/0.1:1/0.1",
        ];
        for text in distributions {
            for n_blocks in [1u64, 2, 3, 1_000_000_000] {
                let mut picker = BlockPicker::new(&parse(text), n_blocks, 11);
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(12);
                for _ in 0..10_000 {
                    let block = picker.next_block(&mut rng);
                    assert!(block < n_blocks, "{text} over {n_blocks} blocks gave {block}");
                }
            }
        }
    }

    #[test]
    fn same_seed_same_blocks_and_key_moves_the_hot_spot() {
        let dist = parse("zipf:1.2");
        let run = |key: u64| {
            let mut picker = BlockPicker::new(&dist, 1 << 30, key);
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(13);
            (0..1000).map(|_| picker.next_block(&mut rng)).collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
    }
}
