//! `flush_every = N`, fio's `fsync=N` at the device: each job of a closed-loop flow issues an NVMe Flush
//! after every N of its writes. Once the Nth write is issued the job issues nothing more; when its last I/O
//! in flight completes it issues the flush, and when the flush completes it fills its `iodepth` again. So the
//! flush covers exactly the job's writes before it, all completed (as fio quiesces before an fsync), and no
//! scheduler can move it ahead of them.
//!
//! `fsync = N` or `fdatasync = N` on an open-loop flow (`rate_iops`; a blocking engine, which files need):
//! each job's Nth write arrival brings its sync call with it, arriving at the same time. The job's calls
//! run one after the other, so the sync starts once the write returned; its latency runs from the arrival,
//! the write's time included (db_bench's `fillsync` at a fixed rate: an update is a WAL append and an fsync).

use super::files::Files;
use super::queue::WorkloadQueue;
use super::{NewIo, Workload};
use crate::engine::Time;
use crate::request::Op;

impl Workload {
    /// After `flow`'s `job` issued an I/O of `op` that arrived at `arrived_at`: an open-loop flow that syncs
    /// issues the sync call with every Nth write.
    pub(super) fn sync_with_write(&mut self, flow: u32, job: u32, op: Op, arrived_at: Time, out: &mut Vec<NewIo>) {
        let f = &mut self.flows[flow as usize];
        let Some(syncs) = &mut f.sync_on_arrival else { return };
        if op != Op::Write || !syncs.after_write(job) {
            return;
        }
        f.outstanding += 1;
        let drive = sync_drive(&mut f.files, job);
        out.push(NewIo { flow, job, drive, op: Op::Flush, offset: 0, len: 0, arrived_at, was_backlogged: false });
    }

    /// What `flush_every` makes `flow`'s `job` do after one of its I/Os (of `op`) completed: wait, issue the
    /// flush, or refill its `iodepth` after one. False when the job just goes on as the flow always does.
    pub(super) fn flush_after_completion(
        &mut self,
        flow: u32,
        job: u32,
        op: Op,
        q: &mut impl WorkloadQueue,
        out: &mut Vec<NewIo>,
    ) -> bool {
        let Some(fl) = &mut self.flows[flow as usize].flush else { return false };
        match fl.completed(job, op) {
            Next::Continue => false,
            Next::Wait => true,
            Next::Flush => {
                self.issue_flush(flow, job, q.now(), out);
                true
            }
            Next::Refill => {
                for _ in 0..fl.depth() {
                    self.continue_job(flow, job, q, out);
                }
                true
            }
        }
    }

    /// `job` of `flow` issues its flush now (`flush_every`), unless the flow's runtime is over. A flush does
    /// not count toward `number_ios`.
    fn issue_flush(&mut self, flow: u32, job: u32, now: Time, out: &mut Vec<NewIo>) {
        let f = &mut self.flows[flow as usize];
        let Some(fl) = &mut f.flush else { return };
        if now >= f.stop_ns {
            return;
        }
        fl.issued(job, Op::Flush);
        f.outstanding += 1;
        let drive = sync_drive(&mut f.files, job);
        out.push(NewIo { flow, job, drive, op: Op::Flush, offset: 0, len: 0, arrived_at: now, was_backlogged: false });
    }
}

/// The drive of `job`'s sync: fio gives a sync io_u its file as any other (io_u.c `get_io_u` → `set_io_u_file`
/// → `get_next_file`; `fill_io_u` returns before any offset for it), and `do_io_u_sync` (ioengines.c) fsyncs
/// that file. So on a list it goes where the job's next I/O would, and takes that turn of the
/// `file_service_type` (with round robin, the drive after the last write's); on the md volume, to the volume.
fn sync_drive(files: &mut Files, job: u32) -> u32 {
    let file = files.next(job);
    files.drive(file)
}

/// What a job does after one of its I/Os completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Issue as the flow always does (at once, or after its think time).
    Continue,
    /// Issue nothing: the job is waiting for its I/Os in flight, or for its flush.
    Wait,
    /// Issue the flush now: the writes it covers have all completed.
    Flush,
    /// The flush completed: issue up to `iodepth` I/Os again.
    Refill,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Phase {
    #[default]
    Issuing,
    /// The Nth write was issued: waiting for the job's I/Os in flight to complete.
    Draining,
    /// The flush is in flight.
    Flushing,
}

