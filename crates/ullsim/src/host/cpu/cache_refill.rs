//! What a context switch costs beyond `cpu.context_switch_ns` when a core runs many tasks: the cache refill
//! of the task switched in (issue 31 §2). Each task touches `cpu.task_footprint_bytes` whenever it runs; the
//! core's private cache (`cpu.cache_bytes`, its L2) keeps what was touched last. A task switched back in after
//! `k` other tasks ran on its core finds its footprint intact while `(k + 1) × footprint` fits in the cache
//! (an LRU stack distance), and refills the part that does not fit, line by line from the shared last-level
//! cache, beyond it: so a core's context switches cost the same up to `cache / footprint` tasks and then grow
//! by up to `footprint / 64 × cpu.cache_refill_line_ns` (Li, Ding and Shen, ExpCS'07: a switch's indirect
//! cost grows with the working set once it exceeds the cache; lmbench's `lat_ctx` shows the same rise with
//! the process count).
//!
//! A task switched in on another core than the one it ran on last (migrated by the CPU scheduler's wake-up
//! placement or balancing) finds none of its footprint there: it refills all of it, its lines coming from the
//! other core's cache through the shared cache at the same cost a line.
//!
//! Ignores: misses beyond the last-level cache (footprints past it refill from memory, slower), a migration
//! across cache groups costing more a line than within one, the pseudo-LRU and associativity that smooth the
//! step, and what the interrupt handlers and the idle loop touch.

use crate::engine::Time;

/// Bytes of a cache line (x86).
const LINE_BYTES: u64 = 64;

/// The refill model of one host (every core alike).
#[derive(Debug, Clone, Copy)]
pub struct CacheRefill {
    cache_bytes: u64,
    footprint_bytes: u64,
    line_ns: Time,
}

impl CacheRefill {
    pub fn new(cache_bytes: u64, footprint_bytes: u64, line_ns: Time) -> Self {
        CacheRefill { cache_bytes, footprint_bytes, line_ns }
    }

    /// Refill time of a task switched in on a core it did not run on last: its whole footprint.
    pub fn migrated_ns(&self) -> Time {
        self.footprint_bytes.div_ceil(LINE_BYTES) * self.line_ns
    }

    /// Refill time of a task switched in after `others` other tasks ran on its core since it last ran there.
    pub fn refill_ns(&self, others: u64) -> Time {
        let touched_since = others.saturating_mul(self.footprint_bytes);
        let evicted = touched_since
            .saturating_add(self.footprint_bytes)
            .saturating_sub(self.cache_bytes)
            .min(self.footprint_bytes);
        evicted.div_ceil(LINE_BYTES) * self.line_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 256 KiB of cache and 32 KiB tasks: eight tasks share a core for free; the ninth pushes the oldest's
    /// footprint out, so a switch after eight others refills all 512 lines, and after more, no more than that.
    #[test]
    fn refill_starts_when_the_footprints_outgrow_the_cache() {
        let r = CacheRefill::new(256 << 10, 32 << 10, 9);
        assert_eq!(r.refill_ns(0), 0);
        assert_eq!(r.refill_ns(7), 0, "eight footprints fit");
        assert_eq!(r.refill_ns(8), 512 * 9, "the whole footprint is gone");
        assert_eq!(r.refill_ns(1_000), 512 * 9, "and never more than it");
        // Between, the part that does not fit: 20 KiB tasks, 7 others: 140 + 20 KiB fit; 12 others: 240 + 20
        // = 260 KiB, 4 KiB of it out; 13 others: 280 KiB, the whole 20 KiB out.
        let r = CacheRefill::new(256 << 10, 20 << 10, 10);
        assert_eq!(r.refill_ns(7), 0);
        assert_eq!(r.refill_ns(12), (260 - 256) * 16 * 10);
        assert_eq!(r.refill_ns(13), 20 * 16 * 10);
        assert_eq!(CacheRefill::new(256 << 10, 0, 9).refill_ns(1_000), 0, "no footprint, no refill");
    }
}
