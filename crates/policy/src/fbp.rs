//! FBP — flashbuf's own policy: a clean list and a dirty list whose balance follows the
//! *cost* of the evictions it regrets, a second chance for pages hit again, and write-back by
//! block on the FTLs that reward it.
//!
//! Source: no single paper; it combines what the four papers' policies and the comparison
//! matrix (`docs/comparison.md`) show, and `docs/policy-fbp.md` explains the design.
//! * From CASA (Ou & Härder 2010) and CFLRU: the buffer is a clean LRU list and a dirty LRU list,
//!   and a target size τ of the clean list decides which one gives up a page.
//! * From ARC (Megiddo & Modha 2003): τ adapts on *ghost* hits — a miss on a page recently
//!   evicted from one list is evidence that that list was too small — rather than on CASA's
//!   buffer hits, which say which pages are hot but not which evictions were mistakes. The step
//!   is ARC's, `max(1, |other ghost| / |this ghost|)`, weighted by what the mistake cost on this
//!   device: a page evicted clean and missed again cost one read, `r`; a page evicted dirty and
//!   missed again cost a read, plus, when the miss is a write, the write-back that keeping it
//!   dirty would have merged with this one, `w`. So a clean-ghost miss raises τ by the step and
//!   a dirty-ghost miss lowers it by the step times `(r + [write]·w) / r`: the lists settle where
//!   a frame saves as much device time in either, the balance the offline write-aware bound
//!   strikes with the future in hand, with no window or floor to tune.
//! * From LRU-WSR and AD-LRU: a page hit since it entered its list (or since it was last passed
//!   over) gets a second chance — it moves to the MRU end once instead of being evicted — in
//!   both lists, the frequency protection that makes AD-LRU strong on skewed workloads.
//! * From CFDC, FAB, BPLRU and BP-REF: on a flash FTL, pages of one block written together are
//!   cheaper than the same pages written apart (a log-block FTL merges a block's pages at once;
//!   a page-mapped FTL places them in one physical block, which its garbage collector then
//!   finds invalidated together). So a dirty victim `v` takes with it the *cold* dirty pages of
//!   its block, in page order — those last accessed at or before `t − (t − t_v)/2`, `t` the time
//!   of the miss and `t_v` that of `v`'s last access (pages accessed in the second half of `v`'s
//!   idle time are still warm). On log-block FTLs the block is instead written *whole*, padded
//!   (every buffered page of it leaves, the missing ones are read), when that costs no more
//!   than the merges it saves, priced with the chip's latencies: `d` dirty pages of a block
//!   written alone cost at least `d·p + (ppb − d)·(r + p) + e` when they are the block's only
//!   pages in the log at its merge (a partial merge copies the rest); padded, they cost
//!   `m·r + ppb·p + e` for the `m ≤ ppb − d` missing pages, never more. On FAST (log blocks
//!   shared by every data block) pages of a block written apart may share one merge, which
//!   makes padding a loss when a block's pages trickle in over a long time; the lower
//!   estimate of the saving, `d·(r + p + e/ppb)` (pad at about half a block dirty), lost more
//!   cells of the matrix than it won (`docs/policy-fbp.md`), so FBP pads on FAST as on BAST.
//!
//! Device awareness: the policy knows the chip's read, program and erase latencies, its pages
//! per block, and the class of FTL, from the run path ([`PolicyParams::fill_device`]; every
//! parameter is `auto` by default), never the device's state. A write-back is priced at the
//! program latency plus what the FTL adds per page in the best case ([`write_cost_us`]). These are
//! data-sheet figures: no parameter describes the workload, and none was fitted to a result.
//!
//! Choices where nothing above decides, each pinned by a test:
//! * τ starts at half the buffer (as CASA's and SNK-DB's), and stays within `[0, B]`.
//! * The victim comes from the clean list when it has a page and either holds more than τ
//!   pages or the dirty list is empty; otherwise from the dirty list. Within the list, the
//!   second chance walks from the LRU end and moves each marked page to the MRU end, unmarked,
//!   at most as many as the list holds; then the LRU-most page goes, marked or not. Pinned pages
//!   are skipped; the other list is tried when the chosen one has no unpinned page.
//! * Ghosts: the last `B` pages evicted clean and the last `B` evicted dirty, each a FIFO
//!   (ARC's ghost lists are bounded the same way in total). A page is looked up when it misses
//!   (before the eviction its miss causes) and leaves its ghost list then. A page in neither
//!   ghost list (a first access, or one forgotten) changes nothing.
//! * Hits: a read hit moves the page to its list's MRU end, a write hit to the dirty list's MRU
//!   end; both mark it. A missed page enters the clean (read) or dirty (write) list at its MRU
//!   end, unmarked.
//! * Clustering applies on every device but the ideal one (where the order of writes costs
//!   nothing). The block's pages are found through the host's page table ([`Pins::frame_of`]);
//!   a host without one gets `v` alone. A pinned page stays (and prevents padding); clean pages
//!   of the block leave only when it is padded.
//!
//! Cost: O(1) per request (list moves, a mark, one or two ghost lookups on a miss) plus the
//! second chance's walk (amortised O(1): each mark is spent once), and `ppb` page-table lookups
//! for a dirty eviction on a flash FTL.
//!
//! Indexing: the frames' link records and marks are [`Recs`], indexed without bounds checks
//! under `crate::recs`' contract: a frame number the host passes in is checked once where it
//! comes in (`on_hit`, `on_insert`, `remove`, `is_dirty`; a frame from the host's page table
//! by [`Fbp::holds`]), every other index is a link or a list end this policy wrote (below the
//! capacity, which never changes); `check_invariants` walks every link.

use crate::blocks::{DENSE_PAGES, Ends, Link, PageDirectory, link_front, prefetch, unlink, walk};
use crate::params::{DeviceParams, DeviceProfile, FtlClass, ParamDoc, PolicyParams, auto};
use crate::recs::Recs;
use crate::replacer::{Access, BlockPad, EvictError, Evictions, FrameId, NIL, Pins, Replacer};

const CLEAN: u8 = 0;
const DIRTY: u8 = 1;

