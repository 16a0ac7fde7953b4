//! Streamed readers for real block I/O traces: DiskSim/MQSim ASCII, MSR Cambridge CSV, SPC/UMass CSV, fio iolog
//! (v2 and v3) and blkparse's default text output (formats: docs/scenarios.md).
//!
//! A [`TraceReader`] yields one [`TraceRecord`] per read or write, in file order, holding only the current line
//! in memory, so a multi-gigabyte trace replays in constant memory. Times are the file's own; the replayer
//! rebases them on the first record. Each format's parser lives in its own submodule and turns one line into at
//! most one record; this module owns the line loop, error positions and the field helpers they share.

mod blkparse;
mod disksim;
mod fio_iolog;
mod msr;
mod spc;

use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::iter::Peekable;
use std::path::Path;

use crate::config::units::scale_decimal;
use crate::request::Op;

pub use blkparse::BlkparseAction;

/// Bytes in the 512-byte sectors (LBAs) that DiskSim, SPC and blkparse count in.
const SECTOR_BYTES: u64 = 512;
const NS_PER_SECOND: u64 = 1_000_000_000;
/// Longest line accepted: a line this long is not a text trace, and the bound keeps memory bounded on garbage.
const MAX_LINE_BYTES: usize = 1 << 20;
/// Read buffer: large enough that a replay is not dominated by read system calls.
const READ_BUFFER_BYTES: usize = 64 * 1024;
/// How much of an offending field an error message quotes.
const MAX_QUOTED_CHARS: usize = 40;
/// The UTF-8 byte order mark some editors and Windows tools write before the first line; it is not text.
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

pub use crate::config::trace_format::TraceFormat;

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One I/O of a trace. `time_ns` is the arrival time in ns as stated by the file (not rebased: the replayer
/// subtracts the first record's time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRecord {
    pub time_ns: u64,
    pub op: Op,
    pub offset_bytes: u64,
    pub len_bytes: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The message already includes the OS error, so it is not chained as a source (no double printing).
    #[error("{path}: cannot read trace: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path}:{line}: {message}")]
    Parse { path: String, line: u64, message: String },
    /// The file ended before any read or write: a replay of it would issue nothing.
    #[error("{path}: trace has no read or write records ({format}: {reason})")]
    NoRecords { path: String, format: TraceFormat, reason: String },
}

/// What a format parser says about one bad line; the reader adds the file name and line number.
type LineResult<T> = Result<T, String>;

/// Streams records from a trace: memory does not grow with the trace's length (one buffered reader, one reused
/// line buffer). After an error the reader's position is unspecified; stop reading.
pub struct TraceReader {
    input: Box<dyn BufRead + Send>,
    /// The path, or the caller's name for the input, for error messages.
    name: String,
    format: TraceFormat,
    parser: LineParser,
    /// The current line's bytes, reused for every line.
    line: Vec<u8>,
    /// 1-based number of the line in `line`; 0 before the first.
    line_number: u64,
    /// Lines that were not blank or comments, and records returned, so far.
    data_lines: u64,
    records: u64,
}

impl TraceReader {
    pub fn open(path: &Path, format: TraceFormat) -> Result<Self, TraceError> {
        Self::open_with(path, format, LineParser::new(format))
    }

    /// Same, over any reader (used by tests); `name` is used in error messages in place of the path.
    pub fn from_reader(reader: Box<dyn BufRead + Send>, name: &str, format: TraceFormat) -> Result<Self, TraceError> {
        Ok(Self::with_parser(reader, name, format, LineParser::new(format)))
    }

    /// A blkparse trace whose arrivals are the `arrivals` events (`Q` for what the application issued, `D` for
    /// what the I/O scheduler dispatched to the driver). [`TraceReader::open`] with
    /// [`TraceFormat::Blkparse`] uses `Q`.
    pub fn open_blkparse(path: &Path, arrivals: BlkparseAction) -> Result<Self, TraceError> {
        Self::open_with(path, TraceFormat::Blkparse, LineParser::blkparse(arrivals))
    }

