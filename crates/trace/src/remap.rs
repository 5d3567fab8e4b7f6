//! Compact logical address space for sparse and multi-volume traces.
//!
//! Real block traces address a few gigabytes scattered over terabyte volumes, several volumes
//! at once (`volume << 40 | page`). Sizing a simulated flash device, or any per-page table, by
//! the largest page number is then impossible or wasteful. [`Remapper`] renumbers the trace
//! densely while keeping what policies and translation layers reason about:
//!
//! * the page space is cut into aligned *extents* of `E` pages (`page / E`);
//! * each extent gets a dense number in the order the trace first touches it (0, 1, 2, ...);
//! * a page keeps its offset inside its extent: `new = id(page / E) · E + page mod E`.
//!
//! With `E` a multiple of every block size in use (the device's pages per block, the block
//! size of FAB, BPLRU, REF and BP-REF, CFDC's cluster size; [`extent_pages_for`] computes the
//! least common multiple), two pages share a block after remapping exactly when they shared one
//! before, and keep their order and distance inside it. What changes is only which blocks are
//! neighbours and the blocks' numbers. The full statement of what this does to each policy
//! family and device is in `docs/address-space.md`.
//!
//! The mapping is built online, one hash lookup per request (with a one-entry cache for
//! sequential runs), in memory proportional to the number of touched extents.

use rustc_hash::FxHashMap;

use crate::{Request, TraceError, TraceSource};

/// Least common multiple of `sizes` (ignoring zeros; 1 for none): the smallest extent that is a
/// multiple of every block size. `None` on overflow.
pub fn extent_pages_for(sizes: impl IntoIterator<Item = u64>) -> Option<u64> {
    fn gcd(mut a: u64, mut b: u64) -> u64 {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    }
    let mut l = 1u64;
    for s in sizes.into_iter().filter(|&s| s > 0) {
        l = (l / gcd(l, s)).checked_mul(s)?;
    }
    Some(l)
}

/// Renumbers extents densely in first-touch order (see the module documentation).
#[derive(Clone, Debug)]
pub struct Remapper {
    extent_pages: u64,
    /// `log2(extent_pages)` when it is a power of two (shifts instead of divisions).
    shift: Option<u32>,
    ids: FxHashMap<u64, u64>,
    /// Original extent number of each dense id.
    extents: Vec<u64>,
    /// Last extent looked up and the first new page of its id.
    last: Option<(u64, u64)>,
}

impl Remapper {
    /// A remapper with extents of `extent_pages` pages (at least 1).
    pub fn new(extent_pages: u64) -> Self {
        let extent_pages = extent_pages.max(1);
        Remapper {
            extent_pages,
            shift: extent_pages.is_power_of_two().then(|| extent_pages.trailing_zeros()),
            ids: FxHashMap::default(),
            extents: Vec::new(),
            last: None,
        }
    }

    /// Pages per extent.
    pub fn extent_pages(&self) -> u64 {
        self.extent_pages
    }

    /// The new number of `page`; assigns its extent the next dense number on first touch.
    #[inline]
    pub fn map(&mut self, page: u64) -> u64 {
        let (extent, offset) = match self.shift {
            Some(s) => (page >> s, page & (self.extent_pages - 1)),
            None => (page / self.extent_pages, page % self.extent_pages),
        };
        if let Some((e, base)) = self.last
            && e == extent
        {
            return base + offset;
        }
        let next = self.extents.len() as u64;
        let id = *self.ids.entry(extent).or_insert(next);
        if id == next {
            self.extents.push(extent);
        }
        let base = id * self.extent_pages;
        self.last = Some((extent, base));
        base + offset
    }

    /// The original number of a remapped page (`None` if its extent was never touched).
    pub fn original(&self, new_page: u64) -> Option<u64> {
        let id = new_page / self.extent_pages;
        let extent = *self.extents.get(usize::try_from(id).ok()?)?;
        Some(extent * self.extent_pages + new_page % self.extent_pages)
    }

    /// Extents touched so far.
    pub fn extents(&self) -> u64 {
        self.extents.len() as u64
    }

    /// Size of the compact space so far: every new page number is below it.
    pub fn pages(&self) -> u64 {
        self.extents() * self.extent_pages
    }
}

/// A trace whose pages are renumbered by a [`Remapper`] as they stream.
pub struct Remapped<S> {
    inner: S,
    remap: Remapper,
}

impl<S: TraceSource> Remapped<S> {
    /// Remaps `inner` with extents of `extent_pages` pages.
    pub fn new(inner: S, extent_pages: u64) -> Self {
        Remapped { inner, remap: Remapper::new(extent_pages) }
    }

    /// The mapping so far.
    pub fn remapper(&self) -> &Remapper {
        &self.remap
    }
}

impl<S: TraceSource> TraceSource for Remapped<S> {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        let n = self.inner.next_batch(out, max)?;
        for r in out.iter_mut() {
            r.page = self.remap.map(r.page);
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lcm_of_block_sizes() {
        assert_eq!(extent_pages_for([64, 64, 32]), Some(64));
        assert_eq!(extent_pages_for([64, 48]), Some(192));
        assert_eq!(extent_pages_for([]), Some(1));
        assert_eq!(extent_pages_for([0, 4]), Some(4));
        assert_eq!(extent_pages_for([u64::MAX, u64::MAX - 1]), None);
    }

    #[test]
    fn first_touch_order_keeps_offsets() {
        let mut r = Remapper::new(4);
        let got: Vec<u64> = [401, 7, 402, 5, 1 << 41, 400].iter().map(|&p| r.map(p)).collect();
        // Extent 100 → 0, extent 1 → 1, extent 2^39 → 2.
        assert_eq!(got, [1, 7, 2, 5, 8, 0]);
        assert_eq!(r.extents(), 3);
        assert_eq!(r.pages(), 12);
        assert_eq!(r.original(5), Some(5));
        assert_eq!(r.original(8), Some(1 << 41));
        assert_eq!(r.original(12), None);
    }

    proptest! {
        /// Two pages share an extent (hence every block whose size divides the extent) after
        /// remapping exactly when they did before, in the same order and at the same distance;
        /// the mapping is injective, dense and invertible.
        #[test]
        fn keeps_block_membership_and_order(
            pages in proptest::collection::vec(prop_oneof![0u64..500, (0u64..4, 0u64..1000).prop_map(|(v, p)| (v << 40) | (p * 37))], 1..300),
            extent in prop_oneof![Just(1u64), Just(4), Just(64), 1u64..100],
        ) {
            let mut r = Remapper::new(extent);
            let mapped: Vec<u64> = pages.iter().map(|&p| r.map(p)).collect();
            for (i, (&a, &na)) in pages.iter().zip(&mapped).enumerate() {
                prop_assert!(na < r.pages());
                prop_assert_eq!(r.original(na), Some(a));
                for (&b, &nb) in pages[..i].iter().zip(&mapped) {
                    prop_assert_eq!(a == b, na == nb);
                    prop_assert_eq!(a / extent == b / extent, na / extent == nb / extent);
                    if a / extent == b / extent {
                        prop_assert_eq!(a as i128 - b as i128, na as i128 - nb as i128);
                    }
                }
            }
        }
    }
}
