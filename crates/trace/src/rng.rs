//! The portable random source behind every generator.
//!
//! Same seed, same numbers, on every machine: the bit stream is ChaCha8 (`rand_chacha`, whose
//! output is value-stable across platforms and SIMD back ends) seeded with
//! `SeedableRng::seed_from_u64`, and everything derived from it uses only integer arithmetic
//! on `u64`/`u128` or exactly representable floating-point operations:
//!
//! * [`PortableRng::below`]`(n)`: a uniform integer in `0..n`, by Lemire's multiply-shift method
//!   with rejection (one 64×64→128-bit multiplication; a draw is rejected with probability
//!   below `n / 2^64`), so the result is exactly uniform and independent of `usize`.
//! * [`PortableRng::unit_f64`]: the top 53 bits of one `u64` times 2^-53, a uniform value of
//!   `[0, 1)` on the 2^-53 grid (the multiplication by a power of two is exact).
//!
//! Transcendental functions applied to these numbers come from the `libm` crate (the generators
//! never call `f64::powf` and friends, whose last bit differs between platform libraries).

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

/// ChaCha8 with the portable derivations above.
#[derive(Clone, Debug)]
pub struct PortableRng {
    inner: ChaCha8Rng,
}

impl PortableRng {
    /// A generator whose stream is fully determined by `seed`.
    pub fn new(seed: u64) -> Self {
        PortableRng { inner: ChaCha8Rng::seed_from_u64(seed) }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }

    /// A uniform integer in `0..n`. `n` must be at least 1 (only a bug passes 0).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0, "below(0)");
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        let mut low = m as u64;
        if low < n {
            // Reject the first 2^64 mod n values of the low half so that every result has
            // exactly floor(2^64 / n) preimages.
            let threshold = n.wrapping_neg() % n;
            while low < threshold {
                m = u128::from(self.next_u64()) * u128::from(n);
                low = m as u64;
            }
        }
        (m >> 64) as u64
    }

    /// A uniform value of `[0, 1)` with 53 random bits.
    #[inline]
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// `true` with probability `p` (`unit_f64() < p`; `p = 0` never, `p = 1` always).
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit_f64() < p
    }
}

/// SplitMix64's finaliser: a bijective 64-bit mixer used to derive independent sub-seeds and
/// round keys from a seed without consuming the request stream.
#[inline]
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A seeded pseudo-random permutation of `0..n` computed on the fly in constant memory: a
/// four-round balanced Feistel network over the smallest even number of bits covering `n`,
/// with cycle walking (values that land outside `0..n` are permuted again until they fall
/// inside, which takes fewer than four rounds of the network on average because the Feistel
/// domain is smaller than `4n`).
#[derive(Clone, Debug)]
pub(crate) struct Permutation {
    n: u64,
    half_bits: u32,
    mask: u64,
    keys: [u64; 4],
}

impl Permutation {
    /// The permutation of `0..n` selected by `seed` (`n >= 1`).
    pub(crate) fn new(n: u64, seed: u64) -> Self {
        debug_assert!(n > 0);
        let bits = (64 - (n - 1).leading_zeros()).max(2);
        let half_bits = bits.div_ceil(2);
        let mut keys = [0u64; 4];
        let mut state = mix64(seed ^ 0x005E_ED0F_5CA7_7E25);
        for k in &mut keys {
            state = mix64(state);
            *k = state;
        }
        Permutation { n, half_bits, mask: (1u64 << half_bits) - 1, keys }
    }

    #[inline]
    fn feistel(&self, x: u64) -> u64 {
        let mut left = x >> self.half_bits;
        let mut right = x & self.mask;
        for &k in &self.keys {
            let f = mix64(right ^ k) & self.mask;
            let next = left ^ f;
            left = right;
            right = next;
        }
        (left << self.half_bits) | right
    }

    /// The image of `x` (`x < n`).
    #[inline]
    pub(crate) fn apply(&self, x: u64) -> u64 {
        let mut y = self.feistel(x);
        while y >= self.n {
            y = self.feistel(y);
        }
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_is_in_range_and_covers_small_ranges_evenly() {
        let mut rng = PortableRng::new(1);
        let mut counts = [0u32; 7];
        for _ in 0..70_000 {
            let v = rng.below(7);
            counts[v as usize] += 1;
        }
        for c in counts {
            // Expectation 10,000, standard deviation about 93.
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
        assert_eq!(rng.below(1), 0);
        let big = u64::MAX - 3;
        for _ in 0..1000 {
            assert!(rng.below(big) < big);
        }
    }

    #[test]
    fn the_stream_is_pinned() {
        // ChaCha8 seeded through seed_from_u64 is value-stable: if these change, every generated
        // trace changes.
        let mut rng = PortableRng::new(42);
        let first: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
        assert_eq!(first, [12_578_764_544_318_200_737, 17_529_487_244_874_322_312, 7_886_285_670_807_131_020]);
        let mut other = PortableRng::new(43);
        assert_ne!(first, (0..3).map(|_| other.next_u64()).collect::<Vec<_>>());
    }

    #[test]
    fn unit_is_in_the_half_open_interval() {
        let mut rng = PortableRng::new(9);
        let mut sum = 0.0;
        for _ in 0..100_000 {
            let u = rng.unit_f64();
            assert!((0.0..1.0).contains(&u));
            sum += u;
        }
        assert!((sum / 100_000.0 - 0.5).abs() < 0.005);
    }

    #[test]
    fn permutation_is_a_bijection() {
        for n in [1u64, 2, 3, 5, 16, 17, 1000, 4097] {
            for seed in [0u64, 7] {
                let p = Permutation::new(n, seed);
                let mut seen = vec![false; n as usize];
                for x in 0..n {
                    let y = p.apply(x);
                    assert!(y < n);
                    assert!(!seen[y as usize], "n={n} seed={seed}: {y} hit twice");
                    seen[y as usize] = true;
                }
            }
        }
        // A different seed gives a different permutation.
        let a: Vec<u64> = (0..100).map(|x| Permutation::new(100, 1).apply(x)).collect();
        let b: Vec<u64> = (0..100).map(|x| Permutation::new(100, 2).apply(x)).collect();
        assert_ne!(a, b);
    }
}
