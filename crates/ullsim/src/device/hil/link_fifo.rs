//! One direction of the PCIe link as MQSim models it (`PCIe_Link`): whole messages one after another, in the
//! order they arrive. A 4 KB transfer behind a 128 KB one waits for all of it, and a command or completion
//! message waits behind the data queued before it. (`link.rs` is the real link: TLPs interleave.)

use std::collections::VecDeque;

use super::Link;
use crate::engine::Time;

#[derive(Debug, Default)]
pub struct FifoLinkDirection {
    /// Data transfers queued or being sent, in order: (when the last of it is sent, its id).
    queue: VecDeque<(Time, u32)>,
    /// When everything queued so far (data and control) is sent.
    free_at: Time,
    /// Time the direction carried traffic, up to `free_at`.
    busy_ns: Time,
    /// Bumped whenever a check is scheduled (one is pending while data is queued).
    generation: u32,
}

impl FifoLinkDirection {
    /// Queue a message of `service_ns` at `now`; returns when it is sent.
    fn enqueue(&mut self, now: Time, service_ns: Time) -> Time {
        self.free_at = self.free_at.max(now) + service_ns;
        self.busy_ns += service_ns;
        self.free_at
    }
}

impl Link for FifoLinkDirection {
    fn start(&mut self, now: Time, id: u32, service_ns: Time) -> Option<Time> {
        let done_at = self.enqueue(now, service_ns);
        self.queue.push_back((done_at, id));
        // Completions come in queue order: only the head needs a check; the check schedules the next.
        (self.queue.len() == 1).then(|| {
            self.generation = self.generation.wrapping_add(1);
            done_at
        })
    }

    fn control(&mut self, now: Time, service_ns: Time) {
        self.enqueue(now, service_ns);
    }

    fn check(&mut self, now: Time, generation: u32, done: &mut Vec<u32>) -> Option<Time> {
        if generation != self.generation {
            return None;
        }
        while let Some(&(done_at, id)) = self.queue.front() {
            if done_at > now {
                break;
            }
            self.queue.pop_front();
            done.push(id);
        }
        let &(next, _) = self.queue.front()?;
        self.generation = self.generation.wrapping_add(1);
        Some(next)
    }

    fn generation(&self) -> u32 {
        self.generation
    }

    fn busy_ns(&self, now: Time) -> Time {
        self.busy_ns - self.free_at.saturating_sub(now).min(self.busy_ns)
    }

    fn in_flight(&self) -> usize {
        self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_go_whole_in_arrival_order() {
        let mut link = FifoLinkDirection::default();
        // 128 KB (~33 us) first, a 4 KB (~1 us) 1 us later: the small one waits for all of the large one.
        assert_eq!(link.start(0, 1, 33_000), Some(33_000));
        assert_eq!(link.start(1_000, 2, 1_000), None, "the head's check comes first");
        link.control(2_000, 30); // a completion entry queues behind both
        assert_eq!(link.start(2_000, 3, 500), None);
        let mut done = Vec::new();
        let next = link.check(33_000, link.generation(), &mut done);
        assert_eq!((done.as_slice(), next), (&[1][..], Some(34_000)));
        done.clear();
        let next = link.check(34_000, link.generation(), &mut done);
        assert_eq!((done.as_slice(), next), (&[2][..], Some(34_530)), "the control message sits between");
        assert_eq!(link.busy_ns(34_000), 34_000);
        done.clear();
        assert_eq!(link.check(34_530, link.generation(), &mut done), None);
        assert_eq!((done.as_slice(), link.in_flight(), link.busy_ns(50_000)), (&[3][..], 0, 34_530));
    }
}
