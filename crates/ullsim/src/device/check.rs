//! A drive's configuration checks that need the device's own code: each policy's name is checked by the
//! registry that owns it, and the room garbage collection needs by the FTL's own thresholds.

use crate::config::device::{DeviceConfig, MappingKind};

use super::flash::Geometry;
use super::ftl::FreeBlockThresholds;

/// Every problem found, as `(key, what was expected)` with keys under `device.` (`device.tsu.scheduler`).
pub fn check_config(cfg: &DeviceConfig) -> Vec<(String, String)> {
    let mut errors = Vec::new();
    let read_policies = super::cache::read_policy_names();
    for (key, name, names) in [
        ("cache.read_policy", &cfg.cache.read_policy, read_policies.as_slice()),
        ("host_interface.arbiter", &cfg.host_interface.arbiter, super::hil::arbiter_names()),
        ("tsu.scheduler", &cfg.tsu.scheduler, super::tsu::scheduler_names()),
        ("ftl.gc_policy", &cfg.ftl.gc_policy, super::ftl::gc_policy_names()),
    ] {
        if !names.contains(&name.as_str()) {
            errors.push((format!("device.{key}"), format!("expected one of {names:?}")));
        }
    }
    // The whole logical space must fit beside GC's free-block reserve and an open block in every plane, or a
    // full drive could never reclaim space.
    if cfg.ftl.mapping == MappingKind::Page && cfg.units_fit_in_32_bits() {
        let thresholds = FreeBlockThresholds::of(cfg);
        let per_plane = cfg.logical_pages().div_ceil(Geometry::of(cfg).planes().max(1) as u64);
        if !thresholds.room_for(cfg, per_plane) {
            let slc = thresholds.slc_static > 0;
            errors.push((
                "device.ftl.overprovisioning".to_string(),
                format!(
                    "impossible: over-provisioning of {} leaves fewer spare blocks per plane than garbage collection \
                     keeps free ({} blocks from gc_threshold, plus two open blocks{}); raise overprovisioning or lower \
                     gc_threshold{}",
                    cfg.ftl.overprovisioning,
                    thresholds.soft,
                    if slc {
                        format!(", plus {} for the SLC cache's static part", thresholds.slc_static)
                    } else {
                        String::new()
                    },
                    if slc { " or device.slc.static_bytes" } else { "" },
                ),
            ));
        }
    }
    errors
}
