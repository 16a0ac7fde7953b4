//! The full host's file-system side: it runs the file-system calls (`host/syscall/buffered.rs`,
//! `host/syscall/fsync.rs`) on the jobs' tasks and the file system's kernel threads (`host/fs/jbd2.rs`,
//! `host/fs/flusher.rs`) on tasks of their own, step by step, and routes the file system's bios through
//! the block layer and back. Only flows that use files (`direct = 0`, `fsync`, `fdatasync`) come here.

use std::collections::HashMap;

use super::lbio::LBIO_PER_CORE;
use super::*;
use crate::config::host::FsConfig;
use crate::host::fs::flusher::Flusher;
use crate::host::fs::jbd2::{CommitTimes, Jbd2};
use crate::host::fs::{Bio, FileSystem};
use crate::host::syscall::buffered::{self, Buffered, BufferedCosts};
use crate::host::syscall::fs_step::FsStep;
use crate::host::syscall::fsync::Fsync;
use crate::metrics::{FsyncPhases, Recorder};

/// ext4's default `journal_ioprio` level (best-effort 3, fs/ext4/super.c `DEFAULT_JOURNAL_IOPRIO`).
const EXT4_JOURNAL_IOPRIO_LEVEL: u8 = 3;

/// A file-system call in progress on a job's task.
#[derive(Debug, Clone, Copy)]
pub(super) enum FsCall {
    Buffered(Buffered),
    Fsync(Fsync),
}

/// Which kernel thread a task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Thread {
    Jbd2,
    Flusher,
}

/// A file-system bio in flight and the tasks waiting for it.
struct InFlight {
    bio: Bio,
    submitter: TaskId,
    /// The core whose LBIO ring holds its descriptor, if it went as LBIO.
    lbio_core: Option<u32>,
    /// Its submitter polls for it (Select-ISR's critical task).
    polled: bool,
    /// Other tasks waiting for it (`filemap_fdatawait` on its file): rarely any, so no allocation.
    also: Vec<TaskId>,
    /// A data write: its place in its file's list of writes in flight (taken out in O(1) when it completes,
    /// however many writes of the file are in flight).
    file_slot: Option<u32>,
}

/// What a task waits for in the file system.
#[derive(Debug, Clone, Copy, Default)]
struct TaskWait {
    /// File-system bios it waits for, and whether it waits until they complete.
    pending: u32,
    waits_bios: bool,
    /// Of its own bios in flight, those it polls for: when every bio it waits for is one, it spins.
    polled: u32,
    /// While it waits for the journal thread's commit: when it handed the commit over.
    handed_off: Option<Time>,
    /// The hand-off time and the times of the commit that released it.
    released_by: Option<(Time, CommitTimes)>,
}

/// Per flow: the fsync phases of its calls issued in the measurement window.
struct PhaseRecorders {
    d1: Recorder,
    d2: Recorder,
    jd: Recorder,
    jc: Recorder,
    sched: Recorder,
}

impl PhaseRecorders {
    fn new() -> Self {
        PhaseRecorders {
            d1: Recorder::new(),
            d2: Recorder::new(),
            jd: Recorder::new(),
            jc: Recorder::new(),
            sched: Recorder::new(),
        }
    }
}

/// The file system and what the host keeps to run it.
pub(super) struct FsHost {
    fs: FileSystem,
    jbd2: Jbd2,
    jbd2_task: TaskId,
    flusher: Flusher,
    flusher_task: TaskId,
    /// By request index: the file-system bio in flight with that id.
    bios: Vec<Option<InFlight>>,
    /// By file: its data writes in flight (what `filemap_fdatawait` waits for).
    writes_in_flight: HashMap<u32, Vec<ReqId>>,
    /// By task: what it waits for in the file system.
    tasks: Vec<TaskWait>,
    /// By flow: fsync (false) or fdatasync (true) for the flow's sync requests, if the flow syncs.
    datasync: Vec<Option<bool>>,
    prio: Vec<NvmePriority>,
    /// By flow: its files are open with `O_AIOS`.
    aios: Vec<bool>,
    /// By core: LBIO descriptors of its ring in flight.
    lbio_in_flight: Vec<u32>,
    /// By job: the file of its last write (what its fsync syncs).
    last_file: Vec<Option<u32>>,
    phases: Vec<PhaseRecorders>,
    costs: BufferedCosts,
    commit_cpu_ns: Time,
    /// `host.fs.fjournaling`: critical tasks' fsyncs commit their file themselves.
    fjournaling: bool,
    dirtiers: u32,
    warmup: Time,
}

