//! MSR Cambridge CSV traces: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`. Timestamp and
//! ResponseTime are Windows FILETIME ticks (100 ns), Type is `Read` or `Write`, Offset and Size are in bytes.
//! The original files have no header; one written by a conversion tool is tolerated as the first line (the first
//! that is not blank or a comment).

use super::{record, Fields, LineResult, TraceRecord};
use crate::request::Op;

const NS_PER_FILETIME_TICK: u64 = 100;

pub(super) struct MsrParser {
    /// Whether the next line is the first, where a header may stand.
    at_first_line: bool,
}

impl MsrParser {
    pub(super) fn new() -> Self {
        MsrParser { at_first_line: true }
    }

    pub(super) fn parse_line(&mut self, line: &str) -> LineResult<Option<TraceRecord>> {
        if std::mem::replace(&mut self.at_first_line, false) && line.starts_with("Timestamp") {
            return Ok(None);
        }
        let mut fields = Fields::new(line.split(','));
        let time_ns = fields.next_scaled("timestamp in 100 ns FILETIME ticks", NS_PER_FILETIME_TICK)?;
        fields.next("hostname")?;
        fields.next_u64("disk number")?;
        let op = match fields.next("type")? {
            kind if kind.eq_ignore_ascii_case("read") => Op::Read,
            kind if kind.eq_ignore_ascii_case("write") => Op::Write,
            other => return Err(fields.invalid("type Read or Write", other)),
        };
        let offset_bytes = fields.next_u64("offset in bytes")?;
        let len_bytes = fields.next_length("size in bytes", 1)?;
        fields.next_u64("response time in 100 ns FILETIME ticks")?;
        fields.end()?;
        record(time_ns, op, offset_bytes, len_bytes).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{
        assert_bom_is_skipped, fixture_error, fixture_text, read_fixture, read_text, text_error,
    };
    use super::super::{TraceFormat, TraceRecord};
    use crate::request::Op;

    #[test]
    fn a_utf8_bom_before_the_first_line_is_skipped() {
        assert_bom_is_skipped(&fixture_text("msr.csv"), TraceFormat::Msr);
    }

    #[test]
    fn reads_the_fixture() {
        let records = read_fixture("msr.csv", TraceFormat::Msr);
        assert_eq!(records.len(), 4);
        assert_eq!(
            records[0],
            TraceRecord {
                time_ns: 128_166_372_003_061_629 * 100,
                op: Op::Read,
                offset_bytes: 3_154_152_448,
                len_bytes: 4096
            }
        );
        let ops: Vec<_> = records.iter().map(|r| r.op).collect();
        assert_eq!(ops, [Op::Read, Op::Write, Op::Write, Op::Read]);
        assert_eq!(records[3].offset_bytes, 0);
        assert_eq!(records[3].len_bytes, 512);
    }

    #[test]
    fn reads_headerless_files() {
        let records = read_text("128166372003061629,hm,1,Read,0,4096,1576\n", TraceFormat::Msr).expect("parses");
        assert_eq!(records.len(), 1);
    }

    #[test]
    fn malformed_fixture_names_the_line_and_field() {
        let (line, message) = fixture_error("msr-malformed.csv", TraceFormat::Msr);
        assert_eq!(line, 3);
        assert_eq!(message, r#"expected type Read or Write in field 4, found "Flush""#);
    }

    #[test]
    fn header_is_only_tolerated_first() {
        let text = "1,hm,0,Read,0,4096,10\nTimestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n";
        let (line, message) = text_error(text, TraceFormat::Msr);
        assert_eq!(line, 2);
        assert!(message.starts_with("expected an integer timestamp in 100 ns FILETIME ticks in field 1"), "{message}");
    }

    #[test]
    fn bad_lines_are_errors() {
        let cases = [
            ("1,hm,0,Read,0,0,10", "zero-length I/O: size in bytes in field 6 is 0"),
            ("1,hm,0,Read,0,4096", "missing field 7: expected response time in 100 ns FILETIME ticks"),
            ("1,hm,0,Read,0,4096,10,11", "unexpected field 8, found \"11\": expected 7 fields"),
            ("1,hm,x,Read,0,4096,10", "expected an integer disk number in field 3, found \"x\""),
            (
                "184467440737095517,hm,0,Read,0,4096,10",
                "timestamp in 100 ns FILETIME ticks 184467440737095517 in field 1 is too large",
            ),
        ];
        for (line, expected) in cases {
            assert_eq!(text_error(line, TraceFormat::Msr), (1, expected.to_owned()));
        }
    }
}
