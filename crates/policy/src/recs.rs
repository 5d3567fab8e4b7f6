//! Record arrays indexed without bounds checks, for the policies whose hot paths index their own
//! arrays dozens of times per request (REF's eviction, CFDC's tournament, FAB's and BPLRU's
//! block moves), and the same unchecked access to a local slice of such an array ([`own`],
//! [`own_ref`]) and a prefetch without a bounds test ([`hint_line`]).
//!
//! A bounds check is a compare and a branch, and the length it compares with must be reloaded
//! after every store through `&mut self`. The contract that makes the unchecked index sound:
//!
//! * a number that comes from outside (a frame number the host passes in) is checked once where
//!   it comes in, with [`Recs::checked`] / [`Recs::checked_mut`] (a real check, not debug-only);
//! * every other index is a number the policy itself handed out (a link it wrote, a slot of its
//!   block table, a node of its own tree), below the array's length, which never changes after
//!   construction. Each user says on its field which numbers those are, and its invariant check
//!   (run after every step of its tests, which run with debug assertions on) verifies them, so an
//!   index out of bounds panics there.

use std::ops::{Deref, Index, IndexMut};

/// A fixed-length array of records; `Index` is unchecked in release builds (see the module).
#[derive(Clone, Debug)]
pub(crate) struct Recs<T>(pub(crate) Vec<T>);

impl<T> Recs<T> {
    /// All records.
    #[inline(always)]
    pub(crate) fn as_slice(&self) -> &[T] {
        &self.0
    }

    /// Record `i`, bounds-checked: for a number that comes from the host.
    #[inline(always)]
    pub(crate) fn checked(&self, i: usize) -> &T {
        &self.0[i]
    }

    /// Record `i`, bounds-checked, for update: for a number that comes from the host.
    #[inline(always)]
    pub(crate) fn checked_mut(&mut self, i: usize) -> &mut T {
        &mut self.0[i]
    }
}

impl<T> Deref for Recs<T> {
    type Target = [T];

    #[inline(always)]
    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T> Index<usize> for Recs<T> {
    type Output = T;

    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        debug_assert!(i < self.0.len(), "record {i} of {}", self.0.len());
        // SAFETY: `i` is a number the policy handed out (see the module's contract): below the
        // array's length, which never changes after construction.
        unsafe { self.0.get_unchecked(i) }
    }
}

impl<T> IndexMut<usize> for Recs<T> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        debug_assert!(i < self.0.len(), "record {i} of {}", self.0.len());
        // SAFETY: as for `index`.
        unsafe { self.0.get_unchecked_mut(i) }
    }
}

/// Record `i` of a local slice of one of the policy's record arrays, unchecked under the
/// module's contract (`i` a number the policy handed out itself). A slice held in a local keeps
/// the array's address in a register across the stores through it, where indexing a [`Recs`]
/// through `&mut self` reloads the address (and the length) after each store: the hot paths of
/// FAB, BPLRU, REF and CFDC borrow their arrays apart and index them with this.
#[inline(always)]
pub(crate) fn own<T>(v: &mut [T], i: u32) -> &mut T {
    debug_assert!((i as usize) < v.len(), "record {i} of {}", v.len());
    // SAFETY: as for `Recs`' index: `i` is a number the policy handed out, below the length,
    // which never changes after construction.
    unsafe { v.get_unchecked_mut(i as usize) }
}

/// Record `i` of a local slice, read-only (see [`own`]).
#[inline(always)]
pub(crate) fn own_ref<T>(v: &[T], i: usize) -> &T {
    debug_assert!(i < v.len(), "record {i} of {}", v.len());
    // SAFETY: as for `own`.
    unsafe { v.get_unchecked(i) }
}

/// Hints the CPU to bring record `i` of `v` into cache, without testing `i` against the length
/// (where `blocks::prefetch` tests it): for records named by the policy's own numbers or links,
/// which may be NIL. A prefetch never faults, so an address past the end only fetches nothing;
/// the address is formed with `wrapping_add`, which may leave the allocation but is never
/// dereferenced.
#[inline(always)]
pub(crate) fn hint_line<T>(v: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch neither reads nor writes memory as far as the program is concerned and
    // cannot fault; the pointer is never dereferenced.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(v.as_ptr().wrapping_add(i) as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (v, i);
}

#[cfg(test)]
mod tests {
    use super::Recs;

    #[test]
    #[should_panic]
    fn a_host_number_out_of_range_panics() {
        let r = Recs(vec![1u8, 2, 3]);
        let _ = r.checked(3);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "record 5 of 3")]
    fn an_own_number_out_of_range_panics_in_the_tests() {
        let r = Recs(vec![1u8, 2, 3]);
        let _ = r[5];
    }

    #[test]
    fn indexing_reads_and_writes_the_records() {
        let mut r = Recs(vec![1u32, 2, 3]);
        r[1] += 40;
        *r.checked_mut(2) *= 10;
        assert_eq!((r[0], *r.checked(1), r.as_slice()[2], r.len()), (1, 42, 30, 3));
    }
}
