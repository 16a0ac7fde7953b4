//! fio's option values as a job's `job options` (and the file's `global options`) carry them: strings as
//! written in the job file. Sizes, times, flags and per-direction lists follow fio's HOWTO ("Parameter
//! types", and the options `bs`, `rate`, `rw`, `kb_base`) and its parser (`parse.c`, `__get_mult_bytes`).

use crate::util::quote::{quoted, QUOTED_CHARS};

/// What a bare duration means: fio's `time` options are seconds unless the option says otherwise
/// (`thinktime` is microseconds); ullsim's fio-json writes its durations as bare nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BareTime {
    Seconds,
    Micros,
    Nanos,
}

impl BareTime {
    fn ns(self) -> u64 {
        match self {
            BareTime::Seconds => 1_000_000_000,
            BareTime::Micros => 1_000,
            BareTime::Nanos => 1,
        }
    }
}

/// A size in bytes as fio reads one (HOWTO "Parameter types", `int`): a decimal or `0x` hexadecimal integer
/// with an optional suffix, case-insensitive. With `kb_base` 1024 (fio's default) `k`/`m`/`g`/`t`/`p` (and
/// `kb`, ...) are powers of 1024 and the IEC spellings `kib`/`mib`/... powers of **1000** ("compatibility
/// mode": fio's `__get_mult_bytes` swaps them); with `kb_base` 1000 it is the other way round. A trailing `b`
/// alone means bytes.
pub fn parse_size(text: &str, kb_base: u64) -> Result<u64, String> {
    let expected =
        || format!("expected a size like 4096, \"4k\" or \"1m\" (fio's units), found {}", quoted(text, QUOTED_CHARS));
    let trimmed = text.trim();
    let (number, suffix) = match trimmed.strip_prefix("0x").or_else(|| trimmed.strip_prefix("0X")) {
        Some(hex) => {
            let end = hex.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(hex.len());
            (u64::from_str_radix(&hex[..end], 16).map_err(|_| expected())?, hex[end..].trim())
        }
        None => {
            let end = trimmed.find(|c: char| !c.is_ascii_digit()).unwrap_or(trimmed.len());
            (trimmed[..end].parse::<u64>().map_err(|_| expected())?, trimmed[end..].trim())
        }
    };
    let iec_base = if kb_base == 1000 { 1024 } else { 1000 };
    let (base, power) = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => (1, 0),
        "kib" => (iec_base, 1),
        "mib" => (iec_base, 2),
        "gib" => (iec_base, 3),
        "tib" => (iec_base, 4),
        "pib" => (iec_base, 5),
        "k" | "kb" | "ki" => (kb_base, 1),
        "m" | "mb" | "mi" => (kb_base, 2),
        "g" | "gb" | "gi" => (kb_base, 3),
        "t" | "tb" | "ti" => (kb_base, 4),
        "p" | "pb" | "pi" => (kb_base, 5),
        _ => return Err(expected()),
    };
    let multiplier = (0..power).try_fold(1u64, |m, _| m.checked_mul(base));
    multiplier
        .and_then(|m| number.checked_mul(m))
        .ok_or_else(|| format!("size {} is too large", quoted(text, QUOTED_CHARS)))
}

/// A duration in ns as fio reads a `time` option (HOWTO "Parameter types", `time`): an integer with an
/// optional suffix `d`, `h`, `m` (minutes), `s`/`sec`, `ms`/`msec`, `us`/`usec`, any case; a bare number in
/// `bare` units.
pub fn parse_time(text: &str, bare: BareTime) -> Result<u64, String> {
    let expected =
        || format!("expected a time like 10, \"500ms\" or \"2m\" (fio's units), found {}", quoted(text, QUOTED_CHARS));
    let trimmed = text.trim();
    let end = trimmed.find(|c: char| !c.is_ascii_digit()).unwrap_or(trimmed.len());
    let number: u64 = trimmed[..end].parse().map_err(|_| expected())?;
    let unit = match trimmed[end..].trim().to_ascii_lowercase().as_str() {
        "" => bare.ns(),
        "us" | "usec" => 1_000,
        "ms" | "msec" => 1_000_000,
        "s" | "sec" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "d" => 86_400_000_000_000,
        _ => return Err(expected()),
    };
    number.checked_mul(unit).ok_or_else(|| format!("time {} is too long", quoted(text, QUOTED_CHARS)))
}

/// A flag: fio writes an option given without a value (`time_based`) as an empty string; `bool` options
/// are integers (0 false, anything else true), and `true`/`false` are accepted.
pub fn parse_flag(text: &str) -> Result<bool, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "" | "true" | "yes" | "on" => Ok(true),
        "false" | "no" | "off" => Ok(false),
        number => number
            .parse::<i64>()
            .map(|n| n != 0)
            .map_err(|_| format!("expected 0 or 1, found {}", quoted(text, QUOTED_CHARS))),
    }
}

