//! The NVMe driver: one queue pair per hardware queue (one per core by default), the command and doorbell
//! cost, and interrupt vectors with optional coalescing. Each queue's interrupt goes to the first core that
//! submits to it, or where `irq_cpus` puts it; one handler run processes every completion entry pending on
//! its vector.
//!
//! Flows of different NVMe priority classes (`prio`) get a set of queue pairs each, created with that class
//! (QPRIO), as the NVMe weighted-round-robin patches for Linux map per-class queue sets; a request goes to
//! its flow's set, on the queue of the submitting core. With a single class there is one set.
//!
//! With `dual_sq` (FlashShare, OSDI'18 §3.3) each queue of the first set gets a second submission queue of
//! the urgent class that shares its completion queue (and so its interrupt vector): latency-critical
//! requests go there, the others to their set as before.
//!
//! With several drives each controller gets the same layout of queues and vectors of its own (Linux sets up
//! every NVMe controller alike, with managed interrupts spread over the cores the same way: `nvme_setup_io_queues`,
//! `pci_alloc_irq_vectors_affinity`; `irq_cpus_by_drive` may place each drive's vectors elsewhere). The host numbers hardware queues across drives: drive `d`'s are
//! `d * per_drive ..`, so a hardware queue names its drive.

use super::block::Caller;
use super::queue::HostQueue;
use crate::config::host::NvmeConfig;
use crate::device::Device;
use crate::engine::Time;
use crate::request::{NvmePriority, ReqId};

/// What the driver wants after a completion entry arrived on an interrupt-driven queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IrqAction {
    /// Raise the interrupt now.
    Fire,
    /// Coalescing: raise it at this time unless enough entries arrive first.
    ArmTimer(Time),
    /// Coalescing: wait (a timer is armed).
    Wait,
}

struct Vector {
    /// Completion entries waiting for the interrupt.
    pending: Vec<ReqId>,
    /// Generation of the armed coalescing timer (a fired interrupt makes older timers stale).
    timer_gen: u32,
    timer_armed: bool,
}

pub struct NvmeDriver {
    /// Driver work per command: nvme_queue_rq (with the IOMMU mapping, if any) plus the doorbell write.
    pub submit_ns: Time,
    /// nvme_queue_rq alone (a plug flush writes the doorbell once for its batch).
    pub queue_rq_ns: Time,
    pub doorbell_ns: Time,
    pub irq_delivery_ns: Time,
    pub isr_ns: Time,
    /// Per completion entry, with the IOMMU unmapping, if any.
    pub cqe_ns: Time,
    /// An AIOS read's command (LBIO): its pages come from a pool mapped in advance, so no mapping on
    /// submission and the unmapping deferred out of the completion (`host/full/lbio.rs`).
    pub premapped_submit_ns: Time,
    pub premapped_cqe_ns: Time,
    coalesce_count: u32,
    coalesce_time_ns: Time,
    /// The device's submission queue of each hardware queue (on the hardware queue's drive).
    device_queue: Vec<u32>,
    /// Hardware queues per drive.
    per_drive: u32,
    /// Queue pairs per priority set.
    set_size: u32,
    /// Hardware queues with a completion queue of their own (the priority sets'); with `dual_sq` the urgent
    /// submission queues follow them, the one of queue `h` at `paired + h`.
    paired: u32,
    dual_sq: bool,
    hwq_of_core: Vec<u32>,
    /// The core of each drive's vectors, by drive and vector.
    irq_core: Vec<Vec<u32>>,
    vectors: Vec<Vector>,
    interrupts: u64,
}

impl NvmeDriver {
    /// Create `queue_pairs` (0: one per core) queue pairs on each of `devices` for each priority class in
    /// `classes` (set `i` has class `classes[i]`).
    pub fn new(
        cfg: &NvmeConfig,
        cores: u32,
        queue_pairs: u32,
        classes: &[NvmePriority],
        devices: &mut [Device],
    ) -> Self {
        let set_size = if queue_pairs == 0 { cores } else { queue_pairs };
        let classes = if classes.is_empty() { &[NvmePriority::Medium][..] } else { classes };
        let hwq_of_core: Vec<u32> = (0..cores).map(|c| c % set_size).collect();
        let first_core = |h: u32| hwq_of_core.iter().position(|&q| q == h % set_size).unwrap_or(0) as u32;
        let count = set_size * classes.len() as u32;
        // Each drive's vectors go where its entry of `irq_cpus_by_drive` says, else where `irq_cpus` says (both
        // checked with the host's configuration), else each to its queue's first submitting core.
        let irq_core = (0..devices.len())
            .map(|drive| {
                let own = cfg.irq_cpus_by_drive.get(drive).filter(|list| !list.trim().is_empty());
                let list = own.unwrap_or(&cfg.irq_cpus);
                let irq_cpus = crate::config::scenario::parse_cpu_list(list, cores).unwrap_or_default();
                (0..count)
                    .map(|v| if irq_cpus.is_empty() { first_core(v) } else { irq_cpus[v as usize % irq_cpus.len()] })
                    .collect()
            })
            .collect();
        let per_drive = count + if cfg.dual_sq { set_size } else { 0 };
        let mut device_queue = Vec::with_capacity((per_drive as usize) * devices.len());
        for device in devices.iter_mut() {
            device_queue.extend((0..count).map(|h| device.create_queue(classes[(h / set_size) as usize])));
            if cfg.dual_sq {
                device_queue.extend((0..set_size).map(|_| device.create_queue(NvmePriority::Urgent)));
            }
        }
        NvmeDriver {
            submit_ns: cfg.queue_rq_ns.0 + cfg.iommu_map_ns.0 + cfg.doorbell_ns.0,
            queue_rq_ns: cfg.queue_rq_ns.0 + cfg.iommu_map_ns.0,
            doorbell_ns: cfg.doorbell_ns.0,
            irq_delivery_ns: cfg.irq_delivery_ns.0,
            isr_ns: cfg.isr_ns.0,
            cqe_ns: cfg.cqe_ns.0 + cfg.iommu_unmap_ns.0,
            premapped_submit_ns: cfg.queue_rq_ns.0 + cfg.doorbell_ns.0,
            premapped_cqe_ns: cfg.cqe_ns.0,
            coalesce_count: cfg.coalesce_count.max(1),
            coalesce_time_ns: cfg.coalesce_time_ns.0,
            vectors: (0..device_queue.len())
                .map(|_| Vector { pending: Vec::new(), timer_gen: 0, timer_armed: false })
                .collect(),
            device_queue,
            per_drive,
            set_size,
            paired: count,
            dual_sq: cfg.dual_sq,
            hwq_of_core,
            irq_core,
            interrupts: 0,
        }
    }

