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
//! State: an LRU list of blocks; one record per block (LRU links, the offsets of its buffered
//! pages as a 64-bit mask, page and dirty counts, sequence offset), a frame table per block slot
//! (the frame holding each page offset) and one 16-byte record per frame. Hits and insertions
//! are O(1) (plus one table lookup per insertion). A block eviction reads the victim block's
//! record and frame table only: the mask's bits, lowest first, are the victims in page order,
//! and every victim's frame comes from the table, independently of the others (a linked page
//! list made the eviction a chain of dependent cache misses, walked one frame record at a time).
//!
//! Memory: the frame tables take `4 × ppb` bytes per block slot, reserved for `capacity` slots
//! but zero-initialised, so the operating system backs only the slots in use at once (slots are
//! handed out lowest first): at most `4 × ppb × min(capacity, blocks buffered at once)` bytes.
//! With `ppb > 64` the mask cannot hold the offsets; the eviction then scans the table.

use crate::blocks::{BlockSize, BlockTable, Ends, Linked, PPB_DOC, link_back, link_front, parse_ppb, unlink, walk};
use crate::params::{ParamDoc, PolicyParams};
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

/// Per-frame state of BPLRU: four records to a cache line (the hit path reads one).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(16))]
struct Frame {
    /// The time of the frame's last access, for a hand-over to another policy (`crate::fbx`).
    time: u64,
    /// Block slot of the frame's last insertion, or NIL when it never held a page. The frame is
    /// tracked only while that slot still files it ([`Bplru::tracks`]): an eviction does not
    /// write the records of its victims.
    slot: u32,
    /// Offset of the frame's page in its block (below [`crate::blocks::MAX_PPB`]).
    offset: u16,
    dirty: bool,
}

impl Frame {
    const FREE: Frame = Frame { time: 0, slot: NIL, offset: 0, dirty: false };
}

const _: () = assert!(std::mem::size_of::<Frame>() == 16);
const _: () = assert!(crate::blocks::MAX_PPB <= 1 << 16);

/// Per-block state of BPLRU, half a cache line.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
struct BplruBlock {
    /// Bit `o`: the page at offset `o` is buffered (kept only when `ppb ≤ 64`; 0 in a free slot).
    resident: u64,
    /// Links in the block LRU list (`[towards MRU, towards LRU]`).
    lru: [u32; 2],
    /// Buffered pages.
    pages: u32,
    /// Dirty buffered pages.
    dirty_pages: u32,
    /// Next expected offset of a sequential write run, or [`BROKEN`].
    seq_next: u32,
}

impl BplruBlock {
    const FRESH: BplruBlock = BplruBlock { resident: 0, lru: [NIL; 2], pages: 0, dirty_pages: 0, seq_next: 0 };
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
    /// `ppb > 64`: offsets do not fit the block's mask; the frame table is kept zero where no
    /// page is buffered and scanned instead.
    wide: bool,
    blocks: BlockTable,
    blk: Vec<BplruBlock>,
    /// Block slots in LRU order (front = MRU).
    lru: Ends,
    /// Frame table of each block slot: entry `slot × ppb + offset` is the frame holding that page
    /// plus one. With `ppb ≤ 64` an entry means something only where the block's mask has its
    /// bit (an eviction leaves the entries as they are); otherwise 0 means no page.
    offs: Vec<u32>,
    fr: Vec<Frame>,
    len: usize,
}

impl Bplru {
    /// Records an access to `frame` of block `slot` and moves the block.
    #[inline(always)]
    fn touch(&mut self, frame: FrameId, slot: u32, access: &Access) {
        let b = &mut self.blk[slot as usize];
        let mut to_lru_end = false;
        if access.kind.is_write() {
            let fr = &mut self.fr[frame as usize];
            if !fr.dirty {
                fr.dirty = true;
                b.dirty_pages += 1;
            }
            let offset = self.size.offset(access.page) as u32;
            b.seq_next = if b.seq_next == offset { offset + 1 } else { BROKEN };
            // LRU compensation: a fully, sequentially written block goes to the LRU end.
            to_lru_end = b.seq_next as u64 == self.ppb;
        }
        if to_lru_end {
            if self.lru.tail != slot {
                unlink::<0, _, _>(&mut self.blk, &mut self.lru, slot);
                link_back::<0, _, _>(&mut self.blk, &mut self.lru, slot);
                self.prefetch_next_victim();
            }
        } else if self.lru.head != slot {
            let was_lru = self.lru.tail == slot;
            unlink::<0, _, _>(&mut self.blk, &mut self.lru, slot);
            link_front::<0, _, _>(&mut self.blk, &mut self.lru, slot);
            if was_lru {
                // The next victim block changed (its record was written by the unlink).
                self.prefetch_next_victim();
            }
        }
    }

