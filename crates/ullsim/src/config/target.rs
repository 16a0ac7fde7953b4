//! What a flow's I/O goes to (`flow.device`): one drive, a list of drives served in fio's
//! `file_service_type` order, or the host's md RAID-0 volume; and what each of them holds.

use super::drives::{drive_index, drive_list, MD_VOLUME};
use super::md::{Raid0, MD_NAME};
use super::scenario::FlowSpec;

/// Where a flow's I/O goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Drives by index, in the order `flow.device` lists them (fio's files of a `filename` list): one, or
    /// several served in `file_service_type` order.
    Drives(Vec<u32>),
    /// The md volume (`"md0"`): its requests carry [`MD_VOLUME`] and md splits them over its members.
    Md,
}

impl Target {
    /// The drives the flow's requests carry, one per file: the listed drives, or [`MD_VOLUME`].
    pub fn files(&self) -> Vec<u32> {
        match self {
            Target::Drives(drives) => drives.clone(),
            Target::Md => vec![MD_VOLUME],
        }
    }
}

/// `flow.device` of `flow` on a host of `count` drives (`nvme0` unless set). Whether the host has an md
/// volume is the scenario's check.
pub fn target_of(flow: &FlowSpec, count: u32) -> Result<Target, String> {
    let Some(name) = &flow.device else { return Ok(Target::Drives(vec![0])) };
    if name == MD_NAME {
        return Ok(Target::Md);
    }
    let drives = if name.contains(':') { drive_list(name, count) } else { drive_index(name, count).map(|d| vec![d]) };
    drives.map(Target::Drives).map_err(|what| {
        format!("{what} (a drive's name, a colon-separated list of them like \"nvme0:nvme1\", or \"{MD_NAME}\")")
    })
}

/// What flows can address: the host's drives and its md volume if it has one.
#[derive(Debug, Clone)]
pub struct Storage {
    /// Bytes each drive holds, by index (`device.count` of them).
    pub drive_bytes: Vec<u64>,
    /// `[md]`'s volume.
    pub md: Option<Raid0>,
}

impl Storage {
    /// How many drives (`device.count`).
    pub fn count(&self) -> u32 {
        self.drive_bytes.len() as u32
    }

    /// Bytes a flow on `target` can address: a drive's, or the smallest drive's of a list (each drive of a
    /// list is one of fio's files, and the flow's region is the same range on each: fio would give each file
    /// its own size, which is not modelled), or the md volume's.
    pub fn capacity(&self, target: &Target) -> u64 {
        let drives = match (target, &self.md) {
            (Target::Md, Some(md)) => return md.capacity(),
            (Target::Drives(drives), _) => drives.as_slice(),
            // The scenario's check refuses md0 without [md].
            (Target::Md, None) => &[],
        };
        drives.iter().map(|&d| self.drive_bytes[d as usize]).min().unwrap_or(0)
    }
}

/// fio's `file_service_type` (fio HOWTO.rst; io_u.c `__get_next_file`): how a job picks the file (here the
/// drive of its list) of each I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileServiceKind {
    /// `roundrobin`: the next file in list order (`get_next_file_rr`).
    RoundRobin,
    /// `sequential`: stay on a file until it is done, then the next one in list order.
    Sequential,
    /// `random`: a file drawn uniformly (`__get_next_fileno_rand`, `FIO_FSERVICE_RANDOM`).
    Random,
}

/// `file_service_type`: the kind, and how many I/Os a job issues to a file before it picks again (fio's
/// `file_service_nr`, the `:N` postfix; 1 unless given, for every kind: options.c `str_fst_cb` sets it to 1
/// before it reads the postfix). `sequential` ignores it, as fio's `__get_next_file` does (it keeps the file
/// until the file is done, whatever N; HOWTO.rst says the postfix applies to it too, the code does not use it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileService {
    pub kind: FileServiceKind,
    pub switch_after: u32,
}

