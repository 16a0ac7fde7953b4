//! Time series over the measurement window (`[metrics] timeseries_interval`): per flow and interval, the I/Os
//! completed and their mean and maximum latency and device time; per interval, the device's time-weighted mean
//! and maximum queue depth (FastResponse's Fig. 16 plots these beside a bursty app).
//!
//! Memory grows with the number of intervals only (the scenario caps it at
//! [`crate::config::scenario::MAX_TIMESERIES_INTERVALS`]), never with the number of requests: each completion
//! and each change of the device's queue depth updates the bucket of its interval.

use std::io::{self, Write};

use serde::Serialize;

use crate::engine::Time;
use crate::request::Request;

/// One flow's sums over one interval.
#[derive(Debug, Clone, Copy, Default)]
struct FlowBucket {
    completed: u64,
    bytes: u64,
    latency_sum: u128,
    latency_max: Time,
    /// Doorbell write to completion posted, summed.
    device_sum: u128,
}

impl FlowBucket {
    fn merge(&mut self, other: &FlowBucket) {
        self.completed += other.completed;
        self.bytes += other.bytes;
        self.latency_sum += other.latency_sum;
        self.latency_max = self.latency_max.max(other.latency_max);
        self.device_sum += other.device_sum;
    }
}

/// The device's queue depth over one interval.
#[derive(Debug, Clone, Copy, Default)]
struct DepthBucket {
    /// Commands in the device x ns held, over the interval.
    area: u128,
    max: u64,
}

/// Collects a run's time series as it runs.
pub struct TimeSeries {
    interval: Time,
    /// Start of the measurement window (the end of the warm-up): interval `i` is
    /// `[start + i * interval, start + (i + 1) * interval)`.
    start: Time,
    flows: usize,
    /// `flows` buckets per interval, interval-major; grown as completions reach later intervals.
    flow_buckets: Vec<FlowBucket>,
    /// One per interval, up to the one holding `depth_since`.
    depth_buckets: Vec<DepthBucket>,
    /// Commands in the device now, and since when (integrated into `depth_buckets` up to then).
    depth: u64,
    depth_since: Time,
}

impl TimeSeries {
    /// A series of `flows` flows in intervals of `interval` ns (> 0) from `start`.
    pub fn new(interval: Time, start: Time, flows: usize) -> Self {
        assert!(interval > 0, "a time series needs an interval > 0");
        TimeSeries {
            interval,
            start,
            flows,
            flow_buckets: Vec::new(),
            depth_buckets: Vec::new(),
            depth: 0,
            depth_since: start,
        }
    }

    /// Index of the interval holding `at` (>= `start`).
    fn interval_of(&self, at: Time) -> usize {
        ((at - self.start) / self.interval) as usize
    }

    /// `req` completed at `now`. Counted by the same rule as the flow's results: requests issued in the
    /// warm-up are not, so that the intervals' completions add up to the flow's `completed`.
    pub fn on_complete(&mut self, req: &Request, now: Time) {
        let s = &req.stamps;
        // Flushes stay out of the series, as they stay out of the flow's figures (`FlowResult::flush`).
        if s.issued < self.start || req.op == crate::request::Op::Flush {
            return;
        }
        let index = self.interval_of(now) * self.flows + req.flow as usize;
        if self.flow_buckets.len() <= index {
            self.flow_buckets.resize(index + 1, FlowBucket::default());
        }
        let latency = s.completed - s.issued;
        let b = &mut self.flow_buckets[index];
        b.completed += 1;
        b.bytes += req.len as u64;
        b.latency_sum += latency as u128;
        b.latency_max = b.latency_max.max(latency);
        b.device_sum += s.device_done.saturating_sub(s.submitted) as u128;
    }

    /// The device holds `depth` commands from `now` on (called whenever it may have changed; each device
    /// event changes it by at most one, so no maximum between two calls is missed).
    pub fn observe_queue_depth(&mut self, now: Time, depth: u64) {
        if depth == self.depth {
            return;
        }
        self.integrate_depth(now);
        self.depth = depth;
        if now >= self.start {
            let last = self.depth_buckets.last_mut().expect("integrate_depth opened the interval of now");
            last.max = last.max.max(depth);
        }
    }

    /// Add the current depth's area up to `now`, opening each interval it enters with the depth it starts at.
    fn integrate_depth(&mut self, now: Time) {
        if now < self.start {
            self.depth_since = now;
            return;
        }
        if self.depth_buckets.is_empty() {
            self.depth_buckets.push(DepthBucket { area: 0, max: self.depth });
            self.depth_since = self.start;
        }
        loop {
            let open = self.depth_buckets.len() as u64;
            let open_end = self.start + open * self.interval;
            let last = self.depth_buckets.last_mut().expect("opened above");
            if now < open_end {
                last.area += self.depth as u128 * (now - self.depth_since) as u128;
                self.depth_since = now;
                return;
            }
            last.area += self.depth as u128 * (open_end - self.depth_since) as u128;
            self.depth_since = open_end;
            self.depth_buckets.push(DepthBucket { area: 0, max: self.depth });
        }
    }

