//! fio's `random_distribution`, the value of a flow's key: which block a random I/O touches (the sampler is
//! `workload::distribution`'s).
//!
//! Semantics follow fio (options.c, lib/zipf.c, lib/gauss.c, io_u.c):
//! - `random`: uniform.
//! - `zipf:THETA`: rank `k` (1-based) is drawn with probability proportional to `k^-THETA`. fio only
//!   rejects `THETA == 1.0`; we also require `THETA > 0` and finite.
//! - `pareto:H` (`0 < H < 1`): rank `floor(n * u^p)` with `p = ln H / ln(1 - H)` and `u` uniform in
//!   `[0, 1)`, so the hottest `H` of the range receives `1 - H` of the accesses ("pareto:0.2" is the 80/20
//!   rule). Skew is weakest at `H = 0.5` (uniform) and grows towards either end; above 0.5 the hot end of
//!   the rank range flips, which scattering makes irrelevant.
//! - `normal:DEV` (`0 <= DEV < 100`): fio's "gauss" is not a Gaussian with standard deviation DEV%.
//!   It is the mean of 12 uniform draws over the range (a bell with sd ~ n/12) plus a uniform jitter
//!   whose width is DEV% of the range (capped at half the range), halved until the result is in range.
//! - `zoned:A/R:...`: `A`% of the accesses go uniformly to the next `R`% of the range, zones in order from
//!   offset 0. Access percentages must add up to 100, range percentages to at most 100 (the rest of the
//!   range is never touched). fio allows up to 256 zones.
//!
//! Like fio, the ranks drawn by zipf, pareto and normal are scattered over the range (fio hashes them; we
//! use a keyed bijection so no two ranks collide), while zoned keeps its zones contiguous.
//!
//! Not supported (rejected with a message): fio's optional center (`zipf:1.2:0.25`), per-direction sets
//! (`zoned:...,...`), blank percentages in zones, and `zoned_abs` (its sizes are bytes, which needs the
//! block size; express it as `zoned` percentages instead).

use std::fmt;
use std::str::FromStr;

/// fio's random_distribution, parsed from fio's own spelling.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum RandomDistribution {
    /// "random": uniform.
    #[default]
    Uniform,
    /// "zipf:THETA": rank k has weight k^-theta; theta > 0 and theta != 1 (fio rejects 1.0).
    Zipf { theta: f64 },
    /// "pareto:H" with 0 < h < 1: the hottest h of the range receives 1 - h of the accesses.
    Pareto { h: f64 },
    /// "normal:DEV": fio's gauss, a bell around the middle of the rank range widened by a uniform jitter
    /// of DEV percent of the range; 0 <= DEV < 100.
    Normal { deviation_pct: f64 },
    /// "zoned:A/R:A/R:...": A% of the accesses go to the next R% of the range, in order from offset 0.
    Zoned(Vec<Zone>),
}

/// One zone of a `zoned` distribution.
#[derive(Debug, Clone, PartialEq)]
pub struct Zone {
    /// Share of all accesses that land in this zone, in percent.
    pub access_pct: f64,
    /// Size of this zone as a share of the range, in percent.
    pub range_pct: f64,
}

pub(crate) const EXPECTED: &str = "expected random, zipf:THETA, pareto:H, normal:DEV or zoned:ACCESS%/RANGE%:...";

/// fio's limit on the number of zones.
const MAX_ZONES: usize = 256;

/// Slack for percentages written with decimals (33.3 + 33.3 + 33.4 is not exactly 100 in binary).
const PCT_TOLERANCE: f64 = 1e-6;

// fio's defaults when the parameter is omitted ("zipf", "pareto", "normal").
const DEFAULT_ZIPF_THETA: f64 = 1.1;
const DEFAULT_PARETO_H: f64 = 0.2;
const DEFAULT_NORMAL_DEV: f64 = 0.0;

impl RandomDistribution {
    /// Checks the parameters (parsing already does; this is for values built in code).
    pub fn validate(&self) -> Result<(), String> {
        match self {
            RandomDistribution::Uniform => Ok(()),
            RandomDistribution::Zipf { theta } => {
                if theta.is_finite() && *theta > 0.0 && *theta != 1.0 {
                    Ok(())
                } else {
                    Err(format!("zipf theta must be finite, > 0 and != 1 (fio rejects 1.0), found {theta}"))
                }
            }
            RandomDistribution::Pareto { h } => {
                if *h > 0.0 && *h < 1.0 {
                    Ok(())
                } else {
                    Err(format!("pareto h must be in (0, 1), found {h}"))
                }
            }
            RandomDistribution::Normal { deviation_pct } => {
                if *deviation_pct >= 0.0 && *deviation_pct < 100.0 {
                    Ok(())
                } else {
                    Err(format!("normal deviation must be in [0, 100) percent, found {deviation_pct}"))
                }
            }
            RandomDistribution::Zoned(zones) => validate_zones(zones),
        }
    }
}