/// Parameters of [`Fbp`]: the device's figures, each `auto` (taken from the run's device) by
/// default, and whether to pad. None of them describes the workload.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct FbpConfig {
    /// The device's figures ([`DeviceParams`], shared with FBX).
    pub device: DeviceParams,
    /// Write a dirty victim's block whole, padded (`auto`: on log-block and block-mapped FTLs,
    /// where a whole block written in order needs no merge copies; see the module docs).
    pub pad: Option<bool>,
}

impl FbpConfig {
    /// The device figures in force ([`DeviceParams::profile`]).
    pub fn profile(&self) -> DeviceProfile {
        self.device.profile()
    }
}

impl PolicyParams for FbpConfig {
    const KEYS: &'static [ParamDoc] = &[
        DeviceParams::KEYS[0],
        DeviceParams::KEYS[1],
        DeviceParams::KEYS[2],
        DeviceParams::KEYS[3],
        DeviceParams::KEYS[4],
        ParamDoc {
            key: "pad",
            help: "write dirty victim blocks whole: on, off, default auto (by cost on log-block and block FTLs)",
        },
    ];

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        if self.device.set(key, value)? {
            return Ok(());
        }
        match key {
            "pad" => {
                self.pad = auto(key, value, |k, v| match v.trim() {
                    "on" => Ok(true),
                    "off" => Ok(false),
                    _ => Err(format!("{k}={v}: must be on, off or auto")),
                })?
            }
            _ => return Err(format!("unknown parameter '{key}'")),
        }
        Ok(())
    }

    fn values(&self) -> Vec<String> {
        let mut v = self.device.values();
        v.push(self.pad.map_or_else(|| "auto".to_string(), |p| if p { "on" } else { "off" }.to_string()));
        v
    }

    fn fill_device(&mut self, d: &DeviceProfile) {
        self.device.fill_device(d);
    }
}

/// The cost of writing one page back on `d`, µs: the program latency plus what the FTL adds
/// per page in the best case (see the module documentation).
pub fn write_cost_us(d: &DeviceProfile) -> f64 {
    let ppb = f64::from(d.pages_per_block.max(1));
    match d.ftl {
        FtlClass::Ideal => d.program_us,
        FtlClass::PageMapped => d.program_us + d.erase_us / ppb,
        FtlClass::LogBlock | FtlClass::SharedLog => d.program_us + d.erase_us / ppb + d.read_us + d.program_us,
        FtlClass::BlockMapped => d.program_us + ppb * (d.read_us + d.program_us) + d.erase_us,
    }
}

/// The ghost directory of both ghost FIFOs: page → (FIFO, sequence number of its push).
///
/// Each FIFO is a ring of pages in push order with one live bit per position; forgetting a page
/// on a ghost hit clears its live bit and its directory slot (two stores, no list to relink),
/// and the oldest live page is found by advancing the ring's tail over cleared positions. The
/// directory is an array indexed by page below [`DENSE_PAGES`] (grown as pages are met, as
/// ARC's) and a hash map above it, reserved so that it never reallocates. A slot holds `0` for
/// none, else the push's sequence number modulo [`Ghosts::modulus`] plus one, with
/// [`DIRTY_GHOST`] for the dirty FIFO; the ring index is that number's low bits.
///
/// A direct-mapped page that falls off the old end of its FIFO keeps its slot (a random line
/// not written per eviction): the slot goes *stale*, and a lookup tells it from a live one by
/// its sequence number, which then lies before the ring's tail. The number is kept modulo `M`,
/// so the distance back from the head, `(head − s) mod M`, is exact while every slot of the ring
/// is less than `M` pushes old: a stale slot is at most `slots` positions before the tail when
/// it goes stale, and each ring sweeps its stale slots from the array every `M − slots − 1`
/// pushes (O(directory), amortised far below one operation per push). Hashed pages are
/// forgotten eagerly, as before, so the map never holds more than it reserved.
#[derive(Clone, Debug)]
struct Ghosts {
    /// Pages each FIFO remembers at most (the buffer's capacity).
    cap: usize,
    /// `M`: a power of two, at least twice the ring's positions.
    modulus: u64,
    /// Pushes into one ring between two sweeps of its stale slots: `M − slots − 1`.
    sweep_every: u64,
    rings: [Ring; 2],
    dir: PageDirectory,
}

/// Directory bit of a page remembered by the dirty FIFO.
const DIRTY_GHOST: u32 = 1 << 31;

/// One ghost FIFO: pages at sequence numbers `tail..head` (ring index = sequence & mask), of
/// which `len` are still live.
#[derive(Clone, Debug)]
struct Ring {
    page: Vec<u64>,
    live: Vec<u64>,
    head: u64,
    tail: u64,
    len: usize,
    /// Pushes since this ring's stale directory slots were last swept.
    pushes: u64,
}

impl Ring {
    fn new(slots: usize) -> Self {
        Ring { page: vec![0; slots], live: vec![0; slots.div_ceil(64)], head: 0, tail: 0, len: 0, pushes: 0 }
    }

    /// Whether the push with sequence number `n` (modulo `modulus`, see [`Ghosts`]) lies between
    /// this ring's tail and head, i.e. a directory slot naming it is not stale.
    #[inline(always)]
    fn holds(&self, n: u64, modulus: u64) -> bool {
        let back = self.head.wrapping_sub(n) & (modulus - 1);
        back.wrapping_sub(1) < self.head - self.tail
    }

    #[inline(always)]
    fn mask(&self) -> u64 {
        self.page.len() as u64 - 1
    }

    #[inline(always)]
    fn is_live(&self, i: usize) -> bool {
        (self.live[i / 64] >> (i % 64)) & 1 == 1
    }

    #[inline(always)]
    fn set_live(&mut self, i: usize) {
        self.live[i / 64] |= 1 << (i % 64);
    }

    #[inline(always)]
    fn clear_live(&mut self, i: usize) {
        self.live[i / 64] &= !(1 << (i % 64));
    }
}

impl Ghosts {
    fn new(cap: usize) -> Self {
        Self::with_modulus(cap, 1 << 30)
    }

