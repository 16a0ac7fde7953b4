//! All of this crate's integration tests in one binary: one link instead of one per file (the
//! README's test command builds in minutes, not half an hour). Each file is a module.

mod calibrate;
mod calibrate_report;
mod cli;
mod common;
mod compare;
mod fio_json;
mod memory;
mod preset_files;
mod probe;
mod report;
mod reproduce;
mod round_trip;
mod table;
