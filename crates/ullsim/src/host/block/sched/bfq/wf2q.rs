//! B-WF2Q+ (block/bfq-wf2q.c) over the queues of one I/O priority class: virtual time, the weight sum, the
//! active queues (busy, waiting for service) and the idle ones (empty, but with a finish time still ahead
//! of the virtual time, so their weight stays in the sum).

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
}

impl ServiceTree {
    /// `bfq_first_active_entity` after `bfq_calc_vtime_jump`/`bfq_update_vtime`: if no active queue is
    /// eligible (start <= V), V jumps to the smallest start; then the eligible queue with the smallest
    /// finish (the earliest inserted among equals). `stamps` gives a queue's timestamps. Returns it and
    /// whether V jumped (the caller then runs `forget_idle`).
    pub fn pick(&mut self, stamps: impl Fn(usize) -> Stamps) -> Option<(usize, bool)> {
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
        self.idle.retain(|&q| q != first);
        Some(first)
    }
}
