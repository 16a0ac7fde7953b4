//! The scenario-file mutator of `tests/it/fuzz_scenarios.rs`: seeded, deterministic structural mutations of
//! whole scenario files (the text, not `--set` overrides; `tests/it/bad_input.rs` covers those).
//!
//! Case `i` of generator seed `s` is a pure function of `(s, i)` and the seed files: the first cases are the
//! seed files unmutated, every later case picks a seed file and stacks one to six mutations on it, drawn
//! from an RNG seeded with `(s, i)` alone, so one case reproduces without generating the others.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

type Rng = Xoshiro256PlusPlus;

/// One seed scenario: a file of the repository's `scenarios/` tree or the built-in default.
#[derive(Debug, Clone)]
pub struct Seed {
    /// Where it came from, for messages (`scenarios/examples/gc-randwrite.toml`).
    pub name: String,
    pub text: String,
    /// The directory its relative trace paths resolve against.
    pub base_dir: PathBuf,
}

/// Every `*.toml` under `scenarios/` (sorted by path, so the order is the same on every machine) after the
/// built-in default scenario.
pub fn seeds() -> Vec<Seed> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    collect_toml(&repo.join("scenarios"), &mut files);
    files.sort();
    let mut seeds = vec![Seed {
        name: "built-in default scenario".into(),
        text: ullsim::config::scenario::DEFAULT_SCENARIO.into(),
        base_dir: PathBuf::from("."),
    }];
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        let name = file.strip_prefix(&repo).unwrap_or(&file).display().to_string();
        seeds.push(Seed { name, text, base_dir: file.parent().expect("a file has a directory").to_path_buf() });
    }
    seeds
}

fn collect_toml(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_toml(&path, out);
        } else if path.extension().is_some_and(|e| e == "toml") {
            out.push(path);
        }
    }
}

/// The keys a scenario file knows, by table (`""` is the top level, `"flow"` a `[[flow]]` table).
#[derive(Debug, Clone)]
pub struct Dictionary {
    pub tables: Vec<(String, Vec<String>)>,
}

impl Dictionary {
    pub fn new() -> Self {
        let mut tables: Vec<(String, Vec<String>)> = vec![
            ("".into(), vec!["name".into(), "description".into(), "seed".into()]),
            ("run".into(), vec!["duration".into(), "warmup".into(), "check_invariants".into()]),
            ("metrics".into(), vec!["fairness".into()]),
            ("device".into(), vec!["preset".into()]),
            ("flow".into(), ullsim::config::scenario::FLOW_KEYS.iter().map(|k| k.to_string()).collect()),
        ];
        let preset: toml::Table = ullsim::config::presets::PRESETS[0].toml.parse().expect("presets parse");
        for (section, table) in &preset {
            let keys = table.as_table().expect("preset sections are tables").keys().cloned().collect();
            tables.push((format!("device.{section}"), keys));
        }
        for key in ullsim::config::HostConfig::keys() {
            let (table, key) = key.rsplit_once('.').expect("host keys are dotted");
            match tables.iter_mut().find(|(t, _)| t == table) {
                Some((_, keys)) => keys.push(key.to_string()),
                None => tables.push((table.to_string(), vec![key.to_string()])),
            }
        }
        Dictionary { tables }
    }

    fn keys_of(&self, table: &str) -> Option<&[String]> {
        self.tables.iter().find(|(t, _)| t == table).map(|(_, k)| k.as_slice())
    }

    fn any_key(&self, rng: &mut Rng) -> String {
        let (_, keys) = pick(rng, &self.tables);
        pick(rng, keys).clone()
    }
}

impl Default for Dictionary {
    fn default() -> Self {
        Self::new()
    }
}

/// A mutated scenario file.
#[derive(Debug, Clone)]
pub struct Mutant {
    /// Index into the seeds it came from.
    pub seed: usize,
    pub text: String,
    /// What was done to the seed, one entry per mutation.
    pub ops: Vec<String>,
}

