//! The file system's locks and lines that every writer shares, on many cores (Linux fs/jbd2, mm/):
//!
//! - the journal's: a write dirties its inode (`file_update_time` -> `ext4_dirty_inode`), which opens and
//!   closes a JBD2 handle. `start_this_handle` (fs/jbd2/transaction.c) takes `read_lock(&j_state_lock)` (an
//!   atomic on the rwlock word, one line of the journal) and, in `add_transaction_credits` and at its end,
//!   `atomic_add_return(&t_outstanding_credits)` and `atomic_inc(&t_updates)` (the running transaction's
//!   counters, one more line); `jbd2_journal_stop` -> `stop_this_handle` does `atomic_dec_and_test(&t_updates)`
//!   on that line again. Each is a [`SharedLine`]: a write pays a transfer for each line another core
//!   touched last; the stop, just after (the handle covers `ext4_mark_inode_dirty` only), finds its line
//!   still on its core unless another core touched it in between;
//! - the commit's T_LOCKED window: `jbd2_journal_commit_transaction` (fs/jbd2/commit.c) sets the running
//!   transaction T_LOCKED under `write_lock(&j_state_lock)`, waits for `t_updates` to reach 0
//!   (`jbd2_journal_wait_updates`), drops the unused reserved buffers, cleans the checkpoint list
//!   (`jbd2_journal_clean_checkpoint_list`), clears the revoked flags (`jbd2_clear_buffer_revoked_flags`,
//!   a walk of the revoke hash table) and switches the revoke table, then sets T_FLUSH, clears
//!   `j_running_transaction` and wakes `j_wait_transaction_locked` (`wake_up_all`). A handle that starts
//!   meanwhile finds the transaction not T_RUNNING (`add_transaction_credits`) and sleeps in
//!   `wait_transaction_locked` until that wake-up;
//! - the page cache's `i_pages` lock of each file (`xa_lock_irqsave(&mapping->i_pages)`), a [`SpinLock`]: the
//!   writer takes it to tag each page dirty (`__folio_mark_dirty`, mm/page-writeback.c), the writeback's
//!   submitter (the flusher, an fsync, the journal thread's ordered data) to tag pages under writeback
//!   (`folio_start_writeback` -> `__folio_start_writeback`).
//!
//! One core alone never pays anything here: its lines stay in its cache, and a writer on the commit
//! thread's core cannot run while that thread does.

use crate::config::host::cpu_cost;
use crate::engine::Time;
use crate::host::block::{LineTransfer, SharedLine, SpinLock};

/// Holding a file's `i_pages` lock for one page: `__folio_mark_dirty`'s `folio_account_dirtied` (a handful
/// of per-CPU and memory-cgroup statistics) and `__xa_set_mark` (setting the dirty tag up the xarray's 2-3
/// levels), or `__folio_start_writeback`'s tag changes and statistics. [inferred]: ~10 cache-resident
/// updates of a few ns each, about a quarter of a 4 KiB page's copy (`host.fs.page_copy_ns`, 400 ns). The
/// time is inside the caller's per-page or per-bio cost already; the lock adds only the waits.
pub const PAGE_LOCK_HOLD_NS: Time = 100;

/// The commit thread's work from T_LOCKED to T_FLUSH when no handle is open. [inferred]: a dozen lock and
/// state updates, an empty reserved list and a short checkpoint list, and the walk of the 256 buckets of
/// the revoke hash table (`JOURNAL_REVOKE_DEFAULT_HASH`) in `jbd2_clear_buffer_revoked_flags`: ~1 µs on a
/// 2019 server core. It is part of the commit's set-up (`host.fs.commit_cpu_ns`), so never longer.
pub const COMMIT_LOCKED_NS: Time = 1_000;

/// A commit's T_LOCKED window.
#[derive(Debug, Clone, Copy)]
struct Locked {
    until: Time,
    /// The commit thread's core.
    core: u32,
}

/// The file system's shared locks and lines.
#[derive(Debug, Clone)]
pub struct FsLocks {
    transfer: LineTransfer,
    /// `j_state_lock`'s rwlock word.
    state_lock: SharedLine,
    /// The running transaction's `t_updates` and `t_outstanding_credits`.
    updates: SharedLine,
    /// By file number: its `i_pages` lock (made on first use; files are numbered from 0).
    i_pages: Vec<SpinLock>,
    locked: Option<Locked>,
    /// [`PAGE_LOCK_HOLD_NS`] and [`COMMIT_LOCKED_NS`] at the host's cores' speed.
    page_hold_ns: Time,
    commit_locked_ns: Time,
}

impl FsLocks {
    /// No line touched yet; `transfer` moves a line between cores.
    pub fn new(transfer: LineTransfer) -> FsLocks {
        FsLocks {
            transfer,
            state_lock: SharedLine::new(transfer),
            updates: SharedLine::new(transfer),
            i_pages: Vec::new(),
            locked: None,
            page_hold_ns: PAGE_LOCK_HOLD_NS,
            commit_locked_ns: COMMIT_LOCKED_NS,
        }
    }

