//! `ullsim compare`: run one scenario in several variants (the cartesian product of the `--vary` values) in
//! parallel and show them side by side.

use std::fmt::Write;
use std::path::Path;
use std::time::Instant;

use anyhow::{anyhow, bail, Result};
use rayon::prelude::*;
use serde::{Serialize, Serializer};
use ullsim::config::scenario::check_varied_not_fixed;
use ullsim::{RunResults, Scenario};

use ullsim::metrics::timeseries::{csv_field, CSV_HEADER};

use crate::progress::Progress;
use crate::table::latency_cells;

/// One `--vary KEY=V1,V2,...`: a key and the values it takes, in the order given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct Vary {
    key: String,
    values: Vec<String>,
}

/// One point of the product: a value for every varied key, in `--vary` order.
struct Variant {
    assignments: Vec<(String, String)>,
}

impl Variant {
    /// `key=value` for every varied key, joined by spaces (e.g. `host.io_scheduler=bfq flow.reader.iodepth=4`).
    fn label(&self) -> String {
        self.overrides().join(" ")
    }

    /// The variant's `key=value` overrides, applied after `--set`.
    fn overrides(&self) -> Vec<String> {
        self.assignments.iter().map(|(k, v)| format!("{k}={v}")).collect()
    }
}

/// The overrides of a variant as a JSON object whose keys keep `--vary` order.
struct Overrides<'a>(&'a [(String, String)]);

impl Serialize for Overrides<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

#[derive(Serialize)]
struct VariantReport<'a> {
    overrides: Overrides<'a>,
    results: &'a RunResults,
}

#[derive(Serialize)]
struct Report<'a> {
    scenario: &'a str,
    vary: &'a [Vary],
    variants: Vec<VariantReport<'a>>,
}

/// Parse one `--vary KEY=V1,V2,...` argument.
fn parse_vary(arg: &str) -> Result<Vary> {
    let expected = "expected KEY=V1,V2,... (e.g. --vary flow.reader.iodepth=1,4)";
    let Some((key, list)) = arg.split_once('=') else {
        bail!("--vary {arg}: no `=`; {expected}");
    };
    let key = key.trim();
    if key.is_empty() {
        bail!("--vary {arg}: empty key; {expected}");
    }
    if list.trim().is_empty() {
        bail!("--vary {arg}: no values after `=`; {expected}");
    }
    let values = split_values(list).map_err(|m| anyhow!("--vary {arg}: {m}; {expected}"))?;
    if let Some(i) = values.iter().position(String::is_empty) {
        bail!("--vary {arg}: {}; {expected}", empty_value(&values, i));
    }
    Ok(Vary { key: key.to_string(), values })
}

/// Which of `values` is empty, the `i`th, said so that it cannot be mistaken: its place counted from 1 among
/// all of them, and the values around it.
fn empty_value(values: &[String], i: usize) -> String {
    let n = values.len();
    if values.iter().all(String::is_empty) {
        return format!("all {n} values are empty");
    }
    let neighbour = |j: usize| format!("\"{}\"", values[j]);
    let place = match (i.checked_sub(1), (i + 1 < n).then_some(i + 1)) {
        (Some(before), Some(after)) => format!(" (between {} and {})", neighbour(before), neighbour(after)),
        (Some(before), None) => format!(" (the last, after {})", neighbour(before)),
        (None, Some(after)) => format!(" (the first, before {})", neighbour(after)),
        (None, None) => String::new(),
    };
    format!("value {} of {n}{place} is empty", i + 1)
}

/// Variants one `ullsim compare` runs at most (docs/output.md, "Comparisons"). Every variant's scenario and
/// results stay in memory until the JSON and the table are written (about 10 KB of JSON per variant of two
/// flows), and 10,000 variants of a 100 ms scenario take hours of CPU: past that, a comparison is a sweep for
/// Python's `ullsim.sweep` (a DataFrame, and a Dask cluster to run it on).
pub const MAX_VARIANTS: u128 = 10_000;

