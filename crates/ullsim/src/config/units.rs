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
use crate::util::quote::{quoted, QUOTED_CHARS};

/// The largest size, in bytes: what a u64 holds.
const LARGEST_SIZE: &str = "18446744073709551615 bytes (16 EiB - 1)";
/// The longest duration: what a u64 of nanoseconds holds.
const LONGEST_DURATION: &str = "18446744073.709551615 s (2^64 - 1 ns, about 584 years)";

/// A plain decimal number times a unit, computed exactly (no binary floating point in between).
pub(crate) struct Scaled {
    /// The product rounded to the nearest whole number, halves up; saturates far above u64::MAX.
    pub nearest: u128,
    /// Whether the product is a whole number.
    pub is_whole: bool,
}

/// Fraction digits kept: 10^19 times any u64 unit fits in a u128, and later digits can only decide a tie.
const FRACTION_DIGITS: usize = 19;

/// `number × unit` for a plain decimal `number` ("12", "2.5", ".5", "3."); `None` for anything else (signs,
/// exponents, "nan", "").
pub(crate) fn scale_decimal(number: &str, unit: u64) -> Option<Scaled> {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty()) || !all_digits(whole) || !all_digits(fraction) {
        return None;
    }
    let whole = whole.trim_start_matches('0');
    // More than 20 digits is more than u64::MAX whatever the unit: saturate rather than overflow the parse.
    let whole: u128 = if whole.len() > 20 { u128::MAX } else { whole.parse().unwrap_or(0) };
    let (kept, dropped) = fraction.split_at(fraction.len().min(FRACTION_DIGITS));
    let denominator = 10u128.pow(kept.len() as u32);
    let fraction_product = kept.parse::<u128>().unwrap_or(0) * u128::from(unit);
    let left = fraction_product % denominator;
    let floor = whole.saturating_mul(u128::from(unit)).saturating_add(fraction_product / denominator);
    Some(Scaled {
        nearest: floor.saturating_add(u128::from(2 * left >= denominator)),
        is_whole: left == 0 && dropped.bytes().all(|b| b == b'0'),
    })
}

/// Split "2.5ms" into the number and the (trimmed) unit suffix.
fn split_unit(text: &str) -> (&str, &str) {
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    (number, suffix.trim())
}

/// Parse a byte size. Errors say what was expected.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let (number, suffix) = split_unit(text.trim());
    let expected = || format!("expected a size like 4096, \"4k\" or \"128KiB\", found {}", quoted(text, QUOTED_CHARS));
    let multiplier: u64 = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(expected()),
    };
    let bytes = scale_decimal(number, multiplier).ok_or_else(expected)?;
    let found = quoted(text, QUOTED_CHARS);
    match u64::try_from(bytes.nearest) {
        Err(_) => Err(format!("expected a size of at most {LARGEST_SIZE}, found {found}")),
        Ok(_) if !bytes.is_whole => Err(format!("expected a whole number of bytes, found {found}")),
        Ok(bytes) => Ok(bytes),
    }
}

/// Parse a duration; a bare number is in `default_unit_ns` units (1 for ns, 1000 for us, ...). Decimals are
/// converted exactly and rounded to the nearest ns.
pub fn parse_duration(text: &str, default_unit_ns: u64) -> Result<Time, String> {
    let (number, suffix) = split_unit(text.trim());
    let expected =
        || format!("expected a duration like \"10us\", \"2.5ms\" or \"1s\", found {}", quoted(text, QUOTED_CHARS));
    let unit: u64 = match suffix {
        "" => default_unit_ns,
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        _ => return Err(expected()),
    };
    let ns = scale_decimal(number, unit).ok_or_else(expected)?;
    u64::try_from(ns.nearest).map_err(|_| duration_too_long(&quoted(text, QUOTED_CHARS)))
}

fn duration_too_long(found: &str) -> String {
    format!("expected a duration of at most {LONGEST_DURATION}, found {found}")
}

/// A duration for messages: "2 s", "100 ms", "1.5 us", "12 ns" (the largest unit it holds one of, to 3 decimals).
pub fn describe_ns(ns: Time) -> String {
    let units = [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")];
    let (unit, name) = units.into_iter().find(|&(unit, _)| ns >= unit).unwrap_or((1, "ns"));
    let value = format!("{:.3}", ns as f64 / unit as f64);
    format!("{} {name}", value.trim_end_matches('0').trim_end_matches('.'))
}

/// A size for messages: "48.0 KiB", "512.0 MiB", "5.27 GiB".
pub fn describe_bytes(bytes: u64) -> String {
    match bytes {
        b if b < 1 << 20 => format!("{:.1} KiB", b as f64 / 1024.0),
        b if b < 1 << 30 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        b => format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64),
    }
}

