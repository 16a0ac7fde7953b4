//! What the terminal table says: each figure labeled with what it counts, a run that measured nothing said to
//! have done so, no name that breaks its rows.

use crate::common;

use common::ullsim;
use serde_json::Value;

/// Runs `ullsim run ARGS... --json FILE` and returns the table and the JSON of the same run.
fn table_and_json(scenario: &str, args: &[&str]) -> (String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(&path, scenario).unwrap();
    let json = dir.path().join("r.json");
    let mut all = vec!["run".to_owned(), path.display().to_string(), "--json".into(), json.display().to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    let run = ullsim(&all).ok();
    let value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (run.stdout, value)
}

fn line_starting<'a>(table: &'a str, start: &str) -> &'a str {
    table.lines().find(|l| l.starts_with(start)).unwrap_or_else(|| panic!("no line starts with {start:?}:\n{table}"))
}

/// Random writes on a full TLC drive, measured from 20 to 200 ms: GC moves pages (write amplification above 1,
/// die time) but erases no victim yet, as its blocks hold 768 pages. The device line names both counts, so 0
/// blocks beside a write amplification above 1 reads as what it is.
const GC_WITHOUT_ERASES: &str = r#"
[run]
duration = "200ms"
warmup = "20ms"
[device]
preset = "tlc-enterprise"
[device.cache]
enabled = false
[[flow]]
name = "w"
rw = "randwrite"
bs = "16k"
iodepth = 64
"#;

#[test]
fn the_device_line_says_what_gc_erased_and_moved() {
    let (table, r) = table_and_json(GC_WITHOUT_ERASES, &[]);
    let d = &r["device"];
    let (erased, moved) = (d["gc_count"].as_u64().unwrap(), d["gc_pages_programmed"].as_u64().unwrap());
    assert!(erased == 0 && moved > 0, "the case: moves without an erase ({erased} erased, {moved} moved)");
    let wa = d["write_amplification"].as_f64().unwrap();
    let device = line_starting(&table, "device: ");
    let said = format!("GC erased {erased} blocks and moved {moved} pages (write amplification {wa:.2})");
    assert!(device.contains(&said), "{device:?} should say {said:?}");
    let gc = line_starting(&table, "GC die time ");
    let die_ms = d["gc_busy_ns"].as_u64().unwrap() as f64 / 1e6;
    assert!(gc.starts_with(&format!("GC die time {die_ms:.1} die-ms (its page reads, moves and erases, summed")));
}

/// Every flow finishes at ~0.5 ms, before the window opens at run.warmup = 20 ms: the table says the run ended
/// then and measured nothing, not "20.0 ms simulated, measured from 20.0 to 20.0 ms".
#[test]
fn a_run_that_ended_before_its_window_says_so() {
    let run = ullsim(["run", "--set", "flow.reader.number_ios=20", "--set", "flow.writer.number_ios=5"]).ok();
    let second = run.stdout.lines().nth(1).unwrap();
    assert!(
        second.contains(
            " ms simulated, the run ended before the measurement window began at 20.0 ms (run.warmup): \
                         nothing measured"
        ),
        "{}",
        run.stdout
    );
    let simulated: f64 = second.split(" ms simulated").next().unwrap().parse().unwrap();
    assert!(simulated > 0.0 && simulated < 20.0, "{second}");
    assert!(!run.stdout.contains("measured from 20.0 to 20.0"), "{}", run.stdout);
    let warning = line_starting(&run.stdout, "warning: ");
    assert!(
        warning.contains("before the measurement window began at run.warmup = 20 ms")
            && warning.contains("lower run.warmup")
    );
    assert_eq!(run.stdout.matches("warning: ").count(), 1, "one warning, not one per flow:\n{}", run.stdout);
}

/// A control character in a flow's name is an error at load, shown escaped; the terminal gets none.
#[test]
fn a_flow_name_with_an_escape_is_an_error_shown_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(&path, "[device]\npreset = \"optane-ull\"\n[[flow]]\nname = \"a\\u001b[31mb\"\nrw = \"randread\"\n")
        .unwrap();
    let run = ullsim(["run", &path.display().to_string()]).fails_with(&[
        "key `flow[0].name`",
        "expected a flow name without control characters, found \"a\\u{1b}[31mb\"",
    ]);
    assert!(!run.stderr.trim_end().chars().any(char::is_control), "{:?}", run.stderr);
}