/// Case `case` of generator seed `generator_seed`.
pub fn mutant(seeds: &[Seed], dict: &Dictionary, generator_seed: u64, case: u64) -> Mutant {
    if (case as usize) < seeds.len() {
        let seed = case as usize;
        return Mutant { seed, text: seeds[seed].text.clone(), ops: vec!["unmutated".into()] };
    }
    let mut rng = Rng::seed_from_u64(ullsim::engine::stream_seed(generator_seed, &format!("fuzz-case:{case}")));
    let seed = rng.random_range(0..seeds.len());
    let mut text = seeds[seed].text.clone();
    let count = match rng.random_range(0..100) {
        0..55 => 1,
        55..80 => 2,
        80..92 => 3,
        _ => rng.random_range(4..=6),
    };
    let mut ops = Vec::new();
    for _ in 0..count {
        let (new_text, what) = mutate_once(&text, seeds, dict, &mut rng);
        text = new_text;
        ops.push(what);
    }
    Mutant { seed, text, ops }
}

fn pick<'a, T>(rng: &mut Rng, items: &'a [T]) -> &'a T {
    &items[rng.random_range(0..items.len())]
}

/// The line as it appears in an op description: trimmed and at most 80 characters.
fn show(line: &str) -> String {
    let line = line.trim();
    if line.chars().count() > 80 {
        format!("{}...", line.chars().take(77).collect::<String>())
    } else {
        line.to_string()
    }
}

/// `key` of a `key = value` line (dotted keys as written), or `None` for headers, comments and the rest.
fn key_of(line: &str) -> Option<&str> {
    let t = line.trim_start();
    if t.starts_with('#') || t.starts_with('[') {
        return None;
    }
    let (key, _) = t.split_once('=')?;
    let key = key.trim();
    let bare = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '"' | ' ');
    (!key.is_empty() && key.chars().all(bare)).then_some(key)
}

/// The table a header line opens: `[device.flash]` -> `device.flash`, `[[flow]]` -> `flow`.
fn header_of(line: &str) -> Option<String> {
    let t = line.trim();
    if !t.starts_with('[') {
        return None;
    }
    let inner = t.trim_start_matches('[');
    let end = inner.find(']')?;
    Some(inner[..end].trim().to_string())
}

/// The table line `index` is in.
fn table_at(lines: &[String], index: usize) -> String {
    lines[..index.min(lines.len())].iter().rev().find_map(|l| header_of(l)).unwrap_or_default()
}

/// Line ranges `[start, end)` of the tables (a header and the lines up to the next header).
fn table_blocks(lines: &[String]) -> Vec<(usize, usize)> {
    let headers: Vec<usize> = (0..lines.len()).filter(|&i| header_of(&lines[i]).is_some()).collect();
    headers.iter().enumerate().map(|(k, &start)| (start, headers.get(k + 1).copied().unwrap_or(lines.len()))).collect()
}

fn flow_blocks(lines: &[String]) -> Vec<(usize, usize)> {
    table_blocks(lines).into_iter().filter(|&(s, _)| lines[s].trim().starts_with("[[flow]]")).collect()
}

/// Values no key expects, or expects only at the edge of its range.
fn odd_value(rng: &mut Rng) -> String {
    const VALUES: &[&str] = &[
        "0",
        "-1",
        "1",
        "1e12",
        "1e-9",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "18446744073709551615",
        "4294967295",
        "4294967296",
        "65536",
        "nan",
        "-nan",
        "inf",
        "-inf",
        "-0.0",
        "0.5",
        "1e308",
        "5e-324",
        "true",
        "false",
        "\"\"",
        "\"x\"",
        "\" \"",
        "[1]",
        "[]",
        "[[]]",
        "{a=1}",
        "{}",
        "1979-05-27T07:32:00Z",
        "07:32:00",
        "'literal'",
        "\"\"\"two\nlines\"\"\"",
        "0x10",
        "0o17",
        "0b1",
        "1_000",
        "+5",
        "\"\\u0000\"",
        "\"é\"",
        "\"1e30k\"",
        "\"-4k\"",
        "\"0k\"",
        "\"4q\"",
        "\"k\"",
        "\"nan\"",
        "\"inf\"",
        "\"infms\"",
        "\"1e400s\"",
        "\"1e-400s\"",
        "\"0ms\"",
        "\"1ns\"",
        "\"18446744073709551615ns\"",
        "\"18446744073709551616\"",
        "\"1e-9s\"",
        "\"0%\"",
        "\"100%\"",
        "\"1000%\"",
        "\"-5%\"",
        "\"nan%\"",
        "\"1e308%\"",
        "\"%\"",
        "\"0x10\"",
        "\"1.5.5k\"",
        "\".k\"",
    ];
    match rng.random_range(0..20) {
        0 => format!("\"{}\"", "a".repeat(rng.random_range(1_000..200_000))),
        1 => format!("\"{}k\"", "9".repeat(rng.random_range(20..400))),
        2 => "9".repeat(rng.random_range(20..400)),
        3 => format!("{}", rng.random::<i64>()),
        4 => format!("{:e}", rng.random::<f64>() * 10f64.powi(rng.random_range(-30..30))),
        _ => pick(rng, VALUES).to_string(),
    }
}

