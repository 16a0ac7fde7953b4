//! Built-in named tables of settings: device presets (`presets.rs`) and host stacks (`stacks.rs`). A scenario
//! names one in its section (`[device] preset`, `[host] stack`); the named table's values go under the
//! scenario's own, so any key the scenario or `--set` gives still overrides them.

use super::scenario::overlay;
use crate::util::quote::{quoted, QUOTED_CHARS};

/// One built-in table: its TOML (the section's keys, without the header) gives the source of every value.
pub struct BuiltIn {
    pub name: &'static str,
    pub summary: &'static str,
    pub toml: &'static str,
}

/// The entry of `list` called `name`.
pub fn find(list: &'static [BuiltIn], name: &str) -> Option<&'static BuiltIn> {
    list.iter().find(|b| b.name == name)
}

/// Names of every entry of `list`, in order.
pub fn names(list: &[BuiltIn]) -> Vec<&'static str> {
    list.iter().map(|b| b.name).collect()
}

/// For an entry with a base: the name of the base and every key of the entry with the base's merged in, as
/// TOML (what `ullsim presets NAME` and `ullsim stacks NAME` print below the entry's own text). `None` for an
/// entry without a base, whose own text already has every key.
pub fn with_base_text(list: &'static [BuiltIn], entry: &BuiltIn) -> Result<Option<(String, String)>, String> {
    let own: toml::Table = entry.toml.parse().map_err(|e| format!("{e}"))?;
    let Some(base) = own.get("base").and_then(|b| b.as_str()) else { return Ok(None) };
    let table = resolved(list, entry)?;
    Ok(Some((base.to_string(), toml::to_string(&table).map_err(|e| format!("{e}"))?)))
}

/// The table of `entry`: its TOML, over the TOML of the entry it names as `base = "NAME"` if it names one
/// (a variant of another entry lists only what differs). Bases do not chain.
pub fn resolved(list: &'static [BuiltIn], entry: &BuiltIn) -> Result<toml::Table, String> {
    let mut own: toml::Table = entry.toml.parse().map_err(|e| format!("{e}"))?;
    let Some(base) = own.remove("base") else { return Ok(own) };
    let base_name = base.as_str().ok_or("`base` is not a name")?;
    let base_entry = find(list, base_name).ok_or_else(|| format!("`base` names no entry \"{base_name}\""))?;
    let mut table: toml::Table = base_entry.toml.parse().map_err(|e| format!("{e}"))?;
    if table.contains_key("base") {
        return Err(format!("its base {base_name} has a base of its own (bases do not chain)"));
    }
    overlay(&mut table, own);
    Ok(table)
}

/// If `[section]` names an entry of `list` under `what` (e.g. `[device] preset`), replace the section with
/// that entry's values overlaid by the section's own. A `required` name must be there (and the section be a
/// table); otherwise a section without it is left as it is. Errors are `(key, what was expected)`.
pub(super) fn merge_named(
    table: &mut toml::Table,
    section: &str,
    what: &str,
    list: &'static [BuiltIn],
    required: bool,
) -> Result<(), (String, String)> {
    merge_named_or_file(table, section, what, list, required, None)
}

/// The table of the file a name that is a path names; errors say what is wrong with the file.
pub(super) type FileTable<'a> = dyn Fn(&str) -> Result<toml::Table, String> + 'a;

/// [`merge_named`], where a name that is a path (`preset_file::is_path`) is a file of the user's: `file`
/// gives its table (errors say what is wrong with it).
pub(super) fn merge_named_or_file(
    table: &mut toml::Table,
    section: &str,
    what: &str,
    list: &'static [BuiltIn],
    required: bool,
    file: Option<&FileTable<'_>>,
) -> Result<(), (String, String)> {
    let key = format!("{section}.{what}");
    let missing = || (key.clone(), format!("missing; expected one of {:?}", names(list)));
    let own = match table.get(section) {
        Some(toml::Value::Table(t)) => t,
        Some(_) if required => return Err((section.into(), format!("expected a table ([{section}])"))),
        None if required => return Err(missing()),
        _ => return Ok(()),
    };
    let name = match own.get(what) {
        Some(toml::Value::String(s)) => s.clone(),
        Some(other) => {
            let found = other.type_str();
            return Err((
                key,
                format!("found a value of type {found}, expected a {what} name, one of {:?}", names(list)),
            ));
        }
        None if required => return Err(missing()),
        None => return Ok(()),
    };
    let mut merged = match file.filter(|_| super::preset_file::is_path(&name)) {
        Some(file) => file(&name).map_err(|e| (key.clone(), e))?,
        None => {
            let Some(entry) = find(list, &name) else {
                let files = if file.is_some() { " or a file's path (with a / or ending in .toml)" } else { "" };
                let unknown =
                    format!("unknown {what} {}; expected one of {:?}{files}", quoted(&name, QUOTED_CHARS), names(list));
                return Err((key, unknown));
            };
            resolved(list, entry).map_err(|e| (key.clone(), format!("built-in {what} {name} is broken: {e}")))?
        }
    };
    let Some(toml::Value::Table(own)) = table.remove(section) else { unreachable!("checked above") };
    overlay(&mut merged, own);
    table.insert(section.into(), toml::Value::Table(merged));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIST: &[BuiltIn] = &[
        BuiltIn { name: "a", summary: "", toml: "[s]\nx = 1\ny = 2\n" },
        BuiltIn { name: "b", summary: "", toml: "base = \"a\"\n[s]\ny = 3\n" },
        BuiltIn { name: "c", summary: "", toml: "base = \"b\"\n" },
        BuiltIn { name: "d", summary: "", toml: "base = \"nope\"\n" },
    ];

    #[test]
    fn a_base_gives_every_key_the_entry_does_not_and_bases_do_not_chain() {
        let b = resolved(LIST, &LIST[1]).unwrap();
        assert_eq!(b.to_string(), "[s]\nx = 1\ny = 3\n");
        assert!(!b.contains_key("base"));
        assert!(resolved(LIST, &LIST[2]).unwrap_err().contains("do not chain"));
        assert!(resolved(LIST, &LIST[3]).unwrap_err().contains("\"nope\""));
        // Every built-in preset and stack resolves.
        for (list, entry) in super::super::presets::PRESETS
            .iter()
            .map(|p| (super::super::presets::PRESETS, p))
            .chain(super::super::stacks::STACKS.iter().map(|s| (super::super::stacks::STACKS, s)))
        {
            resolved(list, entry).unwrap_or_else(|e| panic!("{}: {e}", entry.name));
        }
    }
}
