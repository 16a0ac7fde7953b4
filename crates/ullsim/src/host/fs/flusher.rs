//! The flusher thread (the per-device writeback worker): wakes every `dirty_writeback_centisecs` (5 s) or
//! when a writer pushes dirty pages past the background threshold, and writes back the oldest dirty pages
//! in batches of at most [`BATCH_PAGES`] as asynchronous, never critical, writes until it has no more work
//! (`writeback.rs` decides). It waits for each batch: the queue bounds what writeback keeps in flight.

use crate::engine::Time;
use crate::host::fs::writeback::WritebackReason;
use crate::host::fs::FileSystem;
use crate::host::syscall::fs_step::FsStep;

/// Pages one batch writes back (Linux's writeback chunk: MAX_WRITEBACK_PAGES = 1024, 4 MiB).
pub const BATCH_PAGES: u64 = 1024;
/// Linux's first estimate of the writeback bandwidth (INIT_BW: 100 MiB/s), in pages per second.
const INIT_PAGES_PER_S: f64 = 25_600.0;

/// The flusher's program.
pub struct Flusher {
    batch_submitted: bool,
    batch_started: Time,
    batch_pages: u64,
    last_pass: Time,
    /// Smoothed writeback bandwidth, pages per second (what throttled writers share).
    pages_per_s: f64,
}

impl Flusher {
    pub fn new() -> Flusher {
        Flusher {
            batch_submitted: false,
            batch_started: 0,
            batch_pages: 0,
            last_pass: 0,
            pages_per_s: INIT_PAGES_PER_S,
        }
    }

    /// The writeback bandwidth estimate, pages per second.
    pub fn pages_per_s(&self) -> f64 {
        self.pages_per_s
    }

    /// The next step at `now`.
    pub fn next(&mut self, fs: &mut FileSystem, now: Time) -> FsStep {
        if self.batch_submitted {
            self.batch_submitted = false;
            return FsStep::WaitBios;
        }
        if self.batch_pages > 0 {
            // A batch completed: fold its rate into the estimate (Linux smooths over ~200 ms windows).
            let secs = now.saturating_sub(self.batch_started).max(1) as f64 / 1e9;
            self.pages_per_s = 0.75 * self.pages_per_s + 0.25 * (self.batch_pages as f64 / secs);
            self.batch_pages = 0;
        }
        let periodic = now >= self.last_pass + fs.policy.interval_ns;
        let reason = fs.policy.flusher_work(fs.cache.dirty_pages(), fs.cache.oldest_dirty_at(), now);
        let dirtied_by = match reason {
            Some(WritebackReason::Background) => Time::MAX,
            Some(WritebackReason::Expired) if periodic => fs.policy.expired_by(now),
            _ => {
                if periodic {
                    self.last_pass = now;
                }
                return FsStep::Idle(Some(self.last_pass + fs.policy.interval_ns));
            }
        };
        let batch = fs.cache.writeback_batch(BATCH_PAGES, dirtied_by);
        if batch.is_empty() {
            self.last_pass = now;
            return FsStep::Idle(Some(now + fs.policy.interval_ns));
        }
        let mut bios = Vec::new();
        for (file, first, count) in batch {
            self.batch_pages += count;
            fs.data_bios(file, first, count, true, &mut bios);
        }
        self.batch_started = now;
        self.batch_submitted = true;
        FsStep::submit(bios)
    }
}

impl Default for Flusher {
    fn default() -> Self {
        Flusher::new()
    }
}