impl FsHost {
    /// The file system for `flows`, with its two kernel threads added to `cpu` (free to run on any core).
    pub(super) fn new(
        flows: &[FlowSpec],
        cfg: &HostConfig,
        cpu: &mut Cpu,
        device: &Device,
        jobs: usize,
        warmup: Time,
    ) -> FsHost {
        let fs_cfg: &FsConfig = &cfg.fs;
        let all: Vec<u32> = (0..cfg.task_cores()).collect();
        let jbd2_task = cpu.add_task(all.clone(), false);
        let flusher_task = cpu.add_task(all, false);
        let line = crate::host::block::LineTransfer::of(&cfg.cpu);
        let mut fs =
            FileSystem::new(flows, device.logical_capacity_bytes(), fs_cfg, device.has_volatile_write_cache(), line);
        fs.locks.set_cpu_speed(cfg.cpu.speed);
        FsHost {
            fs,
            jbd2: Jbd2::new(),
            jbd2_task,
            flusher: Flusher::new(),
            flusher_task,
            bios: Vec::new(),
            writes_in_flight: HashMap::new(),
            // The threads are the last tasks added: every task exists by now.
            tasks: vec![TaskWait::default(); flusher_task as usize + 1],
            datasync: flows
                .iter()
                .map(|f| if f.fdatasync.is_some() { Some(true) } else { f.fsync.map(|_| false) })
                .collect(),
            prio: flows.iter().map(|f| f.prio).collect(),
            aios: flows.iter().map(|f| f.uses_aios(fs_cfg.aios)).collect(),
            lbio_in_flight: vec![0; cfg.cores as usize],
            last_file: vec![None; jobs],
            phases: flows.iter().map(|_| PhaseRecorders::new()).collect(),
            costs: BufferedCosts {
                entry_ns: cfg.cpu.syscall_entry_ns.0,
                fs_ns: cfg.cpu.fs_submit_ns.0,
                page_copy_ns: fs_cfg.page_copy_ns.0,
                page_alloc_ns: fs_cfg.page_alloc_ns.0,
                iommu_ns: cfg.nvme.iommu_map_ns.0 + cfg.nvme.iommu_unmap_ns.0,
            },
            commit_cpu_ns: fs_cfg.commit_cpu_ns.0,
            fjournaling: fs_cfg.fjournaling,
            dirtiers: flows.iter().filter(|f| !f.is_direct()).map(|f| f.numjobs.unwrap_or(1).max(1)).sum(),
            warmup,
        }
    }

    /// `task` reached a wait step: whether it must sleep (its bios, and for [`FsStep::WaitFiles`] every
    /// write in flight to those files, are not all done); if so it is marked as waiting for them.
    fn must_wait(&mut self, task: TaskId, step: FsStep) -> bool {
        if let FsStep::WaitFiles(files) = step {
            self.wait_for_files(task, &files);
        }
        let wait = self.tasks[task as usize].pending > 0;
        self.tasks[task as usize].waits_bios = wait;
        wait
    }

    /// `task` also waits for every data write in flight to `files`.
    fn wait_for_files(&mut self, task: TaskId, files: &[u32]) {
        for file in files {
            for &req in self.writes_in_flight.get(file).map_or(&[][..], Vec::as_slice) {
                let b = self.bios[req.index()].as_mut().expect("a write in flight is known");
                if b.submitter != task && !b.also.contains(&task) {
                    b.also.push(task);
                    self.tasks[task as usize].pending += 1;
                }
            }
        }
    }

