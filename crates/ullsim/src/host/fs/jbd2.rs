//! The JBD2 journal thread: commits the running transaction when an fsync asks for it (or every 5 s,
//! `commit_interval`), phase by phase as ext4's `data=ordered` mode orders them (FastResponse, Fig. 3):
//! T_D2 writes the dirty data of every file in the ordered list and waits; T_JD writes the descriptor and
//! metadata blocks to the log and waits; T_JC writes the commit block with PREFLUSH+FUA and waits. Then it
//! wakes every fsync that waited for the commit. fsyncs that ask while a commit runs wait for the next.
//!
//! AIOS's asynchronous commit (Lee et al., ATC'19, §4.3), when an `O_AIOS` fsync asks: its data writes are
//! in flight already (the caller submitted them without waiting), the thread submits the ordered data
//! and the log blocks together, builds the commit block while they are in flight, waits for all of them
//! and the caller's data, then writes the commit block as above. T_D2 then covers the overlapped data
//! and log writes, and T_JD is 0.

use crate::engine::Time;
use crate::host::cpu::TaskId;
use crate::host::fs::FileSystem;
use crate::host::syscall::fs_step::FsStep;

/// JBD2's `commit_interval`: 5 s.
pub const COMMIT_INTERVAL_NS: Time = 5_000_000_000;

/// What the thread did last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    /// AIOS: the ordered data and the log blocks are in flight together; then the commit block is built.
    OverlapSubmitted,
    OverlapBuilt,
    OverlapDone,
    DataSubmitted,
    DataDone,
    LogSubmitted,
    LogDone,
    FlushSubmitted,
    FlushDone,
    CommitSubmitted,
    CommitDone,
}

/// Times of the last commit's phases, ns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CommitTimes {
    /// When the commit started running on a core.
    pub started: Time,
    pub d2_ns: Time,
    pub jd_ns: Time,
    pub jc_ns: Time,
    /// When it woke its waiters.
    pub done: Time,
}

/// The journal thread's program.
pub struct Jbd2 {
    phase: Phase,
    /// fsyncs waiting for the commit that runs, and for the next one.
    waiting_current: Vec<TaskId>,
    waiting_next: Vec<TaskId>,
    /// Files of the AIOS fsyncs waiting for the next commit, whose data they did not wait for: the next
    /// commit overlaps its writes with theirs.
    aios_files_next: Vec<u32>,
    /// The flow whose fsync asked for the commit (the journal blocks' owner in the device's counts).
    flow: u32,
    /// A critical task waits for the commit that runs, and for the next one: the commit's journal blocks
    /// carry the workload attribute (FastResponse §4.4: under B-Opt "T_JD and T_JC are reduced" as critical
    /// requests; the other files' ordered data, T_D2, is not theirs and stays throttled).
    critical_current: bool,
    critical_next: bool,
    metadata_blocks: u64,
    /// The files whose data the commit's first phase waits for.
    ordered_files: Vec<u32>,
    phase_started: Time,
    times: CommitTimes,
}

impl Jbd2 {
    pub fn new() -> Jbd2 {
        Jbd2 {
            phase: Phase::Idle,
            waiting_current: Vec::new(),
            waiting_next: Vec::new(),
            aios_files_next: Vec::new(),
            flow: 0,
            critical_current: false,
            critical_next: false,
            metadata_blocks: 0,
            ordered_files: Vec::new(),
            phase_started: 0,
            times: CommitTimes::default(),
        }
    }

    /// Task `task` (of `flow`, `critical` or not) waits for the running transaction to commit.
    /// `aios_file`: the file of an AIOS fsync, whose data writes are still in flight (the commit waits for
    /// them).
    pub fn request(&mut self, task: TaskId, flow: u32, critical: bool, aios_file: Option<u32>) {
        if self.waiting_next.is_empty() {
            self.flow = flow;
        }
        self.waiting_next.push(task);
        self.critical_next |= critical;
        if let Some(file) = aios_file {
            if !self.aios_files_next.contains(&file) {
                self.aios_files_next.push(file);
            }
        }
    }

