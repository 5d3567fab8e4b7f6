//! BPLRU — block padding LRU: block-level LRU with page padding and LRU compensation.
//!
//! Source: Kim & Ahn, *BPLRU: a buffer management scheme for improving random writes in flash
//! storage* (USENIX FAST 2008), as summarised by the REF paper (Seo & Shin, IEEE TCE 2008) §II.B
//! and its Fig. 6, and by the CFDC paper §2.4. Three parts:
//! * **Block-level LRU**: pages are grouped by flash block; an access to any page of a block
//!   moves the block to the MRU end; the victim is the LRU block, and all its pages leave at once.
//! * **Page padding**: the victim block is written whole (the caller reads the block's missing
//!   pages and writes every page of the block in order, [`Evictions::pad`]), so the FTL's log
//!   block is filled in place and can be switch-merged. In Fig. 6, writing p5 evicts block B0
//!   holding p0 and pads p1, p2, p3.
//! * **LRU compensation**: a block written completely and sequentially is unlikely to be
//!   written again soon, so it goes to the LRU end instead of the MRU end.
//!
//! Choices where the papers are silent:
//! * A block is `ppb` consecutive page numbers: block = page / ppb.
//! * BPLRU is a write buffer inside the device; flashbuf runs it as a database buffer, so reads
//!   are buffered too. Any access (read or write) moves the block to the MRU end; a clean page
//!   of a padded block is written with the block (the whole block is written, and it is already
//!   in memory so it needs no padding read). A victim block with no dirty page is evicted
//!   without writing or padding (there is nothing to write back).
//! * Sequential detection: each block (from the moment one of its pages is buffered) remembers
//!   the next expected page offset, starting at 0. A write to exactly that offset advances it;
//!   any other write breaks the sequence for as long as the block stays buffered. The write that
//!   completes offset `ppb - 1` of an unbroken sequence moves the block to the LRU end (instead
//!   of the MRU end). Reads neither advance nor break the sequence. With `ppb = 1` every write
//!   "completes" its block, so written pages go to the LRU end: use `ppb >= 2`.
//! * Victims are named in page order.
//! * Pins: the victim is the LRU-most block with an unpinned page; when one of its pages is
//!   pinned only its unpinned pages leave, each dirty one written by itself, without padding (a
//!   whole-block write needs every buffered page of the block). The block keeps its LRU place.
//!
//! State: an LRU list of blocks; per block a small list record (LRU links, dirty count, sequence
//! offset: everything a hit touches) and a page record (its first pages listed inline with their
//! offsets, the rest chained through their frame records); one record per frame. Hits and
//! insertions are O(1) (plus one table lookup per insertion); a block eviction is O(ppb) (O(ppb
//! log ppb) beyond 64 pages per block).

use std::cell::Cell;

use crate::blocks::{
    BlockSize, BlockTable, Ends, Linked, PPB_DOC, PageRec, attach_front, link_back, move_to_front, parse_ppb, unlink,
    walk,
};
use crate::params::{ParamDoc, PolicyParams};
use crate::recs::{hint_line, own, own_ref};
use crate::replacer::{Access, BlockPad, EvictError, Evictions, FrameId, NIL, Pins, Replacer};

/// Sequence offset of a block whose writes were not sequential.
const BROKEN: u32 = u32::MAX;

/// Pages a block's page record lists inline.
const INLINE: usize = 10;

/// Pages an extension record lists (a block's pages beyond the inline ones).
const EXT: usize = 12;

/// Parameters of [`Bplru`].
#[derive(Clone, Debug, PartialEq)]
pub struct BplruConfig {
    /// Pages per flash block (the REF paper's large-block NAND: 64).
    pub ppb: u32,
}

impl Default for BplruConfig {
    fn default() -> Self {
        BplruConfig { ppb: 64 }
    }
}

impl PolicyParams for BplruConfig {
    const KEYS: &'static [ParamDoc] = &[PPB_DOC];

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "ppb" => self.ppb = parse_ppb(key, value)?,
            _ => return Err(format!("unknown parameter '{key}'")),
        }
        Ok(())
    }

    fn values(&self) -> Vec<String> {
        vec![self.ppb.to_string()]
    }
}

// A frame's record stays one 32-byte half line with its access time.
const _: () = assert!(std::mem::size_of::<PageRec>() == 32);

/// What a hit touches of a block: four to a cache line, so that the block list's random
/// neighbours lie in about 16 bytes × live blocks (250 KB for the foundation benchmark's 15,625
/// blocks), not in the 32-byte records with the page list that this list once shared.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(16))]
struct BplruList {
    /// Links in the block LRU list (`[towards MRU, towards LRU]`).
    lru: [u32; 2],
    /// Dirty buffered pages.
    dirty_pages: u32,
    /// Next expected offset of a sequential write run, or [`BROKEN`].
    seq_next: u32,
}

const _: () = assert!(std::mem::size_of::<BplruList>() == 16);