    /// Bio `bio` went down as request `req` from `task` on `core` (polled by `task` if `polled`): `task`
    /// waits for it, and with AIOS it takes a descriptor of the core's LBIO ring if one is free. Returns
    /// whether it goes as LBIO.
    fn track(&mut self, req: ReqId, bio: &Bio, task: TaskId, core: u32, polled: bool) -> bool {
        let w = &mut self.tasks[task as usize];
        w.pending += 1;
        w.polled += u32::from(polled);
        if self.bios.len() <= req.index() {
            self.bios.resize_with(req.index() + 1, || None);
        }
        let mut lbio_core = None;
        if self.aios[bio.flow as usize] {
            if self.lbio_in_flight[core as usize] < LBIO_PER_CORE {
                self.lbio_in_flight[core as usize] += 1;
                self.fs.counters.lbio_commands += 1;
                lbio_core = Some(core);
            } else {
                self.fs.counters.lbio_ring_full += 1;
            }
        }
        let mut file_slot = None;
        if bio.op == Op::Write && bio.file != u32::MAX {
            let list = self.writes_in_flight.entry(bio.file).or_default();
            file_slot = Some(list.len() as u32);
            list.push(req);
        }
        self.bios[req.index()] =
            Some(InFlight { bio: *bio, submitter: task, lbio_core, polled, also: Vec::new(), file_slot });
        lbio_core.is_some()
    }

    /// The kernel threads' tasks.
    pub(super) fn threads(&self) -> [(TaskId, Thread); 2] {
        [(self.jbd2_task, Thread::Jbd2), (self.flusher_task, Thread::Flusher)]
    }

    /// The fsync phases of each flow, over the calls issued in the measurement window.
    pub(super) fn phases(&self) -> Vec<Option<FsyncPhases>> {
        self.phases
            .iter()
            .zip(&self.datasync)
            .map(|(p, syncs)| {
                syncs.map(|_| FsyncPhases {
                    count: p.d1.count(),
                    d1: p.d1.layer(),
                    d2: p.d2.layer(),
                    jd: p.jd.layer(),
                    jc: p.jc.layer(),
                    sched: p.sched.layer(),
                })
            })
            .collect()
    }

    pub(super) fn counters(&self) -> crate::host::fs::FsCounters {
        crate::host::fs::FsCounters { page_cache_steps: self.fs.cache.steps(), ..self.fs.counters }
    }

    pub(super) fn check_invariants(&self) -> Result<(), String> {
        // Every LBIO descriptor a core's ring counts as taken belongs to a bio in flight from that core.
        let mut taken = vec![0u32; self.lbio_in_flight.len()];
        for core in self.bios.iter().flatten().filter_map(|b| b.lbio_core) {
            taken[core as usize] += 1;
        }
        if taken != self.lbio_in_flight {
            return Err(format!("LBIO rings count {:?} in flight, the bios {taken:?}", self.lbio_in_flight));
        }
        self.fs.cache.check_invariants()
    }
}

impl FullHost {
    /// A direct write of a flow that uses files: it dirties the file's inode (and allocates past its end).
    pub(super) fn note_direct_write(&mut self, requests: &RequestArena, j: u32, req: ReqId) {
        let Some(fsh) = self.fs.as_deref_mut() else { return };
        let r = &requests[req];
        if r.op != Op::Write || fsh.datasync[r.flow as usize].is_none() {
            return;
        }
        let (file, first, count) = fsh.fs.locate(r.flow, r.offset, r.len);
        fsh.fs.write(file, first, count, false, 0);
        fsh.last_file[j as usize] = Some(file);
    }