#[derive(Debug, Clone, Copy, Default)]
struct Job {
    /// Writes issued since the last flush.
    writes: u32,
    /// I/Os in flight (the flush included).
    outstanding: u32,
    phase: Phase,
}

/// The flush state of every job of one flow.
pub struct FlushEvery {
    every: u32,
    depth: u32,
    jobs: Vec<Job>,
}

impl FlushEvery {
    /// A flush after every `every` writes (>= 1) for each of `jobs` jobs keeping `depth` I/Os in flight.
    pub fn new(every: u32, depth: u32, jobs: u32) -> Self {
        FlushEvery { every: every.max(1), depth: depth.max(1), jobs: vec![Job::default(); jobs as usize] }
    }

    /// Whether `job` may issue a read or write now: it is not waiting for a flush, and (a think time that
    /// ends after a refill must not add one) it has fewer than `iodepth` I/Os in flight.
    pub fn may_issue(&self, job: u32) -> bool {
        let j = &self.jobs[job as usize];
        j.phase == Phase::Issuing && j.outstanding < self.depth
    }

    /// `job` issued an I/O of `op`.
    pub fn issued(&mut self, job: u32, op: Op) {
        let (every, j) = (self.every, &mut self.jobs[job as usize]);
        j.outstanding += 1;
        match op {
            Op::Read => {}
            Op::Write => {
                j.writes += 1;
                if j.writes >= every {
                    j.phase = Phase::Draining;
                }
            }
            Op::Flush => j.phase = Phase::Flushing,
        }
    }

    /// An I/O of `op` of `job` completed: what the job does next.
    pub fn completed(&mut self, job: u32, op: Op) -> Next {
        let j = &mut self.jobs[job as usize];
        j.outstanding -= 1;
        match (op, j.phase) {
            (Op::Flush, _) => {
                *j = Job::default();
                Next::Refill
            }
            (Op::Read | Op::Write, Phase::Issuing) => Next::Continue,
            (Op::Read | Op::Write, Phase::Draining) if j.outstanding == 0 => Next::Flush,
            (Op::Read | Op::Write, Phase::Draining | Phase::Flushing) => Next::Wait,
        }
    }

    /// I/Os a refilled job issues.
    pub fn depth(&self) -> u32 {
        self.depth
    }
}

/// Open-loop syncs: each job's writes since its last sync.
pub struct SyncOnArrival {
    every: u32,
    writes: Vec<u32>,
}

impl SyncOnArrival {
    /// A sync with every `every`th write (>= 1) of each of `jobs` jobs.
    pub fn new(every: u32, jobs: u32) -> Self {
        SyncOnArrival { every: every.max(1), writes: vec![0; jobs as usize] }
    }

    /// `job` issued a write: whether its sync goes with it.
    pub fn after_write(&mut self, job: u32) -> bool {
        let w = &mut self.writes[job as usize];
        *w += 1;
        if *w >= self.every {
            *w = 0;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_flushes_after_its_nth_write_completes_then_refills() {
        let mut f = FlushEvery::new(3, 2, 1);
        f.issued(0, Op::Write);
        f.issued(0, Op::Write);
        assert!(!f.may_issue(0), "two in flight at iodepth 2");
        assert_eq!(f.completed(0, Op::Write), Next::Continue);
        f.issued(0, Op::Write); // the third: draining
        assert!(!f.may_issue(0));
        assert_eq!(f.completed(0, Op::Write), Next::Wait, "one write still in flight");
        assert_eq!(f.completed(0, Op::Write), Next::Flush);
        f.issued(0, Op::Flush);
        assert!(!f.may_issue(0));
        assert_eq!(f.completed(0, Op::Flush), Next::Refill);
        assert!(f.may_issue(0));
        assert_eq!(f.depth(), 2);
    }

    #[test]
    fn reads_do_not_count_and_jobs_are_independent() {
        let mut f = FlushEvery::new(1, 1, 2);
        f.issued(0, Op::Read);
        assert_eq!(f.completed(0, Op::Read), Next::Continue);
        f.issued(1, Op::Write);
        assert!(f.may_issue(0) && !f.may_issue(1));
        assert_eq!(f.completed(1, Op::Write), Next::Flush);
    }
}
