//! The trace file formats a flow's `format` key names (the readers are `workload::trace`'s).

use serde::{Deserialize, Serialize};

use crate::util::keyword::keyword_serde;

/// A trace file format, as scenario files spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", remote = "Self")]
pub enum TraceFormat {
    /// DiskSim / MQSim ASCII: `arrival_ns device start_lba size_in_sectors type(1=read, 0=write)`.
    Disksim,
    /// MSR Cambridge CSV: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
    Msr,
    /// SPC / UMass CSV (Financial, WebSearch): `ASU,LBA,Size,Opcode,Timestamp[,...]`.
    Spc,
    /// fio's `write_iolog` output, version 2 or 3.
    FioIolog,
    /// blkparse's default text output; the `Q` (queued) events are the arrivals.
    Blkparse,
}

keyword_serde!(TraceFormat);

impl TraceFormat {
    pub const ALL: [TraceFormat; 5] =
        [TraceFormat::Disksim, TraceFormat::Msr, TraceFormat::Spc, TraceFormat::FioIolog, TraceFormat::Blkparse];

    /// The scenario-file spelling.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Disksim => "disksim",
            TraceFormat::Msr => "msr",
            TraceFormat::Spc => "spc",
            TraceFormat::FioIolog => "fio-iolog",
            TraceFormat::Blkparse => "blkparse",
        }
    }
}
