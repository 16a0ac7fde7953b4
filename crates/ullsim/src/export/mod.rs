//! A run's results in other tools' formats: fio's JSON (`ullsim run --output-format fio-json`), so the
//! scripts that read a user's fio runs read a simulated one too.

pub mod fio_json;