    /// Job `j`'s task, holding its core, runs its file-system call (starting one if the application's next
    /// request needs one). False when it has none: the runner goes on with the job as usual.
    pub(super) fn step_fs_job(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        j: u32,
    ) -> bool {
        let now = q.now();
        let task = self.jobs[j as usize].task;
        let start = self.cpu.work_starts_at(task, now);
        if self.jobs[j as usize].fs_call.is_none() && !self.start_fs_call(requests, j, start) {
            return false;
        }
        if let Some(req) = self.jobs[j as usize].fs_req {
            // Its reads are done and it runs again (a later read's completion clears this).
            let s = &mut requests[req].stamps;
            if s.woken != 0 && s.running == 0 {
                s.running = start;
            }
        }
        let fsh = self.fs.as_deref_mut().expect("a file-system call has a file system");
        if fsh.tasks[task as usize].waits_bios || fsh.tasks[task as usize].handed_off.is_some() {
            // Run before what it waits for is done (woken, or back from preemption): wait again.
            self.wait_in_fs(q, j);
            return true;
        }
        loop {
            let fsh = self.fs.as_deref_mut().expect("checked");
            let job = &mut self.jobs[j as usize];
            let mut wake_flusher = false;
            let step = match job.fs_call.as_mut().expect("checked") {
                FsCall::Buffered(call) => {
                    let cx = buffered::Context {
                        now,
                        core: self.cpu.core_of(task),
                        costs: fsh.costs,
                        writeback_pages_per_s: fsh.flusher.pages_per_s(),
                        dirtiers: fsh.dirtiers,
                    };
                    call.next(&mut fsh.fs, &cx, &mut wake_flusher)
                }
                FsCall::Fsync(call) => call.next(&mut fsh.fs, now, fsh.costs.enter_ns()),
            };
            if wake_flusher {
                let flusher = fsh.flusher_task;
                if !fsh.tasks[flusher as usize].waits_bios {
                    self.timer_gen[flusher as usize] += 1;
                    self.cpu.wake(q, flusher);
                }
            }
            match step {
                FsStep::Work(ns) => {
                    self.jobs[j as usize].action = Action::None;
                    self.cpu.run(q, task, ns, Activity::Kernel);
                    return true;
                }
                FsStep::Submit { cpu_ns, bios } => {
                    let critical =
                        requests[self.jobs[j as usize].fs_req.expect("a call serves a request")].class.criticality
                            == Criticality::Critical;
                    let end = self.submit_fs_bios(q, requests, devices, task, &bios, critical, start + cpu_ns);
                    self.jobs[j as usize].action = Action::None;
                    self.cpu.run(q, task, end - start, Activity::Kernel);
                    return true;
                }
                FsStep::WaitBios | FsStep::WaitFiles(_) => {
                    if !fsh.must_wait(task, step) {
                        continue;
                    }
                    self.wait_in_fs(q, j);
                    return true;
                }
                FsStep::CommitAndWait(aios_file) => {
                    let flow = self.jobs[j as usize].flow;
                    let req = self.jobs[j as usize].fs_req.expect("a call serves a request");
                    let critical = requests[req].class.criticality == Criticality::Critical;
                    fsh.tasks[task as usize].handed_off = Some(now);
                    fsh.jbd2.request(task, flow, critical, aios_file);
                    let jbd2 = fsh.jbd2_task;
                    if !fsh.tasks[jbd2 as usize].waits_bios {
                        self.timer_gen[jbd2 as usize] += 1;
                        self.cpu.wake(q, jbd2);
                    }
                    self.sleep_job(q, j);
                    return true;
                }
                FsStep::Pause(ns) => {
                    self.timer_gen[task as usize] += 1;
                    let gen = self.timer_gen[task as usize];
                    q.schedule_at(now + ns, HostEvent::TimerWake { task, gen });
                    self.sleep_job(q, j);
                    return true;
                }
                FsStep::Idle(_) => unreachable!("only kernel threads idle"),
                FsStep::Done => {
                    self.finish_fs_call(q, requests, j, start);
                    return false;
                }
            }
        }
    }

    /// If job `j` may start a call and the application's next request is one for the file system, start it.
    fn start_fs_call(&mut self, requests: &mut RequestArena, j: u32, start: Time) -> bool {
        let Some(fsh) = self.fs.as_deref_mut() else { return false };
        let job = &mut self.jobs[j as usize];
        if job.call.is_some() || !job.engine.is_blocking() || job.in_flight > 0 {
            return false;
        }
        let Some(&req) = job.to_submit.front() else { return false };
        let r = &requests[req];
        let call = match r.op {
            Op::Flush => {
                let Some(datasync) = fsh.datasync[r.flow as usize] else { return false };
                let file = fsh.last_file[j as usize].unwrap_or_else(|| fsh.fs.locate(r.flow, 0, 1).0);
                let file_level = fsh.fjournaling && r.class.criticality == Criticality::Critical;
                FsCall::Fsync(Fsync::new(r.flow, file, datasync, file_level, fsh.aios[r.flow as usize]))
            }
            Op::Read | Op::Write if fsh.fs.is_buffered(r.flow) => {
                let (file, first, count) = fsh.fs.locate(r.flow, r.offset, r.len);
                let write = r.op == Op::Write;
                if write {
                    fsh.last_file[j as usize] = Some(file);
                }
                FsCall::Buffered(Buffered::new(write, file, first, count, fsh.aios[r.flow as usize]))
            }
            _ => return false,
        };
        job.to_submit.pop_front();
        if job.latency_from_submit {
            restart_clock(requests, req, start);
        }
        job.in_flight += 1;
        job.call = Some(Call::FileSystem);
        job.fs_call = Some(call);
        job.fs_req = Some(req);
        true
    }

