//! Named host platforms: the machine a paper's evaluation ran on (cores, sockets, memory, or no host at all),
//! declared in data (`platforms/*.toml`) with the paper's words beside every value, so a scenario can say
//! `host.platform = "fastresponse22-inspur"`. The platform's keys go under the host stack's and the
//! scenario's own: any `[host]` key the scenario, its stack or `--set` gives still overrides them. A
//! platform states facts of the machine, and per-layer CPU costs only where they are fitted to its paper's
//! baseline (marked `calibrated from baseline:`). `ullsim platforms [NAME]` lists them with every setting.

use super::builtin::{self, BuiltIn};

/// A named platform.
pub type Platform = BuiltIn;

/// All platforms, in the order `ullsim platforms` lists them.
pub const PLATFORMS: &[Platform] = &[
    Platform {
        name: "hotstorage23-xeon",
        summary: "HotStorage'23's Dell R230: Xeon E3-1230, 4 cores at 3.4 GHz, 64 GB, Linux 5.18 (the defaults)",
        toml: include_str!("platforms/hotstorage23-xeon.toml"),
    },
    Platform {
        name: "fastresponse22-inspur",
        summary: "FastResponse's Inspur server: 2 x 8-core Xeon E5-2630 v3 at 2.4 GHz, 32 GB, Linux 5.3.7",
        toml: include_str!("platforms/fastresponse22-inspur.toml"),
    },
    Platform {
        name: "flashshare18-gem5",
        summary: "FlashShare's gem5 machine: 8 ARM cores at 2 GHz, 64 KB private L1s, 2 GB, Linux 4.9.30",
        toml: include_str!("platforms/flashshare18-gem5.toml"),
    },
    Platform {
        name: "flin18-mqsim",
        summary: "FLIN's MQSim: the SSD alone behind its host interface, no host stack (device-only)",
        toml: include_str!("platforms/flin18-mqsim.toml"),
    },
];

/// If `[host]` names a platform, put the platform's keys under the section's own (the stack's are merged
/// already, so they too win). Errors are `(key, what was expected)`.
pub(super) fn merge_platform(table: &mut toml::Table) -> Result<(), (String, String)> {
    builtin::merge_named(table, "host", "platform", PLATFORMS, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Scenario;

    fn load(extra: &str) -> Result<Scenario, String> {
        let text = format!("{extra}\n[device]\npreset = \"optane-ull\"\n[[flow]]\nname = \"r\"\nrw = \"randread\"\n");
        Scenario::from_toml_str(&text, "t", std::path::Path::new("."), &[]).map_err(|e| e.to_string())
    }

    #[test]
    fn every_platform_loads_and_sets_its_machine() {
        for p in PLATFORMS {
            let s = load(&format!("[host]\nplatform = \"{}\"", p.name)).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert_eq!(s.host.platform.as_deref(), Some(p.name));
        }
        let fr = load("[host]\nplatform = \"fastresponse22-inspur\"").unwrap();
        assert_eq!((fr.host.cores, fr.host.cpu.cores_per_cache_group, fr.host.fs.memory_bytes.0), (16, 8, 32 << 30));
        let gem5 = load("[host]\nplatform = \"flashshare18-gem5\"").unwrap();
        assert_eq!((gem5.host.cores, gem5.host.cpu.cache_bytes.0, gem5.host.fs.memory_bytes.0), (8, 64 << 10, 2 << 30));
        let mqsim = load("[host]\nplatform = \"flin18-mqsim\"").unwrap();
        assert_eq!(mqsim.host.model, crate::config::host::HostModel::DeviceOnly);
        // The default host is HotStorage'23's machine: naming it changes nothing but the name.
        let (xeon, none) = (load("[host]\nplatform = \"hotstorage23-xeon\"").unwrap(), load("").unwrap());
        assert_eq!(
            (xeon.host.cores, xeon.host.cpu.cores_per_cache_group, xeon.host.fs.memory_bytes.0),
            (none.host.cores, none.host.cpu.cores_per_cache_group, none.host.fs.memory_bytes.0)
        );
        assert_eq!(none.host.platform, None);
    }

    #[test]
    fn the_scenario_and_its_stack_override_the_platform() {
        let s = load("[host]\nplatform = \"fastresponse22-inspur\"\ncores = 6\nstack = \"fastresponse\"").unwrap();
        assert_eq!(s.host.cores, 6, "the scenario's own key wins");
        assert_eq!(s.host.io_scheduler, "ld", "the stack's keys still apply");
        assert_eq!(s.host.fs.memory_bytes.0, 32 << 30, "the platform's other keys stay");
    }

    #[test]
    fn an_unknown_platform_is_an_error_naming_the_known_ones() {
        let e = load("[host]\nplatform = \"cray-1\"").unwrap_err();
        assert!(e.contains("host.platform") && e.contains("\"cray-1\"") && e.contains("flin18-mqsim"), "{e}");
        let e = load("[host]\nplatform = 3").unwrap_err();
        assert!(e.contains("host.platform") && e.contains("platform name"), "{e}");
    }
}
