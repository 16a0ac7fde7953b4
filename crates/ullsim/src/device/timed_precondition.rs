//! Timed preconditioning (`device.ftl.precondition_timed_writes`): before time 0 the drive overwrites its
//! own data, uniformly at random, through its own write path, garbage collection and transaction scheduler,
//! until its planes have programmed the given number of blocks' worth of pages each (host and GC pages
//! together). Then the writes stop where they are.
//!
//! Why: the count-only preconditioning (`ftl/precondition/`) leaves each block's valid pages as sustained
//! random writing leaves them, but not time's share of it: in a drive that has been writing, some planes
//! are half-way through a GC job, some have just finished one, open blocks are at every fill, and free
//! pools spread around the GC threshold. Started instead with every plane in the same phase, a drive runs
//! in step for the first GC cycles (docs/validation.md, "gc-randwrite"). Running the timed model itself is
//! what puts each plane at its own point of the cycle.
//!
//! Where the writes stop (the cut), the drive is taken as it is, time excepted:
//! - an operation running on a die takes effect at the cut (a program or erase is done, a GC read's page
//!   has its new home), and its die stays busy at time 0 for the rest of its time;
//! - the writes queued on the dies (host data, and GC moves whose page was read) are queued again at time 0
//!   in the order they were queued; the host data is no flow's, so it finishes during the run as the last
//!   writes of a job before the measured one would, and is not counted as the run's host data;
//! - the FTL (map, blocks, free pools, open blocks, GC jobs and their victims, SLC state) is kept; a GC job
//!   resumes at time 0 with its moves not yet read (the pages still valid in its victim) ([`Device::start`]);
//! - each die keeps its GC pacing credit (`tsu/mod.rs`, `GcCredit`): GC owed for the writes before time 0
//!   still goes first.
//!
//! The writes are a flow of their own to the transaction scheduler (`Device::precondition_flow`, the slot
//! after the run's flows), under the run's scheduler before and after time 0: the per-flow policies
//! (Sprinkler, its fairness variant, FLIN) see the job before the measured one finish as another flow's
//! writes. Its per-flow state (FLIN's estimates, Sprinkler's budgets) is not carried over: only each die's
//! GC credit, which `fifo` keeps.

use rand::RngExt;
use rustc_hash::FxHashSet;

use super::flash::FlashOp;
use super::ftl::Ftl;
use super::transaction::{Purpose, TxId, NONE};
use super::{Device, DeviceEvent, DriveEvent};
use crate::config::DeviceConfig;
use crate::engine::{stream_rng, EventQueue, Scheduler, Time};
use crate::request::{NvmePriority, RequestArena};

/// What the timed preconditioning carries into time 0 besides the FTL (empty without it).
#[derive(Debug, Default)]
pub(super) struct Carried {
    /// How long each die stays busy at time 0 with the operation it was running at the cut.
    die_busy_ns: Vec<Time>,
    /// Its writes still in the drive, in the order they were queued.
    writes: Vec<CarriedWrite>,
    /// Each die's GC pacing credit.
    gc_credit: Vec<f64>,
}

/// A page write the timed preconditioning left in the drive.
#[derive(Debug, Clone, Copy)]
enum CarriedWrite {
    /// Host data on its allocated page.
    Placed { ppa: u64, lpa: u64 },
    /// Host data waiting for a free page.
    Unplaced { lpa: u64 },
    /// A GC move of plane `unit`'s job whose page was read and has its new home.
    GcMove { ppa: u64, lpa: u64, unit: u32 },
}

