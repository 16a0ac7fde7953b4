//! Program and erase suspension: a host read that arrives while its die is programming or erasing may
//! suspend that operation, run, and let the operation resume where it stopped (as NAND parts with
//! suspend/resume commands allow, and as MQSim's `Program_Suspension_Enabled` / `Erase_Suspension_Enabled`
//! describe).
//!
//! Rules (docs/model.md, "Program and erase suspension"):
//! - Only a host read or a mapping read queued on a busy die triggers a suspension, and only of a program
//!   or an erase with at least `*_suspend_min_remaining_ns` of its array time left. A program whose data
//!   is still crossing the channel is suspended as its array phase starts. An operation is suspended at most `suspend_max_per_op` times, which
//!   bounds how long a stream of reads can hold it off.
//! - Entering suspension takes `suspend_ns` before the first read starts; the suspension then serves up to
//!   `suspend_read_batches` read operations the scheduler offers (it is asked for reads only) and the
//!   suspended operation resumes with `resume_ns` added to what was left of it.
//! - The die stays busy throughout. The suspended operation's completion event is invalidated by bumping
//!   the die's generation, which every `DieDone` event carries.

use crate::config::device::FlashConfig;
use crate::engine::Time;

use super::flash::FlashOp;
use super::transaction::TxId;

/// An operation set aside for reads.
#[derive(Debug)]
struct Suspended {
    batch: Vec<TxId>,
    /// Array time it still needed when suspended.
    remaining: Time,
    since: Time,
    /// Read operations the suspension may still serve.
    reads_left: u32,
}

#[derive(Debug, Default)]
struct DieState {
    /// Generation of the die's pending `DieDone`: events of an older generation are stale.
    generation: u32,
    /// The running operation, when its array phase starts and when it ends (programs and erases only).
    op: Option<FlashOp>,
    array_start: Time,
    end_at: Time,
    /// Times the running operation was suspended.
    suspensions: u32,
    /// Time the running batch spent suspended (so GC die time is charged without it).
    paused_ns: Time,
    suspended: Option<Suspended>,
}

pub struct Suspension {
    program: bool,
    erase: bool,
    suspend_ns: Time,
    resume_ns: Time,
    program_min_remaining_ns: Time,
    erase_min_remaining_ns: Time,
    read_batches: u32,
    max_per_op: u32,
    dies: Vec<DieState>,
    /// Operations suspended so far.
    pub count: u64,
}

impl Suspension {
    pub fn new(cfg: &FlashConfig, dies: u32) -> Self {
        Suspension {
            program: cfg.program_suspend,
            erase: cfg.erase_suspend,
            suspend_ns: cfg.suspend_ns.0,
            resume_ns: cfg.resume_ns.0,
            program_min_remaining_ns: cfg.program_suspend_min_remaining_ns.0,
            erase_min_remaining_ns: cfg.erase_suspend_min_remaining_ns.0,
            read_batches: cfg.suspend_read_batches,
            max_per_op: cfg.suspend_max_per_op,
            dies: (0..dies).map(|_| DieState::default()).collect(),
            count: 0,
        }
    }

    /// Whether any operation can be suspended at all.
    pub fn enabled(&self) -> bool {
        self.program || self.erase
    }

    pub fn generation(&self, die: u32) -> u32 {
        self.dies[die as usize].generation
    }

    /// A batch started on `die`: a new operation (not a read served inside a suspension).
    pub fn started(&mut self, die: u32, op: FlashOp, array_start: Time, end_at: Time) {
        if !self.enabled() {
            return; // nothing is ever suspended: the state would go unread
        }
        let d = &mut self.dies[die as usize];
        d.op = matches!(op, FlashOp::Program | FlashOp::Erase).then_some(op);
        d.array_start = array_start;
        d.end_at = end_at;
        d.suspensions = 0;
        d.paused_ns = 0;
    }

    /// May the operation running on `die` be suspended for a read now?
    pub fn can_suspend(&self, die: u32, now: Time) -> bool {
        let d = &self.dies[die as usize];
        let min_remaining = match d.op {
            Some(FlashOp::Program) if self.program => self.program_min_remaining_ns,
            Some(FlashOp::Erase) if self.erase => self.erase_min_remaining_ns,
            _ => return false,
        };
        let from = now.max(d.array_start);
        d.suspensions < self.max_per_op && d.suspended.is_none() && d.end_at - from >= min_remaining
    }

    /// Suspend the operation running on `die` (its transactions are `running`, which is taken) now, or as
    /// its array phase starts if that is later; returns when the first read may start. The operation's
    /// pending `DieDone` becomes stale.
    pub fn suspend(&mut self, die: u32, now: Time, running: &mut Vec<TxId>) -> Time {
        let read_batches = self.read_batches;
        let d = &mut self.dies[die as usize];
        let at = now.max(d.array_start);
        d.generation = d.generation.wrapping_add(1);
        d.suspensions += 1;
        d.suspended = Some(Suspended {
            batch: std::mem::take(running),
            remaining: d.end_at - at,
            since: at,
            reads_left: read_batches - 1,
        });
        self.count += 1;
        at + self.suspend_ns
    }

