//! Calibration from a user's fio results: the probe set of fio jobs that measures what a fit needs
//! ([`probe`], simulated by [`probe_sim`]), the reader of fio's JSON output ([`fio_read`]), the job shape both speak ([`shape`]), and the
//! fit of a device to the jobs read ([`fit`]).

pub mod calibration;
pub mod evaluate;
pub mod fio_latency;
pub mod fio_options;
pub mod fio_read;
pub mod fit;
pub mod knobs;
pub mod probe;
pub mod probe_sim;
pub mod round_trip;
pub mod shape;
pub mod slc_cache;

pub use fio_read::{read_file, read_str, FioReadError, FioWarning, MeasuredDirection, MeasuredJob};
pub use shape::{JobShape, Pattern};
