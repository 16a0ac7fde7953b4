//! Quantities with units as they appear in scenario files: sizes ("4k", "128KiB", "1.5GiB"), durations
//! ("10us", "2.5ms", "1s") and fractions ("50%").
//!
//! Sizes follow fio: the suffixes k/m/g/t (with or without "b"/"ib", any case) are powers of 1024. A bare
//! integer is bytes. Durations take ns/us/ms/s/m suffixes; what a bare number means depends on the key (fio's
//! `runtime` is seconds, `thinktime` microseconds, `*_ns` keys nanoseconds), so each key states its default unit.

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

use crate::engine::Time;

/// Parse a byte size. Errors say what was expected.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, suffix) = t.split_at(split);
    let multiplier: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(format!("expected a size like 4096, \"4k\" or \"128KiB\", found \"{text}\"")),
    };
    let value: f64 =
        number.parse().map_err(|_| format!("expected a size like 4096, \"4k\" or \"128KiB\", found \"{text}\""))?;
    let bytes = value * multiplier as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 || bytes.fract() != 0.0 {
        return Err(format!("expected a whole number of bytes, found \"{text}\""));
    }
    Ok(bytes as u64)
}

/// Parse a duration; a bare number is in `default_unit_ns` units (1 for ns, 1000 for us, ...).
pub fn parse_duration(text: &str, default_unit_ns: u64) -> Result<Time, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, suffix) = t.split_at(split);
    let unit: u64 = match suffix.trim() {
        "" => default_unit_ns,
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        _ => return Err(format!("expected a duration like \"10us\", \"2.5ms\" or \"1s\", found \"{text}\"")),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("expected a duration like \"10us\", \"2.5ms\" or \"1s\", found \"{text}\""))?;
    let ns = (value * unit as f64).round();
    if !ns.is_finite() || ns < 0.0 || ns > u64::MAX as f64 {
        return Err(format!("duration out of range: \"{text}\""));
    }
    Ok(ns as Time)
}

/// A byte count that deserializes from an integer or a size string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Bytes(pub u64);

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Bytes;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size in bytes: an integer or a string like \"4k\" or \"128KiB\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Bytes, E> {
                u64::try_from(v).map(Bytes).map_err(|_| E::custom(format!("expected a non-negative size, found {v}")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Bytes, E> {
                Ok(Bytes(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Bytes, E> {
                parse_size(v).map(Bytes).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// A duration whose bare numbers are in unit `U` (see the `*Unit` markers), deserialized from an integer,
/// a float or a string with a unit suffix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Duration<const UNIT_NS: u64>(pub Time);

/// Duration keys whose bare numbers are nanoseconds (`*_ns` keys).
pub type Nanos = Duration<1>;
/// Duration keys whose bare numbers are microseconds (fio's `thinktime`).
pub type Micros = Duration<1_000>;
/// Duration keys whose bare numbers are seconds (fio's `runtime`, `startdelay`).
pub type Seconds = Duration<1_000_000_000>;

impl<const U: u64> Duration<U> {
    /// A duration of `ns` nanoseconds.
    pub const fn from_ns(ns: Time) -> Self {
        Duration(ns)
    }
}

impl<const U: u64> Serialize for Duration<U> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl<'de, const U: u64> Deserialize<'de> for Duration<U> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<const U: u64>;
        impl<const U: u64> Visitor<'_> for V<U> {
            type Value = Duration<U>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration: a number or a string like \"10us\", \"2.5ms\" or \"1s\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                let v =
                    u64::try_from(v).map_err(|_| E::custom(format!("expected a non-negative duration, found {v}")))?;
                v.checked_mul(U).map(Duration).ok_or_else(|| E::custom("duration out of range"))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                v.checked_mul(U).map(Duration).ok_or_else(|| E::custom("duration out of range"))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                parse_duration(&v.to_string(), U).map(Duration).map_err(E::custom)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                parse_duration(v, U).map(Duration).map_err(E::custom)
            }
        }
        d.deserialize_any(V::<U>)
    }
}

/// A size given either in bytes or as a percentage of a reference (fio's `size=50%`, `offset=10%`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeOrPercent {
    Bytes(u64),
    Percent(f64),
}

impl SizeOrPercent {
    /// Resolve against the reference size (the device's logical capacity).
    pub fn resolve(self, reference: u64) -> u64 {
        match self {
            SizeOrPercent::Bytes(b) => b,
            SizeOrPercent::Percent(p) => ((reference as f64) * p / 100.0) as u64,
        }
    }
}

impl Serialize for SizeOrPercent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SizeOrPercent::Bytes(b) => s.serialize_u64(*b),
            SizeOrPercent::Percent(p) => s.serialize_str(&format!("{p}%")),
        }
    }
}

impl<'de> Deserialize<'de> for SizeOrPercent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = SizeOrPercent;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size (integer bytes or \"4k\", \"1GiB\") or a percentage like \"50%\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                u64::try_from(v)
                    .map(SizeOrPercent::Bytes)
                    .map_err(|_| E::custom(format!("expected a non-negative size, found {v}")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(SizeOrPercent::Bytes(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                if let Some(p) = v.trim().strip_suffix('%') {
                    let pct: f64 = p
                        .trim()
                        .parse()
                        .map_err(|_| E::custom(format!("expected a percentage like \"50%\", found \"{v}\"")))?;
                    if !(0.0..=100.0).contains(&pct) {
                        return Err(E::custom(format!("expected a percentage between 0% and 100%, found \"{v}\"")));
                    }
                    Ok(SizeOrPercent::Percent(pct))
                } else {
                    parse_size(v).map(SizeOrPercent::Bytes).map_err(E::custom)
                }
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_fio() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("128KiB"), Ok(128 << 10));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size(" 2M "), Ok(2 << 20));
        assert!(parse_size("4q").unwrap_err().contains("expected a size"));
        assert!(parse_size("0.3").is_err());
        assert!(parse_size("").is_err());
    }

    #[test]
    fn durations_take_units_and_defaults() {
        assert_eq!(parse_duration("10us", 1), Ok(10_000));
        assert_eq!(parse_duration("2.5ms", 1), Ok(2_500_000));
        assert_eq!(parse_duration("3", 1_000_000_000), Ok(3_000_000_000));
        assert_eq!(parse_duration("3", 1), Ok(3));
        assert!(parse_duration("3 parsecs", 1).is_err());
        assert!(parse_duration("-1s", 1).is_err());
    }
}