    /// [`TraceReader::open_blkparse`] over any reader.
    pub fn from_reader_blkparse(
        reader: Box<dyn BufRead + Send>,
        name: &str,
        arrivals: BlkparseAction,
    ) -> Result<Self, TraceError> {
        Ok(Self::with_parser(reader, name, TraceFormat::Blkparse, LineParser::blkparse(arrivals)))
    }

    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// Next I/O record, skipping blank lines and comments ('#'), and, in the formats that have them
    /// (fio-iolog, blkparse), records that are not reads or writes (trims, syncs, flushes, waits, headers,
    /// other blkparse actions). In disksim, msr and spc a record that is neither a read nor a write is an
    /// error. `Ok(None)` at end of file; a file that ends before its first record is an error
    /// ([`TraceError::NoRecords`]).
    pub fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        loop {
            if !self.read_line()? {
                if self.records == 0 {
                    return Err(self.no_records_error());
                }
                return Ok(None);
            }
            let text = match std::str::from_utf8(&self.line) {
                Ok(text) => text.trim(),
                Err(_) => {
                    let message = "line is not valid UTF-8 text: is this a binary file?".to_owned();
                    return Err(self.parse_error(self.line_number, message));
                }
            };
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            self.data_lines += 1;
            match self.parser.parse_line(text) {
                Ok(Some(record)) => {
                    self.records += 1;
                    return Ok(Some(record));
                }
                Ok(None) => continue,
                Err(message) => return Err(self.parse_error(self.line_number, message)),
            }
        }
    }

    fn open_with(path: &Path, format: TraceFormat, parser: LineParser) -> Result<Self, TraceError> {
        let name = path.display().to_string();
        let file = File::open(path).map_err(|error| TraceError::Io { path: name.clone(), error })?;
        let input = Box::new(BufReader::with_capacity(READ_BUFFER_BYTES, file));
        Ok(Self::with_parser(input, &name, format, parser))
    }

    fn with_parser(input: Box<dyn BufRead + Send>, name: &str, format: TraceFormat, parser: LineParser) -> Self {
        TraceReader {
            input,
            name: name.to_owned(),
            format,
            parser,
            line: Vec::new(),
            line_number: 0,
            data_lines: 0,
            records: 0,
        }
    }

    /// Reads the next line into `self.line`; false at end of input.
    fn read_line(&mut self) -> Result<bool, TraceError> {
        self.line.clear();
        // One byte past the limit tells an over-long line from one exactly at it.
        let mut bounded = (&mut self.input).take(MAX_LINE_BYTES as u64 + 1);
        let read = bounded
            .read_until(b'\n', &mut self.line)
            .map_err(|error| TraceError::Io { path: self.name.clone(), error })?;
        if read == 0 {
            return Ok(false);
        }
        self.line_number = self.line_number.saturating_add(1);
        if self.line_number == 1 && self.line.starts_with(UTF8_BOM) {
            self.line.drain(..UTF8_BOM.len());
        }
        if self.line.len() > MAX_LINE_BYTES {
            let message = format!("line is longer than {MAX_LINE_BYTES} bytes: is this a text trace?");
            return Err(self.parse_error(self.line_number, message));
        }
        Ok(true)
    }

    fn parse_error(&self, line: u64, message: String) -> TraceError {
        TraceError::Parse { path: self.name.clone(), line, message }
    }

    /// The error for a file that ended before its first record, saying what it held instead.
    fn no_records_error(&self) -> TraceError {
        let reason = match (self.line_number, self.data_lines) {
            (0, _) => "the file is empty".to_owned(),
            (_, 0) => "the file has only blank lines and comments".to_owned(),
            _ => self.parser.why_no_records(),
        };
        TraceError::NoRecords { path: self.name.clone(), format: self.format, reason }
    }
}

impl Iterator for TraceReader {
    type Item = Result<TraceRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}

impl fmt::Debug for TraceReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TraceReader")
            .field("name", &self.name)
            .field("format", &self.format)
            .field("line_number", &self.line_number)
            .finish_non_exhaustive()
    }
}

/// The per-format line parser, with whatever state its format carries from line to line.
enum LineParser {
    Disksim,
    Msr(msr::MsrParser),
    Spc,
    FioIolog(fio_iolog::FioIologParser),
    Blkparse(blkparse::BlkparseParser),
}

