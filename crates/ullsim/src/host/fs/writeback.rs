//! When dirty pages are written back, and how long a writer is made to wait: Linux's writeback thresholds
//! and `balance_dirty_pages` (mm/page-writeback.c, 5.x), reduced to the decisions the file system needs.
//!
//! - Thresholds are shares of the memory the page cache may use: `dirty_background_ratio` (10%) wakes the
//!   flusher to write back until below it; `dirty_ratio` (20%) is the limit writers are throttled towards.
//! - Periodic writeback: every `dirty_writeback_centisecs` (5 s) the flusher writes back pages dirtied more
//!   than `dirty_expire_centisecs` (30 s) ago.
//! - Throttling: below the "freerun" point, halfway between the two thresholds, writers run free. Above it
//!   a writer that dirtied `n` pages pauses `n / rate`, where the rate is its share of the writeback
//!   bandwidth scaled by Linux's position ratio, a cubic that is 1 at the setpoint (halfway between freerun
//!   and the limit), 2 at freerun and 0 at the limit; pauses are capped at `max_pause` (200 ms in Linux).
//!   Linux also estimates the bandwidth and smooths the rate over time; here the caller gives the bandwidth.

use crate::engine::Time;

/// The writeback settings, in pages and ns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WritebackPolicy {
    /// `dirty_background_ratio` of the cache's pages: above it the flusher writes back in the background.
    pub background_pages: u64,
    /// `dirty_ratio` of the cache's pages: writers are throttled so dirty pages stay below it.
    pub limit_pages: u64,
    /// `dirty_expire_centisecs`: a page dirty this long is written back by the next periodic pass.
    pub expire_ns: Time,
    /// `dirty_writeback_centisecs`: the period of the flusher's periodic pass.
    pub interval_ns: Time,
    /// Longest pause of a throttled writer (Linux's MAX_PAUSE: 200 ms).
    pub max_pause_ns: Time,
}

/// Why the flusher writes back now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WritebackReason {
    /// Dirty pages above the background threshold: write back the oldest until below it.
    Background,
    /// Pages dirty longer than the expiry: write back those.
    Expired,
}

impl WritebackPolicy {
    /// Linux's defaults for a cache of `cache_pages` pages.
    pub fn linux_defaults(cache_pages: u64) -> WritebackPolicy {
        WritebackPolicy {
            background_pages: cache_pages / 10,
            limit_pages: cache_pages / 5,
            expire_ns: 30_000_000_000,
            interval_ns: 5_000_000_000,
            max_pause_ns: 200_000_000,
        }
    }

    /// Below this many dirty pages writers are never throttled.
    pub fn freerun_pages(&self) -> u64 {
        (self.background_pages + self.limit_pages) / 2
    }

    /// Where the position ratio is 1: the dirty level throttling steers to.
    pub fn setpoint_pages(&self) -> u64 {
        (self.freerun_pages() + self.limit_pages) / 2
    }

    /// Linux's position ratio at `dirty` pages: `1 + ((setpoint − dirty) / (limit − freerun) · 2)³`, in [0, 2].
    pub fn position_ratio(&self, dirty: u64) -> f64 {
        let span = (self.limit_pages.saturating_sub(self.freerun_pages())).max(1) as f64 / 2.0;
        let x = (self.setpoint_pages() as f64 - dirty as f64) / span;
        (1.0 + x * x * x).clamp(0.0, 2.0)
    }

    /// How long a writer that just dirtied `pages` waits, with `dirty` pages in the cache, the device writing
    /// back `writeback_pages_per_s`, and `dirtiers` tasks sharing that bandwidth.
    pub fn writer_pause_ns(&self, dirty: u64, pages: u64, writeback_pages_per_s: f64, dirtiers: u32) -> Time {
        if dirty < self.freerun_pages() || pages == 0 {
            return 0;
        }
        let rate = writeback_pages_per_s / f64::from(dirtiers.max(1)) * self.position_ratio(dirty);
        if rate <= 0.0 || !rate.is_finite() {
            return self.max_pause_ns;
        }
        ((pages as f64 / rate * 1e9) as Time).min(self.max_pause_ns)
    }

    /// Whether the flusher has work at `now`, with `dirty` pages of which the oldest was dirtied at
    /// `oldest_dirty_at`: background writeback first, else expired pages.
    pub fn flusher_work(&self, dirty: u64, oldest_dirty_at: Option<Time>, now: Time) -> Option<WritebackReason> {
        if dirty > self.background_pages {
            return Some(WritebackReason::Background);
        }
        let oldest = oldest_dirty_at?;
        (now.saturating_sub(oldest) >= self.expire_ns).then_some(WritebackReason::Expired)
    }

    /// The pages a periodic pass at `now` writes back: those dirtied at or before this time.
    pub fn expired_by(&self, now: Time) -> Time {
        now.saturating_sub(self.expire_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1,000,000 pages of cache (about 3.8 GiB): background at 100,000, limit at 200,000.
    fn policy() -> WritebackPolicy {
        WritebackPolicy::linux_defaults(1_000_000)
    }

    #[test]
    fn thresholds_follow_the_linux_defaults() {
        let p = policy();
        assert_eq!(
            (p.background_pages, p.limit_pages, p.freerun_pages(), p.setpoint_pages()),
            (100_000, 200_000, 150_000, 175_000)
        );
        assert_eq!(p.position_ratio(175_000), 1.0);
        assert_eq!(p.position_ratio(150_000), 2.0);
        assert_eq!(p.position_ratio(200_000), 0.0);
        assert!(p.position_ratio(160_000) > p.position_ratio(170_000), "falls as dirty pages rise");
    }

    #[test]
    fn writers_run_free_below_freerun_and_are_paced_to_the_writeback_bandwidth_above_it() {
        let p = policy();
        // 25,600 pages/s (100 MiB/s) of writeback.
        let bw = 25_600.0;
        assert_eq!(p.writer_pause_ns(149_999, 32, bw, 1), 0);
        // At the setpoint a single writer is paced to exactly the bandwidth: 32 pages take 1.25 ms.
        assert_eq!(p.writer_pause_ns(175_000, 32, bw, 1), 1_250_000);
        // Two writers share it.
        assert_eq!(p.writer_pause_ns(175_000, 32, bw, 2), 2_500_000);
        // Near the limit the pause grows, and at the limit it is the maximum.
        assert!(p.writer_pause_ns(195_000, 32, bw, 1) > 1_250_000);
        assert_eq!(p.writer_pause_ns(200_000, 32, bw, 1), p.max_pause_ns);
        assert_eq!(p.writer_pause_ns(250_000, 32, bw, 1), p.max_pause_ns);
    }

    #[test]
    fn the_flusher_writes_back_above_the_background_threshold_or_when_pages_expire() {
        let p = policy();
        assert_eq!(p.flusher_work(100_001, Some(0), 1), Some(WritebackReason::Background));
        assert_eq!(p.flusher_work(10, Some(1_000), 30_000_000_999), None, "29.999999999 s old");
        assert_eq!(p.flusher_work(10, Some(1_000), 30_000_001_000), Some(WritebackReason::Expired));
        assert_eq!(p.flusher_work(0, None, 60_000_000_000), None);
        assert_eq!(p.expired_by(35_000_000_000), 5_000_000_000);
    }
}
