//! The write-ahead log: on-disk records, recovery, and the in-memory log the buffer manager
//! appends to.
//!
//! `docs/engine.md` draws the records byte by byte and states the invariants; this is the
//! summary.
//!
//! * The log lives at the end of the page store: two **anchor** pages (checkpoint records,
//!   written alternately) and a **ring** of pages holding one byte stream. A log sequence
//!   number ([`Lsn`]) is a position in that stream; stream byte `l` is byte `l mod page_size`
//!   of ring page `(l / page_size) mod ring_pages`.
//! * Every change of an operation is one **group** in the stream: a 24-byte header (CRC32C,
//!   length, LSN, epoch, entry count), then *entries*: `DELTA` (bytes of one page, after-image),
//!   `INIT` (a newly allocated page starts as zeros) and at most one `META` (the page count and
//!   the application area, after-image). A group is valid iff its CRC matches, its LSN is its
//!   position and its epoch is the anchor's: torn groups, groups of an earlier lap of the ring
//!   and groups written before the last recovery are all rejected.
//! * **Recovery** reads the newer valid anchor, replays every valid group from the anchor's
//!   redo LSN on (redo only: pages on the store never hold uncommitted changes), writes the
//!   pages it changed, syncs, and writes a new anchor with the next epoch.

use std::collections::HashMap;
use std::time::Instant;

use flashbuf_flash::PageStore;
use serde::Serialize;

use crate::page::{APP_BYTES, PAGE_HEADER_BYTES, PageFileError, seal_page, verify_page};

/// A log sequence number: a byte position in the log stream.
pub type Lsn = u64;

/// Bytes of a group header.
pub const GROUP_HEADER_BYTES: usize = 24;
/// Bytes of an entry header (`DELTA`, `INIT`; `META` has the same 16-byte head).
pub const ENTRY_HEADER_BYTES: usize = 16;
/// Bytes of a `META` entry.
pub const META_ENTRY_BYTES: usize = ENTRY_HEADER_BYTES + APP_BYTES;
/// Log pages at the least: two anchors and a ring of eight pages.
pub const MIN_LOG_PAGES: u64 = 10;
/// Magic of an anchor page (payload bytes 0..8).
pub const ANCHOR_MAGIC: [u8; 8] = *b"FBANCHOR";

pub(crate) const KIND_DELTA: u8 = 1;
pub(crate) const KIND_META: u8 = 2;
pub(crate) const KIND_INIT: u8 = 3;

/// Pages recovery keeps in memory before writing them back (redo is idempotent, so writing
/// early is safe).
const REDO_CACHE_PAGES: usize = 4096;

/// Where the log lives in the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogGeometry {
    /// First log page (anchor slot 0); anchor slot 1 follows, then the ring.
    pub first_page: u64,
    /// Log pages, anchors included.
    pub pages: u64,
    /// Bytes per page.
    pub page_size: usize,
}

impl LogGeometry {
    /// Pages of the ring.
    pub fn ring_pages(&self) -> u64 {
        self.pages - 2
    }

    /// Bytes of the ring: the most log the database can keep between checkpoints.
    pub fn ring_bytes(&self) -> u64 {
        self.ring_pages() * self.page_size as u64
    }

    /// The store page of anchor slot `slot` (0 or 1).
    pub fn anchor_page(&self, slot: u64) -> u64 {
        self.first_page + (slot & 1)
    }

    /// The store page holding stream byte `lsn`.
    pub fn store_page_of(&self, lsn: Lsn) -> u64 {
        self.first_page + 2 + (lsn / self.page_size as u64) % self.ring_pages()
    }

    /// The start of the page of stream byte `lsn`.
    pub fn page_start(&self, lsn: Lsn) -> Lsn {
        lsn - lsn % self.page_size as u64
    }

    /// The largest group an operation may write (half the ring: a checkpoint can always make
    /// room for one).
    pub fn max_group_bytes(&self) -> u64 {
        (self.ring_bytes() / 2).min(u32::MAX as u64)
    }

