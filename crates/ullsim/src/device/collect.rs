//! Garbage collection's work through the device: a plane's job reads each valid page of its victim, writes
//! it to a free page of the same plane and, once every page has moved, erases the victim. Folding an SLC
//! cache's block into native blocks is the same job with an SLC-mode victim (`ftl/slc.rs`).
//!
//! A moved page's data waits in the controller's DRAM between its read and its program, so a job reads
//! ahead at most `device.ftl.gc_read_ahead` pages (the page being programmed and the next): reads are much
//! shorter than programs, so that keeps the plane's programs back to back without holding a whole victim
//! block's data (hundreds of MB over a drive's planes) in a buffer no controller has. 0 reads every page at
//! once, as MQSim does. A page the host overwrote before its turn is not read at all.

use super::flash::FlashOp;
use super::transaction::{Purpose, Transaction, NONE};
use super::{Device, DriveEvent};
use crate::engine::Scheduler;
use crate::request::NvmePriority;

impl Device {
    /// A GC transaction of plane `t.link`'s job finished.
    pub(super) fn finish_gc_step(&mut self, q: &mut impl Scheduler<DriveEvent>, t: &Transaction) {
        let unit = t.link; // the victim's plane
        match t.op {
            FlashOp::Read => match self.ftl.relocate(t.lpa, t.ppa) {
                Some(new_ppa) => self.queue_gc_work(q, FlashOp::Program, new_ppa, t.lpa, unit),
                None => {
                    self.gc_buffered[unit as usize] -= 1;
                    self.read_ahead(q, unit, false);
                    self.gc_move_done(q, unit);
                }
            },
            FlashOp::Program => {
                self.gc_pages_programmed += 1;
                self.gc_buffered[unit as usize] -= 1;
                self.read_ahead(q, unit, false);
                self.gc_move_done(q, unit);
            }
            FlashOp::Erase => {
                self.ftl.erase_done(unit);
                self.maybe_collect(q, unit);
                // Space was freed: host writes that found none try again (in order; failures requeue).
                for _ in 0..self.waiting_for_space.len() {
                    let Some(tx) = self.waiting_for_space.pop_front() else { break };
                    self.place_write(q, tx);
                }
            }
        }
    }

    /// Start garbage collection on plane `unit` if it is short of free blocks, or folding of its SLC data if
    /// it wants that (`ftl/slc.rs`): both are jobs of this machinery, one per plane at a time.
    pub(super) fn maybe_collect(&mut self, q: &mut impl Scheduler<DriveEvent>, unit: u32) {
        if !self.ftl.gc_wanted(unit) && !self.ftl.fold_wanted(unit) {
            return;
        }
        let mut moves = std::mem::take(&mut self.gc_moves);
        if self.ftl.start_reclaim(unit, &mut moves).is_some() {
            debug_assert_eq!(self.gc_buffered[unit as usize], 0, "a new job starts with an empty GC buffer");
            self.run_job(q, unit, &moves);
        }
        self.gc_moves = moves;
    }

    /// Resume plane `unit`'s job carried over from the timed preconditioning (`timed_precondition.rs`), if
    /// it has one (false if not): its victim's valid pages are the moves left to read.
    pub(super) fn resume_carried_job(&mut self, q: &mut impl Scheduler<DriveEvent>, unit: u32) -> bool {
        let mut moves = std::mem::take(&mut self.gc_moves);
        let resumed = self.ftl.carried_job_moves(unit, &mut moves);
        if resumed {
            self.run_job(q, unit, &moves);
        }
        self.gc_moves = moves;
        resumed
    }

    /// Queue the program of a move of plane `unit`'s job carried over from the timed preconditioning: its
    /// page was read (the data waits in the GC buffer) and has its new home `ppa`.
    pub(super) fn resume_carried_move(&mut self, q: &mut impl Scheduler<DriveEvent>, unit: u32, ppa: u64, lpa: u64) {
        self.gc_buffered[unit as usize] += 1;
        self.queue_gc_work(q, FlashOp::Program, ppa, lpa, unit);
    }

    /// Run plane `unit`'s job, whose moves not yet read (all valid now) are `moves`: read them ahead, or erase
    /// the victim at once if no move is left at all.
    fn run_job(&mut self, q: &mut impl Scheduler<DriveEvent>, unit: u32, moves: &[(u64, u64)]) {
        self.gc_cost.job_started(unit);
        if self.ftl.gc_job(unit).is_some_and(|job| job.pending_moves == 0) {
            self.erase_victim(q, unit);
        }
        let unread = &mut self.gc_unread[unit as usize];
        debug_assert!(unread.is_empty(), "one GC job per plane");
        unread.extend(moves.iter().rev());
        self.read_ahead(q, unit, true);
    }

    /// Read plane `unit`'s next moves while its GC buffer has room; moves whose page the host overwrote
    /// since the job listed them are done without a read (`just_listed`: the job listed them now, all valid,
    /// so the map need not be looked up again).
    fn read_ahead(&mut self, q: &mut impl Scheduler<DriveEvent>, unit: u32, just_listed: bool) {
        let u = unit as usize;
        while self.gc_read_ahead == 0 || self.gc_buffered[u] < self.gc_read_ahead {
            let Some((ppa, lpa)) = self.gc_unread[u].pop() else { return };
            if !just_listed && self.ftl.lookup(lpa) != Some(ppa) {
                self.gc_move_done(q, unit);
                continue;
            }
            self.gc_buffered[u] += 1;
            self.queue_gc_work(q, FlashOp::Read, ppa, lpa, unit);
        }
    }

    fn gc_move_done(&mut self, q: &mut impl Scheduler<DriveEvent>, unit: u32) {
        if self.ftl.gc_move_done(unit) {
            self.erase_victim(q, unit);
        }
    }

    fn erase_victim(&mut self, q: &mut impl Scheduler<DriveEvent>, unit: u32) {
        let job = self.ftl.gc_job(unit).expect("erase without a GC job");
        let ppa = job.victim * self.flash.geometry().pages_per_block as u64;
        self.queue_gc_work(q, FlashOp::Erase, ppa, 0, unit);
    }

    /// Queue one step of plane `unit`'s GC job: a page read or program of a move, or the victim's erase.
    fn queue_gc_work(&mut self, q: &mut impl Scheduler<DriveEvent>, op: FlashOp, ppa: u64, lpa: u64, unit: u32) {
        let bytes = if op == FlashOp::Erase { 0 } else { self.page_bytes as u32 };
        let tx = self.new_transaction(op, Purpose::Gc, ppa, lpa, bytes, NONE, NONE, NvmePriority::Medium);
        self.txs[tx].link = unit; // the victim's plane
        if op == FlashOp::Program {
            self.queue_program(q, tx);
        } else {
            self.enqueue(q, tx);
        }
    }
}