impl Linked<0> for BplruList {
    #[inline]
    fn links(&self) -> [u32; 2] {
        self.lru
    }
    #[inline]
    fn links_mut(&mut self) -> &mut [u32; 2] {
        &mut self.lru
    }
}

/// A block's buffered pages, one cache line: the first [`INLINE`] in insertion order (a removal
/// moves the last page into the gap), inline with their offsets; the rest in a chain of
/// extension records of [`EXT`] pages each. An eviction of a block of at most [`INLINE`] pages
/// (nearly all of them under Zipf: about 3 pages a victim) reads its victims and their order
/// from this line alone, a larger one from one more line per [`EXT`] pages; before, it chased a
/// chain of frame records, a dependent miss per page, and a per-request cursor pre-walked the
/// chain to hide it.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct BplruPages {
    /// The first `min(len, INLINE)` pages' frames.
    frames: [u32; INLINE],
    /// Their offsets in the block (read only when `ppb ≤ 64`, where they fit).
    offs: [u8; INLINE],
    /// Buffered pages.
    len: u32,
    /// The first and the last extension record, or NIL.
    ext: [u32; 2],
}

const _: () = assert!(std::mem::size_of::<BplruPages>() == 64);

impl BplruPages {
    const EMPTY: BplruPages = BplruPages { frames: [NIL; INLINE], offs: [0; INLINE], len: 0, ext: [NIL; 2] };

    /// The inline frames in use.
    #[inline(always)]
    fn inline(&self) -> &[u32] {
        &self.frames[..(self.len as usize).min(INLINE)]
    }
}

/// The pages of a block beyond its inline ones, [`EXT`] at a time, one cache line.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct BplruExt {
    frames: [u32; EXT],
    offs: [u8; EXT],
    /// The block's next extension record, or NIL.
    next: u32,
}

const _: () = assert!(std::mem::size_of::<BplruExt>() == 64);

/// Extension records enough for `capacity` frames: a block of `n > INLINE` pages holds
/// `⌈(n − INLINE) / EXT⌉ ≤ (n − INLINE) / EXT + 1` of them, and at most `capacity / (INLINE + 1)`
/// blocks hold more than [`INLINE`] pages.
fn ext_records(capacity: usize) -> usize {
    capacity / EXT + capacity / (INLINE + 1) + 1
}

/// A block's frames with their listed offsets, and its extension records (for checks).
type Listed = (Vec<(u32, u8)>, Vec<u32>);

/// The BPLRU policy.
#[derive(Clone, Debug)]
pub struct Bplru {
    ppb: u64,
    size: BlockSize,
    blocks: BlockTable,
    /// Per block slot: LRU links, dirty count, sequence.
    list: Vec<BplruList>,
    /// Per block slot: its pages.
    pages: Vec<BplruPages>,
    /// Extension records of the blocks' page lists, and the free ones (a stack, never beyond
    /// its initial length).
    ext: Vec<BplruExt>,
    ext_free: Vec<u32>,
    /// Block slots in LRU order (front = MRU).
    lru: Ends,
    fr: Vec<PageRec>,
    len: usize,
    /// Which page of the LRU block [`Replacer::likely_victim`] (asked once per request) names
    /// next, by its place in the block's page list. Each named frame's record is prefetched,
    /// and the host prefetches its own entry for it, so that an eviction's stores find their
    /// lines in cache. Reset to 0 whenever the LRU block changes; a hint only, never trusted by
    /// a decision (a stale place or record only prefetches the wrong lines).
    next: Cell<u32>,
    /// The extension record holding the page at `next` when `next ≥ INLINE`.
    cursor: Cell<u32>,
}

/// Visits each listed page of the block whose page record is `p`, its frame and offset: the
/// inline ones, then the extension records in chain order (the chain is the policy's own, so
/// unchecked).
#[inline(always)]
fn each_listed(ext: &[BplruExt], p: &BplruPages, mut visit: impl FnMut(u32, u8)) {
    for i in 0..(p.len as usize).min(INLINE) {
        visit(p.frames[i], p.offs[i]);
    }
    let (mut e, mut left) = (p.ext[0], (p.len as usize).saturating_sub(INLINE));
    while left > 0 {
        let x = own_ref(ext, e as usize);
        for i in 0..left.min(EXT) {
            visit(x.frames[i], x.offs[i]);
        }
        left = left.saturating_sub(EXT);
        e = x.next;
    }
}

impl Bplru {
    /// Records an access to `frame` of block `slot` and moves the block.
    #[inline(always)]
    fn touch(&mut self, frame: FrameId, slot: u32, access: &Access) {
        if access.kind.is_write() && self.note_write(frame, slot, access) {
            // LRU compensation: a fully, sequentially written block goes to the LRU end.
            self.move_to_lru_end(slot);
        } else if move_to_front::<0, _>(&mut self.list, &mut self.lru, slot) {
            // The next victim block changed (its record was written by the unlink).
            self.restart_cursor();
        }
    }