    /// Brings what the coming eviction of the LRU block reads into cache, all at once: the lines
    /// of its frame table that hold its pages, its block number (which releasing the slot
    /// reads) and the record of the block after it (the next LRU block once this one leaves).
    #[inline]
    fn prefetch_next_victim(&self) {
        let t = self.lru.tail;
        if t == NIL {
            return;
        }
        let b = &self.blk[t as usize];
        self.blocks.prefetch_key(t);
        crate::blocks::prefetch(&self.blk, b.lru[0] as usize);
        let m = b.resident;
        if m != 0 {
            let base = t as usize * self.ppb as usize;
            // One prefetch per 16 entries (a cache line) from the first page to the last.
            let (first, last) = (m.trailing_zeros() as usize & !15, 63 - m.leading_zeros() as usize);
            for o in (first..=last).step_by(16) {
                crate::blocks::prefetch(&self.offs, base + o);
            }
        }
    }

    /// Frame-table entry of offset `offset` in block slot `slot`.
    #[inline(always)]
    fn entry(&self, slot: u32, offset: u64) -> usize {
        slot as usize * self.ppb as usize + offset as usize
    }

    /// `true` while `frame` holds a page: its record names the slot and offset of its last
    /// insertion, and that slot still files it there (an entry names a frame only from its
    /// insertion to its eviction or removal; an entry left behind by an eviction is beyond the
    /// reused slot's mask, or names the frame only if it was inserted there again, which
    /// rewrote its record).
    #[inline]
    fn tracks(&self, frame: FrameId) -> bool {
        let Some(&r) = self.fr.get(frame as usize) else { return false };
        r.slot != NIL
            && self.offs[self.entry(r.slot, u64::from(r.offset))] == frame + 1
            && (self.wide || self.blk[r.slot as usize].resident >> r.offset & 1 != 0)
    }

    /// Stops tracking `frame` (tracked), releasing its block when it was the last page.
    fn drop_frame(&mut self, frame: FrameId) {
        let Frame { slot: s, offset, dirty, .. } = self.fr[frame as usize];
        let e = self.entry(s, u64::from(offset));
        self.offs[e] = 0;
        self.fr[frame as usize].slot = NIL;
        let b = &mut self.blk[s as usize];
        if !self.wide {
            b.resident &= !(1 << offset);
        }
        b.dirty_pages -= u32::from(dirty);
        b.pages -= 1;
        self.len -= 1;
        if b.pages == 0 {
            let was_lru = self.lru.tail == s;
            unlink::<0, _, _>(&mut self.blk, &mut self.lru, s);
            self.blocks.release(s);
            if was_lru {
                self.prefetch_next_victim();
            }
        }
    }

