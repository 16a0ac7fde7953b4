//! A latency recorder whose memory follows what it recorded: nothing before its first value, the values
//! themselves while there are few, then counts by HDR bucket that grow only as far as the largest value.
//!
//! Every flow has fourteen of them (reads, writes, flushes, the reads' and the writes' submission to
//! completion, nine layers), and a fixed histogram spanning an hour at 3 significant digits is 260 KiB, so a flow used to cost 4 MB
//! before it issued an I/O and a thousand tenants 4 GB. The percentiles are the same bytes either way: an
//! auto-resizing histogram indexes values exactly as a fixed one does (its bucketing depends only on the
//! lowest value and the significant digits), and the few values, or the counts, are put into one when a
//! percentile is asked. Counting by bucket here rather than recording into the histogram keeps a record to
//! an index and an increment: every completion records eleven values (the
//! total of reads and writes is made from the two when the results are asked).

use hdrhistogram::Histogram;

use super::{fio_stats, LatencyDistribution, LatencySummary, LayerTime, OpDetail, OpResult, FIO_PERCENTILES};
use crate::engine::Time;

/// Highest latency the histograms resolve (an hour); larger values are clamped.
const MAX_TRACKED_NS: u64 = 3_600 * 1_000_000_000;

/// Significant digits of the histograms: relative error below 0.1%.
const SIGNIFICANT_DIGITS: u8 = 3;

/// Values kept as they are before a histogram is made (2 KiB; a histogram of latencies up to a millisecond
/// is ~100 KiB). [inferred: small against the histogram, large enough that a flow of a short run or a
/// rarely used recorder (flushes, a layer of zeros) never needs one.]
const FEW_VALUES: usize = 256;

#[derive(Debug, Clone)]
enum Values {
    /// Up to [`FEW_VALUES`], clamped, in the order recorded.
    Few(Vec<u64>),
    /// Counts by HDR bucket ([`hdr_index`]), up to the largest bucket recorded: recording is an index and an
    /// increment, and the histogram is made from the counts when a percentile is asked.
    Many(Vec<u64>),
}

/// Sub-buckets per HDR bucket at [`SIGNIFICANT_DIGITS`] = 3 (hdrhistogram: the power of two at or above
/// 2 x 10^3), as a power of two; half of them are new in each bucket after the first.
const SUB_BUCKET_MAGNITUDE: u32 = 11;
const SUB_BUCKET_HALF_MAGNITUDE: u32 = SUB_BUCKET_MAGNITUDE - 1;
const SUB_BUCKET_MASK: u64 = (1 << SUB_BUCKET_MAGNITUDE) - 1;

/// The index of `value`'s bucket in an hdrhistogram of lowest discernible value 1 at 3 significant digits
/// (its `index_for`, with unit magnitude 0): values in the same bucket are equivalent to it, so counts by
/// this index make the same histogram (tested against hdrhistogram).
#[inline]
fn hdr_index(value: u64) -> usize {
    let bucket = (64 - SUB_BUCKET_MAGNITUDE) - (value | SUB_BUCKET_MASK).leading_zeros();
    let sub_bucket = (value >> bucket) as usize;
    (((bucket as usize) + 1) << SUB_BUCKET_HALF_MAGNITUDE) + sub_bucket - (1 << SUB_BUCKET_HALF_MAGNITUDE)
}

/// The lowest value of HDR bucket `index` (hdrhistogram's `value_for`), which records into that bucket.
fn hdr_lowest_value(index: usize) -> u64 {
    let half = 1usize << SUB_BUCKET_HALF_MAGNITUDE;
    let (bucket, sub_bucket) = match (index >> SUB_BUCKET_HALF_MAGNITUDE).checked_sub(1) {
        Some(bucket) => (bucket, (index & (half - 1)) + half),
        None => (0, index & (half - 1)),
    };
    (sub_bucket as u64) << bucket
}

/// Count `value` in `counts` by its HDR bucket, growing the counts to reach it.
#[inline]
fn count(counts: &mut Vec<u64>, value: u64) {
    let index = hdr_index(value);
    if index >= counts.len() {
        counts.resize(index + 1, 0);
    }
    counts[index] += 1;
}

/// A latency recorder: count, exact mean and standard deviation, HDR percentiles.
#[derive(Debug, Clone)]
pub(crate) struct Recorder {
    values: Values,
    count: u64,
    sum: u128,
    /// Sum of the squared values (for the standard deviation); saturates rather than wraps.
    sum_of_squares: u128,
    bytes: u64,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new()
    }
}

/// Record `value` (at most [`MAX_TRACKED_NS`]) in an auto-resizing histogram, growing it to fit: its
/// `saturating_record` would clamp to its current top instead.
fn put(hist: &mut Histogram<u64>, value: u64, n: u64) {
    if hist.record_n(value, n).is_err() {
        hist.saturating_record_n(value, n);
    }
}

