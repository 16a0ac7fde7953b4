//! The background flows an app model brings with it. RocksDB's `fillsync` is a WAL append and an fsync per
//! update in the foreground, but its memtable flushes and compaction also write and read sorted files in
//! background threads. Those threads share the device and, through ext4's running transaction, the fsyncs'
//! journal commits. A flow with such an app gets a second flow next to it, named `NAME-background`. The
//! second flow has the model's keys and the parent's region, start and end. It is never critical: the
//! background threads are not the latency-sensitive ones.

use super::{find, AppModel};
use crate::config::scenario::{FlowSpec, IoEngine};
use crate::config::units::Flag;

/// A background flow of an app model.
#[derive(Debug, Clone, PartialEq)]
pub struct Background {
    /// Its synthetic keys, per job of the parent flow (the rate is divided by the parent's `time_scale`).
    pub model: AppModel,
    /// An fdatasync after every N writes: a file is synced when it is complete.
    pub fdatasync: u32,
}

/// The name of `parent`'s background flow.
pub fn name(parent: &str) -> String {
    format!("{parent}-background")
}

/// Add the background flow of every flow whose app model has one, after all the flows the scenario gives.
/// Flows whose app is unknown, or whose `time_scale` is invalid, get none: validation reports their error.
pub fn add_flows(flows: &mut Vec<FlowSpec>) {
    let mut added = Vec::new();
    for parent in flows.iter() {
        let Some(background) = parent.app.as_deref().and_then(find).and_then(|m| m.background) else { continue };
        let time_scale = parent.time_scale.unwrap_or(1.0);
        if !(time_scale > 0.0 && time_scale.is_finite()) {
            continue;
        }
        let m = background.model;
        added.push(FlowSpec {
            name: name(&parent.name),
            rw: Some(m.rw),
            rwmixread: Some(m.rwmixread),
            bssplit: Some(m.bssplit.clone()),
            rate_iops: m.rate_iops.map(|rate| rate / time_scale),
            rate_process: m.rate_iops.map(|_| m.process()),
            burst_factor: m.burst.map(|b| b.factor),
            burst_on: m.burst.map(|b| b.on),
            size: parent.size,
            offset: parent.offset,
            startdelay: parent.startdelay,
            runtime: parent.runtime,
            numjobs: parent.numjobs,
            cpus_allowed: parent.cpus_allowed.clone(),
            ioengine: Some(IoEngine::Psync),
            direct: Some(Flag(false)),
            fdatasync: Some(background.fdatasync),
            aios: parent.aios,
            group_reporting: parent.group_reporting,
            ..FlowSpec::default()
        });
    }
    flows.extend(added);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Scenario;
    use crate::request::Criticality;
    use crate::workload::app::fastresponse::{self, fillsync_background};

    fn load(flow_keys: &str) -> Scenario {
        let text = format!("[device]\npreset = \"optane-900p\"\n[[flow]]\nname = \"db\"\n{flow_keys}\n");
        Scenario::from_toml_str(&text, "t", std::path::Path::new("."), &[]).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn fillsyncs_background_moves_the_bytes_its_updates_imply() {
        // 2,000 updates/s of 4 KiB, flushed at half size and rewritten 14 times by flushes and compaction,
        // which read 13 times: in 1 MiB requests.
        let flushed = 2_000.0 * 4096.0 * 0.5;
        let b = fillsync_background();
        let writes = flushed * 14.0 / 1_048_576.0;
        let reads = flushed * 13.0 / 1_048_576.0;
        assert!((b.model.rate_iops.unwrap() - (writes + reads)).abs() < 1e-9, "{:?}", b.model.rate_iops);
        assert_eq!(b.model.rwmixread, (100.0 * reads / (reads + writes)).round() as u32);
        assert_eq!((b.model.bssplit.as_str(), b.fdatasync), ("1m/100", 64));
        assert_eq!(crate::config::units::parse_size("1m").map(|b| b as f64), Ok(fastresponse::SST_IO_BYTES));
    }

    #[test]
    fn an_app_with_a_background_gets_a_normal_flow_of_its_own_after_the_others() {
        let s = load(
            "class = \"critical\"\napp = \"fastresponse.fillsync\"\nsize = \"1g\"\noffset = \"2g\"\nnumjobs = \
             2\ntime_scale = 2.0\nstartdelay = \"1ms\"\n[[flow]]\nname = \"other\"\nrw = \"read\"",
        );
        let names: Vec<&str> = s.flows.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["db", "other", "db-background"]);
        let (db, bg) = (&s.flows[0], &s.flows[2]);
        let model = fillsync_background();
        assert_eq!(bg.class, Criticality::Normal);
        assert_eq!(bg.app, None);
        assert_eq!(bg.rate_iops, Some(model.model.rate_iops.unwrap() / 2.0));
        assert_eq!((bg.size, bg.offset, bg.numjobs, bg.startdelay), (db.size, db.offset, Some(2), db.startdelay));
        assert_eq!((bg.is_direct(), bg.fdatasync, bg.ioengine), (false, Some(64), Some(IoEngine::Psync)));
        // An app without a background brings none.
        assert_eq!(load("app = \"fastresponse.readrandom\"").flows.len(), 1);
    }
}