    /// The log bytes to reserve for an operation that changes up to `pages` pages.
    pub fn reservation(&self, pages: u64) -> u64 {
        let per_page = max_page_entry_bytes(self.page_size) as u64;
        (GROUP_HEADER_BYTES + META_ENTRY_BYTES) as u64 + pages.saturating_mul(per_page)
    }
}

/// The database state the log carries besides pages: the page count and the application area
/// of the file header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogMeta {
    /// Allocated pages (the file header included).
    pub page_count: u64,
    /// The application area (the B+-tree's metadata).
    pub app: [u8; APP_BYTES],
}

/// A checkpoint record (one of the two anchor pages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Anchor {
    /// Sequence number: the valid anchor with the higher one is current.
    pub seq: u64,
    /// Where redo starts: every change before it is on the store.
    pub redo_lsn: Lsn,
    /// The end of the log when the anchor was written.
    pub end_lsn: Lsn,
    /// Groups are valid only with this epoch (incremented by every recovery).
    pub epoch: u32,
    /// Page count and application area as of `end_lsn`.
    pub meta: LogMeta,
}

const A_MAGIC: usize = PAGE_HEADER_BYTES;
const A_SEQ: usize = A_MAGIC + 8;
const A_REDO: usize = A_SEQ + 8;
const A_END: usize = A_REDO + 8;
const A_EPOCH: usize = A_END + 8;
const A_PAGE_COUNT: usize = A_EPOCH + 8;
const A_APP: usize = A_PAGE_COUNT + 8;

#[inline]
fn rd_u32(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().expect("4 bytes"))
}
#[inline]
fn rd_u64(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().expect("8 bytes"))
}

/// Fills `buf` (one page) with anchor `a` sealed as store page `page`.
pub fn encode_anchor(page: u64, a: &Anchor, buf: &mut [u8]) {
    buf.fill(0);
    buf[A_MAGIC..A_MAGIC + 8].copy_from_slice(&ANCHOR_MAGIC);
    buf[A_SEQ..A_SEQ + 8].copy_from_slice(&a.seq.to_le_bytes());
    buf[A_REDO..A_REDO + 8].copy_from_slice(&a.redo_lsn.to_le_bytes());
    buf[A_END..A_END + 8].copy_from_slice(&a.end_lsn.to_le_bytes());
    buf[A_EPOCH..A_EPOCH + 4].copy_from_slice(&a.epoch.to_le_bytes());
    buf[A_PAGE_COUNT..A_PAGE_COUNT + 8].copy_from_slice(&a.meta.page_count.to_le_bytes());
    buf[A_APP..A_APP + APP_BYTES].copy_from_slice(&a.meta.app);
    seal_page(page, a.seq, buf);
}

/// Reads the anchor sealed as store page `page` from `buf`; an error says why it is not one.
pub fn decode_anchor(page: u64, buf: &[u8]) -> Result<Anchor, String> {
    verify_page(page, buf)?;
    if buf[A_MAGIC..A_MAGIC + 8] != ANCHOR_MAGIC {
        return Err("no anchor magic".into());
    }
    let redo_lsn = rd_u64(buf, A_REDO);
    let end_lsn = rd_u64(buf, A_END);
    if redo_lsn > end_lsn || redo_lsn == 0 {
        return Err(format!("redo LSN {redo_lsn} is not within the log (end {end_lsn})"));
    }
    let mut app = [0u8; APP_BYTES];
    app.copy_from_slice(&buf[A_APP..A_APP + APP_BYTES]);
    Ok(Anchor {
        seq: rd_u64(buf, A_SEQ),
        redo_lsn,
        end_lsn,
        epoch: rd_u32(buf, A_EPOCH),
        meta: LogMeta { page_count: rd_u64(buf, A_PAGE_COUNT), app },
    })
}