    /// Job `j`'s file-system call is over at `at`: its request is done (the exit is paid when it is reaped).
    fn finish_fs_call(&mut self, q: &mut impl HostQueue, requests: &mut RequestArena, j: u32, at: Time) {
        let job = &mut self.jobs[j as usize];
        let (call, req) = (job.fs_call.take(), job.fs_req.take().expect("a call serves a request"));
        let task = job.task;
        let s = &mut requests[req].stamps;
        if let Some(FsCall::Buffered(b)) = call {
            s.page_cache_ns = b.page_cache_ns;
            s.file_system_ns = b.file_system_ns;
            s.page_cache_return_ns = b.page_cache_return_ns;
        }
        if s.driver_entered == 0 {
            // No device I/O went on its behalf (a write or a hit into the page cache, an fsync): the whole
            // call is system call time.
            s.block_entered = at;
            s.driver_entered = at;
            s.submitted = at;
            s.device_arrival = at;
            s.device_fetched = at;
            s.device_done = at;
            s.woken = at;
        }
        let issued = s.issued;
        let fsh = self.fs.as_deref_mut().expect("a file-system call has a file system");
        if let (Some(FsCall::Fsync(f)), true) = (call, issued >= fsh.warmup) {
            let p = &mut fsh.phases[f.flow as usize];
            p.d1.record(f.d1_ns, 0);
            match fsh.tasks[task as usize].released_by.take() {
                _ if f.committed_itself => {
                    // fjournaling: no ordered data of other files, no hand-offs; the file's own commit.
                    for r in [&mut p.d2, &mut p.jd, &mut p.sched] {
                        r.record(0, 0);
                    }
                    p.jc.record(at.saturating_sub(f.commit_started), 0);
                }
                Some((handed, c)) => {
                    p.d2.record(c.d2_ns, 0);
                    p.jd.record(c.jd_ns, 0);
                    p.jc.record(c.jc_ns, 0);
                    p.sched.record(c.started.saturating_sub(handed) + at.saturating_sub(c.done), 0);
                }
                None => {
                    for r in [&mut p.d2, &mut p.jd, &mut p.jc, &mut p.sched] {
                        r.record(0, 0);
                    }
                }
            }
        }
        self.app_request_done(q, j, req);
    }

    /// Job `j`'s task waits inside its file-system call: it spins when every bio it waits for is one it
    /// polls for (no interrupt will come), and sleeps otherwise.
    fn wait_in_fs(&mut self, q: &mut impl HostQueue, j: u32) {
        let task = self.jobs[j as usize].task;
        let w = self.fs.as_deref().expect("a file-system call has a file system").tasks[task as usize];
        if w.waits_bios && w.handed_off.is_none() && w.pending == w.polled {
            self.jobs[j as usize].waiting = Waiting::Spinning;
            self.jobs[j as usize].action = Action::None;
            self.cpu.spin(q, task);
        } else {
            self.sleep_job(q, j);
        }
    }

    /// Job `j`'s task sleeps inside its file-system call.
    fn sleep_job(&mut self, q: &mut impl HostQueue, j: u32) {
        let job = &mut self.jobs[j as usize];
        job.waiting = Waiting::Sleeping;
        job.action = Action::None;
        self.cpu.sleep(q, job.task);
    }