    /// Ghosts whose directory keeps sequence numbers modulo `modulus` (small in tests, so that
    /// numbers wrap and sweeps run).
    fn with_modulus(cap: usize, modulus: u64) -> Self {
        // At least twice the live pages: a ring fills up with forgotten positions only after as
        // many pushes as it holds live pages, so compaction is amortised O(1) per push.
        let slots = (2 * cap).max(2).next_power_of_two();
        assert!(slots <= 1 << 29, "too many frames for FBP's ghosts");
        assert!(modulus.is_power_of_two() && modulus >= 2 * slots as u64 && modulus <= 1 << 30);
        Ghosts {
            cap,
            modulus,
            sweep_every: modulus - slots as u64 - 1,
            rings: [Ring::new(slots), Ring::new(slots)],
            dir: PageDirectory::new(0, 4 * cap + 2),
        }
    }

    #[inline(always)]
    fn len(&self, list: u8) -> usize {
        self.rings[list as usize].len
    }

    /// The directory slot of a push into `list`'s ring at sequence number `seq`.
    #[inline(always)]
    fn code(&self, list: u8, seq: u64) -> u32 {
        let tag = if list == DIRTY { DIRTY_GHOST } else { 0 };
        tag | ((seq & (self.modulus - 1)) as u32 + 1)
    }

    /// The FIFO and ring index a nonzero directory slot `s` names, if it is live (not stale).
    #[inline(always)]
    fn decode(&self, s: u32) -> Option<(u8, usize)> {
        let list = if s & DIRTY_GHOST != 0 { DIRTY } else { CLEAN };
        let ring = &self.rings[list as usize];
        let n = u64::from((s & !DIRTY_GHOST) - 1);
        ring.holds(n, self.modulus).then_some((list, (n & ring.mask()) as usize))
    }

    /// Whether either FIFO remembers `page`.
    fn contains(&self, page: u64) -> bool {
        let s = self.dir.get(page);
        s != 0 && self.decode(s).is_some()
    }

    /// Forgets `page`; the FIFO that remembered it, if any.
    #[inline]
    fn take(&mut self, page: u64) -> Option<u8> {
        let s = self.dir.get(page);
        if s == 0 {
            return None;
        }
        let (list, i) = self.decode(s)?;
        let ring = &mut self.rings[list as usize];
        ring.clear_live(i);
        ring.len -= 1;
        self.dir.clear(page);
        Some(list)
    }

    /// Remembers `page` (remembered by neither FIFO) in `list`'s FIFO, forgetting its oldest
    /// page when it holds `cap`.
    #[inline]
    fn push(&mut self, list: u8, page: u64) {
        if self.cap == 0 {
            return;
        }
        let l = list as usize;
        if self.rings[l].len == self.cap {
            let ring = &mut self.rings[l];
            let mask = ring.mask();
            loop {
                let i = (ring.tail & mask) as usize;
                ring.tail += 1;
                if ring.is_live(i) {
                    ring.clear_live(i);
                    ring.len -= 1;
                    let old = ring.page[i];
                    // A direct-mapped slot goes stale in place (see the type's docs).
                    if old >= DENSE_PAGES {
                        self.dir.clear(old);
                    }
                    break;
                }
            }
        }
        if self.rings[l].head - self.rings[l].tail == self.rings[l].page.len() as u64 {
            self.compact(list);
        }
        if self.rings[l].pushes == self.sweep_every {
            self.sweep(list);
        }
        let ring = &mut self.rings[l];
        let seq = ring.head;
        let i = (seq & ring.mask()) as usize;
        ring.head += 1;
        ring.len += 1;
        ring.pushes += 1;
        ring.page[i] = page;
        ring.set_live(i);
        let code = self.code(list, seq);
        self.dir.set(page, code);
    }

    /// Clears `list`'s stale direct-mapped slots, so that every slot of the ring is again less
    /// than `M` pushes old until the next sweep.
    #[cold]
    fn sweep(&mut self, list: u8) {
        self.rings[list as usize].pushes = 0;
        let tag = if list == DIRTY { DIRTY_GHOST } else { 0 };
        let (ring, m) = (&self.rings[list as usize], self.modulus);
        for s in self.dir.dense_slots_mut() {
            if *s != 0 && *s & DIRTY_GHOST == tag && !ring.holds(u64::from((*s & !DIRTY_GHOST) - 1), m) {
                *s = 0;
            }
        }
    }

    /// Moves `list`'s live pages together at its tail, in order (its ring is full of live and
    /// forgotten positions).
    #[cold]
    fn compact(&mut self, list: u8) {
        let l = list as usize;
        let mask = self.rings[l].mask();
        let (tail, head) = (self.rings[l].tail, self.rings[l].head);
        let mut w = tail;
        for r in tail..head {
            let ri = (r & mask) as usize;
            if !self.rings[l].is_live(ri) {
                continue;
            }
            let wi = (w & mask) as usize;
            let seq = w;
            w += 1;
            if wi == ri {
                continue;
            }
            let ring = &mut self.rings[l];
            let page = ring.page[ri];
            ring.clear_live(ri);
            ring.page[wi] = page;
            ring.set_live(wi);
            let code = self.code(list, seq);
            self.dir.set(page, code);
        }
        self.rings[l].head = w;
    }