/// Appends a `DELTA` entry (bytes `offset..offset + data.len()` of `page`) to `out`: kind,
/// three zero bytes, offset (u32), page (u64), length (u32), the bytes.
pub(crate) fn push_delta(out: &mut Vec<u8>, page: u64, offset: usize, data: &[u8]) {
    out.extend_from_slice(&[KIND_DELTA, 0, 0, 0]);
    out.extend_from_slice(&(offset as u32).to_le_bytes());
    out.extend_from_slice(&page.to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(data);
}

/// Appends an `INIT` entry (page `page` starts as zeros) to `out`.
pub(crate) fn push_init(out: &mut Vec<u8>, page: u64) {
    out.extend_from_slice(&[KIND_INIT, 0, 0, 0, 0, 0, 0, 0]);
    out.extend_from_slice(&page.to_le_bytes());
}

/// Writes a `META` entry into `out`.
pub(crate) fn meta_entry(out: &mut [u8; META_ENTRY_BYTES], meta: &LogMeta) {
    out[..ENTRY_HEADER_BYTES].fill(0);
    out[0] = KIND_META;
    out[8..16].copy_from_slice(&meta.page_count.to_le_bytes());
    out[ENTRY_HEADER_BYTES..].copy_from_slice(&meta.app);
}

/// Bytes of a `DELTA` entry's head (kind, offset, page, length).
pub const DELTA_HEAD_BYTES: usize = 20;

/// Appends the entries that turn `before` into `after` (one page each; only the payload, bytes
/// `PAGE_HEADER_BYTES..`, is compared) to `out`: one `DELTA` per changed run, runs closer than
/// an entry head merged, and the whole payload as one entry when that is no larger. Returns the
/// number of entries.
pub(crate) fn push_diff(out: &mut Vec<u8>, page: u64, before: &[u8], after: &[u8]) -> u32 {
    debug_assert_eq!(before.len(), after.len());
    let start_len = out.len();
    let n = after.len();
    let mut entries = 0u32;
    let mut i = PAGE_HEADER_BYTES;
    while i < n {
        // Skip equal bytes eight at a time.
        while i + 8 <= n && before[i..i + 8] == after[i..i + 8] {
            i += 8;
        }
        while i < n && before[i] == after[i] {
            i += 1;
        }
        if i == n {
            break;
        }
        let run_start = i;
        let mut run_end = i + 1;
        let mut j = run_end;
        // Extend the run while the next difference is within an entry head's size.
        while j < n {
            if before[j] != after[j] {
                run_end = j + 1;
                j += 1;
            } else if j - run_end >= DELTA_HEAD_BYTES {
                break;
            } else {
                j += 1;
            }
        }
        push_delta(out, page, run_start, &after[run_start..run_end]);
        entries += 1;
        i = run_end;
    }
    let payload = n - PAGE_HEADER_BYTES;
    if entries > 1 && out.len() - start_len > DELTA_HEAD_BYTES + payload {
        out.truncate(start_len);
        push_delta(out, page, PAGE_HEADER_BYTES, &after[PAGE_HEADER_BYTES..]);
        entries = 1;
    }
    entries
}

/// The most bytes the entries of one changed page of `page_size` bytes take in a group (an
/// `INIT` entry and one `DELTA` of the whole payload).
pub fn max_page_entry_bytes(page_size: usize) -> usize {
    ENTRY_HEADER_BYTES + DELTA_HEAD_BYTES + page_size - PAGE_HEADER_BYTES
}

/// Writes the header of a group whose entries (`body`, `entries` of them, CRC32C `body_crc`)
/// start at stream position `lsn`, into `header`.
pub(crate) fn group_header(
    header: &mut [u8; GROUP_HEADER_BYTES],
    body_crc: u32,
    body_len: usize,
    entries: u32,
    lsn: Lsn,
    epoch: u32,
) {
    let len = (GROUP_HEADER_BYTES + body_len) as u32;
    header[4..8].copy_from_slice(&len.to_le_bytes());
    header[8..16].copy_from_slice(&lsn.to_le_bytes());
    header[16..20].copy_from_slice(&epoch.to_le_bytes());
    header[20..24].copy_from_slice(&entries.to_le_bytes());
    let crc = crc32c::crc32c_append(body_crc, &header[4..]);
    header[0..4].copy_from_slice(&crc.to_le_bytes());
}

/// What recovery did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RecoveryReport {
    /// The anchor recovery started from (its sequence number).
    pub anchor_seq: u64,
    /// Where redo started.
    pub redo_lsn: Lsn,
    /// The end of the valid log (the first byte not replayed).
    pub end_lsn: Lsn,
    /// Groups replayed.
    pub groups: u64,
    /// Entries applied.
    pub entries: u64,
    /// Distinct pages changed by redo.
    pub pages: u64,
    /// Of which failed their checks before redo (torn or never completely written).
    pub torn_pages: u64,
    /// Wall-clock time of recovery, seconds.
    pub time_s: f64,
    /// Why the scan stopped (the first invalid group).
    pub stop_reason: String,
}

