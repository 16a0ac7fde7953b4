//! What errors about a key's value say: the key, and what the key accepts (not what its Rust type holds); names
//! printed as labels hold no control characters.

use std::path::Path;

use ullsim::config::presets::PRESETS;
use ullsim::config::scenario::FLOW_KEYS;
use ullsim::Scenario;

/// A small drive (short loads) and 100 ms of run.
const SMALL_DRIVE: &str = "[run]\nduration = \"100ms\"\n[device]\npreset = \"mqsim-mlc\"\n[device.flash]\n\
                           blocks_per_plane = 64\npages_per_block = 64\n[device.ftl]\noverprovisioning = 0.15\n";

/// The small drive with one flow, "r", of `keys`.
fn one_flow(keys: &str) -> String {
    format!("{SMALL_DRIVE}[[flow]]\nname = \"r\"\n{keys}\n")
}

/// The bases keys are tried on: one I/O flow (most keys), one that only burns CPU (`cpuload`), one through the
/// page cache (`nrfiles`, `fsync`).
fn bases() -> [String; 3] {
    [
        one_flow("rw = \"randrw\""),
        one_flow("ioengine = \"cpuio\""),
        one_flow("rw = \"randwrite\"\nioengine = \"psync\"\ndirect = 0"),
    ]
}

/// Every key a scenario can set, as `--set` names it (`flow.r.iodepth`) and as errors name it
/// (`flow[0].iodepth`); each device key also in a drive table (`drives.nvme0.flash.channels`).
fn keys() -> Vec<(String, String)> {
    let mut keys = Vec::new();
    let preset: toml::Table = PRESETS[0].toml.parse().unwrap();
    for (section, table) in &preset {
        for key in table.as_table().unwrap().keys() {
            keys.push(format!("device.{section}.{key}"));
            // A drive table takes the same keys, and says the same of them.
            keys.push(format!("drives.nvme0.{section}.{key}"));
        }
    }
    keys.extend(ullsim::config::HostConfig::keys());
    keys.extend(
        ["seed", "run.duration", "run.warmup", "metrics.timeseries_interval", "device.count", "md.level"]
            .map(String::from),
    );
    let mut keys: Vec<(String, String)> = keys.into_iter().map(|k| (k.clone(), k)).collect();
    keys.extend(FLOW_KEYS.iter().map(|k| (format!("flow.r.{k}"), format!("flow[0].{k}"))));
    keys
}

/// Load `base` with `key=value`: `Ok` if it loads, else the key the error names (`None` for none) and the
/// message.
fn load(base: &str, key: &str, value: &str) -> Result<(), (Option<String>, String)> {
    Scenario::from_toml_str(base, "s.toml", Path::new("."), &[format!("{key}={value}")])
        .map(drop)
        .map_err(|e| (e.key.clone(), e.to_string()))
}

/// `A` and `B` of the first "from A to B" of `message`, if it has one with whole numbers.
fn quoted_range(message: &str) -> Option<(u64, u64)> {
    let (_, rest) = message.split_once(" from ")?;
    let (low, rest) = rest.split_once(" to ")?;
    let high: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some((low.parse().ok()?, high.parse().ok()?))
}

/// A type error at a whole-number key (`iodepth = "x"`, `iodepth = -1`) quotes the range the key accepts: its
/// ends load, and one past either end is an error at the key. So a key whose checks narrow its type's range
/// (iodepth: 1 to 65536, not 0 to 4294967295) must say so in its type errors too.
#[test]
fn a_type_error_at_a_whole_number_key_quotes_the_range_the_key_accepts() {
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (set, key) in keys() {
        for base in &bases() {
            let Err((_, message)) = load(base, &set, "\"x\"") else { continue };
            let Some((low, high)) = quoted_range(&message) else { continue };
            // A key that takes no value in this base (cpuload beside I/O) is tried in the other.
            let applies = [low, high, low + 1, 1, 2, 4, 16, 64, 100, 1024]
                .iter()
                .any(|v| load(base, &set, &v.to_string()).is_ok());
            if !applies {
                continue;
            }
            checked += 1;
            let rejected_at_key = |v: u64| matches!(load(base, &set, &v.to_string()), Err((Some(k), _)) if k == key);
            for end in [low, high] {
                if rejected_at_key(end) {
                    wrong.push(format!("{key}: a type error says {message:?}, but {end} is an error at the key"));
                }
            }
            for past in [low.checked_sub(1), high.checked_add(1)].into_iter().flatten() {
                if load(base, &set, &past.to_string()).is_ok() {
                    wrong.push(format!("{key}: a type error says {message:?}, but {past} loads"));
                }
            }
            // A number that does not fit the type says the same.
            if let Err((_, out_of_type)) = load(base, &set, "-1") {
                if !out_of_type.contains(&format!("from {low} to {high}")) {
                    wrong.push(format!("{key}: -1 says {out_of_type:?}, not the range {low} to {high}"));
                }
            }
            break;
        }
    }
    assert!(checked > 40, "only {checked} whole-number keys checked");
    assert!(wrong.is_empty(), "{} keys:\n{}", wrong.len(), wrong.join("\n"));
    for value in ["\"x\"", "-1", "4294967296", "1.5"] {
        let Err((key, message)) = load(&bases()[0], "flow.r.iodepth", value) else { panic!("iodepth = {value} loads") };
        assert_eq!(key.as_deref(), Some("flow[0].iodepth"));
        assert!(message.ends_with("expected a whole number from 1 to 65536"), "{message}");
    }
}