    /// A write to `frame` of block `slot`: its dirty flag and the block's sequence; `true` when
    /// the write completes an unbroken sequential run of the block.
    #[inline(always)]
    fn note_write(&mut self, frame: FrameId, slot: u32, access: &Access) -> bool {
        let offset = self.size.offset(access.page) as u32;
        let fr = &mut self.fr[frame as usize];
        let b = own(&mut self.list, slot);
        if !fr.dirty {
            fr.dirty = true;
            b.dirty_pages += 1;
        }
        b.seq_next = if b.seq_next == offset { offset + 1 } else { BROKEN };
        b.seq_next as u64 == self.ppb
    }

    /// Moves block `slot` to the LRU end (LRU compensation; rare).
    #[inline(never)]
    fn move_to_lru_end(&mut self, slot: u32) {
        if self.lru.tail != slot {
            unlink::<0, _, _>(&mut self.list, &mut self.lru, slot);
            link_back::<0, _, _>(&mut self.list, &mut self.lru, slot);
        }
    }

    /// Starts [`Replacer::likely_victim`] over the pages of the LRU block, and prefetches what
    /// evicting that block reads besides: its block number (releasing its slot reads it first)
    /// and the list record of the block behind it (the unlink writes it, and it is the next LRU
    /// block). The LRU block's page record, which `likely_victim` reads at once, was prefetched
    /// when the block before it became the LRU block, about an eviction ago (the record of the
    /// block behind it is prefetched now for the same reason): prefetched only now, it stalled
    /// the next request's `likely_victim`.
    #[inline]
    fn restart_cursor(&self) {
        let t = self.lru.tail;
        if t != NIL {
            let b = &self.list[t as usize];
            self.blocks.prefetch_key(t);
            hint_line(&self.list, b.lru[0] as usize);
            hint_line(&self.pages, t as usize);
            hint_line(&self.pages, b.lru[0] as usize);
        }
        self.next.set(0);
    }

    /// The offset of `page` in its block as an inline record keeps it.
    #[inline(always)]
    fn off8(&self, page: u64) -> u8 {
        self.size.offset(page) as u8
    }

    /// The frame and offset at place `i` of block `s`'s page list, and where it is kept.
    fn place(&self, s: u32, i: usize) -> (u32, u8, Option<u32>) {
        let p = &self.pages[s as usize];
        if i < INLINE {
            return (p.frames[i], p.offs[i], None);
        }
        let mut e = p.ext[0];
        for _ in 0..(i - INLINE) / EXT {
            e = self.ext[e as usize].next;
        }
        let x = &self.ext[e as usize];
        let k = (i - INLINE) % EXT;
        (x.frames[k], x.offs[k], Some(e))
    }

    /// Takes `frame` out of block `s`'s page list: the last page moves into its place, and an
    /// extension record left empty is freed (a removal or a pinned eviction; rare).
    fn unlist(&mut self, s: u32, frame: FrameId) {
        let n = self.pages[s as usize].len as usize;
        let j = (0..n).find(|&i| self.place(s, i).0 == frame).expect("a buffered frame is listed under its block");
        let (f, o, _) = self.place(s, n - 1);
        match self.place(s, j).2 {
            None => {
                let p = &mut self.pages[s as usize];
                p.frames[j] = f;
                p.offs[j] = o;
            }
            Some(e) => {
                let x = &mut self.ext[e as usize];
                x.frames[(j - INLINE) % EXT] = f;
                x.offs[(j - INLINE) % EXT] = o;
            }
        }
        let n = n - 1;
        self.pages[s as usize].len = n as u32;
        if n >= INLINE && (n - INLINE).is_multiple_of(EXT) {
            // The last extension record held only the page that moved.
            let p = &mut self.pages[s as usize];
            let last = p.ext[1];
            if n == INLINE {
                p.ext = [NIL; 2];
            } else {
                let (_, _, prev) = self.place(s, n - 1);
                let prev = prev.expect("an extension place");
                self.ext[prev as usize].next = NIL;
                self.pages[s as usize].ext[1] = prev;
            }
            self.ext_free.push(last);
        }
    }

    /// Frees the extension records of block `s` (its pages are leaving with it).
    #[inline]
    fn free_ext(&mut self, s: u32) {
        let mut e = own_ref(&self.pages, s as usize).ext[0];
        while e != NIL {
            self.ext_free.push(e);
            e = own_ref(&self.ext, e as usize).next;
        }
    }

    /// Lists `frame` at place `INLINE + j` of the block whose page record is `p`, in its last
    /// extension record or a new one.
    #[inline(never)]
    fn extend(ext: &mut [BplruExt], free: &mut Vec<u32>, p: &mut BplruPages, j: usize, frame: FrameId, off: u8) {
        let k = j % EXT;
        if k == 0 {
            let e = free.pop().expect("extension records sized for every buffered page");
            own(ext, e).next = NIL;
            if j == 0 {
                p.ext[0] = e;
            } else {
                own(ext, p.ext[1]).next = e;
            }
            p.ext[1] = e;
        }
        let x = own(ext, p.ext[1]);
        x.frames[k] = frame;
        x.offs[k] = off;
    }