/// Where the log continues after opening: the new anchor and the next LSN.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LogResume {
    pub anchor: Anchor,
}

/// A reader of the log stream over the store's ring, one page cached.
struct StreamReader {
    geom: LogGeometry,
    cached: Option<u64>,
    page: Vec<u8>,
}

impl StreamReader {
    fn read<S: PageStore>(&mut self, store: &mut S, mut lsn: Lsn, out: &mut [u8]) -> Result<(), PageFileError> {
        let ps = self.geom.page_size as u64;
        let mut done = 0;
        while done < out.len() {
            let index = lsn / ps;
            if self.cached != Some(index) {
                store.read_page(self.geom.store_page_of(lsn), &mut self.page)?;
                self.cached = Some(index);
            }
            let off = (lsn % ps) as usize;
            let n = (self.geom.page_size - off).min(out.len() - done);
            out[done..done + n].copy_from_slice(&self.page[off..off + n]);
            done += n;
            lsn += n as u64;
        }
        Ok(())
    }
}

/// Pages being redone.
struct RedoPages {
    pages: HashMap<u64, (u64, Box<[u8]>)>,
    touched: std::collections::HashSet<u64>,
    torn: u64,
    page_size: usize,
}

impl RedoPages {
    fn get<S: PageStore>(&mut self, store: &mut S, page: u64) -> Result<&mut Box<[u8]>, PageFileError> {
        if !self.pages.contains_key(&page) {
            if self.pages.len() >= REDO_CACHE_PAGES {
                self.write_back(store)?;
            }
            let mut buf: Box<[u8]> = vec![0u8; self.page_size].into();
            store.read_page(page, &mut buf)?;
            let first = self.touched.insert(page);
            let version = match verify_page(page, &buf) {
                Ok(v) => v,
                Err(_) => {
                    if first {
                        self.torn += 1;
                    }
                    0
                }
            };
            self.pages.insert(page, (version, buf));
        }
        Ok(&mut self.pages.get_mut(&page).expect("inserted").1)
    }

    fn write_back<S: PageStore>(&mut self, store: &mut S) -> Result<(), PageFileError> {
        let mut pages: Vec<u64> = self.pages.keys().copied().collect();
        pages.sort_unstable();
        for p in pages {
            let (version, mut buf) = self.pages.remove(&p).expect("listed");
            seal_page(p, version.wrapping_add(1).max(1), &mut buf);
            store.write_page(p, &buf)?;
        }
        Ok(())
    }
}

/// Reads the current anchor of the log at `geom`.
pub(crate) fn read_anchor<S: PageStore>(store: &mut S, geom: &LogGeometry) -> Result<Anchor, PageFileError> {
    let mut buf = vec![0u8; geom.page_size];
    let mut best: Option<Anchor> = None;
    let mut reasons = Vec::new();
    for slot in 0..2 {
        let page = geom.anchor_page(slot);
        store.read_page(page, &mut buf)?;
        match decode_anchor(page, &buf) {
            Ok(a) => {
                if best.is_none_or(|b| a.seq > b.seq) {
                    best = Some(a);
                }
            }
            Err(e) => reasons.push(format!("anchor page {page}: {e}")),
        }
    }
    best.ok_or_else(|| PageFileError::Corrupt {
        page: geom.first_page,
        message: format!("no valid log anchor ({})", reasons.join("; ")),
    })
}

