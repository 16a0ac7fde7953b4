//! User preset files: `device.preset = "drives/mine.toml"` names a TOML file of `[device]` keys written as
//! the built-in presets are (`presets/*.toml`: the section's keys without the `[device]` header), e.g. the
//! output of `ullsim calibrate`. A file may start from another preset, `base = "NAME"`: a built-in name or
//! the path of another file (relative to the file naming it); unlike the built-ins' bases, files chain.
//!
//! Which is which: a value with a `/` in it or ending in `.toml` is a path, anything else a built-in name.

use std::path::{Path, PathBuf};

use super::device::DeviceConfig;
use super::presets;
use super::scenario::overlay;
use crate::util::quote::{quoted, QUOTED_CHARS};

/// Largest preset file read: a preset is a few KiB of TOML; a wrong path (a device, a trace) is not read whole.
const MAX_PRESET_FILE_BYTES: u64 = 1 << 20;

/// Whether `value` of `device.preset` (or of a file's `base`) names a file rather than a built-in preset.
pub fn is_path(value: &str) -> bool {
    value.contains('/') || value.ends_with(".toml")
}

/// One preset file found by [`list`]: its name (the file's stem), path and summary (its first comment line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresetFile {
    pub name: String,
    pub path: PathBuf,
    pub summary: String,
}

/// The `.toml` files of directory `dir`, by name. Errors name the directory.
pub fn list(dir: &Path) -> Result<Vec<PresetFile>, String> {
    let cannot = |e: std::io::Error| format!("{}: cannot list preset files: {e}", dir.display());
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(cannot)? {
        let path = entry.map_err(cannot)?.path();
        if path.extension().is_none_or(|e| e != "toml") || !path.is_file() {
            continue;
        }
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let summary = summary(&read(&path)?);
        files.push(PresetFile { name, path, summary });
    }
    files.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(files)
}

/// A file's summary: its first comment line, without the `#`.
fn summary(text: &str) -> String {
    let first = text.lines().map(str::trim).find(|l| l.starts_with('#'));
    first.map(|l| l.trim_start_matches('#').trim().to_string()).unwrap_or_default()
}

/// The text of the preset file at `path`. Errors say the path and why it cannot be read.
pub fn read(path: &Path) -> Result<String, String> {
    let cannot = |e: &dyn std::fmt::Display| format!("cannot read preset file {}: {e}", path.display());
    let metadata = std::fs::metadata(path).map_err(|e| cannot(&e))?;
    if metadata.is_dir() {
        return Err(cannot(&"is a directory; expected a TOML file of [device] keys"));
    }
    if metadata.len() > MAX_PRESET_FILE_BYTES {
        return Err(cannot(&format!("{} bytes; a preset file is at most {MAX_PRESET_FILE_BYTES}", metadata.len())));
    }
    let bytes = std::fs::read(path).map_err(|e| cannot(&e))?;
    String::from_utf8(bytes).map_err(|_| cannot(&"not UTF-8 text (is this a TOML file?)"))
}

/// Replace `table`'s `[device]` with its preset's table (a built-in's, or a file's relative to `dir`)
/// overlaid by its own keys. Errors are `(key, what was expected)`.
pub(super) fn merge_device_preset(table: &mut toml::Table, dir: &Path) -> Result<(), (String, String)> {
    let file = |name: &str| resolve(&dir.join(name));
    super::builtin::merge_named_or_file(table, "device", "preset", presets::PRESETS, true, Some(&file))
}

/// For a file with a base: the base as the file names it and every key of the file with its bases' merged
/// in, as TOML (what `ullsim presets --path DIR NAME` prints below the file's own text).
pub fn with_base_text(path: &Path) -> Result<Option<(String, String)>, String> {
    let own: toml::Table = read(path)?.parse().map_err(|e: toml::de::Error| invalid_toml(path, &e))?;
    let Some(base) = own.get("base").and_then(|b| b.as_str()) else { return Ok(None) };
    let table = resolve(path)?;
    Ok(Some((base.to_string(), toml::to_string(&table).map_err(|e| format!("{e}"))?)))
}

fn invalid_toml(path: &Path, error: &toml::de::Error) -> String {
    format!("preset file {}: invalid TOML: {}", path.display(), error.message().trim())
}