    fn check(&self) -> Result<(), String> {
        let mut total = 0usize;
        for list in [CLEAN, DIRTY] {
            let ring = &self.rings[list as usize];
            if ring.len > self.cap || ring.head < ring.tail || ring.head - ring.tail > ring.page.len() as u64 {
                return Err(format!("fbp ghosts {list}: {} live, span {}..{}", ring.len, ring.tail, ring.head));
            }
            if ring.pushes > self.sweep_every {
                return Err(format!("fbp ghosts {list}: {} pushes since the last sweep", ring.pushes));
            }
            let (mask, span) = (ring.mask(), ring.head - ring.tail);
            let mut live = 0;
            for i in 0..ring.page.len() {
                let off = (i as u64).wrapping_sub(ring.tail) & mask;
                let seq_in = span == mask + 1 || off < span;
                if ring.is_live(i) {
                    if !seq_in {
                        return Err(format!("fbp ghosts {list}: live position {i} outside the ring"));
                    }
                    let p = ring.page[i];
                    let want = self.code(list, ring.tail + off);
                    if self.dir.get(p) != want {
                        return Err(format!(
                            "fbp ghosts {list}: page {p} at {i} has directory slot {}, not {want}",
                            self.dir.get(p)
                        ));
                    }
                    live += 1;
                }
            }
            if live != ring.len {
                return Err(format!("fbp ghosts {list}: {live} live positions, {} counted", ring.len));
            }
            total += live;
        }
        // Every slot that decodes as live names a live position holding its page (so a stale
        // slot can never pass for a ghost); hashed slots are never stale.
        let dense = self.dir.dense_slots();
        let mut mapped = 0usize;
        for (p, &s) in dense.iter().enumerate() {
            if s == 0 {
                continue;
            }
            if let Some((list, i)) = self.decode(s) {
                let ring = &self.rings[list as usize];
                if !ring.is_live(i) || ring.page[i] != p as u64 {
                    return Err(format!("fbp ghosts: page {p}'s slot {s} names position {i} of {list}"));
                }
                mapped += 1;
            }
        }
        mapped += self.dir.entries() - dense.iter().filter(|&&s| s != 0).count();
        if mapped != total {
            return Err(format!("fbp ghosts: {mapped} pages in the directory, {total} live"));
        }
        Ok(())
    }
}

/// The list bits of a frame's `meta`.
const LIST: u8 = 0x3;
/// `meta` list of a frame in neither list.
const NO_LIST: u8 = 2;
/// The mark of a frame hit since it entered its list or was last passed over.
const MARK: u8 = 0x80;

/// The FBP policy.
///
/// Layout (for speed; the design is silent): the clean and dirty lists are threaded through
/// 8-byte per-frame link records, with each frame's list and mark in one byte apart, so a hit
/// touches records as densely packed as LRU's; pages are read only at eviction, and the last
/// access times only where dirty victims are clustered.
#[derive(Clone, Debug)]
pub struct Fbp {
    /// Per frame: its links in the clean or the dirty list (unchecked: see the module's
    /// indexing contract).
    link: Recs<Link>,
    /// Per frame: its list (`CLEAN`, `DIRTY` or `NO_LIST`), with `MARK` (unchecked, as `link`).
    meta: Recs<u8>,
    ends: [Ends; 2],
    /// Page of each frame.
    page: Vec<u64>,
    /// Request time of each frame's last access (kept only when clustering, the one reader).
    last: Vec<u64>,
    capacity: f64,
    /// Target size of the clean list.
    tau: f64,
    /// Cost of a write-back in reads: `w / r`.
    write_in_reads: f64,
    /// Pages per block when dirty evictions are clustered (log-block and block-mapped FTLs).
    cluster: Option<u64>,
    /// Whether a clustered eviction writes the whole block, padded.
    pad: bool,
    ghosts: Ghosts,
    /// The incoming page whose ghost entry [`Replacer::victims`] already consumed.
    learned: Option<u64>,
}

impl Fbp {
    /// The current target size τ of the clean list.
    pub fn target(&self) -> f64 {
        self.tau
    }

    /// Pages in the clean and the dirty list.
    pub fn list_lengths(&self) -> (usize, usize) {
        (self.ends[CLEAN as usize].len as usize, self.ends[DIRTY as usize].len as usize)
    }

    /// Pages remembered as evicted clean and evicted dirty.
    pub fn ghost_lengths(&self) -> (usize, usize) {
        (self.ghosts.len(CLEAN), self.ghosts.len(DIRTY))
    }

    #[inline(always)]
    fn list_of(&self, f: FrameId) -> u8 {
        self.meta[f as usize] & LIST
    }

    /// [`Self::list_of`] for a frame number the host passed in: checked against the frames
    /// (the module's indexing contract), so that the unchecked reads after it stay in bounds.
    #[inline(always)]
    fn host_list_of(&self, frame: FrameId) -> u8 {
        *self.meta.checked(frame as usize) & LIST
    }

    /// Unlinks frame `f` from its list, if any (its mark stays).
    #[inline(always)]
    fn unlink(&mut self, f: FrameId) {
        let list = self.list_of(f);
        if list != NO_LIST {
            unlink::<0, _, _>(&mut self.link, &mut self.ends[(list & DIRTY) as usize], f);
            let m = &mut self.meta[f as usize];
            *m = (*m & MARK) | NO_LIST;
        }
    }

    /// Puts frame `f` (in no list) at the MRU end of `list`.
    #[inline(always)]
    fn push_front(&mut self, list: u8, f: FrameId) {
        link_front::<0, _, _>(&mut self.link, &mut self.ends[(list & DIRTY) as usize], f);
        let m = &mut self.meta[f as usize];
        *m = (*m & MARK) | list;
    }

    /// Moves frame `f` (in any list or none) to the MRU end of `list`.
    #[inline(always)]
    fn move_to_front(&mut self, list: u8, f: FrameId) {
        if self.ends[list as usize].head != f {
            self.unlink(f);
            self.push_front(list, f);
        }
    }

    /// Adapts τ to a miss on `access.page`, if a ghost remembers it (and forgets it there).
    #[inline]
    fn learn(&mut self, access: &Access) {
        let (gc, gd) = (self.ghosts.len(CLEAN) as f64, self.ghosts.len(DIRTY) as f64);
        match self.ghosts.take(access.page) {
            Some(CLEAN) => self.tau = (self.tau + (gd / gc).max(1.0)).min(self.capacity),
            Some(_) => {
                let cost = 1.0 + if access.kind.is_write() { self.write_in_reads } else { 0.0 };
                self.tau = (self.tau - (gc / gd).max(1.0) * cost).max(0.0);
            }
            None => {}
        }
    }

