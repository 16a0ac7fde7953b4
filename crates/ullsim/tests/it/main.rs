//! All of this crate's integration tests in one binary: one link instead of one per file (the
//! README's test command builds in minutes, not half an hour). Each file is a module.

mod aios;
mod bad_input;
mod common;
mod contention;
mod controller;
mod device_physics;
mod docs;
mod durability;
mod fastresponse;
mod flashshare;
mod flashshare_apps;
mod flashshare_cache;
mod flashshare_hazard;
mod flashshare_xler;
mod flin;
mod flin18;
mod fs;
mod ftl;
mod fuzz_scenarios;
mod gc;
mod host;
mod mapping_unit;
mod memory;
mod messages;
mod model;
mod mqsim_compat;
mod overload;
mod per_job;
mod slc;
mod suspend;
mod timed_precondition;
mod timeseries;
mod tsu;
mod window;
mod write_buffer;
