//! What a fio job does, in the terms a fit needs: the access pattern, the read share, the block size, the
//! queue depth and the number of jobs. The probe set ([`super::probe`]) writes jobs of these shapes and the
//! fio reader ([`super::fio_read`]) recognises them from a job's options.

use serde::{Deserialize, Serialize};

/// How a job walks the device's address space (fio's `rw`: `rand*` or not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    Random,
    Sequential,
}

/// One fio job's shape. Two jobs of the same shape measure the same point of a drive's curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct JobShape {
    pub pattern: Pattern,
    /// Percent of operations that are reads: 100 for `read`/`randread`, 0 for `write`/`randwrite`, fio's
    /// `rwmixread` for `rw`/`randrw` (fio's default 50).
    pub read_percent: u8,
    /// Bytes per I/O (fio's `bs`; one size for both directions).
    pub block_size: u64,
    /// I/Os each job keeps in flight (fio's `iodepth`; 1 for synchronous engines).
    pub iodepth: u32,
    /// Jobs running the same I/O at once (fio's `numjobs`).
    pub numjobs: u32,
}

impl JobShape {
    /// fio's `rw` value for this shape.
    pub fn fio_rw(&self) -> &'static str {
        match (self.pattern, self.read_percent) {
            (Pattern::Random, 100) => "randread",
            (Pattern::Random, 0) => "randwrite",
            (Pattern::Random, _) => "randrw",
            (Pattern::Sequential, 100) => "read",
            (Pattern::Sequential, 0) => "write",
            (Pattern::Sequential, _) => "rw",
        }
    }

    /// Whether the job writes (and so destroys data on the device it runs on).
    pub fn writes(&self) -> bool {
        self.read_percent < 100
    }

    /// I/Os in flight on the device when every job keeps its queue full.
    pub fn outstanding(&self) -> u64 {
        u64::from(self.iodepth) * u64::from(self.numjobs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rw_names_follow_fio() {
        let shape =
            |pattern, read_percent| JobShape { pattern, read_percent, block_size: 4096, iodepth: 1, numjobs: 1 };
        assert_eq!(shape(Pattern::Random, 100).fio_rw(), "randread");
        assert_eq!(shape(Pattern::Sequential, 0).fio_rw(), "write");
        assert_eq!(shape(Pattern::Random, 70).fio_rw(), "randrw");
        assert!(shape(Pattern::Random, 70).writes());
        assert!(!shape(Pattern::Sequential, 100).writes());
        let deep = JobShape { iodepth: 32, numjobs: 4, ..shape(Pattern::Random, 100) };
        assert_eq!(deep.outstanding(), 128);
    }
}
