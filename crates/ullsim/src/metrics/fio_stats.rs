//! What only fio's JSON layout needs beyond the histograms, recorded cheaply as requests complete: the
//! "IO latency distribution" (fio's `latency_ns`, `latency_us`, `latency_ms`: a counter per bucket) and the
//! completions and bytes of each 500 ms interval of a flow's window (for fio's `iops_*` and `bw_*` sample
//! statistics). Not in the native JSON; [`super::fio_json`] writes them.

use crate::engine::Time;

/// fio's `iops_avg_time` and `bw_avg_time` defaults (500 ms): how often it samples a job's IOPS and
/// bandwidth.
pub const FIO_SAMPLE_INTERVAL_NS: Time = 500_000_000;

/// fio's latency distribution keys, in ns, us and ms, as its JSON names them (stat.c): the key of a bucket is
/// its upper bound (exclusive), in the unit of its map.
pub const LAT_KEYS_NS: [&str; 10] = ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"];
pub const LAT_KEYS_US: [&str; 10] = LAT_KEYS_NS;
pub const LAT_KEYS_MS: [&str; 12] = ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000"];

/// Buckets of [`LatencyBuckets`]: ns, us, ms.
pub const LAT_BUCKETS: usize = LAT_KEYS_NS.len() + LAT_KEYS_US.len() + LAT_KEYS_MS.len();

/// The buckets' upper bounds in ns (exclusive; the last bucket has none). fio truncates a latency to whole
/// us or ms before bucketing it (io_u.c, `io_u_mark_latency`), so that e.g. 1999 ns is in latency_us "2"
/// ([1, 2) us) and 2000 ns in latency_us "4": bounds in ns are the keys times the unit.
const LAT_BOUNDS_NS: [u64; LAT_BUCKETS - 1] = {
    const STEPS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
    let mut bounds = [0u64; LAT_BUCKETS - 1];
    let mut i = 0;
    while i < 10 {
        bounds[i] = STEPS[i];
        bounds[10 + i] = STEPS[i] * 1_000;
        bounds[20 + i] = STEPS[i] * 1_000_000;
        i += 1;
    }
    bounds[30] = 2_000 * 1_000_000;
    bounds
};

/// How many completion latencies fell in each of fio's latency distribution buckets (ns, then us, then ms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatencyBuckets(pub [u64; LAT_BUCKETS]);

impl Default for LatencyBuckets {
    fn default() -> Self {
        LatencyBuckets([0; LAT_BUCKETS])
    }
}

impl LatencyBuckets {
    #[inline]
    pub(crate) fn record(&mut self, ns: Time) {
        self.0[LAT_BOUNDS_NS.partition_point(|&bound| bound <= ns)] += 1;
    }

    /// Latencies counted.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// Each bucket's share of the latencies in percent, as fio computes it (stat.c, `stat_calc_lat`): count /
    /// total x 100, raised to 0.01 for a bucket that is not empty but under it; all 0 when there are none.
    pub fn percentages(&self) -> [f64; LAT_BUCKETS] {
        let total = self.total();
        self.0.map(|count| {
            if total == 0 {
                return 0.0;
            }
            let percent = count as f64 / total as f64 * 100.0;
            if percent < 0.01 && count > 0 {
                0.01
            } else {
                percent
            }
        })
    }
}

/// Completions and their bytes in each [`FIO_SAMPLE_INTERVAL_NS`] interval of a flow's window (from its
/// start), for one direction. After the run, only the intervals that end inside the window are kept (fio
/// takes a sample at the end of each whole interval).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IntervalCounts {
    pub ios: Vec<u64>,
    pub bytes: Vec<u64>,
}

impl IntervalCounts {
    #[inline]
    pub(crate) fn record(&mut self, interval: usize, bytes: u64) {
        if interval >= self.ios.len() {
            self.ios.resize(interval + 1, 0);
            self.bytes.resize(interval + 1, 0);
        }
        self.ios[interval] += 1;
        self.bytes[interval] += bytes;
    }

    /// The whole intervals of a window of `window_ns`: `window_ns / 500 ms` of them (empty ones too).
    pub(crate) fn whole(&self, window_ns: Time) -> IntervalCounts {
        let n = (window_ns / FIO_SAMPLE_INTERVAL_NS) as usize;
        let mut out = IntervalCounts { ios: self.ios.clone(), bytes: self.bytes.clone() };
        out.ios.resize(n, 0);
        out.bytes.resize(n, 0);
        out
    }

