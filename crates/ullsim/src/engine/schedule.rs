//! How a layer schedules its own events. The simulation's queue holds one event type that wraps every
//! layer's (`sim::Event`); a layer sees that queue as a [`Scheduler`] of its own event type, which the queue
//! converts (`From`) as it stores it. So no layer names the simulation's event type, and `sim` only dispatches.

use super::{EventQueue, Time};

/// The current simulated time.
pub trait Clock {
    fn now(&self) -> Time;
}

/// Where events of type `E` are scheduled.
pub trait Scheduler<E>: Clock {
    /// Schedule `event` at absolute time `at` (never in the past).
    fn schedule_at(&mut self, at: Time, event: E);
    /// Schedule `event` `delay` ns from now (a delay past the end of time lands at the end of time).
    fn schedule_in(&mut self, delay: Time, event: E);
}

impl<T> Clock for EventQueue<T> {
    #[inline]
    fn now(&self) -> Time {
        EventQueue::now(self)
    }
}

impl<E, T: From<E>> Scheduler<E> for EventQueue<T> {
    #[inline]
    fn schedule_at(&mut self, at: Time, event: E) {
        EventQueue::schedule_at(self, at, T::from(event));
    }
    #[inline]
    fn schedule_in(&mut self, delay: Time, event: E) {
        EventQueue::schedule_in(self, delay, T::from(event));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    enum Both {
        Small(u8),
        Big(u64),
    }
    impl From<u8> for Both {
        fn from(e: u8) -> Self {
            Both::Small(e)
        }
    }
    impl From<u64> for Both {
        fn from(e: u64) -> Self {
            Both::Big(e)
        }
    }

    fn small(q: &mut impl Scheduler<u8>) {
        let at = q.now() + 5;
        q.schedule_at(at, 1u8);
    }

    #[test]
    fn each_layer_schedules_its_own_type_into_one_queue_in_order() {
        let mut q: EventQueue<Both> = EventQueue::new();
        small(&mut q);
        Scheduler::<u64>::schedule_in(&mut q, 5, 2u64);
        Scheduler::<u64>::schedule_at(&mut q, 1, 3u64);
        assert_eq!(q.pop(), Some((1, Both::Big(3))));
        // Same time: in the order scheduled.
        assert_eq!(q.pop(), Some((5, Both::Small(1))));
        assert_eq!(q.pop(), Some((5, Both::Big(2))));
        assert_eq!(q.pop(), None);
    }
}
