//! Built-in device presets. Each is a complete `[device]` table in TOML whose comments give the source of
//! every value; `ullsim presets NAME` prints it as is.

use super::builtin::{self, BuiltIn};

/// A named device preset.
pub type Preset = BuiltIn;

/// All presets, in the order `ullsim presets` lists them.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "optane-ull",
        summary: "3D XPoint ULL SSD like Optane P4800X: ~10 us QD1 4 KB reads, in-place writes, no GC",
        toml: include_str!("presets/optane-ull.toml"),
    },
    Preset {
        name: "optane-900p",
        summary: "Optane SSD 900P 480 GB (FastResponse's drive): optane-ull with 2.5 GB/s reads and 480 GB",
        toml: include_str!("presets/optane-900p.toml"),
    },
    Preset {
        name: "znand-ull",
        summary: "Z-NAND ULL SSD as in FlashShare Table 2: 3/100/1000 us, 16 ch x 8 dies x 8 planes, 2 KB pages",
        toml: include_str!("presets/znand-ull.toml"),
    },
    Preset {
        name: "mqsim-mlc",
        summary: "MQSim's default ssdconfig.xml: 8 ch x 4 chips x 2 dies x 2 planes, MLC 75/750/3800 us, 512 GiB",
        toml: include_str!("presets/mqsim-mlc.toml"),
    },
    Preset {
        name: "mqsim-compat",
        summary: "mqsim-mlc plus MQSim's own behaviours: one die per chip, round-robin channels, same-page multi-plane",
        toml: include_str!("presets/mqsim-compat.toml"),
    },
    Preset {
        name: "tlc-enterprise",
        summary: "Generic enterprise TLC drive: 16 KiB pages, 60/900/4000 us, ONFI 1000 MT/s, 768 GiB",
        toml: include_str!("presets/tlc-enterprise.toml"),
    },
    Preset {
        name: "tlc-consumer",
        summary:
            "PCIe 4.0 consumer TLC drive like Samsung 980 PRO 1 TB: 7.0/5.0 GB/s, SLC cache 6+108 GB, 45/450 us TLC",
        toml: include_str!("presets/tlc-consumer.toml"),
    },
    Preset {
        name: "flin-eval",
        summary: "The SSD of FLIN's evaluation (Table 1): 8 ch x 4 dies x 2 planes, 75/1300/3800 us, 480 GB",
        toml: include_str!("presets/flin-eval.toml"),
    },
];

/// The preset called `name`.
pub fn find(name: &str) -> Option<&'static Preset> {
    builtin::find(PRESETS, name)
}

/// Names of all presets.
pub fn names() -> Vec<&'static str> {
    builtin::names(PRESETS)
}