fn empty_histogram() -> Histogram<u64> {
    let mut hist = Histogram::new(SIGNIFICANT_DIGITS).expect("valid histogram precision");
    hist.auto(true);
    hist
}

impl Recorder {
    /// An empty recorder: it allocates nothing until it records.
    pub(crate) fn new() -> Self {
        Recorder { values: Values::Few(Vec::new()), count: 0, sum: 0, sum_of_squares: 0, bytes: 0 }
    }

    #[inline]
    pub(crate) fn record(&mut self, value: Time, bytes: u64) {
        self.record_clamped(value.min(MAX_TRACKED_NS));
        self.count += 1;
        self.sum += value as u128;
        self.sum_of_squares = self.sum_of_squares.saturating_add(value as u128 * value as u128);
        self.bytes += bytes;
    }

    #[inline]
    fn record_clamped(&mut self, value: u64) {
        match &mut self.values {
            Values::Many(counts) => count(counts, value),
            Values::Few(few) if few.len() < FEW_VALUES => few.push(value),
            Values::Few(few) => {
                let mut counts = Vec::new();
                for &v in few.iter() {
                    count(&mut counts, v);
                }
                count(&mut counts, value);
                self.values = Values::Many(counts);
            }
        }
    }

    /// The histogram of the recorded values, made on the spot: the few values themselves, or one value of
    /// each counted bucket with its count (the same buckets, so the same percentiles, minimum and maximum).
    fn histogram(&self) -> Histogram<u64> {
        let mut hist = empty_histogram();
        match &self.values {
            Values::Few(few) => {
                for &v in few {
                    put(&mut hist, v, 1);
                }
            }
            Values::Many(counts) => {
                for (index, &n) in counts.iter().enumerate().filter(|(_, &n)| n > 0) {
                    put(&mut hist, hdr_lowest_value(index), n);
                }
            }
        }
        hist
    }

    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    pub(super) fn summary(&self) -> LatencySummary {
        if self.count == 0 {
            return LatencySummary {
                mean: 0.0,
                p50: 0,
                p90: 0,
                p99: 0,
                p99_9: 0,
                p99_99: 0,
                p99_999: 0,
                min: 0,
                max: 0,
            };
        }
        let hist = self.histogram();
        let q = |x: f64| hist.value_at_quantile(x);
        LatencySummary {
            mean: self.mean(),
            p50: q(0.50),
            p90: q(0.90),
            p99: q(0.99),
            p99_9: q(0.999),
            p99_99: q(0.9999),
            p99_999: q(0.99999),
            min: hist.min(),
            max: hist.max(),
        }
    }

    /// Population standard deviation of the recorded values (0 with fewer than two).
    fn stddev(&self) -> f64 {
        if self.count < 2 {
            return 0.0;
        }
        let n = self.count as f64;
        let mean = self.mean();
        // E[x^2] - mean^2, never below 0 (rounding).
        (self.sum_of_squares as f64 / n - mean * mean).max(0.0).sqrt()
    }

    pub(super) fn distribution(&self) -> LatencyDistribution {
        let (min, max, percentiles) = if self.count == 0 {
            (0, 0, [0; FIO_PERCENTILES.len()])
        } else {
            let hist = self.histogram();
            (hist.min(), hist.max(), FIO_PERCENTILES.map(|p| hist.value_at_quantile(p / 100.0)))
        };
        LatencyDistribution { count: self.count, min, max, mean: self.mean(), stddev: self.stddev(), percentiles }
    }

    /// Take in `other`'s values as well.
    pub(super) fn add(&mut self, other: &Recorder) {
        match &other.values {
            Values::Few(few) => {
                for &v in few {
                    self.record_clamped(v);
                }
            }
            Values::Many(theirs) => {
                if let Values::Few(few) = &self.values {
                    let mut mine = Vec::new();
                    few.iter().for_each(|&v| count(&mut mine, v));
                    self.values = Values::Many(mine);
                }
                let Values::Many(mine) = &mut self.values else { unreachable!("made counts above") };
                if mine.len() < theirs.len() {
                    mine.resize(theirs.len(), 0);
                }
                mine.iter_mut().zip(theirs).for_each(|(m, t)| *m += t);
            }
        }
        self.count += other.count;
        self.sum += other.sum;
        self.sum_of_squares = self.sum_of_squares.saturating_add(other.sum_of_squares);
        self.bytes += other.bytes;
    }

    pub(crate) fn layer(&self) -> LayerTime {
        let p99 = if self.count == 0 { 0 } else { self.histogram().value_at_quantile(0.99) };
        LayerTime { mean: self.mean(), p99 }
    }

    /// The result over `seconds`; `after_submission` recorded the same requests' submission-to-completion
    /// times, if they were measured.
    pub(super) fn op_result(&self, seconds: f64, after_submission: Option<&Recorder>) -> OpResult {
        OpResult {
            completed: self.count,
            iops: self.count as f64 / seconds,
            bandwidth_bytes_per_s: self.bytes as f64 / seconds,
            latency_ns: self.summary(),
            detail: OpDetail {
                bytes: self.bytes,
                latency: self.distribution(),
                after_submission: after_submission.map(Recorder::distribution),
                intervals: fio_stats::IntervalCounts::default(),
            },
        }
    }