/// Writes anchor `a` into its slot (`a.seq` mod 2) and syncs.
pub(crate) fn write_anchor<S: PageStore>(store: &mut S, geom: &LogGeometry, a: &Anchor) -> Result<u64, PageFileError> {
    let mut buf = vec![0u8; geom.page_size];
    let page = geom.anchor_page(a.seq);
    encode_anchor(page, a, &mut buf);
    let mut t = store.write_page(page, &buf)?;
    t += store.sync()?;
    Ok(t)
}

/// Recovers the database whose log is at `geom`: replays the log from the current anchor,
/// writes the pages, syncs, and writes a new anchor (next sequence number and epoch; the log
/// continues at the next page boundary). See the module documentation.
pub(crate) fn recover<S: PageStore>(
    store: &mut S,
    geom: &LogGeometry,
) -> Result<(LogResume, RecoveryReport), PageFileError> {
    let start = Instant::now();
    let anchor = read_anchor(store, geom)?;
    let mut report = RecoveryReport { anchor_seq: anchor.seq, redo_lsn: anchor.redo_lsn, ..Default::default() };
    let mut meta = anchor.meta;
    let mut reader = StreamReader { geom: *geom, cached: None, page: vec![0u8; geom.page_size] };
    let mut redo = RedoPages {
        pages: HashMap::new(),
        touched: std::collections::HashSet::new(),
        torn: 0,
        page_size: geom.page_size,
    };
    let mut lsn = anchor.redo_lsn;
    let mut header = [0u8; GROUP_HEADER_BYTES];
    let mut body: Vec<u8> = Vec::new();
    let max_len = geom.max_group_bytes();
    loop {
        // A group may not reach into the ring's bytes that were not yet overwritten since redo
        // started: beyond one lap they are gone.
        if lsn + GROUP_HEADER_BYTES as u64 > anchor.redo_lsn + geom.ring_bytes() {
            report.stop_reason = "the scan reached one ring length past the redo LSN".into();
            break;
        }
        reader.read(store, lsn, &mut header)?;
        let len = rd_u32(&header, 4) as u64;
        let group_lsn = rd_u64(&header, 8);
        let epoch = rd_u32(&header, 16);
        let entries = rd_u32(&header, 20);
        if group_lsn != lsn || epoch != anchor.epoch {
            report.stop_reason = format!(
                "at LSN {lsn}: no group of this epoch (found LSN {group_lsn}, epoch {epoch}; expected epoch {})",
                anchor.epoch
            );
            break;
        }
        if len < GROUP_HEADER_BYTES as u64 || len > max_len || lsn + len > anchor.redo_lsn + geom.ring_bytes() {
            report.stop_reason = format!("at LSN {lsn}: group length {len} out of bounds");
            break;
        }
        body.resize((len - GROUP_HEADER_BYTES as u64) as usize, 0);
        reader.read(store, lsn + GROUP_HEADER_BYTES as u64, &mut body)?;
        let crc = crc32c::crc32c_append(crc32c::crc32c(&body), &header[4..]);
        if crc != rd_u32(&header, 0) {
            report.stop_reason = format!("at LSN {lsn}: checksum mismatch (a torn or unwritten group)");
            break;
        }
        // The group is valid: check its entries fully before applying any, so that a malformed
        // group (only a bug can make one with a valid checksum) changes nothing.
        parse_entries::<String>(&body, entries, geom.page_size, |_| Ok(())).map_err(|message| {
            PageFileError::Corrupt {
                page: geom.store_page_of(lsn),
                message: format!("log group at LSN {lsn}: {message}"),
            }
        })?;
        parse_entries::<PageFileError>(&body, entries, geom.page_size, |e| {
            match e {
                Entry::Delta { page, offset, data } => {
                    let buf = redo.get(store, page)?;
                    buf[offset..offset + data.len()].copy_from_slice(data);
                }
                Entry::Init { page } => {
                    let buf = redo.get(store, page)?;
                    buf.fill(0);
                }
                // The anchor's metadata is that of its end LSN: older entries are in it (and
                // an unlogged change made before the anchor must not be undone by them).
                Entry::Meta(m) if lsn >= anchor.end_lsn => meta = m,
                Entry::Meta(_) => {}
            }
            Ok(())
        })?;
        report.groups += 1;
        report.entries += entries as u64;
        lsn += len;
    }
    redo.write_back(store)?;
    report.pages = redo.touched.len() as u64;
    report.torn_pages = redo.torn;
    report.end_lsn = lsn;
    store.sync()?;
    // The log continues at the next page boundary in a new epoch: nothing written after this
    // point of the old epoch can ever be taken for a group.
    let next = geom.page_start(lsn + geom.page_size as u64 - 1);
    let new = Anchor { seq: anchor.seq + 1, redo_lsn: next, end_lsn: next, epoch: anchor.epoch.wrapping_add(1), meta };
    write_anchor(store, geom, &new)?;
    report.time_s = start.elapsed().as_secs_f64();
    Ok((LogResume { anchor: new }, report))
}

