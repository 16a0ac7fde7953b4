//! blk-mq: requests from per-core software queues go to hardware queues (one per NVMe submission queue)
//! through the I/O scheduler; tags bound the requests a hardware queue holds.
//!
//! A request first takes an allocation tag (`nr_requests` scheduler tags with a scheduler; the hardware
//! queue depth without), waiting for one if none is free; it is inserted into the scheduler, and the
//! hardware queue is run: while the driver has a free tag, the scheduler hands over requests. Completions
//! return both tags and run the queue again. Every operation returns the CPU time it took on the calling
//! core; scheduler operations with a queue-wide lock (mq-deadline, bfq) take it as a spinlock shared by all
//! cores (`lock.rs`): served one at a time, with the lock's cache line moving between cores, so callers wait
//! for the lock (spinning, so the wait is CPU time too). Each operation names the core that calls it.
//!
//! With several drives, each has a request queue of its own (`request_queue.rs`): its scheduler, lock and
//! hardware queues. Hardware queues are numbered across the host (drive `d`'s from `d * hw_queues` of a
//! drive), so a hardware queue names its request queue.

mod hazard;
mod lock;
mod request_queue;
mod results;
pub mod sched;

use std::collections::VecDeque;

use crate::config::host::BlockConfig;
use crate::engine::Time;
use crate::request::ReqId;
pub use hazard::Hazard;
pub use lock::{LineTransfer, SharedLine, SpinLock};
use request_queue::RequestQueue;
pub use results::BlockResults;
use sched::{ElevatorMerge, SchedCosts, SchedRequest};

/// A request handed to the driver by the block layer: at `at` the driver starts on it; at `done` its work on
/// it ends (with its doorbell written, unless a plug flush writes one for the batch later).
#[derive(Debug, Clone, Copy)]
pub struct Dispatched {
    pub id: ReqId,
    pub hwq: u32,
    pub at: Time,
    pub done: Time,
}

/// Most requests a plug holds before it is flushed (Linux's `BLK_MAX_REQUEST_COUNT`, 32 since 5.16).
pub const PLUG_MAX_REQUESTS: usize = 32;
/// A plugged request this large makes the next submission flush the plug first (`BLK_PLUG_FLUSH_SIZE`).
pub const PLUG_FLUSH_BYTES: u64 = 128 * 1024;

/// A task's plug (`struct blk_plug`): the requests it built during one submission batch, held back until the
/// batch ends so they reach the driver together (one doorbell) and adjacent ones can merge first.
#[derive(Debug, Default)]
pub struct Plug {
    /// The task is in a batch with the plug started.
    started: bool,
    reqs: Vec<(SchedRequest, u32)>,
}

impl Plug {
    /// Started (`blk_start_plug`) and not finished yet: requests go into it.
    pub fn is_started(&self) -> bool {
        self.started
    }

    pub fn is_empty(&self) -> bool {
        self.reqs.is_empty()
    }

    /// The plug is full, or its last request is large: flush it before adding another (as
    /// `blk_add_rq_to_plug` does).
    pub fn must_flush_before_add(&self) -> bool {
        self.reqs.len() >= PLUG_MAX_REQUESTS
            || self.reqs.last().is_some_and(|(rq, _)| u64::from(rq.sectors) * 512 >= PLUG_FLUSH_BYTES)
    }

    /// The plugged request `from` now stands for a merged request named `to`.
    pub fn rename(&mut self, from: ReqId, to: ReqId) {
        if let Some((rq, _)) = self.reqs.iter_mut().rev().find(|(rq, _)| rq.id == from) {
            rq.id = to;
        }
    }
}

/// What became of a request added to a plug.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlugOutcome {
    /// Held in the plug as a request of its own.
    Held,
    /// Merged into the plugged request with this id, which now covers both (its new extent is returned).
    Merged { into: ReqId, sector: u64, sectors: u32 },
}

/// Allocation tags per hardware queue of a drive whose hardware queues hold `hw_queue_depth` commands: without a
/// scheduler, the driver's tags themselves; with one, `nr_requests`, by default `2 × min(depth, 128)`
/// (`blk_mq_init_sched`: `2 * min(tag_set->queue_depth, BLKDEV_DEFAULT_RQ)`), each drive's from its own depth.
fn allocation_tags(cfg: &BlockConfig, scheduler: &str, hw_queue_depth: u32) -> u32 {
    if scheduler == "none" {
        hw_queue_depth
    } else if cfg.nr_requests > 0 {
        cfg.nr_requests
    } else {
        2 * hw_queue_depth.min(128)
    }
}

