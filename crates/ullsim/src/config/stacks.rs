//! Named host stacks: a set of `[host]` policy choices declared in data (`stacks/*.toml`), so a scenario can
//! say `host.stack = "selectisr"` instead of listing each key. The stack's keys are defaults: any key the
//! scenario (or `--set`) gives still overrides them. `ullsim stacks [NAME]` lists them with every setting.
//!
//! A stack whose mechanisms reach into the drive's firmware (FlashShare's) also sets device keys, in its
//! `[device]` table: they go under the scenario's `[device]` keys and over its preset's, and likewise under
//! each drive table's keys and over its preset's (`[drives.nvmeN]`, `drive_tables.rs`): every drive runs
//! the stack's firmware policy.

use super::builtin::{self, BuiltIn};

/// A named stack.
pub type Stack = BuiltIn;

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
    Stack {
        name: "fastresponse",
        summary: "FastResponse's BSJ-Opt: BS-Opt plus file-level journaling for critical tasks' fsync",
        toml: include_str!("stacks/fastresponse.toml"),
    },
    Stack {
        name: "flashshare-cacheopt",
        summary: "FlashShare's CacheOpt: the SSD's read cache split between the classes, ghost-cache read-ahead",
        toml: include_str!("stacks/flashshare-cacheopt.toml"),
    },
    Stack {
        name: "flashshare-kernelopt",
        summary: "FlashShare's KernelOpt: CacheOpt plus critical bypass of blk-mq and an urgent SQ served first",
        toml: include_str!("stacks/flashshare-kernelopt.toml"),
    },
    Stack {
        name: "flashshare-selectisr",
        summary: "FlashShare's SelectISR: KernelOpt plus polling for critical completions, interrupts for the rest",
        toml: include_str!("stacks/flashshare-selectisr.toml"),
    },
    Stack {
        name: "flashshare-xler",
        summary: "FlashShare's XLER: SelectISR plus the I/O-stack accelerator for critical I/O (no blk-mq, no polling)",
        toml: include_str!("stacks/flashshare-xler.toml"),
    },
    Stack {
        name: "flashshare-dedcore",
        summary: "FlashShare's DedCore: KernelOpt plus a core dedicated to polling for critical I/O, waking its tasks",
        toml: include_str!("stacks/flashshare-dedcore.toml"),
    },
    Stack {
        name: "aios",
        summary: "AIOS: files opened O_AIOS: LBIO around blk-mq, reads overlapped with the device, async fsync",
        toml: include_str!("stacks/aios.toml"),
    },
];

/// The stack called `name`.
pub fn find(name: &str) -> Option<&'static Stack> {
    builtin::find(STACKS, name)
}

/// Names of every stack.
pub fn names() -> Vec<&'static str> {
    builtin::names(STACKS)
}

/// If `[host]` names a stack, put the stack's keys under the scenario's own. Returns the stack's firmware keys
/// (its `[device]`), which also go under each drive's own table (`[drives.nvmeN]`: the firmware policy of every
/// drive). Errors are `(key, what was expected)`.
pub(super) fn merge_host_stack(table: &mut toml::Table) -> Result<Option<toml::Table>, (String, String)> {
    builtin::merge_named(table, "host", "stack", STACKS, false)?;
    let Some(toml::Value::Table(host)) = table.get_mut("host") else { return Ok(None) };
    let Some(firmware) = host.remove("device") else { return Ok(None) };
    let toml::Value::Table(firmware) = firmware else {
        return Err(("host.device".into(), "expected a table of device keys (a stack's [device])".into()));
    };
    let mut device = firmware.clone();
    match table.remove("device") {
        Some(toml::Value::Table(own)) => super::scenario::overlay(&mut device, own),
        Some(other) => {
            table.insert("device".into(), other);
            return Ok(Some(firmware));
        }
        None => {}
    }
    table.insert("device".into(), toml::Value::Table(device));
    Ok(Some(firmware))
}