/// fio's default: `roundrobin` (options.c: `.def = "roundrobin"`), switching after every I/O.
impl Default for FileService {
    fn default() -> Self {
        FileService { kind: FileServiceKind::RoundRobin, switch_after: 1 }
    }
}

/// Parse `file_service_type`: "roundrobin", "sequential" or "random", each optionally with ":N".
pub fn file_service_of(flow: &FlowSpec) -> Result<FileService, String> {
    let Some(text) = &flow.file_service_type else { return Ok(FileService::default()) };
    let (name, postfix) = match text.split_once(':') {
        Some((name, n)) => (name, Some(n)),
        None => (text.as_str(), None),
    };
    let kind = match name {
        "roundrobin" => FileServiceKind::RoundRobin,
        "sequential" => FileServiceKind::Sequential,
        "random" => FileServiceKind::Random,
        "zipf" | "pareto" | "normal" | "gauss" => {
            return Err(format!("fio's {name:?} file service is not modeled: use \"roundrobin\", \"sequential\" or \"random\""))
        }
        _ => {
            return Err(format!(
                "expected \"roundrobin\", \"sequential\" or \"random\", optionally with \":N\" (switch after N I/Os), found {text:?}"
            ))
        }
    };
    // fio reads N with atoi, so 0 (or text) makes its count of I/Os left on a file wrap around to 2^32 - 1.
    let switch_after = match postfix {
        None => 1,
        Some(n) => n.parse::<u32>().ok().filter(|&n| n >= 1).ok_or_else(|| {
            format!("expected a whole number of I/Os from 1 to {} after ':', found {text:?}", u32::MAX)
        })?,
    };
    Ok(FileService { kind, switch_after })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(device: Option<&str>, service: Option<&str>) -> FlowSpec {
        FlowSpec {
            name: "f".into(),
            device: device.map(String::from),
            file_service_type: service.map(String::from),
            ..FlowSpec::default()
        }
    }

    #[test]
    fn a_flow_targets_a_drive_a_list_or_the_md_volume() {
        assert_eq!(target_of(&flow(None, None), 1), Ok(Target::Drives(vec![0])));
        assert_eq!(target_of(&flow(Some("nvme2"), None), 4), Ok(Target::Drives(vec![2])));
        assert_eq!(target_of(&flow(Some("nvme2:nvme0"), None), 4), Ok(Target::Drives(vec![2, 0])));
        assert_eq!(target_of(&flow(Some("md0"), None), 4), Ok(Target::Md));
        assert_eq!(Target::Md.files(), [MD_VOLUME]);
        for bad in ["nvme4", "nvme0:nvme0", "md1", "nvme0:md0"] {
            let message = target_of(&flow(Some(bad), None), 4).expect_err(bad);
            assert!(message.contains("a colon-separated list of them"), "{message}");
        }
    }

    #[test]
    fn file_service_types_parse_as_fio_reads_them() {
        let parse = |text| file_service_of(&flow(None, Some(text)));
        assert_eq!(file_service_of(&flow(None, None)), Ok(FileService::default()));
        assert_eq!(parse("roundrobin"), Ok(FileService { kind: FileServiceKind::RoundRobin, switch_after: 1 }));
        assert_eq!(parse("roundrobin:4"), Ok(FileService { kind: FileServiceKind::RoundRobin, switch_after: 4 }));
        assert_eq!(parse("random:8"), Ok(FileService { kind: FileServiceKind::Random, switch_after: 8 }));
        assert_eq!(parse("sequential"), Ok(FileService { kind: FileServiceKind::Sequential, switch_after: 1 }));
        for bad in ["rr", "roundrobin:0", "random:x", "random:", "sequential:-1", "Random", ""] {
            assert!(parse(bad).unwrap_err().contains("expected"), "{bad}");
        }
        assert!(parse("zipf:1.2").unwrap_err().contains("not modeled"));
    }
}