/// How many variants `varies` make, or an error naming the count and the maximum.
fn count_variants(varies: &[Vary]) -> Result<usize> {
    let sizes: Vec<String> = varies.iter().map(|v| v.values.len().to_string()).collect();
    let count = varies.iter().try_fold(1u128, |n, v| n.checked_mul(v.values.len() as u128));
    match count {
        Some(n) if n <= MAX_VARIANTS => Ok(n as usize),
        _ => bail!(
            "--vary: {} value{} make {} variants; the maximum is {MAX_VARIANTS}: vary fewer values, split the \
             comparison, or run it as a sweep (Python's ullsim.sweep)",
            sizes.join(" x "),
            if sizes.len() == 1 && sizes[0] == "1" { "" } else { "s" },
            count.map_or(format!("more than {}", u128::MAX), |n| n.to_string()),
        ),
    }
}

/// Split a value list on its top-level commas: commas inside `[...]`, `{...}` or a quoted string (`"..."`, with
/// backslash escapes, or `'...'`) do not split, so TOML arrays, inline tables and strings pass through whole.
/// A quote opens a string at the start of a value or inside brackets. Values are trimmed.
fn split_values(list: &str) -> std::result::Result<Vec<String>, String> {
    let mut values = Vec::new();
    let mut closers: Vec<char> = Vec::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut start = 0;
    let mut at_value_start = true;
    for (i, c) in list.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if q == '"' && c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' if at_value_start || !closers.is_empty() => quote = Some(c),
            '[' => closers.push(']'),
            '{' => closers.push('}'),
            ']' | '}' if closers.last() != Some(&c) => return Err(format!("unbalanced `{c}`")),
            ']' | '}' => {
                closers.pop();
            }
            ',' if closers.is_empty() => {
                values.push(list[start..i].trim().to_string());
                start = i + 1;
                at_value_start = true;
                continue;
            }
            _ => {}
        }
        if !c.is_whitespace() {
            at_value_start = false;
        }
    }
    if let Some(q) = quote {
        return Err(format!("unclosed {q}"));
    }
    if let Some(c) = closers.last() {
        return Err(format!("missing `{c}`"));
    }
    values.push(list[start..].trim().to_string());
    Ok(values)
}

/// Every combination of the varied values, the first `--vary` varying slowest.
fn variants(varies: &[Vary]) -> Vec<Variant> {
    let mut all = vec![Variant { assignments: Vec::new() }];
    for vary in varies {
        all = all
            .iter()
            .flat_map(|base| {
                vary.values.iter().map(move |value| {
                    let mut assignments = base.assignments.clone();
                    assignments.push((vary.key.clone(), value.clone()));
                    Variant { assignments }
                })
            })
            .collect();
    }
    all
}

/// What `ullsim compare` takes.
pub struct Args<'a> {
    pub path: Option<&'a Path>,
    pub set: &'a [String],
    pub vary: &'a [String],
    pub seed: Option<u64>,
    pub timeseries: Option<&'a Path>,
    pub html: Option<&'a Path>,
    pub output: &'a crate::Output,
}

