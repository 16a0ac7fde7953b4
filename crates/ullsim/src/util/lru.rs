//! A fixed-capacity LRU set of u64 keys: O(1) touch, insert and evict, no allocation after warm-up.

use rustc_hash::FxHashMap;

const NIL: u32 = u32::MAX;

#[derive(Debug, Clone)]
struct Node {
    key: u64,
    prev: u32,
    next: u32,
}

/// Least-recently-used set. `head` is the most recent entry, `tail` the eviction candidate.
#[derive(Debug, Clone)]
pub struct LruSet {
    capacity: usize,
    index: FxHashMap<u64, u32>,
    nodes: Vec<Node>,
    free: Vec<u32>,
    head: u32,
    tail: u32,
}

impl LruSet {
    pub fn new(capacity: usize) -> Self {
        LruSet { capacity, index: FxHashMap::default(), nodes: Vec::new(), free: Vec::new(), head: NIL, tail: NIL }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    pub fn contains(&self, key: u64) -> bool {
        self.index.contains_key(&key)
    }

    fn unlink(&mut self, n: u32) {
        let Node { prev, next, .. } = self.nodes[n as usize];
        if prev != NIL {
            self.nodes[prev as usize].next = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            self.nodes[next as usize].prev = prev;
        } else {
            self.tail = prev;
        }
    }

    fn push_front(&mut self, n: u32) {
        self.nodes[n as usize].prev = NIL;
        self.nodes[n as usize].next = self.head;
        if self.head != NIL {
            self.nodes[self.head as usize].prev = n;
        } else {
            self.tail = n;
        }
        self.head = n;
    }

    /// If `key` is present, make it most recent and return true.
    pub fn touch(&mut self, key: u64) -> bool {
        match self.index.get(&key) {
            Some(&n) => {
                if self.head != n {
                    self.unlink(n);
                    self.push_front(n);
                }
                true
            }
            None => false,
        }
    }

    /// Insert `key` as most recent (or refresh it). Returns the key evicted to make room, if any.
    /// With capacity 0 nothing is stored.
    pub fn insert(&mut self, key: u64) -> Option<u64> {
        if self.capacity == 0 {
            return None;
        }
        if self.touch(key) {
            return None;
        }
        let evicted = if self.index.len() >= self.capacity { self.pop_lru() } else { None };
        let node = Node { key, prev: NIL, next: NIL };
        let n = match self.free.pop() {
            Some(n) => {
                self.nodes[n as usize] = node;
                n
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        };
        self.push_front(n);
        self.index.insert(key, n);
        evicted
    }

    /// Remove `key`; returns whether it was present.
    pub fn remove(&mut self, key: u64) -> bool {
        match self.index.remove(&key) {
            Some(n) => {
                self.unlink(n);
                self.free.push(n);
                true
            }
            None => false,
        }
    }

    /// Remove and return the least recently used key.
    pub fn pop_lru(&mut self) -> Option<u64> {
        if self.tail == NIL {
            return None;
        }
        let n = self.tail;
        let key = self.nodes[n as usize].key;
        self.unlink(n);
        self.index.remove(&key);
        self.free.push(n);
        Some(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_used() {
        let mut lru = LruSet::new(3);
        assert_eq!(lru.insert(1), None);
        assert_eq!(lru.insert(2), None);
        assert_eq!(lru.insert(3), None);
        assert!(lru.touch(1));
        assert_eq!(lru.insert(4), Some(2));
        assert!(!lru.contains(2));
        assert!(lru.remove(3));
        assert_eq!(lru.len(), 2);
        assert_eq!(lru.pop_lru(), Some(1));
        assert_eq!(lru.pop_lru(), Some(4));
        assert_eq!(lru.pop_lru(), None);
    }

    #[test]
    fn zero_capacity_stores_nothing() {
        let mut lru = LruSet::new(0);
        assert_eq!(lru.insert(7), None);
        assert!(!lru.contains(7));
    }
}