/// A value of the kind `key` takes, often at an edge of its range (or past it).
fn plausible_value(key: &str, rng: &mut Rng) -> String {
    let quoted = |items: &[&str], rng: &mut Rng| format!("\"{}\"", pick(rng, items));
    let plain = |items: &[&str], rng: &mut Rng| pick(rng, items).to_string();
    const COUNTS: &[&str] =
        &["0", "1", "2", "3", "7", "8", "64", "255", "256", "257", "1024", "4096", "65535", "65536"];
    const TIMES: &[&str] = &[
        "0",
        "1",
        "0.001",
        "1e-9",
        "\"1ns\"",
        "\"1us\"",
        "\"100us\"",
        "\"1ms\"",
        "\"1.5ms\"",
        "\"10ms\"",
        "\"1s\"",
        "\"1000s\"",
        "\"1e6s\"",
        "\"0s\"",
        "\"2m\"",
    ];
    const NS: &[&str] = &["0", "1", "100", "1000", "100000", "1000000", "10000000000", "10000000001", "\"1ms\""];
    const BYTES: &[&str] = &[
        "0", "1", "511", "512", "513", "\"1k\"", "\"4k\"", "\"4.5k\"", "\"128k\"", "\"1m\"", "\"1MiB\"", "\"1g\"",
        "\"4g\"", "\"1t\"", "\"64t\"",
    ];
    const FRACTIONS: &[&str] =
        &["0", "0.0", "0.001", "0.005", "0.05", "0.07", "0.3", "0.5", "0.89", "0.9", "1.0", "1.5"];
    match key {
        "name" => quoted(&["", "a", "reader", "writer", "fio", "tpcc", "x y", "\u{202e}evil", "\\t"], rng),
        "description" => quoted(&["", "d"], rng),
        "seed" => plain(&["0", "1", "2", "9223372036854775807", "-1"], rng),
        "duration" | "warmup" | "runtime" | "startdelay" | "burst_on" | "thinktime" | "thinktime_spin"
        | "response_cpu" | "cpuchunks" => plain(TIMES, rng),
        "check_invariants" | "fairness" | "hipri" | "sqthread_poll" | "enabled" | "cache_reads" | "ideal_map"
        | "multiplane" | "program_suspend" | "erase_suspend" | "plug" | "merge" => plain(&["true", "false"], rng),
        "preset" => quoted(&["optane-ull", "znand-ull", "mqsim-mlc", "tlc-enterprise", "flin-eval", "nope"], rng),
        "class" => quoted(&["critical", "normal", "urgent"], rng),
        "prio" => quoted(&["urgent", "high", "medium", "low", "critical"], rng),
        "prioclass" => quoted(&["rt", "be", "idle", "none"], rng),
        "app" => {
            let mut names = ullsim::workload::app::names();
            names.push("flin.nope".into());
            format!("\"{}\"", pick(rng, &names))
        }
        "rw" => quoted(&["read", "write", "randread", "randwrite", "rw", "readwrite", "randrw", "trim"], rng),
        "rwmixread" | "cpuload" | "percentage_random" => plain(&["0", "1", "50", "99", "100", "101"], rng),
        "bs"
        | "page_bytes"
        | "capacity_bytes"
        | "cmt_capacity_bytes"
        | "flin_alpha_read_bytes"
        | "flin_alpha_write_bytes" => plain(BYTES, rng),
        "bssplit" => quoted(
            &[
                "4k/50:64k/50",
                "4k/100",
                "4k/0",
                "4k/101",
                "4k/50:8k/50,16k/100",
                "4k/50:8k/50,",
                ",4k/100",
                "4k/30:8k/30",
                ":",
                "4k/",
                "/",
                "4k",
                "0/100",
                "4k/100:4k/100",
            ],
            rng,
        ),
        "rate_iops" => plain(&["1", "0.001", "1e-300", "1000", "100000", "1000000", "1e7", "1e9", "1e12"], rng),
        "rate_process" => quoted(&["linear", "poisson", "onoff", "bursty"], rng),
        "burst_factor" => plain(&["1", "1.0001", "5", "100", "1e6", "1e12", "0.5"], rng),
        "burst_group" => quoted(&["g", "", " ", "h"], rng),
        "random_distribution" => quoted(
            &[
                "random",
                "zipf:1.2",
                "zipf:0.0001",
                "zipf:100",
                "zipf:1",
                "pareto:0.2",
                "pareto:0.999999",
                "normal:0",
                "normal:99.99",
                "zoned:60/10:30/20:10/70",
                "zoned:100/100",
                "zoned:100/0",
                "zoned:50/50:50/50",
                "zoned:",
                "zipf:1.2:0.25",
            ],
            rng,
        ),
        "size" | "offset" => plain(
            &[
                "0",
                "512",
                "\"4k\"",
                "\"64KiB\"",
                "\"1GiB\"",
                "\"1TiB\"",
                "\"0%\"",
                "\"1%\"",
                "\"50%\"",
                "\"99%\"",
                "\"100%\"",
            ],
            rng,
        ),
        "number_ios" => plain(&["0", "1", "2", "1000", "18446744073709551615"], rng),
        "trace" => quoted(
            &[
                "../../traces/tpcc-small.trace",
                "../../traces/wsrch-small.trace",
                "../examples/gc-randwrite.toml",
                "/dev/null",
                "/nonexistent",
                ".",
                "",
            ],
            rng,
        ),
        "format" => quoted(&["disksim", "msr", "spc", "fio-iolog", "blkparse", "csv"], rng),
        "time_scale" => plain(&["1e-6", "0.001", "0.1", "1", "10", "1e6", "0"], rng),
        "numjobs" | "iodepth" | "iodepth_batch_submit" => plain(COUNTS, rng),
        "ioengine" => quoted(&["psync", "pvsync2", "libaio", "io_uring", "cpuio", "sync"], rng),
        "cpus_allowed" => quoted(&["0", "0-3", "3-0", "0,0,0", "0-1000", ",", "-", "0-", "1,3"], rng),
        "cpus_allowed_policy" => quoted(&["shared", "split"], rng),
        "arbiter" => quoted(&["round-robin", "weighted-round-robin", "wrr"], rng),
        "mapping" => quoted(&["page", "in-place"], rng),
        "precondition" => quoted(&["none", "sequential", "random"], rng),
        "write_buffer_sharing" => quoted(&["shared", "per-flow"], rng),
        "read_policy" => quoted(&["shared", "flashshare", "lru"], rng),
        "flashshare_prefetch_pages" => plain(&["[0]", "[0, 4, 16, 64, 128]", "[128, 0]", "[]", "[2000]", "4"], rng),
        "gc_policy" => quoted(&["greedy", "d-choices", "random", "fifo"], rng),
        "scheduler" => quoted(&["fifo", "sprinkler", "sprinkler-fairness", "flin", "none"], rng),
        "flin_stage3_wait" => quoted(&["queue", "slot"], rng),
        "flin_stage1" | "flin_stage2" | "flin_stage3" => plain(&["true", "false"], rng),
        "cpu_scheduler" => quoted(&["cfs", "eevdf", "fastresponse", "fifo"], rng),
        "io_scheduler" => quoted(&["none", "mq-deadline", "kyber", "bfq", "cfq"], rng),
        "completion" => quoted(&["interrupt", "poll", "hybrid", "spin"], rng),
        "model" => quoted(&["full", "device-only", "mqsim"], rng),
        "channel_mts" => plain(&["1", "333", "1e6", "0.5", "1e7"], rng),
        "pcie_lane_bytes_per_s" => plain(&["1e6", "1e9", "1e12", "999999", "1e13"], rng),
        k if k.ends_with("_ns") => plain(NS, rng),
        "overprovisioning" | "gc_threshold" | "gc_hard_threshold" | "precondition_fill" | "flin_fairness_threshold" => {
            plain(FRACTIONS, rng)
        }
        _ => {
            // Counts (geometry, queue depths, cores, weights ...) and keys of the power model.
            if rng.random_bool(0.5) {
                plain(COUNTS, rng)
            } else {
                plain(&["0.0", "0.5", "1.0", "10.0", "1e6", "-1.0"], rng)
            }
        }
    }
}

