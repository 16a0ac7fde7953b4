//! The full host's submission path: from a job's system call into the plug or the block layer (split at
//! `max_sectors_kb`, merged into plugged requests, or around the scheduler), then the driver's doorbell.

use super::*;

impl FullHost {
    /// Ring the doorbell of every request the block layer handed to the driver: each its own after the
    /// driver's work on it, or all at `batch_doorbell` (a plug flush writes the doorbell once, at the end).
    pub(super) fn ring_all(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        out: &mut Vec<Dispatched>,
        batch_doorbell: Option<Time>,
    ) {
        for d in out.drain(..) {
            let doorbell = batch_doorbell.unwrap_or(d.done);
            self.ring_one(q, requests, devices, d, doorbell);
        }
    }

    /// `d`'s driver (the NVMe driver, LBIO's or the accelerator's) starts on it at `d.at` and its command
    /// is in the submission queue with the doorbell written at `doorbell`.
    pub(super) fn ring_one(
        &self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        d: Dispatched,
        doorbell: Time,
    ) {
        let s = &mut requests[d.id].stamps;
        s.driver_entered = d.at;
        s.submitted = doorbell;
        self.nvme.ring(devices, q, d.id, d.hwq, doorbell);
    }

    /// Submit `req`, the first of `batch` requests the submitting task has for job `j`, on `core`: the file
    /// system's direct-I/O path from `fs_at`, then the block layer. A batch of [`PLUG_MIN_BATCH`] or more is plugged, and the plug flushed with its last request.
    /// Returns when the submitting core is done.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn submit_from_batch(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        j: u32,
        req: ReqId,
        batch: usize,
        core: u32,
        fs_at: Time,
    ) -> Time {
        let block_at = fs_at + self.costs.fs_submit_ns;
        let s = &mut requests[req].stamps;
        s.file_system_ns = self.costs.fs_submit_ns;
        s.block_entered = block_at;
        let job = &mut self.jobs[j as usize];
        job.last_submitted = (requests[req].op, requests[req].len);
        // A blocking engine's batch is always one request (its `batch_submit` is 1).
        if batch >= PLUG_MIN_BATCH && !job.plug.is_started() {
            self.block.start_plug(&mut job.plug);
        }
        let end = self.submit_to_block(q, requests, devices, req, core, block_at);
        if batch == 1 && self.jobs[j as usize].plug.is_started() {
            return self.flush_plug(q, requests, devices, j, core, end, true);
        }
        end
    }

    /// Flush job `j`'s plug from `at` on `core` (and end it if `finish`): its requests go down together and
    /// the doorbell is written once.
    #[allow(clippy::too_many_arguments)]
    fn flush_plug(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        j: u32,
        core: u32,
        at: Time,
        finish: bool,
    ) -> Time {
        let mut out = std::mem::take(&mut self.dispatched);
        let (plug, caller) = (&mut self.jobs[j as usize].plug, self.nvme.batch_caller(core));
        let mut t = if finish {
            self.block.finish_plug(plug, caller, at, &mut out)
        } else {
            self.block.flush(plug, caller, at, &mut out)
        };
        if !out.is_empty() {
            // One doorbell per submission queue the plug's requests went to (`nvme_queue_rqs` writes each
            // queue's once): several with requests for several drives.
            for (i, d) in out.iter().enumerate() {
                if out[..i].iter().all(|e| e.hwq != d.hwq) {
                    t = self.block.batch_doorbell(d.hwq, core, t, self.nvme.doorbell_ns);
                }
            }
            self.ring_all(q, requests, devices, &mut out, Some(t));
        }
        self.dispatched = out;
        t
    }

    /// Submit `req` through the block layer from `at` on `core` (into the job's plug if it has one started,
    /// splitting it at max_sectors_kb); returns when the submitting core is done.
    pub(super) fn submit_to_block(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        req: ReqId,
        core: u32,
        at: Time,
    ) -> Time {
        let mut at = at;
        if requests[req].drive == crate::config::drives::MD_VOLUME {
            let (t, submitted) = self.md_submit(q, requests, devices, req, core, at);
            if submitted {
                return t;
            }
            at = t;
        }
        let job = self.reqs[req.index()].job;
        let critical = requests[req].class.criticality == Criticality::Critical;
        let hwq = self.nvme.hwq_of(requests[req].drive, core, self.jobs[job as usize].queue_set, critical);
        let len = requests[req].len as u64;
        self.reqs[req.index()].hwq = hwq;
        self.reqs[req.index()].submit_core = core;
        if self.reqs[req.index()].lbio {
            return self.submit_lbio(q, requests, devices, req, hwq, at);
        }
        if self.reqs[req.index()].mode == WaitMode::Accelerator {
            if let Some(done) = self.submit_to_accelerator(q, requests, devices, req, hwq, at) {
                return done;
            }
        }
        // FastResponse: a critical request may be as large as the device takes and can go around the plug and
        // the scheduler; the others are split at their own, smaller limit.
        let critical = requests[req].class.criticality == Criticality::Critical;
        let max_bytes = if critical { self.max_request_bytes } else { self.noncritical_max_request_bytes };
        // Flushes and FUA writes go around the plug and the scheduler, as blk_insert_flush sends them: no merging.
        let durability = requests[req].op == Op::Flush || requests[req].fua;
        let bypass = (critical && self.critical_bypass) || durability;
        let mut t = at;
        // The file system's bios come from other tasks than the job's (or outside its batch): never its plug.
        if self.jobs[job as usize].plug.is_started() && !bypass && !self.reqs[req.index()].fs_bio {
            if len <= max_bytes {
                if self.jobs[job as usize].plug.must_flush_before_add() {
                    t = self.flush_plug(q, requests, devices, job, core, t, false);
                }
                let rq = self.sched_request(requests, req, job, t);
                let max_sectors = (max_bytes / 512) as u32;
                let plug = &mut self.jobs[job as usize].plug;
                let (t, outcome) = self.block.plug_add(plug, rq, hwq, core, max_sectors, t);
                if let PlugOutcome::Merged { into, sector, sectors } = outcome {
                    self.carry(requests, job, into, req, sector, sectors);
                }
                return t;
            }
            // A request to split goes down on its own, after what the plug holds.
            t = self.flush_plug(q, requests, devices, job, core, t, false);
        }
        let max_sectors = (max_bytes / 512) as u32;
        // The block layer's view of the whole request, if it goes down as one.
        let whole = (len <= max_bytes).then(|| self.sched_request(requests, req, job, t));
        if let Some(rq) = whole.as_ref().filter(|_| !bypass) {
            // A request waiting in the scheduler may take the bio (an elevator merge).
            if let Some((end, m)) = self.block.merge_bio(rq, hwq, core, max_sectors, t) {
                self.carry(requests, job, m.into, req, m.sector, m.sectors);
                return end;
            }
        }
        let mut out = std::mem::take(&mut self.dispatched);
        let t = if let Some(rq) = whole {
            self.submit_rq(requests, rq, hwq, core, bypass, max_sectors, t, &mut out)
        } else {
            // Split: each piece is a request of its own, in LBA order; the parent completes with its last piece.
            let count = len.div_ceil(max_bytes);
            self.reqs[req.index()].pieces_left = count as u32;
            let base = self.reqs[req.index()];
            for i in 0..count {
                let offset = i * max_bytes;
                let parent = &requests[req];
                let piece = Request {
                    offset: parent.offset + offset,
                    len: (len - offset).min(max_bytes) as u32,
                    stamps: Stamps { issued: parent.stamps.issued, ..Stamps::default() },
                    ..parent.clone()
                };
                let id = requests.insert(piece);
                *self.req_mut(id) = HostReq { parent: req.0, ..base };
                let rq = self.sched_request(requests, id, job, t);
                t = self.submit_rq(requests, rq, hwq, core, bypass, max_sectors, t, &mut out);
            }
            t
        };
        self.ring_all(q, requests, devices, &mut out, None);
        self.dispatched = out;
        t
    }

    /// Bio `bio` of job `j` merged into the request `into` (plugged, or waiting in the scheduler: of the same
    /// job either way), which now spans `sectors` from `sector`.
    /// The first merge makes a request of its own for the merged extent; the application requests ride on it.
    fn carry(&mut self, requests: &mut RequestArena, j: u32, into: ReqId, bio: ReqId, sector: u64, sectors: u32) {
        let carrier = if self.reqs[into.index()].riders != NO_PARENT {
            into
        } else {
            let first = &requests[into];
            let merged =
                Request { stamps: Stamps { issued: first.stamps.issued, ..Stamps::default() }, ..first.clone() };
            let c = requests.insert(merged);
            let base = self.reqs[into.index()];
            *self.req_mut(c) = HostReq { riders: into.0, ..base };
            // Wherever the merged request is: in the job's plug, or waiting in the scheduler.
            self.jobs[j as usize].plug.rename(into, c);
            self.block.rename(into, c);
            c
        };
        let first_rider = self.reqs[carrier.index()].riders;
        self.reqs[bio.index()].next_rider = first_rider;
        self.reqs[carrier.index()].riders = bio.0;
        let r = &mut requests[carrier];
        r.offset = sector * 512;
        r.len = sectors * 512;
    }

    /// The block layer's view of request `id` of job `job`, entering it at `at`.
    fn sched_request(&self, requests: &RequestArena, id: ReqId, job: u32, at: Time) -> SchedRequest {
        let (r, job) = (&requests[id], &self.jobs[job as usize]);
        let io = self.reqs[id.index()].io_context.unwrap_or(IoContext {
            task: job.task,
            class: job.ioprio_class,
            level: IOPRIO_NORM_LEVEL,
        });
        SchedRequest {
            id,
            op: r.op,
            sector: r.offset / 512,
            sectors: r.len.div_ceil(512),
            flow: r.flow,
            task: io.task,
            prio_class: io.class,
            prio_level: io.level,
            critical: r.class.criticality == Criticality::Critical,
            sync: r.is_sync(),
            mergeable: !r.fua && !self.reqs[id.index()].fs_bio && self.reqs[id.index()].parent == NO_PARENT,
            inserted_at: at,
        }
    }
}
