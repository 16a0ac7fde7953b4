//! The SLC cache's part in the device (the region itself is `ftl/slc.rs`): pages of SLC-mode blocks read and
//! program at `device.slc.read_ns` / `program_ns`, and a drive with no command inside for `fold_idle_ns`
//! folds its SLC data. The idle timer costs one event per idle stretch, and nothing without an SLC cache.

use super::flash::FlashOp;
use super::transaction::{Purpose, TxId};
use super::{Device, DeviceEvent, DriveEvent};
use crate::config::device::DeviceConfig;
use crate::engine::{Scheduler, Time};

/// The SLC cache's timing (present only when `device.slc.enabled`).
#[derive(Debug, Clone, Copy)]
pub(super) struct SlcTiming {
    read_ns: Time,
    program_ns: Time,
    idle_ns: Time,
    /// Commands that arrived so far: an idle timer armed before the latest arrival is stale.
    arrivals: u32,
    /// The region starts exhausted (`device.ftl.precondition_slc_exhausted`): the idle timer runs from time 0,
    /// so that a drive idle from the start folds and takes SLC writes again as after any other pause.
    exhausted_at_start: bool,
}

impl SlcTiming {
    pub(super) fn new(cfg: &DeviceConfig) -> Option<SlcTiming> {
        cfg.slc.enabled.then_some(SlcTiming {
            read_ns: cfg.slc.read_ns.0,
            program_ns: cfg.slc.program_ns.0,
            idle_ns: cfg.slc.fold_idle_ns.0,
            arrivals: 0,
            exhausted_at_start: cfg.ftl.precondition_slc_exhausted,
        })
    }
}

impl Device {
    /// Mean array time of `batch` (an `op` whose native time is `native_ns`): the SLC time when every page
    /// of it is in an SLC-mode block (a multi-plane operation runs in one mode; a mixed batch takes the
    /// native time). Translation pages are not in the data area: mapping reads keep the native time.
    pub(super) fn array_ns(&self, op: FlashOp, native_ns: Time, batch: &[TxId]) -> Time {
        let Some(slc) = &self.slc else { return native_ns };
        let in_slc = |&tx: &TxId| {
            let t = &self.txs[tx];
            t.purpose != Purpose::MapRead && self.ftl.is_slc_page(t.ppa)
        };
        match op {
            FlashOp::Read if batch.iter().all(in_slc) => slc.read_ns,
            FlashOp::Program if batch.iter().all(in_slc) => slc.program_ns,
            _ => native_ns,
        }
    }

    /// A command arrived: the drive is not idle.
    pub(super) fn slc_command_arrived(&mut self) {
        if let Some(slc) = &mut self.slc {
            slc.arrivals = slc.arrivals.wrapping_add(1);
            self.ftl.slc_drive_busy();
        }
    }

    /// Time 0: a drive whose region starts exhausted arms its idle timer (one that starts usable has nothing
    /// to fold, and waits for its first completion).
    pub(super) fn slc_start(&mut self, q: &mut impl Scheduler<DriveEvent>) {
        if self.slc.is_some_and(|slc| slc.exhausted_at_start) {
            self.slc_arm_idle(q);
        }
    }

    /// A completion was posted: if the drive is now empty, check again after `fold_idle_ns`.
    pub(super) fn slc_arm_idle(&mut self, q: &mut impl Scheduler<DriveEvent>) {
        if let Some(slc) = &self.slc {
            if self.outstanding == 0 {
                let generation = slc.arrivals;
                q.schedule_at(q.now() + slc.idle_ns, (self.drive, DeviceEvent::SlcIdle { generation }));
            }
        }
    }

    /// The idle timer armed after arrival number `generation` fired: if nothing arrived since, fold.
    pub(super) fn slc_idle(&mut self, q: &mut impl Scheduler<DriveEvent>, generation: u32) {
        if self.slc.is_none_or(|slc| slc.arrivals != generation) || self.outstanding != 0 {
            return;
        }
        self.ftl.slc_drive_idle();
        for unit in 0..self.flash.geometry().planes() {
            self.maybe_collect(q, unit);
        }
    }
}