    /// The frame at place `INLINE + j` of the LRU block (page record `p`) for
    /// [`Replacer::likely_victim`], whose calls go through the places in order: each extension
    /// record was prefetched [`EXT`] calls before its first place, with the next one. Checked
    /// reads: a stale cursor may name any record.
    #[inline(always)]
    fn ext_frame(&self, p: &BplruPages, j: usize) -> Option<FrameId> {
        let k = j % EXT;
        let e = if k != 0 {
            self.cursor.get()
        } else {
            let e = if j == 0 { p.ext[0] } else { self.ext.get(self.cursor.get() as usize)?.next };
            self.cursor.set(e);
            if let Some(x) = self.ext.get(e as usize) {
                hint_line(&self.ext, x.next as usize);
            }
            e
        };
        let f = self.ext.get(e as usize)?.frames[k];
        (f != NIL).then_some(f)
    }

    fn drop_frame(&mut self, frame: FrameId) {
        let PageRec { slot: s, dirty, .. } = self.fr[frame as usize];
        self.unlist(s, frame);
        self.fr[frame as usize].slot = NIL;
        if dirty {
            self.list[s as usize].dirty_pages -= 1;
        }
        self.len -= 1;
        if self.pages[s as usize].len == 0 {
            let was_lru = self.lru.tail == s;
            unlink::<0, _, _>(&mut self.list, &mut self.lru, s);
            self.blocks.release(s);
            if was_lru {
                self.restart_cursor();
            }
        } else if self.lru.tail == s {
            // The LRU block's page list moved: name its pages from the start again.
            self.next.set(0);
        }
    }

    /// The victims of [`Replacer::victims`] when `ppb ≤ 64`: the unpinned pages of the LRU-most
    /// block that has one, appended to `out` in page order; that block's slot and whether one
    /// of its pages is pinned. The inline pages come with their offsets (no frame record read);
    /// the chained ones, rare, are walked. Their offsets are distinct and below 64, so a mask of
    /// them is the order.
    #[inline(always)]
    fn collect_by_offset<P: Pins + ?Sized>(
        &mut self,
        pins: &P,
        out: &mut Evictions,
    ) -> Result<(u32, bool), EvictError> {
        let (list, pages, ext) = (&self.list[..], &self.pages[..], &self.ext[..]);
        let mut by_offset = [0u32; 64];
        let mut offsets = 0u64;
        let mut s = self.lru.tail;
        let any_pinned = loop {
            if s == NIL {
                return Err(EvictError::AllPinned);
            }
            let mut pinned = false;
            each_listed(ext, own_ref(pages, s as usize), |f, o| {
                if pins.is_pinned(f) {
                    pinned = true;
                } else {
                    let o = o & 63;
                    by_offset[o as usize] = f;
                    offsets |= 1 << o;
                }
            });
            if offsets != 0 {
                break pinned;
            }
            s = own_ref(list, s as usize).lru[0];
        };
        while offsets != 0 {
            out.victims.push(by_offset[offsets.trailing_zeros() as usize]);
            offsets &= offsets - 1;
        }
        Ok((s, any_pinned))
    }

    /// [`Bplru::collect_by_offset`] for blocks of more than 64 pages: collected, then sorted.
    fn collect_sorted<P: Pins + ?Sized>(&mut self, pins: &P, out: &mut Evictions) -> Result<(u32, bool), EvictError> {
        let start = out.victims.len();
        let mut s = self.lru.tail;
        let any_pinned = loop {
            if s == NIL {
                return Err(EvictError::AllPinned);
            }
            let mut pinned = false;
            each_listed(&self.ext, own_ref(&self.pages, s as usize), |f, _| {
                if pins.is_pinned(f) {
                    pinned = true;
                } else {
                    out.victims.push(f);
                }
            });
            if out.victims.len() > start {
                break pinned;
            }
            s = self.list[s as usize].lru[0];
        };
        let fr = &self.fr;
        out.victims[start..].sort_unstable_by_key(|&f| fr[f as usize].page);
        Ok((s, any_pinned))
    }

