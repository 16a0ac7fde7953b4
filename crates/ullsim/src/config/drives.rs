//! The drives of a host: `device.count` identical drives named `nvme0`, `nvme1`, ... (Linux's names for the
//! namespaces of the first controllers), and the drive each flow's I/O goes to (`flow.device`).

use super::scenario::FlowSpec;

/// Most drives a scenario may have: each is a whole SSD model (its map, its dies, its queues), so memory grows
/// with the count. [inferred: dense NVMe servers hold 24 to 36 drives in front and up to ~48 with extra bays;
/// 64 covers them with room and keeps a mistyped count from building hundreds of drives.]
pub const MAX_DRIVES: u32 = 64;

/// The name of drive `index`: `nvme0`, `nvme1`, ...
pub fn drive_name(index: u32) -> String {
    format!("nvme{index}")
}

/// The seed of drive `index`'s random streams (`device:ftl`, `device:gc`, ...): the first drive draws from the
/// scenario's seed, as a host's only drive does, so adding drives changes nothing on it; each other drive from a
/// stream of its own, keyed by its name.
pub fn drive_seed(scenario_seed: u64, index: u32) -> u64 {
    match index {
        0 => scenario_seed,
        _ => crate::engine::stream_seed(scenario_seed, &format!("drive:{}", drive_name(index))),
    }
}

/// The drive a flow's I/O goes to, by index: its `device` (default `nvme0`) among `count` drives; the error
/// says what the key accepts.
pub fn drive_of(flow: &FlowSpec, count: u32) -> Result<u32, String> {
    let Some(name) = &flow.device else { return Ok(0) };
    name.strip_prefix("nvme")
        .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .filter(|digits| digits.len() == 1 || !digits.starts_with('0'))
        .and_then(|digits| digits.parse::<u32>().ok())
        .filter(|&index| index < count)
        .ok_or_else(|| {
            let names = if count == 1 {
                "the only drive is \"nvme0\" (device.count = 1)".to_string()
            } else {
                format!("the drives are \"nvme0\" to \"{}\" (device.count = {count})", drive_name(count - 1))
            };
            format!("expected the name of one of the host's drives, found {name:?}: {names}")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(device: Option<&str>) -> FlowSpec {
        FlowSpec { name: "f".into(), device: device.map(String::from), ..FlowSpec::default() }
    }

    #[test]
    fn the_first_drive_draws_from_the_scenario_seed_and_each_other_from_its_own() {
        assert_eq!(drive_seed(7, 0), 7);
        let seeds: std::collections::BTreeSet<u64> = (0..MAX_DRIVES).map(|i| drive_seed(7, i)).collect();
        assert_eq!(seeds.len(), MAX_DRIVES as usize);
        assert_ne!(drive_seed(7, 1), drive_seed(8, 1));
    }

    #[test]
    fn names_resolve_to_indices_within_the_count() {
        assert_eq!(drive_of(&flow(None), 1), Ok(0));
        assert_eq!(drive_of(&flow(Some("nvme0")), 1), Ok(0));
        assert_eq!(drive_of(&flow(Some("nvme3")), 4), Ok(3));
        assert_eq!(drive_of(&flow(Some("nvme12")), 13), Ok(12));
        for bad in ["nvme4", "nvme", "nvme01", "sda", "nvme-1", "nvme0n1", "NVME0", ""] {
            let message = drive_of(&flow(Some(bad)), 4).expect_err(bad);
            assert!(message.contains("\"nvme0\" to \"nvme3\" (device.count = 4)"), "{message}");
        }
        assert!(drive_of(&flow(Some("nvme1")), 1).unwrap_err().contains("the only drive is \"nvme0\""));
    }
}
