//! Hybrid polling for every request (Linux io_poll_delay = 0): sleep half the mean service time of recent
//! polled requests of the same direction and size bucket, then spin. Saves most of the polling CPU at the
//! cost of the timer's wake-up when the estimate is long. Linux keeps the mean per bucket over a 100 ms
//! stats window; a running mean per bucket is kept here.

use super::{CompletionPolicy, WaitMode};
use crate::engine::Time;
use crate::request::{Class, Op};

/// Weight of a new sample in the running mean (1/8, as cheap EWMAs in the kernel use).
const EWMA_SHIFT: u32 = 3;
/// Size buckets per direction: 512 B, 1 KiB, ... 32 KiB, and 64 KiB or more (`BLK_MQ_POLL_STATS_BKTS` / 2).
const SIZE_BUCKETS: usize = 8;

/// Linux's `blk_mq_poll_stats_bkt`: direction, then log2 of the size from 512 bytes.
fn bucket(op: Op, bytes: u32) -> usize {
    let size = (bytes.max(512).ilog2() - 9) as usize;
    let dir = match op {
        Op::Read => 0,
        Op::Write => 1,
        // rq_data_dir(REQ_OP_FLUSH) is READ: Linux pools a flush with the smallest reads.
        Op::Flush => 0,
    };
    dir * SIZE_BUCKETS + size.min(SIZE_BUCKETS - 1)
}

#[derive(Default)]
pub struct Hybrid {
    /// Running mean of the service time per bucket, ns (0 until the bucket's first sample: no sleep).
    mean_service_ns: [Time; 2 * SIZE_BUCKETS],
}

impl CompletionPolicy for Hybrid {
    fn name(&self) -> &'static str {
        "hybrid"
    }
    fn mode(&self, _class: Class, _hipri: bool) -> WaitMode {
        WaitMode::Hybrid
    }
    fn observe(&mut self, op: Op, bytes: u32, service_ns: Time) {
        let mean = &mut self.mean_service_ns[bucket(op, bytes)];
        *mean = if *mean == 0 { service_ns } else { *mean - (*mean >> EWMA_SHIFT) + (service_ns >> EWMA_SHIFT) };
    }
    fn sleep_before_poll(&self, op: Op, bytes: u32) -> Time {
        self.mean_service_ns[bucket(op, bytes)] / 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleeps_half_the_mean_service_time_of_its_bucket() {
        let mut h = Hybrid::default();
        assert_eq!(h.sleep_before_poll(Op::Read, 4096), 0);
        for _ in 0..200 {
            h.observe(Op::Read, 4096, 10_000);
            h.observe(Op::Write, 4096, 20_000);
            h.observe(Op::Read, 128 * 1024, 60_000);
        }
        let sleep = h.sleep_before_poll(Op::Read, 4096);
        assert!((4_900..=5_000).contains(&sleep), "{sleep}");
        assert!((9_800..=10_000).contains(&h.sleep_before_poll(Op::Write, 4096)));
        // 128 KiB shares the top bucket with 64 KiB; 8 KiB has no samples yet.
        assert!((29_400..=30_000).contains(&h.sleep_before_poll(Op::Read, 64 * 1024)));
        assert_eq!(h.sleep_before_poll(Op::Read, 8192), 0);
        assert_eq!(bucket(Op::Read, 512), 0);
        assert_eq!(bucket(Op::Read, 4095), 2, "sizes round down to their power of two");
        assert_eq!(bucket(Op::Write, 1 << 20), 2 * SIZE_BUCKETS - 1);
    }
}
