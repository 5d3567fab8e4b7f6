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
//! State: an LRU list of blocks; one record per block (its page list, LRU links, dirty count,
//! sequence offset) and one per frame. Hits and insertions are O(1) (plus one table lookup per
//! insertion); a block eviction is O(ppb log ppb).

use std::cell::Cell;

use crate::blocks::{
    BlockSize, BlockTable, Ends, Linked, PPB_DOC, PageRec, attach_front, link_back, move_to_front, parse_ppb, unlink,
    walk,
};
use crate::params::{ParamDoc, PolicyParams};
use crate::recs::own;
use crate::replacer::{Access, BlockPad, EvictError, Evictions, FrameId, NIL, Pins, Replacer};

/// Sequence offset of a block whose writes were not sequential.
const BROKEN: u32 = u32::MAX;

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

/// Per-block state of BPLRU, one cache line.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
struct BplruBlock {
    pages: Ends,
    /// Links in the block LRU list (`[towards MRU, towards LRU]`).
    lru: [u32; 2],
    /// Dirty buffered pages.
    dirty_pages: u32,
    /// Next expected offset of a sequential write run, or [`BROKEN`].
    seq_next: u32,
}

impl Linked<0> for BplruBlock {
    #[inline]
    fn links(&self) -> [u32; 2] {
        self.lru
    }
    #[inline]
    fn links_mut(&mut self) -> &mut [u32; 2] {
        &mut self.lru
    }
}

/// The BPLRU policy.
#[derive(Clone, Debug)]
pub struct Bplru {
    ppb: u64,
    size: BlockSize,
    blocks: BlockTable,
    blk: Vec<BplruBlock>,
    /// Block slots in LRU order (front = MRU).
    lru: Ends,
    fr: Vec<PageRec>,
    len: usize,
    /// A frame of the LRU block's page list: [`Replacer::likely_victim`] (asked once per
    /// request) names it and moves it one page along the list, prefetching the next record, so
    /// that by the time the block is evicted its chain of frame records — a dependent pointer
    /// chase, the largest cost of an eviction — is in cache. Reset to the list's first page
    /// whenever the LRU block changes; a hint only, never trusted by a decision (a stale cursor
    /// only prefetches the wrong lines).
    cursor: Cell<u32>,
    /// Whether the cursor waits this call: it moves every other call, so that each record it
    /// reads was prefetched two requests earlier (one request, about 40 ns, is less than a
    /// memory access: reading the record one request after its prefetch stalled the loop).
    wait: Cell<bool>,
}

impl Bplru {
    /// Records an access to `frame` of block `slot` and moves the block.
    #[inline(always)]
    fn touch(&mut self, frame: FrameId, slot: u32, access: &Access) {
        if access.kind.is_write() && self.note_write(frame, slot, access) {
            // LRU compensation: a fully, sequentially written block goes to the LRU end.
            self.move_to_lru_end(slot);
        } else if move_to_front::<0, _>(&mut self.blk, &mut self.lru, slot) {
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
        let b = own(&mut self.blk, slot);
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
            unlink::<0, _, _>(&mut self.blk, &mut self.lru, slot);
            link_back::<0, _, _>(&mut self.blk, &mut self.lru, slot);
        }
    }

    /// Points the cursor at the first page of the LRU block, and prefetches what evicting that
    /// block reads besides its pages, about an eviction ahead: its block number (releasing its
    /// slot reads it first) and the record of the block behind it (the unlink writes it, and
    /// it is the next LRU block).
    #[inline]
    fn restart_cursor(&self) {
        let t = self.lru.tail;
        let head = if t == NIL {
            NIL
        } else {
            let b = &self.blk[t as usize];
            self.blocks.prefetch_key(t);
            crate::blocks::prefetch(&self.blk, b.lru[0] as usize);
            b.pages.head
        };
        self.cursor.set(head);
        self.wait.set(true);
        crate::blocks::prefetch(&self.fr, head as usize);
    }

    fn drop_frame(&mut self, frame: FrameId) {
        let PageRec { slot: s, dirty, .. } = self.fr[frame as usize];
        unlink::<0, _, _>(&mut self.fr, &mut self.blk[s as usize].pages, frame);
        self.fr[frame as usize].slot = NIL;
        if dirty {
            self.blk[s as usize].dirty_pages -= 1;
        }
        self.len -= 1;
        if self.blk[s as usize].pages.len == 0 {
            let was_lru = self.lru.tail == s;
            unlink::<0, _, _>(&mut self.blk, &mut self.lru, s);
            self.blocks.release(s);
            if was_lru {
                self.restart_cursor();
            }
        }
    }

    /// The victims of [`Replacer::victims`] when `ppb ≤ 64`: the unpinned pages of the LRU-most
    /// block that has one, appended to `out` in page order; that block's slot and whether one
    /// of its pages is pinned. One walk over each candidate block's page list (a dependent
    /// chain of frame records) also orders the pages: their offsets are distinct and below 64,
    /// so a mask of them is the order.
    #[inline(always)]
    fn collect_by_offset<P: Pins + ?Sized>(
        &mut self,
        pins: &P,
        out: &mut Evictions,
    ) -> Result<(u32, bool), EvictError> {
        let size = self.size;
        let (blk, fr) = (&mut self.blk[..], &mut self.fr[..]);
        let mut by_offset = [0u32; 64];
        let mut offsets = 0u64;
        let mut s = self.lru.tail;
        let any_pinned = loop {
            if s == NIL {
                return Err(EvictError::AllPinned);
            }
            let mut pinned = false;
            let mut f = own(blk, s).pages.head;
            while f != NIL {
                let r = own(fr, f);
                if pins.is_pinned(f) {
                    pinned = true;
                } else {
                    let o = size.offset(r.page);
                    by_offset[o as usize] = f;
                    offsets |= 1 << o;
                }
                f = r.links[1];
            }
            if offsets != 0 {
                break pinned;
            }
            s = own(blk, s).lru[0];
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
            let mut f = self.blk[s as usize].pages.head;
            while f != NIL {
                if pins.is_pinned(f) {
                    pinned = true;
                } else {
                    out.victims.push(f);
                }
                f = self.fr[f as usize].links[1];
            }
            if out.victims.len() > start {
                break pinned;
            }
            s = self.blk[s as usize].lru[0];
        };
        let fr = &self.fr;
        out.victims[start..].sort_unstable_by_key(|&f| fr[f as usize].page);
        Ok((s, any_pinned))
    }