/// The symbol of a duration key's bare unit, for messages.
fn unit_symbol(unit_ns: u64) -> &'static str {
    match unit_ns {
        1 => "ns",
        1_000 => "us",
        1_000_000 => "ms",
        _ => "s",
    }
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

/// A switch written as fio writes it (`1`/`0`) or as TOML does (`true`/`false`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Flag(pub bool);

impl Serialize for Flag {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bool(self.0)
    }
}

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Flag;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("0, 1, true or false")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Flag, E> {
                Ok(Flag(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Flag, E> {
                match v {
                    0 | 1 => Ok(Flag(v == 1)),
                    _ => Err(E::custom(format!("expected 0, 1, true or false, found {v}"))),
                }
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Flag, E> {
                self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
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
/// Duration keys whose bare numbers are milliseconds (mq-deadline's `read_expire`, as its sysfs file takes them).
pub type Millis = Duration<1_000_000>;
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
                self.visit_u64(v)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                let too_long = || E::custom(duration_too_long(&format!("{v} {}", unit_symbol(U))));
                v.checked_mul(U).map(Duration).ok_or_else(too_long)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                if v < 0.0 {
                    return Err(E::custom(format!("expected a non-negative duration, found {v}")));
                }
                // Display writes every digit (never an exponent), which parse_duration converts exactly.
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
                    let found = quoted(v, QUOTED_CHARS);
                    let pct: f64 = p
                        .trim()
                        .parse()
                        .map_err(|_| E::custom(format!("expected a percentage like \"50%\", found {found}")))?;
                    if !(0.0..=100.0).contains(&pct) {
                        return Err(E::custom(format!("expected a percentage between 0% and 100%, found {found}")));
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

    #[test]
    fn decimals_convert_exactly_and_round_halves_up() {
        assert_eq!(parse_duration("0.1", 1_000_000_000), Ok(100_000_000));
        assert_eq!(parse_duration(".5ms", 1), Ok(500_000));
        assert_eq!(parse_duration("3.", 1_000), Ok(3_000));
        assert_eq!(parse_duration("1.4ns", 1), Ok(1));
        assert_eq!(parse_duration("0.0000000015s", 1), Ok(2));
        assert_eq!(parse_duration("0.00000000149999999999999s", 1), Ok(1));
        assert_eq!(parse_duration("18446744073.709551615s", 1), Ok(u64::MAX));
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(parse_size("0.5k"), Ok(512));
        assert!(parse_size("0.1k").unwrap_err().contains("whole number of bytes"));
        for bad in ["1.2.3", ".", "1e3", "nan", "+1", ""] {
            assert!(parse_duration(bad, 1).unwrap_err().contains("expected a duration like"), "{bad}");
        }
    }

    #[test]
    fn overflow_is_an_error_naming_the_largest_value() {
        for too_long in ["18446744073.709551616s", "18446744073709551616ns", "307445735m", &"9".repeat(400)] {
            let message = parse_duration(too_long, 1).unwrap_err();
            assert!(message.starts_with("expected a duration of at most 18446744073.709551615 s"), "{message}");
        }
        for too_large in ["18446744073709551616", "16777216TiB", "17179869184.0000000001g"] {
            let message = parse_size(too_large).unwrap_err();
            assert!(message.starts_with("expected a size of at most 18446744073709551615 bytes"), "{message}");
        }
        let seconds: Result<Seconds, _> = serde_json::from_str("18446744074");
        assert!(seconds.unwrap_err().to_string().contains("at most 18446744073.709551615 s"));
    }

    #[test]
    fn durations_are_described_in_their_largest_unit() {
        assert_eq!(describe_ns(0), "0 ns");
        assert_eq!(describe_ns(999), "999 ns");
        assert_eq!(describe_ns(1_500), "1.5 us");
        assert_eq!(describe_ns(100_000_000), "100 ms");
        assert_eq!(describe_ns(2_000_000_000), "2 s");
        assert_eq!(describe_ns(31_536_000_000_000_000), "31536000 s");
    }
}
