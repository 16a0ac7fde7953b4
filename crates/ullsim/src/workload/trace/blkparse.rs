//! blkparse's default text output: `maj,min cpu seq sec.nsec pid action rwbs sector + nsect [proc]`, sector and
//! nsect in 512-byte sectors. One I/O shows up as several events (queued, dispatched, completed...); the
//! arrivals are the events of one action, `Q` by default. Lines that do not start with `maj,min` (the summary
//! blocks blkparse prints at the end) are skipped; a line that does but is malformed is an error.

use serde::{Deserialize, Serialize};

use super::{record, Fields, LineResult, TraceRecord, SECTOR_BYTES};
use crate::request::Op;

/// Which blkparse events are the trace's arrivals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BlkparseAction {
    /// `Q`: the block layer queued the bio: what the application issued, before merging and scheduling.
    #[default]
    Queue,
    /// `D`: the request was dispatched to the driver: what the device saw, after the I/O scheduler.
    Dispatch,
}

impl BlkparseAction {
    /// blkparse's action code.
    pub fn code(self) -> &'static str {
        match self {
            BlkparseAction::Queue => "Q",
            BlkparseAction::Dispatch => "D",
        }
    }
}

pub(super) struct BlkparseParser {
    arrivals: BlkparseAction,
}

impl BlkparseParser {
    pub(super) fn new(arrivals: BlkparseAction) -> Self {
        BlkparseParser { arrivals }
    }

    /// Why a file with event lines gave no record.
    pub(super) fn why_no_records(&self) -> String {
        format!("no {} events that read or write data", self.arrivals.code())
    }

    pub(super) fn parse_line(&self, line: &str) -> LineResult<Option<TraceRecord>> {
        let mut fields = Fields::new(line.split_whitespace());
        if !fields.peek().is_some_and(is_device_number) {
            return Ok(None);
        }
        fields.next("device maj,min")?;
        fields.next_u64("CPU number")?;
        fields.next_u64("sequence number")?;
        let time_ns = fields.next_seconds("time in seconds")?;
        fields.next_u64("process id")?;
        if fields.next("action")? != self.arrivals.code() {
            return Ok(None);
        }
        let rwbs = fields.next("RWBS flags")?;
        // R and W mark data reads and writes; discards (D) and events with no data (N, a bare flush F) are skipped.
        let op = if rwbs.contains('D') {
            return Ok(None);
        } else if rwbs.contains('R') {
            Op::Read
        } else if rwbs.contains('W') {
            Op::Write
        } else {
            return Ok(None);
        };
        // A flush (F) carries no data when it has no sector range ("Q FWS [jbd2/sda1-8]") or an empty one.
        let is_flush = rwbs.contains('F');
        if is_flush && fields.peek().is_none_or(|next| next.starts_with('[')) {
            return Ok(None);
        }
        let offset_bytes = fields.next_scaled("start sector", SECTOR_BYTES)?;
        let plus = fields.next("\"+\" between start sector and size")?;
        if plus != "+" {
            return Err(fields.invalid("\"+\" between start sector and size", plus));
        }
        if is_flush && fields.peek() == Some("0") {
            return Ok(None);
        }
        let len_bytes = fields.next_length("size in sectors", SECTOR_BYTES)?;
        // The process name in brackets that ends the line (it may contain spaces) is not needed.
        record(time_ns, op, offset_bytes, len_bytes).map(Some)
    }
}