    /// Whether the block of `page` is in an unbroken sequential write run (for tests).
    pub fn sequential_so_far(&self, page: u64) -> bool {
        self.blocks.get(self.size.block(page)).is_some_and(|s| self.blk[s as usize].seq_next != BROKEN)
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
            s = self.blk[s as usize].lru[0];
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
            blk: vec![BplruBlock { pages: Ends::EMPTY, lru: [NIL; 2], dirty_pages: 0, seq_next: 0 }; capacity],
            lru: Ends::EMPTY,
            fr: vec![PageRec::FREE; capacity],
            len: 0,
            cursor: Cell::new(NIL),
            wait: Cell::new(false),
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
        let r = &mut self.fr[frame as usize];
        r.time = access.time;
        let s = r.slot;
        self.touch(frame, s, access);
    }

    #[inline(always)]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        let (s, created) = self.blocks.get_or_insert(self.size.block(access.page));
        let rec = PageRec { page: access.page, slot: s, time: access.time, ..PageRec::FREE };
        let f = frame as usize;
        // Over local slices (no reloads after the stores); `frame` comes from the host and is
        // checked by the first store, every other index is BPLRU's own.
        let (blk, fr, lru) = (&mut self.blk[..], &mut self.fr[..], &mut self.lru);
        if created {
            // A new block: its only page, at the MRU end.
            let h = lru.head;
            *own(blk, s) = BplruBlock {
                pages: Ends { head: frame, tail: frame, len: 1 },
                lru: [NIL, h],
                dirty_pages: 0,
                seq_next: 0,
            };
            attach_front::<0, _>(blk, lru, s);
            fr[f] = rec;
        } else {
            // Behind the block's last page (a live block holds at least one).
            let pages = &mut own(blk, s).pages;
            let t = pages.tail;
            debug_assert_ne!(t, NIL, "live block {s} holds no page");
            pages.tail = frame;
            pages.len += 1;
            fr[f] = PageRec { links: [t, NIL], ..rec };
            own(fr, t).links[1] = frame;
        }
        self.len += 1;
        self.touch(frame, s, access);
    }

    #[inline(always)]
    fn prefetch(&self, page: u64) {
        self.blocks.prefetch_record(self.size.block(page), &self.blk);
    }

    #[inline(always)]
    fn likely_victim(&self) -> Option<FrameId> {
        let c = self.cursor.get();
        if self.wait.replace(false) {
            return (c != NIL).then_some(c);
        }
        self.wait.set(true);
        let next = self.fr.get(c as usize)?.links[1];
        if next == NIL {
            return Some(c);
        }
        crate::blocks::prefetch(&self.fr, next as usize);
        self.cursor.set(next);
        Some(next)
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
        if !any_pinned && own(&mut self.blk, s).dirty_pages > 0 {
            out.pad = Some(BlockPad { first_page: self.blocks.key(s) * self.ppb, pages: self.ppb as u32 });
        }
        if any_pinned {
            for i in start..out.victims.len() {
                self.drop_frame(out.victims[i]);
            }
        } else {
            // The whole block leaves: its page list and counts go with its slot (a new block
            // starts from a fresh record), so only the frames are marked free.
            let fr = &mut self.fr[..];
            for &f in &out.victims[start..] {
                own(fr, f).slot = NIL;
            }
            self.len -= out.victims.len() - start;
            unlink::<0, _, _>(&mut self.blk, &mut self.lru, s);
            self.blocks.release(s);
        }
        // The next victim block is most likely the new LRU block (its record is in cache: the
        // unlink above wrote it); its page list is a chain from the first page's record.
        self.restart_cursor();
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
        let order = walk::<0, _>(&self.blk, &self.lru)?;
        let mut total = 0usize;
        let mut live = 0usize;
        for (block, s) in self.blocks.live() {
            live += 1;
            if !order.contains(&s) {
                return Err(format!("bplru: live block {block} is not in the LRU list"));
            }
            let b = self.blk[s as usize];
            let pages = walk::<0, _>(&self.fr, &b.pages)?;
            let mut d = 0u32;
            for &f in &pages {
                let r = self.fr[f as usize];
                if r.slot != s || r.page / self.ppb != block {
                    return Err(format!("bplru: frame {f} chained under block {block} but belongs elsewhere"));
                }
                d += r.dirty as u32;
            }
            if pages.is_empty() {
                return Err(format!("bplru: live block {block} holds no page"));
            }
            if d != b.dirty_pages {
                return Err(format!("bplru: block {block} counts {} dirty pages, {d} found", b.dirty_pages));
            }
            if b.seq_next != BROKEN && b.seq_next as u64 > self.ppb {
                return Err(format!("bplru: block {block} sequence offset {} beyond the block", b.seq_next));
            }
            total += pages.len();
        }
        if order.len() != live {
            return Err("bplru: LRU list and block table disagree".into());
        }
        if total != self.len {
            return Err(format!("bplru: {total} pages chained, len {}", self.len));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Harness;

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