/// An integer count (`iodepth`, `numjobs`, `rwmixread`): fio's `int` with its size suffixes.
pub fn parse_count(text: &str, kb_base: u64) -> Result<u64, String> {
    parse_size(text, kb_base).map_err(|_| format!("expected a whole number, found {}", quoted(text, QUOTED_CHARS)))
}

/// A per-direction list as `bs`, `rate` and `rate_iops` take it ("8k,32k"): the value of reads, writes and
/// trims, in that order (HOWTO, option `bs`). An empty field is the option's default (`None`); a list that
/// stops without a trailing comma gives its last value to the directions after it.
pub fn per_direction(text: &str) -> [Option<&str>; 3] {
    let fields: Vec<&str> = text.split(',').map(str::trim).collect();
    let field = |d: usize| {
        let value = fields.get(d).or(fields.last()).copied().unwrap_or("");
        (!value.is_empty()).then_some(value)
    };
    [field(0), field(1), field(2)]
}

/// fio's `rw` value: the pattern name and its offset modifier (`randread:8` -> ("randread", Some(8)); the
/// modifier takes fio's size units for sequential holes, `write:4k`).
pub fn split_rw(text: &str, kb_base: u64) -> Result<(&str, Option<u64>), String> {
    match text.split_once(':') {
        None => Ok((text.trim(), None)),
        Some((name, modifier)) => parse_size(modifier, kb_base)
            .map(|n| (name.trim(), Some(n)))
            .map_err(|_| format!("expected an offset modifier after ':', found {}", quoted(text, QUOTED_CHARS))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_fios_units() {
        // HOWTO "Parameter types", examples with kb_base=1024 (the default).
        for text in ["4096", "4096b", "4096B", "4k", "4kb", "4kB", "4K", "4KB", "0x1000"] {
            assert_eq!(parse_size(text, 1024), Ok(4096), "{text}");
        }
        assert_eq!(parse_size("1m", 1024), Ok(1 << 20));
        assert_eq!(parse_size("1024k", 1024), Ok(1 << 20));
        assert_eq!(parse_size("1t", 1024), Ok(1 << 40));
        // Compatibility mode: IEC spellings are powers of 1000 (parse.c, __get_mult_bytes).
        assert_eq!(parse_size("4KiB", 1024), Ok(4000));
        assert_eq!(parse_size("1MiB", 1024), Ok(1_000_000));
        // kb_base=1000: the standard meanings.
        assert_eq!(parse_size("4KiB", 1000), Ok(4096));
        assert_eq!(parse_size("4k", 1000), Ok(4000));
        assert!(parse_size("4x", 1024).unwrap_err().contains("\"4x\""));
        assert!(parse_size("-4k", 1024).is_err());
        assert!(parse_size("", 1024).is_err());
        assert!(parse_size("99999999p", 1024).unwrap_err().contains("too large"));
    }

    #[test]
    fn times_take_the_options_bare_unit() {
        assert_eq!(parse_time("10", BareTime::Seconds), Ok(10_000_000_000));
        assert_eq!(parse_time("500ms", BareTime::Seconds), Ok(500_000_000));
        assert_eq!(parse_time("2m", BareTime::Seconds), Ok(120_000_000_000));
        assert_eq!(parse_time("2M", BareTime::Seconds), Ok(120_000_000_000));
        assert_eq!(parse_time("100", BareTime::Micros), Ok(100_000));
        assert_eq!(parse_time("1000000000", BareTime::Nanos), Ok(1_000_000_000));
        assert!(parse_time("1.5s", BareTime::Seconds).is_err());
    }

    #[test]
    fn flags_and_lists() {
        assert_eq!(parse_flag(""), Ok(true));
        assert_eq!(parse_flag("0"), Ok(false));
        assert_eq!(parse_flag("1"), Ok(true));
        assert!(parse_flag("maybe").is_err());
        // HOWTO, option bs.
        assert_eq!(per_direction("256k"), [Some("256k"); 3]);
        assert_eq!(per_direction("8k,32k"), [Some("8k"), Some("32k"), Some("32k")]);
        assert_eq!(per_direction("8k,32k,"), [Some("8k"), Some("32k"), None]);
        assert_eq!(per_direction(",8k"), [None, Some("8k"), Some("8k")]);
        assert_eq!(per_direction(",8k,"), [None, Some("8k"), None]);
        assert_eq!(split_rw("randread:8", 1024), Ok(("randread", Some(8))));
        assert_eq!(split_rw("write:4k", 1024), Ok(("write", Some(4096))));
        assert_eq!(split_rw("randrw", 1024), Ok(("randrw", None)));
    }
}
