//! The probe set in the simulator (`calibrate/probe_sim.rs`): each job is the one flow of a scenario on the
//! named device, with the job's shape, as a hand-written scenario would be; writes on a page-mapped drive
//! start preconditioned; a scenario file lends its device and host, not its flows.

use std::path::Path;

use ullsim::calibrate::probe::{probe_set, ProbePoints};
use ullsim::calibrate::probe_sim::SimulatedProbe;
use ullsim::config::device::{MappingKind, Precondition};
use ullsim::export::fio_json::fio_json;
use ullsim::Scenario;

use crate::common::run;

const MS: u64 = 1_000_000;

#[test]
fn a_probe_job_is_the_flow_a_user_would_write() {
    let probe = SimulatedProbe::new("optane-ull", 10 * MS).unwrap();
    let set = probe_set(&ProbePoints::default());
    let job = set.iter().flat_map(|f| &f.jobs).find(|j| j.name == "randread-4k-qd32-jobs4").unwrap();
    let scenario = probe.scenario(job).unwrap();
    let by_hand = Scenario::from_toml_str(
        "name = \"randread-4k-qd32-jobs4\"\n[run]\nduration = \"12ms\"\nwarmup = \"2ms\"\n[device]\npreset = \
         \"optane-ull\"\n[[flow]]\nname = \"randread-4k-qd32-jobs4\"\nrw = \"randread\"\nbs = \"4k\"\niodepth = 32\n\
         numjobs = 4\nioengine = \"libaio\"\ndirect = 1\ngroup_reporting = true\n",
        "optane-ull",
        Path::new("."),
        &[],
    )
    .unwrap();
    let fio = |s: &Scenario| fio_json(s, &run(s)).to_string();
    assert_eq!(fio(&scenario), fio(&by_hand));
}

#[test]
fn writes_on_a_page_mapped_drive_start_preconditioned_and_reads_as_the_preset_says() {
    let probe = SimulatedProbe::new("tlc-consumer", 10 * MS).unwrap();
    let set = probe_set(&ProbePoints::default());
    let jobs: Vec<_> = set.iter().filter(|f| f.measured).flat_map(|f| &f.jobs).collect();
    for job in jobs {
        let ftl = probe.scenario(job).unwrap().device.ftl;
        assert_eq!(ftl.mapping, MappingKind::Page);
        match job.shape.writes() {
            true => {
                assert_eq!((ftl.precondition, ftl.precondition_fill), (Precondition::RandomGcDue, 1.0), "{}", job.name)
            }
            false => assert_eq!(ftl.precondition, Precondition::Sequential, "{}: the preset's", job.name),
        }
    }
}

#[test]
fn a_scenario_file_lends_its_device_and_host_and_not_its_flows() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mine.toml"), "base = \"optane-ull\"\n[flash]\nread_ns = 2000\n").unwrap();
    let path = dir.path().join("machine.toml");
    std::fs::write(
        &path,
        "seed = 7\n[run]\nduration = \"1s\"\n[host]\ncores = 2\n[device]\npreset = \"mine.toml\"\n[[flow]]\nname = \
         \"other\"\nrw = \"write\"\n",
    )
    .unwrap();
    let probe = SimulatedProbe::new(path.to_str().unwrap(), 10 * MS).unwrap();
    let set = probe_set(&ProbePoints::default());
    let scenario = probe.scenario(&set[0].jobs[0]).unwrap();
    assert_eq!((scenario.seed, scenario.host.cores, scenario.device.flash.read_ns.0), (7, 2, 2000));
    assert_eq!(scenario.flows.len(), 1);
    assert_eq!(scenario.flows[0].name, set[0].jobs[0].name);
    assert_eq!(scenario.run.duration.0, 12 * MS, "the probe's duration, not the scenario's");
    // A preset file names the device directly.
    let preset = SimulatedProbe::new(dir.path().join("mine.toml").to_str().unwrap(), 10 * MS).unwrap();
    assert_eq!(preset.scenario(&set[0].jobs[0]).unwrap().device.flash.read_ns.0, 2000);
    assert!(SimulatedProbe::new("nope.toml", MS).unwrap_err().contains("cannot read"));
    assert!(SimulatedProbe::new("optane-ull", 0).is_err());
}
