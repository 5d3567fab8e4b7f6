//! The algorithm of §4, written once for both the timing device ([`super::Gather`]) and the
//! data store ([`super::GatherStore`]): the translation table T, the pool P, the last written
//! sector f.
//!
//! A write of logical sector `l` is split in two so that the caller performs the physical write
//! in between and a failed write leaves the mapping untouched:
//!
//! 1. [`Mapping::target`]: the pool sector nearest after f in the forward direction, wrapping
//!    from the last physical sector to sector 0 (P(0) of the paper; `T(l)` is not in the pool,
//!    so the old copy is never the target);
//! 2. the caller writes the data there;
//! 3. [`Mapping::commit`]: `T(l) ← target`, the target leaves the pool, the old `T(l)` joins it,
//!    `f ← target`. Returns `D1(f_old, target)`.

use super::bitmap::SectorSet;

/// "Not mapped" in the translation table (recovery only).
pub(crate) const UNMAPPED: u32 = u32::MAX;

/// Translation table, pool and cursor.
#[derive(Debug, Clone)]
pub(crate) struct Mapping {
    /// T: logical sector → physical sector.
    t: Vec<u32>,
    /// P: physical sectors holding no live logical sector.
    pool: SectorSet,
    /// |F|.
    physical: u32,
    /// f: the last written physical sector.
    last: u32,
}

impl Mapping {
    /// Logical sector `i` at physical sector `i`, the pool is `logical..physical`, and the last
    /// written sector is `logical − 1` (the state of a device filled sequentially). The caller
    /// has checked `0 < logical < physical`.
    pub(crate) fn sequential(logical: u32, physical: u32) -> Self {
        debug_assert!(0 < logical && logical < physical);
        let mut pool = SectorSet::new(physical);
        for p in logical..physical {
            pool.insert(p);
        }
        Mapping { t: (0..logical).collect(), pool, physical, last: logical - 1 }
    }

    /// A mapping rebuilt from a table (entries may be [`UNMAPPED`]; place them with
    /// [`Mapping::commit_unmapped`] before any other write). The pool is every physical sector
    /// no entry points to. The caller has checked that entries are distinct and in range.
    pub(crate) fn from_table(t: Vec<u32>, physical: u32, last: u32) -> Self {
        let mut pool = SectorSet::new(physical);
        for p in 0..physical {
            pool.insert(p);
        }
        for &p in &t {
            if p != UNMAPPED {
                pool.remove(p);
            }
        }
        Mapping { t, pool, physical, last }
    }

    /// |L|.
    #[inline]
    pub(crate) fn logical(&self) -> u32 {
        self.t.len() as u32
    }

    /// |F|.
    #[inline]
    pub(crate) fn physical(&self) -> u32 {
        self.physical
    }

    /// |P| (constant once every logical sector is mapped).
    #[inline]
    pub(crate) fn pool_len(&self) -> u32 {
        self.pool.len()
    }

    /// f.
    #[inline]
    pub(crate) fn last(&self) -> u32 {
        self.last
    }

    /// T(l). The caller has checked `l < logical()`.
    #[inline]
    pub(crate) fn physical_of(&self, l: u32) -> u32 {
        self.t[l as usize]
    }

    /// Whether physical sector `p` is in the pool.
    #[inline]
    pub(crate) fn is_free(&self, p: u32) -> bool {
        self.pool.contains(p)
    }

    /// The sector the next write goes to: the first pool sector after f, wrapping around.
    #[inline]
    pub(crate) fn target(&self) -> u32 {
        let next = if self.last + 1 == self.physical { 0 } else { self.last + 1 };
        self.pool.successor_wrapping(next).expect("the pool is never empty")
    }