/// One entry of a group.
pub(crate) enum Entry<'a> {
    Delta { page: u64, offset: usize, data: &'a [u8] },
    Init { page: u64 },
    Meta(LogMeta),
}

/// Walks the `count` entries of `body`, checking every bound, calling `f` on each.
pub(crate) fn parse_entries<'a, E: From<String>>(
    body: &'a [u8],
    count: u32,
    page_size: usize,
    mut f: impl FnMut(Entry<'a>) -> Result<(), E>,
) -> Result<(), E> {
    let mut at = 0usize;
    for i in 0..count {
        let rest = &body[at..];
        if rest.len() < ENTRY_HEADER_BYTES {
            return Err(format!("entry {i} is cut off").into());
        }
        match rest[0] {
            KIND_DELTA => {
                if rest.len() < DELTA_HEAD_BYTES {
                    return Err(format!("entry {i} is cut off").into());
                }
                let offset = rd_u32(rest, 4) as usize;
                let page = rd_u64(rest, 8);
                let len = rd_u32(rest, 16) as usize;
                if offset < PAGE_HEADER_BYTES
                    || offset.saturating_add(len) > page_size
                    || rest.len() < DELTA_HEAD_BYTES + len
                {
                    return Err(format!("entry {i}: bytes {offset}..+{len} of page {page} out of bounds").into());
                }
                f(Entry::Delta { page, offset, data: &rest[DELTA_HEAD_BYTES..DELTA_HEAD_BYTES + len] })?;
                at += DELTA_HEAD_BYTES + len;
            }
            KIND_INIT => {
                f(Entry::Init { page: rd_u64(rest, 8) })?;
                at += ENTRY_HEADER_BYTES;
            }
            KIND_META => {
                if rest.len() < META_ENTRY_BYTES {
                    return Err(format!("entry {i} is cut off").into());
                }
                let mut app = [0u8; APP_BYTES];
                app.copy_from_slice(&rest[ENTRY_HEADER_BYTES..META_ENTRY_BYTES]);
                f(Entry::Meta(LogMeta { page_count: rd_u64(rest, 8), app }))?;
                at += META_ENTRY_BYTES;
            }
            k => return Err(format!("entry {i} has unknown kind {k}").into()),
        }
    }
    if at != body.len() {
        return Err(format!("{} bytes after the last entry", body.len() - at).into());
    }
    Ok(())
}

impl From<String> for PageFileError {
    fn from(message: String) -> Self {
        PageFileError::Corrupt { page: 0, message }
    }
}

