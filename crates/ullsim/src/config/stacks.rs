//! Named host stacks: a set of `[host]` policy choices declared in data (`stacks/*.toml`), so a scenario can
//! say `host.stack = "selectisr"` instead of listing each key. The stack's keys are defaults: any key the
//! scenario (or `--set`) gives still overrides them. `ullsim stacks [NAME]` lists them with every setting.

use super::scenario::overlay;

/// A named stack.
pub struct Stack {
    pub name: &'static str,
    pub summary: &'static str,
    /// Its `[host]` keys, in TOML (without the `[host]` header), with the source of each in comments.
    pub toml: &'static str,
}

/// All stacks, in the order `ullsim stacks` lists them.
pub const STACKS: &[Stack] = &[
    Stack {
        name: "vanilla",
        summary: "Linux as shipped: no I/O scheduler, interrupts, CFS (FastResponse's baseline)",
        toml: include_str!("stacks/vanilla.toml"),
    },
    Stack {
        name: "selectisr",
        summary: "FlashShare's Select-ISR: critical I/O bypasses blk-mq and is polled, the rest interrupts",
        toml: include_str!("stacks/selectisr.toml"),
    },
    Stack {
        name: "fastresponse-b",
        summary: "FastResponse's B-Opt: LD scheduler (8 tokens), non-critical I/O split at 32 KB, critical bypass",
        toml: include_str!("stacks/fastresponse-b.toml"),
    },
    Stack {
        name: "fastresponse-bs",
        summary: "FastResponse's BS-Opt: B-Opt plus the CPU scheduler's critical wake-up",
        toml: include_str!("stacks/fastresponse-bs.toml"),
    },
];

/// The stack called `name`.
pub fn find(name: &str) -> Option<&'static Stack> {
    STACKS.iter().find(|s| s.name == name)
}

/// Names of every stack.
pub fn names() -> Vec<&'static str> {
    STACKS.iter().map(|s| s.name).collect()
}

/// If `[host]` names a stack, put the stack's keys under the scenario's own. Errors are `(key, what was
/// expected)`.
pub(super) fn merge_host_stack(table: &mut toml::Table) -> Result<(), (String, String)> {
    const KEY: &str = "host.stack";
    let Some(toml::Value::Table(host)) = table.get("host") else { return Ok(()) };
    let name = match host.get("stack") {
        None => return Ok(()),
        Some(toml::Value::String(s)) => s.clone(),
        Some(other) => {
            return Err((
                KEY.into(),
                format!("found a value of type {}, expected a stack name, one of {:?}", other.type_str(), names()),
            ))
        }
    };
    let Some(stack) = find(&name) else {
        return Err((KEY.into(), format!("unknown stack {name:?}; expected one of {:?}", names())));
    };
    let mut merged: toml::Table =
        stack.toml.parse().map_err(|e| (KEY.to_string(), format!("built-in stack {name} is broken: {e}")))?;
    let Some(toml::Value::Table(host)) = table.remove("host") else { unreachable!("checked above") };
    overlay(&mut merged, host);
    table.insert("host".into(), toml::Value::Table(merged));
    Ok(())
}
