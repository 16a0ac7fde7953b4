//! `[md]`: the host's md RAID-0 volume, `md0` (Linux's md driver striping its member drives), and its
//! geometry in closed form, for the workload (the volume's capacity) and the host (where each piece of an I/O
//! goes).
//!
//! The mapping is drivers/md/raid0.c's for members of equal size (Linux 6.x): `create_strip_zones` rounds each
//! member down to whole chunks and, as all members are then equal, builds one strip zone of all of them;
//! `raid0_make_request` splits a bio at each chunk boundary (`bio_split` at `chunk_sects - (sector mod
//! chunk_sects)`), and `map_sector` with `find_zone` maps each piece: chunk `c = sector / chunk` of the zone goes
//! to member `c mod n`, at `(c / n) * chunk + sector mod chunk` on it. `raid0_size` gives the volume
//! `n` members' rounded sizes. md's superblock and data offset (`rdev->data_offset`, added to every mapped
//! sector; 1.2 metadata puts the data some MiB into each member) are not modeled: member offsets start at 0.

use serde::{Deserialize, Serialize};

use super::drives::{drive_list, drive_name};
use super::units::Bytes;

/// The md volume's name (`flow.device = "md0"`).
pub const MD_NAME: &str = "md0";

/// The granule of a chunk: mdadm takes `--chunk` in KiB and refuses less than 4 KiB (mdadm.c, `--chunk`:
/// `s.chunk < 8` sectors is "invalid chunk/rounding value"); the kernel needs a multiple of the members'
/// logical block size (raid0.c `create_strip_zones`: "chunk_size of %d not multiple of block size"), 512 B or
/// 4 KiB. A multiple of 4 KiB satisfies both for any member; the drives here map 4 KiB units.
pub const CHUNK_GRANULE: u64 = 4096;

/// `[md]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MdConfig {
    /// The RAID level: only 0 (striping) is modeled.
    pub level: u32,
    /// The member drives, a colon-separated list like fio's `filename` ("nvme0:nvme1"); all of the host's drives
    /// unless set.
    pub devices: Option<String>,
    /// The chunk (stripe unit) size: mdadm's default, 512 KiB (mdadm.h `DEFAULT_CHUNK 512`, "chunk size
    /// defaults to 512K" in Create.c).
    #[serde(default = "default_chunk")]
    pub chunk: Bytes,
}

fn default_chunk() -> Bytes {
    Bytes(512 << 10)
}

impl MdConfig {
    /// The volume's geometry on the host's drives, of `drive_bytes[i]` bytes for drive `i`; errors are `(key
    /// under md, what)`. Its members must hold as much each, in whole chunks: md builds one strip zone of
    /// members of equal (rounded) size, and several zones otherwise (`create_strip_zones`), which is not
    /// modelled.
    pub fn raid0(&self, drive_bytes: &[u64]) -> Result<Raid0, (String, String)> {
        let count = drive_bytes.len() as u32;
        if self.level != 0 {
            return Err((
                "level".into(),
                format!("expected 0 (RAID-0, striping: the only md level modeled), found {}", self.level),
            ));
        }
        let members = match &self.devices {
            Some(list) => drive_list(list, count).map_err(|what| ("devices".to_string(), what))?,
            None => (0..count).collect(),
        };
        let chunk = self.chunk.0;
        if chunk == 0 || !chunk.is_multiple_of(CHUNK_GRANULE) {
            return Err((
                "chunk".into(),
                format!("expected a multiple of 4 KiB (mdadm takes whole KiB from 4 KiB; md a multiple of the drives' block size), found {chunk} bytes"),
            ));
        }
        let smallest = members.iter().map(|&m| drive_bytes[m as usize]).min().unwrap_or(0);
        if chunk > smallest {
            return Err((
                "chunk".into(),
                format!("a chunk of {chunk} bytes is larger than a member drive ({smallest} bytes): md would round each member down to no chunk at all"),
            ));
        }
        let rounded = |m: u32| drive_bytes[m as usize] / chunk * chunk;
        if let Some(&other) = members.iter().find(|&&m| rounded(m) != rounded(members[0])) {
            let (first, other) = (members[0], other);
            return Err((
                "devices".into(),
                format!(
                    "the members hold different capacities in whole chunks: {} {} bytes, {} {} bytes; md RAID-0 over \
                     members of different sizes (several strip zones) is not modelled: list drives of equal capacity",
                    drive_name(first),
                    rounded(first),
                    drive_name(other),
                    rounded(other)
                ),
            ));
        }
        Ok(Raid0 { members, chunk, member_bytes: smallest / chunk * chunk })
    }
}

