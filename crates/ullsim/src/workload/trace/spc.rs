//! SPC / UMass traces (Financial1/2, WebSearch1-3): `ASU,LBA,Size,Opcode,Timestamp[,...]`, LBA in 512-byte
//! blocks, Size in bytes, Opcode r/R/w/W, Timestamp in seconds from the trace's start. Fields may carry spaces.

use super::{record, Fields, LineResult, TraceRecord, SECTOR_BYTES};
use crate::request::Op;

pub(super) fn parse_line(line: &str) -> LineResult<TraceRecord> {
    let mut fields = Fields::new(line.split(','));
    // The ASU (application-specific unit) picks a volume; a single simulated device serves them all.
    fields.next_u64("ASU number")?;
    let offset_bytes = fields.next_scaled("LBA in 512-byte blocks", SECTOR_BYTES)?;
    let len_bytes = fields.next_length("size in bytes", 1)?;
    let op = match fields.next("opcode")? {
        "r" | "R" => Op::Read,
        "w" | "W" => Op::Write,
        other => return Err(fields.invalid("opcode r or w", other)),
    };
    let time_ns = fields.next_seconds("timestamp in seconds")?;
    // Fields after the timestamp (present in some UMass releases) carry nothing the replay needs.
    record(time_ns, op, offset_bytes, len_bytes)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_bom_is_skipped, fixture_error, fixture_text, read_fixture, text_error};
    use super::super::{TraceFormat, TraceRecord};
    use crate::request::Op;

    #[test]
    fn a_utf8_bom_before_the_first_line_is_skipped() {
        assert_bom_is_skipped(&fixture_text("spc.csv"), TraceFormat::Spc);
    }

    #[test]
    fn reads_the_fixture() {
        let records = read_fixture("spc.csv", TraceFormat::Spc);
        assert_eq!(records.len(), 4);
        assert_eq!(records[0], TraceRecord { time_ns: 0, op: Op::Write, offset_bytes: 303_567 * 512, len_bytes: 3584 });
        assert_eq!(
            records[2],
            TraceRecord { time_ns: 117_964_000, op: Op::Read, offset_bytes: 303_574 * 512, len_bytes: 3584 }
        );
        assert_eq!(records[1].op, Op::Write);
        assert_eq!(records[1].time_ns, 26_214_000);
        assert_eq!(records[3].op, Op::Read);
        assert_eq!(records[3].time_ns, 1_500_000_000);
    }

    #[test]
    fn malformed_fixture_names_the_line_and_field() {
        let (line, message) = fixture_error("spc-malformed.csv", TraceFormat::Spc);
        assert_eq!(line, 3);
        assert_eq!(message, r#"expected opcode r or w in field 4, found "x""#);
    }

    #[test]
    fn bad_timestamps_are_errors() {
        for bad in ["-0.5", "nan", "inf", "1.2.3", ""] {
            let (line, message) = text_error(&format!("0,1,512,r,{bad}"), TraceFormat::Spc);
            assert_eq!(line, 1);
            assert!(
                message.starts_with("expected a non-negative decimal timestamp in seconds in field 5"),
                "{message}"
            );
        }
    }

    #[test]
    fn bad_lines_are_errors() {
        let cases = [
            ("0,1,0,r,0.5", "zero-length I/O: size in bytes in field 3 is 0"),
            ("0,1,512,r", "missing field 5: expected timestamp in seconds"),
            ("0,-1,512,r,0.5", "expected an integer LBA in 512-byte blocks in field 2, found \"-1\""),
        ];
        for (line, expected) in cases {
            assert_eq!(text_error(line, TraceFormat::Spc), (1, expected.to_owned()));
        }
    }
}
