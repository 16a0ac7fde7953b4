//! B-WF2Q+ (block/bfq-wf2q.c) over the queues of one I/O priority class: virtual time, the weight sum, the
//! active queues (busy, waiting for service) and the idle ones (empty, but with a finish time still ahead
//! of the virtual time, so their weight stays in the sum).
//!
//! Linux keeps both sets in red-black trees, the active one augmented with each subtree's smallest start
//! (`min_start`), "to preserve an O(log N) overall complexity" (Documentation/block/bfq-iosched.rst). The
//! model keeps them in vectors, which decide the same order, and counts the tree nodes Linux's operations
//! would visit ([`ServiceTree::take_visits`]): the scheduler's CPU time grows with them.

/// Fixed-point shift of virtual times (`WFQ_SERVICE_SHIFT`).
const SERVICE_SHIFT: u32 = 22;

/// Virtual time `a` is after `b`; virtual times wrap, as in Linux's `bfq_gt`.
pub(super) fn vt_after(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) > 0
}

/// Virtual time taken by `service` sectors at `weight` (`bfq_delta`).
pub(super) fn vt_delta(service: u64, weight: u64) -> u64 {
    (service << SERVICE_SHIFT) / weight.max(1)
}

/// A queue's timestamps as the service tree sees them (`bfq_entity`).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Stamps {
    pub start: u64,
    pub finish: u64,
    /// Order of insertion into the active tree: among equal finish times the earlier one goes first (the
    /// red-black tree puts an equal key to the right).
    pub order: u64,
}

/// One class's service tree.
#[derive(Debug, Default)]
pub(super) struct ServiceTree {
    /// System virtual time V.
    pub vtime: u64,
    /// Weights of the queues on the tree (active, in service or idle): `wsum`.
    pub wsum: u64,
    /// Queues in the active tree, with their timestamps looked up by the caller.
    pub active: Vec<usize>,
    /// Queues in the idle tree.
    pub idle: Vec<usize>,
    /// Tree nodes Linux's operations visited since the last [`ServiceTree::take_visits`].
    visits: u64,
}

/// Levels below the root of a balanced binary tree of `n` nodes (`ceil(log2 n)`): what a descent or an
/// ascent visits beyond the root. A one-node tree costs nothing beyond the measured per-request time.
pub(super) fn levels(n: usize) -> u64 {
    u64::from(usize::BITS - n.saturating_sub(1).leading_zeros())
}

impl ServiceTree {
    /// `bfq_active_insert`: `bfq_insert`'s descent, then `bfq_update_active_tree`'s ascent to the root
    /// (re-computing `min_start` on the way).
    pub fn insert_active(&mut self, q: usize) {
        self.active.push(q);
        self.visits += 2 * levels(self.active.len());
    }

    /// `bfq_active_extract`: `bfq_find_deepest`'s walk to the deepest node the erase touches, then the
    /// ascent of `bfq_update_active_tree`.
    pub fn extract_active(&mut self, q: usize) {
        self.visits += 2 * levels(self.active.len());
        self.active.retain(|&i| i != q);
    }

    /// `bfq_idle_insert`: `bfq_insert`'s descent of the idle tree (not augmented).
    pub fn insert_idle(&mut self, q: usize) {
        self.idle.push(q);
        self.visits += levels(self.idle.len());
    }

    /// `bfq_idle_extract`: the erase and the `rb_next`/`rb_prev` walk that renews `first_idle`/`last_idle`.
    pub fn extract_idle(&mut self, q: usize) {
        self.visits += levels(self.idle.len());
        self.idle.retain(|&i| i != q);
    }

    /// Tree nodes visited since the last call (then zero again).
    pub fn take_visits(&mut self) -> u64 {
        std::mem::take(&mut self.visits)
    }

    /// `bfq_first_active_entity` after `bfq_calc_vtime_jump`/`bfq_update_vtime`: if no active queue is
    /// eligible (start <= V), V jumps to the smallest start; then the eligible queue with the smallest
    /// finish (the earliest inserted among equals). `stamps` gives a queue's timestamps. Returns it and
    /// whether V jumped (the caller then runs `forget_idle`). Linux descends the active tree by `min_start`:
    /// one visit per level.
    pub fn pick(&mut self, stamps: impl Fn(usize) -> Stamps) -> Option<(usize, bool)> {
        self.visits += levels(self.active.len());
        let min_start =
            self.active.iter().map(|&q| stamps(q).start).reduce(|m, s| if vt_after(m, s) { s } else { m })?;
        let jumped = min_start > self.vtime && vt_after(min_start, self.vtime);
        if jumped {
            self.vtime = min_start;
        }
        let best =
            self.active.iter().copied().filter(|&q| !vt_after(stamps(q).start, self.vtime)).min_by(|&a, &b| {
                let (sa, sb) = (stamps(a), stamps(b));
                if sa.finish == sb.finish {
                    sa.order.cmp(&sb.order)
                } else if vt_after(sa.finish, sb.finish) {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Less
                }
            })?;
        Some((best, jumped))
    }

    /// `bfq_forget_idle`, which drops at most one queue per call: with no active queue, V first moves up to
    /// the last idle finish time if it passed it; then the idle queue with the smallest finish, if V has
    /// reached it, leaves the tree (returned: the caller takes its weight out and forgets it).
    pub fn forget_idle(&mut self, stamps: impl Fn(usize) -> Stamps) -> Option<usize> {
        let finish = |q: usize| stamps(q).finish;
        let first = self.idle.iter().copied().reduce(|a, b| if vt_after(finish(a), finish(b)) { b } else { a })?;
        let last = self.idle.iter().copied().reduce(|a, b| if vt_after(finish(b), finish(a)) { b } else { a })?;
        if self.active.is_empty() && !vt_after(finish(last), self.vtime) {
            self.vtime = finish(last);
        }
        if vt_after(finish(first), self.vtime) {
            return None;
        }
        self.extract_idle(first);
        Some(first)
    }
}
