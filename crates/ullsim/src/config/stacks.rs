//! Named host stacks: a set of `[host]` policy choices declared in data (`stacks/*.toml`), so a scenario can
//! say `host.stack = "selectisr"` instead of listing each key. The stack's keys are defaults: any key the
//! scenario (or `--set`) gives still overrides them. `ullsim stacks [NAME]` lists them with every setting.

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

/// If `[host]` names a stack, put the stack's keys under the scenario's own. Errors are `(key, what was
/// expected)`.
pub(super) fn merge_host_stack(table: &mut toml::Table) -> Result<(), (String, String)> {
    builtin::merge_named(table, "host", "stack", STACKS, false)
}
