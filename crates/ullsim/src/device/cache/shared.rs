//! The `shared` read cache: one set-associative LRU for every class, no prefetch (the cache the model had
//! before policies; the same results byte for byte).

use super::ReadCachePolicy;
use crate::util::set_assoc::SetAssoc;

pub struct SharedLru {
    pages: SetAssoc,
}

impl SharedLru {
    pub fn new(capacity_pages: u64, ways: usize) -> Self {
        SharedLru { pages: SetAssoc::new(capacity_pages, ways) }
    }
}

impl ReadCachePolicy for SharedLru {
    fn lookup(&mut self, lpa: u64, _class: usize) -> bool {
        self.pages.touch(lpa)
    }

    fn contains(&self, lpa: u64, _class: usize) -> bool {
        self.pages.contains(lpa)
    }

    fn insert(&mut self, lpa: u64, _class: usize, grow: bool) {
        self.pages.insert(lpa, grow);
    }

    fn remove(&mut self, lpa: u64) {
        self.pages.remove(lpa);
    }

    fn evict_near(&mut self, lpa: u64, _class: usize) {
        self.pages.evict_near(lpa);
    }

    fn pages_held(&self) -> u64 {
        self.pages.len()
    }
}
