//! One direction's latency as fio's JSON reports it, and the merge of a job's clones. fio 3.x writes `lat_ns`
//! (issue to completion), `clat_ns` (submission to completion) and `slat_ns` in nanoseconds; fio 2.x wrote
//! `lat`, `clat` and `slat` in microseconds. Percentiles are keyed `"%f"` ("99.000000"); fio computes them for
//! `clat` by default and for `lat` only with `lat_percentiles=1` (stat.c, `add_ddir_lat_json`). With
//! `--output-format=json+` the object with percentiles also has `bins`: each bin's latency in ns (the middle of
//! fio's histogram bin, `plat_idx_to_val`) and its count (HOWTO "JSON+ output").

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

/// Which latency a direction's percentiles measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LatencyKind {
    /// Issue to completion (`lat_ns`): what the application sees.
    Total,
    /// Submission to completion (`clat_ns`): fio's default percentiles. For synchronous engines it is the
    /// whole system call, about `lat`; for asynchronous ones `lat` less the submission (`slat`).
    Completion,
}

/// A latency object's figures, in ns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LatencyStats {
    pub samples: u64,
    pub mean_ns: f64,
    /// (percent, ns), ascending in percent.
    pub percentiles: Vec<(f64, u64)>,
    /// json+'s histogram: bin latency (ns) -> count.
    pub bins: Option<BTreeMap<u64, u64>>,
}

/// Read a latency object; `unit_ns` is 1 for fio 3.x's `*_ns` objects and 1000 for fio 2.x's (microseconds).
/// `None` when `value` is not an object with a numeric `mean`.
pub fn read_stats(value: &Value, unit_ns: u64) -> Option<LatencyStats> {
    let mean = value.get("mean")?.as_f64()?;
    let samples = value.get("N").and_then(Value::as_u64).unwrap_or(0);
    let mut percentiles: Vec<(f64, u64)> = match value.get("percentile").and_then(Value::as_object) {
        Some(map) => {
            map.iter().filter_map(|(k, v)| Some((k.parse::<f64>().ok()?, to_ns(v.as_f64()?, unit_ns)))).collect()
        }
        None => Vec::new(),
    };
    percentiles.sort_by(|a, b| a.0.total_cmp(&b.0));
    let bins = value.get("bins").and_then(Value::as_object).map(|map| {
        let mut bins = BTreeMap::new();
        for (k, v) in map {
            if let (Ok(ns), Some(count)) = (k.parse::<u64>(), v.as_u64()) {
                *bins.entry(ns.saturating_mul(unit_ns)).or_insert(0) += count;
            }
        }
        bins
    });
    Some(LatencyStats { samples, mean_ns: mean * unit_ns as f64, percentiles, bins })
}

fn to_ns(value: f64, unit_ns: u64) -> u64 {
    (value * unit_ns as f64).round().max(0.0) as u64
}

/// The percentile `percent` from a histogram, as fio computes it (stat.c, `calc_clat_percentiles`): the
/// first bin at which the running count reaches `percent` / 100 x the total.
pub fn percentile_from_bins(bins: &BTreeMap<u64, u64>, percent: f64) -> Option<u64> {
    let total: u64 = bins.values().sum();
    let target = percent / 100.0 * total as f64;
    let mut running = 0u64;
    bins.iter().find_map(|(&ns, &count)| {
        running += count;
        (running as f64 >= target).then_some(ns)
    })
}

/// The clones' latency objects merged into the job's, each clone weighted by its I/Os (`weights`). With
/// bins in every clone the histograms add up and the percentiles are exact, fio's own for the merged
/// histogram; otherwise each percentile is the I/O-weighted mean of the clones' (not a percentile of the
/// whole: the second value says it is approximate).
pub fn merge(clones: &[(LatencyStats, u64)]) -> (LatencyStats, bool) {
    if let [(only, _)] = clones {
        return (only.clone(), false);
    }
    let weight: u64 = clones.iter().map(|(_, w)| w).sum();
    let weighted = |f: &dyn Fn(&LatencyStats) -> f64| {
        clones.iter().map(|(s, w)| f(s) * *w as f64).sum::<f64>() / weight.max(1) as f64
    };
    let mean_ns = weighted(&|s| s.mean_ns);
    let samples = clones.iter().map(|(s, _)| s.samples).sum();
    // The percent keys every clone reports (fio's list is the job's, so the same in all clones).
    let percents: Vec<f64> =
        clones.first().map(|(s, _)| s.percentiles.iter().map(|p| p.0).collect()).unwrap_or_default();
    let shared = |p: f64| clones.iter().all(|(s, _)| s.percentiles.iter().any(|q| q.0 == p));
    let percents: Vec<f64> = percents.into_iter().filter(|&p| shared(p)).collect();
    if clones.iter().all(|(s, _)| s.bins.is_some()) {
        let mut bins = BTreeMap::new();
        for (ns, count) in clones.iter().flat_map(|(s, _)| s.bins.iter().flatten()) {
            *bins.entry(*ns).or_insert(0) += count;
        }
        let percentiles = percents.iter().filter_map(|&p| Some((p, percentile_from_bins(&bins, p)?))).collect();
        return (LatencyStats { samples, mean_ns, percentiles, bins: Some(bins) }, false);
    }
    let value_at = |s: &LatencyStats, p: f64| s.percentiles.iter().find(|q| q.0 == p).map_or(0, |q| q.1) as f64;
    let percentiles = percents.iter().map(|&p| (p, weighted(&|s| value_at(s, p)).round() as u64)).collect();
    let approximate = !percents.is_empty();
    (LatencyStats { samples, mean_ns, percentiles, bins: None }, approximate)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_ns_and_us_objects() {
        let v = json!({"min": 1, "max": 9, "mean": 5.5, "N": 4, "percentile": {"99.000000": 9, "50.000000": 5}});
        let ns = read_stats(&v, 1).unwrap();
        assert_eq!(ns.percentiles, vec![(50.0, 5), (99.0, 9)]);
        assert_eq!(ns.samples, 4);
        let us = read_stats(&v, 1000).unwrap();
        assert_eq!(us.mean_ns, 5500.0);
        assert_eq!(us.percentiles[1], (99.0, 9000));
        assert!(read_stats(&json!({"min": 1}), 1).is_none());
    }

    #[test]
    fn bins_merge_exactly_and_percentiles_otherwise_approximately() {
        let clone = |bins: &[(u64, u64)], p99: u64| LatencyStats {
            samples: bins.iter().map(|b| b.1).sum(),
            mean_ns: 100.0,
            percentiles: vec![(50.0, 0), (99.0, p99)],
            bins: Some(bins.iter().copied().collect()),
        };
        // 99 fast I/Os in one clone, 1 slow in the other: the 99th percentile of all 100 is the 99th I/O.
        let a = clone(&[(10, 98), (20, 1)], 20);
        let b = clone(&[(1000, 1)], 1000);
        let (merged, approximate) = merge(&[(a.clone(), 99), (b.clone(), 1)]);
        assert!(!approximate);
        assert_eq!(merged.percentiles, vec![(50.0, 10), (99.0, 20)]);
        assert_eq!(merged.samples, 100);
        let (no_bins, approximate) =
            merge(&[(LatencyStats { bins: None, ..a }, 99), (LatencyStats { bins: None, ..b }, 1)]);
        assert!(approximate);
        assert_eq!(no_bins.percentiles[1], (99.0, 30)); // (20 x 99 + 1000) / 100 = 29.8
    }
}
