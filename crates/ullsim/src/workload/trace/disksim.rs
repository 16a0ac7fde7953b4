//! DiskSim / MQSim ASCII traces: `arrival_time_ns device_number start_lba size_in_sectors type`, space or tab
//! separated, LBA and size in 512-byte sectors, type 1 for a read and 0 for a write.

use super::{record, Fields, LineResult, TraceRecord, SECTOR_BYTES};
use crate::request::Op;

pub(super) fn parse_line(line: &str) -> LineResult<TraceRecord> {
    let mut fields = Fields::new(line.split_whitespace());
    let time_ns = fields.next_u64("arrival time in ns")?;
    // The device number picks a disk of a multi-disk trace; a single simulated device serves them all.
    fields.next_u64("device number")?;
    let offset_bytes = fields.next_scaled("start LBA in 512-byte sectors", SECTOR_BYTES)?;
    let len_bytes = fields.next_length("size in 512-byte sectors", SECTOR_BYTES)?;
    let op = match fields.next("request type")? {
        "1" => Op::Read,
        "0" => Op::Write,
        other => return Err(fields.invalid("request type 1 (read) or 0 (write)", other)),
    };
    fields.end()?;
    record(time_ns, op, offset_bytes, len_bytes)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_bom_is_skipped, fixture_error, fixture_text, read_fixture, text_error};
    use super::super::{TraceFormat, TraceReader, TraceRecord};
    use crate::request::Op;

    #[test]
    fn a_utf8_bom_before_the_first_line_is_skipped() {
        assert_bom_is_skipped(&fixture_text("disksim.trace"), TraceFormat::Disksim);
    }

    #[test]
    fn reads_the_fixture() {
        let records = read_fixture("disksim.trace", TraceFormat::Disksim);
        assert_eq!(records.len(), 5);
        assert_eq!(records[0], TraceRecord { time_ns: 0, op: Op::Read, offset_bytes: 2048 * 512, len_bytes: 8 * 512 });
        assert_eq!(records[2], TraceRecord { time_ns: 250_000, op: Op::Read, offset_bytes: 0, len_bytes: 512 });
        assert_eq!(records[4].op, Op::Write);
        assert_eq!(records[4].time_ns, 1_000_000_000);
        assert_eq!(records[4].offset_bytes, 937_703_080 * 512);
    }

    #[test]
    fn malformed_fixture_names_the_line_and_field() {
        let (line, message) = fixture_error("disksim-malformed.trace", TraceFormat::Disksim);
        assert_eq!(line, 3);
        assert_eq!(message, r#"expected an integer size in 512-byte sectors in field 4, found "abc""#);
    }

    #[test]
    fn bad_lines_are_errors() {
        let cases = [
            ("100 0 8 8 2", "expected request type 1 (read) or 0 (write) in field 5, found \"2\""),
            ("100 0 8 0 1", "zero-length I/O: size in 512-byte sectors in field 4 is 0"),
            ("100 0 8 8", "missing field 5: expected request type"),
            ("100 0 8 8 1 7", "unexpected field 6, found \"7\": expected 5 fields"),
            ("-100 0 8 8 1", "expected an integer arrival time in ns in field 1, found \"-100\""),
            ("100,0,8,8,1", "expected an integer arrival time in ns in field 1, found \"100,0,8,8,1\""),
            ("100 0 36028797018963968 8 1", "start LBA in 512-byte sectors 36028797018963968 in field 3 is too large"),
        ];
        for (line, expected) in cases {
            assert_eq!(text_error(&format!("1 0 0 1 1\n{line}\n"), TraceFormat::Disksim), (2, expected.to_owned()));
        }
    }

    /// The two real MQSim traces vendored in the repository's traces/ folder.
    fn read_real_trace(name: &str) -> Vec<TraceRecord> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces").join(name);
        let reader = TraceReader::open(&path, TraceFormat::Disksim).unwrap_or_else(|e| panic!("{e}"));
        reader.collect::<Result<_, _>>().expect("parses")
    }

    #[test]
    fn reads_the_real_tpcc_trace() {
        let records = read_real_trace("tpcc-small.trace");
        assert_eq!(records.len(), 6_999);
        assert_eq!(records.iter().filter(|r| r.op == Op::Read).count(), 4_381);
        assert_eq!(
            records[0],
            TraceRecord { time_ns: 938_513_000, op: Op::Write, offset_bytes: 264_719_034 * 512, len_bytes: 16 * 512 }
        );
        assert_eq!(records[6_998].time_ns, 1_075_002_000);
    }

    #[test]
    fn reads_the_real_websearch_trace() {
        // 24,783 records: `wc -l` says 24,782 because the last line has no newline.
        let records = read_real_trace("wsrch-small.trace");
        assert_eq!(records.len(), 24_783);
        assert_eq!(records.iter().filter(|r| r.op == Op::Write).count(), 4);
        assert_eq!(
            records[0],
            TraceRecord { time_ns: 11_413_000, op: Op::Read, offset_bytes: 657_728 * 512, len_bytes: 16 * 512 }
        );
        assert_eq!(
            records[24_782],
            TraceRecord { time_ns: 60_066_625_000, op: Op::Read, offset_bytes: 34_371_424 * 512, len_bytes: 64 * 512 }
        );
    }
}
