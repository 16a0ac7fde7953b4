//! A CPU-burning task (fio's `ioengine = "cpuio"`): it runs `cpuchunks` of user code, then sleeps so that
//! it uses `cpuload` percent of a core, until its runtime ends. The host runs what [`Burner::next`] decides
//! on the CPU model.

use crate::config::scenario::FlowSpec;
use crate::engine::Time;

/// fio's cpuio burns in chunks; a 10 ms default keeps events rare while staying below a CFS slice.
const DEFAULT_CPUCHUNKS_NS: Time = 10_000_000;

/// What a burner does next, when its core is free for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BurnStep {
    /// Run user code this long.
    Burn(Time),
    /// Sleep until this time, then go on.
    PauseUntil(Time),
    /// Its runtime is over: sleep for good.
    Stop,
}

/// One cpuio task's state.
#[derive(Debug, Clone)]
pub struct Burner {
    burn_ns: Time,
    pause_ns: Time,
    stop_ns: Time,
    burning: bool,
}

impl Burner {
    /// The burner of a cpuio flow `spec` that starts at `start_ns`; it stops at the flow's runtime or at
    /// `run_end`.
    pub fn new(spec: &FlowSpec, start_ns: Time, run_end: Time) -> Burner {
        let load = u64::from(spec.cpuload.unwrap_or(100).clamp(1, 100));
        let burn_ns = spec.cpuchunks.map_or(DEFAULT_CPUCHUNKS_NS, |c| c.0);
        Burner {
            burn_ns,
            pause_ns: burn_ns * (100 - load) / load,
            stop_ns: spec.runtime.map_or(run_end, |r| start_ns.saturating_add(r.0)),
            burning: false,
        }
    }

    /// What to do at `now`, after the last step ended: a burn is followed by a pause (if the load is below
    /// 100%), a pause by a burn, and nothing runs past the stop time.
    pub fn next(&mut self, now: Time) -> BurnStep {
        if now >= self.stop_ns {
            return BurnStep::Stop;
        }
        if self.burning && self.pause_ns > 0 {
            self.burning = false;
            return BurnStep::PauseUntil(now + self.pause_ns);
        }
        self.burning = true;
        BurnStep::Burn(self.burn_ns.min(self.stop_ns - now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::units::{Micros, Seconds};

    fn spec(cpuload: Option<u32>, cpuchunks_us: Option<u64>, runtime_ms: Option<u64>) -> FlowSpec {
        let text = "name = \"hog\"\nioengine = \"cpuio\"\n";
        let mut spec: FlowSpec = toml::from_str(text).unwrap();
        spec.cpuload = cpuload;
        spec.cpuchunks = cpuchunks_us.map(|us| Micros::from_ns(us * 1_000));
        spec.runtime = runtime_ms.map(|ms| Seconds::from_ns(ms * 1_000_000));
        spec
    }

    #[test]
    fn a_burner_alternates_chunks_and_pauses_for_its_load_and_stops_at_its_runtime() {
        // 25% load in 1 ms chunks: burn 1 ms, pause 3 ms; runtime 5 ms from a start at 1 ms.
        let mut b = Burner::new(&spec(Some(25), Some(1_000), Some(5)), 1_000_000, 100_000_000);
        assert_eq!(b.next(1_000_000), BurnStep::Burn(1_000_000));
        assert_eq!(b.next(2_000_000), BurnStep::PauseUntil(5_000_000));
        assert_eq!(b.next(5_000_000), BurnStep::Burn(1_000_000), "the last chunk is cut at the stop (6 ms)");
        assert_eq!(b.next(6_000_000), BurnStep::Stop);
        // 100% (the default): one chunk after another, never a pause; 10 ms chunks by default.
        let mut b = Burner::new(&spec(None, None, None), 0, 25_000_000);
        assert_eq!(b.next(0), BurnStep::Burn(10_000_000));
        assert_eq!(b.next(10_000_000), BurnStep::Burn(10_000_000));
        assert_eq!(b.next(20_000_000), BurnStep::Burn(5_000_000));
        assert_eq!(b.next(25_000_000), BurnStep::Stop);
    }
}