    /// The commit that runs serves a critical task: its journal blocks are critical.
    pub fn serves_critical(&self) -> bool {
        self.critical_current
    }

    /// The times of the commit that finished last.
    pub fn last_commit(&self) -> CommitTimes {
        self.times
    }

    /// The tasks the commit that just finished releases (taken once, by the runner, at [`FsStep::Done`]).
    pub fn take_released(&mut self) -> Vec<TaskId> {
        std::mem::take(&mut self.waiting_current)
    }

    /// The next step at `now` on `core`; `commit_cpu_ns` is the thread's CPU work to set a commit up.
    /// [`FsStep::Done`] means a commit just ended: the runner wakes [`Jbd2::take_released`] and asks again.
    pub fn next(&mut self, fs: &mut FileSystem, now: Time, core: u32, commit_cpu_ns: Time) -> FsStep {
        let mut bios = Vec::new();
        match self.phase {
            Phase::Idle => {
                let next_periodic = self.times.done + COMMIT_INTERVAL_NS;
                if self.waiting_next.is_empty() && !(fs.journal.has_any_file() && now >= next_periodic) {
                    return FsStep::Idle(fs.journal.has_any_file().then_some(next_periodic));
                }
                self.waiting_current = std::mem::take(&mut self.waiting_next);
                self.critical_current = std::mem::take(&mut self.critical_next);
                self.times = CommitTimes { started: now, ..CommitTimes::default() };
                self.phase_started = now;
                let plan = fs.journal.commit();
                fs.counters.journal_commits += 1;
                // T_LOCKED to T_FLUSH, the first part of the set-up: handles that start meanwhile sleep.
                fs.locks.lock_transaction(core, now, fs.locks.commit_locked_ns().min(commit_cpu_ns));
                self.metadata_blocks = plan.descriptor_blocks + plan.metadata_blocks.len() as u64;
                for &file in &plan.ordered_files {
                    for (first, count) in fs.allocated_dirty_ranges(file) {
                        fs.data_bios(file, first, count, false, &mut bios);
                    }
                }
                self.ordered_files = plan.ordered_files;
                if !self.aios_files_next.is_empty() {
                    // AIOS: the log blocks go with the data; the commit block is built while they fly.
                    for file in self.aios_files_next.drain(..) {
                        if !self.ordered_files.contains(&file) {
                            self.ordered_files.push(file);
                        }
                    }
                    fs.log_bios(self.flow, self.metadata_blocks, false, &mut bios);
                    self.phase = Phase::OverlapSubmitted;
                    return FsStep::submit(bios);
                }
                self.phase = Phase::DataSubmitted;
                FsStep::Submit { cpu_ns: commit_cpu_ns, bios }
            }
            Phase::OverlapSubmitted => {
                self.phase = Phase::OverlapBuilt;
                FsStep::Work(commit_cpu_ns)
            }
            Phase::OverlapBuilt => {
                // The data (the callers' too, whoever writes it) and the log blocks.
                self.phase = Phase::OverlapDone;
                FsStep::WaitFiles(std::mem::take(&mut self.ordered_files))
            }
            Phase::OverlapDone => {
                self.times.d2_ns = now - self.phase_started;
                self.phase_started = now;
                self.phase = Phase::LogDone;
                self.next(fs, now, core, commit_cpu_ns)
            }
            Phase::DataSubmitted => {
                // Wait for the ordered files' data, whoever is writing it (the flusher's writeback too).
                self.phase = Phase::DataDone;
                FsStep::WaitFiles(std::mem::take(&mut self.ordered_files))
            }
            Phase::DataDone => {
                self.times.d2_ns = now - self.phase_started;
                self.phase_started = now;
                fs.log_bios(self.flow, self.metadata_blocks, false, &mut bios);
                self.phase = Phase::LogSubmitted;
                FsStep::submit(bios)
            }
            Phase::LogSubmitted => {
                self.phase = Phase::LogDone;
                FsStep::WaitBios
            }
            Phase::LogDone => {
                self.times.jd_ns = now - self.phase_started;
                self.phase_started = now;
                // The commit block goes after a PREFLUSH of the drive's cache, with FUA; the block layer drops
                // both for a drive without a volatile cache.
                fs.preflush(self.flow, &mut bios);
                if bios.is_empty() {
                    fs.log_bios(self.flow, 1, true, &mut bios);
                    self.phase = Phase::CommitSubmitted;
                } else {
                    self.phase = Phase::FlushSubmitted;
                }
                FsStep::submit(bios)
            }
            Phase::FlushSubmitted => {
                self.phase = Phase::FlushDone;
                FsStep::WaitBios
            }
            Phase::FlushDone => {
                fs.log_bios(self.flow, 1, true, &mut bios);
                self.phase = Phase::CommitSubmitted;
                FsStep::submit(bios)
            }
            Phase::CommitSubmitted => {
                self.phase = Phase::CommitDone;
                FsStep::WaitBios
            }
            Phase::CommitDone => {
                self.times.jc_ns = now - self.phase_started;
                self.times.done = now;
                self.phase = Phase::Idle;
                FsStep::Done
            }
        }
    }
}