/// A request in the block layer.
#[derive(Debug, Clone, Copy)]
struct Inflight {
    rq: SchedRequest,
    hwq: u32,
    /// Holds a driver tag (handed to the driver).
    at_driver: bool,
    /// Went around the scheduler ([`BlockLayer::submit_bypass`]): holds no allocation tag and the scheduler
    /// never saw it.
    bypassed: bool,
}

/// Who calls into the block layer: the core the call runs on (the scheduler lock's cache line moves to it)
/// and the driver's work per request handed to it (`nvme_queue_rq` and the doorbell), of which the last
/// `sq_locked_ns` run under the submission queue's lock (`nvmeq->sq_lock`: the command's copy into the queue
/// and the doorbell write).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caller {
    pub core: u32,
    pub driver_ns: Time,
    pub sq_locked_ns: Time,
}

pub struct BlockLayer {
    /// One request queue per drive.
    queues: Vec<RequestQueue>,
    /// Hardware queues per drive.
    hwqs_per_queue: u32,
    costs: SchedCosts,
    submit_ns: Time,
    complete_ns: Time,
    plugging: bool,
    merges: bool,
    merge_check_ns: Time,
    /// FlashShare's hazard check on bypassed critical requests (`hazard.rs`) and its cost per request compared.
    bypass_hazard: bool,
    hazard_check_ns: Time,
    /// Free allocation tags per hardware queue.
    alloc_tags: Vec<u32>,
    /// Free driver tags per hardware queue (commands the submission queue may hold).
    driver_tags: Vec<u32>,
    /// Requests waiting for an allocation tag, per hardware queue.
    tag_waiters: Vec<VecDeque<SchedRequest>>,
    /// Requests the scheduler gave up that found no driver tag (Linux's hctx->dispatch list).
    dispatch_lists: Vec<VecDeque<SchedRequest>>,
    /// The NVMe submission queue's lock of each hardware queue that several cores submit to
    /// ([`Self::share_submission_queues`]); None where one core does (its lock never changes hands).
    sq_locks: Vec<Option<SpinLock>>,
    /// Each request in the block layer (in the scheduler, on a dispatch list or at the driver), by request id.
    inflight: Vec<Option<Inflight>>,
    results: BlockResults,
}

impl BlockLayer {
    /// One drive's block layer: see [`Self::for_drives`].
    pub fn new(
        cfg: &BlockConfig,
        scheduler: &str,
        hw_queues: u32,
        hw_queue_depth: u32,
        line_transfer: LineTransfer,
    ) -> Result<Self, String> {
        Self::for_drives(cfg, scheduler, hw_queues, &[hw_queue_depth], line_transfer)
    }

