//! The preconditioned state against the state the FTL's own writes and GC reach.

use rand::{RngExt, SeedableRng};

use super::*;
use crate::engine::SimRng;

/// 32 planes of 128 blocks of 32 pages, 10% over-provisioned, full, GC by d-choices (the mqsim-mlc
/// preset's RGA): little spare space beside the GC reserve, so GC is heavy and what the blocks hold matters.
fn tight_drive(precondition: &str, policy: &str) -> Ftl {
    let text = format!(
        "[device]\npreset = \"mqsim-mlc\"\n[device.flash]\nchannels = 4\nchips_per_channel = 2\ndies_per_chip = 2\n\
         planes_per_die = 2\nblocks_per_plane = 128\npages_per_block = 32\n[device.ftl]\noverprovisioning = 0.1\n\
         precondition = \"{precondition}\"\nprecondition_fill = 1.0\ngc_policy = \"{policy}\"\n[[flow]]\nname = \"w\"\n\
         rw = \"randwrite\"\n"
    );
    let scenario =
        crate::Scenario::from_toml_str(&text, "t", std::path::Path::new("."), &[]).expect("a valid scenario");
    Ftl::new(&scenario.device, 5).expect("an FTL")
}

/// Overwrite `lpa` with GC done at once, as the device would do it given time: returns the pages GC moved.
fn overwrite(ftl: &mut Ftl, lpa: u64, moves: &mut Vec<(u64, u64)>) -> u64 {
    let ppa = ftl.allocate_user(lpa).expect("room for host data");
    let u = ftl.geometry.plane_of_page(ppa);
    let mut moved = 0;
    while ftl.gc_wanted(u) && ftl.start_gc(u, moves).is_some() {
        for &(ppa, lpa) in moves.iter() {
            moved += u64::from(ftl.relocate(lpa, ppa).is_some());
            ftl.gc_move_done(u);
        }
        ftl.erase_done(u);
    }
    moved
}

/// What the blocks hold: per plane (free blocks, valid pages), and the full blocks' valid counts.
struct Snapshot {
    free: Vec<usize>,
    plane_pages: Vec<u64>,
    full_valid: Vec<u16>,
}

fn snapshot(ftl: &Ftl) -> Snapshot {
    let (bpp, ppb) = (ftl.geometry.blocks_per_plane as usize, ftl.geometry.pages_per_block as u16);
    let plane_pages = ftl.valid.chunks(bpp).map(|p| p.iter().map(|&v| v as u64).sum()).collect();
    let full_valid = (0..ftl.valid.len()).filter(|&b| ftl.written[b] == ppb).map(|b| ftl.valid[b]).collect();
    Snapshot { free: ftl.planes.iter().map(|p| p.free.len()).collect(), plane_pages, full_valid }
}

fn sd(x: &[u64]) -> f64 {
    let mean = x.iter().sum::<u64>() as f64 / x.len() as f64;
    (x.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / x.len() as f64).sqrt()
}

/// Share of full blocks with `v` valid pages, for each `v`.
fn histogram(full_valid: &[u16], ppb: usize) -> Vec<f64> {
    let mut h = vec![0.0; ppb + 1];
    for &v in full_valid {
        h[v as usize] += 1.0 / full_valid.len() as f64;
    }
    h
}