    /// The victim of `list`: its LRU-most unpinned page not marked since it was last passed
    /// over; marked pages met on the way lose their mark and move to the MRU end (a second
    /// chance). At most two passes over the list.
    fn second_chance<P: Pins + ?Sized>(&mut self, list: u8, pins: &P) -> Option<FrameId> {
        let mut cur = self.ends[list as usize].tail;
        let mut chances = self.ends[list as usize].len;
        while cur != NIL {
            let f = cur;
            cur = self.link[f as usize].links[0];
            if pins.is_pinned(f) {
                continue;
            }
            if self.meta[f as usize] & MARK != 0 && chances > 0 {
                self.meta[f as usize] &= !MARK;
                chances -= 1;
                self.move_to_front(list, f);
                if cur == NIL {
                    cur = self.ends[list as usize].tail;
                }
                continue;
            }
            return Some(f);
        }
        None
    }

    fn evict(&mut self, frame: FrameId, dirty: bool, out: &mut Evictions) {
        self.unlink(frame);
        out.victims.push(frame);
        self.ghosts.push(if dirty { DIRTY } else { CLEAN }, self.page[frame as usize]);
    }

    /// Whether `f` is a frame of this policy's lists holding `p`.
    fn holds(&self, f: FrameId, p: u64) -> bool {
        (f as usize) < self.page.len() && self.page[f as usize] == p && self.list_of(f) != NO_LIST
    }

    /// Evicts every buffered page of `v`'s block, in page order, as one padded block write;
    /// `false` (nothing done) when the host has no page table, disagrees with the policy, or a
    /// page of the block is pinned.
    fn try_pad<P: Pins + ?Sized>(&mut self, v: FrameId, ppb: u64, pins: &P, out: &mut Evictions) -> bool {
        let page = self.page[v as usize];
        if pins.frame_of(page) != Some(v) {
            return false;
        }
        let first = page - page % ppb;
        for p in first..first + ppb {
            if let Some(f) = pins.frame_of(p)
                && (!self.holds(f, p) || pins.is_pinned(f))
            {
                return false;
            }
        }
        for p in first..first + ppb {
            if let Some(f) = pins.frame_of(p) {
                let dirty = self.list_of(f) == DIRTY;
                self.evict(f, dirty, out);
            }
        }
        out.pad = Some(BlockPad { first_page: first, pages: ppb as u32 });
        true
    }

    /// Evicts the dirty page `v` with the cold dirty pages of its block, in page order.
    fn evict_cluster<P: Pins + ?Sized>(&mut self, v: FrameId, ppb: u64, now: u64, pins: &P, out: &mut Evictions) {
        let page = self.page[v as usize];
        if pins.frame_of(page) != Some(v) {
            // No page table (or one that disagrees): `v` alone.
            self.evict(v, true, out);
            return;
        }
        let last_v = self.last[v as usize];
        let cut = now - now.saturating_sub(last_v) / 2;
        let first = page - page % ppb;
        for p in first..first + ppb {
            let Some(f) = pins.frame_of(p) else { continue };
            let ok = f == v
                || (self.holds(f, p) && self.list_of(f) == DIRTY && !pins.is_pinned(f) && self.last[f as usize] <= cut);
            if ok {
                self.evict(f, true, out);
            }
        }
    }

    /// The list the next eviction starts from (before second chances and pins).
    #[inline(always)]
    fn victim_list(&self) -> u8 {
        let (c, d) = self.list_lengths();
        if c > 0 && (c as f64 > self.tau || d == 0) { CLEAN } else { DIRTY }
    }

    /// Brings into cache what the next eviction will most likely read and write, once per
    /// eviction, two frames deep along the LRU end of the list it starts from: for the tail `t`
    /// (the likely victim) its mark and link record, and the ghost directory slot of its page,
    /// which the eviction writes; for `t`'s neighbour `t2` (the victim after `t`, or the one a
    /// second chance reaches next) its record, mark and page. The page of `t` is read here to
    /// address its directory slot: the previous eviction prefetched it (as that eviction's
    /// `t2`), so the read rarely waits, where reading it a request after its own prefetch
    /// stalled (in [`Replacer::likely_victim`], on every miss). `t`'s link record is in cache:
    /// the eviction just wrote it when it unlinked `t`'s old neighbour. (The oldest ghost's
    /// directory slot is not written when it falls off its FIFO: see [`Ghosts`].)
    #[inline(always)]
    fn prefetch_next_victim(&self) {
        let list = self.victim_list();
        let t = self.ends[list as usize].tail;
        if t == NIL {
            return;
        }
        let t = t as usize;
        prefetch(self.meta.as_slice(), t);
        self.ghosts.dir.prefetch(self.page[t]);
        let t2 = self.link[t].links[0] as usize;
        prefetch(self.link.as_slice(), t2);
        prefetch(self.meta.as_slice(), t2);
        prefetch(&self.page, t2);
    }
}

impl Replacer for Fbp {
    type Config = FbpConfig;

    fn new(capacity: usize, config: &FbpConfig) -> Self {
        assert!(capacity < NIL as usize, "too many frames for FBP");
        let d = config.profile();
        let cluster = (d.ftl != FtlClass::Ideal).then_some(u64::from(d.pages_per_block.max(1)));
        let pad =
            config.pad.unwrap_or(matches!(d.ftl, FtlClass::LogBlock | FtlClass::SharedLog | FtlClass::BlockMapped));
        Fbp {
            pad,
            link: Recs(vec![Link::FREE; capacity]),
            meta: Recs(vec![NO_LIST; capacity]),
            ends: [Ends::EMPTY; 2],
            page: vec![0; capacity],
            last: vec![0; if cluster.is_some() { capacity } else { 0 }],
            capacity: capacity as f64,
            tau: capacity as f64 / 2.0,
            write_in_reads: write_cost_us(&d) / d.read_us.max(f64::MIN_POSITIVE),
            cluster,
            ghosts: Ghosts::new(capacity),
            learned: None,
        }
    }

