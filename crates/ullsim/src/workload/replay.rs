//! Replaying a trace flow: its records in order, their times relative to the first record (scaled by
//! `time_scale`), their extents folded into the device's capacity.

use std::path::Path;

use super::check::SECTOR;
use super::trace::{TraceError, TraceFormat, TraceReader, TraceRecord};
use crate::engine::Time;
use crate::request::Op;

/// A trace being replayed.
pub(super) struct Replay {
    reader: TraceReader,
    time_scale: f64,
    first_time: Option<u64>,
    next: Option<TraceRecord>,
    capacity: u64,
}

impl Replay {
    /// Open the trace at `path` and read its first record; its gaps are stretched by `time_scale` and its
    /// offsets folded into `capacity` bytes.
    pub(super) fn open(path: &Path, format: TraceFormat, time_scale: f64, capacity: u64) -> Result<Replay, String> {
        let reader = TraceReader::open(path, format).map_err(|e| e.to_string())?;
        let mut replay = Replay { reader, time_scale, first_time: None, next: None, capacity };
        replay.advance().map_err(|e| e.to_string())?;
        Ok(replay)
    }

    pub(super) fn advance(&mut self) -> Result<(), TraceError> {
        self.next = self.reader.next_record()?;
        if let (None, Some(r)) = (self.first_time, &self.next) {
            self.first_time = Some(r.time_ns);
        }
        Ok(())
    }

    /// The trace has no record left.
    pub(super) fn is_done(&self) -> bool {
        self.next.is_none()
    }

    /// Offset from the flow's start at which the pending record arrives.
    pub(super) fn due_after_start(&self) -> Option<Time> {
        let r = self.next.as_ref()?;
        let rel = r.time_ns.saturating_sub(self.first_time.unwrap_or(r.time_ns));
        Some((rel as f64 * self.time_scale).round() as Time)
    }

    /// The pending record as an I/O, folded into the device's capacity.
    pub(super) fn take(&mut self) -> Option<(Op, u64, u32)> {
        let r = self.next.take()?;
        let len = r.len_bytes.min(self.capacity).min(u32::MAX as u64 / SECTOR * SECTOR).max(1);
        let mut offset = (r.offset_bytes % self.capacity) / SECTOR * SECTOR;
        if offset + len > self.capacity {
            offset = (self.capacity - len) / SECTOR * SECTOR;
        }
        Some((r.op, offset, len as u32))
    }
}
