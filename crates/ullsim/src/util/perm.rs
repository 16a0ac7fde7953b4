//! A keyed bijection on `[0, n)`: a small Feistel network with cycle walking.
//!
//! Used wherever the model needs "a random-looking but reproducible and invertible" placement without storing
//! a table: the FTL's preconditioned layout (logical page -> initial physical slot) and the workload's
//! scattering of popular blocks (zipf/pareto ranks -> block numbers), as fio does.

/// A permutation of `[0, n)` derived from a 64-bit key. `apply` and `invert` are each a few hashes.
#[derive(Debug, Clone)]
pub struct Permutation {
    n: u64,
    half_bits: u32,
    half_mask: u64,
    keys: [u64; 4],
    identity: bool,
}

fn mix(mut x: u64) -> u64 {
    // splitmix64 finalizer: a good 64-bit avalanche.
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl Permutation {
    /// A permutation of `[0, n)` chosen by `key`.
    pub fn new(n: u64, key: u64) -> Self {
        // The Feistel network permutes [0, 2^(2*half_bits)); cycle walking restricts it to [0, n).
        let bits = 64 - n.max(2).saturating_sub(1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let mut keys = [0u64; 4];
        let mut k = key;
        for slot in &mut keys {
            k = mix(k.wrapping_add(0x9e37_79b9_7f4a_7c15));
            *slot = k;
        }
        Permutation { n, half_bits, half_mask: (1u64 << half_bits) - 1, keys, identity: false }
    }

    /// The identity on `[0, n)` (for sequential layouts), with the same interface.
    pub fn identity(n: u64) -> Self {
        let mut p = Self::new(n, 0);
        p.identity = true;
        p
    }

    /// Size of the domain.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// True when the domain is empty.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    fn round(&self, x: u64, key: u64) -> u64 {
        mix(x ^ key) & self.half_mask
    }

    fn forward_once(&self, x: u64) -> u64 {
        let mut left = x >> self.half_bits;
        let mut right = x & self.half_mask;
        for &key in &self.keys {
            let next = left ^ self.round(right, key);
            left = right;
            right = next;
        }
        (left << self.half_bits) | right
    }

    fn backward_once(&self, y: u64) -> u64 {
        let mut left = y >> self.half_bits;
        let mut right = y & self.half_mask;
        for &key in self.keys.iter().rev() {
            let prev = right ^ self.round(left, key);
            right = left;
            left = prev;
        }
        (left << self.half_bits) | right
    }

    /// The image of `x` (which must be `< len()`).
    pub fn apply(&self, x: u64) -> u64 {
        debug_assert!(x < self.n);
        if self.identity {
            return x;
        }
        let mut y = self.forward_once(x);
        while y >= self.n {
            y = self.forward_once(y);
        }
        y
    }

    /// The preimage of `y` (which must be `< len()`): `invert(apply(x)) == x`.
    pub fn invert(&self, y: u64) -> u64 {
        debug_assert!(y < self.n);
        if self.identity {
            return y;
        }
        let mut x = self.backward_once(y);
        while x >= self.n {
            x = self.backward_once(x);
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_a_bijection_for_awkward_sizes() {
        for n in [1u64, 2, 3, 7, 100, 1000, 4097] {
            let p = Permutation::new(n, 42);
            let mut seen = vec![false; n as usize];
            for x in 0..n {
                let y = p.apply(x);
                assert!(y < n);
                assert!(!seen[y as usize], "collision at n={n}");
                seen[y as usize] = true;
                assert_eq!(p.invert(y), x);
            }
        }
    }

    #[test]
    fn different_keys_differ_and_scatter() {
        let a = Permutation::new(1 << 20, 1);
        let b = Permutation::new(1 << 20, 2);
        let differ = (0..1000).filter(|&x| a.apply(x) != b.apply(x)).count();
        assert!(differ > 990);
        // Neighbours land far apart.
        let close = (0..1000).filter(|&x| a.apply(x).abs_diff(a.apply(x + 1)) < 1024).count();
        assert!(close < 20, "{close} neighbours stayed close");
    }
}