/// Every key of the preset file at `path`: its own over its bases'. Each file's keys are checked against
/// `[device]`'s (names and types); errors name the file and the key, a missing file the path tried, and a
/// chain of bases that comes back to a file already in it.
pub fn resolve(path: &Path) -> Result<toml::Table, String> {
    resolve_chain(path, &mut Vec::new())
}

fn resolve_chain(path: &Path, chain: &mut Vec<PathBuf>) -> Result<toml::Table, String> {
    let text = read(path)?;
    // The same file by another spelling (`./a.toml`, `../d/a.toml`) is the same link of the chain.
    let identity = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if let Some(first) = chain.iter().position(|p| *p == identity) {
        let cycle: Vec<String> = chain[first..].iter().chain([&identity]).map(|p| p.display().to_string()).collect();
        return Err(format!("preset files name each other as base in a cycle: {}", cycle.join(" -> ")));
    }
    chain.push(identity);
    let in_file = |what: String| format!("preset file {}: {what}", path.display());
    let mut own: toml::Table = text.parse().map_err(|e: toml::de::Error| invalid_toml(path, &e))?;
    if own.contains_key("preset") {
        let what = "key `preset`: a preset file does not name a preset; start it from one with base = \"NAME\"";
        return Err(in_file(what.into()));
    }
    let base = own.remove("base");
    check_keys(&own, base.is_none()).map_err(in_file)?;
    let mut table = match base {
        None => toml::Table::new(),
        Some(toml::Value::String(base)) if is_path(&base) => {
            let dir = path.parent().unwrap_or(Path::new(""));
            resolve_chain(&dir.join(&base), chain).map_err(|e| in_file(format!("key `base`: {e}")))?
        }
        Some(toml::Value::String(base)) => builtin(&base).map_err(|e| in_file(format!("key `base`: {e}")))?,
        Some(other) => {
            let what = format!(
                "key `base`: found a value of type {}, expected a built-in preset name or a preset file's path",
                other.type_str()
            );
            return Err(in_file(what));
        }
    };
    overlay(&mut table, own);
    Ok(table)
}

/// The table of the built-in preset `name`, with its base's.
fn builtin(name: &str) -> Result<toml::Table, String> {
    let Some(entry) = presets::find(name) else {
        return Err(format!(
            "unknown preset {}; expected one of {:?} or a preset file's path (with a / or ending in .toml)",
            quoted(name, QUOTED_CHARS),
            presets::names()
        ));
    };
    super::builtin::resolved(presets::PRESETS, entry).map_err(|e| format!("built-in preset {name} is broken: {e}"))
}

/// The keys of `own` are `[device]` keys of the right types: read as `[device]`, over a complete built-in
/// preset's table (any one: it only fills what a file with a base leaves out) unless `complete`, as a file
/// without a base must be (as a built-in preset is). Errors name the key.
fn check_keys(own: &toml::Table, complete: bool) -> Result<(), String> {
    let mut table = if complete { toml::Table::new() } else { builtin(presets::PRESETS[0].name)? };
    overlay(&mut table, own.clone());
    table.insert("preset".into(), toml::Value::String(String::new()));
    serde_path_to_error::deserialize::<_, DeviceConfig>(toml::Value::Table(table)).map(|_| ()).map_err(|e| {
        let key = e.path().to_string();
        let what = super::scenario::plain_expectation(&format!("device.{key}"), e.into_inner().message().trim());
        let what = match key.as_str() {
            "" | "." => what,
            _ => format!("key `{key}`: {what}"),
        };
        match complete && what.contains("missing field") {
            true => format!("{what} (a preset file without `base` gives every key, as a built-in preset does)"),
            false => what,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_have_a_slash_or_end_in_toml() {
        assert!(is_path("./mine.toml"));
        assert!(is_path("mine.toml"));
        assert!(is_path("drives/mine"));
        assert!(!is_path("optane-ull"));
    }

    #[test]
    fn the_summary_is_the_first_comment_line() {
        assert_eq!(summary("\n# mine: a drive\n# more\nbase = \"optane-ull\"\n"), "mine: a drive");
        assert_eq!(summary("base = \"optane-ull\"\n"), "");
    }
}