impl LineParser {
    fn new(format: TraceFormat) -> Self {
        match format {
            TraceFormat::Disksim => LineParser::Disksim,
            TraceFormat::Msr => LineParser::Msr(msr::MsrParser::new()),
            TraceFormat::Spc => LineParser::Spc,
            TraceFormat::FioIolog => LineParser::FioIolog(fio_iolog::FioIologParser::new()),
            TraceFormat::Blkparse => LineParser::blkparse(BlkparseAction::default()),
        }
    }

    fn blkparse(arrivals: BlkparseAction) -> Self {
        LineParser::Blkparse(blkparse::BlkparseParser::new(arrivals))
    }

    /// One trimmed, non-blank, non-comment line: a record, `None` for a line that is not a read or write.
    fn parse_line(&mut self, line: &str) -> LineResult<Option<TraceRecord>> {
        match self {
            LineParser::Disksim => disksim::parse_line(line).map(Some),
            LineParser::Msr(parser) => parser.parse_line(line),
            LineParser::Spc => spc::parse_line(line).map(Some),
            LineParser::FioIolog(parser) => parser.parse_line(line),
            LineParser::Blkparse(parser) => parser.parse_line(line),
        }
    }

    /// Why lines that are not blank or comments gave no record (where a format skips some).
    fn why_no_records(&self) -> String {
        match self {
            LineParser::Msr(_) => "the file has only a header".to_owned(),
            LineParser::FioIolog(_) => {
                "the file has only the header and actions that are not reads or writes (add, open, close, wait, sync, \
                 datasync, trim)"
                    .to_owned()
            }
            LineParser::Blkparse(parser) => parser.why_no_records(),
            // Every line of these formats is a record or an error.
            LineParser::Disksim | LineParser::Spc => "no line is a record".to_owned(),
        }
    }
}

/// The fields of one line, taken in order. Errors name a field by its 1-based position and say what was
/// expected there, e.g. `expected an integer size in 512-byte sectors in field 4, found "abc"`.
struct Fields<'a, I: Iterator<Item = &'a str>> {
    rest: Peekable<I>,
    /// 1-based position of the field last taken; 0 before the first.
    position: usize,
}

impl<'a, I: Iterator<Item = &'a str>> Fields<'a, I> {
    fn new(fields: I) -> Self {
        Fields { rest: fields.peekable(), position: 0 }
    }

    /// The next field, trimmed (CSV fields may carry spaces).
    fn next(&mut self, what: &str) -> LineResult<&'a str> {
        self.position += 1;
        match self.rest.next() {
            Some(field) => Ok(field.trim()),
            None => Err(format!("missing field {}: expected {what}", self.position)),
        }
    }

    /// The next field without taking it.
    fn peek(&mut self) -> Option<&'a str> {
        self.rest.peek().map(|field| field.trim())
    }

    fn next_u64(&mut self, what: &str) -> LineResult<u64> {
        let text = self.next(what)?;
        text.parse().map_err(|e: std::num::ParseIntError| match e.kind() {
            std::num::IntErrorKind::PosOverflow => self.too_large(what, text),
            _ => self.invalid(&format!("an integer {what}"), text),
        })
    }

    /// An integer count of `unit` (bytes per sector, ns per tick...), converted to the base unit.
    fn next_scaled(&mut self, what: &str, unit: u64) -> LineResult<u64> {
        let count = self.next_u64(what)?;
        count.checked_mul(unit).ok_or_else(|| self.too_large(what, &count.to_string()))
    }

    /// An I/O length: like [`Fields::next_scaled`], and zero is an error.
    fn next_length(&mut self, what: &str, unit: u64) -> LineResult<u64> {
        let bytes = self.next_scaled(what, unit)?;
        if bytes == 0 {
            return Err(format!("zero-length I/O: {what} in field {} is 0", self.position));
        }
        Ok(bytes)
    }

    /// A non-negative decimal number of seconds, in ns.
    fn next_seconds(&mut self, what: &str) -> LineResult<u64> {
        let text = self.next(what)?;
        seconds_to_ns(text).map_err(|e| match e {
            BadSeconds::NotANumber => self.invalid(&format!("a non-negative decimal {what}"), text),
            BadSeconds::TooLarge => {
                // A number: digits, a point, an exponent; but as long as the line may be.
                let shown = match text.char_indices().nth(MAX_QUOTED_CHARS) {
                    None => text.to_owned(),
                    Some((cut, _)) => format!("{}...", &text[..cut]),
                };
                self.too_large(what, &shown)
            }
        })
    }

    /// Errors if the line has a field beyond those taken.
    fn end(&mut self) -> LineResult<()> {
        match self.rest.next() {
            None => Ok(()),
            Some(extra) => Err(format!(
                "unexpected field {}, found {}: expected {} fields",
                self.position + 1,
                quoted(extra.trim()),
                self.position
            )),
        }
    }

    /// The message for a number too large for the model's 64-bit times, addresses and sizes, the same for every
    /// format and field: `{what} {number} in field N is too large`.
    fn too_large(&self, what: &str, number: &str) -> String {
        format!("{what} {number} in field {} is too large", self.position)
    }

    /// The message for a field that is present but is not `expected`.
    fn invalid(&self, expected: &str, found: &str) -> String {
        format!("expected {expected} in field {}, found {}", self.position, quoted(found))
    }
}

