//! The drives of a host: `device.count` drives named `nvme0`, `nvme1`, ... (Linux's names for the
//! namespaces of the first controllers), and lists of them (`flow.device`, `md.devices`). Each is the
//! scenario's `[device]` or its own `[drives.nvmeN]` (`drive_tables.rs`).

/// Most drives a scenario may have: each is a whole SSD model (its map, its dies, its queues), so memory grows
/// with the count. [inferred: dense NVMe servers hold 24 to 36 drives in front and up to ~48 with extra bays;
/// 64 covers them with room and keeps a mistyped count from building hundreds of drives.]
pub const MAX_DRIVES: u32 = 64;

/// `device.count` is within 1 to [`MAX_DRIVES`]; the error says what is expected.
pub fn check_count(count: u32) -> Result<(), String> {
    match (1..=MAX_DRIVES).contains(&count) {
        true => Ok(()),
        false => Err(format!("expected 1 to {MAX_DRIVES} drives (named nvme0, nvme1, ...)")),
    }
}

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

/// The drive a request goes to when it goes to the host's md volume (`flow.device = "md0"`): md maps it to the
/// members (`config::md`), so no one drive is its.
pub const MD_VOLUME: u32 = u32::MAX;

/// The drive named `name` among `count` drives, by index; the error says what the names are.
pub fn drive_index(name: &str, count: u32) -> Result<u32, String> {
    name.strip_prefix("nvme")
        .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .filter(|digits| digits.len() == 1 || !digits.starts_with('0'))
        .and_then(|digits| digits.parse::<u32>().ok())
        .filter(|&index| index < count)
        .ok_or_else(|| format!("expected the name of one of the host's drives, found {name:?}: {}", names(count)))
}

/// The drives of a colon-separated list like fio's `filename` ("nvme0:nvme2"), in its order, each once.
pub fn drive_list(list: &str, count: u32) -> Result<Vec<u32>, String> {
    let mut drives = Vec::new();
    for name in list.split(':') {
        let index = drive_index(name, count).map_err(|what| format!("in the list {list:?}: {what}"))?;
        if drives.contains(&index) {
            return Err(format!("{name:?} is listed twice in {list:?}: each drive may be listed once"));
        }
        drives.push(index);
    }
    Ok(drives)
}

/// What the host's drives are called, for messages.
pub fn names(count: u32) -> String {
    if count == 1 {
        "the only drive is \"nvme0\" (device.count = 1)".to_string()
    } else {
        format!("the drives are \"nvme0\" to \"{}\" (device.count = {count})", drive_name(count - 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_drive_draws_from_the_scenario_seed_and_each_other_from_its_own() {
        assert_eq!(drive_seed(7, 0), 7);
        let seeds: std::collections::BTreeSet<u64> = (0..MAX_DRIVES).map(|i| drive_seed(7, i)).collect();
        assert_eq!(seeds.len(), MAX_DRIVES as usize);
        assert_ne!(drive_seed(7, 1), drive_seed(8, 1));
    }

    #[test]
    fn names_resolve_to_indices_within_the_count() {
        assert_eq!(drive_index("nvme0", 1), Ok(0));
        assert_eq!(drive_index("nvme3", 4), Ok(3));
        assert_eq!(drive_index("nvme12", 13), Ok(12));
        for bad in ["nvme4", "nvme", "nvme01", "sda", "nvme-1", "nvme0n1", "NVME0", ""] {
            let message = drive_index(bad, 4).expect_err(bad);
            assert!(message.contains("\"nvme0\" to \"nvme3\" (device.count = 4)"), "{message}");
        }
        assert!(drive_index("nvme1", 1).unwrap_err().contains("the only drive is \"nvme0\""));
    }

    #[test]
    fn lists_keep_their_order_and_name_each_drive_once() {
        assert_eq!(drive_list("nvme0", 2), Ok(vec![0]));
        assert_eq!(drive_list("nvme3:nvme0:nvme1", 4), Ok(vec![3, 0, 1]));
        assert!(drive_list("nvme1:nvme2:nvme1", 4).unwrap_err().contains("\"nvme1\" is listed twice"));
        for bad in ["nvme0:nvme4", "nvme0:", ":nvme1", "nvme0::nvme1", "nvme0,nvme1"] {
            let message = drive_list(bad, 4).expect_err(bad);
            assert!(message.contains(&format!("in the list {bad:?}")), "{message}");
        }
    }
}