impl Default for Jbd2 {
    fn default() -> Self {
        Jbd2::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::host::FsConfig;
    use crate::config::Scenario;
    use crate::host::block::LineTransfer;
    use crate::request::Op;

    fn file_system(volatile_cache: bool) -> FileSystem {
        let text = "[device]\npreset = \"optane-ull\"\n[[flow]]\nname = \"w\"\nrw = \"write\"\nbs = \"4k\"\n\
                    ioengine = \"psync\"\ndirect = 0\nfsync = 1\nsize = \"1m\"\n";
        let s = Scenario::from_toml_str(text, "t", std::path::Path::new("."), &[]).expect("loads");
        FileSystem::new(&s.flows, 1 << 30, &FsConfig::default(), volatile_cache, LineTransfer::uniform(40))
    }

    /// Run the thread until it waits; the runner's part (waits complete at once) is played here.
    fn commit_steps(jbd2: &mut Jbd2, fs: &mut FileSystem) -> Vec<FsStep> {
        let mut out = Vec::new();
        for now in 1..=20 {
            let step = jbd2.next(fs, now * 1_000, 0, 3_000);
            let done = matches!(step, FsStep::Done | FsStep::Idle(_));
            out.push(step);
            if done {
                break;
            }
        }
        out
    }

    #[test]
    fn a_commit_writes_ordered_data_then_the_log_then_preflush_and_the_commit_block() {
        let mut fs = file_system(true);
        // Two pages dirtied; the flusher writes page 0 back (allocating it: ordered data), then it is
        // dirtied again. Page 1 is not allocated yet (delayed allocation): not the commit's business.
        fs.write(0, 0, 2, true, 0);
        let mut flusher_bios = Vec::new();
        fs.data_bios(0, 0, 1, true, &mut flusher_bios);
        fs.write(0, 0, 1, true, 10);
        let mut jbd2 = Jbd2::new();
        jbd2.request(7, 0, false, None);
        let steps = commit_steps(&mut jbd2, &mut fs);
        let bios = |i: usize| match &steps[i] {
            FsStep::Submit { bios, .. } => bios.clone(),
            other => panic!("step {i}: expected a submission, got {other:?}"),
        };
        // T_D2: the allocated dirty page, then a wait for all of the file's writes (the flusher's too).
        assert_eq!(bios(0).iter().map(|b| (b.op, b.first_page, b.len)).collect::<Vec<_>>(), [(Op::Write, 0, 4096)]);
        assert_eq!(steps[1], FsStep::WaitFiles(vec![0]));
        // T_JD: a descriptor and the inode table, block bitmap and group descriptor blocks, to the log.
        let log = bios(2);
        assert_eq!(log.iter().map(|b| u64::from(b.len)).sum::<u64>(), 4 * 4096);
        assert!(log.iter().all(|b| b.op == Op::Write && !b.fua && b.file == u32::MAX));
        assert_eq!(steps[3], FsStep::WaitBios);
        // T_JC: PREFLUSH, wait, then the commit block with FUA, wait.
        assert_eq!(bios(4).iter().map(|b| b.op).collect::<Vec<_>>(), [Op::Flush]);
        assert_eq!(steps[5], FsStep::WaitBios);
        let commit = bios(6);
        assert!(commit.len() == 1 && commit[0].fua && commit[0].len == 4096);
        assert_eq!((&steps[7], &steps[8]), (&FsStep::WaitBios, &FsStep::Done));
        assert_eq!(jbd2.take_released(), [7]);
        let t = jbd2.last_commit();
        assert!(t.started < t.done && t.d2_ns > 0 && t.jd_ns > 0 && t.jc_ns > 0);
        // Nothing left to commit: it sleeps without a timer.
        assert_eq!(jbd2.next(&mut fs, 30_000, 0, 3_000), FsStep::Idle(None));
    }

    #[test]
    fn a_drive_without_a_volatile_cache_gets_no_preflush_and_no_fua() {
        let mut fs = file_system(false);
        fs.write(0, 0, 1, true, 0);
        let mut jbd2 = Jbd2::new();
        jbd2.request(3, 0, false, None);
        let steps = commit_steps(&mut jbd2, &mut fs);
        let submitted: Vec<_> = steps
            .iter()
            .filter_map(|s| if let FsStep::Submit { bios, .. } = s { Some(bios.clone()) } else { None })
            .flatten()
            .collect();
        assert!(submitted.iter().all(|b| b.op != Op::Flush && !b.fua), "{submitted:?}");
        assert_eq!(steps.last(), Some(&FsStep::Done));
    }

    #[test]
    fn an_aios_commit_writes_the_log_with_the_data_and_the_commit_block_after_both() {
        let mut fs = file_system(true);
        // The AIOS fsync's file 0 has its data in flight (it did not wait); file 0's page was allocated, so
        // the transaction holds its metadata.
        fs.write(0, 0, 1, true, 0);
        let mut caller_bios = Vec::new();
        fs.data_bios(0, 0, 1, false, &mut caller_bios);
        let mut jbd2 = Jbd2::new();
        jbd2.request(7, 0, false, Some(0));
        let steps = commit_steps(&mut jbd2, &mut fs);
        // The log blocks go first, with no wait for the data before them; the commit block is built (CPU
        // work) while they fly; then one wait for them and for every write of the caller's file.
        let FsStep::Submit { cpu_ns: 0, bios } = &steps[0] else { panic!("{:?}", steps[0]) };
        assert!(!bios.is_empty() && bios.iter().all(|b| b.file == u32::MAX && !b.fua), "{bios:?}");
        assert_eq!(steps[1], FsStep::Work(3_000));
        assert_eq!(steps[2], FsStep::WaitFiles(vec![0]));
        // Then as ext4: PREFLUSH, wait, the commit block with FUA, wait.
        let FsStep::Submit { bios, .. } = &steps[3] else { panic!("{:?}", steps[3]) };
        assert_eq!(bios.iter().map(|b| b.op).collect::<Vec<_>>(), [Op::Flush]);
        let FsStep::Submit { bios, .. } = &steps[5] else { panic!("{:?}", steps[5]) };
        assert!(bios.len() == 1 && bios[0].fua);
        assert_eq!(steps.last(), Some(&FsStep::Done));
        let t = jbd2.last_commit();
        assert!(t.d2_ns > 0 && t.jd_ns == 0 && t.jc_ns > 0, "{t:?}");
        // The next commit, asked for by an ordinary fsync, waits for the data before the log again.
        fs.write(0, 1, 1, true, 40_000);
        jbd2.request(8, 0, false, None);
        let steps = commit_steps(&mut jbd2, &mut fs);
        assert!(matches!(steps[1], FsStep::WaitFiles(_)), "{steps:?}");
    }
}