    /// The frames and offsets of block `s` in list order, and its extension records (for
    /// checks).
    fn frames_of(&self, s: u32) -> Result<Listed, String> {
        let p = &self.pages[s as usize];
        let n = p.len as usize;
        let mut v: Vec<(u32, u8)> = p.inline().iter().copied().zip(p.offs).collect();
        let mut recs = Vec::new();
        let mut e = p.ext[0];
        while e != NIL {
            if recs.len() > self.ext.len() {
                return Err(format!("bplru: block slot {s}: extension records in a cycle"));
            }
            recs.push(e);
            let x = &self.ext[e as usize];
            let k = (n - v.len()).min(EXT);
            v.extend(x.frames[..k].iter().copied().zip(x.offs));
            e = x.next;
        }
        let want = n.saturating_sub(INLINE).div_ceil(EXT);
        if recs.len() != want || v.len() != n || recs.last().copied().unwrap_or(NIL) != p.ext[1] {
            return Err(format!(
                "bplru: block slot {s} lists {} of {n} pages in {} extension records ({want} wanted; last {:?})",
                v.len(),
                recs.len(),
                p.ext
            ));
        }
        Ok((v, recs))
    }

    /// Whether the block of `page` is in an unbroken sequential write run (for tests).
    pub fn sequential_so_far(&self, page: u64) -> bool {
        self.blocks.get(self.size.block(page)).is_some_and(|s| self.list[s as usize].seq_next != BROKEN)
    }

    /// The page of `frame` and the time of its last access (`None` when the frame holds no
    /// page): what a hand-over to another policy needs (`crate::fbx`), kept in the frame's
    /// record, which every access touches anyway.
    #[inline]
    pub fn frame_record(&self, frame: FrameId) -> Option<(u64, u64)> {
        let r = self.fr.get(frame as usize)?;
        (r.slot != NIL).then_some((r.page, r.time))
    }

    /// Blocks from LRU to MRU (for tests and reports).
    pub fn blocks_lru_to_mru(&self) -> Vec<u64> {
        let mut v = Vec::new();
        let mut s = self.lru.tail;
        while s != NIL {
            v.push(self.blocks.key(s));
            s = self.list[s as usize].lru[0];
        }
        v
    }
}

impl Replacer for Bplru {
    type Config = BplruConfig;

    fn new(capacity: usize, config: &BplruConfig) -> Self {
        Bplru {
            ppb: config.ppb.max(1) as u64,
            size: BlockSize::new(config.ppb.max(1) as u64),
            blocks: BlockTable::new(capacity),
            list: vec![BplruList { lru: [NIL; 2], dirty_pages: 0, seq_next: 0 }; capacity],
            pages: vec![BplruPages::EMPTY; capacity],
            ext: vec![BplruExt { frames: [NIL; EXT], offs: [0; EXT], next: NIL }; ext_records(capacity)],
            ext_free: (0..ext_records(capacity) as u32).rev().collect(),
            lru: Ends::EMPTY,
            fr: vec![PageRec::FREE; capacity],
            len: 0,
            next: Cell::new(0),
            cursor: Cell::new(NIL),
        }
    }

    #[inline(always)]
    fn prefetch_frame(&self, frame: FrameId) {
        crate::blocks::prefetch(&self.fr, frame as usize);
    }

