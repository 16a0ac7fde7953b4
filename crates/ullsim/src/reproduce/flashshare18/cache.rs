//! Figs. 18 and 19: the SSD's read cache beside Apache. Fig. 18 compares five designs: one cache for both
//! classes without read-ahead (uni-no), with 128 pages of it (uni-128) and with the ghost caches' adaptive
//! read-ahead (uni-dyn; all three `read_policy = "uniform"` under Vanilla's host), and FlashShare's split
//! cache (CacheOpt), whose latency-critical (split-lat) and throughput (split-thr) partitions report apart.
//! Fig. 19 follows the split while PageRank runs.

use super::{Options, Runs, STACKS};
use crate::reproduce::rows::Reproduction;

/// The online app of Figs. 18-19.
pub const ONLINE: &str = "ap";
/// The offline app of Fig. 19.
pub const BURSTY: &str = "pr";

/// Fig. 18's uniform designs: (label, `[device.cache]` lines).
pub const UNIFORM: [(&str, &str); 3] = [
    ("uni-no", "read_policy = \"uniform\"\nflashshare_prefetch_pages = [0]"),
    ("uni-128", "read_policy = \"uniform\"\nflashshare_prefetch_pages = [128]"),
    ("uni-dyn", "read_policy = \"uniform\""),
];

/// The paper's numbers (§1, §5.5).
pub mod paper {
    /// Fig. 18: uni-128's hit rate over uni-no's ("only a 12% higher cache hit rate", read as percentage
    /// points: a ratio has no meaning when uni-no hits almost never).
    pub const UNI_128_OVER_UNI_NO: f64 = 0.12;
    /// §1: FlashShare improves "SSD internal cache hit rate by 37%" (over the uniform cache without
    /// read-ahead, read as points).
    pub const SPLIT_OVER_UNI_NO: f64 = 0.37;
    /// Fig. 19, Apache beside PageRank: the latency-critical partition's share of the cache (23% on
    /// average during the burst), Apache's response time (3.1 ms) and PageRank's hit rate over the dummy
    /// cache's (+36%, read as points; the dummy is uni-no, a cache that knows no class and reads nothing
    /// ahead).
    pub const CRITICAL_SHARE: f64 = 0.23;
    pub const RESPONSE_US: f64 = 3100.0;
    pub const BURSTY_HIT_RATE_OVER_DUMMY: f64 = 0.36;
}

/// Rows of Figs. 18 and 19 (for the pairs with [`ONLINE`] the options hold).
pub(super) fn rows(out: &mut Reproduction, options: &Options, runs: &Runs) {
    if !options.online.iter().any(|a| a == ONLINE) {
        return;
    }
    let cacheopt = STACKS[1].1;
    let (mut uni_128_over_no, mut split_over_no) = (0.0, 0.0);
    for off in &options.offline {
        let uniform = |label| runs.get(ONLINE, off, "vanilla", Some(label));
        let split = runs.get(ONLINE, off, cacheopt, None);
        let setting = |design| [("online", ONLINE), ("offline", off.as_str()), ("design", design)];
        for &(label, _) in &UNIFORM {
            out.push("fig18", &setting(label), "hit_rate", None, uniform(label).hit_rate());
        }
        out.push("fig18", &setting("split-lat"), "hit_rate", None, split.class_hit_rate(0));
        out.push("fig18", &setting("split-thr"), "hit_rate", None, split.class_hit_rate(1));
        let uni_no = uniform("uni-no").hit_rate();
        uni_128_over_no += uniform("uni-128").hit_rate() - uni_no;
        split_over_no += split.hit_rate() - uni_no;
    }
    let n = options.offline.len() as f64;
    let average = |design| [("online", ONLINE), ("offline", "average"), ("design", design), ("against", "uni-no")];
    out.push("fig18", &average("uni-128"), "hit_rate_gain", Some(paper::UNI_128_OVER_UNI_NO), uni_128_over_no / n);
    out.push("fig18", &average("split"), "hit_rate_gain", Some(paper::SPLIT_OVER_UNI_NO), split_over_no / n);

    if options.offline.iter().any(|a| a == BURSTY) {
        let (split, dummy) =
            (runs.get(ONLINE, BURSTY, cacheopt, None), runs.get(ONLINE, BURSTY, "vanilla", Some("uni-no")));
        let setting = [("online", ONLINE), ("offline", BURSTY), ("stack", "cacheopt")];
        let share = split.critical_way_share.unwrap_or(0.0);
        out.push("fig19", &setting, "critical_cache_share", Some(paper::CRITICAL_SHARE), share);
        out.push("fig19", &setting, "mean_us", Some(paper::RESPONSE_US), split.mean_us);
        let gain = split.class_hit_rate(1) - dummy.class_hit_rate(1);
        out.push("fig19", &setting, "offline_hit_rate_gain", Some(paper::BURSTY_HIT_RATE_OVER_DUMMY), gain);
    }
}
