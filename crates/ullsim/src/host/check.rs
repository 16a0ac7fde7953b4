//! The host section's checks that need the host's own registries: each policy's name is checked by the
//! registry that owns it.

use crate::config::host::HostConfig;

/// `host.cpu_scheduler`, `host.io_scheduler` and `host.completion` name registered policies; errors are
/// `(key under host., what was expected)`.
pub fn check_policy_names(host: &HostConfig) -> Result<(), (String, String)> {
    for (key, name, names) in [
        ("cpu_scheduler", &host.cpu_scheduler, super::cpu::scheduler_names()),
        ("io_scheduler", &host.io_scheduler, super::block::sched::names()),
        ("completion", &host.completion, super::completion::names()),
    ] {
        if !names.contains(&name.as_str()) {
            return Err((key.to_string(), format!("unknown {name:?}; expected one of {names:?}")));
        }
    }
    Ok(())
}