/// Run `ullsim compare`.
pub fn main(args: Args) -> Result<()> {
    let Args { path, set, vary, seed, timeseries, html, output } = args;
    let varies = vary.iter().map(|a| parse_vary(a)).collect::<Result<Vec<_>>>()?;
    if varies.is_empty() {
        bail!("--vary: expected at least one KEY=V1,V2,...");
    }
    for (i, (v, arg)) in varies.iter().zip(vary).enumerate() {
        if varies[..i].iter().any(|w| w.key == v.key) {
            bail!("--vary {}: this key is already varied by an earlier --vary; give all its values in one", v.key);
        }
        check_varied_not_fixed(&[&v.key], set, ("--vary", "--set")).map_err(|m| anyhow!("--vary {arg}: {m}"))?;
    }
    let count = count_variants(&varies)?;
    // The base scenario first, so a bad file or --set is reported once, as `ullsim run` would.
    let base = crate::load(path, set, seed)?;
    if timeseries.is_some() {
        crate::check_timeseries_flag(&base)?;
    }
    let variants = variants(&varies);
    debug_assert_eq!(variants.len(), count);
    // Check every variant before running any (10,000 take a few seconds: they get a bar too).
    let progress = Progress::new("{bar:40} {pos}/{len} variants checked, {elapsed} elapsed, ~{eta} left")?;
    let scenarios = variants
        .iter()
        .map(|variant| {
            let overrides = variant.overrides();
            let all: Vec<String> = set.iter().chain(&overrides).cloned().collect();
            let loaded = crate::load(path, &all, seed).map_err(|e| {
                // The library names every override `--set`; these came from --vary.
                let mut message = format!("{e:#}");
                for o in &overrides {
                    message = message.replace(&format!("--set {o}:"), &format!("{o}:"));
                }
                anyhow!("--vary {}: {message}", variant.label())
            });
            progress.advance(count as u64);
            loaded
        })
        .collect::<Result<Vec<Scenario>>>();
    progress.finish();
    let scenarios = scenarios?;
    let started = Instant::now();
    let progress = Progress::new("{bar:40} {pos}/{len} variants run, {elapsed} elapsed, ~{eta} left")?;
    let outcomes: Vec<_> = scenarios
        .par_iter()
        .map(|scenario| {
            let outcome = ullsim::run_scenario(scenario);
            progress.advance(count as u64);
            outcome
        })
        .collect();
    progress.finish();
    let wall = started.elapsed().as_secs_f64();
    let mut results = Vec::with_capacity(outcomes.len());
    for ((outcome, variant), scenario) in outcomes.into_iter().zip(&variants).zip(&scenarios) {
        let r =
            outcome.map_err(|e| anyhow!("--vary {}: {}: run failed: {e}", variant.label(), scenario.source_name))?;
        results.push(r);
    }
    if let Some(csv) = timeseries {
        crate::write_file(csv, |out| {
            writeln!(out, "variant,{CSV_HEADER}")?;
            for (variant, r) in variants.iter().zip(&results) {
                // A --vary of the interval itself may switch the series off in some variants.
                if let Some(series) = &r.timeseries {
                    series.write_csv_rows(out, &format!("{},", csv_field(&variant.label())))?;
                }
            }
            Ok(())
        })?;
    }
    let report = Report {
        scenario: &base.name,
        vary: &varies,
        variants: variants
            .iter()
            .zip(&results)
            .map(|(v, r)| VariantReport { overrides: Overrides(&v.assignments), results: r })
            .collect(),
    };
    if let Some(path) = html {
        crate::write_html_report(path, &report)?;
    }
    output.emit(|| &report, || render(&base.name, &varies, &variants, &results, wall))
}