impl Device {
    /// Run the timed preconditioning on a drive built around `ftl`; return the FTL as it left it and what
    /// else it carries into time 0.
    pub(super) fn precondition_timed(
        cfg: &DeviceConfig,
        seed: u64,
        flows: usize,
        ftl: Ftl,
    ) -> Result<(Ftl, Carried), String> {
        let mut drive = Device::assemble(cfg, seed, flows, ftl)?;
        let geometry = *drive.flash.geometry();
        let planes = geometry.planes() as u64;
        // As many writes in flight as the key says: how deep the queue of the writing workload is shapes where
        // GC stands on each plane (a deep queue keeps every die busy, a shallow one leaves some idle).
        let in_flight = u64::from(cfg.ftl.precondition_timed_depth);
        let programs_wanted = u64::from(cfg.ftl.precondition_timed_writes) * planes * geometry.pages_per_block as u64;
        let pages = drive.ftl.mapped_pages();
        let mut rng = stream_rng(seed, "device:timed-precondition");
        let mut q: EventQueue<DriveEvent> = EventQueue::new();
        // The writes carry no request: the arena and completion list stay empty.
        let mut requests = RequestArena::default();
        let mut completed = Vec::new();
        let mut issued = 0;
        loop {
            let done = drive.precondition_writes_done;
            if done + drive.gc_pages_programmed >= programs_wanted {
                break;
            }
            while issued - done < in_flight {
                let lpa = rng.random_range(0..pages);
                let tx = drive.new_transaction(
                    FlashOp::Program,
                    Purpose::UserWrite,
                    0,
                    lpa,
                    drive.page_bytes as u32,
                    NONE,
                    drive.precondition_flow,
                    NvmePriority::Medium,
                );
                drive.place_write(&mut q, tx);
                issued += 1;
            }
            // Only the device has events while it preconditions itself.
            let Some((_, (_, event))) = q.pop() else { break }; // nothing can move: the drive has no space to give
            drive.handle(event, &mut q, &mut requests, &mut completed);
        }
        let cut = q.now();
        drive.pad_waiting_pages_at_cut();
        // When each die's running operation ends (its last event: sensing done, or done).
        let mut busy_until = vec![cut; geometry.dies() as usize];
        while let Some((at, event)) = q.pop() {
            if let (_, DeviceEvent::DieSensed { die } | DeviceEvent::DieDone { die, .. }) = event {
                busy_until[die as usize] = busy_until[die as usize].max(at);
            }
        }
        let mut left: Vec<(Time, TxId, CarriedWrite)> = Vec::new();
        // Running operations take effect at the cut.
        for die in 0..geometry.dies() as usize {
            for tx in std::mem::take(&mut drive.running[die]) {
                let t = drive.txs[tx].clone();
                match (t.purpose, t.op) {
                    (Purpose::Gc, FlashOp::Read) => {
                        if let Some(ppa) = drive.ftl.relocate(t.lpa, t.ppa) {
                            left.push((cut, tx, CarriedWrite::GcMove { ppa, lpa: t.lpa, unit: t.link }));
                        }
                    }
                    (Purpose::Gc, FlashOp::Erase) => drive.ftl.erase_done(t.link),
                    _ => {} // a program's page holds its data
                }
                drive.txs.remove(tx);
            }
        }
        // Writes queued, in the order they were queued on their dies. A GC read not started is not carried:
        // its page is still valid in the victim, which the job lists again.
        let unplaced: FxHashSet<TxId> = drive.waiting_for_space.iter().copied().collect();
        left.extend(drive.txs.iter_live_ids().filter_map(|(id, t)| {
            let write = match (t.purpose, t.op) {
                (Purpose::UserWrite, _) if unplaced.contains(&id) => CarriedWrite::Unplaced { lpa: t.lpa },
                (Purpose::UserWrite, _) => CarriedWrite::Placed { ppa: t.ppa, lpa: t.lpa },
                (Purpose::Gc, FlashOp::Program) => CarriedWrite::GcMove { ppa: t.ppa, lpa: t.lpa, unit: t.link },
                _ => return None,
            };
            Some((t.enqueued_at, id, write))
        }));
        left.sort_unstable_by_key(|&(at, id, _)| (at, id));
        let mut moves_in_flight = vec![0u32; planes as usize];
        for (_, _, write) in &left {
            if let CarriedWrite::GcMove { unit, .. } = write {
                moves_in_flight[*unit as usize] += 1;
            }
        }
        let carried = Carried {
            die_busy_ns: busy_until.iter().map(|&until| until - cut).collect(),
            writes: left.into_iter().map(|(_, _, write)| write).collect(),
            gc_credit: (0..geometry.dies()).map(|die| drive.tsu.gc_credit(die).unwrap_or(0.0)).collect(),
        };
        let mut ftl = drive.ftl;
        ftl.end_timed_precondition(&moves_in_flight);
        Ok((ftl, carried))
    }

    /// Start what the timed preconditioning carries into time 0 (its writes still in the drive and its GC
    /// jobs left unfinished), then the write buffer's pages at time 0 (`buffer_preload.rs`), if any; and
    /// the SLC cache's idle timer when its region starts exhausted.
    pub fn start(&mut self, q: &mut impl Scheduler<DriveEvent>) {
        self.slc_start(q);
        let carried = std::mem::take(&mut self.carried);
        for (die, &credit) in carried.gc_credit.iter().enumerate() {
            self.tsu.set_gc_credit(die as u32, credit);
        }
        // Busy dies first, so that the writes queued next wait for them.
        for (die, &busy) in carried.die_busy_ns.iter().enumerate().filter(|&(_, &busy)| busy > 0) {
            let die = die as u32;
            self.flash.occupy_die(die, q.now());
            let generation = self.suspension.generation(die);
            q.schedule_at(busy, (self.drive, DeviceEvent::DieDone { die, generation }));
        }
        let flow = self.precondition_flow;
        for write in carried.writes {
            let bytes = self.page_bytes as u32;
            let medium = NvmePriority::Medium;
            match write {
                CarriedWrite::Placed { ppa, lpa } => {
                    let tx =
                        self.new_transaction(FlashOp::Program, Purpose::UserWrite, ppa, lpa, bytes, NONE, flow, medium);
                    self.enqueue(q, tx);
                }
                CarriedWrite::Unplaced { lpa } => {
                    let tx =
                        self.new_transaction(FlashOp::Program, Purpose::UserWrite, 0, lpa, bytes, NONE, flow, medium);
                    self.place_write(q, tx);
                }
                CarriedWrite::GcMove { ppa, lpa, unit } => self.resume_carried_move(q, unit, ppa, lpa),
            }
        }
        if !carried.die_busy_ns.is_empty() {
            // Jobs left unfinished resume; a plane whose job ended at the cut starts its next one if it needs it.
            for unit in 0..self.gc_unread.len() as u32 {
                if !self.resume_carried_job(q, unit) {
                    self.maybe_collect(q, unit);
                }
            }
        }
        self.preload_write_buffer(q);
    }
}