    // Always inlined: the hit is most of a request's work, and an out-of-line call here also
    // stands behind FBX's dispatch on its leader.
    #[inline(always)]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        // The block's slot from the block table's direct map (4 bytes a block, in cache: 62 KB
        // for a million pages) rather than from the frame record, so that a read hit only
        // stores into the frame record (its access time) and never waits for its line: that
        // load was 12% of the loop's perf samples though the record is prefetched six requests
        // ahead. Both name the same slot (a buffered page's block is live).
        let s = match self.blocks.dense_slot(self.size.block(access.page)) {
            Some(s) => s,
            None => self.fr[frame as usize].slot,
        };
        debug_assert_eq!(s, self.fr[frame as usize].slot, "frame {frame} of page {} is not in slot {s}", access.page);
        self.fr[frame as usize].time = access.time;
        self.touch(frame, s, access);
    }

    #[inline(always)]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        let (s, created) = self.blocks.get_or_insert(self.size.block(access.page));
        let rec = PageRec { page: access.page, slot: s, time: access.time, ..PageRec::FREE };
        let off = self.off8(access.page);
        let f = frame as usize;
        // Over local slices (no reloads after the stores); `frame` comes from the host and is
        // checked by the first store, every other index is BPLRU's own.
        let (list, pages, lru) = (&mut self.list[..], &mut self.pages[..], &mut self.lru);
        self.fr[f] = rec;
        if created {
            // A new block: its only page, at the MRU end.
            let p = own(pages, s);
            p.frames[0] = frame;
            p.offs[0] = off;
            p.len = 1;
            p.ext = [NIL; 2];
            *own(list, s) = BplruList { lru: [NIL, lru.head], dirty_pages: 0, seq_next: 0 };
            attach_front::<0, _>(list, lru, s);
        } else {
            let p = own(pages, s);
            let n = p.len as usize;
            debug_assert_ne!(n, 0, "live block {s} holds no page");
            p.len += 1;
            if n < INLINE {
                p.frames[n] = frame;
                p.offs[n] = off;
            } else {
                Self::extend(&mut self.ext, &mut self.ext_free, p, n - INLINE, frame, off);
            }
        }
        self.len += 1;
        self.touch(frame, s, access);
    }

    #[inline(always)]
    fn prefetch(&self, page: u64) {
        if let Some(s) = self.blocks.dense_slot(self.size.block(page)) {
            hint_line(&self.list, s as usize);
            hint_line(&self.pages, s as usize);
        }
    }

    #[inline(always)]
    fn likely_victim(&self) -> Option<FrameId> {
        let t = self.lru.tail;
        if t == NIL {
            return None;
        }
        let p = own_ref(&self.pages, t as usize);
        let i = self.next.get() as usize;
        let n = p.len as usize;
        if i >= n {
            return None;
        }
        self.next.set(i as u32 + 1);
        let f = if i < INLINE {
            if i == 0 && n > INLINE {
                // The first extension record, needed about INLINE requests from now.
                hint_line(&self.ext, p.ext[0] as usize);
            }
            p.frames[i]
        } else {
            if i == INLINE {
                // Not prefetched above when the inline pages were prefetched at once.
                hint_line(&self.ext, p.ext[0] as usize);
            }
            self.ext_frame(p, i - INLINE)?
        };
        hint_line(&self.fr, f as usize);
        Some(f)
    }

    fn victims<P: Pins + ?Sized>(
        &mut self,
        _incoming: &Access,
        pins: &P,
        out: &mut Evictions,
    ) -> Result<(), EvictError> {
        if self.len == 0 {
            return Err(EvictError::Empty);
        }
        let start = out.victims.len();
        let (s, any_pinned) =
            if self.ppb <= 64 { self.collect_by_offset(pins, out)? } else { self.collect_sorted(pins, out)? };
        if !any_pinned && own(&mut self.list, s).dirty_pages > 0 {
            out.pad = Some(BlockPad { first_page: self.blocks.key(s) * self.ppb, pages: self.ppb as u32 });
        }
        if any_pinned {
            for i in start..out.victims.len() {
                self.drop_frame(out.victims[i]);
            }
        } else {
            // The whole block leaves: its pages and counts go with its slot (a new block starts
            // from a fresh record), so only the frames are marked free.
            let fr = &mut self.fr[..];
            for &f in &out.victims[start..] {
                own(fr, f).slot = NIL;
            }
            self.len -= out.victims.len() - start;
            self.free_ext(s);
            unlink::<0, _, _>(&mut self.list, &mut self.lru, s);
            self.blocks.release(s);
        }
        // The next victim block is most likely the new LRU block (its list record is in cache:
        // the unlink above wrote it). Its page record was prefetched an eviction ago, so the
        // lines its eviction will read or write for its inline pages (their frame records and
        // the host's entries) are asked for now, together, an eviction ahead; `likely_victim`
        // goes on from its first extension page.
        self.restart_cursor();
        let t = self.lru.tail;
        if t != NIL {
            let p = own_ref(&self.pages, t as usize);
            for &f in p.inline() {
                pins.prefetch_victim(f);
                hint_line(&self.fr, f as usize);
            }
            self.next.set(p.inline().len() as u32);
        }
        Ok(())
    }

    fn remove(&mut self, frame: FrameId) {
        if self.fr[frame as usize].slot != NIL {
            self.drop_frame(frame);
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn is_dirty(&self, frame: FrameId) -> Option<bool> {
        Some(self.fr[frame as usize].dirty)
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.blocks.check()?;
        let order = walk::<0, _>(&self.list, &self.lru)?;
        let mut total = 0usize;
        let mut live = 0usize;
        let mut ext_used = 0usize;
        for (block, s) in self.blocks.live() {
            live += 1;
            if !order.contains(&s) {
                return Err(format!("bplru: live block {block} is not in the LRU list"));
            }
            let b = self.list[s as usize];
            let (frames, recs) = self.frames_of(s)?;
            ext_used += recs.len();
            let mut d = 0u32;
            for &(f, o) in &frames {
                let r = self.fr[f as usize];
                if r.slot != s || r.page / self.ppb != block {
                    return Err(format!("bplru: frame {f} listed under block {block} but belongs elsewhere"));
                }
                if o != self.off8(r.page) {
                    return Err(format!("bplru: frame {f} of block {block} listed at offset {o}"));
                }
                d += r.dirty as u32;
            }
            if frames.is_empty() {
                return Err(format!("bplru: live block {block} holds no page"));
            }
            if d != b.dirty_pages {
                return Err(format!("bplru: block {block} counts {} dirty pages, {d} found", b.dirty_pages));
            }
            if b.seq_next != BROKEN && b.seq_next as u64 > self.ppb {
                return Err(format!("bplru: block {block} sequence offset {} beyond the block", b.seq_next));
            }
            total += frames.len();
        }
        if order.len() != live {
            return Err("bplru: LRU list and block table disagree".into());
        }
        if total != self.len {
            return Err(format!("bplru: {total} pages listed, len {}", self.len));
        }
        if ext_used + self.ext_free.len() != self.ext.len() {
            return Err(format!(
                "bplru: {ext_used} extension records in use and {} free of {}",
                self.ext_free.len(),
                self.ext.len()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replacer::AccessKind;
    use crate::testing::Harness;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, HashMap, HashSet};

    fn cfg(ppb: u32) -> BplruConfig {
        BplruConfig { ppb }
    }

    #[test]
    fn lru_block_is_padded_and_written_whole() {
        let mut h = Harness::<Bplru>::new(3, cfg(4));
        h.write(0);
        h.write(4);
        h.write(8);
        h.write(5); // Fig. 6: evicts B0 = {p0}, pads p1, p2, p3, writes p0..p3.
        assert_eq!(h.evicted_pages(), vec![0]);
        assert_eq!(h.padding_reads, vec![1, 2, 3]);
        assert_eq!(h.written, vec![0, 1, 2, 3]);
    }

    #[test]
    fn any_access_moves_the_block_and_clean_blocks_are_dropped_silently() {
        let mut h = Harness::<Bplru>::new(3, cfg(4));
        h.read(0);
        h.read(4);
        h.read(8);
        h.read(1); // hit? no: miss, but block 0 is LRU: evicted clean, no write, no padding
        assert_eq!(h.evicted_pages(), vec![0]);
        assert!(h.written.is_empty() && h.padding_reads.is_empty());
        h.read(4); // hit moves block 1 to the MRU end
        h.read(12); // LRU block is now block 2 (page 8)
        assert_eq!(h.evicted_pages(), vec![0, 8]);
    }

    #[test]
    fn lru_compensation_sends_a_sequentially_written_block_to_the_lru_end() {
        let mut h = Harness::<Bplru>::new(6, cfg(4));
        h.write(100); // block 25
        h.write(0);
        h.write(1);
        h.write(2);
        assert!(h.policy.sequential_so_far(0));
        h.write(3); // block 0 completed sequentially: LRU end, below block 25
        assert_eq!(h.policy.blocks_lru_to_mru(), vec![0, 25]);
        h.write(200);
        h.write(300); // full: block 0 (4 pages, all dirty) leaves first, no padding needed
        assert_eq!(h.evicted_pages(), vec![0, 1, 2, 3]);
        assert!(h.padding_reads.is_empty());
    }

    #[test]
    fn out_of_order_writes_break_the_sequence() {
        let mut h = Harness::<Bplru>::new(6, cfg(4));
        h.write(100);
        for p in [0, 2, 1, 3] {
            h.write(p);
        }
        assert!(!h.policy.sequential_so_far(0));
        assert_eq!(h.policy.blocks_lru_to_mru(), vec![25, 0]);
        // A read does not break a run: 8, 9 written, 10 read, then 10 and 11 written completes it.
        for p in [8, 9] {
            h.write(p);
        }
        h.read(10);
        assert!(h.policy.sequential_so_far(8));
        h.write(10);
        h.write(11);
        assert_eq!(h.policy.blocks_lru_to_mru()[0], 2);
    }

    /// BPLRU written from the papers with plain collections: blocks LRU first, pages with their
    /// dirty flags, sequence offsets; pins and removals as the module documents them.
    struct Model {
        ppb: u64,
        order: Vec<u64>,
        pages: BTreeMap<u64, bool>,
        seq: HashMap<u64, Option<u64>>,
    }

    impl Model {
        /// The victims (in page order) and the padding's first page, as `victims` names them.
        fn victims(&mut self, pinned: &HashSet<u64>) -> (Vec<u64>, Option<u64>) {
            for i in 0..self.order.len() {
                let b = self.order[i];
                let all: Vec<u64> = self.pages.range(b * self.ppb..(b + 1) * self.ppb).map(|(&p, _)| p).collect();
                let free: Vec<u64> = all.iter().copied().filter(|p| !pinned.contains(p)).collect();
                if free.is_empty() {
                    continue;
                }
                let whole = free.len() == all.len();
                let pad = (whole && free.iter().any(|p| self.pages[p])).then_some(b * self.ppb);
                for p in &free {
                    self.pages.remove(p);
                }
                if whole {
                    self.order.remove(i);
                    self.seq.remove(&b);
                }
                return (free, pad);
            }
            panic!("every page pinned");
        }

        fn touch(&mut self, page: u64, write: bool) {
            let b = page / self.ppb;
            *self.pages.entry(page).or_insert(false) |= write;
            self.order.retain(|&x| x != b);
            let seq = self.seq.entry(b).or_insert(Some(0));
            if write {
                *seq = match *seq {
                    Some(n) if n == page % self.ppb => Some(n + 1),
                    _ => None,
                };
            }
            if write && *seq == Some(self.ppb) {
                self.order.insert(0, b);
            } else {
                self.order.push(b);
            }
        }

        fn remove(&mut self, page: u64) {
            let b = page / self.ppb;
            self.pages.remove(&page);
            if self.pages.range(b * self.ppb..(b + 1) * self.ppb).next().is_none() {
                self.order.retain(|&x| x != b);
                self.seq.remove(&b);
            }
        }
    }

    /// Blocks wider than the inline page list (and beyond 64 pages, the sorted path), with
    /// pins and removals: the victims, their order and the padding equal the model's, and the
    /// invariants (inline list, chain, offsets, counts) hold after every step.
    fn against_model(cap: usize, ppb: u32, ops: &[(u64, u8)]) -> Result<(), TestCaseError> {
        let mut p = Bplru::new(cap, &cfg(ppb));
        let mut m = Model { ppb: ppb as u64, order: Vec::new(), pages: BTreeMap::new(), seq: HashMap::new() };
        let mut table: HashMap<u64, FrameId> = HashMap::new();
        let mut page_of = vec![u64::MAX; cap];
        let mut pins = vec![false; cap];
        let mut pinned: HashSet<u64> = HashSet::new();
        let mut free: Vec<FrameId> = (0..cap as FrameId).rev().collect();
        let mut ev = Evictions::default();
        for (t, &(page, op)) in ops.iter().enumerate() {
            let a = Access::new(page, if op == 1 { AccessKind::Write } else { AccessKind::Read }, t as u64);
            match op {
                0 | 1 => {
                    if let Some(&f) = table.get(&page) {
                        p.on_hit(f, &a);
                    } else {
                        if free.is_empty() {
                            ev.clear();
                            p.victims(&a, &pins[..], &mut ev).map_err(|e| TestCaseError::fail(e.to_string()))?;
                            let (want, pad) = m.victims(&pinned);
                            let got: Vec<u64> = ev.victims.iter().map(|&f| page_of[f as usize]).collect();
                            prop_assert_eq!(&got, &want, "victims at step {}", t);
                            prop_assert_eq!(ev.pad.map(|b| b.first_page), pad, "padding at step {}", t);
                            for &f in &ev.victims {
                                table.remove(&page_of[f as usize]);
                                free.push(f);
                            }
                        }
                        let f = free.pop().unwrap();
                        table.insert(page, f);
                        page_of[f as usize] = page;
                        p.on_insert(f, &a);
                    }
                    m.touch(page, op == 1);
                }
                2 => {
                    // Pin or unpin a buffered page, leaving at least two frames unpinned.
                    if let Some(&f) = table.get(&page) {
                        if pins[f as usize] {
                            pins[f as usize] = false;
                            pinned.remove(&page);
                        } else if pinned.len() + 2 < cap {
                            pins[f as usize] = true;
                            pinned.insert(page);
                        }
                    }
                }
                _ => {
                    if let Some(f) = table.remove(&page) {
                        p.remove(f);
                        m.remove(page);
                        pins[f as usize] = false;
                        pinned.remove(&page);
                        free.push(f);
                    }
                }
            }
            p.check_invariants().map_err(|e| TestCaseError::fail(format!("step {t}: {e}")))?;
            prop_assert_eq!(p.len(), table.len());
            for (&pg, &f) in &table {
                prop_assert_eq!(p.is_dirty(f), Some(m.pages[&pg]));
            }
        }
        Ok(())
    }

    /// Runs over `pages` pages: single accesses, whole-block sequential write runs, pins,
    /// removals.
    fn ops(pages: u64, ppb: u64) -> impl Strategy<Value = Vec<(u64, u8)>> {
        proptest::collection::vec(
            prop_oneof![
                8 => (0..pages, 0u8..2).prop_map(|x| vec![x]),
                1 => (0..pages, 2u8..4).prop_map(|x| vec![x]),
                1 => (0..pages / ppb).prop_map(move |b| (b * ppb..(b + 1) * ppb).map(|p| (p, 1)).collect()),
            ],
            1..300,
        )
        .prop_map(|v| v.into_iter().flatten().collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        #[test]
        fn matches_the_model_with_blocks_wider_than_the_inline_list(
            (cap, ppb, ops) in prop_oneof![Just(2u32), Just(5), Just(8), Just(9), Just(12), Just(16), Just(64), Just(100)]
                .prop_flat_map(|ppb| {
                    let pages = 4 * ppb as u64;
                    (3usize..(2 * ppb as usize).max(6), Just(ppb), ops(pages, ppb as u64))
                }),
        ) {
            against_model(cap, ppb, &ops)?;
        }
    }

    #[test]
    fn pinned_page_prevents_padding() {
        let mut h = Harness::<Bplru>::new(3, cfg(4));
        h.write(0);
        h.write(1);
        h.write(8);
        h.pin(h.frame_of(1).unwrap());
        h.write(12); // block 0 is LRU: p0 leaves alone, written without padding
        assert_eq!(h.evicted_pages(), vec![0]);
        assert!(h.padding_reads.is_empty());
        assert_eq!(h.written, vec![0]);
    }
}