    /// Is an operation suspended on `die` (so the batch that just finished was a read inside it)?
    pub fn is_open(&self, die: u32) -> bool {
        self.dies[die as usize].suspended.is_some()
    }

    /// Inside an open suspension: may another read operation run? (Counts it if so.)
    pub fn take_read_turn(&mut self, die: u32) -> bool {
        let s = self.dies[die as usize].suspended.as_mut().expect("an open suspension");
        if s.reads_left == 0 {
            return false;
        }
        s.reads_left -= 1;
        true
    }

    /// Close the suspension on `die`: its operation goes back into `running`, whose old (read) vector is
    /// returned empty for reuse, with when the operation ends.
    pub fn resume(&mut self, die: u32, now: Time, running: &mut Vec<TxId>) -> (Time, Vec<TxId>) {
        let resume_ns = self.resume_ns;
        let d = &mut self.dies[die as usize];
        let s = d.suspended.take().expect("an open suspension");
        let mut reads = std::mem::replace(running, s.batch);
        reads.clear();
        d.paused_ns += now - s.since;
        d.array_start = now;
        d.end_at = now + resume_ns + s.remaining;
        (d.end_at, reads)
    }

    /// Time the batch now finishing on `die` spent suspended.
    pub fn paused_ns(&self, die: u32) -> Time {
        self.dies[die as usize].paused_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::units::Nanos;

    fn flash(program: bool, erase: bool) -> FlashConfig {
        let preset: toml::Table = crate::config::presets::find("flin-eval").expect("preset").toml.parse().unwrap();
        let mut f: FlashConfig = preset["flash"].clone().try_into().expect("a valid [flash] table");
        f.program_suspend = program;
        f.erase_suspend = erase;
        f.suspend_ns = Nanos::from_ns(20_000);
        f.resume_ns = Nanos::from_ns(10_000);
        f.program_suspend_min_remaining_ns = Nanos::from_ns(100_000);
        f.suspend_read_batches = 2;
        f.suspend_max_per_op = 2;
        f
    }

    #[test]
    fn suspends_with_enough_left_and_resumes_with_the_remainder_plus_resume_time() {
        let mut s = Suspension::new(&flash(true, false), 1);
        s.started(0, FlashOp::Program, 1_000, 1_001_000);
        assert!(s.can_suspend(0, 500), "the program's data is still crossing the channel: it waits for that");
        assert!(!s.can_suspend(0, 950_000), "only 51 us left, under the 100 us minimum");
        assert!(s.can_suspend(0, 400_000));
        let mut running = vec![7, 8];
        let generation = s.generation(0);
        assert_eq!(s.suspend(0, 400_000, &mut running), 420_000);
        assert!(running.is_empty() && s.generation(0) != generation, "the program's DieDone is stale");
        assert!(s.is_open(0));
        assert!(s.take_read_turn(0), "a second read batch fits");
        assert!(!s.take_read_turn(0), "two read batches per suspension");
        // 601 us of program were left; it resumes at 600 us and ends 10 us (resume) + 601 us later.
        assert_eq!(s.resume(0, 600_000, &mut running).0, 1_211_000);
        assert_eq!(running, vec![7, 8]);
        assert_eq!(s.paused_ns(0), 200_000);
        assert!(!s.is_open(0));
        assert!(s.can_suspend(0, 700_000), "a second suspension is allowed");
        s.suspend(0, 700_000, &mut running);
        assert_eq!(s.resume(0, 750_000, &mut running).0, 750_000 + 10_000 + 511_000);
        assert_eq!(s.paused_ns(0), 250_000);
        assert!(!s.can_suspend(0, 800_000), "suspended twice already, the maximum");
        s.started(0, FlashOp::Program, 2_000_000, 3_000_000);
        assert!(s.can_suspend(0, 2_100_000) && s.paused_ns(0) == 0, "a new operation starts afresh");
        // Suspended during its data-in: the read starts after the array phase starts and the suspend time.
        assert_eq!(s.suspend(0, 1_990_000, &mut running), 2_020_000);
        assert_eq!(s.resume(0, 2_100_000, &mut running).0, 2_100_000 + 10_000 + 1_000_000);
    }

    #[test]
    fn only_the_enabled_kinds_and_never_reads() {
        let mut s = Suspension::new(&flash(true, false), 1);
        s.started(0, FlashOp::Erase, 0, 3_800_000);
        assert!(!s.can_suspend(0, 1_000_000), "erase suspension is off");
        s.started(0, FlashOp::Read, 0, 75_000);
        assert!(!s.can_suspend(0, 10_000));
        let mut s = Suspension::new(&flash(false, true), 1);
        s.started(0, FlashOp::Erase, 100, 3_800_100);
        assert!(s.can_suspend(0, 1_000_000));
        assert!(!s.can_suspend(0, 3_200_000), "under the erase minimum of 700 us");
        assert!(!Suspension::new(&flash(false, false), 1).enabled());
    }
}