/// A number near `value` (which may be quoted and carry a unit: `"8k"`, `"100ms"`), or `None` if it holds
/// no number.
fn nudged_value(value: &str, rng: &mut Rng) -> Option<String> {
    let v = value.trim();
    let (open, inner, close) = if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') {
        ("\"", &v[1..v.len() - 1], "\"")
    } else {
        ("", v, "")
    };
    let split = inner.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == 'e')).unwrap_or(inner.len());
    let (number, unit) = inner.split_at(split);
    let n: f64 = number.parse().ok()?;
    let is_int = !number.contains(['.', 'e']);
    let new = match rng.random_range(0..9) {
        0 => 0.0,
        1 => n + 1.0,
        2 => n - 1.0,
        3 => -n,
        4 => n * 2.0,
        5 => n / 2.0,
        6 => n * 10f64.powi(rng.random_range(1..=12)),
        7 => n / 10f64.powi(rng.random_range(1..=9)),
        _ => n * 1e6,
    };
    let text = if is_int && new.fract() == 0.0 && new.abs() < 9.2e18 {
        format!("{}", new as i64)
    } else if is_int && open.is_empty() {
        // An integer key given a float (or a huge integer) is a type error worth trying too.
        format!("{new:?}")
    } else {
        format!("{new}")
    };
    Some(format!("{open}{text}{unit}{close}"))
}

