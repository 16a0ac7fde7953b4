//! An SLC write cache for a base that has none, so that the fit's choice of turning one on
//! (`device.slc.enabled`) tries a cache and not an empty switch: a base without a cache has no SLC space
//! (`static_bytes` and `dynamic_max_bytes` 0) and its native times in place of SLC ones, and turned on
//! so it writes exactly as before. The sizes and times here are a starting point: the fit refits the SLC
//! program time from the writes (`device.slc.program_ns`), and the preset writes the rest only when the
//! fit turned the cache on.

use super::knobs::{json_at, value_at};

/// Share of the host's capacity an SLC cache keeps whatever the drive's fill [inferred: `tlc-consumer`'s
/// 6 GB static part of 1 TB, AnandTech's 980 PRO review]. The probe's preconditioned drive is full, so its
/// writes see this part alone; a user whose drive is not keeps `dynamic_max_bytes` at the base's 0.
pub const STATIC_SHARE: f64 = 0.006;

/// An SLC-mode read's time as a share of the native one [inferred: the HP white paper "SSD technology
/// differences between SLC, MLC and TLC NAND", Table 1: 25 us against ~75 us; as `tlc-consumer`].
pub const READ_SHARE: f64 = 1.0 / 3.0;

/// An SLC-mode program's time as a share of the native one [inferred: same HP table, 200-300 us against
/// 900-1350 us, ~0.22; as `tlc-consumer`].
pub const PROGRAM_SHARE: f64 = 0.22;

/// The settings (`key`, value) that give `base` (the base's configuration as [`super::evaluate::Bench::
/// base_json`] has it) an SLC cache to turn on: none when it has one already, or cannot have one (native
/// SLC cells, `bits_per_cell` 1; a drive that writes in place). Times the base sets apart from the
/// native ones are its own and kept.
pub fn for_base(base: &serde_json::Value) -> Vec<(&'static str, f64)> {
    let number = |key: &str| value_at(base, key);
    let slc = |key: &str| number(&format!("device.slc.{key}"));
    let has_space = slc("static_bytes").unwrap_or(0.0) > 0.0 || slc("dynamic_max_bytes").unwrap_or(0.0) > 0.0;
    let page_mapped = json_at(base, "device.ftl.mapping").and_then(|m| m.as_str()) == Some("page");
    if slc("enabled") != Some(0.0) || has_space || slc("bits_per_cell").unwrap_or(1.0) < 2.0 || !page_mapped {
        return Vec::new();
    }
    let Some(static_bytes) = static_bytes(&number) else { return Vec::new() };
    let mut settings = vec![("device.slc.static_bytes", static_bytes)];
    let times = [
        ("device.slc.read_ns", "device.flash.read_ns", READ_SHARE),
        ("device.slc.program_ns", "device.flash.program_ns", PROGRAM_SHARE),
    ];
    for (slc_key, native_key, share) in times {
        if let (Some(own), Some(native)) = (number(slc_key), number(native_key)) {
            if own == native {
                settings.push((slc_key, (native * share).round()));
            }
        }
    }
    settings
}

