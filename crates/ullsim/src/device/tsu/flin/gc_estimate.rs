//! FLIN's per-flow GC cost estimate: GC time per host page each flow writes, from the GC the device charges
//! it and its relative storage usage.

use super::flow_slot;
use crate::engine::Time;

/// Weight of the past in the per-flow GC cost estimate at each epoch end: `estimate = DECAY × estimate +
/// this epoch's measurement`, so an epoch counts as much as all earlier ones together (half-life one epoch).
pub(super) const GC_ESTIMATE_DECAY: f64 = 0.5;

/// Registers of a flow's [`DistinctPages`] counter (a power of two; the estimate's relative error is about
/// `1.04 / sqrt(registers)`, 6.5%).
const DISTINCT_REGISTERS: usize = 256;

/// Distinct logical pages a flow has written (a HyperLogLog count: 256 bytes per flow whatever the drive's
/// size, where an exact set would need a bit per logical page). The pages a flow wrote and did not
/// overwrite since are the data it keeps on the drive: its storage usage.
#[derive(Debug, Clone)]
pub(super) struct DistinctPages {
    registers: Vec<u8>,
}

impl Default for DistinctPages {
    fn default() -> Self {
        DistinctPages { registers: vec![0; DISTINCT_REGISTERS] }
    }
}

impl DistinctPages {
    pub(super) fn add(&mut self, lpa: u64) {
        // splitmix64's finalizer: a fixed, well-mixed hash (no per-run seed, so runs stay deterministic).
        let mut h = lpa.wrapping_add(0x9e37_79b9_7f4a_7c15);
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^= h >> 31;
        let bits = DISTINCT_REGISTERS.trailing_zeros();
        let index = (h >> (64 - bits)) as usize;
        let rank = ((h << bits) | (1 << (bits - 1))).leading_zeros() as u8 + 1;
        self.registers[index] = self.registers[index].max(rank);
    }

    /// Estimated count (HyperLogLog with linear counting for small counts).
    pub(super) fn count(&self) -> f64 {
        let m = DISTINCT_REGISTERS as f64;
        let zeros = self.registers.iter().filter(|&&r| r == 0).count();
        let sum: f64 = self.registers.iter().map(|&r| (-(r as f64)).exp2()).sum();
        let raw = 0.7213 / (1.0 + 1.079 / m) * m * m / sum;
        if raw <= 2.5 * m && zeros > 0 {
            m * (m / zeros as f64).ln()
        } else {
            raw
        }
    }
}

/// One flow's GC measurements (see [`GcEstimate`]).
#[derive(Debug, Clone, Default)]
pub(super) struct FlowGc {
    /// GC die time charged to the flow and host pages it wrote, in the current epoch.
    epoch_gc_ns: Time,
    epoch_pages: u64,
    /// The same, exponentially decayed over the past epochs (`GC_ESTIMATE_DECAY`).
    gc_ns: f64,
    pages: f64,
    usage: DistinctPages,
}

/// Each flow's GC time per host page it writes, the GC cost FLIN charges to the flow's writes in their
/// alone time and stage 3's PW.
///
/// Source: FLIN's slides (seed 004, stage 3): "The number of GC activities is estimated based on 1) relative
/// write intensity, and 2) relative usage of the storage space". How the two combine is not in the slides;
/// here [inferred]:
/// - **Relative write intensity**: the GC die time the device charges the flow, split per plane in
///   proportion to the host pages each flow wrote there since the plane's previous job
///   (`device/gc_cost.rs`), so a flow that writes more is charged more of the GC it triggers.
/// - **Relative storage usage**: a job's page moves copy the data that is still valid, so GC costs more per
///   reclaimed block for a flow that keeps more data on the drive (a flow overwriting a small hot set leaves
///   blocks nearly all invalid). The charges are re-weighted by each flow's storage usage `u_f` (distinct
///   pages it wrote, [`DistinctPages`]) relative to the charge-weighted mean, which keeps their sum:
///   `GC_f = charged_f × u_f / ū`, `ū = Σ_g charged_g u_g / Σ_g charged_g`.
/// - **Per epoch**: charges and pages are measured per `flin_epoch_ns` epoch and decayed by
///   [`GC_ESTIMATE_DECAY`] at each epoch end (a flow's GC cost follows its current phase instead of
///   averaging over the whole run), and the estimate is recomputed then: `GC per page_f = GC_f /
///   pages_f` with both decayed. It is 0 until an epoch with GC ends.
#[derive(Debug)]
pub(super) struct GcEstimate {
    flows: Vec<FlowGc>,
    epoch_ns: Time,
    epoch_end: Time,
    /// The estimate, per flow, as of the last epoch end.
    per_page_ns: Vec<Time>,
}

impl GcEstimate {
    pub(super) fn new(epoch_ns: Time) -> Self {
        GcEstimate { flows: Vec::new(), epoch_ns, epoch_end: epoch_ns, per_page_ns: Vec::new() }
    }

    /// `flow` wrote logical page `lpa`.
    pub(super) fn host_write(&mut self, flow: u32, lpa: u64) {
        let f = flow_slot(&mut self.flows, flow);
        f.epoch_pages += 1;
        f.usage.add(lpa);
    }

    /// `ns` of GC die time was charged to `flow`.
    pub(super) fn charge(&mut self, flow: u32, ns: Time) {
        flow_slot(&mut self.flows, flow).epoch_gc_ns += ns;
    }

    pub(super) fn per_page(&self, flow: u32) -> Time {
        self.per_page_ns.get(flow as usize).copied().unwrap_or(0)
    }

    /// Close the epochs that ended by `now` and recompute the estimate.
    pub(super) fn roll(&mut self, now: Time) {
        if now < self.epoch_end {
            return;
        }
        let epochs = (now - self.epoch_end) / self.epoch_ns + 1;
        self.epoch_end += epochs * self.epoch_ns;
        // The epoch just closed enters at full weight; the (empty) epochs after it only decay.
        let idle_decay = GC_ESTIMATE_DECAY.powi(epochs.saturating_sub(1).min(64) as i32);
        for f in &mut self.flows {
            f.gc_ns = (GC_ESTIMATE_DECAY * f.gc_ns + std::mem::take(&mut f.epoch_gc_ns) as f64) * idle_decay;
            f.pages = (GC_ESTIMATE_DECAY * f.pages + std::mem::take(&mut f.epoch_pages) as f64) * idle_decay;
        }
        let total: f64 = self.flows.iter().map(|f| f.gc_ns).sum();
        let weighted_usage: f64 = self.flows.iter().map(|f| f.gc_ns * f.usage.count()).sum();
        self.per_page_ns.clear();
        for f in &self.flows {
            let estimate = if total > 0.0 && weighted_usage > 0.0 {
                let mean_usage = weighted_usage / total;
                f.gc_ns * f.usage.count() / mean_usage / f.pages.max(1.0)
            } else {
                0.0
            };
            self.per_page_ns.push(estimate.round() as Time);
        }
    }
}
