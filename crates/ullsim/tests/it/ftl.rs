//! The FTL: the map stays a bijection onto valid pages through any writes and garbage collections, and
//! garbage collection really runs with the write amplification theory expects.

use crate::common;

use std::collections::VecDeque;

use proptest::prelude::*;
use ullsim::device::ftl::Ftl;

use common::{run, scenario_with, SMALL_MLC};

/// A tiny drive for exhaustive invariant checks: 2 planes x 16 blocks x 8 pages.
fn tiny_ftl(precondition: &str, fill: f64, policy: &str) -> Ftl {
    let s = scenario_with(
        r#"
[device]
preset = "mqsim-mlc"
[device.flash]
channels = 1
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 2
blocks_per_plane = 16
pages_per_block = 8
[device.ftl]
overprovisioning = 0.4
gc_threshold = 0.15
gc_hard_threshold = 0.07
[[flow]]
name = "x"
rw = "randwrite"
"#,
        &[
            &format!("device.ftl.precondition={precondition}"),
            &format!("device.ftl.precondition_fill={fill}"),
            &format!("device.ftl.gc_policy={policy}"),
        ],
    );
    Ftl::new(&s.device, 11).expect("tiny FTL")
}

/// Drives the FTL's GC protocol the way the device does, one page move at a time.
struct Driver {
    ftl: Ftl,
    /// Pending page moves (plane, ppa, lpa) and planes whose victim awaits its erase.
    moves: VecDeque<(u32, u64, u64)>,
    erases: VecDeque<u32>,
}

impl Driver {
    fn start_gc_where_wanted(&mut self) {
        for u in 0..self.ftl.geometry().planes() {
            if self.ftl.gc_wanted(u) {
                let mut moves = Vec::new();
                if self.ftl.start_gc(u, &mut moves).is_some() {
                    if moves.is_empty() {
                        self.erases.push_back(u);
                    }
                    self.moves.extend(moves.into_iter().map(|(ppa, lpa)| (u, ppa, lpa)));
                }
            }
        }
    }

    fn write(&mut self, lpa: u64) -> bool {
        let placed = self.ftl.allocate_user(lpa).is_some();
        self.start_gc_where_wanted();
        placed
    }

    fn gc_step(&mut self) {
        if let Some((u, ppa, lpa)) = self.moves.pop_front() {
            self.ftl.relocate(lpa, ppa);
            if self.ftl.gc_move_done(u) {
                self.erases.push_back(u);
            }
        } else if let Some(u) = self.erases.pop_front() {
            self.ftl.erase_done(u);
            self.start_gc_where_wanted();
        }
    }
}

#[derive(Debug, Clone)]
enum Step {
    Write(u64),
    Gc,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(prop_oneof![3 => (0u64..1000).prop_map(Step::Write), 2 => Just(Step::Gc)], 1..600)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn map_stays_a_bijection_and_loses_no_page(
        ops in steps(),
        precondition in prop_oneof![Just("none"), Just("sequential"), Just("random")],
        policy in prop_oneof![Just("greedy"), Just("d-choices"), Just("random")],
    ) {
        let fill = if precondition == "none" { 0.0 } else { 0.9 };
        let ftl = tiny_ftl(precondition, fill, policy);
        let logical = ftl.logical_pages();
        let mut mapped: Vec<bool> = (0..logical).map(|l| ftl.lookup(l).is_some()).collect();
        ftl.check_invariants().map_err(TestCaseError::fail)?;
        let mut d = Driver { ftl, moves: VecDeque::new(), erases: VecDeque::new() };
        for op in ops {
            match op {
                Step::Write(x) => {
                    let lpa = x % logical;
                    if d.write(lpa) {
                        mapped[lpa as usize] = true;
                    } else {
                        // No space for host data: GC must have work to do.
                        prop_assert!(!d.moves.is_empty() || !d.erases.is_empty(), "writes blocked with no GC in progress");
                    }
                }
                Step::Gc => d.gc_step(),
            }
            d.ftl.check_invariants().map_err(TestCaseError::fail)?;
        }
        while !d.moves.is_empty() || !d.erases.is_empty() {
            d.gc_step();
        }
        d.ftl.check_invariants().map_err(TestCaseError::fail)?;
        for (lpa, &was_mapped) in mapped.iter().enumerate() {
            prop_assert_eq!(d.ftl.lookup(lpa as u64).is_some(), was_mapped, "lpa {} lost or invented", lpa);
        }
    }
}

#[test]
fn precondition_builds_a_valid_full_map() {
    for precondition in ["sequential", "random"] {
        let ftl = tiny_ftl(precondition, 1.0, "greedy");
        ftl.check_invariants().unwrap();
        assert!((0..ftl.logical_pages()).all(|l| ftl.lookup(l).is_some()), "{precondition}: unmapped page");
    }
}

#[test]
fn random_overwrite_of_a_full_drive_collects_garbage_with_high_write_amplification() {
    let text = format!(
        "{SMALL_MLC}\n[run]\nduration = \"2s\"\ncheck_invariants = true\n[[flow]]\nname = \"w\"\nrw = \"randwrite\"\nbs = \"8k\"\niodepth = 8\n"
    );
    let r = run(&scenario_with(&text, &["device.ftl.precondition=random"]));
    let d = &r.device;
    println!("random: gc {} wa {:?}", d.gc_count, d.write_amplification);
    assert!(d.gc_count > 50, "gc ran only {} times", d.gc_count);
    assert!(d.write_amplification.unwrap() > 1.5);
}

#[test]
fn sequential_overwrite_has_write_amplification_near_one() {
    let text = format!(
        "{SMALL_MLC}\n[run]\nduration = \"6s\"\ncheck_invariants = true\n[[flow]]\nname = \"w\"\nrw = \"write\"\nbs = \"128k\"\niodepth = 8\n"
    );
    // Greedy always finds the fully overwritten blocks; d-choices samples 5 blocks and now and then picks a
    // partly valid one (WA ~1.02 on this drive), which is why the bound is checked with greedy.
    let r = run(&scenario_with(&text, &["device.ftl.precondition=sequential", "device.ftl.gc_policy=greedy"]));
    let d = &r.device;
    println!("sequential: gc {} wa {:?} host pages {}", d.gc_count, d.write_amplification, d.host_pages_programmed);
    assert!(d.gc_count > 50, "gc ran only {} times", d.gc_count);
    assert!(d.write_amplification.unwrap() < 1.02);
}