/// `text` in quotes with escapes, cut short if long: the input may be garbage.
fn quoted(text: &str) -> String {
    crate::util::quote::quoted(text, MAX_QUOTED_CHARS)
}

/// Why a field is not a time in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BadSeconds {
    /// Not a non-negative decimal number ("abc", "-1", "nan", "inf").
    NotANumber,
    /// A number of seconds whose ns do not fit in 64 bits (2^64 ns is 584 years).
    TooLarge,
}

/// Parses a non-negative decimal number of seconds ("12", "0.026214", "1.5e-3") into ns, rounded to nearest.
/// Plain decimals are converted exactly, so blkparse's `sec.nsec` loses nothing; other spellings go through f64.
fn seconds_to_ns(text: &str) -> Result<u64, BadSeconds> {
    if let Some(ns) = scale_decimal(text, NS_PER_SECOND) {
        return u64::try_from(ns.nearest).map_err(|_| BadSeconds::TooLarge);
    }
    let seconds: f64 = text.parse().map_err(|_| BadSeconds::NotANumber)?;
    // "nan" and "inf" parse, but are words; "1e400" parses to infinity, and is a number too large.
    if seconds.is_nan() || seconds < 0.0 || !text.bytes().any(|b| b.is_ascii_digit()) {
        return Err(BadSeconds::NotANumber);
    }
    let ns = (seconds * NS_PER_SECOND as f64).round();
    // u64::MAX as f64 rounds up to 2^64, the first value that does not fit.
    if ns < u64::MAX as f64 {
        Ok(ns as u64)
    } else {
        Err(BadSeconds::TooLarge)
    }
}

/// A record, checked that it ends inside the 64-bit byte address space.
fn record(time_ns: u64, op: Op, offset_bytes: u64, len_bytes: u64) -> LineResult<TraceRecord> {
    if offset_bytes.checked_add(len_bytes).is_none() {
        return Err(format!(
            "I/O of {len_bytes} bytes at byte offset {offset_bytes} ends past the 64-bit byte address space"
        ));
    }
    Ok(TraceRecord { time_ns, op, offset_bytes, len_bytes })
}

#[cfg(test)]
mod test_support {
    use std::io::Cursor;
    use std::path::PathBuf;

    use super::*;