/// Whether `word` is a device's `major,minor`, as event lines start.
fn is_device_number(word: &str) -> bool {
    let is_number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    word.split_once(',').is_some_and(|(major, minor)| is_number(major) && is_number(minor))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_bom_is_skipped, fixture, fixture_error, read_fixture, text_error};
    use super::super::{TraceFormat, TraceReader, TraceRecord};
    use super::BlkparseAction;
    use crate::request::Op;

    #[test]
    fn a_utf8_bom_before_the_first_line_is_skipped() {
        // The first line is an arrival: read as "\u{feff}8,0" it would not look like an event and be dropped.
        let text = "8,0 0 1 0.5 42 Q R 8 + 8 [fio]\n8,0 0 2 0.6 42 Q W 16 + 8 [fio]\n";
        assert_bom_is_skipped(text, TraceFormat::Blkparse);
    }

    #[test]
    fn reads_queue_events_from_the_fixture() {
        let records = read_fixture("blkparse.txt", TraceFormat::Blkparse);
        assert_eq!(
            records,
            [
                TraceRecord { time_ns: 502, op: Op::Write, offset_bytes: 3_417_056 * 512, len_bytes: 8 * 512 },
                TraceRecord { time_ns: 153_321, op: Op::Read, offset_bytes: 1_048_576 * 512, len_bytes: 32 * 512 },
                TraceRecord { time_ns: 300_000, op: Op::Read, offset_bytes: 4096 * 512, len_bytes: 256 * 512 },
                TraceRecord { time_ns: 1_250_000_000, op: Op::Write, offset_bytes: 8 * 512, len_bytes: 8 * 512 },
            ]
        );
    }

    #[test]
    fn reads_dispatch_events_when_asked() {
        let reader = TraceReader::open_blkparse(&fixture("blkparse.txt"), BlkparseAction::Dispatch).expect("opens");
        assert_eq!(reader.format(), TraceFormat::Blkparse);
        let records: Vec<_> = reader.collect::<Result<_, _>>().expect("parses");
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].time_ns, 11_632);
        assert_eq!(records[0].op, Op::Write);
        assert_eq!(
            records[1],
            TraceRecord { time_ns: 160_000, op: Op::Read, offset_bytes: 1_048_576 * 512, len_bytes: 32 * 512 }
        );
    }

    #[test]
    fn malformed_fixture_names_the_line_and_field() {
        let (line, message) = fixture_error("blkparse-malformed.txt", TraceFormat::Blkparse);
        assert_eq!(line, 3);
        assert_eq!(message, r#"expected a non-negative decimal time in seconds in field 4, found "0.00000x502""#);
    }

    #[test]
    fn bad_event_lines_are_errors_even_for_other_actions() {
        let cases = [
            ("8,0 0 1 0.5 42 Q R 8 - 8 [fio]", "expected \"+\" between start sector and size in field 9, found \"-\""),
            ("8,0 0 1 0.5 42 Q R 8 + 0 [fio]", "zero-length I/O: size in sectors in field 10 is 0"),
            ("8,0 0 1 0.5 42 Q W [fio]", "expected an integer start sector in field 8, found \"[fio]\""),
            ("8,0 0 1 0.5 42 Q R", "missing field 8: expected start sector"),
            ("8,0 x 1 0.5 42 C R 8 + 8 [0]", "expected an integer CPU number in field 2, found \"x\""),
            ("8,0 0 1 0.5 42", "missing field 6: expected action"),
        ];
        for (line, expected) in cases {
            assert_eq!(text_error(line, TraceFormat::Blkparse), (1, expected.to_owned()), "{line}");
        }
    }

    #[test]
    fn data_less_flushes_are_skipped() {
        let flushes = "8,0 0 1 0.5 42 Q FWS [jbd2]\n8,0 0 2 0.6 42 Q FWS 0 + 0 [jbd2]\n8,0 0 3 0.7 42 Q FN [x]\n";
        let text = format!("{flushes}8,0 0 4 0.8 42 Q R 8 + 8 [fio]\n");
        let records = super::super::test_support::read_text(&text, TraceFormat::Blkparse).expect("parses");
        assert_eq!(records, [TraceRecord { time_ns: 800_000_000, op: Op::Read, offset_bytes: 4096, len_bytes: 4096 }]);
    }

    #[test]
    fn action_spellings() {
        assert_eq!(BlkparseAction::default(), BlkparseAction::Queue);
        assert_eq!(BlkparseAction::Queue.code(), "Q");
        assert_eq!(BlkparseAction::Dispatch.code(), "D");
        assert_eq!(serde_json::to_string(&BlkparseAction::Dispatch).expect("serializes"), "\"dispatch\"");
    }
}