    /// Bytes of memory the recorder holds beyond its own size.
    #[cfg(test)]
    pub(crate) fn heap_bytes(&self) -> usize {
        match &self.values {
            Values::Few(few) => few.capacity() * std::mem::size_of::<u64>(),
            Values::Many(counts) => counts.capacity() * std::mem::size_of::<u64>(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: the fixed hour-long histogram the recorder used to hold.
    fn fixed(values: &[u64]) -> Histogram<u64> {
        let mut h = Histogram::new_with_max(MAX_TRACKED_NS, SIGNIFICANT_DIGITS).unwrap();
        for &v in values {
            h.saturating_record(v.min(MAX_TRACKED_NS));
        }
        h
    }

    fn values(n: usize, seed: u64) -> Vec<u64> {
        // A spread over nine decades, with repeats and zeros (a deterministic LCG).
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let decade = (x >> 60) % 10;
                ((x >> 20) % 1000) * 10u64.pow(decade as u32)
            })
            .collect()
    }

    fn same_as_fixed(r: &Recorder, reference: &Histogram<u64>) {
        let s = r.summary();
        assert_eq!(s.p50, reference.value_at_quantile(0.5));
        assert_eq!(s.p99, reference.value_at_quantile(0.99));
        assert_eq!(s.p99_999, reference.value_at_quantile(0.99999));
        assert_eq!((s.min, s.max), (reference.min(), reference.max()));
        let d = r.distribution();
        for (p, v) in FIO_PERCENTILES.iter().zip(d.percentiles) {
            assert_eq!(v, reference.value_at_quantile(p / 100.0), "percentile {p}");
        }
        assert_eq!(r.layer().p99, reference.value_at_quantile(0.99));
    }

    #[test]
    fn percentiles_equal_the_fixed_histograms_with_few_and_many_values() {
        for n in [1, 2, FEW_VALUES - 1, FEW_VALUES, FEW_VALUES + 1, 10_000] {
            let v = values(n, n as u64);
            let mut r = Recorder::new();
            for &x in &v {
                r.record(x, 1);
            }
            assert_eq!(r.count(), n as u64);
            same_as_fixed(&r, &fixed(&v));
        }
    }

    #[test]
    fn bucket_indexes_are_hdrhistograms() {
        let hist = fixed(&[]);
        let mut checked = values(100_000, 9);
        checked.extend((0..5000).chain([MAX_TRACKED_NS - 1, MAX_TRACKED_NS]));
        for v in checked.into_iter().map(|v| v.min(MAX_TRACKED_NS)) {
            let index = hdr_index(v);
            let lowest = hdr_lowest_value(index);
            assert_eq!(lowest, hist.lowest_equivalent(v), "value {v}");
            assert_eq!(hdr_index(lowest), index, "value {v}");
        }
    }

    #[test]
    fn values_beyond_an_hour_are_clamped_as_before() {
        let v = [5, MAX_TRACKED_NS * 3, u64::MAX / 4];
        let mut r = Recorder::new();
        for &x in &v {
            r.record(x, 0);
        }
        same_as_fixed(&r, &fixed(&v));
        assert_eq!(r.summary().max, fixed(&v).max());
    }

    #[test]
    fn adding_recorders_in_every_mode_equals_recording_all() {
        for (a, b) in [(3, 5), (3, 5000), (5000, 3), (4000, 6000), (FEW_VALUES, FEW_VALUES)] {
            let (va, vb) = (values(a, 1), values(b, 2));
            let (mut ra, mut rb) = (Recorder::new(), Recorder::new());
            va.iter().for_each(|&x| ra.record(x, 2));
            vb.iter().for_each(|&x| rb.record(x, 2));
            ra.add(&rb);
            let all: Vec<u64> = va.iter().chain(&vb).copied().collect();
            assert_eq!(ra.count(), all.len() as u64);
            same_as_fixed(&ra, &fixed(&all));
            let mut direct = Recorder::new();
            all.iter().for_each(|&x| direct.record(x, 2));
            assert_eq!(ra.distribution(), direct.distribution());
        }
    }

    #[test]
    fn an_unused_recorder_holds_nothing_and_a_busy_one_far_less_than_a_fixed_histogram() {
        assert_eq!(Recorder::new().heap_bytes(), 0);
        let mut r = Recorder::new();
        for i in 0..100_000u64 {
            r.record(10_000 + i % 90_000, 0); // 10-100 us
        }
        let fixed_bytes = fixed(&[]).distinct_values() * 8;
        assert!(r.heap_bytes() * 2 < fixed_bytes, "{} of {fixed_bytes} bytes", r.heap_bytes());
        let mut few = Recorder::new();
        few.record(7, 0);
        assert!(few.heap_bytes() <= FEW_VALUES * 8);
    }
}
