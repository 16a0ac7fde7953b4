//! The drive of each I/O of a flow on a list of drives (`flow.device = "nvme0:nvme1"`): fio's files of one
//! job served in `file_service_type` order (fio io_u.c, `__get_next_file`, `get_next_file_rr`,
//! `get_next_file_rand`, `set_io_u_file`). Each job keeps its own choice, as each fio job does: the file it is
//! on, the I/Os left before it picks again (`file_service_left`), where round robin goes next (`next_file`),
//! and, for `random`, a random stream of its own (`next_file_state`).
//!
//! A file is done when a sequential flow's next I/O no longer fits in the flow's region on it (fio's
//! `fill_io_u` fails; `set_io_u_file` closes the file and marks it done), and the pickers skip done files.
//! With every file done, a time-based fio job starts its files over (`do_io` ends, the job loops,
//! `clear_io_state` clears each file's done flag and reopening resets its `last_pos`); the runs here are time
//! based (`run.duration`, `runtime`), so the flow rewinds all files then. A random flow's files are never done:
//! with `time_based`, fio resets a file's random map when it is full (`get_next_rand_block`) and goes on.
//! With one file there is nothing to choose, and it is never done either: fio rewinds a time-based job's only
//! file at its end (`get_next_seq_offset`, `nr_files == 1`), as the flow's single stream always did.

use rand::RngExt;

use crate::config::scenario::FlowSpec;
use crate::config::target::{file_service_of, target_of, FileService, FileServiceKind, Storage};
use crate::engine::{stream_rng, SimRng};

/// One job's file choice.
struct JobFiles {
    /// The file of its last choice (`file_service_file`), if still open (not done).
    current: Option<u32>,
    /// I/Os it issues to `current` before it picks again (`file_service_left`).
    left: u32,
    /// Where round robin looks next (`next_file`).
    next_file: u32,
    /// `random`'s stream.
    rng: Option<SimRng>,
}

/// A flow's files (drives) and its jobs' choices among them.
pub(super) struct Files {
    /// Each file's drive (a drive index, or `MD_VOLUME`).
    drives: Vec<u32>,
    service: FileService,
    /// By job; empty with one file.
    jobs: Vec<JobFiles>,
    /// By file: done (see the module's doc).
    done: Vec<bool>,
}

impl Files {
    /// The files of the flow `spec` on `storage`, its `jobs` choosing among them, and the bytes each file holds:
    /// each drive of a list is one of fio's files, of the smallest drive's size; the md volume one of its size.
    pub(super) fn for_flow(
        spec: &FlowSpec,
        storage: &Storage,
        jobs: u32,
        seed: u64,
        stream: &str,
    ) -> Result<(Files, u64), String> {
        let target =
            target_of(spec, storage.count()).map_err(|what| format!("flow \"{}\": device: {what}", spec.name))?;
        let service =
            file_service_of(spec).map_err(|what| format!("flow \"{}\": file_service_type: {what}", spec.name))?;
        Ok((Files::new(target.files(), service, jobs, seed, stream), storage.capacity(&target)))
    }

    /// `drives` served to `jobs` jobs as `service` says; `random` draws from `stream:files:JOB`.
    pub(super) fn new(drives: Vec<u32>, service: FileService, jobs: u32, seed: u64, stream: &str) -> Files {
        let jobs = match drives.len() {
            1 => Vec::new(),
            _ => (0..jobs)
                .map(|job| JobFiles {
                    current: None,
                    left: 0,
                    next_file: 0,
                    rng: (service.kind == FileServiceKind::Random)
                        .then(|| stream_rng(seed, &format!("{stream}:files:{job}"))),
                })
                .collect(),
        };
        let done = vec![false; drives.len()];
        Files { drives, service, jobs, done }
    }

    /// One file, on `drive`.
    pub(super) fn single(drive: u32) -> Files {
        Files::new(vec![drive], FileService::default(), 1, 0, "")
    }

    /// How many files (drives) the flow has.
    pub(super) fn count(&self) -> usize {
        self.drives.len()
    }

    /// The drive of `file`.
    pub(super) fn drive(&self, file: usize) -> u32 {
        self.drives[file]
    }