    /// How `core` calls the block layer for requests the driver gets one at a time: `nvme_queue_rq` and the
    /// doorbell each, the command's copy and the doorbell under the submission queue's lock.
    pub fn caller(&self, core: u32) -> Caller {
        Caller { core, driver_ns: self.submit_ns, sq_locked_ns: self.doorbell_ns }
    }

    /// How `core` calls the block layer for a plug's batch: `nvme_queue_rq` each, the doorbell once at the end
    /// ([`crate::host::block::BlockLayer::batch_doorbell`]).
    pub fn batch_caller(&self, core: u32) -> Caller {
        Caller { core, driver_ns: self.queue_rq_ns, sq_locked_ns: 0 }
    }

    /// Whether several cores submit to hardware queue `hwq` (fewer queue pairs than cores).
    pub fn is_shared(&self, hwq: u32) -> bool {
        let local = hwq % self.per_drive;
        let own = if local >= self.paired { local - self.paired } else { local % self.set_size };
        self.hwq_of_core.iter().filter(|&&q| q == own).count() > 1
    }

    pub fn hw_queues(&self) -> u32 {
        self.device_queue.len() as u32
    }

    /// Hardware queues per drive (each drive's are numbered from `drive * hw_queues_per_drive()`).
    pub fn hw_queues_per_drive(&self) -> u32 {
        self.per_drive
    }

    /// The hardware queue (submission queue) a core submits to on `drive` for a flow of priority set `set`;
    /// with `dual_sq`, a `critical` request's goes to the core's urgent one.
    pub fn hwq_of(&self, drive: u32, core: u32, set: u32, critical: bool) -> u32 {
        let own = self.hwq_of_core[core as usize];
        let local = if critical && self.dual_sq { self.paired + own } else { set * self.set_size + own };
        drive * self.per_drive + local
    }

    /// Every hardware queue `core` submits to on `drive`: its queue of each priority set, and with `dual_sq`
    /// its urgent one (blk-mq's queues that the core's requests pass through).
    pub fn hwqs_of_core(&self, drive: u32, core: u32) -> Vec<u32> {
        let own = self.hwq_of_core[core as usize];
        let sets = self.paired / self.set_size.max(1);
        let urgent = self.dual_sq.then_some(self.paired + own);
        let base = drive * self.per_drive;
        (0..sets).map(|set| set * self.set_size + own).chain(urgent).map(|local| base + local).collect()
    }

    /// The hardware queue whose completion queue (and interrupt vector) `hwq`'s completions go to: its
    /// own, or for an urgent submission queue of `dual_sq`, its pair's.
    pub fn cq_of(&self, hwq: u32) -> u32 {
        if hwq % self.per_drive >= self.paired {
            hwq - self.paired
        } else {
            hwq
        }
    }

    /// The core a hardware queue's interrupt goes to.
    pub fn irq_core(&self, hwq: u32) -> u32 {
        self.irq_core[(hwq / self.per_drive) as usize][(self.cq_of(hwq) % self.per_drive) as usize]
    }

    /// The command is in hardware queue `hwq`'s submission queue and the doorbell is written at `at`.
    pub fn ring(&self, devices: &mut [Device], q: &mut impl HostQueue, req: ReqId, hwq: u32, at: Time) {
        devices[(hwq / self.per_drive) as usize].ring_doorbell(q, req, self.device_queue[hwq as usize], at);
    }

    /// A completion entry for an interrupt-driven request arrived on `hwq` at `now`.
    /// (`hwq` names the completion queue: [`Self::cq_of`] the submission queue.)
    pub fn on_completion_entry(&mut self, hwq: u32, req: ReqId, now: Time) -> IrqAction {
        let v = &mut self.vectors[hwq as usize];
        v.pending.push(req);
        if v.pending.len() as u32 >= self.coalesce_count {
            return IrqAction::Fire;
        }
        if v.timer_armed {
            return IrqAction::Wait;
        }
        v.timer_armed = true;
        IrqAction::ArmTimer(now + self.coalesce_time_ns)
    }

    /// Generation of `hwq`'s coalescing timer (a timer event carries it; a stale one is ignored).
    pub fn timer_gen(&self, hwq: u32) -> u32 {
        self.vectors[hwq as usize].timer_gen
    }

    /// Raise `hwq`'s interrupt: take the entries it reports.
    pub fn fire(&mut self, hwq: u32, out: &mut Vec<ReqId>) {
        let v = &mut self.vectors[hwq as usize];
        v.timer_armed = false;
        v.timer_gen = v.timer_gen.wrapping_add(1);
        out.append(&mut v.pending);
        self.interrupts += 1;
    }

    pub fn interrupts(&self) -> u64 {
        self.interrupts
    }
}