/// The comparison table: one row per variant and flow (latencies in microseconds).
fn render(scenario: &str, varies: &[Vary], variants: &[Variant], results: &[RunResults], wall_seconds: f64) -> String {
    let labels: Vec<String> = variants.iter().map(Variant::label).collect();
    let vw = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0).max("variant".len());
    let flush_rows = results.iter().flat_map(|r| &r.flows).any(|f| f.flush.is_some());
    let fw = results.iter().flat_map(|r| &r.flows).map(|f| f.name.chars().count()).max().unwrap_or(0).max(4);
    let fw = if flush_rows { fw.max("  (flushes)".len()) } else { fw };
    let keys: Vec<&str> = varies.iter().map(|v| v.key.as_str()).collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{scenario} — {} variant{} varying {} ({wall_seconds:.2} s wall)",
        variants.len(),
        if variants.len() == 1 { "" } else { "s" },
        keys.join(", ")
    );
    let _ = writeln!(
        out,
        "\n{:<vw$} {:<fw$} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "variant", "flow", "IOPS", "MB/s", "mean us", "p50", "p99", "p99.9", "max"
    );
    for (label, r) in labels.iter().zip(results) {
        for f in &r.flows {
            let _ = writeln!(
                out,
                "{label:<vw$} {:<fw$} {:>10.0} {:>9.1} {}",
                f.name,
                f.iops,
                f.bandwidth_bytes_per_s / 1e6,
                latency_cells(&f.latency_ns)
            );
            if let Some(flush) = &f.flush {
                // Flushes and fsyncs are not in the flow's row: they have one of their own, as in `run`'s.
                let _ = writeln!(
                    out,
                    "{label:<vw$} {:<fw$} {:>10.0} {:>9} {}",
                    "  (flushes)",
                    flush.iops,
                    "",
                    latency_cells(&flush.latency_ns)
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(list: &str) -> Vec<String> {
        split_values(list).unwrap_or_else(|e| panic!("{list:?}: {e}"))
    }

    #[test]
    fn splits_on_top_level_commas_only() {
        assert_eq!(split("1,4, 16"), ["1", "4", "16"]);
        assert_eq!(split("[1,2],[3,4]"), ["[1,2]", "[3,4]"]);
        assert_eq!(split("[[1,2],[3]], [4]"), ["[[1,2],[3]]", "[4]"]);
        assert_eq!(split(r#""a,b",c"#), [r#""a,b""#, "c"]);
        assert_eq!(split(r#""say \"x,y\"",z"#), [r#""say \"x,y\"""#, "z"]);
        assert_eq!(split("'a,b',c"), ["'a,b'", "c"]);
        assert_eq!(split(r#"["],[",","],x"#), [r#"["],[",","]"#, "x"]);
        assert_eq!(split("{ a = 1, b = 2 },{ a = 3 }"), ["{ a = 1, b = 2 }", "{ a = 3 }"]);
        assert_eq!(split("bfq"), ["bfq"]);
        // An apostrophe inside a bare word is not a quote.
        assert_eq!(split("don't,do"), ["don't", "do"]);
        assert_eq!(split("1,,2"), ["1", "", "2"]);
    }

    #[test]
    fn unbalanced_brackets_and_quotes_are_errors() {
        for bad in ["[1,2", "1]", "[1,2}", r#""a,b"#, "'a"] {
            assert!(split_values(bad).is_err(), "{bad:?} should not split");
        }
    }

    #[test]
    fn parse_vary_names_the_flag_and_what_was_expected() {
        let v = parse_vary(" flow.reader.iodepth = 1, 4 ").unwrap();
        assert_eq!(v, Vary { key: "flow.reader.iodepth".into(), values: vec!["1".into(), "4".into()] });
        for (bad, needle) in [
            ("iodepth", "no `=`"),
            ("=1,2", "empty key"),
            ("a.b=", "no values"),
            ("a.b=1,,2", r#"value 2 of 3 (between "1" and "2") is empty"#),
            ("a.b=1,", r#"value 2 of 2 (the last, after "1") is empty"#),
            ("a.b=,1,,", r#"value 1 of 4 (the first, before "1") is empty"#),
            ("a.b=1,,,2", r#"value 2 of 4 (between "1" and "") is empty"#),
            ("a.b= , ", "all 2 values are empty"),
            ("a.b=[1", "missing `]`"),
        ] {
            let e = parse_vary(bad).unwrap_err().to_string();
            assert!(e.starts_with(&format!("--vary {bad}: ")), "{e}");
            assert!(e.contains(needle) && e.contains("expected KEY=V1,V2,..."), "{e}");
        }
    }

    #[test]
    fn the_first_vary_varies_slowest() {
        let varies = [
            Vary { key: "a".into(), values: vec!["1".into(), "2".into()] },
            Vary { key: "b".into(), values: vec!["x".into(), "y".into(), "z".into()] },
        ];
        let labels: Vec<String> = variants(&varies).iter().map(Variant::label).collect();
        assert_eq!(labels, ["a=1 b=x", "a=1 b=y", "a=1 b=z", "a=2 b=x", "a=2 b=y", "a=2 b=z"]);
    }
}
