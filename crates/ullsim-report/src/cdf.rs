//! Latency CDFs drawn from a latency summary's percentiles (`latency_ns`): a step line per series through
//! min, p50, p90, ..., p99.999 and max, latency on a log axis, the y axis in nines. The results report draws
//! one per run (a line per flow), the comparison report one per flow (a line per variant).

use serde_json::Value;

use crate::format_ns;
use crate::svg::{Chart, Scale};

/// The percentiles of a latency summary, with their quantiles; `max` is drawn above the last.
const PERCENTILES: [(&str, &str, f64); 6] = [
    ("p50", "p50", 0.5),
    ("p90", "p90", 0.9),
    ("p99", "p99", 0.99),
    ("p99_9", "p99.9", 0.999),
    ("p99_99", "p99.99", 0.9999),
    ("p99_999", "p99.999", 0.99999),
];

/// Where `max` is drawn: one step above p99.999.
const MAX_LEVEL: f64 = 6.0;

/// What every CDF's caption says about how it is drawn.
pub const METHOD: &str = "drawn from the reported percentiles (min, p50, p90, p99, p99.9, p99.99, p99.999, max) \
                          as a step: the fraction of requests at or below a latency is at least the percentile last \
                          passed. The y axis counts nines (p90, p99, p99.9, ... evenly spaced); latency is on a log \
                          scale.";

/// The height on the CDF's y axis of quantile `q`: its number of nines, -log10(1 - q), so that p90, p99,
/// p99.9 ... are evenly spaced.
fn nines(q: f64) -> f64 {
    -(1.0 - q).log10()
}

/// One line of a CDF chart: its name (legend and tooltips), colour, and points (latency in ns, height on the
/// y axis in nines, the percentile's label): min at level 0, the percentiles, max at the top.
pub struct Curve {
    pub name: String,
    pub colour: &'static str,
    points: Vec<(f64, f64, &'static str)>,
}

impl Curve {
    /// The curve of a latency summary, or `None` when it holds no completed request (no positive `max`).
    pub fn of(name: String, colour: &'static str, summary: &Value) -> Option<Curve> {
        let number = |key: &str| crate::number(&summary[key]);
        let max = number("max").unwrap_or(0.0);
        if max <= 0.0 {
            return None;
        }
        let mut points = vec![(number("min").unwrap_or(0.0).max(1.0), 0.0, "min")];
        for (key, label, q) in PERCENTILES {
            if let Some(v) = number(key) {
                points.push((v.max(1.0), nines(q), label));
            }
        }
        points.push((max, MAX_LEVEL, "max"));
        Some(Curve { name, colour, points })
    }
}

/// A log latency axis over every point of `curves`, so that charts sharing it compare at a glance; `None`
/// when there is no curve.
pub fn x_scale<'a>(curves: impl IntoIterator<Item = &'a Curve>) -> Option<Scale> {
    Scale::log_of(curves.into_iter().flat_map(|c| c.points.iter().map(|(x, _, _)| *x)))
}

/// The `<svg>` of `curves` on `x_scale`, their names in a legend above, titled `title`.
pub fn chart(curves: &[Curve], x_scale: &Scale, title: &str) -> String {
    let y_scale = Scale::Linear { min: 0.0, max: MAX_LEVEL };
    let mut chart = Chart::new(900.0, 380.0, 70.0, 20.0, 0.0, 45.0);
    let legend: Vec<(String, &str)> = curves.iter().map(|c| (c.name.clone(), c.colour)).collect();
    chart.top = chart.legend(&legend) + 8.0;
    let y_ticks: Vec<(f64, String)> = [(0.0, "min")]
        .into_iter()
        .chain(PERCENTILES.iter().map(|(_, label, q)| (nines(*q), *label)))
        .chain([(MAX_LEVEL, "max")])
        .map(|(level, label)| (level, label.to_string()))
        .collect();
    chart.y_axis(&y_scale, &y_ticks, "percentile (nines)");
    chart.x_axis(x_scale, format_ns, "latency (log scale)");
    for curve in curves {
        let mut path = Vec::new();
        let mut previous_level = 0.0;
        for (latency, level, _) in &curve.points {
            let x = chart.x(x_scale, *latency);
            path.push((x, chart.y(&y_scale, previous_level)));
            path.push((x, chart.y(&y_scale, *level)));
            previous_level = *level;
        }
        chart.polyline(&path, curve.colour, "");
        for (latency, level, label) in &curve.points {
            let tooltip = format!("{} {label}: {}", curve.name, format_ns(*latency));
            chart.circle(chart.x(x_scale, *latency), chart.y(&y_scale, *level), 3.5, curve.colour, Some(&tooltip));
        }
    }
    chart.finish(title)
}