    /// The file `job`'s next I/O (or sync) goes to (`__get_next_file`): its current file while the service
    /// keeps it, else a new pick, never a done file.
    pub(super) fn next(&mut self, job: u32) -> usize {
        if self.drives.len() == 1 {
            return 0;
        }
        let n = self.drives.len() as u32;
        let j = &mut self.jobs[job as usize];
        if let Some(file) = j.current.filter(|&f| !self.done[f as usize]) {
            if self.service.kind == FileServiceKind::Sequential {
                return file as usize;
            }
            if j.left > 0 {
                j.left -= 1;
                return file as usize;
            }
        }
        let file = match &mut j.rng {
            // `get_next_file_rand`: draw until a file that is not done (`set_done` keeps one).
            Some(rng) => loop {
                let f = rng.random_range(0..n);
                if !self.done[f as usize] {
                    break f;
                }
            },
            // `get_next_file_rr`: from `next_file` on, the first file that is not done.
            None => loop {
                let f = j.next_file;
                j.next_file = (f + 1) % n;
                if !self.done[f as usize] {
                    break f;
                }
            },
        };
        j.current = Some(file);
        j.left = self.service.switch_after - 1;
        file as usize
    }

    /// A sequential I/O no longer fits on `file`: it is done. True when that was the last file not done: then
    /// all start over (the caller rewinds their cursors), each job picking afresh.
    pub(super) fn set_done(&mut self, file: usize) -> bool {
        self.done[file] = true;
        if self.done.iter().any(|&d| !d) {
            return false;
        }
        self.done.iter_mut().for_each(|d| *d = false);
        self.jobs.iter_mut().for_each(|j| j.current = None);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(n: u32, kind: FileServiceKind, switch_after: u32, jobs: u32) -> Files {
        Files::new((0..n).map(|d| 10 + d).collect(), FileService { kind, switch_after }, jobs, 1, "flow:f")
    }

    fn picks(f: &mut Files, job: u32, count: usize) -> Vec<usize> {
        (0..count).map(|_| f.next(job)).collect()
    }

    #[test]
    fn round_robin_takes_the_files_in_turn_switching_after_n() {
        let mut f = files(3, FileServiceKind::RoundRobin, 1, 1);
        assert_eq!(picks(&mut f, 0, 7), [0, 1, 2, 0, 1, 2, 0]);
        assert_eq!(f.drive(2), 12);
        let mut f = files(3, FileServiceKind::RoundRobin, 4, 1);
        assert_eq!(picks(&mut f, 0, 13), [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 0]);
    }

    #[test]
    fn each_job_keeps_its_own_turn() {
        let mut f = files(3, FileServiceKind::RoundRobin, 1, 2);
        assert_eq!([f.next(0), f.next(0), f.next(1), f.next(0), f.next(1)], [0, 1, 0, 2, 1]);
    }

    #[test]
    fn round_robin_skips_done_files_until_all_are_done() {
        let mut f = files(3, FileServiceKind::RoundRobin, 1, 1);
        assert_eq!(f.next(0), 0);
        assert!(!f.set_done(1));
        assert_eq!(picks(&mut f, 0, 4), [2, 0, 2, 0]);
        assert!(!f.set_done(0));
        assert_eq!(picks(&mut f, 0, 2), [2, 2]);
        assert!(f.set_done(2));
        assert_eq!(picks(&mut f, 0, 3), [0, 1, 2]);
    }

    #[test]
    fn sequential_stays_on_a_file_until_it_is_done() {
        let mut f = files(3, FileServiceKind::Sequential, 4, 1);
        assert_eq!(picks(&mut f, 0, 9), [0; 9]);
        assert!(!f.set_done(0));
        assert_eq!(picks(&mut f, 0, 5), [1; 5]);
        assert!(!f.set_done(1));
        assert_eq!(f.next(0), 2);
        assert!(f.set_done(2));
        assert_eq!(picks(&mut f, 0, 3), [0; 3]);
    }

    #[test]
    fn random_spreads_uniformly_keeping_each_pick_for_n() {
        let mut f = files(4, FileServiceKind::Random, 1, 1);
        let mut counts = [0u32; 4];
        picks(&mut f, 0, 8000).into_iter().for_each(|file| counts[file] += 1);
        // Binomial(8000, 1/4): sd ~39; 5 sd.
        assert!(counts.iter().all(|&c| c.abs_diff(2000) < 200), "{counts:?}");
        let mut f = files(4, FileServiceKind::Random, 8, 1);
        let runs = picks(&mut f, 0, 800);
        assert!(runs.chunks(8).all(|run| run.iter().all(|&file| file == run[0])));
        assert!(runs.chunks(8).any(|run| run[0] != runs[0]));
        f.set_done(1);
        assert!(picks(&mut f, 0, 400).iter().all(|&file| file != 1));
    }

    #[test]
    fn one_file_is_always_chosen() {
        let mut f = Files::single(7);
        assert_eq!((f.count(), picks(&mut f, 0, 3), f.drive(0)), (1, vec![0, 0, 0], 7));
    }
}