    /// How long a commit's set-up holds the running transaction locked (T_LOCKED to T_FLUSH), at the cores'
    /// speed.
    pub fn commit_locked_ns(&self) -> Time {
        self.commit_locked_ns
    }

    /// The holds on cores `speed` times the reference machine's (`host.cpu.speed`): CPU work under the lock.
    pub fn set_cpu_speed(&mut self, speed: f64) {
        self.page_hold_ns = cpu_cost(PAGE_LOCK_HOLD_NS, speed);
        self.commit_locked_ns = cpu_cost(COMMIT_LOCKED_NS, speed);
    }

    /// If a handle started on `core` at `at` finds the running transaction T_LOCKED: when the commit wakes
    /// it. A writer on the commit thread's own core cannot run inside the window.
    pub fn locked_until(&self, core: u32, at: Time) -> Option<Time> {
        self.locked.filter(|l| l.core != core && at < l.until).map(|l| l.until)
    }

    /// A handle opened and closed on `core` at `at` (`start_this_handle`, `stop_this_handle`): the time its
    /// core spends pulling the journal's shared lines.
    pub fn start_and_stop_handle(&mut self, core: u32, at: Time) -> Time {
        let state = self.state_lock.touch(core, at);
        let start = state + self.updates.touch(core, at + state);
        start + self.updates.touch(core, at + start)
    }

    /// The commit thread on `core` locks the running transaction at `at` (`write_lock(&j_state_lock)`, then
    /// reading `t_updates` until it is 0) and unlocks it `window_ns` later (T_FLUSH). Its own transfers are
    /// not charged: tens of ns in a commit of tens of µs.
    pub fn lock_transaction(&mut self, core: u32, at: Time, window_ns: Time) {
        let state = self.state_lock.touch(core, at);
        let moved = state + self.updates.touch(core, at + state);
        self.locked = Some(Locked { until: at + moved + window_ns, core });
    }

    /// `core` takes `file`'s `i_pages` lock at `at` for a call's pages: how long it spins for it, the lock
    /// word's transfers included. The call's per-page acquisitions are one: the line moves at most once per
    /// call, and a contender waits for one page's hold.
    pub fn i_pages(&mut self, file: u32, core: u32, at: Time) -> Time {
        let file = file as usize;
        if self.i_pages.len() <= file {
            self.i_pages.resize(file + 1, SpinLock::new(self.transfer));
        }
        self.i_pages[file].acquire(core, at, self.page_hold_ns).waited
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_core_pays_nothing_and_alternating_cores_pay_a_transfer_per_line() {
        let mut alone = FsLocks::new(LineTransfer::uniform(40));
        let mut paid = 0;
        for i in 0..100 {
            paid += alone.start_and_stop_handle(2, i * 1_000) + alone.i_pages(7, 2, i * 1_000 + 10);
        }
        assert_eq!(paid, 0);
        // Two cores in turn: both journal lines move once per handle, and the file's lock word once per call.
        let mut two = FsLocks::new(LineTransfer::uniform(40));
        two.start_and_stop_handle(0, 0);
        two.i_pages(7, 0, 0);
        for i in 1..=100u32 {
            let at = Time::from(i) * 1_000;
            assert_eq!(two.start_and_stop_handle(i % 2, at), 2 * 40);
            assert_eq!(two.i_pages(7, i % 2, at + 500), 40);
        }
        // Different files: different locks.
        assert_eq!(two.i_pages(8, 0, 200_000), 0);
    }

    #[test]
    fn a_handle_in_the_locked_window_waits_for_its_end_unless_on_the_commit_core() {
        let mut l = FsLocks::new(LineTransfer::uniform(40));
        assert_eq!(l.locked_until(0, 0), None);
        l.start_and_stop_handle(0, 0);
        // The commit on core 3 pulls both lines first (80 ns), then works 1 µs.
        l.lock_transaction(3, 10_000, 1_000);
        assert_eq!(l.locked_until(0, 10_500), Some(11_080));
        assert_eq!(l.locked_until(3, 10_500), None);
        assert_eq!(l.locked_until(0, 11_080), None);
        // After it, the writer pulls both lines back from the commit's core.
        assert_eq!(l.start_and_stop_handle(0, 11_080), 80);
    }

    #[test]
    fn a_contender_waits_for_the_holders_page_and_the_hand_off() {
        let mut l = FsLocks::new(LineTransfer::uniform(40));
        assert_eq!(l.i_pages(1, 0, 1_000), 0);
        // Core 1 arrives 50 ns into core 0's hold: the rest of it, then two transfers (it queued).
        assert_eq!(l.i_pages(1, 1, 1_050), 50 + 80);
    }
}