/// A name the results print as a label (the scenario's in the table's title, a flow's at the start of its rows)
/// with a control character in it is an error at load naming the key, with the name shown escaped.
#[test]
fn control_characters_in_names_are_errors_naming_the_key() {
    let io_flow = one_flow("rw = \"randread\"");
    let bursts = io_flow.replace("rw = ", "rate_iops = 1000\nrate_process = \"onoff\"\nburst_factor = 2\nrw = ");
    for bad in ["a\u{1b}[31mb", "a\nb", "a\tb", "nul\0", "del\u{7f}", "c1\u{9b}", "a\rb"] {
        // TOML's basic strings write every control character as an escape.
        let toml_string = toml::Value::String(bad.to_owned()).to_string();
        let escaped = format!("{bad:?}");
        for (text, set, key) in [
            (&io_flow, "name", "name"),
            (&io_flow, "flow.r.name", "flow[0].name"),
            (&bursts, "flow.r.burst_group", "flow[0].burst_group"),
        ] {
            let set = format!("{set}={toml_string}");
            let error = Scenario::from_toml_str(text, "s.toml", Path::new("."), std::slice::from_ref(&set))
                .expect_err(&format!("{set} loads"));
            let message = error.to_string();
            assert_eq!(error.key.as_deref(), Some(key), "{message}");
            assert!(message.contains("without control characters") && message.contains(&escaped), "{message}");
            assert!(!message.chars().any(char::is_control), "the message itself holds one: {message:?}");
        }
    }
    Scenario::from_toml_str(&bursts, "s.toml", Path::new("."), &["flow.r.burst_group=\"g\"".into()]).unwrap();
    // Other characters are names: accents, spaces, symbols.
    Scenario::from_toml_str(&io_flow, "s.toml", Path::new("."), &["flow.r.name=\"lecteur é #1 ✓\"".into()]).unwrap();
}

/// A scenario without a `name` is named after its file, whose name no one checked: control characters in it
/// are printed escaped, in the name and in messages.
#[cfg(unix)]
#[test]
fn a_file_name_with_control_characters_is_printed_escaped() {
    let dir = std::env::temp_dir().join(format!("ullsim-messages-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("odd\u{1b}[2Jname\n.toml");
    std::fs::write(&path, bases()[0].as_str()).unwrap();
    let scenario = Scenario::load(&path, &[]);
    let bad = Scenario::load(&path, &["flow.r.iodepth=0".into()]);
    std::fs::remove_dir_all(&dir).unwrap();
    let scenario = scenario.unwrap();
    assert_eq!(scenario.name, "odd\\u{1b}[2Jname\\n");
    let message = bad.unwrap_err().to_string();
    assert!(message.contains("odd\\u{1b}[2Jname\\n.toml: ") && !message.chars().any(char::is_control), "{message:?}");
}

#[test]
fn the_bases_load() {
    for base in &bases() {
        Scenario::from_toml_str(base, "s.toml", Path::new("."), &[]).unwrap();
    }
}

/// Each policy's name is checked by the registry of the layer that owns it (`host::check`, `device::check`,
/// through `config::layers::LayerRules`): an unknown name is an error at its key that lists the names, in
/// `[device]` and in a drive's own table alike.
#[test]
fn every_policy_name_is_checked_by_its_layer() {
    let base = one_flow("rw = \"read\"");
    for key in [
        "host.cpu_scheduler",
        "host.io_scheduler",
        "host.completion",
        "device.cache.read_policy",
        "device.host_interface.arbiter",
        "device.tsu.scheduler",
        "device.ftl.gc_policy",
    ] {
        let set = format!("{key}=\"no-such-policy\"");
        let message = Scenario::from_toml_str(&base, "t.toml", Path::new("."), std::slice::from_ref(&set))
            .expect_err("an unknown policy name loads")
            .to_string();
        assert!(message.contains(&format!("key `{key}`")) && message.contains("expected one of"), "{set}: {message}");
    }
    let two_drives = ["device.count=2".to_string(), "drives.nvme1.tsu.scheduler=\"no-such-policy\"".to_string()];
    let message = Scenario::from_toml_str(&base, "t.toml", Path::new("."), &two_drives).unwrap_err().to_string();
    assert!(message.contains("key `drives.nvme1.tsu.scheduler`"), "{message}");
}
