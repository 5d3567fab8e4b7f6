//! The pool P of free physical sectors as a hierarchical bitmap.
//!
//! Level 0 has one bit per physical sector (1 = in the pool); each bit of level `k + 1` says
//! whether word `i` of level `k` is non-zero. The top level is a single 64-bit word, so a set over
//! `n` sectors has `ceil(log64 n)` levels: 3 up to 262,144 sectors, 4 up to 16 M, 6 for 2³².
//!
//! * insert / remove: set or clear a bit, then walk up only while a word changes between zero
//!   and non-zero — O(levels), usually one word;
//! * successor(x) (the smallest member `>= x`): look in `x`'s word; if nothing is left there,
//!   climb to the first level with a set bit after the current position and descend by
//!   `trailing_zeros` — O(levels) word operations, whatever the pool's size or shape.
//!
//! The paper keeps P as a list ordered by distance from the last write, updated in
//! O(log |P|) with a skip list. Ordering by *physical position* and asking for the successor of
//! the last written sector gives the same answer (the pool sector nearest after it, with
//! wrap-around) without reordering anything when the cursor moves. Memory: `n / 8` bytes plus
//! 1/63 of that for the upper levels (32 KiB per million sectors), against ≥ 16 bytes per pool
//! sector for a `BTreeSet<u32>` (the benchmark compares the two).

/// A set of sector numbers `0..universe`.
#[derive(Debug, Clone)]
pub(crate) struct SectorSet {
    /// `levels[0]` has one bit per sector; the last level is one word.
    levels: Vec<Vec<u64>>,
    universe: u32,
    len: u32,
}

impl SectorSet {
    /// An empty set over `0..universe`.
    pub(crate) fn new(universe: u32) -> Self {
        let mut levels = Vec::new();
        let mut n = universe.max(1) as usize;
        loop {
            let words = n.div_ceil(64);
            levels.push(vec![0u64; words]);
            if words == 1 {
                break;
            }
            n = words;
        }
        SectorSet { levels, universe, len: 0 }
    }

    /// Number of members.
    #[inline]
    pub(crate) fn len(&self) -> u32 {
        self.len
    }

    /// Whether `x` is a member.
    #[inline]
    pub(crate) fn contains(&self, x: u32) -> bool {
        x < self.universe && self.levels[0][(x >> 6) as usize] & (1u64 << (x & 63)) != 0
    }

    /// Adds `x` (`x < universe`); returns whether it was absent.
    #[inline]
    pub(crate) fn insert(&mut self, x: u32) -> bool {
        debug_assert!(x < self.universe, "sector {x} beyond the set's universe {}", self.universe);
        let mut i = x as usize;
        let leaf = &mut self.levels[0][i >> 6];
        let bit = 1u64 << (i & 63);
        if *leaf & bit != 0 {
            return false;
        }
        let was = *leaf;
        *leaf |= bit;
        self.len += 1;
        if was == 0 {
            for level in &mut self.levels[1..] {
                i >>= 6;
                let w = &mut level[i >> 6];
                let was = *w;
                *w |= 1u64 << (i & 63);
                if was != 0 {
                    break;
                }
            }
        }
        true
    }

    /// Removes `x`; returns whether it was present.
    #[inline]
    pub(crate) fn remove(&mut self, x: u32) -> bool {
        if x >= self.universe {
            return false;
        }
        let mut i = x as usize;
        let leaf = &mut self.levels[0][i >> 6];
        let bit = 1u64 << (i & 63);
        if *leaf & bit == 0 {
            return false;
        }
        *leaf &= !bit;
        self.len -= 1;
        if *leaf == 0 {
            for level in &mut self.levels[1..] {
                i >>= 6;
                let w = &mut level[i >> 6];
                *w &= !(1u64 << (i & 63));
                if *w != 0 {
                    break;
                }
            }
        }
        true
    }

    /// The smallest member `>= x`, if any.
    #[inline]
    pub(crate) fn successor(&self, x: u32) -> Option<u32> {
        if x >= self.universe {
            return None;
        }
        let top = self.levels.len();
        // Climb: at each level, look in the rest of the current word.
        let mut level = 0;
        let mut i = x as usize; // bit index at `level`
        loop {
            let words = &self.levels[level];
            let w = i >> 6;
            if w >= words.len() {
                return None;
            }
            let bits = words[w] & (!0u64 << (i & 63));
            if bits != 0 {
                i = (w << 6) | bits.trailing_zeros() as usize;
                break;
            }
            level += 1;
            if level == top {
                return None;
            }
            i = w + 1; // the next word of the level below, as a bit of this level
        }
        // Descend along the lowest set bits.
        while level > 0 {
            level -= 1;
            let word = self.levels[level][i];
            debug_assert!(word != 0, "summary bit set over an empty word");
            i = (i << 6) | word.trailing_zeros() as usize;
        }
        Some(i as u32)
    }

