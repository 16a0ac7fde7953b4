//! Calibration from a user's fio results: the probe set of fio jobs that measures what a fit needs
//! ([`probe`]), the reader of fio's JSON output ([`fio_read`]), and the job shape both speak ([`shape`]).

pub mod probe;
pub mod probe_sim;
pub mod shape;

pub use shape::{JobShape, Pattern};