    /// A kernel thread of the file system holds its core: run its next steps.
    pub(super) fn step_fs_thread(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        task: TaskId,
        thread: Thread,
    ) {
        let now = q.now();
        let start = self.cpu.work_starts_at(task, now);
        let core = self.cpu.core_of(task);
        loop {
            let fsh = self.fs.as_deref_mut().expect("a file-system thread has a file system");
            if fsh.tasks[task as usize].waits_bios {
                self.cpu.sleep(q, task);
                return;
            }
            let step = match thread {
                Thread::Jbd2 => fsh.jbd2.next(&mut fsh.fs, now, core, fsh.commit_cpu_ns),
                Thread::Flusher => fsh.flusher.next(&mut fsh.fs, now),
            };
            match step {
                FsStep::Work(ns) => {
                    self.cpu.run(q, task, ns, Activity::Kernel);
                    return;
                }
                FsStep::Submit { cpu_ns, bios } => {
                    let critical = matches!(thread, Thread::Jbd2) && fsh.jbd2.serves_critical();
                    let end = self.submit_fs_bios(q, requests, devices, task, &bios, critical, start + cpu_ns);
                    self.cpu.run(q, task, end - start, Activity::Kernel);
                    return;
                }
                FsStep::WaitBios | FsStep::WaitFiles(_) => {
                    if !fsh.must_wait(task, step) {
                        continue;
                    }
                    self.cpu.sleep(q, task);
                    return;
                }
                FsStep::Idle(until) => {
                    self.timer_gen[task as usize] += 1;
                    if let Some(at) = until {
                        let gen = self.timer_gen[task as usize];
                        q.schedule_at(at.max(now + 1), HostEvent::TimerWake { task, gen });
                    }
                    self.cpu.sleep(q, task);
                    return;
                }
                FsStep::Done => {
                    // A commit ended: wake the fsyncs that waited for it.
                    let times = fsh.jbd2.last_commit();
                    let released = fsh.jbd2.take_released();
                    for &waiter in &released {
                        let handed = fsh.tasks[waiter as usize].handed_off.take().unwrap_or(times.started);
                        fsh.tasks[waiter as usize].released_by = Some((handed, times));
                    }
                    for waiter in released {
                        self.wake_fs_waiter(q, waiter);
                    }
                }
                FsStep::CommitAndWait(_) | FsStep::Pause(_) => unreachable!("kernel threads neither commit nor pause"),
            }
        }
    }

    /// Submit the file system's `bios` from `task`'s core from `start` (sync unless writeback). `critical`:
    /// for a critical task's own data, or a commit's journal blocks for one; never for writeback or for
    /// the ordered data of files the journal thread writes. Returns when the submitting core is done.
    #[allow(clippy::too_many_arguments)]
    fn submit_fs_bios(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        task: TaskId,
        bios: &[Bio],
        critical: bool,
        start: Time,
    ) -> Time {
        let core = self.cpu.core_of(task);
        let io_context = Some(self.io_context_of(task));
        let mut t = start;
        for bio in bios {
            let fsh = self.fs.as_deref_mut().expect("file-system bios have a file system");
            if bio.op == Op::Write && bio.file != u32::MAX {
                // folio_start_writeback on the bio's pages: the file's i_pages lock.
                let waited = fsh.fs.locks.i_pages(bio.file, core, t);
                fsh.fs.counters.lock_wait_ns += waited;
                t += waited;
            }
            let prio = fsh.prio[bio.flow as usize];
            let others_data = bio.file != u32::MAX && self.job_of_task(task).is_none();
            let criticality =
                if critical && !bio.writeback && !others_data { Criticality::Critical } else { Criticality::Normal };
            let class = Class { criticality, priority: prio };
            // Select-ISR: a critical job's own bios are polled, by that job's task.
            let polling_job = self.job_of_task(task).filter(|_| self.completion.polls_file_system_io(class));
            let req = requests.insert(Request {
                flow: bio.flow,
                // The file system lives on the first drive.
                drive: 0,
                op: bio.op,
                offset: bio.offset,
                len: bio.len,
                fua: bio.fua,
                writeback: bio.writeback,
                class,
                stamps: Stamps { issued: t, block_entered: t, ..Stamps::default() },
            });
            let fsh = self.fs.as_deref_mut().expect("checked");
            let lbio = fsh.track(req, bio, task, core, polling_job.is_some());
            let (job, mode) = match polling_job {
                Some(j) => (j, WaitMode::Poll),
                None => (self.first_job[bio.flow as usize], WaitMode::Interrupt),
            };
            *self.req_mut(req) = HostReq { job, mode, fs_bio: true, lbio, io_context, ..HostReq::default() };
            t = self.submit_to_block(q, requests, devices, req, core, t);
        }
        t
    }

    /// The task that waits for request `req` (a file-system bio's submitter, or the job's task).
    pub(super) fn waiter_of(&self, req: ReqId) -> TaskId {
        let r = &self.reqs[req.index()];
        if let Some((new, _)) = r.hazard_merged {
            return self.waiter_of(new);
        }
        if r.fs_bio {
            if let Some(fsh) = self.fs.as_deref() {
                if let Some(Some(b)) = fsh.bios.get(req.index()) {
                    return b.submitter;
                }
            }
        }
        self.jobs[r.job as usize].task
    }