    pub(super) fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/traces").join(name)
    }

    pub(super) fn read_fixture(name: &str, format: TraceFormat) -> Vec<TraceRecord> {
        let reader = TraceReader::open(&fixture(name), format).expect("fixture opens");
        reader.collect::<Result<_, _>>().expect("fixture parses")
    }

    pub(super) fn text_reader(text: &str, format: TraceFormat) -> TraceReader {
        TraceReader::from_reader(Box::new(Cursor::new(text.to_owned())), "test-input", format)
            .expect("in-memory reader")
    }

    pub(super) fn read_text(text: &str, format: TraceFormat) -> Result<Vec<TraceRecord>, TraceError> {
        text_reader(text, format).collect()
    }

    /// The line and message of the parse error that reading `reader` to the end must give.
    pub(super) fn parse_error_of(reader: TraceReader) -> (u64, String) {
        match reader.collect::<Result<Vec<_>, _>>() {
            Err(TraceError::Parse { line, message, .. }) => (line, message),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    pub(super) fn fixture_error(name: &str, format: TraceFormat) -> (u64, String) {
        parse_error_of(TraceReader::open(&fixture(name), format).expect("fixture opens"))
    }

    pub(super) fn text_error(text: &str, format: TraceFormat) -> (u64, String) {
        parse_error_of(text_reader(text, format))
    }

    /// `text` (which must hold records, the first on its first line that is not blank or a comment) read with a
    /// UTF-8 byte order mark before it gives the same records as without.
    pub(super) fn assert_bom_is_skipped(text: &str, format: TraceFormat) {
        let plain = read_text(text, format).expect("parses");
        assert!(!plain.is_empty());
        let with_bom = [UTF8_BOM, text.as_bytes()].concat();
        let reader = TraceReader::from_reader(Box::new(Cursor::new(with_bom)), "bom", format).expect("opens");
        let records: Vec<_> = reader.collect::<Result<_, _>>().unwrap_or_else(|e| panic!("{format}: {e}"));
        assert_eq!(records, plain, "{format}");
    }

    pub(super) fn fixture_text(name: &str) -> String {
        std::fs::read_to_string(fixture(name)).expect("fixture reads")
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufReader, Read};

    use proptest::prelude::*;

    use super::test_support::{read_text, text_error, text_reader};
    use super::*;

    #[test]
    fn format_names_are_the_scenario_spellings() {
        let names: Vec<_> = TraceFormat::ALL.iter().map(|format| format.name()).collect();
        assert_eq!(names, ["disksim", "msr", "spc", "fio-iolog", "blkparse"]);
        for format in TraceFormat::ALL {
            let json = serde_json::to_string(&format).expect("serializes");
            assert_eq!(json, format!("\"{}\"", format.name()));
            assert_eq!(serde_json::from_str::<TraceFormat>(&json).expect("deserializes"), format);
            assert_eq!(format.to_string(), format.name());
        }
    }

    #[test]
    fn decimal_seconds_convert_exactly_and_round_to_nearest() {
        assert_eq!(seconds_to_ns("0"), Ok(0));
        assert_eq!(seconds_to_ns("12"), Ok(12 * NS_PER_SECOND));
        assert_eq!(seconds_to_ns("0.026214"), Ok(26_214_000));
        assert_eq!(seconds_to_ns("1.250000000"), Ok(1_250_000_000));
        assert_eq!(seconds_to_ns(".5"), Ok(500_000_000));
        assert_eq!(seconds_to_ns("3."), Ok(3 * NS_PER_SECOND));
        assert_eq!(seconds_to_ns("0.0000000014"), Ok(1));
        assert_eq!(seconds_to_ns("0.0000000015"), Ok(2));
        assert_eq!(seconds_to_ns("0.9999999995"), Ok(NS_PER_SECOND));
        assert_eq!(seconds_to_ns("1.5e-3"), Ok(1_500_000));
        assert_eq!(seconds_to_ns("18446744073.709551615"), Ok(u64::MAX));
        for bad in ["", ".", "-1", "-0.5", "nan", "inf", "-inf", "-1e400", "0x10", "1.2.3", "abc"] {
            assert_eq!(seconds_to_ns(bad), Err(BadSeconds::NotANumber), "{bad:?}");
        }
        for large in ["1e30", "18446744074", "18446744073.7095516155", "1e400", &"9".repeat(100)] {
            assert_eq!(seconds_to_ns(large), Err(BadSeconds::TooLarge), "{large:?}");
        }
    }

    #[test]
    fn a_time_past_64_bits_of_ns_is_too_large_in_every_format() {
        let past = "18446744073709551616"; // 2^64
        let cases = [
            (TraceFormat::Disksim, format!("{past} 0 0 8 1"), format!("arrival time in ns {past} in field 1")),
            (
                TraceFormat::Msr,
                "184467440737095517,hm,0,Read,0,4096,10".to_owned(),
                "timestamp in 100 ns FILETIME ticks 184467440737095517 in field 1".to_owned(),
            ),
            (
                TraceFormat::Msr,
                format!("{past},hm,0,Read,0,4096,10"),
                format!("timestamp in 100 ns FILETIME ticks {past} in field 1"),
            ),
            (
                TraceFormat::Spc,
                "0,1,512,r,18446744074".to_owned(),
                "timestamp in seconds 18446744074 in field 5".to_owned(),
            ),
            (TraceFormat::Spc, "0,1,512,r,1e400".to_owned(), "timestamp in seconds 1e400 in field 5".to_owned()),
            (
                TraceFormat::Blkparse,
                "8,0 0 1 18446744074.5 42 Q R 8 + 8 [fio]".to_owned(),
                "time in seconds 18446744074.5 in field 4".to_owned(),
            ),
            (
                TraceFormat::FioIolog,
                "fio version 3 iolog\n18446744073709552 f read 0 512".to_owned(),
                "timestamp in microseconds 18446744073709552 in field 1".to_owned(),
            ),
        ];
        for (format, text, what) in cases {
            let (_, message) = text_error(&text, format);
            assert_eq!(message, format!("{what} is too large"), "{format}: {text}");
        }
    }

    #[test]
    fn field_errors_name_the_field_and_what_was_expected() {
        let mut fields = Fields::new("7 abc".split_whitespace());
        assert_eq!(fields.next_u64("device number"), Ok(7));
        assert_eq!(
            fields.next_u64("size in 512-byte sectors"),
            Err(r#"expected an integer size in 512-byte sectors in field 2, found "abc""#.to_owned())
        );
        assert_eq!(fields.next("type"), Err("missing field 3: expected type".to_owned()));

        let mut fields = Fields::new("18446744073709551615,0,1,2".split(','));
        assert_eq!(
            fields.next_scaled("timestamp", 100),
            Err("timestamp 18446744073709551615 in field 1 is too large".to_owned())
        );
        assert_eq!(fields.next_length("size", 1), Err("zero-length I/O: size in field 2 is 0".to_owned()));
        assert_eq!(fields.next_u64("a"), Ok(1));
        assert_eq!(fields.end(), Err(r#"unexpected field 4, found "2": expected 3 fields"#.to_owned()));
    }

    #[test]
    fn long_garbage_is_quoted_short() {
        let message = text_error(&format!("0 0 {} 8 1\n", "x".repeat(500)), TraceFormat::Disksim).1;
        assert!(message.len() < 150, "{message}");
        assert!(message.ends_with("...") && message.contains("field 3"), "{message}");
    }

    #[test]
    fn io_error_names_the_path() {
        let path = Path::new("/nonexistent/trace.csv");
        let error = TraceReader::open(path, TraceFormat::Msr).expect_err("missing file");
        assert!(matches!(error, TraceError::Io { .. }));
        assert!(error.to_string().starts_with("/nonexistent/trace.csv: cannot read trace: "), "{error}");
    }

    #[test]
    fn a_file_without_records_is_one_error_saying_what_it_holds() {
        let mut cases = vec![(
            TraceFormat::Msr,
            "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n",
            "msr: the file has only a header",
        )];
        for format in TraceFormat::ALL {
            cases.push((format, "", "the file is empty"));
            cases.push((format, "\n  \n# only a comment\r\n", "the file has only blank lines and comments"));
        }
        cases.extend([
            (TraceFormat::FioIolog, "fio version 3 iolog\n", "fio-iolog: the file has only the header and actions"),
            (TraceFormat::FioIolog, "fio version 2 iolog\nf open\nf wait 10\nf trim 0 512\n", "not reads or writes"),
            (
                TraceFormat::Blkparse,
                "8,0 0 1 0.5 42 D R 8 + 8 [fio]\n8,0 0 2 0.6 42 C R 8 + 8 [0]\n",
                "blkparse: no Q events",
            ),
            (TraceFormat::Blkparse, "CPU0 (8,0):\n Reads Queued: 0\n", "no Q events that read or write data"),
        ]);
        for (format, text, reason) in cases {
            let error = read_text(text, format).expect_err("no records");
            assert!(matches!(error, TraceError::NoRecords { .. }), "{format} {text:?}: {error:?}");
            let message = error.to_string();
            assert!(message.starts_with("test-input: trace has no read or write records ("), "{message}");
            assert!(message.contains(reason) && message.contains(format.name()), "{format} {text:?}: {message}");
        }
        // Reading on after the last record is the end of the file, not this error.
        let mut reader = text_reader("1 0 0 1 1\n", TraceFormat::Disksim);
        assert!(reader.next_record().expect("a record").is_some());
        assert!(reader.next_record().expect("end of file").is_none());
    }

    #[test]
    fn blank_lines_comments_and_crlf_are_skipped() {
        let text = "\r\n# a comment\r\n   \r\n100 0 8 8 1\r\n\t\r\n  # indented comment\n200 0 16 8 0";
        let records = read_text(text, TraceFormat::Disksim).expect("parses");
        assert_eq!(records.len(), 2);
        assert_eq!(records[1], TraceRecord { time_ns: 200, op: Op::Write, offset_bytes: 16 * 512, len_bytes: 4096 });
    }

    #[test]
    fn invalid_utf8_is_a_parse_error_on_its_line() {
        let input = b"100 0 8 8 1\n\xff\xfe 0 8 8 1\n".to_vec();
        let reader =
            TraceReader::from_reader(Box::new(std::io::Cursor::new(input)), "binary", TraceFormat::Disksim).unwrap();
        let (line, message) = test_support::parse_error_of(reader);
        assert_eq!(line, 2);
        assert!(message.contains("UTF-8"), "{message}");
    }

    #[test]
    fn over_long_line_is_a_parse_error() {
        let text = format!("100 0 8 8 1\n{}\n", "9".repeat(MAX_LINE_BYTES + 10));
        let (line, message) = text_error(&text, TraceFormat::Disksim);
        assert_eq!(line, 2);
        assert!(message.contains("longer than"), "{message}");
    }

    #[test]
    fn records_ending_past_the_address_space_are_errors() {
        let (line, message) = text_error(&format!("1,h,0,Read,{},4096,1", u64::MAX - 10), TraceFormat::Msr);
        assert_eq!(line, 1);
        assert!(message.contains("64-bit byte address space"), "{message}");
    }

    /// Makes line `i` (from 1) of a generated trace.
    type LineMaker = fn(u64) -> String;

    /// Produces a trace line by line on demand, so neither the input nor the reader holds the whole trace.
    struct GeneratedTrace {
        header: &'static str,
        make_line: LineMaker,
        lines: u64,
        next_line: u64,
        pending: Vec<u8>,
        pending_at: usize,
    }

    impl Read for GeneratedTrace {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            if self.pending_at == self.pending.len() {
                if self.next_line > self.lines {
                    return Ok(0);
                }
                let text = if self.next_line == 0 { self.header.to_owned() } else { (self.make_line)(self.next_line) };
                self.next_line += 1;
                self.pending = text.into_bytes();
                self.pending.push(b'\n');
                self.pending_at = 0;
            }
            let count = out.len().min(self.pending.len() - self.pending_at);
            out[..count].copy_from_slice(&self.pending[self.pending_at..self.pending_at + count]);
            self.pending_at += count;
            Ok(count)
        }
    }

    #[test]
    fn streams_a_100k_line_trace_of_every_format() {
        const LINES: u64 = 100_000;
        let cases: [(TraceFormat, &'static str, LineMaker); 5] = [
            (TraceFormat::Disksim, "", |i| format!("{} 0 {} 8 {}", i * 1000, i * 8, i % 2)),
            (TraceFormat::Msr, "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime", |i| {
                format!("{},hm,0,{},{},4096,100", i * 10, if i % 2 == 1 { "Read" } else { "Write" }, i * 4096)
            }),
            (TraceFormat::Spc, "", |i| {
                format!(
                    "0,{},4096,{},{}.{:06}",
                    i * 8,
                    if i % 2 == 1 { "r" } else { "w" },
                    i / 1_000_000,
                    i % 1_000_000
                )
            }),
            (TraceFormat::FioIolog, "fio version 3 iolog", |i| {
                format!("{i} /dev/nvme0n1 {} {} 4096", if i % 2 == 1 { "read" } else { "write" }, i * 4096)
            }),
            (TraceFormat::Blkparse, "", |i| {
                format!(
                    "  8,0  0 {i} {}.{:09} 42 Q {} {} + 8 [fio]",
                    i / 1_000_000_000,
                    i % 1_000_000_000,
                    if i % 2 == 1 { "R" } else { "WS" },
                    i * 8
                )
            }),
        ];
        for (format, header, make_line) in cases {
            let trace =
                GeneratedTrace { header, make_line, lines: LINES, next_line: 0, pending: Vec::new(), pending_at: 0 };
            let mut reader = TraceReader::from_reader(Box::new(BufReader::new(trace)), "generated", format).unwrap();
            let (mut count, mut reads, mut last) = (0u64, 0u64, None);
            while let Some(record) = reader.next_record().unwrap_or_else(|e| panic!("{format}: {e}")) {
                count += 1;
                reads += u64::from(record.op == Op::Read);
                last = Some(record);
            }
            assert_eq!(count, LINES, "{format}");
            assert_eq!(reads, LINES / 2, "{format}");
            let last = last.expect("records");
            assert_eq!(last.op, Op::Write, "{format}");
            assert_eq!(last.len_bytes, 4096, "{format}");
            assert_eq!(last.offset_bytes, LINES * 4096, "{format}");
            // Only one line is ever held.
            assert!(reader.line.capacity() < 1024, "{format}: line buffer grew to {}", reader.line.capacity());
        }
    }

    /// Reads `input` to the end or the first error; the point is that it returns at all.
    fn drain(input: Vec<u8>, format: TraceFormat, blkparse_arrivals: Option<BlkparseAction>) {
        let input = Box::new(std::io::Cursor::new(input));
        let mut reader = match blkparse_arrivals {
            Some(arrivals) => TraceReader::from_reader_blkparse(input, "fuzz", arrivals).unwrap(),
            None => TraceReader::from_reader(input, "fuzz", format).unwrap(),
        };
        while let Ok(Some(record)) = reader.next_record() {
            assert!(record.len_bytes > 0);
            assert!(record.offset_bytes.checked_add(record.len_bytes).is_some());
        }
    }

    fn drain_all_formats(input: &[u8]) {
        for format in TraceFormat::ALL {
            drain(input.to_vec(), format, None);
        }
        drain(input.to_vec(), TraceFormat::Blkparse, Some(BlkparseAction::Dispatch));
    }

    /// Lines built from the tokens the formats use, so the fuzzing reaches past the first field.
    fn token_line() -> impl Strategy<Value = String> {
        let token = prop_oneof![
            Just("fio version 2 iolog".to_owned()),
            Just("fio version 3 iolog".to_owned()),
            Just("Timestamp".to_owned()),
            prop::sample::select(vec![
                "0", "1", "8", "512", "8,0", "Q", "D", "R", "W", "FWS", "+", "read", "write", "wait", "r", "w"
            ])
            .prop_map(str::to_owned),
            any::<u64>().prop_map(|n| n.to_string()),
            (0u32..1000, 0u32..1_000_000_000).prop_map(|(s, ns)| format!("{s}.{ns:09}")),
            "[-+.,#a-zA-Z0-9 ]{0,12}",
        ];
        (prop::collection::vec(token, 0..12), prop::sample::select(vec![" ", ",", "\t", " , "]))
            .prop_map(|(tokens, separator)| tokens.join(separator))
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(input in prop::collection::vec(any::<u8>(), 0..400)) {
            drain_all_formats(&input);
        }

        #[test]
        fn random_text_never_panics(input in "[ -~\t\r\n]{0,400}") {
            drain_all_formats(input.as_bytes());
        }

        #[test]
        fn random_token_lines_never_panic(lines in prop::collection::vec(token_line(), 0..12)) {
            drain_all_formats(lines.join("\n").as_bytes());
        }
    }

    #[test]
    fn reader_is_send_and_iterates() {
        fn assert_send<T: Send>(_: &T) {}
        let reader = text_reader("1 0 0 1 1\n2 0 0 1 0\n", TraceFormat::Disksim);
        assert_send(&reader);
        assert_eq!(reader.format(), TraceFormat::Disksim);
        assert_eq!(reader.count(), 2);
    }
}
