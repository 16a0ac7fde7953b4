//! The readable terminal summary of a run.

use std::fmt::Write;

use ullsim::config::host::HostModel;
use ullsim::metrics::LatencySummary;
use ullsim::{RunResults, Scenario};

pub(crate) fn us(ns: f64) -> String {
    let v = ns / 1000.0;
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A fraction as a percentage: one decimal from 10% up, two below ("32.4%", "4.49%", "0.02%").
fn percent(fraction: f64) -> String {
    let pct = fraction * 100.0;
    if pct >= 10.0 {
        format!("{pct:.1}%")
    } else {
        format!("{pct:.2}%")
    }
}

/// Mean, p50, p99, p99.9 and max in microseconds, as table cells.
pub(crate) fn latency_cells(l: &LatencySummary) -> String {
    format!(
        "{:>9} {:>9} {:>9} {:>9} {:>9}",
        us(l.mean),
        us(l.p50 as f64),
        us(l.p99 as f64),
        us(l.p99_9 as f64),
        us(l.max as f64)
    )
}

/// Render the results as a table (latencies in microseconds).
pub fn render(scenario: &Scenario, r: &RunResults, wall_seconds: f64) -> String {
    let mut out = String::new();
    let ms = |ns: u64| ns as f64 / 1e6;
    let _ = writeln!(out, "{} — device {}, seed {}", scenario.name, r.scenario.preset, r.scenario.seed);
    let measured = if r.stopped_ns < r.window.start_ns || r.window.end_ns == r.window.start_ns {
        // The window is empty (a warning below says so and what to do).
        format!(
            "the run ended before the measurement window began at {:.1} ms (run.warmup): nothing measured",
            ms(r.window.start_ns)
        )
    } else {
        format!("measured from {:.1} to {:.1} ms", ms(r.window.start_ns), ms(r.window.end_ns))
    };
    let _ = writeln!(
        out,
        "{:.1} ms simulated, {measured} ({} events, {:.2} s wall)",
        ms(r.stopped_ns),
        r.events,
        wall_seconds
    );
    let _ = writeln!(
        out,
        "\n{:<14} {:>8} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "flow", "class", "IOPS", "MB/s", "mean us", "p50", "p99", "p99.9", "max", "slowdown"
    );
    for (f, spec) in r.flows.iter().zip(&scenario.flows) {
        let _ = writeln!(
            out,
            "{:<14} {:>8} {:>10.0} {:>9.1} {} {:>9}",
            f.name,
            format!("{:?}", f.class).to_lowercase(),
            f.iops,
            f.bandwidth_bytes_per_s / 1e6,
            latency_cells(&f.latency_ns),
            f.slowdown.map_or("-".to_string(), |s| format!("{s:.2}x")),
        );
        if let Some(flush) = &f.flush {
            // Flushes are not in the flow's row: they have one of their own.
            let _ = writeln!(
                out,
                "{:<14} {:>8} {:>10.0} {:>9} {}",
                "  (flushes)",
                "",
                flush.iops,
                "",
                latency_cells(&flush.latency_ns)
            );
        }
        if let Some(a) = &f.alone {
            // FLIN's classes are about the dies a flow keeps busy: a CPU-only flow has none.
            let class = match (spec.is_cpu_only(), a.high_interference) {
                (true, _) => "no I/O",
                (false, true) => "high-interference",
                (false, false) => "low-interference",
            };
            let _ = writeln!(
                out,
                "{:<14} {:>8} {:>10.0} {:>9} {}  die busy {}, {class}",
                "  (alone)",
                "",
                a.iops,
                "",
                latency_cells(&a.latency_ns),
                percent(a.die_busy),
            );
        }
        if f.window != r.window && !spec.is_cpu_only() {
            let _ = writeln!(
                out,
                "  ({} was active from {:.1} to {:.1} ms: its rates are over that time)",
                f.name,
                ms(f.window.start_ns),
                ms(f.window.end_ns)
            );
        }
    }
    let _ = writeln!(
        out,
        "\nwhere the time goes (mean us)\n{:<14} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "flow", "syscall", "pg.cache", "fs", "block", "driver", "dev.q", "dev.serv", "complet.", "cpu wait", "CPU"
    );
    for f in r.flows.iter() {
        let _ = write!(out, "{:<14}", f.name);
        for (_, part) in f.breakdown_ns.parts() {
            let _ = write!(out, " {:>8}", us(part.mean));
        }
        let _ = writeln!(out, " {:>8}", format!("{:.2}", f.cpu_cores));
    }
    // Flushes and fsyncs are not in `latency_ns`: one in flight is compared with them too.
    let longest =
        |f: &ullsim::metrics::FlowResult| f.latency_ns.max.max(f.flush.as_ref().map_or(0, |x| x.latency_ns.max));
    for f in r.flows.iter().filter(|f| f.oldest_in_flight_ns > longest(f)) {
        let _ = writeln!(
            out,
            "warning: {}: a request in flight at the end had waited {} us, longer than any that completed; \
             {} were in flight (not in the figures above)",
            f.name,
            us(f.oldest_in_flight_ns as f64),
            f.in_flight_at_end
        );
    }
    // Every device figure is over the window. GC moves a victim's valid pages before it erases it, so a short
    // window (or a large block) can hold moves but no finished erase: the line names both.
    if r.devices.is_empty() {
        let _ = writeln!(out, "\ndevice: {}", device_line(&r.device));
    } else {
        let _ = writeln!(out);
        for d in &r.devices {
            let _ = writeln!(out, "device {}: {}", d.name, device_line(&d.results));
        }
    }
    let gc_total: u64 = r.flows.iter().map(|f| f.gc_busy_ns).sum();
    if gc_total > 0 {
        let shares: Vec<String> = r
            .flows
            .iter()
            .map(|f| format!("{} {:.0}%", f.name, 100.0 * f.gc_busy_ns as f64 / gc_total as f64))
            .collect();
        // Summed over dies, so it can exceed the window: say die-ms.
        let _ = writeln!(
            out,
            "GC die time {:.1} die-ms (its page reads, moves and erases, summed over dies), charged to the flows \
             that caused it: {}",
            ms(gc_total),
            shares.join(", ")
        );
    }
    let h = &r.host;
    let energy = format!(
        "energy {:.1} W, {} J per million I/Os",
        r.energy.mean_watts,
        r.energy.joules_per_million_ios.map_or("-".to_string(), |j| format!("{j:.0}"))
    );
    let _ = match h.model {
        HostModel::Full => writeln!(
            out,
            "host: {} cores ({:.2} busy: user {:.2}, kernel {:.2}, polling {:.2}), {} scheduler, {} completions, \
             {} interrupts; {energy}",
            h.cores.len(),
            h.busy_cores,
            h.cores.iter().map(|c| c.user).sum::<f64>(),
            h.cores.iter().map(|c| c.kernel).sum::<f64>(),
            h.cores.iter().map(|c| c.poll).sum::<f64>(),
            h.block.io_scheduler,
            h.completion,
            h.interrupts,
        ),
        HostModel::DeviceOnly => writeln!(
            out,
            "host: device-only (no host time: each flow's I/O goes straight to its own submission queue); {energy} \
             (no cores)"
        ),
    };
    if let Some(f) = &r.fairness {
        let _ = writeln!(
            out,
            "fairness {:.3} (min/max slowdown), weighted speedup {:.2}, max slowdown {:.2}x",
            f.fairness, f.weighted_speedup, f.max_slowdown
        );
    }
    for warning in &r.warnings {
        let _ = writeln!(out, "warning: {warning}");
    }
    out
}

/// One drive's figures over the window.
fn device_line(d: &ullsim::device::DeviceResults) -> String {
    let pct = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{:.1}%", v * 100.0));
    format!(
        "GC erased {} blocks and moved {} pages (write amplification {}), cache hits {}, die busy {:.1}% (max \
         {:.1}%), channel busy {:.1}%, queue depth {:.1} (max {})",
        d.gc_count,
        d.gc_pages_programmed,
        d.write_amplification.map_or("-".to_string(), |w| format!("{w:.2}")),
        pct(d.cache_hit_rate),
        d.die_utilization.mean * 100.0,
        d.die_utilization.max * 100.0,
        d.channel_utilization.mean * 100.0,
        d.queue_depth.mean,
        d.queue_depth.max
    )
}
