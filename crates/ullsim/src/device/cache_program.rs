//! Cache programs (`device.flash.cache_program`): ONFI's PROGRAM PAGE CACHE (80h ... 15h instead of 10h). A
//! die has a cache register in front of its page (data) register; once a program's data has moved into the
//! page register, the controller may load the next page's data into the cache register while the array still
//! programs, so back-to-back programs on a die cost max(transfer, program) each instead of transfer + program.
//!
//! The model: a program batch dispatched on a die whose previous operation was a program that ended at this
//! very instant (the die ran programs back to back) has its data-in overlapped: its array phase starts right
//! after the command cycles, not after the transfer. The channel is still reserved for the transfer, from the
//! same time as without cache programs, so other dies see the bus busy for it; and the program does not end
//! before its data has crossed the bus (a saturated channel still limits the die). A program on a die that
//! was idle, or whose last operation was a read or an erase, pays its transfer as before; so does a die's
//! first program after the timed preconditioning's cut. Suspension is unchanged: a cached program's array
//! phase starts after its command, so it may be suspended from then on; a resumed program that ends lets the
//! next program be cached. SLC-mode and GC programs count like any other, and a page assembled from mapping
//! units is one program.
//!
//! What it ignores (docs/model.md, "Cache programs"): the firmware must pick the next page before the current
//! program ends, to load it in time; the model picks at the end, so a program queued during the previous one
//! is cached whatever its arrival. The cache-busy time (tCBSY, the cache-to-page-register move) is not
//! charged, the transfer is placed after the previous program rather than during it, and the restriction of
//! some parts to cache programs within one block is not applied.

use super::flash::FlashOp;
use super::Device;
use crate::engine::Time;

/// Which dies just finished a program (present only when `device.flash.cache_program` is on).
#[derive(Debug)]
pub(super) struct CacheProgram {
    /// Per die: when its last operation ended, if that operation was a program.
    program_ended_at: Vec<Option<Time>>,
}

impl CacheProgram {
    pub(super) fn new(enabled: bool, dies: u32) -> Option<CacheProgram> {
        enabled.then(|| CacheProgram { program_ended_at: vec![None; dies as usize] })
    }
}

impl Device {
    /// `die` is released at `now` after running an operation `op` (`None`: a die busy across the
    /// preconditioning's cut, with nothing recorded of it).
    pub(super) fn cache_program_released(&mut self, die: u32, op: Option<FlashOp>, now: Time) {
        if let Some(cache) = &mut self.cache_program {
            cache.program_ended_at[die as usize] = (op == Some(FlashOp::Program)).then_some(now);
        }
    }

    /// A program batch of `bytes` on `die`, started at `start` with its command done at `commanded`, and
    /// `array_ns` of array time: reserve its data-in and return when its array phase starts and when it
    /// ends.
    pub(super) fn program_phases(
        &mut self,
        die: u32,
        start: Time,
        commanded: Time,
        bytes: u64,
        array_ns: Time,
    ) -> (Time, Time) {
        let data_in = self.flash.reserve_channel(die, commanded, bytes);
        let cached = self.cache_program.as_ref().is_some_and(|c| c.program_ended_at[die as usize] == Some(start));
        if cached {
            // The data went into the cache register during the previous program: the array starts now.
            (commanded, (commanded + array_ns).max(data_in))
        } else {
            (data_in, data_in + array_ns)
        }
    }
}