/// A new value for `key`, whose current value text is `current`.
fn new_value(key: &str, current: &str, rng: &mut Rng) -> String {
    match rng.random_range(0..10) {
        0..2 => odd_value(rng),
        2..7 => plausible_value(key, rng),
        _ => nudged_value(current, rng).unwrap_or_else(|| plausible_value(key, rng)),
    }
}

/// The header a renamed table gets.
const HEADERS: &[&str] = &[
    "[device]",
    "[device.flash]",
    "[device.ftl]",
    "[device.cache]",
    "[device.tsu]",
    "[device.host_interface]",
    "[run]",
    "[metrics]",
    "[host]",
    "[host.cpu]",
    "[host.block]",
    "[host.nvme]",
    "[host.power]",
    "[[flow]]",
    "[flow]",
    "[[device]]",
    "[[run]]",
    "[device.flash.extra]",
    "[]",
    "[ flow ]",
    "[\"flow\"]",
    "[device.preset]",
    "[[flow.x]]",
    "[[host.cpu]]",
];

/// Characters an inserted run of bytes is made of.
const CHARS: &[char] = &[
    '\0',
    '\t',
    '\n',
    '\r',
    '\u{7}',
    '\u{1b}',
    '\u{7f}',
    ' ',
    '"',
    '\'',
    '[',
    ']',
    '{',
    '}',
    '=',
    '#',
    '\\',
    ',',
    '.',
    '-',
    '+',
    '%',
    'k',
    'e',
    '0',
    '1',
    '9',
    'é',
    '\u{feff}',
    '\u{202e}',
    '\u{fffd}',
    '\u{10ffff}',
    '😀',
];