    /// The first member at or after `x` in circular order (wrapping past the end to 0), if the
    /// set is not empty.
    #[inline]
    pub(crate) fn successor_wrapping(&self, x: u32) -> Option<u32> {
        self.successor(x).or_else(|| self.successor(0))
    }

    /// Members in increasing order (tests and invariant checks).
    pub(crate) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.levels[0].iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = bits.trailing_zeros();
                bits &= bits - 1;
                Some(((w as u32) << 6) | b)
            })
        })
    }

    /// Recounts the members and checks every summary bit against the level below.
    pub(crate) fn check(&self) -> Result<(), String> {
        let counted: u64 = self.levels[0].iter().map(|w| w.count_ones() as u64).sum();
        if counted != self.len as u64 {
            return Err(format!("pool bitmap holds {counted} sectors, counted {}", self.len));
        }
        if let Some(x) = self.iter().find(|&x| x >= self.universe) {
            return Err(format!("pool bitmap holds sector {x} beyond {}", self.universe));
        }
        for k in 1..self.levels.len() {
            let below = &self.levels[k - 1];
            for (i, &w) in below.iter().enumerate() {
                let summary = self.levels[k][i >> 6] & (1u64 << (i & 63)) != 0;
                if summary != (w != 0) {
                    return Err(format!("pool bitmap level {k}: summary bit {i} is {summary}, word is {w:#x}"));
                }
            }
            let extra: u64 = self.levels[k].iter().map(|w| w.count_ones() as u64).sum();
            let nonzero = below.iter().filter(|&&w| w != 0).count() as u64;
            if extra != nonzero {
                return Err(format!("pool bitmap level {k}: {extra} summary bits for {nonzero} non-empty words"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    #[test]
    fn levels_by_universe() {
        assert_eq!(SectorSet::new(1).levels.len(), 1);
        assert_eq!(SectorSet::new(64).levels.len(), 1);
        assert_eq!(SectorSet::new(65).levels.len(), 2);
        assert_eq!(SectorSet::new(4096).levels.len(), 2);
        assert_eq!(SectorSet::new(4097).levels.len(), 3);
        assert_eq!(SectorSet::new(u32::MAX).levels.len(), 6);
    }

    #[test]
    fn agrees_with_a_btreeset() {
        for universe in [1u32, 63, 64, 65, 700, 4096, 4097, 300_000] {
            let mut rng = ChaCha8Rng::seed_from_u64(universe as u64);
            let mut set = SectorSet::new(universe);
            let mut model = BTreeSet::new();
            // Sparse and dense phases: the successor has to climb across empty words.
            for round in 0..4 {
                let density = [0.001, 0.5, 0.05, 0.9][round];
                let ops = (universe as usize * 2).min(200_000);
                for _ in 0..ops {
                    let x = rng.random_range(0..universe);
                    if rng.random_bool(density) {
                        assert_eq!(set.insert(x), model.insert(x));
                    } else {
                        assert_eq!(set.remove(x), model.remove(&x));
                    }
                    let q = rng.random_range(0..universe);
                    assert_eq!(set.successor(q), model.range(q..).next().copied(), "successor({q})");
                    let wrap = model.range(q..).next().or_else(|| model.iter().next()).copied();
                    assert_eq!(set.successor_wrapping(q), wrap);
                    assert_eq!(set.contains(q), model.contains(&q));
                }
                assert_eq!(set.len() as usize, model.len());
                set.check().unwrap();
                assert!(set.iter().eq(model.iter().copied()));
            }
            assert_eq!(set.successor(universe), None);
        }
    }

    #[test]
    fn a_lone_member_is_found_from_anywhere() {
        let n = 1 << 20;
        let mut set = SectorSet::new(n);
        set.insert(5);
        assert_eq!(set.successor(6), None);
        assert_eq!(set.successor_wrapping(6), Some(5));
        assert_eq!(set.successor_wrapping(n - 1), Some(5));
        set.remove(5);
        set.insert(n - 1);
        assert_eq!(set.successor(0), Some(n - 1));
        set.check().unwrap();
    }
}