fn validate_zones(zones: &[Zone]) -> Result<(), String> {
    if zones.is_empty() {
        return Err("zoned needs at least one ACCESS%/RANGE% zone".to_string());
    }
    if zones.len() > MAX_ZONES {
        return Err(format!("zoned allows at most {MAX_ZONES} zones (as fio), found {}", zones.len()));
    }
    for (index, zone) in zones.iter().enumerate() {
        let zone_number = index + 1;
        for (what, value) in [("access", zone.access_pct), ("range", zone.range_pct)] {
            if !(value.is_finite() && (0.0..=100.0).contains(&value)) {
                return Err(format!("zone {zone_number}: {what} percentage must be in [0, 100], found {value}"));
            }
        }
        if zone.access_pct > 0.0 && zone.range_pct == 0.0 {
            return Err(format!("zone {zone_number}: {}% of the accesses go to an empty (0%) range", zone.access_pct));
        }
    }
    let access_total: f64 = zones.iter().map(|z| z.access_pct).sum();
    if (access_total - 100.0).abs() > PCT_TOLERANCE {
        return Err(format!("zoned access percentages must add up to 100, they add up to {access_total}"));
    }
    let range_total: f64 = zones.iter().map(|z| z.range_pct).sum();
    if range_total > 100.0 + PCT_TOLERANCE {
        return Err(format!("zoned range percentages must add up to at most 100, they add up to {range_total}"));
    }
    Ok(())
}

fn parse_number(text: &str, what: &str, whole: &str) -> Result<f64, String> {
    text.trim().parse::<f64>().map_err(|_| format!("{what} must be a number, found {text:?} in {whole:?}"))
}

/// The parameter of zipf/pareto/normal, or fio's default when it is omitted.
fn parse_single_parameter(name: &str, parameter: Option<&str>, default: f64, whole: &str) -> Result<f64, String> {
    match parameter {
        None => Ok(default),
        Some(text) if text.contains(':') => {
            Err(format!("{name}: fio's optional center (second value) is not supported, found {whole:?}"))
        }
        Some(text) => parse_number(text, &format!("{name} parameter"), whole),
    }
}

fn parse_zones(parameter: Option<&str>, whole: &str) -> Result<Vec<Zone>, String> {
    let Some(list) = parameter.filter(|p| !p.trim().is_empty()) else {
        return Err(format!("zoned needs ACCESS%/RANGE% zones, e.g. zoned:60/10:30/20:10/70, found {whole:?}"));
    };
    if list.contains(',') {
        return Err(format!(
            "zoned: separate zone sets for reads, writes and trims (',') are not supported, \
             found {whole:?}"
        ));
    }
    list.split(':')
        .map(|zone| {
            let (access, range) = zone
                .split_once('/')
                .ok_or_else(|| format!("zoned: each zone is ACCESS%/RANGE%, found {zone:?} in {whole:?}"))?;
            Ok(Zone {
                access_pct: parse_number(access, "zone access percentage", whole)?,
                range_pct: parse_number(range, "zone range percentage", whole)?,
            })
        })
        .collect()
}

impl FromStr for RandomDistribution {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let whole = text.trim();
        let (name, parameter) = match whole.split_once(':') {
            Some((name, parameter)) => (name, Some(parameter)),
            None => (whole, None),
        };
        let distribution = match name {
            "random" => match parameter {
                None => RandomDistribution::Uniform,
                Some(_) => return Err(format!("random takes no parameter, found {whole:?}")),
            },
            "zipf" => RandomDistribution::Zipf {
                theta: parse_single_parameter("zipf", parameter, DEFAULT_ZIPF_THETA, whole)?,
            },
            "pareto" => {
                RandomDistribution::Pareto { h: parse_single_parameter("pareto", parameter, DEFAULT_PARETO_H, whole)? }
            }
            "normal" => RandomDistribution::Normal {
                deviation_pct: parse_single_parameter("normal", parameter, DEFAULT_NORMAL_DEV, whole)?,
            },
            "zoned" => RandomDistribution::Zoned(parse_zones(parameter, whole)?),
            "zoned_abs" => {
                return Err(format!(
                    "zoned_abs (sizes in bytes) is not supported; write the zones as percentages \
                     with zoned:ACCESS%/RANGE%:..., found {whole:?}"
                ))
            }
            _ => return Err(format!("{EXPECTED}, found {whole:?}")),
        };
        distribution.validate().map_err(|problem| format!("{problem} (in {whole:?})"))?;
        Ok(distribution)
    }
}

impl fmt::Display for RandomDistribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // f64's Display is the shortest text that parses back to the same value, so this round-trips.
        match self {
            RandomDistribution::Uniform => write!(f, "random"),
            RandomDistribution::Zipf { theta } => write!(f, "zipf:{theta}"),
            RandomDistribution::Pareto { h } => write!(f, "pareto:{h}"),
            RandomDistribution::Normal { deviation_pct } => write!(f, "normal:{deviation_pct}"),
            RandomDistribution::Zoned(zones) => {
                write!(f, "zoned")?;
                for zone in zones {
                    write!(f, ":{}/{}", zone.access_pct, zone.range_pct)?;
                }
                Ok(())
            }
        }
    }
}

impl TryFrom<String> for RandomDistribution {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        text.parse()
    }
}

impl From<RandomDistribution> for String {
    fn from(distribution: RandomDistribution) -> String {
        distribution.to_string()
    }
}