    /// Records that logical sector `l` was written at `target` (the value [`Mapping::target`]
    /// returned); returns the distance `D1(f, target)` from the previous write.
    #[inline]
    pub(crate) fn commit(&mut self, l: u32, target: u32) -> u32 {
        let old = std::mem::replace(&mut self.t[l as usize], target);
        debug_assert!(old != UNMAPPED, "commit of unmapped logical sector {l}");
        let taken = self.pool.remove(target);
        debug_assert!(taken, "target {target} was not in the pool");
        self.pool.insert(old);
        self.advance(target)
    }

    /// Like [`Mapping::commit`] for a logical sector that has no physical sector yet (recovery
    /// of a sector whose every copy was lost): nothing is freed.
    pub(crate) fn commit_unmapped(&mut self, l: u32, target: u32) -> u32 {
        debug_assert_eq!(self.t[l as usize], UNMAPPED);
        self.t[l as usize] = target;
        let taken = self.pool.remove(target);
        debug_assert!(taken, "target {target} was not in the pool");
        self.advance(target)
    }

    #[inline]
    fn advance(&mut self, target: u32) -> u32 {
        let d = if target > self.last { target - self.last } else { target + self.physical - self.last };
        self.last = target;
        d
    }

    /// T is injective into `0..physical`, P is exactly the complement of T's image, and f is in
    /// range.
    pub(crate) fn check(&self) -> Result<(), String> {
        self.pool.check()?;
        let mut seen = vec![false; self.physical as usize];
        for (l, &p) in self.t.iter().enumerate() {
            if p == UNMAPPED || p >= self.physical {
                return Err(format!("logical sector {l} maps to {p}, outside 0..{}", self.physical));
            }
            if std::mem::replace(&mut seen[p as usize], true) {
                return Err(format!("physical sector {p} is mapped twice (again by logical sector {l})"));
            }
            if self.pool.contains(p) {
                return Err(format!("physical sector {p} of logical sector {l} is also in the pool"));
            }
        }
        let expected = self.physical - self.logical();
        if self.pool.len() != expected {
            return Err(format!("pool holds {} sectors, expected |F| − |L| = {expected}", self.pool.len()));
        }
        if self.last >= self.physical {
            return Err(format!("last written sector {} outside 0..{}", self.last, self.physical));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's Fig. 3: with 4 logical sectors and 4 pool sectors, writing logical 0, 3, 0
    /// fills the pool in order and frees the old copies behind the cursor.
    #[test]
    fn writes_go_forward_and_free_the_old_copy() {
        let mut m = Mapping::sequential(4, 8);
        assert_eq!((m.last(), m.pool_len()), (3, 4));
        for (l, expect) in [(0u32, 4u32), (3, 5), (0, 6)] {
            let t = m.target();
            assert_eq!(t, expect);
            assert_eq!(m.commit(l, t), 1);
            m.check().unwrap();
        }
        assert_eq!((m.physical_of(0), m.physical_of(3)), (6, 5));
        // Freed: 0 (first copy of 0), 3, then 4 (second copy of 0); pool = {0, 3, 4, 7}.
        assert!([0, 3, 4, 7].iter().all(|&p| m.is_free(p)));
        // Next write: 7 (distance 1), then wrap to 0 (distance 1 across the end), then 3.
        let t = m.target();
        assert_eq!((t, m.commit(1, t)), (7, 1));
        let t = m.target();
        assert_eq!((t, m.commit(2, t)), (0, 1));
        let t = m.target();
        assert_eq!((t, m.commit(2, t)), (1, 1)); // 1 was freed by logical 1's move
        let t = m.target();
        assert_eq!((t, m.commit(0, t)), (2, 1));
        let t = m.target();
        assert_eq!((t, m.commit(0, t)), (3, 1));
        m.check().unwrap();
    }

    #[test]
    fn rewriting_the_last_sector_never_writes_in_place() {
        let mut m = Mapping::sequential(3, 4); // one pool sector
        for _ in 0..10 {
            let t = m.target();
            assert_ne!(t, m.physical_of(2));
            let d = m.commit(2, t);
            assert!((1..=3).contains(&d));
            m.check().unwrap();
        }
    }
}
