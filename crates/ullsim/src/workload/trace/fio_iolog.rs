//! fio iologs (fio's `write_iolog` / `read_iolog` files). The first line names the version:
//! - `fio version 2 iolog`: lines `filename action [offset length]`. No timestamps: `wait` lines (offset =
//!   microseconds) advance the replay clock, and each I/O arrives at the clock's current value.
//! - `fio version 3 iolog`: every line starts with a timestamp in microseconds since the start of the run.
//!
//! Actions `add`, `open`, `close`, `sync`, `datasync` and `trim` carry no read or write and are skipped.

use super::{record, Fields, LineResult, TraceRecord};
use crate::request::Op;

const V2_HEADER: &str = "fio version 2 iolog";
const V3_HEADER: &str = "fio version 3 iolog";
const NS_PER_MICROSECOND: u64 = 1_000;

enum Version {
    /// `clock_ns` is the sum of the `wait`s so far.
    V2 {
        clock_ns: u64,
    },
    V3,
}

pub(super) struct FioIologParser {
    /// `None` until the header line has been read.
    version: Option<Version>,
}

impl FioIologParser {
    pub(super) fn new() -> Self {
        FioIologParser { version: None }
    }

    pub(super) fn parse_line(&mut self, line: &str) -> LineResult<Option<TraceRecord>> {
        let Some(version) = &mut self.version else {
            self.version = Some(parse_header(line)?);
            return Ok(None);
        };
        let mut fields = Fields::new(line.split_whitespace());
        // fio's HOWTO ("Trace file format v3") gives no unit for the v3 timestamp; fio's iolog.c writes it with
        // utime_since_now() and replays it through iolog_delay(), which sleeps in microseconds.
        let time_ns = match version {
            Version::V2 { clock_ns } => *clock_ns,
            Version::V3 => fields.next_scaled("timestamp in microseconds", NS_PER_MICROSECOND)?,
        };
        fields.next("file name")?;
        let op = match fields.next("action")? {
            "read" => Op::Read,
            "write" => Op::Write,
            "add" | "open" | "close" | "sync" | "datasync" | "trim" => return Ok(None),
            "wait" => {
                // v3 forbids `wait` (the timestamps say when); fio ignores one there, and so do we.
                if let Version::V2 { clock_ns } = version {
                    let wait_ns = fields.next_scaled("wait time in microseconds", NS_PER_MICROSECOND)?;
                    *clock_ns = clock_ns.checked_add(wait_ns).ok_or_else(|| {
                        format!("wait in field {} takes the replay clock past 2^64 ns", fields.position)
                    })?;
                }
                return Ok(None);
            }
            other => {
                let expected = "an action (add, open, close, read, write, wait, sync, datasync or trim)";
                return Err(fields.invalid(expected, other));
            }
        };
        let offset_bytes = fields.next_u64("offset in bytes")?;
        let len_bytes = fields.next_length("length in bytes", 1)?;
        fields.end()?;
        record(time_ns, op, offset_bytes, len_bytes).map(Some)
    }
}

fn parse_header(line: &str) -> LineResult<Version> {
    match line {
        V2_HEADER => Ok(Version::V2 { clock_ns: 0 }),
        V3_HEADER => Ok(Version::V3),
        other => Err(format!(
            "expected the header {V2_HEADER:?} or {V3_HEADER:?} on the first line, found {}",
            super::quoted(other)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{
        assert_bom_is_skipped, fixture_error, fixture_text, read_fixture, read_text, text_error,
    };
    use super::super::{TraceFormat, TraceRecord};
    use super::{V2_HEADER, V3_HEADER};
    use crate::request::Op;

    #[test]
    fn a_utf8_bom_before_the_first_line_is_skipped() {
        assert_bom_is_skipped(&fixture_text("fio-v2.iolog"), TraceFormat::FioIolog);
    }

    #[test]
    fn reads_the_v2_fixture_on_the_wait_clock() {
        let records = read_fixture("fio-v2.iolog", TraceFormat::FioIolog);
        assert_eq!(
            records,
            [
                TraceRecord { time_ns: 0, op: Op::Read, offset_bytes: 0, len_bytes: 4096 },
                TraceRecord { time_ns: 250_000, op: Op::Write, offset_bytes: 8192, len_bytes: 16384 },
                TraceRecord { time_ns: 1_250_000, op: Op::Read, offset_bytes: 4096, len_bytes: 4096 },
            ]
        );
    }

    #[test]
    fn reads_the_v3_fixture_in_microseconds() {
        let records = read_fixture("fio-v3.iolog", TraceFormat::FioIolog);
        assert_eq!(
            records,
            [
                TraceRecord { time_ns: 878_000, op: Op::Write, offset_bytes: 0, len_bytes: 16384 },
                TraceRecord { time_ns: 888_000, op: Op::Read, offset_bytes: 16384, len_bytes: 4096 },
                TraceRecord { time_ns: 10_001_677_000, op: Op::Write, offset_bytes: 4096, len_bytes: 4096 },
            ]
        );
    }

    #[test]
    fn malformed_fixture_names_the_line_and_field() {
        let (line, message) = fixture_error("fio-malformed.iolog", TraceFormat::FioIolog);
        assert_eq!(line, 4);
        assert_eq!(message, "zero-length I/O: length in bytes in field 4 is 0");
    }

    #[test]
    fn missing_header_is_an_error_on_line_1() {
        let (line, message) = fixture_error("fio-no-header.iolog", TraceFormat::FioIolog);
        assert_eq!(line, 1);
        assert!(message.starts_with("expected the header \"fio version 2 iolog\""), "{message}");
        assert!(message.ends_with("found \"/dev/sdb read 0 4096\""), "{message}");

        assert_eq!(text_error("fio version 4 iolog\n", TraceFormat::FioIolog).0, 1);
    }

    #[test]
    fn v3_ignores_wait_like_fio() {
        let text = "fio version 3 iolog\n5 f wait 100 0\n7 f read 0 512\n";
        let records = read_text(text, TraceFormat::FioIolog).expect("parses");
        assert_eq!(records, [TraceRecord { time_ns: 7_000, op: Op::Read, offset_bytes: 0, len_bytes: 512 }]);
    }

    #[test]
    fn bad_lines_are_errors() {
        let wait_overflow = "f wait 18446744073709551 0\nf wait 18446744073709551 0";
        let cases = [
            (
                V2_HEADER,
                "f erase 0 512",
                2,
                concat!(
                    "expected an action (add, open, close, read, write, wait, sync, datasync or trim)",
                    " in field 2, found \"erase\""
                ),
            ),
            (V2_HEADER, "f read 0", 2, "missing field 4: expected length in bytes"),
            (V2_HEADER, "f read 0 512 9", 2, "unexpected field 5, found \"9\": expected 4 fields"),
            (V2_HEADER, "f wait x 0", 2, "expected an integer wait time in microseconds in field 3, found \"x\""),
            (V2_HEADER, wait_overflow, 3, "wait in field 3 takes the replay clock past 2^64 ns"),
            (V3_HEADER, "f read 0 512", 2, "expected an integer timestamp in microseconds in field 1, found \"f\""),
            (V3_HEADER, "1 f", 2, "missing field 3: expected action"),
        ];
        for (header, body, line, expected) in cases {
            let text = format!("{header}\n{body}\n");
            assert_eq!(text_error(&text, TraceFormat::FioIolog), (line, expected.to_owned()), "{text}");
        }
    }
}