    /// The block layer of one drive per entry of `hw_queue_depths`, with `hw_queues` hardware queues each.
    /// `hw_queue_depths[d]`: the commands each hardware queue of drive `d` may hold at the driver (its driver
    /// tags; its allocation tags follow from it); `line_transfer`: moving a cache line between cores
    /// (`host.cpu.cache_line_transfer_ns` and its groups).
    pub fn for_drives(
        cfg: &BlockConfig,
        scheduler: &str,
        hw_queues: u32,
        hw_queue_depths: &[u32],
        line_transfer: LineTransfer,
    ) -> Result<Self, String> {
        let unknown =
            || format!("host.io_scheduler: unknown scheduler \"{scheduler}\"; expected one of {:?}", sched::names());
        let queues = (0..)
            .zip(hw_queue_depths)
            .map(|(d, &depth)| {
                let sched = sched::make(scheduler, hw_queues, cfg).ok_or_else(unknown)?;
                let tags = (allocation_tags(cfg, scheduler, depth), depth);
                Ok(RequestQueue::new(sched, d * hw_queues, tags, line_transfer))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let sched = &queues.first().ok_or("a block layer needs a drive")?.sched;
        let tags_of = |tags: fn(&RequestQueue) -> u32| -> Vec<u32> {
            queues.iter().flat_map(|q| std::iter::repeat_n(tags(q), hw_queues as usize)).collect()
        };
        let (alloc_tags, driver_tags) = (tags_of(|q| q.alloc_capacity), tags_of(|q| q.driver_capacity));
        let all = alloc_tags.len();
        Ok(BlockLayer {
            costs: sched.costs(),
            results: BlockResults::zero(sched.name()),
            queues,
            hwqs_per_queue: hw_queues,
            submit_ns: cfg.submit_ns.0,
            complete_ns: cfg.complete_ns.0,
            plugging: cfg.plug,
            merges: cfg.merges,
            merge_check_ns: cfg.merge_check_ns.0,
            bypass_hazard: cfg.bypass_hazard,
            hazard_check_ns: cfg.hazard_check_ns.0,
            alloc_tags,
            driver_tags,
            tag_waiters: (0..all).map(|_| VecDeque::new()).collect(),
            dispatch_lists: (0..all).map(|_| VecDeque::new()).collect(),
            sq_locks: vec![None; all],
            inflight: Vec::new(),
        })
    }

    /// The I/O scheduler's built-in per-request costs on cores `speed` times the reference machine's
    /// (`host.cpu.speed`; the block layer's keys come scaled in its configuration).
    pub fn at_cpu_speed(mut self, speed: f64) -> Self {
        self.costs = self.costs.at_cpu_speed(speed);
        self
    }

    /// Allocation tags of each hardware queue of `hwq`'s drive.
    fn alloc_capacity(&self, hwq: u32) -> u32 {
        self.queues[self.queue_of(hwq)].alloc_capacity
    }

    /// Driver tags of each hardware queue of `hwq`'s drive.
    fn driver_capacity(&self, hwq: u32) -> u32 {
        self.queues[self.queue_of(hwq)].driver_capacity
    }

    /// Hardware queues for which `shared` is true have several cores submitting to them (`host.queue_pairs`
    /// below the cores): the driver's `nvme_queue_rq` takes their submission queue's spinlock
    /// (`nvmeq->sq_lock`, drivers/nvme/host/pci.c) for the command's copy and the doorbell, so those cores
    /// take turns and move its line ([`lock`]'s model).
    pub fn share_submission_queues(&mut self, shared: impl Fn(u32) -> bool, line_transfer: LineTransfer) {
        for (hwq, lock) in self.sq_locks.iter_mut().enumerate() {
            *lock = shared(hwq as u32).then(|| SpinLock::new(line_transfer));
        }
    }

    /// The driver's work on one request dispatched to `hwq` from `at`, under the submission queue's lock where
    /// several cores share it; returns when the work ends.
    fn queue_rq(&mut self, hwq: u32, caller: Caller, at: Time) -> Time {
        match &mut self.sq_locks[hwq as usize] {
            Some(lock) if caller.sq_locked_ns > 0 => {
                let locked = caller.sq_locked_ns.min(caller.driver_ns);
                let held = lock.acquire(caller.core, at + caller.driver_ns - locked, locked);
                self.results.lock_wait_ns += held.waited;
                held.end
            }
            _ => at + caller.driver_ns,
        }
    }

    /// The driver writes the doorbell of `hwq` from `at` on `core` for a batch (`nvme_queue_rqs` copies the
    /// batch's commands and writes the doorbell once, under the submission queue's lock where cores share
    /// it); `ns` is that work. Returns when it ends.
    pub fn batch_doorbell(&mut self, hwq: u32, core: u32, at: Time, ns: Time) -> Time {
        match &mut self.sq_locks[hwq as usize] {
            Some(lock) => {
                let held = lock.acquire(core, at, ns);
                self.results.lock_wait_ns += held.waited;
                held.end
            }
            None => at + ns,
        }
    }

    /// The request queue hardware queue `hwq` belongs to.
    fn queue_of(&self, hwq: u32) -> usize {
        (hwq / self.hwqs_per_queue) as usize
    }

    /// Run an operation of request queue `rq`'s scheduler of `cost` from `at` on `core`, under the queue-wide
    /// lock if it has one; returns when the caller is done.
    fn sched_op(&mut self, rq: usize, core: u32, at: Time, cost: Time) -> Time {
        // The work of an operation that ran before its charge (dispatch, merge, hazard removal).
        let cost = cost + self.queues[rq].sched.take_work_ns();
        if !self.costs.global_lock {
            return at + cost;
        }
        let held = self.queues[rq].lock.acquire(core, at, cost);
        self.results.lock_wait_ns += held.waited;
        held.end
    }

    /// Submit `rq` to hardware queue `hwq` from `core` at `at`; the driver work per dispatched request is
    /// `driver_ns`. Requests handed to the driver are appended to `out`; returns when the caller's block-layer
    /// and driver work ends.
    pub fn submit(&mut self, rq: SchedRequest, hwq: u32, caller: Caller, at: Time, out: &mut Vec<Dispatched>) -> Time {
        self.enter(rq, hwq, caller, at + self.submit_ns, out)
    }

    /// Submit `rq` through the scheduler or, with `bypass`, around it ([`Self::submit_bypass`]).
    pub fn submit_via(
        &mut self,
        rq: SchedRequest,
        hwq: u32,
        caller: Caller,
        at: Time,
        bypass: bool,
        out: &mut Vec<Dispatched>,
    ) -> Time {
        if bypass {
            self.submit_bypass(rq, hwq, caller, at, out)
        } else {
            self.submit(rq, hwq, caller, at, out)
        }
    }

    /// Submit critical `rq` around the scheduler (FastResponse's bypass, like `blk_mq_try_issue_directly`):
    /// straight to the driver if hardware queue `hwq` has a driver tag, else onto its dispatch list, which is
    /// served before the scheduler. It takes no allocation tag and costs no scheduler time. Returns when the
    /// caller's block-layer and driver work ends.
    pub fn submit_bypass(
        &mut self,
        rq: SchedRequest,
        hwq: u32,
        caller: Caller,
        at: Time,
        out: &mut Vec<Dispatched>,
    ) -> Time {
        let t = at + self.submit_ns;
        self.push_bypassed(rq, hwq, t);
        self.run_queue(hwq, caller, t, out)
    }

    /// Put `rq` at the end of `hwq`'s dispatch list at `at`, holding no allocation tag.
    fn push_bypassed(&mut self, mut rq: SchedRequest, hwq: u32, at: Time) {
        rq.inserted_at = at;
        self.track(Inflight { rq, hwq, at_driver: false, bypassed: true });
        self.results.bypassed += 1;
        self.dispatch_lists[hwq as usize].push_back(rq);
    }

    /// Record `entry` as the block layer's request of its id.
    fn track(&mut self, entry: Inflight) {
        let index = entry.rq.id.index();
        if self.inflight.len() <= index {
            self.inflight.resize(index + 1, None);
        }
        self.inflight[index] = Some(entry);
    }

    /// Start `plug` for a submission batch (`blk_start_plug`), unless plugging is off (`host.block.plug`).
    pub fn start_plug(&self, plug: &mut Plug) {
        plug.started = self.plugging;
    }

    /// Flush `plug` and end it (`blk_finish_plug`); see [`BlockLayer::flush`].
    pub fn finish_plug(&mut self, plug: &mut Plug, caller: Caller, at: Time, out: &mut Vec<Dispatched>) -> Time {
        plug.started = false;
        self.flush(plug, caller, at, out)
    }

    /// Add `rq` (bound for `hwq`) to `plug` from `at` on `core`: merge it into the last plugged request when they are
    /// adjacent, of the same direction and hardware queue, and together no larger than `max_sectors` (the
    /// issuer's request size limit; `blk_attempt_plug_merge` looks only at the last one); otherwise hold it.
    /// Returns when the caller is done. The caller flushes first if [`Plug::must_flush_before_add`].
    pub fn plug_add(
        &mut self,
        plug: &mut Plug,
        rq: SchedRequest,
        hwq: u32,
        core: u32,
        max_sectors: u32,
        at: Time,
    ) -> (Time, PlugOutcome) {
        let mut t = at + self.submit_ns;
        if self.merges {
            if let Some((last, last_hwq)) = plug.reqs.last_mut() {
                t += self.merge_check_ns;
                let fits = last.sectors + rq.sectors <= max_sectors;
                let back = last.sector + u64::from(last.sectors) == rq.sector;
                let front = rq.sector + u64::from(rq.sectors) == last.sector;
                if *last_hwq == hwq && last.op == rq.op && fits && (back || front) {
                    last.sector = last.sector.min(rq.sector);
                    last.sectors += rq.sectors;
                    self.results.merges += 1;
                    return (t, PlugOutcome::Merged { into: last.id, sector: last.sector, sectors: last.sectors });
                }
            }
        }
        // `blk_mq_attempt_bio_merge`: then a request waiting in the scheduler.
        let (t, merged) = self.elevator_merge(&rq, hwq, core, max_sectors, t);
        if let Some(m) = merged {
            return (t, PlugOutcome::Merged { into: m.into, sector: m.sector, sectors: m.sectors });
        }
        plug.reqs.push((rq, hwq));
        (t, PlugOutcome::Held)
    }

    /// A bio `rq` submitted at `at` on `core` outside a plug: merged into a request waiting in the scheduler if it can
    /// be ([`Self::elevator_merge`]; it then needs no request of its own and the result says when the caller
    /// is done), else None and the caller submits it.
    pub fn merge_bio(
        &mut self,
        rq: &SchedRequest,
        hwq: u32,
        core: u32,
        max_sectors: u32,
        at: Time,
    ) -> Option<(Time, ElevatorMerge)> {
        match self.elevator_merge(rq, hwq, core, max_sectors, at + self.submit_ns) {
            (t, Some(m)) => Some((t, m)),
            (_, None) => None,
        }
    }

    /// Merge the bio `rq`, being submitted at `at`, into a request waiting in the scheduler, if the scheduler
    /// merges (mq-deadline's elevator merge) and merging is on; the two together at most `max_sectors`.
    /// Returns when the caller is done and the merge. A merge costs `merge_check_ns` under the scheduler's
    /// lock instead of an insertion; a lookup that finds nothing is counted in the scheduler's insertion cost
    /// [inferred: Linux takes `dd->lock` for the lookup of every bio; the per-request cost the model uses is
    /// the kernel documentation's total].
    fn elevator_merge(
        &mut self,
        rq: &SchedRequest,
        hwq: u32,
        core: u32,
        max_sectors: u32,
        at: Time,
    ) -> (Time, Option<ElevatorMerge>) {
        let q = self.queue_of(hwq);
        if !self.merges || !rq.mergeable || self.queues[q].queued == 0 {
            return (at, None);
        }
        let Some(merge) = self.queues[q].sched.merge(rq, max_sectors) else { return (at, None) };
        let t = self.sched_op(q, core, at, self.merge_check_ns);
        self.results.merges += 1;
        if let Some(entry) = self.inflight.get_mut(merge.into.index()).and_then(Option::as_mut) {
            entry.rq.sector = merge.sector;
            entry.rq.sectors = merge.sectors;
        }
        (t, Some(merge))
    }

    /// The request `from`, waiting in the scheduler, is now named `to` (it carries merged bios). Nothing
    /// happens if no request `from` is in the block layer (e.g. it is still in a plug).
    pub fn rename(&mut self, from: ReqId, to: ReqId) {
        let Some(mut entry) = self.inflight.get_mut(from.index()).and_then(Option::take) else { return };
        entry.rq.id = to;
        let q = self.queue_of(entry.hwq);
        self.track(entry);
        self.queues[q].sched.rename(from, to);
    }

    /// Flush `plug` from `at` on `core`: its requests enter the block layer in order (tags, scheduler, driver with
    /// `driver_ns` each). Requests handed to the driver are appended to `out`; returns when the work ends.
    pub fn flush(&mut self, plug: &mut Plug, caller: Caller, at: Time, out: &mut Vec<Dispatched>) -> Time {
        if plug.reqs.is_empty() {
            return at;
        }
        self.results.plug_flushes += 1;
        let mut t = at;
        for (rq, hwq) in plug.reqs.drain(..) {
            t = self.enter(rq, hwq, caller, t, out);
        }
        t
    }

    /// `rq` has been made a request at `at` on `core`: take an allocation tag (or wait for one), insert it and
    /// run the hardware queue.
    fn enter(&mut self, rq: SchedRequest, hwq: u32, caller: Caller, at: Time, out: &mut Vec<Dispatched>) -> Time {
        let mut t = at;
        // The scheduler may keep some requests from the last tags (ld's async limit).
        let capacity = self.alloc_capacity(hwq);
        let in_use = capacity - self.alloc_tags[hwq as usize];
        let sched = &self.queues[self.queue_of(hwq)].sched;
        if in_use >= sched.alloc_limit(&rq, capacity).min(capacity) {
            self.results.tag_waits += 1;
            self.tag_waiters[hwq as usize].push_back(rq);
            return t;
        }
        self.alloc_tags[hwq as usize] -= 1;
        t = self.insert(rq, hwq, caller.core, t);
        self.run_queue(hwq, caller, t, out)
    }

    /// Insert `rq`, which holds an allocation tag of `hwq`, into the scheduler from `core`.
    fn insert(&mut self, mut rq: SchedRequest, hwq: u32, core: u32, at: Time) -> Time {
        let q = self.queue_of(hwq);
        let t = self.sched_op(q, core, at, self.costs.insert_ns);
        rq.inserted_at = t;
        self.track(Inflight { rq, hwq, at_driver: false, bypassed: false });
        let queue = &mut self.queues[q];
        queue.sched.insert(queue.local(hwq), rq, t);
        let t = queue.charge_work(self.costs.global_lock, t);
        queue.queued += 1;
        self.results.max_sched_queued = self.results.max_sched_queued.max(queue.queued);
        t
    }

    /// Hand requests to the driver while hardware queue `hwq` has driver tags and the scheduler gives some,
    /// on `core`.
    fn run_queue(&mut self, hwq: u32, caller: Caller, at: Time, out: &mut Vec<Dispatched>) -> Time {
        let mut t = at;
        let q = self.queue_of(hwq);
        loop {
            let h = hwq as usize;
            if self.driver_tags[h] == 0 {
                break;
            }
            let rq = if let Some(rq) = self.dispatch_lists[h].pop_front() {
                rq
            } else {
                let queue = &mut self.queues[q];
                let local = queue.local(hwq);
                if queue.sched.queued(local) == 0 {
                    break;
                }
                let Some(rq) = queue.sched.dispatch(local, t) else { break };
                queue.queued -= 1;
                t = self.sched_op(q, caller.core, t, self.costs.dispatch_ns);
                rq
            };
            // Queue-wide schedulers may hand over a request meant for another hardware queue.
            let entry = self.inflight[rq.id.index()].as_mut().expect("a scheduled request holds a tag");
            let own = entry.hwq;
            if self.driver_tags[own as usize] == 0 {
                self.dispatch_lists[own as usize].push_back(rq);
                continue;
            }
            entry.at_driver = true;
            self.driver_tags[own as usize] -= 1;
            let done = self.queue_rq(own, caller, t);
            out.push(Dispatched { id: rq.id, hwq: own, at: t, done });
            t = done;
        }
        t
    }

    /// Request `id` completed at the driver; the completing `core` starts on it at `at`. Returns when its
    /// block-layer work (including dispatching requests that were waiting) ends.
    pub fn complete(&mut self, id: ReqId, caller: Caller, at: Time, out: &mut Vec<Dispatched>) -> Time {
        let mut t = at + self.complete_ns;
        let Inflight { rq, hwq, at_driver, bypassed } =
            self.inflight.get_mut(id.index()).and_then(Option::take).expect("a completed request was dispatched");
        debug_assert!(at_driver, "completed without a driver tag");
        let h = hwq as usize;
        self.driver_tags[h] += 1;
        // A bypassed request gives back only its driver tag: the scheduler never saw it.
        if !bypassed {
            let q = self.queue_of(hwq);
            t = self.sched_op(q, caller.core, t, self.costs.completed_ns);
            self.queues[q].sched.completed(&rq, t.saturating_sub(rq.inserted_at), t);
            t = self.queues[q].charge_work(self.costs.global_lock, t);
            t = self.free_alloc_tag(hwq, caller.core, t).0;
        }
        self.run_queues_from(hwq, caller, t, out)
    }

    /// Run every hardware queue with work of `first`'s request queue, starting with `first`, on `core`
    /// (`blk_mq_run_hw_queues` runs one disk's); returns when that work ends.
    fn run_queues_from(&mut self, first: u32, caller: Caller, at: Time, out: &mut Vec<Dispatched>) -> Time {
        let mut t = at;
        let q = self.queue_of(first);
        let (base, count) = (self.queues[q].first_hwq, self.hwqs_per_queue);
        // With nothing in the scheduler only the dispatch lists can have work: no scheduler call per queue.
        let scheduled = self.queues[q].queued > 0;
        debug_assert!(scheduled || (0..count).all(|h| self.queues[q].sched.queued(h) == 0));
        // From `first` to the drive's last queue, then from its first queue up to `first`.
        for hq in (first..base + count).chain(base..first) {
            if !self.dispatch_lists[hq as usize].is_empty() || (scheduled && self.queues[q].sched.queued(hq - base) > 0)
            {
                t = self.run_queue(hq, caller, t, out);
            }
        }
        t
    }

    /// When the scheduler's timer is due (bfq's idle-slice timer), if it is armed: the caller runs
    /// [`Self::run_timer`] then.
    pub fn timer_due(&self) -> Option<Time> {
        self.queues.iter().filter_map(|q| q.sched.timer_due()).min()
    }

    /// The scheduler's timer fires at `at` if it is due by then (a stale call does nothing): its work runs
    /// under the scheduler's lock, then every hardware queue with work is run (Linux's timer schedules
    /// `blk_mq_run_hw_queues`). Returns when that work ends. Its CPU time is charged to no core of the model
    /// [inferred: a few microseconds per idle slice of milliseconds]; for the lock it runs on the core that
    /// held the lock last (the hrtimer fires on the core that armed it, a recent holder), moving no line.
    pub fn run_timer(&mut self, at: Time, driver: Caller, out: &mut Vec<Dispatched>) -> Time {
        let mut end = at;
        for q in 0..self.queues.len() {
            if self.queues[q].sched.timer_due().is_none_or(|due| due > at) {
                continue;
            }
            let caller = Caller { core: self.queues[q].lock.last_holder().unwrap_or(0), ..driver };
            let t = self.sched_op(q, caller.core, at, self.costs.completed_ns);
            self.queues[q].sched.timer(t);
            let t = self.queues[q].charge_work(self.costs.global_lock, t);
            let first = self.queues[q].first_hwq;
            end = end.max(self.run_queues_from(first, caller, t, out));
        }
        end
    }

    /// A request of `hwq` gave back its allocation tag at `at` on `core`: it goes straight to the oldest waiter the
    /// scheduler lets take it (a waiter held back by the scheduler's tag limit, e.g. bfq's for writes, keeps
    /// waiting, as a woken sbitmap waiter that fails its shallow depth again), which enters the scheduler.
    /// Returns when that work ends and whether a waiter took the tag.
    fn free_alloc_tag(&mut self, hwq: u32, core: u32, at: Time) -> (Time, bool) {
        let h = hwq as usize;
        // Tags in use once this one is free.
        let capacity = self.alloc_capacity(hwq);
        let in_use = capacity - self.alloc_tags[h] - 1;
        let sched = &self.queues[self.queue_of(hwq)].sched;
        let may_take = |rq: &SchedRequest| in_use < sched.alloc_limit(rq, capacity).min(capacity);
        match self.tag_waiters[h].iter().position(may_take).and_then(|p| self.tag_waiters[h].remove(p)) {
            Some(waiter) => (self.insert(waiter, hwq, core, at), true),
            None => {
                self.alloc_tags[h] += 1;
                (at, false)
            }
        }
    }

    pub fn results(&self) -> BlockResults {
        self.results.clone()
    }

    /// Tags are conserved: per hardware queue, allocation tags in use equal the requests holding one, and
    /// driver tags in use equal the requests at the driver.
    pub fn check_tags(&self) -> Result<(), String> {
        let queues = self.alloc_tags.len();
        let mut holding = vec![0u32; queues];
        let mut at_driver = vec![0u32; queues];
        for f in self.inflight.iter().flatten() {
            holding[f.hwq as usize] += u32::from(!f.bypassed);
            at_driver[f.hwq as usize] += u32::from(f.at_driver);
        }
        for h in 0..queues {
            let (alloc, driver) = (self.alloc_capacity(h as u32), self.driver_capacity(h as u32));
            // A count above the capacity would wrap below: tags given back that were never taken.
            let alloc_in_use = alloc.checked_sub(self.alloc_tags[h]);
            if alloc_in_use != Some(holding[h]) {
                return Err(format!(
                    "hardware queue {h}: {} of its {alloc} allocation tags free but {} requests hold one",
                    self.alloc_tags[h], holding[h]
                ));
            }
            let driver_in_use = driver.checked_sub(self.driver_tags[h]);
            if driver_in_use != Some(at_driver[h]) {
                return Err(format!(
                    "hardware queue {h}: {} of its {driver} driver tags free but {} requests at the driver",
                    self.driver_tags[h], at_driver[h]
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Calls from core 0, with 100 ns of driver work a request.
    const CALLER: Caller = Caller { core: 0, driver_ns: 100, sq_locked_ns: 0 };
    use crate::request::Op;

    fn rq(id: u32, sector: u64) -> SchedRequest {
        SchedRequest { id: ReqId(id), op: Op::Write, sector, ..sched::test_request() }
    }

    /// With mq-deadline, a bio that follows a request waiting in the scheduler merges into it: no request,
    /// no tag of its own, counted in `merges`; the waiting request goes down with both.
    #[test]
    fn a_bio_merges_into_a_request_waiting_in_mq_deadline() {
        let cfg = BlockConfig::default();
        let mut b = BlockLayer::new(&cfg, "mq-deadline", 1, 1, LineTransfer::uniform(40)).unwrap();
        let mut out = Vec::new();
        b.submit(rq(0, 0), 0, CALLER, 0, &mut out);
        b.submit(rq(1, 800), 0, CALLER, 10, &mut out);
        assert_eq!(out.len(), 1, "one driver tag: request 1 waits in the scheduler");
        let (t, m) = b.merge_bio(&rq(2, 808), 0, 0, 2560, 10_000).expect("merged");
        assert_eq!((m.into, m.sector, m.sectors), (ReqId(1), 800, 16));
        assert_eq!(t, 10_000 + cfg.submit_ns.0 + cfg.merge_check_ns.0);
        assert_eq!(b.results().merges, 1);
        // Renamed as the host's carrier of both, it goes down when the first completes.
        b.rename(ReqId(1), ReqId(9));
        b.complete(ReqId(0), CALLER, 20_000, &mut out);
        assert_eq!(out.iter().map(|d| d.id).collect::<Vec<_>>(), [ReqId(0), ReqId(9)]);
        b.check_tags().unwrap();
        // Merging off, or a scheduler without elevator merges: nothing.
        for (scheduler, merges) in [("mq-deadline", false), ("kyber", true), ("none", true)] {
            let mut b = BlockLayer::new(
                &BlockConfig { merges, ..BlockConfig::default() },
                scheduler,
                1,
                1,
                LineTransfer::uniform(40),
            )
            .unwrap();
            b.submit(rq(0, 0), 0, CALLER, 0, &mut out);
            b.submit(rq(1, 800), 0, CALLER, 10, &mut out);
            assert!(b.merge_bio(&rq(2, 808), 0, 0, 2560, 20).is_none(), "{scheduler}");
        }
    }

    /// Where several cores share a hardware queue, the driver's copy and doorbell run under the submission
    /// queue's lock: a second core dispatching while the first holds it waits for the hold and the lock
    /// word's two transfers ([`lock`]). Unshared, both run at once.
    #[test]
    fn cores_sharing_a_hardware_queue_take_turns_on_its_submission_queue_lock() {
        let cfg = BlockConfig::default();
        let (submit_ns, driver_ns, locked_ns, transfer_ns) = (cfg.submit_ns.0, 100, 40, 30);
        let caller = |core| Caller { core, driver_ns, sq_locked_ns: locked_ns };
        for shared in [false, true] {
            let mut b = BlockLayer::new(&cfg, "none", 1, 4, LineTransfer::uniform(transfer_ns)).unwrap();
            b.share_submission_queues(|_| shared, LineTransfer::uniform(transfer_ns));
            let mut out = Vec::new();
            let first = b.submit(rq(0, 0), 0, caller(0), 0, &mut out);
            let second = b.submit(rq(1, 800), 0, caller(1), 0, &mut out);
            assert_eq!(first, submit_ns + driver_ns);
            if shared {
                // Core 1 asks at submit + 60, while core 0 holds the lock until submit + 100.
                assert_eq!(second, submit_ns + driver_ns + 2 * transfer_ns + locked_ns);
                assert_eq!(b.results().lock_wait_ns, second - locked_ns - (submit_ns + driver_ns - locked_ns));
            } else {
                assert_eq!((second, b.results().lock_wait_ns), (submit_ns + driver_ns, 0));
            }
            assert_eq!(out.iter().map(|d| d.done).collect::<Vec<_>>(), [first, second]);
        }
    }
}