/// md RAID-0 over members of equal size: one strip zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Raid0 {
    /// The member drives (drive indices) in md's order: chunk `c` goes to `members[c mod n]`.
    members: Vec<u32>,
    /// Chunk size, bytes.
    chunk: u64,
    /// What md uses of each member: its capacity rounded down to whole chunks (`create_strip_zones`).
    member_bytes: u64,
}

/// One piece of a volume extent, on one member drive within one chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    /// The member drive, by drive index.
    pub drive: u32,
    /// Byte offset on the drive.
    pub offset: u64,
    /// Bytes.
    pub len: u64,
}

impl Raid0 {
    /// The member drives, in md's order.
    pub fn members(&self) -> &[u32] {
        &self.members
    }

    /// Chunk size, bytes.
    pub fn chunk(&self) -> u64 {
        self.chunk
    }

    /// The volume's capacity: n members of their capacity rounded down to whole chunks (`raid0_size`).
    pub fn capacity(&self) -> u64 {
        self.member_bytes * self.members.len() as u64
    }

    /// Where volume byte `offset` lives: (drive index, byte offset on it) (`map_sector`).
    pub fn map(&self, offset: u64) -> (u32, u64) {
        let n = self.members.len() as u64;
        let chunk = offset / self.chunk;
        let member = self.members[(chunk % n) as usize];
        (member, chunk / n * self.chunk + offset % self.chunk)
    }