/// The static part's size: [`STATIC_SHARE`] of the capacity, in whole SLC blocks of every plane (rounded up). Its blocks
/// come out of the over-provisioning, beside garbage collection's reserve: a base whose over-provisioning
/// cannot hold them refuses the cache turned on (the worst fit) until the fit's over-provisioning makes the
/// room. Capped at half of the base's room instead (2 GiB from `tlc-enterprise`'s 7% and 5% threshold),
/// the cache filled within the probe's 2 s of writes where `tlc-consumer`'s 6 GB outlasts them, and the
/// fitted drive folded through the run (4 KiB writes −84%; uncapped, −25%).
fn static_bytes(number: &dyn Fn(&str) -> Option<f64>) -> Option<f64> {
    let flash = |key: &str| number(&format!("device.flash.{key}"));
    let planes = ["channels", "chips_per_channel", "dies_per_chip", "planes_per_die"]
        .iter()
        .try_fold(1.0, |product, key| Some(product * flash(key)?))?;
    let slc_block_bytes =
        (flash("pages_per_block")? / number("device.slc.bits_per_cell")?).floor() * flash("page_bytes")?;
    let blocks_per_plane = (number("capacity_bytes")? * STATIC_SHARE / (slc_block_bytes * planes)).ceil();
    Some(blocks_per_plane * slc_block_bytes * planes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// 128 planes of 1,000 blocks of 384 16 KiB pages (a TLC block holds 128 pages in SLC mode: 2 MiB), a
    /// 1 TB drive.
    fn base(enabled: bool, bits: u32, static_bytes: u64, mapping: &str, overprovisioning: f64) -> serde_json::Value {
        json!({
            "capacity_bytes": 1_000_000_000_000u64,
            "device": {
                "ftl": { "mapping": mapping, "overprovisioning": overprovisioning, "gc_threshold": 0.05 },
                "flash": {
                    "read_ns": 60000, "program_ns": 900000, "channels": 8, "chips_per_channel": 4,
                    "dies_per_chip": 2, "planes_per_die": 2, "blocks_per_plane": 1000, "pages_per_block": 384,
                    "page_bytes": 16384
                },
                "slc": {
                    "enabled": enabled, "bits_per_cell": bits, "static_bytes": static_bytes,
                    "dynamic_max_bytes": 0, "read_ns": 60000, "program_ns": 900000
                }
            }
        })
    }

    const SLC_BLOCKS_OF_EVERY_PLANE: f64 = 128.0 * 128.0 * 16384.0;

    #[test]
    fn a_tlc_base_without_a_cache_gets_one_a_third_and_a_fifth_of_its_times() {
        // 0.6% of 1 TB is 22.4 SLC blocks a plane: 23.
        assert_eq!(
            for_base(&base(false, 3, 0, "page", 0.2)),
            [
                ("device.slc.static_bytes", 23.0 * SLC_BLOCKS_OF_EVERY_PLANE),
                ("device.slc.read_ns", 20000.0),
                ("device.slc.program_ns", 198000.0)
            ]
        );
        // SLC times of its own are kept.
        let mut own = base(false, 3, 0, "page", 0.2);
        own["device"]["slc"]["program_ns"] = json!(150000);
        assert_eq!(for_base(&own).len(), 2);
    }

    #[test]
    fn the_static_part_is_its_share_whatever_room_the_over_provisioning_has() {
        // 22.4 blocks a plane: 23, at 7% over-provisioning too (the drive then refuses the cache turned on
        // until the fit's over-provisioning makes room for it).
        let static_part = |overprovisioning| for_base(&base(false, 3, 0, "page", overprovisioning))[0];
        assert_eq!(static_part(0.07), ("device.slc.static_bytes", 23.0 * SLC_BLOCKS_OF_EVERY_PLANE));
        assert_eq!(static_part(0.07), static_part(0.3));
        // A drive so small that its share is less than a block a plane gets one block a plane.
        let mut small = base(false, 3, 0, "page", 0.2);
        small["capacity_bytes"] = json!(10_000_000_000u64);
        assert_eq!(for_base(&small)[0], ("device.slc.static_bytes", SLC_BLOCKS_OF_EVERY_PLANE));
    }

    #[test]
    fn a_base_with_a_cache_or_without_the_cells_for_one_gets_nothing() {
        assert!(for_base(&base(true, 3, 6_000_000_000, "page", 0.2)).is_empty());
        assert!(for_base(&base(false, 3, 6_000_000_000, "page", 0.2)).is_empty());
        assert!(for_base(&base(false, 1, 0, "page", 0.2)).is_empty());
        assert!(for_base(&base(false, 3, 0, "in-place", 0.2)).is_empty());
    }
}
