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
    let Some(entry) = find(list, &name) else {
        let unknown = format!("unknown {what} {}; expected one of {:?}", quoted(&name, QUOTED_CHARS), names(list));
        return Err((key, unknown));
    };
    let mut merged: toml::Table =
        entry.toml.parse().map_err(|e| (key.clone(), format!("built-in {what} {name} is broken: {e}")))?;
    let Some(toml::Value::Table(own)) = table.remove(section) else { unreachable!("checked above") };
    overlay(&mut merged, own);
    table.insert(section.into(), toml::Value::Table(merged));
    Ok(())
}