/// The `random` preconditions put each plane where the FTL's own random overwrites keep it: from the first
/// host page on, write amplification is what it is a drive rewrite later, the planes' shares of the data
/// spread as much, and the full blocks' valid counts are distributed alike; the free pool is at the GC
/// threshold, where GC keeps it (`random`), or a block under it (`random-gc-due`), and the planes' host
/// blocks are filled to different points (planes filling theirs in step would all need GC at once).
#[test]
fn random_precondition_matches_a_long_timing_free_overwrite_run() {
    for (precondition, policy) in
        [("random", "d-choices"), ("random-gc-due", "d-choices"), ("random", "greedy"), ("random-gc-due", "random")]
    {
        let mut ftl = tight_drive(precondition, policy);
        let (logical, soft) = (ftl.logical_pages(), ftl.soft_free_blocks);
        let (bpp, ppb) = (ftl.geometry.blocks_per_plane as usize, ftl.geometry.pages_per_block as usize);
        let start = snapshot(&ftl);
        let due = usize::from(precondition == "random-gc-due");
        assert!(start.free.iter().all(|&f| f == soft - due), "{precondition}: the free pool");
        let host_fills: std::collections::BTreeSet<u16> =
            (0..ftl.planes.len()).map(|u| ftl.written[u * bpp + ftl.planes[u].open_user.unwrap() as usize]).collect();
        assert!(host_fills.len() >= 8, "{precondition}, {policy}: host blocks filled in step: {host_fills:?}");

        let mut rng = SimRng::seed_from_u64(1);
        let mut moves = Vec::new();
        // Write amplification over host pages [from, to) of the run, as fractions of the logical pages.
        let mut wa = |ftl: &mut Ftl, from: f64, to: f64| {
            let n = ((to - from) * logical as f64) as u64;
            let moved: u64 = (0..n).map(|_| overwrite(ftl, rng.random_range(0..logical), &mut moves)).sum();
            (n + moved) as f64 / n as f64
        };
        wa(&mut ftl, 0.0, 0.02); // each plane pays the GC that was due, if any
        let early = wa(&mut ftl, 0.02, 0.15);
        // Later: means over eight snapshots, a tenth of a drive rewrite apart, from 0.3 to 1.1 rewrites.
        let (mut late, mut spread, mut hist) = (0.0, 0.0, vec![0.0; ppb + 1]);
        for k in 0..8 {
            late += wa(&mut ftl, 0.3 + 0.1 * k as f64, 0.4 + 0.1 * k as f64) / 8.0;
            let s = snapshot(&ftl);
            // GC keeps the threshold free, unless a plane holds so much that GC cannot gain a block.
            let at_threshold = s.free.iter().filter(|&&f| f == soft).count();
            assert!(at_threshold * 10 >= s.free.len() * 9 && s.free.iter().all(|&f| f <= soft), "{:?}", s.free);
            spread += sd(&s.plane_pages) / 8.0;
            for (h, x) in hist.iter_mut().zip(histogram(&s.full_valid, ppb)) {
                *h += x / 8.0;
            }
        }
        let tvd: f64 =
            histogram(&start.full_valid, ppb).iter().zip(&hist).map(|(a, b)| (a - b).abs()).sum::<f64>() / 2.0;
        println!(
            "{precondition}, {policy}: write amplification {early:.3} over 0.02-0.15 rewrites, {late:.3} over \
             0.3-1.1; plane shares' sd {:.1} pages at start, {spread:.1} later; full blocks' valid counts {tvd:.3} \
             apart (total variation)",
            sd(&start.plane_pages)
        );
        assert!(
            (early / late - 1.0).abs() < 0.03,
            "{precondition}, {policy}: write amplification {early:.3} early, {late:.3} later"
        );
        assert!(
            (sd(&start.plane_pages) / spread - 1.0).abs() < 0.25,
            "{precondition}, {policy}: plane shares spread {spread:.1}"
        );
        assert!(tvd < 0.06, "{precondition}, {policy}: full blocks' valid counts {tvd:.3} apart");
    }
}

/// A small drive of 16 KiB pages mapped in 4 KiB units, empty.
fn four_unit_drive() -> Ftl {
    let text = "[device]\npreset = \"mqsim-mlc\"\n[device.flash]\nchannels = 2\nchips_per_channel = 1\n\
                dies_per_chip = 1\nplanes_per_die = 2\nblocks_per_plane = 32\npages_per_block = 16\n\
                page_bytes = \"16KiB\"\n[device.ftl]\nmapping_unit_bytes = \"4KiB\"\noverprovisioning = 0.2\nprecondition = \"none\"\n\
                [[flow]]\nname = \"w\"\nrw = \"randwrite\"\n";
    let scenario = crate::Scenario::from_toml_str(text, "t", std::path::Path::new("."), &[]).expect("a valid scenario");
    Ftl::new(&scenario.device, 5).expect("an FTL")
}

/// With 4 units per flash page, host writes fill a page of one plane before moving to the next plane; a
/// padded page's other units are skipped (written, holding nothing) and the map stays consistent.
#[test]
fn units_fill_a_page_per_plane_and_a_padded_page_is_skipped() {
    let mut ftl = four_unit_drive();
    assert_eq!((ftl.geometry.units_per_page, ftl.geometry.pages_per_block, ftl.geometry.page_bytes), (4, 64, 4096));
    let first: Vec<u64> = (0..4).map(|lpa| ftl.allocate_user(lpa).expect("room")).collect();
    assert_eq!(first, [first[0], first[0] + 1, first[0] + 2, first[0] + 3], "one page's units, in order");
    assert!(ftl.page_complete(first[0]));
    let next = ftl.allocate_user(4).expect("room");
    let plane = |ftl: &Ftl, ppa: u64| ftl.geometry.plane_of_page(ppa);
    assert_ne!(plane(&ftl, next), plane(&ftl, first[0]), "the next page is on the next plane");
    let second = ftl.allocate_user(5).expect("room");
    assert_eq!(second, next + 1);
    assert!(!ftl.page_complete(next));
    ftl.pad_page(next);
    assert!(ftl.page_complete(next));
    ftl.check_invariants().expect("padding keeps the map consistent");
    // Allocation goes on at the next page of the same plane (the padded page was that plane's turn).
    let after = ftl.allocate_user(6).expect("room");
    assert_eq!(after, next + 4, "the padded units are skipped");
    // Overwrite a unit of the padded page (it goes to the plane's next unit): the block holds three valid
    // units (lpa 5, 6 and 4's new copy) of six written, two of them pads that never count.
    assert_eq!(ftl.allocate_user(4), Some(after + 1));
    let block = ftl.geometry.block_of(next) as usize;
    assert_eq!((ftl.valid[block], ftl.written[block]), (3, 6));
    ftl.check_invariants().expect("consistent after an overwrite");
}
