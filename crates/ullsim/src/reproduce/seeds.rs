//! Running a reproduction's settings over seeds, all in parallel: averaged into one result per setting, or
//! kept per seed for rows that report their spread.

use rayon::prelude::*;

/// Run every one of `settings` settings with `seeds` seeds from `seed` (at least one), all in parallel
/// (`run(setting, seed)`), and combine each setting's runs with `combine`, in setting order.
pub(crate) fn over_settings<T: Send>(
    settings: usize,
    seed: u64,
    seeds: u32,
    run: impl Fn(usize, u64) -> Result<T, String> + Sync,
    combine: impl Fn(&[T]) -> T,
) -> Result<Vec<T>, String> {
    Ok(per_seed(settings, seed, seeds, run)?.iter().map(|runs| combine(runs)).collect())
}

/// Run every one of `settings` settings with `seeds` seeds from `seed` (at least one), all in parallel, and
/// keep each setting's runs in seed order: for rows that report their spread over the seeds
/// ([`super::rows::Reproduction::push_over_seeds`]).
pub(crate) fn per_seed<T: Send>(
    settings: usize,
    seed: u64,
    seeds: u32,
    run: impl Fn(usize, u64) -> Result<T, String> + Sync,
) -> Result<Vec<Vec<T>>, String> {
    let seeds = u64::from(seeds.max(1));
    let jobs: Vec<(usize, u64)> =
        (0..settings).flat_map(|i| (0..seeds).map(move |k| (i, seed.wrapping_add(k)))).collect();
    let runs: Vec<T> = jobs.par_iter().map(|&(i, seed)| run(i, seed)).collect::<Result<_, String>>()?;
    // The jobs run setting by setting, each setting's seeds in turn: take them back `seeds` at a time.
    let mut runs = runs.into_iter();
    Ok((0..settings).map(|_| runs.by_ref().take(seeds as usize).collect()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_setting_keeps_its_runs_in_seed_order_and_combines_them() {
        let runs = per_seed(3, 10, 2, |i, seed| Ok((i, seed))).unwrap();
        assert_eq!(runs, vec![vec![(0, 10), (0, 11)], vec![(1, 10), (1, 11)], vec![(2, 10), (2, 11)]]);
        let one = per_seed(2, 5, 0, |i, seed| Ok((i, seed))).unwrap();
        assert_eq!(one, vec![vec![(0, 5)], vec![(1, 5)]], "no seeds runs one");
        let sums = over_settings(2, 1, 3, |i, seed| Ok(i as u64 * 100 + seed), |r| r.iter().sum()).unwrap();
        assert_eq!(sums, vec![1 + 2 + 3, 101 + 102 + 103]);
        let failed = per_seed(2, 1, 2, |i, _| if i == 1 { Err("bad".to_string()) } else { Ok(i) });
        assert_eq!(failed, Err("bad".to_string()));
    }
}