    /// File-system bio `req` completed: the page cache learns of it, and its task goes on once its last bio
    /// is done.
    pub(super) fn fs_bio_done(&mut self, q: &mut impl HostQueue, requests: &mut RequestArena, req: ReqId) {
        let fsh = self.fs.as_deref_mut().expect("a file-system bio has a file system");
        let InFlight { bio, submitter, lbio_core, polled, also, file_slot } =
            fsh.bios[req.index()].take().expect("a file-system bio is known");
        if polled {
            fsh.tasks[submitter as usize].polled -= 1;
        }
        if let Some(core) = lbio_core {
            fsh.lbio_in_flight[core as usize] -= 1;
        }
        if let Some(slot) = file_slot {
            // The last write in flight takes its place (the list is a set: waiters add themselves to every
            // write in it, in any order).
            let list = fsh.writes_in_flight.get_mut(&bio.file).expect("a data write in flight is listed");
            list.swap_remove(slot as usize);
            if let Some(&moved) = list.get(slot as usize) {
                fsh.bios[moved.index()].as_mut().expect("a write in flight is known").file_slot = Some(slot);
            }
            if list.is_empty() {
                fsh.writes_in_flight.remove(&bio.file);
            }
        }
        let pages = u64::from(bio.len) / crate::host::fs::PAGE_BYTES;
        if bio.file != u32::MAX {
            match bio.op {
                Op::Read => {
                    fsh.fs.cache.insert_clean(bio.file, bio.first_page, pages);
                }
                Op::Write => fsh.fs.cache.mark_clean(bio.file, bio.first_page, pages),
                Op::Flush => {}
            }
        }
        let lower = requests[req].stamps;
        requests.remove(req);
        if bio.op == Op::Read {
            // A buffered read's request takes the path of the last read it waited for.
            if let Some(j) = self.job_of_task(submitter) {
                if let Some(app) = self.jobs[j as usize].fs_req {
                    let s = &mut requests[app].stamps;
                    s.block_entered = lower.block_entered;
                    copy_lower_stamps(&lower, s);
                }
            }
        }
        for task in std::iter::once(submitter).chain(also) {
            let fsh = self.fs.as_deref_mut().expect("checked");
            fsh.tasks[task as usize].pending -= 1;
            if fsh.tasks[task as usize].pending == 0 && fsh.tasks[task as usize].waits_bios {
                fsh.tasks[task as usize].waits_bios = false;
                self.wake_fs_waiter(q, task);
            }
        }
    }

    /// The I/O context of the bios `task` submits. A job's: its task, its flow's class, the default level.
    /// The file system's kernel threads: their own task, best-effort. Linux: bfq takes the submitting
    /// task's context (`bfq_prepare_request`), and a kernel thread that set no ioprio is IOPRIO_CLASS_NONE,
    /// which bfq and mq-deadline treat as best-effort at level 4 (`bfq_set_next_ioprio_data`,
    /// `task_nice_ioprio` at nice 0; `dd_rq_ioclass`). ext4 sets its journal thread to best-effort level 3
    /// (fs/ext4/super.c: `journal_ioprio` mount option, default `IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 3)`,
    /// applied with `set_task_ioprio` on the jbd2 task), so bfq weighs its queue (8 - 3) x 10 = 50.
    fn io_context_of(&self, task: TaskId) -> IoContext {
        let best_effort = crate::config::scenario::IoPrioClass::Be.level();
        match self.job_of_task(task) {
            Some(j) => IoContext { task, class: self.jobs[j as usize].ioprio_class, level: IOPRIO_NORM_LEVEL },
            None if self.fs.as_deref().is_some_and(|fsh| fsh.jbd2_task == task) => {
                IoContext { task, class: best_effort, level: EXT4_JOURNAL_IOPRIO_LEVEL }
            }
            None => IoContext { task, class: best_effort, level: IOPRIO_NORM_LEVEL },
        }
    }

    fn job_of_task(&self, task: TaskId) -> Option<u32> {
        match self.roles[task as usize] {
            Role::Job(j) => Some(j),
            _ => None,
        }
    }

    /// Wake `task`, asleep in the file system.
    fn wake_fs_waiter(&mut self, q: &mut impl HostQueue, task: TaskId) {
        if let Some(j) = self.job_of_task(task) {
            self.jobs[j as usize].waiting = Waiting::No;
        }
        self.timer_gen[task as usize] += 1;
        self.cpu.wake(q, task);
    }
}