    /// The series of a window that closed at `end`; `names` are the flows' names, in flow order.
    pub fn results(mut self, end: Time, names: &[String]) -> TimeSeriesResults {
        let end = end.max(self.start);
        let intervals = (end - self.start).div_ceil(self.interval) as usize;
        self.integrate_depth(end);
        self.depth_buckets.resize(intervals, DepthBucket::default());
        // A completion at the very end of a window that is a whole number of intervals long lands in the
        // interval that starts there: it belongs to the last one, which ends there.
        let kept = intervals * self.flows;
        if intervals > 0 && self.flow_buckets.len() > kept {
            let late = self.flow_buckets.split_off(kept);
            for (k, b) in late.iter().enumerate() {
                self.flow_buckets[kept - self.flows + k % self.flows].merge(b);
            }
        }
        self.flow_buckets.resize(kept, FlowBucket::default());
        let start_ns: Vec<Time> = (0..intervals as u64).map(|i| self.start + i * self.interval).collect();
        let seconds: Vec<f64> = start_ns.iter().map(|&s| ((s + self.interval).min(end) - s) as f64 / 1e9).collect();
        let mean = |sum: u128, count: u64| if count == 0 { 0.0 } else { sum as f64 / count as f64 };
        let flows = names
            .iter()
            .enumerate()
            .map(|(flow, name)| {
                let buckets: Vec<&FlowBucket> = self.flow_buckets.iter().skip(flow).step_by(self.flows).collect();
                FlowSeries {
                    name: name.clone(),
                    completed: buckets.iter().map(|b| b.completed).collect(),
                    iops: buckets.iter().zip(&seconds).map(|(b, s)| b.completed as f64 / s).collect(),
                    bandwidth_bytes_per_s: buckets.iter().zip(&seconds).map(|(b, s)| b.bytes as f64 / s).collect(),
                    mean_latency_ns: buckets.iter().map(|b| mean(b.latency_sum, b.completed)).collect(),
                    max_latency_ns: buckets.iter().map(|b| b.latency_max).collect(),
                    mean_device_ns: buckets.iter().map(|b| mean(b.device_sum, b.completed)).collect(),
                }
            })
            .collect();
        TimeSeriesResults {
            interval_ns: self.interval,
            end_ns: end,
            start_ns,
            device: DeviceSeries {
                mean_queue_depth: self
                    .depth_buckets
                    .iter()
                    .zip(&seconds)
                    .map(|(b, s)| b.area as f64 / (s * 1e9))
                    .collect(),
                max_queue_depth: self.depth_buckets.iter().map(|b| b.max).collect(),
            },
            flows,
        }
    }
}

/// The time series of a run (`[metrics] timeseries_interval`): one entry per interval in every list.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TimeSeriesResults {
    /// Length of each interval; the last one ends at `end_ns` and may be shorter.
    pub interval_ns: Time,
    /// End of the measurement window (the end of the last interval).
    pub end_ns: Time,
    /// Start of each interval (the first is the window's start).
    pub start_ns: Vec<Time>,
    pub device: DeviceSeries,
    /// In the order of the results' `flows`.
    pub flows: Vec<FlowSeries>,
}

/// The device over each interval.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DeviceSeries {
    /// Commands in the device (doorbell to completion posted), time-weighted mean over the interval.
    pub mean_queue_depth: Vec<f64>,
    /// Most commands in the device at once during the interval (including the number it starts with).
    pub max_queue_depth: Vec<u64>,
}

/// One flow over each interval: the I/Os that completed in it (issued after the warm-up, as in the flow's
/// results). Means and maxima are 0 for an interval with no completion.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FlowSeries {
    pub name: String,
    pub completed: Vec<u64>,
    /// Completions per second of the interval.
    pub iops: Vec<f64>,
    pub bandwidth_bytes_per_s: Vec<f64>,
    pub mean_latency_ns: Vec<f64>,
    pub max_latency_ns: Vec<Time>,
    /// Mean time from the doorbell write to the completion posted (the `device_queued` and
    /// `device_service` parts of the breakdown).
    pub mean_device_ns: Vec<f64>,
}

/// The CSV header: one row per interval and flow, the device's columns repeated on each flow's row.
pub const CSV_HEADER: &str = "interval_start_ns,interval_end_ns,flow,completed,iops,bandwidth_bytes_per_s,\
                              mean_latency_ns,max_latency_ns,mean_device_ns,device_mean_queue_depth,\
                              device_max_queue_depth";

impl TimeSeriesResults {
    /// Write the series as CSV: [`CSV_HEADER`], then [`TimeSeriesResults::write_csv_rows`].
    pub fn write_csv(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "{CSV_HEADER}")?;
        self.write_csv_rows(out, "")
    }

    /// One CSV row per interval and flow, interval-major, each starting with `prefix` (extra leading
    /// fields, each followed by a comma, e.g. `ullsim compare`'s variant).
    pub fn write_csv_rows(&self, out: &mut dyn Write, prefix: &str) -> io::Result<()> {
        for (i, &start) in self.start_ns.iter().enumerate() {
            let end = (start + self.interval_ns).min(self.end_ns);
            for f in &self.flows {
                writeln!(
                    out,
                    "{prefix}{start},{end},{},{},{},{},{},{},{},{},{}",
                    csv_field(&f.name),
                    f.completed[i],
                    f.iops[i],
                    f.bandwidth_bytes_per_s[i],
                    f.mean_latency_ns[i],
                    f.max_latency_ns[i],
                    f.mean_device_ns[i],
                    self.device.mean_queue_depth[i],
                    self.device.max_queue_depth[i],
                )?;
            }
        }
        Ok(())
    }
}

/// A CSV field (RFC 4180): quoted, with quotes doubled, when it holds a comma, a quote or a line break.
pub fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}