    /// The pieces of the volume extent `(offset, len)` in order, one per chunk it touches, as
    /// `raid0_make_request` splits a bio at chunk boundaries and maps each piece.
    pub fn pieces(&self, offset: u64, len: u64) -> impl Iterator<Item = Piece> + '_ {
        let end = offset + len;
        let mut at = offset;
        std::iter::from_fn(move || {
            if at >= end {
                return None;
            }
            let len = (self.chunk - at % self.chunk).min(end - at);
            let (drive, on_drive) = self.map(at);
            at += len;
            Some(Piece { drive, offset: on_drive, len })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1024;

    fn md(devices: Option<&str>, chunk: u64) -> MdConfig {
        MdConfig { level: 0, devices: devices.map(String::from), chunk: Bytes(chunk) }
    }

    #[test]
    fn offsets_map_to_members_and_chunks_in_closed_form() {
        let r = md(None, 64 * KIB).raid0(&[1 << 30; 3]).unwrap();
        assert_eq!(r.members(), [0, 1, 2]);
        // Chunk c on member c mod 3, at (c / 3) chunks plus the offset in the chunk.
        assert_eq!(r.map(0), (0, 0));
        assert_eq!(r.map(64 * KIB - 512), (0, 64 * KIB - 512));
        assert_eq!(r.map(64 * KIB), (1, 0));
        assert_eq!(r.map(2 * 64 * KIB + 4 * KIB), (2, 4 * KIB));
        assert_eq!(r.map(3 * 64 * KIB), (0, 64 * KIB));
        assert_eq!(r.map(7 * 64 * KIB + 100), (1, 2 * 64 * KIB + 100));
        // A listed order is md's order; chunks that are no power of two map the same way.
        let r = md(Some("nvme3:nvme1"), 12 * KIB).raid0(&[1 << 30; 4]).unwrap();
        assert_eq!(r.members(), [3, 1]);
        assert_eq!(r.map(12 * KIB), (1, 0));
        assert_eq!(r.map(5 * 12 * KIB + 8 * KIB), (1, 2 * 12 * KIB + 8 * KIB));
        for offset in (0..40).map(|i| i * 5 * KIB) {
            let c = offset / (12 * KIB);
            assert_eq!(r.map(offset), ([3, 1][(c % 2) as usize], c / 2 * 12 * KIB + offset % (12 * KIB)));
        }
    }

    #[test]
    fn an_extent_splits_at_chunk_boundaries_into_pieces_that_cover_it_exactly() {
        let r = md(None, 16 * KIB).raid0(&[1 << 30; 4]).unwrap();
        // Within one chunk: one piece.
        assert_eq!(r.pieces(4 * KIB, 8 * KIB).collect::<Vec<_>>(), [Piece { drive: 0, offset: 4 * KIB, len: 8 * KIB }]);
        // Ending on a boundary: still one.
        assert_eq!(r.pieces(16 * KIB, 16 * KIB).count(), 1);
        // Across boundaries: split there, each piece on its member.
        let pieces: Vec<Piece> = r.pieces(12 * KIB, 60 * KIB).collect();
        assert_eq!(
            pieces,
            [
                Piece { drive: 0, offset: 12 * KIB, len: 4 * KIB },
                Piece { drive: 1, offset: 0, len: 16 * KIB },
                Piece { drive: 2, offset: 0, len: 16 * KIB },
                Piece { drive: 3, offset: 0, len: 16 * KIB },
                Piece { drive: 0, offset: 16 * KIB, len: 8 * KIB },
            ]
        );
        // Every extent: pieces in order, each within one chunk, lengths adding up, each the map of its start.
        for (offset, len) in [(0, 512), (512, 1 << 20), (15 * KIB, 2 * KIB), (7 * KIB + 512, 333 * KIB), (0, 64 * KIB)]
        {
            let pieces: Vec<Piece> = r.pieces(offset, len).collect();
            assert_eq!(pieces.iter().map(|p| p.len).sum::<u64>(), len);
            let mut at = offset;
            for p in &pieces {
                assert_eq!((p.drive, p.offset), r.map(at));
                assert!(p.len > 0 && p.offset / (16 * KIB) == (p.offset + p.len - 1) / (16 * KIB));
                at += p.len;
            }
            assert_eq!(pieces.len() as u64, (offset + len).div_ceil(16 * KIB) - offset / (16 * KIB));
        }
    }

    #[test]
    fn the_capacity_is_the_members_rounded_down_to_whole_chunks() {
        let r = md(None, 512 * KIB).raid0(&[10 * 512 * KIB + 100 * KIB; 2]).unwrap();
        assert_eq!(r.capacity(), 2 * 10 * 512 * KIB);
        assert_eq!(r.map(r.capacity() - 1), (1, 10 * 512 * KIB - 1));
        let r = md(Some("nvme1"), 4 * KIB).raid0(&[1 << 20; 2]).unwrap();
        assert_eq!(r.capacity(), 1 << 20);
        assert_eq!(md(None, 512 * KIB).chunk.0, default_chunk().0);
    }

    #[test]
    fn bad_levels_chunks_and_members_are_errors_naming_the_key() {
        let key = |m: MdConfig| m.raid0(&[1 << 30; 4]).unwrap_err().0;
        assert_eq!(key(MdConfig { level: 1, ..md(None, 64 * KIB) }), "level");
        for chunk in [0, 512, 6 * KIB, (1 << 30) + 4 * KIB] {
            assert_eq!(key(md(None, chunk)), "chunk", "{chunk}");
        }
        for list in ["nvme4", "nvme0:nvme0", "nvme0::nvme1", ""] {
            assert_eq!(key(md(Some(list), 64 * KIB)), "devices", "{list}");
        }
    }

    #[test]
    fn members_must_hold_as_many_whole_chunks() {
        let drives = [1 << 30, 1 << 29, (1 << 30) + 4 * KIB, 1 << 30];
        let (key, what) = md(None, 64 * KIB).raid0(&drives).unwrap_err();
        assert_eq!(key, "devices");
        assert!(what.contains("nvme0 1073741824 bytes, nvme1 536870912 bytes"), "{what}");
        // Equal in whole chunks is equal to md (the remainder is cut); a list of the equal ones is fine.
        let r = md(Some("nvme0:nvme2:nvme3"), 64 * KIB).raid0(&drives).unwrap();
        assert_eq!(r.capacity(), 3 << 30);
        assert!(md(Some("nvme0:nvme2"), 8 * KIB).raid0(&drives).is_ok());
        assert_eq!(md(Some("nvme1:nvme2"), 64 * KIB).raid0(&drives).unwrap_err().0, "devices");
    }
}
