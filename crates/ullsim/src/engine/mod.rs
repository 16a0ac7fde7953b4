//! The discrete-event engine: integer time, a (time, sequence) ordered event queue and seeded RNG streams.
//!
//! The queue is generic over the event type so that the engine knows nothing about the model; each layer
//! schedules its own event type through [`Scheduler`], and the model's event enum, which wraps them, and its
//! run loop live in [`crate::sim`].

mod queue;
mod rng;
mod schedule;

pub use queue::EventQueue;
pub use rng::{stream_rng, stream_seed, SimRng};
pub use schedule::{Clock, Scheduler};

/// Simulated time in nanoseconds since the start of the run.
pub type Time = u64;

/// One microsecond in [`Time`] units.
pub const US: Time = 1_000;
/// One millisecond in [`Time`] units.
pub const MS: Time = 1_000_000;
/// One second in [`Time`] units.
pub const SEC: Time = 1_000_000_000;
