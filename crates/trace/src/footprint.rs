//! The footprint of a trace: which pages it touches, counted exactly in memory proportional to
//! what it touches, never to its page range or its length.
//!
//! [`FootprintIndex`] records every touched page in *granules* of [`GRANULE_PAGES`] aligned
//! pages: a hash map from granule number to a dense id (first-touch order) and two bitmaps per
//! granule (pages touched, pages written). From it come the exact distinct-page counts, the
//! number of touched *extents* of any size (the unit of address remapping, see
//! [`crate::remap`]), and the footprint of every volume of a multi-volume trace.
//!
//! Memory: about 40 bytes per touched granule, i.e. at most 40 bytes per distinct page (a trace
//! whose pages are all at least 64 apart) and well under one byte per distinct page for the
//! dense runs that block traces mostly consist of. [`FootprintIndex::memory_bytes`] says how
//! much an index holds.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::formats::VOLUME_SHIFT;

/// Pages per granule of the index (one `u64` bitmap each).
pub const GRANULE_PAGES: u64 = 64;

const GRANULE_SHIFT: u32 = GRANULE_PAGES.trailing_zeros();

/// The pages a trace touches, by granule (see the module documentation).
#[derive(Clone, Debug, Default)]
pub struct FootprintIndex {
    ids: FxHashMap<u64, u32>,
    /// Granule number of each id.
    granules: Vec<u64>,
    /// Pages touched, one bit per page of the granule.
    touched: Vec<u64>,
    /// Pages written.
    written: Vec<u64>,
    /// The last granule looked up and its id (sequential runs hit it).
    last: Option<(u64, u32)>,
}

impl FootprintIndex {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records an access to `page`.
    #[inline]
    pub fn touch(&mut self, page: u64, write: bool) {
        let granule = page >> GRANULE_SHIFT;
        let id = match self.last {
            Some((g, id)) if g == granule => id,
            _ => {
                let next = self.granules.len() as u32;
                let id = *self.ids.entry(granule).or_insert(next);
                if id == next {
                    self.granules.push(granule);
                    self.touched.push(0);
                    self.written.push(0);
                }
                self.last = Some((granule, id));
                id
            }
        };
        let bit = 1u64 << (page & (GRANULE_PAGES - 1));
        self.touched[id as usize] |= bit;
        if write {
            self.written[id as usize] |= bit;
        }
    }

    /// Distinct pages touched.
    pub fn distinct_pages(&self) -> u64 {
        self.touched.iter().map(|b| u64::from(b.count_ones())).sum()
    }

    /// Distinct pages written at least once.
    pub fn distinct_written_pages(&self) -> u64 {
        self.written.iter().map(|b| u64::from(b.count_ones())).sum()
    }

    /// Granules touched.
    pub fn granules(&self) -> u64 {
        self.granules.len() as u64
    }

    /// The number of aligned extents of `extent_pages` pages (`page / extent_pages`) that hold
    /// at least one touched page. Exact for every extent size; cheap for powers of two.
    pub fn extents(&self, extent_pages: u64) -> u64 {
        assert!(extent_pages > 0, "an extent holds at least one page");
        if extent_pages.is_power_of_two() {
            if extent_pages >= GRANULE_PAGES {
                let shift = extent_pages.trailing_zeros() - GRANULE_SHIFT;
                if shift == 0 {
                    return self.granules();
                }
                let set: FxHashSet<u64> = self.granules.iter().map(|g| g >> shift).collect();
                return set.len() as u64;
            }
            // Several extents per granule: count the non-empty groups of bits.
            let width = extent_pages as u32;
            let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
            return self
                .touched
                .iter()
                .map(|&bits| (0..64 / width).filter(|i| (bits >> (i * width)) & mask != 0).count() as u64)
                .sum();
        }
        let mut set: FxHashSet<u64> = FxHashSet::default();
        for (g, &bits) in self.granules.iter().zip(&self.touched) {
            let mut b = bits;
            while b != 0 {
                let page = (g << GRANULE_SHIFT) | u64::from(b.trailing_zeros());
                set.insert(page / extent_pages);
                b &= b - 1;
            }
        }
        set.len() as u64
    }

    /// Distinct pages and distinct written pages of every volume (pages combined as
    /// `volume << 40 | page`), by volume number.
    pub fn volume_footprints(&self) -> FxHashMap<u64, (u64, u64)> {
        let mut out: FxHashMap<u64, (u64, u64)> = FxHashMap::default();
        for ((g, t), w) in self.granules.iter().zip(&self.touched).zip(&self.written) {
            let e = out.entry(g >> (VOLUME_SHIFT - GRANULE_SHIFT)).or_default();
            e.0 += u64::from(t.count_ones());
            e.1 += u64::from(w.count_ones());
        }
        out
    }

    /// Bytes of memory the index holds (its tables' capacities).
    pub fn memory_bytes(&self) -> u64 {
        let map = self.ids.capacity() * (std::mem::size_of::<(u64, u32)>() + 1);
        let vecs = self.granules.capacity() * 8 + self.touched.capacity() * 8 + self.written.capacity() * 8;
        (map + vecs) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    proptest! {
        /// Every count equals the count of a plain set of pages.
        #[test]
        fn counts_equal_a_set_of_pages(
            pages in proptest::collection::vec(
                (prop_oneof![0u64..300, 1000u64..1100, (0u64..5, 0u64..200).prop_map(|(v, p)| (v << 40) | p)], any::<bool>()),
                0..300),
            extent in prop_oneof![Just(1u64), Just(2), Just(4), Just(16), Just(64), Just(128), Just(1024), 1u64..200],
        ) {
            let mut idx = FootprintIndex::new();
            let mut all = BTreeSet::new();
            let mut written = BTreeSet::new();
            for &(p, w) in &pages {
                idx.touch(p, w);
                all.insert(p);
                if w { written.insert(p); }
            }
            prop_assert_eq!(idx.distinct_pages(), all.len() as u64);
            prop_assert_eq!(idx.distinct_written_pages(), written.len() as u64);
            let extents: BTreeSet<u64> = all.iter().map(|p| p / extent).collect();
            prop_assert_eq!(idx.extents(extent), extents.len() as u64);
            let mut vols: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
            for &p in &all { vols.entry(p >> 40).or_default().0 += 1; }
            for &p in &written { vols.entry(p >> 40).or_default().1 += 1; }
            let got: BTreeMap<u64, (u64, u64)> = idx.volume_footprints().into_iter().collect();
            prop_assert_eq!(got, vols);
        }
    }

    #[test]
    fn memory_follows_the_footprint_not_the_range() {
        let mut idx = FootprintIndex::new();
        for p in 0..10_000u64 {
            idx.touch(p * (1 << 30), false);
        }
        assert_eq!(idx.granules(), 10_000);
        assert!(idx.memory_bytes() < 10_000 * 64, "{}", idx.memory_bytes());
    }
}
