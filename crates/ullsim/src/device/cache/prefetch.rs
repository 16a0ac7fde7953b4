//! Pages being read ahead (FlashShare's read prefetch): which class asked, whether a write made the data
//! stale on its way, and the demand reads waiting for it. A demand read that finds its page here waits for
//! that flash read rather than issuing a second one, as firmware that tracks its reads in flight would.

use rustc_hash::FxHashMap;

use crate::request::ReqId;

/// One read ahead in flight.
#[derive(Debug, Default)]
pub struct InFlight {
    /// The class it is read for (a [`super::class_index`]).
    pub class: usize,
    /// A host write of the page arrived meanwhile: the data read is old and is not kept.
    pub stale: bool,
    /// Demand reads waiting for it.
    pub waiters: Vec<ReqId>,
}

#[derive(Debug, Default)]
pub struct InFlightPrefetches {
    by_page: FxHashMap<u64, InFlight>,
}

impl InFlightPrefetches {
    pub fn has(&self, lpa: u64) -> bool {
        !self.by_page.is_empty() && self.by_page.contains_key(&lpa)
    }

    pub fn start(&mut self, lpa: u64, class: usize) {
        let previous = self.by_page.insert(lpa, InFlight { class, ..InFlight::default() });
        debug_assert!(previous.is_none(), "page {lpa} is read ahead twice");
    }

    /// Let `req` wait for the read ahead of `lpa`, if there is one.
    pub fn join(&mut self, lpa: u64, req: ReqId) -> bool {
        if self.by_page.is_empty() {
            return false;
        }
        match self.by_page.get_mut(&lpa) {
            Some(read) => {
                read.waiters.push(req);
                true
            }
            None => false,
        }
    }

    /// A host write of `lpa` arrived.
    pub fn rewritten(&mut self, lpa: u64) {
        if let Some(read) = self.by_page.get_mut(&lpa) {
            read.stale = true;
        }
    }

    pub fn finish(&mut self, lpa: u64) -> InFlight {
        self.by_page.remove(&lpa).expect("a read ahead that was not started")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiters_and_staleness_follow_the_page() {
        let mut p = InFlightPrefetches::default();
        assert!(!p.join(7, ReqId(1)), "nothing in flight");
        p.start(7, 1);
        assert!(p.has(7) && p.join(7, ReqId(1)) && p.join(7, ReqId(2)));
        p.rewritten(8); // another page: no effect
        let done = p.finish(7);
        assert_eq!((done.class, done.stale, done.waiters), (1, false, vec![ReqId(1), ReqId(2)]));
        p.start(9, 0);
        p.rewritten(9);
        assert!(p.finish(9).stale && !p.has(9));
    }
}
