//! A table of u32 values, 0 by default, stored in small leaves allocated on first write: writes scattered
//! over a huge index range cost a leaf (256 bytes) each rather than an operating-system page (4 KiB) of a
//! dense array. Used for the FTL's forward map, which garbage collection updates at random logical pages.

/// Entries per leaf.
const LEAF: usize = 64;

#[derive(Debug, Clone, Default)]
pub struct SparseTable {
    /// Per leaf-sized range of indices: 0 if never written, else the leaf's position in `leaves` + 1.
    leaf_of: Vec<u32>,
    leaves: Vec<[u32; LEAF]>,
}

impl SparseTable {
    /// A table of `len` zeros.
    pub fn new(len: u64) -> Self {
        SparseTable { leaf_of: vec![0; (len as usize).div_ceil(LEAF)], leaves: Vec::new() }
    }

    #[inline]
    pub fn get(&self, index: u64) -> u32 {
        match self.leaf_of[index as usize / LEAF] {
            0 => 0,
            leaf => self.leaves[leaf as usize - 1][index as usize % LEAF],
        }
    }

    #[inline]
    pub fn set(&mut self, index: u64, value: u32) {
        let slot = &mut self.leaf_of[index as usize / LEAF];
        if *slot == 0 {
            self.leaves.push([0; LEAF]);
            *slot = self.leaves.len() as u32;
        }
        self.leaves[*slot as usize - 1][index as usize % LEAF] = value;
    }

    /// Bytes of leaves allocated.
    pub fn leaf_bytes(&self) -> usize {
        self.leaves.len() * LEAF * 4
    }

    /// Heap bytes held: the leaf index (all of it: the OS maps it in as writes spread) and the leaves.
    pub fn bytes(&self) -> u64 {
        (self.leaf_of.len() * 4 + self.leaf_bytes()) as u64
    }

    /// The most `bytes` can be for a table of `len` entries (every leaf written).
    pub fn bytes_at_most(len: u64) -> u64 {
        len.div_ceil(LEAF as u64) * (4 + LEAF as u64 * 4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_zero_until_written_and_allocates_only_touched_leaves() {
        let mut t = SparseTable::new(1 << 30);
        assert_eq!(t.get(123_456_789), 0);
        t.set(123_456_789, 7);
        t.set(123_456_790, 8);
        t.set(5, 9);
        assert_eq!((t.get(123_456_789), t.get(123_456_790), t.get(5), t.get(6)), (7, 8, 9, 0));
        assert_eq!(t.leaf_bytes(), 2 * LEAF * 4);
        assert!(t.bytes() <= SparseTable::bytes_at_most(1 << 30));
    }
}
