//! bfq's CPU time grows with its service trees (issue 31 §2): each operation visits O(log n) nodes of the
//! trees of busy and idle queues (`host.block.bfq_tree_node_ns` a node, under `bfqd->lock`), beyond the
//! 1.9 us per request measured with one queue. Processes that start their I/O together share one queue (a
//! stable merge, never split again), so the trees only grow with queues created apart.

use crate::common;

use common::{run, scenario_with};

/// `flows` random readers at QD4 on one core, started 200 ms apart (beyond bfq's 180 ms burst interval,
/// so each keeps its own queue), on a drive whose one queue pair takes 2 commands at a time (`queue_depth` 3): the rest wait in bfq, whose
/// active tree holds the backlogged queues (no idling, no weight raising: the queues take turns by their
/// budgets). Returns the CPU time per request (ns) and the reads per second, measured once all flows run.
fn readers(flows: u32, node_ns: u64) -> (f64, f64) {
    let mut text = String::from(
        "seed = 3\n[run]\nduration = \"660ms\"\nwarmup = \"610ms\"\n[host]\ncores = 1\nio_scheduler = \"bfq\"\n[host.block]\nbfq_slice_idle = 0\nbfq_low_latency = false\n\
         [device]\npreset = \"optane-ull\"\n[device.host_interface]\nqueue_depth = 3\n",
    );
    for f in 0..flows {
        text += &format!(
            "[[flow]]\nname = \"r{f}\"\nrw = \"randread\"\nbs = \"4k\"\niodepth = 4\nioengine = \"io_uring\"\n\
             size = \"64MiB\"\nstartdelay = \"{}ms\"\n",
            200 * f
        );
    }
    let s = scenario_with(&text, &[&format!("host.block.bfq_tree_node_ns={node_ns}")]);
    let r = run(&s);
    let iops: f64 = r.flows.iter().map(|f| f.iops).sum();
    let cpu = r.host.busy_cores;
    (cpu / iops * 1e9, iops)
}

#[test]
fn one_queue_pays_no_tree_walks() {
    assert_eq!(readers(1, 0), readers(1, 1_000), "a lone queue's trees have no levels below the root");
}

#[test]
fn backlogged_queues_created_apart_pay_tree_walks() {
    let (free, free_iops) = readers(4, 0);
    let (walks, walks_iops) = readers(4, 1_000);
    println!("4 readers: {free:.0} ns CPU a read, {free_iops:.0} IOPS; at 1 us a node: {walks:.0} ns, {walks_iops:.0}");
    // The one core is the bottleneck, so the walks cost reads. Four queues: 2 levels; every queue switch
    // (a budget of several reads) picks, extracts and re-inserts a queue: between one node a read and 5 x 2
    // a read (a switch per read).
    assert!(walks_iops < free_iops);
    assert!(walks > free + 1_000.0 && walks < free + 10_000.0, "{free} -> {walks}");
}
