//! The report of a comparison (`ullsim compare --json`): the variants side by side. A table of every variant
//! and flow; bars of each flow's IOPS and of its mean and p99 latency per variant; each flow's latency CDF
//! with a line per variant; the per-layer breakdown per variant and flow.

use std::fmt::Write;

use serde_json::Value;

use crate::bars::{self, Bar, Panel};
use crate::cdf::{self, Curve};
use crate::results::{self, Flow, FLOW_FIGURES};
use crate::svg::colour;
use crate::{escape, figure, format_ns, format_number, format_value, number, page, table};

/// Variants the charts draw at most, the first ones in the JSON's order (the table has every one): past a
/// few dozen, bars and curves are too many to read, and the page grows by a chart per ten variants and flow.
pub const MAX_DRAWN_VARIANTS: usize = 60;

/// Lines a CDF chart holds at most: the palette's ten colours, each told apart.
const CURVES_PER_CHART: usize = 10;

/// One variant: its value of every varied key, in `vary` order, and its results.
struct Variant<'a> {
    values: Vec<String>,
    results: &'a Value,
    flows: Vec<Flow<'a>>,
}

pub fn report(json: &Value) -> Result<String, String> {
    let (keys, value_lists) = vary(&json["vary"])?;
    let variants_json = json["variants"].as_array().ok_or("comparison: `variants` is not an array")?;
    let mut variants = Vec::new();
    for (i, variant) in variants_json.iter().enumerate() {
        let overrides = &variant["overrides"];
        let values = keys
            .iter()
            .map(|key| match &overrides[key] {
                Value::Null => Err(format!("comparison: variants[{i}].overrides has no `{key}`")),
                value => Ok(format_value(value)),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let results = &variant["results"];
        if !results.is_object() {
            return Err(format!("comparison: variants[{i}] has no `results` object"));
        }
        let flows = results::flows(results, &format!("comparison: variants[{i}].results"))?;
        variants.push(Variant { values, results, flows });
    }
    // Labels name the keys that take more than one value (those with one are in the table of varied keys), by
    // the last parts of their names that tell them apart.
    let varying: Vec<usize> = (0..keys.len()).filter(|k| value_lists[*k].len() > 1).collect();
    let shown: Vec<usize> = if varying.is_empty() { (0..keys.len()).collect() } else { varying };
    let short = short_names(&keys);
    let labels: Vec<String> = variants.iter().map(|v| label(&short, &v.values, &shown, &[])).collect();

    let name = json["scenario"].as_str().unwrap_or("ullsim comparison");
    let mut body = String::new();
    let _ = writeln!(body, "<h1>{}: {} variant{}</h1>", escape(name), variants.len(), plural(variants.len()));
    body.push_str(
        "<p>One run of the scenario per combination of the varied keys' values (<code>ullsim compare</code>), \
         the first key varying slowest; each variant's values are set after any <code>--set</code>.</p>\n",
    );
    let shortened = short != keys;
    let vary_rows: Vec<Vec<String>> = keys
        .iter()
        .zip(&short)
        .zip(&value_lists)
        .map(|((key, short), values)| {
            let name = if shortened { vec![key.clone(), short.clone()] } else { vec![key.clone()] };
            name.into_iter().chain([values.join(", ")]).collect()
        })
        .collect();
    let header: &[&str] =
        if shortened { &["varied key", "in the charts", "values"] } else { &["varied key", "values"] };
    body += &table(header, &vary_rows, &[true, true, true]);
    let warnings: Vec<String> = variants
        .iter()
        .zip(&labels)
        .flat_map(|(v, label)| {
            v.results["warnings"].as_array().into_iter().flatten().map(move |w| format!("{label}: {}", format_value(w)))
        })
        .collect();
    if !warnings.is_empty() {
        body.push_str("<ul>\n");
        for warning in &warnings {
            let _ = writeln!(body, "<li class=\"warning\">{}</li>", escape(warning));
        }
        body.push_str("</ul>\n");
    }
    body.push_str("<h2>Variants</h2>\n");
    body += &variant_table(&keys, &variants);

    let drawn = variants.len().min(MAX_DRAWN_VARIANTS);
    if drawn < variants.len() {
        let _ = writeln!(
            body,
            "<p>The charts draw the first {drawn} of the {} variants (at most {MAX_DRAWN_VARIANTS}); the table has \
             every one.</p>",
            variants.len()
        );
    }
    let (variants, labels) = (&variants[..drawn], &labels[..drawn]);
    let flow_names = flow_names(variants);
    body.push_str("<h2>IOPS</h2>\n");
    body += &iops(variants, labels, &flow_names);
    body.push_str("<h2>Latency</h2>\n");
    body += &latency(variants, labels, &flow_names);
    body.push_str("<h2>Latency CDF</h2>\n");
    for flow in &flow_names {
        body += &latency_cdfs(flow, &short, variants, &shown);
    }
    body.push_str("<h2>Where the time goes</h2>\n");
    for flow in &flow_names {
        let rows: Vec<Flow> = variants
            .iter()
            .zip(labels)
            .filter_map(|(v, label)| {
                v.flows.iter().find(|f| f.name == *flow).map(|f| Flow { name: label.clone(), json: f.json })
            })
            .collect();
        let _ = writeln!(body, "<h3>{}</h3>", escape(flow));
        body += &results::breakdown(&rows, "variant", &format!("Per-layer latency breakdown of {flow} per variant"));
    }
    Ok(page(&format!("{name}: comparison"), &body))
}

/// The varied keys and their values, from `vary` (`[{"key": ..., "values": [...]}, ...]`).
fn vary(json: &Value) -> Result<(Vec<String>, Vec<Vec<String>>), String> {
    let mut keys = Vec::new();
    let mut values = Vec::new();
    for (i, item) in json.as_array().into_iter().flatten().enumerate() {
        let key = item["key"].as_str().ok_or_else(|| format!("comparison: vary[{i}] has no `key` string"))?;
        let list = item["values"].as_array().ok_or_else(|| format!("comparison: vary[{i}] has no `values` array"))?;
        keys.push(key.to_string());
        values.push(list.iter().map(format_value).collect());
    }
    Ok((keys, values))
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Each key by the fewest last parts of its dotted name that no other key ends with
/// (`flow.reader.iodepth` and `host.io_scheduler` are `iodepth` and `io_scheduler`; `flow.reader.iodepth` and
/// `flow.writer.iodepth`, `reader.iodepth` and `writer.iodepth`).
fn short_names(keys: &[String]) -> Vec<String> {
    let tail = |key: &str, parts: usize| -> String {
        let all: Vec<&str> = key.split('.').collect();
        all[all.len().saturating_sub(parts)..].join(".")
    };
    keys.iter()
        .map(|key| {
            let depth = key.split('.').count();
            let unique =
                |n: &usize| keys.iter().filter(|other| *other != key).all(|other| tail(other, *n) != tail(key, *n));
            (1..depth).find(unique).map_or_else(|| key.clone(), |n| tail(key, n))
        })
        .collect()
}

/// `key=value` of the keys at `shown` (indices into `keys`) but those in `leave_out`, joined by spaces; the
/// whole label when nothing would be left.
fn label(keys: &[String], values: &[String], shown: &[usize], leave_out: &[usize]) -> String {
    let pairs = |skip: &[usize]| -> Vec<String> {
        shown.iter().filter(|k| !skip.contains(k)).map(|&k| format!("{}={}", keys[k], values[k])).collect()
    };
    let kept = pairs(leave_out);
    if kept.is_empty() {
        pairs(&[]).join(" ")
    } else {
        kept.join(" ")
    }
}

/// Every variant and flow: the varied keys' values, the flow and its figures.
fn variant_table(keys: &[String], variants: &[Variant]) -> String {
    // The slowdown column only when some run measured one (`fairness`).
    let slowdown = variants.iter().flat_map(|v| &v.flows).any(|f| number(&f.json["slowdown"]).is_some());
    let figures = if slowdown { FLOW_FIGURES.len() } else { FLOW_FIGURES.len() - 1 };
    let mut header: Vec<&str> = keys.iter().map(String::as_str).collect();
    header.push("flow");
    header.extend(&FLOW_FIGURES[..figures]);
    let rows: Vec<Vec<String>> = variants
        .iter()
        .flat_map(|v| {
            v.flows.iter().map(move |flow| {
                let mut row = v.values.clone();
                row.push(flow.name.clone());
                row.extend(flow.figures().into_iter().take(figures));
                row
            })
        })
        .collect();
    let text_columns = vec![true; keys.len() + 1];
    table(&header, &rows, &text_columns)
}

/// The flows' names in the order they first appear (variants may differ in their flows).
fn flow_names(variants: &[Variant]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for flow in variants.iter().flat_map(|v| &v.flows) {
        if !names.contains(&flow.name) {
            names.push(flow.name.clone());
        }
    }
    names
}

/// Per flow, a panel with a row per variant that has that flow, built by `bars`.
fn panels<'a>(
    variants: &'a [Variant],
    labels: &[String],
    flows: &[String],
    bars: impl Fn(&str, &Flow<'a>) -> Vec<Option<Bar>>,
) -> Vec<Panel> {
    flows
        .iter()
        .map(|name| Panel {
            title: name.clone(),
            rows: variants
                .iter()
                .zip(labels)
                .filter_map(|(v, label)| {
                    let flow = v.flows.iter().find(|f| f.name == *name)?;
                    Some(bars::Row { label: label.clone(), bars: bars(label, flow) })
                })
                .collect(),
        })
        .collect()
}

fn iops(variants: &[Variant], labels: &[String], flows: &[String]) -> String {
    let panels = panels(variants, labels, flows, |label, flow| {
        let value = number(&flow.json["iops"]).unwrap_or(0.0);
        let tooltip = format!("{label}, {}: {} IOPS", flow.name, format_number(value));
        vec![Some(Bar { value, fill: colour(0), tooltip })]
    });
    figure(
        &bars::chart(&panels, 1, &[], format_number, "IOPS per flow and variant"),
        "Each flow's IOPS in each variant; one panel per flow, each on its own axis.",
    )
}

fn latency(variants: &[Variant], labels: &[String], flows: &[String]) -> String {
    let measures = [("mean", "mean"), ("p99", "p99")];
    let panels = panels(variants, labels, flows, |label, flow| {
        measures
            .iter()
            .enumerate()
            .map(|(i, (key, name))| {
                let value = number(&flow.json["latency_ns"][key]).unwrap_or(0.0);
                let tooltip = format!("{label}, {}: {name} latency {}", flow.name, format_ns(value));
                Some(Bar { value, fill: colour(i), tooltip })
            })
            .collect()
    });
    let legend: Vec<(String, &str)> =
        measures.iter().enumerate().map(|(i, (_, name))| (name.to_string(), colour(i))).collect();
    figure(
        &bars::chart(&panels, measures.len(), &legend, format_ns, "Mean and p99 latency per flow and variant"),
        "Each flow's mean and p99 latency in each variant; one panel per flow, each on its own axis (0 where the \
         flow completed no request).",
    )
}

/// The charts the CDFs of `count` variants go into, as ranges of them: one chart when they fit; else whole
/// rounds of the last key's values (the variants that share the other keys' values, `round_starts`), as many
/// as fit in a chart, so that each chart shows the last key at some settings of the others; a round too long
/// for one chart is cut into pieces as even as they can be.
fn cdf_charts(count: usize, round_starts: &[usize]) -> Vec<std::ops::Range<usize>> {
    if count <= CURVES_PER_CHART {
        return std::iter::once(0..count).collect();
    }
    let mut rounds: Vec<std::ops::Range<usize>> = Vec::new();
    for (i, &start) in round_starts.iter().enumerate() {
        let end = round_starts.get(i + 1).copied().unwrap_or(count);
        let pieces = (end - start).div_ceil(CURVES_PER_CHART);
        let size = (end - start).div_ceil(pieces.max(1));
        rounds.extend((start..end).step_by(size.max(1)).map(|s| s..(s + size).min(end)));
    }
    let mut charts: Vec<std::ops::Range<usize>> = Vec::new();
    for round in rounds {
        match charts.last_mut() {
            Some(chart) if round.end - chart.start <= CURVES_PER_CHART => chart.end = round.end,
            _ => charts.push(round),
        }
    }
    charts
}

/// The latency CDFs of `flow`, a line per variant, in charts of up to ten lines ([`cdf_charts`]) that share
/// their latency axis.
fn latency_cdfs(flow: &str, keys: &[String], variants: &[Variant], shown: &[usize]) -> String {
    let mut out = format!("<h3>{}</h3>\n", escape(flow));
    let with_flow: Vec<(&Variant, &Flow)> =
        variants.iter().filter_map(|v| v.flows.iter().find(|f| f.name == flow).map(|f| (v, f))).collect();
    let others = |v: &Variant| v.values[..v.values.len().saturating_sub(1)].to_vec();
    let round_starts: Vec<usize> =
        (0..with_flow.len()).filter(|&i| i == 0 || others(with_flow[i].0) != others(with_flow[i - 1].0)).collect();
    let mut charts = Vec::new();
    for range in cdf_charts(with_flow.len(), &round_starts) {
        let chunk = &with_flow[range];
        // What the chart's variants share goes in its title; the legend names what differs.
        let shared: Vec<usize> =
            shown.iter().copied().filter(|&k| chunk.iter().all(|(v, _)| v.values[k] == chunk[0].0.values[k])).collect();
        let mut curves = Vec::new();
        let mut skipped = Vec::new();
        for (i, (variant, f)) in chunk.iter().enumerate() {
            let name = label(keys, &variant.values, shown, &shared);
            match Curve::of(name.clone(), colour(i), &f.json["latency_ns"]) {
                Some(curve) => curves.push(curve),
                None => skipped.push(name),
            }
        }
        let setting = if shared.len() < shown.len() && !shared.is_empty() {
            format!(" at {}", label(keys, &chunk[0].0.values, &shared, &[]))
        } else {
            String::new()
        };
        charts.push((curves, skipped, setting));
    }
    let Some(x_scale) = cdf::x_scale(charts.iter().flat_map(|(curves, _, _)| curves)) else {
        out += "<p>No variant of this flow completed a request: there is no latency to draw.</p>\n";
        return out;
    };
    for (curves, skipped, setting) in &charts {
        let mut caption = format!("Latency CDF of {flow}{setting}, a line per variant, {}", cdf::METHOD);
        if !skipped.is_empty() {
            caption += &format!(" Not drawn (no completed request): {}.", skipped.join(", "));
        }
        if charts.len() > 1 {
            caption += " The charts of this flow share their latency axis.";
        }
        out += &figure(&cdf::chart(curves, &x_scale, &format!("Latency CDF of {flow}{setting}")), &caption);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdf_charts_keep_rounds_of_the_last_key_whole() {
        // Up to ten: one chart.
        assert_eq!(cdf_charts(6, &[0, 2, 4]), std::iter::once(0..6).collect::<Vec<_>>());
        // Rounds of three: three to a chart.
        assert_eq!(cdf_charts(12, &[0, 3, 6, 9]), [0..9, 9..12]);
        // A round of twelve: two even pieces, never a chart across two rounds.
        assert_eq!(cdf_charts(24, &[0, 12]), [0..6, 6..12, 12..18, 18..24]);
        // Rounds of different lengths (a variant without the flow).
        assert_eq!(cdf_charts(11, &[0, 5, 6]), [0..6, 6..11]);
    }

    #[test]
    fn short_names_keep_the_parts_that_tell_keys_apart() {
        let keys = |k: &[&str]| k.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(short_names(&keys(&["flow.reader.iodepth", "host.io_scheduler"])), ["iodepth", "io_scheduler"]);
        assert_eq!(
            short_names(&keys(&["flow.reader.iodepth", "flow.writer.iodepth", "seed"])),
            ["reader.iodepth", "writer.iodepth", "seed"]
        );
        assert_eq!(short_names(&keys(&["a.x", "x"])), ["a.x", "x"]);
    }
}