    /// Pushes the unpinned frames of block `slot` onto `out`, in page order; returns whether it
    /// holds a pinned one.
    #[inline]
    fn collect<P: Pins + ?Sized>(&self, slot: u32, pins: &P, out: &mut Evictions) -> bool {
        let mut pinned = false;
        let base = self.entry(slot, 0);
        let mut take = |e: u32| {
            let f = e - 1;
            if pins.is_pinned(f) {
                pinned = true;
            } else {
                out.victims.push(f);
            }
        };
        if !self.wide {
            let mut m = self.blk[slot as usize].resident;
            while m != 0 {
                take(self.offs[base + m.trailing_zeros() as usize]);
                m &= m - 1;
            }
        } else {
            let mut left = self.blk[slot as usize].pages;
            for &e in &self.offs[base..base + self.ppb as usize] {
                if e != 0 {
                    take(e);
                    left -= 1;
                    if left == 0 {
                        break;
                    }
                }
            }
        }
        pinned
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
        self.tracks(frame).then(|| (self.blocks.key(r.slot) * self.ppb + u64::from(r.offset), r.time))
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
        let ppb = config.ppb.max(1) as u64;
        Bplru {
            ppb,
            size: BlockSize::new(ppb),
            wide: ppb > 64,
            blocks: BlockTable::new(capacity),
            blk: vec![BplruBlock::FRESH; capacity],
            lru: Ends::EMPTY,
            // Zero-initialised: pages of the reservation never used are never backed.
            offs: vec![0; capacity * ppb as usize],
            fr: vec![Frame::FREE; capacity],
            len: 0,
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
        if created {
            self.blk[s as usize] = BplruBlock::FRESH;
            link_front::<0, _, _>(&mut self.blk, &mut self.lru, s);
        }
        let offset = self.size.offset(access.page);
        self.fr[frame as usize] = Frame { time: access.time, slot: s, offset: offset as u16, dirty: false };
        let e = self.entry(s, offset);
        self.offs[e] = frame + 1;
        let b = &mut self.blk[s as usize];
        if !self.wide {
            b.resident |= 1 << offset;
        }
        b.pages += 1;
        self.len += 1;
        self.touch(frame, s, access);
    }

    #[inline(always)]
    fn prefetch(&self, page: u64) {
        self.blocks.prefetch_record(self.size.block(page), &self.blk);
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
        let mut s = self.lru.tail;
        let any_pinned = loop {
            if s == NIL {
                return Err(EvictError::AllPinned);
            }
            let pinned = self.collect(s, pins, out);
            if out.victims.len() > start {
                break pinned;
            }
            s = self.blk[s as usize].lru[0];
        };
        if !any_pinned && self.blk[s as usize].dirty_pages > 0 {
            out.pad = Some(BlockPad { first_page: self.blocks.key(s) * self.ppb, pages: self.ppb as u32 });
        }
        if any_pinned {
            for i in start..out.victims.len() {
                self.drop_frame(out.victims[i]);
            }
        } else {
            // The whole block leaves. Its victims' records are not written (`tracks`); they are
            // brought into cache for the next insertions, which reuse these frames first, and
            // so are the host's entries of the victims, which it reads next (all at once: their
            // frames come from the table, not from one another).
            for &f in &out.victims[start..] {
                crate::blocks::prefetch(&self.fr, f as usize);
                pins.prefetch_victim(f);
            }
            if self.wide {
                let base = self.entry(s, 0);
                self.offs[base..base + self.ppb as usize].fill(0);
            }
            self.len -= out.victims.len() - start;
            self.blk[s as usize].resident = 0;
            unlink::<0, _, _>(&mut self.blk, &mut self.lru, s);
            self.blocks.release(s);
        }
        // The next victim block is most likely the new LRU block (its record was prefetched
        // when this block became the LRU one). BPLRU names no `likely_victim`: a per-request
        // step through the LRU block stalled on the line it had just prefetched.
        self.prefetch_next_victim();
        Ok(())
    }

    fn remove(&mut self, frame: FrameId) {
        if self.tracks(frame) {
            self.drop_frame(frame);
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn is_dirty(&self, frame: FrameId) -> Option<bool> {
        Some(self.tracks(frame) && self.fr[frame as usize].dirty)
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.blocks.check()?;
        let order = walk::<0, _>(&self.blk, &self.lru)?;
        let mut total = 0usize;
        let mut live = 0usize;
        let mut filed = vec![false; self.fr.len()];
        for (block, s) in self.blocks.live() {
            live += 1;
            if !order.contains(&s) {
                return Err(format!("bplru: live block {block} is not in the LRU list"));
            }
            let b = self.blk[s as usize];
            let (mut pages, mut d, mut mask) = (0u32, 0u32, 0u64);
            for o in 0..self.ppb {
                let e = self.offs[self.entry(s, o)];
                if e == 0 || (!self.wide && b.resident >> o & 1 == 0) {
                    continue;
                }
                let f = e - 1;
                let r = self.fr.get(f as usize).ok_or(format!("bplru: block {block} files frame {f}"))?;
                if r.slot != s || u64::from(r.offset) != o {
                    return Err(format!("bplru: frame {f} filed under block {block} offset {o} but belongs elsewhere"));
                }
                if std::mem::replace(&mut filed[f as usize], true) {
                    return Err(format!("bplru: frame {f} filed twice"));
                }
                pages += 1;
                d += r.dirty as u32;
                mask |= 1u64.checked_shl(o as u32).unwrap_or(0);
            }
            if !self.wide && mask != b.resident {
                return Err(format!("bplru: block {block} mask {:#x}, entries for {mask:#x}", b.resident));
            }
            if pages == 0 || pages != b.pages {
                return Err(format!("bplru: block {block} counts {} pages, {pages} filed", b.pages));
            }
            if d != b.dirty_pages {
                return Err(format!("bplru: block {block} counts {} dirty pages, {d} found", b.dirty_pages));
            }
            if b.seq_next != BROKEN && b.seq_next as u64 > self.ppb {
                return Err(format!("bplru: block {block} sequence offset {} beyond the block", b.seq_next));
            }
            total += pages as usize;
        }
        for s in 0..self.blk.len() as u32 {
            if self.blocks.is_live(s) {
                continue;
            }
            let clear = if self.wide {
                self.offs[self.entry(s, 0)..self.entry(s + 1, 0)].iter().all(|&e| e == 0)
            } else {
                self.blk[s as usize].resident == 0
            };
            if !clear {
                return Err(format!("bplru: free block slot {s} still files pages"));
            }
        }
        for f in 0..self.fr.len() as FrameId {
            if self.tracks(f) != filed[f as usize] {
                return Err(format!("bplru: frame {f} tracked {} but filed {}", self.tracks(f), filed[f as usize]));
            }
        }
        if order.len() != live {
            return Err("bplru: LRU list and block table disagree".into());
        }
        if total != self.len {
            return Err(format!("bplru: {total} pages filed, len {}", self.len));
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

    /// BPLRU as the papers describe it, over plain collections: blocks in LRU order (front =
    /// LRU), buffered pages with their dirty flags, the sequence offset of each buffered block.
    struct Model {
        cap: usize,
        ppb: u64,
        order: Vec<u64>,
        pages: std::collections::BTreeMap<u64, bool>,
        seq: std::collections::HashMap<u64, Option<u64>>,
        evicted: Vec<(u64, bool)>,
        padding_reads: Vec<u64>,
        written: Vec<u64>,
    }

    impl Model {
        fn access(&mut self, page: u64, write: bool) -> bool {
            let hit = self.pages.contains_key(&page);
            if !hit && self.pages.len() == self.cap {
                let victim = self.order.remove(0);
                let range = victim * self.ppb..(victim + 1) * self.ppb;
                let held: Vec<(u64, bool)> = self.pages.range(range.clone()).map(|(&p, &d)| (p, d)).collect();
                if held.iter().any(|&(_, d)| d) {
                    self.padding_reads.extend(range.clone().filter(|p| !self.pages.contains_key(p)));
                    self.written.extend(range);
                }
                for &(p, d) in &held {
                    self.pages.remove(&p);
                    self.evicted.push((p, d));
                }
                self.seq.remove(&victim);
            }
            let block = page / self.ppb;
            *self.pages.entry(page).or_insert(false) |= write;
            self.order.retain(|&b| b != block);
            let seq = self.seq.entry(block).or_insert(Some(0));
            let mut to_lru_end = false;
            if write {
                *seq = match *seq {
                    Some(n) if n == page % self.ppb => Some(n + 1),
                    _ => None,
                };
                to_lru_end = *seq == Some(self.ppb);
            }
            if to_lru_end {
                self.order.insert(0, block);
            } else {
                self.order.push(block);
            }
            hit
        }
    }

    proptest::proptest! {
        /// Around the mask's width (`ppb` up to 64: a mask orders the victims; beyond: the frame
        /// table is scanned), BPLRU evicts, pads and writes exactly as the model does, with
        /// blocks written whole in order now and then (LRU compensation).
        #[test]
        fn matches_the_model_around_64_pages_per_block(
            cap in 1usize..200,
            ppb in proptest::sample::select(vec![2u32, 63, 64, 65, 128]),
            ops in proptest::collection::vec((0u64..8, 0u64..4096, 0u8..8), 1..400),
        ) {
            let mut h = Harness::<Bplru>::new(cap, cfg(ppb));
            let ppb = u64::from(ppb);
            let mut m = Model {
                cap, ppb, order: Vec::new(), pages: Default::default(), seq: Default::default(),
                evicted: Vec::new(), padding_reads: Vec::new(), written: Vec::new(),
            };
            for (block, off, kind) in ops {
                // Offsets near the block's ends are the ones a mask could get wrong.
                let off = [0, ppb - 1, ppb / 2, off % ppb][usize::from(kind % 4)];
                let pages: Vec<(u64, bool)> = if kind == 7 {
                    (0..ppb).map(|o| (block * ppb + o, true)).collect()
                } else {
                    vec![(block * ppb + off, kind >= 4)]
                };
                for (p, write) in pages {
                    let hit = if write { h.write(p) } else { h.read(p) };
                    proptest::prop_assert_eq!(hit, m.access(p, write), "page {}", p);
                }
            }
            let got: Vec<(u64, bool)> = h.evicted.iter().map(|e| (e.page, e.dirty)).collect();
            proptest::prop_assert_eq!(got, m.evicted);
            proptest::prop_assert_eq!(&h.padding_reads, &m.padding_reads);
            proptest::prop_assert_eq!(&h.written, &m.written);
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