/// Apply one mutation; returns the new text and what was done.
fn mutate_once(text: &str, seeds: &[Seed], dict: &Dictionary, rng: &mut Rng) -> (String, String) {
    let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
    let kv: Vec<usize> = (0..lines.len()).filter(|&i| key_of(&lines[i]).is_some()).collect();
    let headers: Vec<usize> = (0..lines.len()).filter(|&i| header_of(&lines[i]).is_some()).collect();
    let n = lines.len();
    let what = match rng.random_range(0..100) {
        // Line-level edits.
        0..6 => {
            let i = rng.random_range(0..n);
            let what = format!("delete line {}: `{}`", i + 1, show(&lines[i]));
            lines.remove(i);
            what
        }
        6..9 => {
            let i = rng.random_range(0..n);
            lines.insert(i, lines[i].clone());
            format!("duplicate line {}: `{}`", i + 1, show(&lines[i]))
        }
        9..12 => {
            let (i, j) = (rng.random_range(0..n), rng.random_range(0..n));
            lines.swap(i, j);
            format!("swap lines {} and {}", i + 1, j + 1)
        }
        12..15 => {
            let i = rng.random_range(0..n);
            let line = lines.remove(i);
            let j = rng.random_range(0..=lines.len());
            let what = format!("move line {} to {}: `{}`", i + 1, j + 1, show(&line));
            lines.insert(j, line);
            what
        }
        // A key's value replaced.
        15..37 if !kv.is_empty() => {
            let i = *pick(rng, &kv);
            let key_text = lines[i].split_once('=').expect("a key line has =").0.to_string();
            let key = key_text.trim().rsplit('.').next().unwrap_or("").trim_matches('"').to_string();
            let current = lines[i].split_once('=').expect("a key line has =").1.split(" #").next().unwrap_or("").trim();
            let value = new_value(&key, current, rng);
            let what = format!("line {}: `{}` -> `{} = {}`", i + 1, show(&lines[i]), key, show(&value));
            lines[i] = format!("{}= {value}", key_text);
            what
        }
        // A key of the dictionary set in one of the file's tables (usually a key the table takes, sometimes
        // one of another table): its line replaced if the table has it, else a line added after the header.
        37..60 => {
            let mut tables: Vec<Option<usize>> = vec![None];
            tables.extend(headers.iter().map(|&h| Some(h)));
            let header = *pick(rng, &tables);
            let (table, start) = match header {
                Some(h) => (header_of(&lines[h]).unwrap_or_default(), h + 1),
                None => (String::new(), 0),
            };
            let end = (start..n).find(|&i| header_of(&lines[i]).is_some()).unwrap_or(n);
            let key = match dict.keys_of(&table) {
                Some(keys) if rng.random_bool(0.9) => pick(rng, keys).clone(),
                _ => dict.any_key(rng),
            };
            let value = if rng.random_bool(0.8) { plausible_value(&key, rng) } else { odd_value(rng) };
            let line = format!("{key} = {value}");
            let existing = (start..end).find(|&i| key_of(&lines[i]) == Some(key.as_str()));
            let what = format!("set in [{table}] `{}`", show(&line));
            match existing {
                Some(i) if rng.random_bool(0.9) => lines[i] = line,
                _ => lines.insert(start, line),
            }
            what
        }
        // A key line copied into another table.
        60..64 if !kv.is_empty() && !headers.is_empty() => {
            let i = *pick(rng, &kv);
            let h = *pick(rng, &headers);
            let line = lines[i].clone();
            let what = format!("copy `{}` into `{}`", show(&line), show(&lines[h]));
            lines.insert(h + 1, line);
            what
        }
        // Table-level edits.
        64..71 => {
            let flows = flow_blocks(&lines);
            if flows.is_empty() {
                return mutate_once(text, seeds, dict, rng);
            }
            let (s, e) = *pick(rng, &flows);
            let copies = if rng.random_bool(0.6) { 1 } else { rng.random_range(2..=64) };
            let rename = rng.random_bool(0.75);
            let block: Vec<String> = lines[s..e].to_vec();
            for c in 0..copies {
                lines.push(String::new());
                for line in &block {
                    if rename && key_of(line) == Some("name") {
                        let old = line.split_once('=').expect("a key line has =").1.trim().trim_matches('"');
                        lines.push(format!("name = \"{old}-copy{c}\""));
                    } else {
                        lines.push(line.clone());
                    }
                }
            }
            format!("append {copies} copies of the [[flow]] at line {}{}", s + 1, if rename { ", renamed" } else { "" })
        }
        71..75 if !headers.is_empty() => {
            let blocks = table_blocks(&lines);
            let device = blocks.iter().find(|&&(s, _)| lines[s].trim() == "[device]").copied();
            let (s, e) = match device {
                Some(b) if rng.random_bool(0.1) => b,
                _ => *pick(rng, &blocks),
            };
            let what = format!("drop the table `{}` (lines {}..{})", show(&lines[s]), s + 1, e);
            lines.drain(s..e);
            what
        }
        75..77 if !headers.is_empty() => {
            let h = *pick(rng, &headers);
            let new = pick(rng, HEADERS).to_string();
            let what = format!("line {}: header `{}` -> `{new}`", h + 1, show(&lines[h]));
            lines[h] = new;
            what
        }
        77..81 => {
            let other = pick(rng, seeds);
            let other_lines: Vec<String> = other.text.split('\n').map(str::to_string).collect();
            let blocks = table_blocks(&other_lines);
            if blocks.is_empty() {
                return mutate_once(text, seeds, dict, rng);
            }
            let flows = flow_blocks(&other_lines);
            let (s, e) =
                if !flows.is_empty() && rng.random_bool(0.7) { *pick(rng, &flows) } else { *pick(rng, &blocks) };
            let at = if rng.random_bool(0.7) { n } else { rng.random_range(0..=n) };
            let what = format!("splice `{}` of {} at line {}", show(&other_lines[s]), other.name, at + 1);
            for (k, line) in other_lines[s..e].iter().enumerate() {
                lines.insert(at + k, line.clone());
            }
            what
        }
        81..83 if !kv.is_empty() => {
            let i = *pick(rng, &kv);
            let depth = *pick(rng, &[16usize, 128, 1_000, 10_000, 100_000]);
            let key_text = lines[i].split_once('=').expect("a key line has =").0.to_string();
            let value = match rng.random_range(0..3) {
                0 => format!("{}{}", "[".repeat(depth), "]".repeat(depth)),
                1 => format!("{}1{}", "{a=".repeat(depth), "}".repeat(depth)),
                _ => format!("{}1{}", "[{a=".repeat(depth), "}]".repeat(depth)),
            };
            lines[i] = format!("{key_text}= {value}");
            format!("line {}: value nested {depth} deep", i + 1)
        }
        83..84 => {
            let depth = *pick(rng, &[16usize, 1_000, 100_000]);
            let at = rng.random_range(0..=n);
            lines.insert(at, format!("{} = 1", vec!["a"; depth].join(".")));
            format!("insert at line {} a dotted key {depth} deep", at + 1)
        }
        // Byte-level edits.
        84..87 => {
            let mut text = lines.join("\n");
            let mut at = rng.random_range(0..=text.len());
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            text.truncate(at);
            return (text, format!("truncate at byte {at}"));
        }
        87..92 => {
            let mut text = lines.join("\n");
            let mut at = rng.random_range(0..=text.len());
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let count = rng.random_range(1..=8);
            let inserted: String = (0..count).map(|_| *pick(rng, CHARS)).collect();
            text.insert_str(at, &inserted);
            return (text, format!("insert {inserted:?} at byte {at}"));
        }
        92..94 => return (format!("\u{feff}{}", lines.join("\n")), "prepend a UTF-8 BOM".into()),
        94 => return (lines.join("\n").replace('\n', "\r\n"), "CRLF line ends".into()),
        95..97 => {
            let i = rng.random_range(0..n);
            let what = format!("line {}: comment out `{}`", i + 1, show(&lines[i]));
            lines[i] = format!("# {}", lines[i]);
            what
        }
        // A flow made heavy: many jobs, deep queues or a high rate, all values the loader accepts.
        97..100 => {
            let flows = flow_blocks(&lines);
            if flows.is_empty() {
                return mutate_once(text, seeds, dict, rng);
            }
            let (s, e) = *pick(rng, &flows);
            let set: Vec<String> = match rng.random_range(0..3) {
                0 => vec![
                    // At most 2^18 requests in flight (tens of MiB) or at least 2^24 (GiBs).
                    format!("iodepth = {}", pick(rng, &[64, 4096, 65536])),
                    format!("numjobs = {}", pick(rng, &[4, 4096])),
                ],
                1 => vec![format!("rate_iops = {}", pick(rng, &["1e6", "1e8", "1e9", "1e12"]))],
                _ => vec![format!("time_scale = {}", pick(rng, &["1e-3", "1e-6", "1e-9"]))],
            };
            let what = format!("in the [[flow]] at line {}: {}", s + 1, set.join(", "));
            // Replace the keys the flow has, add the others after its header.
            let mut add = Vec::new();
            for line in set {
                let key = key_of(&line).map(str::to_string);
                match (s + 1..e).find(|&i| key_of(&lines[i]).map(str::to_string) == key) {
                    Some(i) => lines[i] = line,
                    None => add.push(line),
                }
            }
            for (k, line) in add.into_iter().enumerate() {
                lines.insert(s + 1 + k, line);
            }
            what
        }
        // A guarded arm whose guard failed: try another mutation.
        _ => return mutate_once(text, seeds, dict, rng),
    };
    (lines.join("\n"), what)
}