    /// Inlined into the host's loop: the frame is checked once, then its mark, list and links
    /// (and its neighbours', numbers this policy wrote) are indexed without checks.
    #[inline(always)]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        let f = frame as usize;
        let from = self.host_list_of(frame);
        if self.cluster.is_some() {
            self.last[f] = access.time;
        }
        // A write hit, or any hit in the dirty list, goes to the dirty list; a read hit on a
        // frame in no list (never, under the contract) to the clean list.
        let to = (from & DIRTY) | u8::from(access.kind.is_write());
        self.meta[f] = to | MARK;
        if self.ends[to as usize].head != frame {
            if from != NO_LIST {
                unlink::<0, _, _>(&mut self.link, &mut self.ends[(from & DIRTY) as usize], frame);
            }
            link_front::<0, _, _>(&mut self.link, &mut self.ends[to as usize], frame);
        }
    }

    /// Brings `page`'s ghost directory slot into cache (read on a miss).
    #[inline(always)]
    fn prefetch(&self, page: u64) {
        self.ghosts.dir.prefetch(page);
    }

    #[inline(always)]
    fn prefetch_frame(&self, frame: FrameId) {
        prefetch(self.link.as_slice(), frame as usize);
        prefetch(self.meta.as_slice(), frame as usize);
    }

    /// The LRU end of the list the next eviction starts from (a second chance may pass it over).
    /// What evicting it reads and writes was prefetched at the last eviction
    /// ([`Fbp::prefetch_next_victim`]): nothing is read here but the lists' ends.
    #[inline(always)]
    fn likely_victim(&self) -> Option<FrameId> {
        let t = self.ends[self.victim_list() as usize].tail;
        (t != NIL).then_some(t)
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        if self.learned.take() != Some(access.page) {
            self.learn(access);
        }
        self.page[frame as usize] = access.page;
        if self.cluster.is_some() {
            self.last[frame as usize] = access.time;
        }
        *self.meta.checked_mut(frame as usize) &= !MARK;
        self.unlink(frame);
        self.push_front(if access.kind.is_write() { DIRTY } else { CLEAN }, frame);
    }

    fn victims<P: Pins + ?Sized>(
        &mut self,
        incoming: &Access,
        pins: &P,
        out: &mut Evictions,
    ) -> Result<(), EvictError> {
        if self.len() == 0 {
            return Err(EvictError::Empty);
        }
        if self.learned != Some(incoming.page) {
            self.learn(incoming);
            self.learned = Some(incoming.page);
        }
        let first = self.victim_list();
        let second = first ^ 1;
        let victim = match self.second_chance(first, pins) {
            Some(v) => v,
            None => self.second_chance(second, pins).ok_or(EvictError::AllPinned)?,
        };
        let dirty = self.list_of(victim) == DIRTY;
        match self.cluster {
            Some(ppb) if dirty => {
                if !(self.pad && self.try_pad(victim, ppb, pins, out)) {
                    self.evict_cluster(victim, ppb, incoming.time, pins, out);
                }
            }
            _ => self.evict(victim, dirty, out),
        }
        self.prefetch_next_victim();
        Ok(())
    }

    fn remove(&mut self, frame: FrameId) {
        if self.host_list_of(frame) != NO_LIST {
            self.unlink(frame);
        }
    }

    fn len(&self) -> usize {
        (self.ends[CLEAN as usize].len + self.ends[DIRTY as usize].len) as usize
    }

    fn is_dirty(&self, frame: FrameId) -> Option<bool> {
        Some(self.host_list_of(frame) == DIRTY)
    }

    fn check_invariants(&self) -> Result<(), String> {
        let mut seen = vec![NO_LIST; self.link.len()];
        for list in [CLEAN, DIRTY] {
            for f in walk::<0, _>(self.link.as_slice(), &self.ends[list as usize]).map_err(|e| format!("fbp: {e}"))? {
                if seen[f as usize] != NO_LIST {
                    return Err(format!("fbp: frame {f} is in both lists"));
                }
                seen[f as usize] = list;
            }
        }
        for (f, &s) in seen.iter().enumerate() {
            if self.meta[f] & LIST != s {
                return Err(format!("fbp: frame {f} records list {} but is linked in {s}", self.meta[f] & LIST));
            }
        }
        self.ghosts.check()?;
        if !(0.0..=self.capacity).contains(&self.tau) {
            return Err(format!("fbp: target {} outside [0, {}]", self.tau, self.capacity));
        }
        if self.len() as f64 > self.capacity {
            return Err(format!("fbp: {} pages in {} frames", self.len(), self.capacity));
        }
        for (f, &s) in seen.iter().enumerate() {
            let p = self.page[f];
            if s != NO_LIST && self.ghosts.contains(p) {
                return Err(format!("fbp: buffered page {p} is also a ghost"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Harness;

    /// The ideal device with reads costing 1 and writes 3: a dirty-ghost write hit weighs 4.
    fn ideal_1_3() -> FbpConfig {
        FbpConfig {
            device: DeviceParams {
                read_us: Some(1.0),
                program_us: Some(3.0),
                erase_us: Some(0.0),
                ppb: Some(4),
                ftl: Some(FtlClass::Ideal),
            },
            pad: None,
        }
    }

    /// Log blocks of 4 pages, clustering without padding.
    fn on(ftl: FtlClass, pad: Option<bool>) -> FbpConfig {
        let mut c = ideal_1_3();
        c.device.ftl = Some(ftl);
        c.pad = pad;
        c
    }

    fn log_blocks() -> FbpConfig {
        on(FtlClass::LogBlock, Some(false))
    }

    #[test]
    fn log_block_ftl_pads_the_victim_block_by_default() {
        let mut h = Harness::<Fbp>::new(3, FbpConfig { pad: None, ..log_blocks() });
        h.write(0);
        h.write(2);
        h.read(1);
        // τ = 1.5 and |clean| = 1: the dirty LRU page 0 is the victim, and its block 0–3 is
        // written whole: every buffered page of it (1 clean; 0 and 2 dirty) leaves, in page
        // order, and the missing page 3 is read to pad it.
        h.read(9);
        assert_eq!(h.evicted_pages(), vec![0, 1, 2]);
        assert_eq!(h.padding_reads, vec![3]);
        assert_eq!(h.written, vec![0, 1, 2, 3]);
        assert_eq!(h.policy.ghost_lengths(), (1, 2));
        // A clean victim is never padded.
        h.read(10);
        h.read(11);
        h.read(12);
        assert_eq!(h.evicted_pages(), vec![0, 1, 2, 9]);
        assert_eq!(h.padding_reads, vec![3]);
    }

    #[test]
    fn victim_list_follows_the_target() {
        let mut h = Harness::<Fbp>::new(4, ideal_1_3());
        h.read(1);
        h.read(2);
        h.write(3);
        h.write(4);
        assert_eq!(h.policy.target(), 2.0);
        // |clean| = 2, not above τ = 2: the dirty list gives up its LRU page.
        h.read(5);
        assert_eq!(h.evicted_pages(), vec![3]);
        // Now |clean| = 3 > 2: the clean LRU page.
        h.read(6);
        assert_eq!(h.evicted_pages(), vec![3, 1]);
        assert_eq!(h.policy.ghost_lengths(), (1, 1));
    }

    #[test]
    fn ghost_hits_move_the_target_by_their_cost() {
        let mut h = Harness::<Fbp>::new(4, ideal_1_3());
        h.read(1);
        h.read(2);
        h.write(3);
        h.write(4);
        h.read(5); // evicts 3 (dirty)
        h.read(6); // evicts 1 (clean)
        // A miss on 1, remembered clean: τ += max(1, 1/1) = 3; then |clean| = 3 is not above
        // τ, so the dirty page 4 goes.
        h.read(1);
        assert_eq!(h.policy.target(), 3.0);
        assert_eq!(h.evicted_pages(), vec![3, 1, 4]);
        assert_eq!(h.policy.ghost_lengths(), (0, 2), "1 left its ghost");
        // A write miss on 3, remembered dirty: τ -= max(1, 0/2)·(1 + 3) → 0 (clamped).
        h.write(3);
        assert_eq!(h.policy.target(), 0.0);
    }

    #[test]
    fn a_read_miss_on_a_dirty_ghost_costs_one_read() {
        let mut h = Harness::<Fbp>::new(2, ideal_1_3());
        h.write(1);
        h.write(2);
        h.read(3); // τ = 1, |clean| = 0: evicts dirty 1
        h.read(4); // |clean| = 1, not above 1: evicts dirty 2
        assert_eq!(h.evicted_pages(), vec![1, 2]);
        h.read(1); // dirty ghost, read: τ -= 1
        assert_eq!(h.policy.target(), 0.0);
        let mut h = Harness::<Fbp>::new(4, ideal_1_3());
        h.write(1);
        for p in [2, 3, 4, 5] {
            h.read(p);
        }
        assert_eq!(h.evicted_pages(), vec![2]); // |clean| = 3 > 2
        assert_eq!(h.policy.target(), 2.0);
        // A read miss on the clean ghost 2: τ = 3, and |clean| = 3 is not above it: dirty 1 goes.
        h.read(2);
        assert_eq!(h.policy.target(), 3.0);
        assert_eq!(h.evicted_pages(), vec![2, 1]);
    }

    #[test]
    fn a_page_hit_since_it_entered_gets_a_second_chance() {
        let mut h = Harness::<Fbp>::new(3, ideal_1_3());
        h.read(1);
        h.read(2);
        h.read(3);
        h.read(1); // MRU → LRU: 1 3 2
        h.read(3); // 3 1 2
        h.read(2); // 2 3 1, all three marked
        // The LRU page 1 loses its mark and moves up, then 3, then 2; the walk meets 1 again,
        // now unmarked: it goes.
        h.read(4);
        assert_eq!(h.evicted_pages(), vec![1]);
        // 3 and 2 lost their marks on the way: the next victim is the LRU-most of them, 3.
        h.read(5);
        assert_eq!(h.evicted_pages(), vec![1, 3]);
    }

    #[test]
    fn hits_move_pages_between_lists() {
        let mut h = Harness::<Fbp>::new(4, ideal_1_3());
        h.read(1);
        h.read(2);
        h.write(1);
        assert_eq!(h.policy.list_lengths(), (1, 1));
        assert!(h.is_dirty(1));
        h.read(1);
        assert!(h.is_dirty(1), "a read hit keeps a page dirty");
    }

    #[test]
    fn log_block_ftl_evicts_the_cold_dirty_pages_of_the_block_in_page_order() {
        // Blocks of 4 pages: 0-3, 4-7. Dirty 2, 0, 5, 1 at times 0..3, then 3 clean pages.
        let mut h = Harness::<Fbp>::new(6, log_blocks());
        h.write(2);
        h.write(0);
        h.write(5);
        h.write(1);
        h.read(10);
        h.read(11);
        // τ = 3, |clean| = 2: the dirty LRU page 2 (last access at 0) goes at time 6, with the
        // pages of its block last accessed at or before 6 − 6/2 = 3: 0 (time 1) and 1 (time 3).
        h.read(12);
        assert_eq!(h.evicted_pages(), vec![0, 1, 2]);
        assert_eq!(h.written, vec![0, 1, 2]);
    }

    #[test]
    fn clustering_leaves_warm_pages_of_the_block() {
        let mut h = Harness::<Fbp>::new(4, log_blocks());
        h.write(0);
        h.read(9);
        h.read(10);
        h.write(1);
        h.write(1);
        h.write(1); // time 5
        // Miss at 6: the victim is dirty 0 (|clean| = 2, not above 2); the cut is 6 − 3 = 3,
        // and page 1 was written at 5: it stays.
        h.read(11);
        assert_eq!(h.evicted_pages(), vec![0]);
        assert!(h.is_dirty(1));
    }

    #[test]
    fn without_a_page_table_one_page_is_evicted() {
        let mut p = Fbp::new(2, &log_blocks());
        let w = |page, time| Access::new(page, crate::AccessKind::Write, time);
        p.on_insert(0, &w(0, 0));
        p.on_insert(1, &w(1, 1));
        let mut out = Evictions::default();
        p.victims(&w(2, 2), &crate::NoPins, &mut out).unwrap();
        assert_eq!(out.victims, vec![0]);
        p.check_invariants().unwrap();
    }

    #[test]
    fn shared_log_blocks_pad_too() {
        let mut h = Harness::<Fbp>::new(4, on(FtlClass::SharedLog, None));
        h.write(0);
        h.write(4);
        h.read(9);
        h.read(10);
        h.read(11);
        // One dirty page alone in its block: still written as the whole block.
        assert_eq!(h.evicted_pages(), vec![0]);
        assert_eq!(h.padding_reads, vec![1, 2, 3]);
    }

    #[test]
    fn the_ideal_device_evicts_one_page_and_a_page_mapped_ftl_a_cold_cluster() {
        let run = |ftl| {
            let mut h = Harness::<Fbp>::new(2, on(ftl, None));
            h.write(0);
            h.write(1);
            h.read(2);
            (h.evicted_pages(), h.padding_reads.len())
        };
        assert_eq!(run(FtlClass::Ideal), (vec![0], 0));
        // Page 1 (block 0–3) was written at 1 ≤ 2 − 2/2: it leaves with 0, unpadded.
        assert_eq!(run(FtlClass::PageMapped), (vec![0, 1], 0));
    }

    #[test]
    fn write_costs_follow_the_ftl() {
        let d = DeviceProfile::MICRON_PAGE;
        assert_eq!(write_cost_us(&DeviceProfile { ftl: FtlClass::Ideal, ..d }), 220.0);
        assert_eq!(write_cost_us(&d), 220.0 + 1500.0 / 64.0);
        assert_eq!(write_cost_us(&DeviceProfile { ftl: FtlClass::LogBlock, ..d }), 220.0 + 1500.0 / 64.0 + 245.0);
        assert_eq!(write_cost_us(&DeviceProfile { ftl: FtlClass::BlockMapped, ..d }), 220.0 + 64.0 * 245.0 + 1500.0);
    }

    proptest::proptest! {
        /// The ghost rings behave as two bounded FIFOs (`VecDeque`s) with removal anywhere,
        /// through compactions, for dense and hashed (sparse) page numbers alike; with the
        /// smallest modulus too, where sequence numbers wrap every few dozen pushes and stale
        /// slots are swept as often (without the sweeps, a stale slot passes for a ghost).
        #[test]
        fn ghosts_are_two_bounded_fifos(
            cap in 0usize..12,
            sparse in proptest::bool::ANY,
            small in proptest::bool::ANY,
            ops in proptest::collection::vec((0u64..40, 0u8..3), 1..600),
        ) {
            use std::collections::VecDeque;
            let base = if sparse { crate::blocks::DENSE_PAGES + (1 << 40) } else { 0 };
            let slots = (2 * cap).max(2).next_power_of_two() as u64;
            let mut g = if small { Ghosts::with_modulus(cap, 2 * slots) } else { Ghosts::new(cap) };
            let mut model: [VecDeque<u64>; 2] = [VecDeque::new(), VecDeque::new()];
            for (page, op) in ops {
                let page = base + page;
                let at = model.iter().position(|q| q.contains(&page));
                if op < 2 && at.is_none() {
                    g.push(op, page);
                    if cap > 0 {
                        model[op as usize].push_back(page);
                        if model[op as usize].len() > cap {
                            model[op as usize].pop_front();
                        }
                    }
                } else {
                    proptest::prop_assert_eq!(g.take(page), at.map(|l| l as u8));
                    if let Some(l) = at {
                        model[l].retain(|&p| p != page);
                    }
                }
                g.check().map_err(proptest::test_runner::TestCaseError::fail)?;
                for l in [CLEAN, DIRTY] {
                    proptest::prop_assert_eq!(g.len(l), model[l as usize].len());
                }
                for p in 0..40 {
                    proptest::prop_assert_eq!(g.contains(base + p), model.iter().any(|q| q.contains(&(base + p))));
                }
            }
        }

        /// Page numbers above the direct-mapped range (the hashed ghost directory) give the
        /// same decisions as small ones, on every FTL class.
        #[test]
        fn sparse_pages_decide_as_dense_ones(
            cap in 1usize..16,
            ftl in 0usize..5,
            reqs in proptest::collection::vec((0u64..40, proptest::bool::ANY), 1..300),
        ) {
            let ftl = [FtlClass::Ideal, FtlClass::PageMapped, FtlClass::LogBlock, FtlClass::SharedLog, FtlClass::BlockMapped][ftl];
            let off = 1u64 << 40;
            let mut dense = Harness::<Fbp>::new(cap, on(ftl, None));
            let mut sparse = Harness::<Fbp>::new(cap, on(ftl, None));
            for (page, write) in reqs {
                let kind = if write { crate::AccessKind::Write } else { crate::AccessKind::Read };
                let a = dense.access(page, kind, crate::NEVER);
                let b = sparse.access(page + off, kind, crate::NEVER);
                proptest::prop_assert_eq!(a, b);
                let shifted: Vec<u64> = dense.evicted_pages().iter().map(|p| p + off).collect();
                proptest::prop_assert_eq!(shifted, sparse.evicted_pages());
                proptest::prop_assert_eq!(dense.policy.target(), sparse.policy.target());
            }
        }
    }

    #[test]
    fn parameters_default_to_the_device_and_explicit_ones_stay() {
        let mut c: FbpConfig = Default::default();
        assert_eq!(c.values(), vec!["auto"; 6]);
        assert_eq!(c.profile(), DeviceProfile::MICRON_PAGE);
        c.set("read-us", "10").unwrap();
        c.set("ftl", "ideal").unwrap();
        let bast = DeviceProfile {
            read_us: 10.0,
            program_us: 200.0,
            erase_us: 2000.0,
            pages_per_block: 64,
            ftl: FtlClass::LogBlock,
            logical_pages: 0,
        };
        c.fill_device(&DeviceProfile { read_us: 99.0, ..bast });
        assert_eq!(c.values(), vec!["10", "200", "2000", "64", "ideal", "auto"]);
        c.set("pad", "off").unwrap();
        assert_eq!(c.values()[5], "off");
        let mut again = FbpConfig::default();
        for (k, v) in FbpConfig::KEYS.iter().zip(c.values()) {
            again.set(k.key, &v).unwrap();
        }
        assert_eq!(again, c);
        assert!(c.set("read-us", "0").is_err());
        assert!(c.set("ftl", "nvme").is_err());
        assert!(c.set("ppb", "0").is_err());
        assert!(c.set("pad", "maybe").is_err());
        c.set("ppb", "auto").unwrap();
        assert_eq!(c.device.ppb, None);
    }
}