/// Counters of the log (see `docs/engine.md` for the definitions).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LogStats {
    /// Groups appended (operations that changed something).
    pub groups: u64,
    /// Bytes appended (group headers included).
    pub bytes: u64,
    /// Log pages written (a partly filled page is written again as it fills).
    pub page_writes: u64,
    /// Syncs that made log writes durable (group commits).
    pub syncs: u64,
    /// Store time of log page writes and their syncs, nanoseconds.
    pub write_time_ns: u64,
    /// Checkpoints (anchors written), the final one of `close` included.
    pub checkpoints: u64,
    /// Checkpoints started because the log was running out of room.
    pub space_checkpoints: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashbuf_flash::MemStore;

    #[test]
    fn anchors_round_trip_and_reject_damage() {
        let mut app = [0u8; APP_BYTES];
        app[3] = 9;
        let a = Anchor { seq: 7, redo_lsn: 4096, end_lsn: 9000, epoch: 3, meta: LogMeta { page_count: 12, app } };
        let mut buf = vec![0u8; 512];
        encode_anchor(40, &a, &mut buf);
        assert_eq!(decode_anchor(40, &buf), Ok(a));
        assert!(decode_anchor(41, &buf).unwrap_err().contains("holds page 40"));
        buf[100] ^= 1;
        assert!(decode_anchor(40, &buf).unwrap_err().contains("checksum"));
    }

    fn apply(page: &mut [u8], body: &[u8], count: u32) {
        parse_entries::<String>(body, count, page.len(), |e| {
            match e {
                Entry::Delta { offset, data, .. } => page[offset..offset + data.len()].copy_from_slice(data),
                Entry::Init { .. } => page.fill(0),
                Entry::Meta(_) => {}
            }
            Ok(())
        })
        .unwrap();
    }

    #[test]
    fn a_diff_turns_the_before_image_into_the_after_image() {
        let mut rng = flashbuf_trace::rng::PortableRng::new(5);
        for round in 0..500 {
            let size = 128 + 8 * rng.below(64) as usize;
            let before: Vec<u8> = (0..size).map(|_| rng.below(4) as u8).collect();
            let mut after = before.clone();
            let changes = rng.below(if round % 10 == 0 { size as u64 } else { 6 });
            for _ in 0..changes {
                let at = PAGE_HEADER_BYTES + rng.below((size - PAGE_HEADER_BYTES) as u64) as usize;
                let len = (1 + rng.below(40) as usize).min(size - at);
                for b in &mut after[at..at + len] {
                    *b = rng.below(4) as u8;
                }
            }
            let mut out = Vec::new();
            let n = push_diff(&mut out, 3, &before, &after);
            assert!(out.len() <= max_page_entry_bytes(size), "round {round}: {} bytes", out.len());
            if before[PAGE_HEADER_BYTES..] == after[PAGE_HEADER_BYTES..] {
                assert_eq!((n, out.len()), (0, 0));
            }
            let mut redone = before.clone();
            apply(&mut redone, &out, n);
            assert_eq!(redone[PAGE_HEADER_BYTES..], after[PAGE_HEADER_BYTES..], "round {round}");
            // Applied to any mix of before and after bytes (a torn page), the same entries give
            // the after-image too.
            let cut = rng.below(size as u64 + 1) as usize;
            let mut torn = before.clone();
            torn[..cut].copy_from_slice(&after[..cut]);
            apply(&mut torn, &out, n);
            assert_eq!(torn[PAGE_HEADER_BYTES..], after[PAGE_HEADER_BYTES..], "round {round}");
        }
    }

    #[test]
    fn malformed_entries_are_errors() {
        let mut out = Vec::new();
        push_delta(&mut out, 1, 100, &[1, 2, 3]);
        assert!(parse_entries::<String>(&out, 1, 102, |_| Ok(())).unwrap_err().contains("out of bounds"));
        assert!(parse_entries::<String>(&out, 2, 512, |_| Ok(())).unwrap_err().contains("cut off"));
        assert!(parse_entries::<String>(&out[..10], 1, 512, |_| Ok(())).is_err());
        let mut bad = out.clone();
        bad[0] = 9;
        assert!(parse_entries::<String>(&bad, 1, 512, |_| Ok(())).unwrap_err().contains("unknown kind"));
        assert!(parse_entries::<String>(&out, 0, 512, |_| Ok(())).unwrap_err().contains("after the last entry"));
    }

    #[test]
    fn recovery_without_an_anchor_is_a_clear_error() {
        let geom = LogGeometry { first_page: 2, pages: 12, page_size: 512 };
        let e = recover(&mut MemStore::new(512, 14), &geom).unwrap_err().to_string();
        assert!(e.contains("no valid log anchor"), "{e}");
    }
}
