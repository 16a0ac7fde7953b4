//! The write buffer full at time 0 (`device.ftl.precondition_buffer_fill`, `device/buffer_preload.rs`): a
//! short run of a writer that outpaces the flash measures the steady state a long run settles in, the
//! buffer's pages are no flow's host data, and the key refuses what is not a fraction.

use crate::common;

use common::{load_error, run, scenario_with, SMALL_MLC};

/// `tlc-enterprise` full and randomly overwritten, one 4 KiB random writer at QD32.
const TLC_WRITER: &str = r#"
[device]
preset = "tlc-enterprise"
[device.ftl]
precondition = "random-gc-due"
precondition_fill = 1.0
[[flow]]
name = "w"
rw = "randwrite"
bs = 4096
iodepth = 32
ioengine = "libaio"
direct = 1
"#;

fn writer_iops(duration: &str, warmup: &str, fill: &str) -> f64 {
    let text = format!("[run]\nduration = \"{duration}\"\nwarmup = \"{warmup}\"\n{TLC_WRITER}");
    let fill = format!("device.ftl.precondition_buffer_fill={fill}");
    run(&scenario_with(&text, &[&fill])).flows[0].iops
}

/// The drive's 1 GiB buffer absorbs ~65,000 page writes at the host's pace before the flash's (GC-bound)
/// pace shows: from an empty buffer a 150 ms run measures that fill, from a full one the steady state of a
/// run twenty times as long.
#[test]
fn a_full_buffer_starts_a_short_run_in_the_steady_state() {
    let steady = writer_iops("3s", "1s", "0");
    let short_full = writer_iops("150ms", "30ms", "1");
    let short_empty = writer_iops("150ms", "30ms", "0");
    println!("steady {steady:.0} IOPS, short from a full buffer {short_full:.0}, from an empty one {short_empty:.0}");
    assert!((short_full / steady - 1.0).abs() < 0.12, "{short_full} against {steady}");
    assert!(short_empty > 3.0 * steady, "{short_empty} against {steady}: the empty buffer's fill shows");
}

/// On a small drive with its invariants checked: every write of the flow completes, and only the flow's pages
/// count as host data (the buffer's own pages are programmed as well, no flow's); per-flow partitions are
/// each filled, so each flow waits for its own.
#[test]
fn the_buffers_pages_are_no_flows_host_data() {
    let ios = 1_500;
    let text = format!(
        "[run]\nduration = \"20s\"\ncheck_invariants = true\n{SMALL_MLC}[[flow]]\nname = \"a\"\nrw = \"randwrite\"\n\
         bs = \"8k\"\niodepth = 8\nnumber_ios = {ios}\n[[flow]]\nname = \"b\"\nrw = \"randwrite\"\nbs = \"8k\"\n\
         iodepth = 8\nnumber_ios = {ios}\n"
    );
    let base = [
        "device.ftl.precondition=random-gc-due",
        "device.ftl.precondition_fill=1.0",
        "device.cache.capacity_bytes=\"1MiB\"",
    ];
    for sharing in ["shared", "per-flow"] {
        let sharing = format!("device.cache.write_buffer_sharing=\"{sharing}\"");
        let slowest = |fill: &str| {
            let fill = format!("device.ftl.precondition_buffer_fill={fill}");
            let overrides: Vec<&str> = base.iter().copied().chain([sharing.as_str(), fill.as_str()]).collect();
            let r = run(&scenario_with(&text, &overrides));
            for flow in &r.flows {
                assert_eq!(flow.completed, ios, "{sharing}: every write completes");
            }
            // The run ends with the flows' last writes buffered, up to a buffer (128 pages) of them not yet
            // programmed; the buffer's own pages were queued first, so counted as host data they would be past
            // the flows' total.
            let host = r.device.host_pages_programmed;
            assert!((2 * ios - 128..=2 * ios).contains(&host), "{sharing}: {host} host pages: only the flows' count");
            r.flows.iter().map(|f| f.latency_ns.mean).fold(0.0, f64::max)
        };
        let (empty, full) = (slowest("0"), slowest("1"));
        // 128 pages of buffer ahead of each flow's first write: its mean latency rises.
        assert!(full > empty, "{sharing}: mean latency {full} from a full buffer, {empty} from an empty one");
    }
}

#[test]
fn the_fill_is_a_fraction() {
    let text = format!("{SMALL_MLC}[[flow]]\nname = \"w\"\nrw = \"randwrite\"\n");
    for bad in ["1.5", "-0.1"] {
        let message = load_error(&text, &[&format!("device.ftl.precondition_buffer_fill={bad}")]);
        assert!(
            message.contains("ftl.precondition_buffer_fill") && message.contains("fraction in [0, 1]"),
            "{message}"
        );
    }
}
