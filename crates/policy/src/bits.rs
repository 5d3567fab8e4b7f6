//! One bit per frame, packed 64 to a word: the per-frame flags that the hot paths test on every
//! request (the simulator's dirty bits, FAB's dirty bits, FBX's tracked frames). A bit per frame
//! is 12.5 KB for 100,000 frames, so it stays in L1 where a byte per frame (100 KB) did not.

/// A fixed number of bits, all clear at first.
#[derive(Clone, Debug)]
pub struct FrameBits(Vec<u64>);

impl FrameBits {
    /// `n` clear bits.
    pub fn new(n: usize) -> Self {
        FrameBits(vec![0; n.div_ceil(64)])
    }

    /// Bit `i`.
    #[inline(always)]
    pub fn get(&self, i: u32) -> bool {
        self.0[i as usize >> 6] >> (i & 63) & 1 != 0
    }

    /// Sets bit `i` when `on` (keeps it otherwise), without a branch.
    #[inline(always)]
    pub fn or(&mut self, i: u32, on: bool) {
        self.0[i as usize >> 6] |= u64::from(on) << (i & 63);
    }

    /// Sets bit `i` to `on`, without a branch.
    #[inline(always)]
    pub fn set(&mut self, i: u32, on: bool) {
        let w = &mut self.0[i as usize >> 6];
        *w = *w & !(1 << (i & 63)) | u64::from(on) << (i & 63);
    }

    /// Bit `i`, cleared (one word read and written, where `get` then `set` index it twice).
    #[inline(always)]
    pub fn take(&mut self, i: u32) -> bool {
        let w = &mut self.0[i as usize >> 6];
        let on = *w >> (i & 63) & 1 != 0;
        *w &= !(1 << (i & 63));
        on
    }

    /// The number of bits set.
    pub fn count_ones(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Clears every bit.
    pub fn clear(&mut self) {
        self.0.fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::FrameBits;
    use proptest::prelude::*;

    proptest! {
        /// Against a vector of booleans, over random operations on up to 200 bits.
        #[test]
        fn matches_a_bool_per_bit(n in 1usize..200, ops in prop::collection::vec((0u8..4, any::<u32>(), any::<bool>()), 0..300)) {
            let mut bits = FrameBits::new(n);
            let mut model = vec![false; n];
            for (op, i, on) in ops {
                let i = i % n as u32;
                match op {
                    0 => { bits.or(i, on); model[i as usize] |= on; }
                    1 => { bits.set(i, on); model[i as usize] = on; }
                    2 => { bits.clear(); model.fill(false); }
                    _ => { prop_assert_eq!(bits.take(i), model[i as usize]); model[i as usize] = false; }
                }
                prop_assert_eq!(bits.count_ones(), model.iter().filter(|&&m| m).count());
                for (j, &m) in model.iter().enumerate() {
                    prop_assert_eq!(bits.get(j as u32), m);
                }
            }
        }
    }
}