    /// fio's IOPS samples: each whole interval's completions x 1000 / 500 (integer), leaving out intervals
    /// without any (stat.c, `__add_samples`: "No entries for interval").
    pub fn iops_samples(&self) -> SampleStats {
        let ms = FIO_SAMPLE_INTERVAL_NS / 1_000_000;
        SampleStats::of(self.ios.iter().filter(|&&n| n > 0).map(|&n| n * 1000 / ms))
    }

    /// fio's bandwidth samples, KiB/s: each whole interval's bytes x 1000 / 500 / 1024 (integer), leaving
    /// out intervals without any.
    pub fn bw_samples(&self) -> SampleStats {
        let ms = FIO_SAMPLE_INTERVAL_NS / 1_000_000;
        SampleStats::of(self.bytes.iter().filter(|&&b| b > 0).map(|&b| b * 1000 / ms / 1024))
    }
}

/// fio's statistics of a job's IOPS or bandwidth samples (stat.c, `add_stat_sample` and `calc_lat`): min,
/// max, the running (Welford) mean, and the sample standard deviation (n - 1; 0 for one sample). All 0 with
/// no samples, as fio writes them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SampleStats {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub stddev: f64,
    pub samples: u64,
}

impl SampleStats {
    pub fn of(values: impl Iterator<Item = u64>) -> SampleStats {
        let (mut min, mut max, mut mean, mut s, mut n) = (u64::MAX, 0u64, 0.0f64, 0.0f64, 0u64);
        for value in values {
            min = min.min(value);
            max = max.max(value);
            let v = value as f64;
            let delta = v - mean;
            if delta != 0.0 {
                mean += delta / (n as f64 + 1.0);
                s += delta * (v - mean);
            }
            n += 1;
        }
        if n == 0 {
            return SampleStats::default();
        }
        let stddev = if n > 1 { (s / (n as f64 - 1.0)).sqrt() } else { 0.0 };
        SampleStats { min, max, mean, stddev, samples: n }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket_of(ns: u64) -> usize {
        let mut b = LatencyBuckets::default();
        b.record(ns);
        b.0.iter().position(|&c| c == 1).unwrap()
    }

    #[test]
    fn buckets_follow_fios_truncation() {
        // latency_ns "2" holds 0..=1 ns, "4" 2..=3 ns, "1000" 750..=999 ns.
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(1), 0);
        assert_eq!(bucket_of(2), 1);
        assert_eq!(bucket_of(999), 9);
        // latency_us "2": 1..=1999 ns (1 us after truncation); "4": 2000 ns.
        assert_eq!(bucket_of(1_000), 10);
        assert_eq!(bucket_of(1_999), 10);
        assert_eq!(bucket_of(2_000), 11);
        assert_eq!(bucket_of(9_999), 12);
        assert_eq!(bucket_of(10_000), 13);
        assert_eq!(bucket_of(999_999), 19);
        // latency_ms "2": 1 ms up to 2 ms; "2000": 1000..=1999 ms; ">=2000" above.
        assert_eq!(bucket_of(1_000_000), 20);
        assert_eq!(bucket_of(1_999_999_999), 30);
        assert_eq!(bucket_of(2_000_000_000), 31);
        assert_eq!(bucket_of(u64::MAX), 31);
    }

    #[test]
    fn percentages_are_fios() {
        let mut b = LatencyBuckets::default();
        for _ in 0..99_999 {
            b.record(15_000);
        }
        b.record(5_000_000);
        let p = b.percentages();
        assert!((p[13] - 99.999).abs() < 1e-9);
        // 0.001% is written as 0.01, as fio does.
        assert_eq!(p[22], 0.01);
        assert_eq!(LatencyBuckets::default().percentages(), [0.0; LAT_BUCKETS]);
    }

    #[test]
    fn samples_are_fios() {
        let mut c = IntervalCounts::default();
        for (i, n) in [(0, 10), (1, 0), (2, 13), (3, 7)] {
            for _ in 0..n {
                c.record(i, 4096);
            }
        }
        // 1.9 s: three whole intervals, the second empty (no sample), the fourth cut off.
        let whole = c.whole(1_900_000_000);
        assert_eq!(whole.ios, vec![10, 0, 13]);
        let iops = whole.iops_samples();
        assert_eq!((iops.min, iops.max, iops.samples), (20, 26, 2));
        assert_eq!(iops.mean, 23.0);
        assert!((iops.stddev - 18f64.sqrt()).abs() < 1e-12);
        let bw = whole.bw_samples();
        assert_eq!((bw.min, bw.max, bw.samples), (80, 104, 2));
        assert_eq!(c.whole(400_000_000).iops_samples(), SampleStats::default());
        assert_eq!(SampleStats::of([5].into_iter()).stddev, 0.0);
    }
}
