//! `[drives.nvmeN]`: a drive's own device table, for a host whose drives differ (issue 31: each drive its own
//! preset or keys). A drive table takes the keys of `[device]` but `count`. With `preset` it starts from that
//! preset's table, then the host stack's firmware keys (as `[device]` does), then its own keys; without, from
//! the scenario's merged `[device]` (preset, stack, file, `--set`), then its own keys. Drives without a table
//! are the scenario's `[device]`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::device::DeviceConfig;
use super::drives::{check_count, drive_index, names};
use crate::util::quote::{quoted, QUOTED_CHARS};

/// The drives' own configurations, and the `[device]` the others are.
#[derive(Debug, Clone, Default)]
pub struct DriveTables {
    /// The scenario's `[device]`, when some drive has a table (else `Scenario::device` is every drive's).
    base: Option<DeviceConfig>,
    /// Each drive with a table of its own, by index: its configuration.
    own: BTreeMap<u32, DeviceConfig>,
}

impl DriveTables {
    /// No drive has a table of its own.
    pub fn is_empty(&self) -> bool {
        self.own.is_empty()
    }

    /// The configuration of drive `index`: its own, or else the scenario's `[device]` (`base`, when set;
    /// `device` otherwise, as then every drive is the scenario's `[device]`).
    pub fn config<'a>(&'a self, index: u32, device: &'a DeviceConfig) -> &'a DeviceConfig {
        self.own.get(&index).or(self.base.as_ref()).unwrap_or(device)
    }

    /// The scenario's `[device]`, and each drive table's configuration with the key its errors start with
    /// (`drives.nvme1`), for validation.
    pub fn to_check<'a>(&'a self, device: &'a DeviceConfig) -> Vec<(String, &'a DeviceConfig)> {
        let mut all = vec![("device".to_string(), self.base.as_ref().unwrap_or(device))];
        all.extend(self.own.iter().map(|(&i, cfg)| (key_of(i), cfg)));
        all
    }
}

/// `[drives]` taken out of a scenario's table before the rest is read: each drive's table, and what they start
/// from.
pub(super) struct RawDriveTables {
    tables: toml::Table,
    /// The scenario's merged `[device]` table (preset, stack, file, `--set`).
    device: toml::Table,
    /// The host stack's firmware keys (its `[device]`), if it has any.
    firmware: Option<toml::Table>,
}

/// Take `[drives]` out of the scenario's `table`, once the stack and the preset are merged into `[device]`.
/// `None` without drive tables (an empty `[drives]` is none). Errors are `(key, what was expected)`.
pub(super) fn take(
    table: &mut toml::Table,
    firmware: Option<toml::Table>,
) -> Result<Option<RawDriveTables>, (String, String)> {
    let tables = match table.remove("drives") {
        None => return Ok(None),
        Some(toml::Value::Table(tables)) if tables.is_empty() => return Ok(None),
        Some(toml::Value::Table(tables)) => tables,
        Some(other) => {
            let found = other.type_str();
            return Err((
                "drives".into(),
                format!("expected a table of drive tables ([drives.nvme1] with keys of [device]), found a value of type {found}"),
            ));
        }
    };
    // A `[device]` that is no table is serde's error when the scenario is read.
    let device = match table.get("device") {
        Some(toml::Value::Table(device)) => device.clone(),
        _ => toml::Table::new(),
    };
    Ok(Some(RawDriveTables { tables, device, firmware }))
}

/// Each drive table of `raw` merged and read, on a host of `count` drives with `base` its `[device]`.
/// `preset_dir` gives the directory a drive table's preset file is relative to, by the key that names it
/// (`drives.nvme1.preset`). `plain` says serde's message about a key as what the key accepts. Errors are
/// `(key, what was expected)`.
pub(super) fn build(
    raw: RawDriveTables,
    base: &DeviceConfig,
    preset_dir: &dyn Fn(&str) -> PathBuf,
    plain: impl Fn(&str, &str) -> String,
) -> Result<DriveTables, (String, String)> {
    let count = base.count;
    check_count(count).map_err(|what| ("device.count".to_string(), what))?;
    let mut own = BTreeMap::new();
    let RawDriveTables { tables, device, firmware } = raw;
    for (name, table) in tables {
        let index = drive_index(&name, count).map_err(|_| {
            let what = format!(
                "the host has no drive {}: {}; a drive table is [drives.NAME] for one of them",
                quoted(&name, QUOTED_CHARS),
                names(count)
            );
            (format!("drives.{name}"), what)
        })?;
        let key = key_of(index);
        let toml::Value::Table(table) = table else {
            return Err((key, "expected a table of device keys ([drives.nvmeN] takes the keys of [device])".into()));
        };
        if table.contains_key("count") {
            return Err((
                format!("{key}.count"),
                "a drive table describes one drive: the host's drives are counted in device.count".into(),
            ));
        }
        let dir = preset_dir(&format!("drives.{name}.preset"));
        let merged =
            merged_table(table, &device, firmware.as_ref(), &dir).map_err(|(k, what)| (rekey(&k, &key), what))?;
        let mut config: DeviceConfig = serde_path_to_error::deserialize(toml::Value::Table(merged)).map_err(|e| {
            let path = e.path().to_string();
            let at = if path.is_empty() || path == "." { key.clone() } else { format!("{key}.{path}") };
            let what = plain(&at, e.into_inner().message().trim());
            (at, what)
        })?;
        config.count = count;
        own.insert(index, config);
    }
    Ok(DriveTables { base: Some(base.clone()), own })
}

/// A drive table over what it starts from: its preset's table (a preset file's relative to `dir`) under the
/// stack's firmware keys, or the scenario's `[device]`. Errors name keys under `device` (a preset's are
/// `merge_named`'s).
fn merged_table(
    own: toml::Table,
    device: &toml::Table,
    firmware: Option<&toml::Table>,
    dir: &Path,
) -> Result<toml::Table, (String, String)> {
    if !own.contains_key("preset") {
        let mut merged = device.clone();
        super::scenario::overlay(&mut merged, own);
        return Ok(merged);
    }
    // As the scenario's own `[device]`: the stack's firmware under the table's keys, the preset under both.
    let mut device = firmware.cloned().unwrap_or_default();
    super::scenario::overlay(&mut device, own);
    let mut table = toml::Table::from_iter([("device".to_string(), toml::Value::Table(device))]);
    super::preset_file::merge_device_preset(&mut table, dir)?;
    match table.remove("device") {
        Some(toml::Value::Table(merged)) => Ok(merged),
        _ => unreachable!("merge_named leaves a [device] table"),
    }
}

/// The key drive `index`'s table is named by: `drives.nvme1`.
fn key_of(index: u32) -> String {
    format!("drives.{}", super::drives::drive_name(index))
}

/// A key under `device` (`device.preset`) as the same key of the drive table `table` (`drives.nvme1.preset`).
pub fn rekey(key: &str, table: &str) -> String {
    match key.strip_prefix("device") {
        Some(rest) if rest.is_empty() || rest.starts_with('.') => format!("{table}{rest}"),
        _ => key.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_keys_become_the_drive_tables_keys() {
        assert_eq!(rekey("device.preset", "drives.nvme1"), "drives.nvme1.preset");
        assert_eq!(rekey("device.flash.channels", "drives.nvme3"), "drives.nvme3.flash.channels");
        assert_eq!(rekey("device", "drives.nvme1"), "drives.nvme1");
        assert_eq!(rekey("devices", "drives.nvme1"), "devices");
    }
}
