//! [`GatherStore`]: the write-gathering layer with data over any [`PageStore`], crash-safe.
//!
//! The paper keeps T in RAM only and leaves durability to future work (§7: "writing logical
//! addresses together with data, similarly to the FTL internal functioning"). This store does
//! exactly that: every physical sector begins with a 32-byte header, so T, P and f can be
//! rebuilt from the sectors alone after a crash ([`GatherStore::recover`]).
//!
//! # Sector layout (little-endian)
//!
//! ```text
//! offset  size  field
//!      0     4  magic  "FBG1"
//!      4     4  CRC32C (Castagnoli) of bytes 0..4 and 8..sector_size (header and payload)
//!      8     8  sequence number (u64): 0 for sectors written by `format`, then 1, 2, 3, ...
//!               one per write attempt, unique over the store's life
//!     16     4  logical sector (u32), or 0xFFFF_FFFF for a free sector
//!     20     4  physical sector this header was written to (u32; catches misdirected writes)
//!     24     4  |L|, logical sectors of the store (u32)
//!     28     4  |F|, physical sectors of the store (u32)
//!     32     …  payload: sector_size − 32 bytes
//! ```
//!
//! The header lives inside the sector, so the store's pages are `sector_size − 32` bytes (4064
//! bytes for 4 KiB sectors). The alternative — a separate journal of (physical, logical,
//! sequence) records — would keep 4 KiB payloads but turn every logical write into two
//! physical writes at different places, destroying the locality the layer exists to create. The
//! checksum covers the payload as well as the header, so a torn write (only a prefix of the new
//! bytes reached the medium) never passes for a complete one.
//!
//! # Recovery
//!
//! [`GatherStore::recover`] reads every physical sector. A sector is *valid* if its magic and
//! checksum are right, it was written where its header says, its geometry matches the store's
//! (taken from the first valid sector), its logical number is in range (a format header, with
//! sequence 0, only at its own position) and no other sector has the same non-zero sequence
//! number. For each logical sector the valid copy with the highest sequence wins (T); every
//! other sector is in the pool; f is the winner with the highest sequence (`|L| − 1` if no
//! sector was rewritten since `format`). Invalid sectors are never taken as empty: each is listed
//! in the [`RecoveryReport`] with what is wrong with it.
//!
//! The layer only ever writes to pool sectors, so a crash can damage at most the one sector
//! being written, which held nothing live. Recovery therefore accepts exactly one invalid sector
//! (bad magic or checksum) *if it is where the interrupted write went* — the first non-live
//! sector after f — and no logical sector lacks a copy: that sector is reported as
//! [`RecoveryReport::torn`], the unacknowledged write is treated as never made, and the sector
//! stays in the pool (the next write overwrites it). Anything else means damage the crash model
//! does not explain (media errors, foreign writes):
//!
//! * [`RecoverMode::Strict`] (the default to use) refuses with [`StoreError::Corrupt`], listing
//!   the damaged sectors and the logical sectors left without a copy;
//! * [`RecoverMode::Salvage`] recovers what is valid: damaged sectors are rewritten as free
//!   sectors (so the next recovery is clean) and every logical sector left without a copy is
//!   rewritten as zeros; both lists are in the report. A damaged sector may have held the newest
//!   copy of a logical sector, which then reads an older valid copy: salvage is for getting data
//!   out, not for carrying on silently.
//!
//! Guarantee: every write that `write_page` acknowledged *and* the store made durable reads back
//! after recovery; the one write in flight at the crash reads back old or new, never garbage.
//! Over a [`crate::FileStore`] a write is durable when it returns only with
//! `sync_each_write` (else after [`PageStore::sync`]); over the page cache without syncing,
//! several writes may be lost or torn at once, which recovery reports as damage.
//! A crash during [`GatherStore::format`] leaves a store that recovery refuses: format again.

use std::fmt;

use super::mapping::{Mapping, UNMAPPED};
use super::{GatherStats, PoolSize, sizes};
use crate::device::{DeviceError, DeviceStats, Nanos};
use crate::store::{PageStore, StoreError};

/// Bytes of the header at the start of every physical sector.
pub const HEADER_BYTES: usize = 32;

const MAGIC: [u8; 4] = *b"FBG1";
/// Logical number of a free sector.
const FREE: u32 = u32::MAX;
/// Recovery's mark for a physical sector without a valid header (never a logical number: those
/// are below |L| < |F| < 2³² − 1).
const INVALID: u32 = u32::MAX - 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Header {
    seq: u64,
    logical: u32,
    physical: u32,
    logical_sectors: u32,
    physical_sectors: u32,
}

fn checksum(sector: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&sector[0..4]), &sector[8..])
}

/// Writes `h` into the first 32 bytes of `sector` (whose payload is in place) and seals it.
fn seal(sector: &mut [u8], h: &Header) {
    sector[0..4].copy_from_slice(&MAGIC);
    sector[8..16].copy_from_slice(&h.seq.to_le_bytes());
    sector[16..20].copy_from_slice(&h.logical.to_le_bytes());
    sector[20..24].copy_from_slice(&h.physical.to_le_bytes());
    sector[24..28].copy_from_slice(&h.logical_sectors.to_le_bytes());
    sector[28..32].copy_from_slice(&h.physical_sectors.to_le_bytes());
    let crc = checksum(sector);
    sector[4..8].copy_from_slice(&crc.to_le_bytes());
}

fn u32_at(s: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(s[at..at + 4].try_into().expect("4 bytes"))
}

fn open(sector: &[u8]) -> Result<Header, SectorFaultKind> {
    if sector[0..4] != MAGIC {
        return Err(SectorFaultKind::BadMagic);
    }
    if u32_at(sector, 4) != checksum(sector) {
        return Err(SectorFaultKind::BadChecksum);
    }
    Ok(Header {
        seq: u64::from_le_bytes(sector[8..16].try_into().expect("8 bytes")),
        logical: u32_at(sector, 16),
        physical: u32_at(sector, 20),
        logical_sectors: u32_at(sector, 24),
        physical_sectors: u32_at(sector, 28),
    })
}

/// What is wrong with a physical sector found by recovery.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SectorFaultKind {
    /// The sector does not start with the magic number (never formatted, or overwritten).
    BadMagic,
    /// Header or payload do not match the checksum (a torn or corrupted write).
    BadChecksum,
    /// The header says it was written to another physical sector.
    Misplaced {
        /// The physical sector the header names.
        recorded: u64,
    },
    /// The header belongs to a store of another geometry.
    ForeignGeometry {
        /// |L| in the header.
        logical_sectors: u64,
        /// |F| in the header.
        physical_sectors: u64,
    },
    /// The logical sector number is out of range, or a format header (sequence 0) sits away
    /// from its own position.
    BadLogical {
        /// The logical sector the header names.
        logical: u64,
    },
    /// Another sector carries the same non-zero sequence number.
    DuplicateSequence {
        /// The sequence number.
        seq: u64,
    },
}

impl fmt::Display for SectorFaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SectorFaultKind::BadMagic => f.write_str("no header (bad magic)"),
            SectorFaultKind::BadChecksum => f.write_str("bad checksum"),
            SectorFaultKind::Misplaced { recorded } => write!(f, "header written for sector {recorded}"),
            SectorFaultKind::ForeignGeometry { logical_sectors, physical_sectors } => {
                write!(f, "header of another store ({logical_sectors} logical / {physical_sectors} physical sectors)")
            }
            SectorFaultKind::BadLogical { logical } => write!(f, "impossible logical sector {logical}"),
            SectorFaultKind::DuplicateSequence { seq } => write!(f, "sequence number {seq} found twice"),
        }
    }
}

/// A physical sector recovery could not use.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SectorFault {
    /// Physical sector.
    pub physical: u64,
    /// What is wrong with it.
    pub kind: SectorFaultKind,
}

/// What [`GatherStore::recover`] does with damage beyond a torn last write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecoverMode {
    /// Refuse ([`StoreError::Corrupt`] naming the damage).
    #[default]
    Strict,
    /// Recover what is valid; rewrite damaged sectors as free and lost logical sectors as zeros;
    /// report both.
    Salvage,
}

/// What recovery found, sector by sector where something was wrong.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct RecoveryReport {
    /// |L|.
    pub logical_sectors: u64,
    /// |F|.
    pub physical_sectors: u64,
    /// Valid sectors holding the newest copy of a logical sector.
    pub live: u64,
    /// Valid sectors holding an older copy (back in the pool).
    pub stale: u64,
    /// Valid sectors marked free.
    pub free: u64,
    /// The sector judged to be the write interrupted by the crash (see the module docs).
    pub torn: Option<u64>,
    /// Every other invalid sector.
    pub damaged: Vec<SectorFault>,
    /// Logical sectors with no valid copy.
    pub missing: Vec<u64>,
    /// Salvage only: the logical sectors in `missing`, rewritten as zeros.
    pub zeroed: Vec<u64>,
    /// Highest sequence number found (the next write uses a higher one).
    pub last_sequence: u64,
    /// f after recovery.
    pub last_written: u64,
}

impl RecoveryReport {
    /// Nothing to report beyond a torn last write: every logical sector has its newest
    /// acknowledged copy.
    pub fn is_consistent(&self) -> bool {
        self.damaged.is_empty() && self.missing.is_empty()
    }

    /// A one-paragraph description of the damage, for errors and logs.
    pub fn describe_damage(&self) -> String {
        const SHOWN: usize = 8;
        let mut s = String::new();
        if !self.damaged.is_empty() {
            s += &format!("{} damaged sector(s): ", self.damaged.len());
            let items: Vec<String> =
                self.damaged.iter().take(SHOWN).map(|f| format!("sector {} ({})", f.physical, f.kind)).collect();
            s += &items.join(", ");
            if self.damaged.len() > SHOWN {
                s += &format!(", and {} more", self.damaged.len() - SHOWN);
            }
        }
        if !self.missing.is_empty() {
            if !s.is_empty() {
                s += "; ";
            }
            s += &format!("{} logical sector(s) without a valid copy: ", self.missing.len());
            let items: Vec<String> = self.missing.iter().take(SHOWN).map(|l| l.to_string()).collect();
            s += &items.join(", ");
            if self.missing.len() > SHOWN {
                s += &format!(", and {} more", self.missing.len() - SHOWN);
            }
        }
        s
    }
}

/// The write-gathering layer over a page store, with per-sector headers (see the module docs).
///
/// Its pages are the logical sectors: `pages()` is |L| and `page_size()` is the underlying
/// sector size minus [`HEADER_BYTES`]. Physical sectors are pages `0..|F|` of the store (wrap the
/// store in a [`SectorWindow`] to use another range). Reads check the sector's header and
/// checksum ([`StoreError::Corrupt`] if wrong). `stats()` are the underlying store's counters.
pub struct GatherStore<S: PageStore> {
    store: S,
    map: Mapping,
    /// Last sequence number used.
    seq: u64,
    /// One physical sector: the bounce buffer of every read and write.
    sector: Vec<u8>,
    stats: GatherStats,
}

impl<S: PageStore> GatherStore<S> {
    /// Formats the first `logical + pool` sectors of `store` (logical sector `i` at physical `i`,
    /// zero payload; the rest free; sequence 0), syncs, and returns the layer. Errors: sizes as
    /// in [`super::GatherConfig`], a store too small, or sectors too small for the header.
    pub fn format(mut store: S, logical: u64, pool: PoolSize) -> Result<Self, StoreError> {
        let (l, f) = sizes(logical, pool)?;
        check_geometry(&store, l, f)?;
        let mut sector = vec![0u8; store.page_size()];
        for p in 0..f {
            let logical = if p < l { p } else { FREE };
            sector[HEADER_BYTES..].fill(0);
            let h = Header { seq: 0, logical, physical: p, logical_sectors: l, physical_sectors: f };
            seal(&mut sector, &h);
            store.write_page(p as u64, &sector)?;
        }
        store.sync()?;
        Ok(GatherStore { store, map: Mapping::sequential(l, f), seq: 0, sector, stats: GatherStats::default() })
    }

    /// Rebuilds the layer from the headers on `store` (see the module docs for what is accepted
    /// and what `mode` does with the rest). Reads every physical sector once.
    pub fn recover(mut store: S, mode: RecoverMode) -> Result<(Self, RecoveryReport), StoreError> {
        let page_size = store.page_size();
        if page_size <= HEADER_BYTES {
            return Err(config(format!("sectors of {page_size} bytes cannot hold the {HEADER_BYTES}-byte header")));
        }
        let mut sector = vec![0u8; page_size];
        let mut limit = store.pages().min(u32::MAX as u64) as u32;
        let mut geometry: Option<(u32, u32)> = None;
        // Per physical sector: (sequence, logical or FREE) of a valid header, INVALID otherwise.
        let mut valid: Vec<(u64, u32)> = Vec::new();
        let mut faults: Vec<SectorFault> = Vec::new();
        let mut p = 0u32;
        while p < limit {
            store.read_page(p as u64, &mut sector)?;
            let verdict = open(&sector).and_then(|h| {
                let (gl, gf) = *geometry.get_or_insert((h.logical_sectors, h.physical_sectors));
                if (h.logical_sectors, h.physical_sectors) != (gl, gf) {
                    return Err(SectorFaultKind::ForeignGeometry {
                        logical_sectors: h.logical_sectors as u64,
                        physical_sectors: h.physical_sectors as u64,
                    });
                }
                if h.physical != p || p >= gf {
                    return Err(SectorFaultKind::Misplaced { recorded: h.physical as u64 });
                }
                let bad_logical = h.logical != FREE && (h.logical >= gl || (h.seq == 0 && h.logical != p));
                if bad_logical {
                    return Err(SectorFaultKind::BadLogical { logical: h.logical as u64 });
                }
                Ok(h)
            });
            if let Some((l, f)) = geometry
                && valid.is_empty()
            {
                // The first valid header fixes the geometry: check it, then size the tables.
                if l == 0 || l >= f || f as u64 > store.pages() {
                    return Err(StoreError::Corrupt {
                        page: p as u64,
                        message: format!(
                            "header names an impossible geometry ({l} logical / {f} physical sectors) for a store \
                             of {} sectors",
                            store.pages()
                        ),
                    });
                }
                limit = f;
                valid = vec![(0, INVALID); f as usize];
            }
            match verdict {
                Ok(h) => valid[p as usize] = (h.seq, h.logical),
                Err(kind) => faults.push(SectorFault { physical: p as u64, kind }),
            }
            p += 1;
        }
        let Some((l, f)) = geometry else {
            return Err(StoreError::Corrupt {
                page: 0,
                message: "no sector carries a valid gathering-layer header: the store was never formatted, or is \
                          not a gathering store"
                    .into(),
            });
        };
        // Sectors read before the geometry was known beyond |F| cannot exist (the first valid
        // sector is below |F|), but faults found past it can: keep only sectors of the store.
        faults.retain(|x| x.physical < f as u64);

        // Non-zero sequence numbers must be unique.
        let mut by_seq: Vec<(u64, u32)> = (0..f)
            .filter(|&p| valid[p as usize].1 != INVALID && valid[p as usize].0 > 0)
            .map(|p| (valid[p as usize].0, p))
            .collect();
        by_seq.sort_unstable();
        for w in by_seq.windows(2) {
            if w[0].0 == w[1].0 {
                for &(seq, p) in w {
                    if valid[p as usize].1 != INVALID {
                        valid[p as usize].1 = INVALID;
                        faults
                            .push(SectorFault { physical: p as u64, kind: SectorFaultKind::DuplicateSequence { seq } });
                    }
                }
            }
        }
        faults.sort_by_key(|x| x.physical);

        // Winners: the highest sequence per logical sector.
        let mut report = RecoveryReport { logical_sectors: l as u64, physical_sectors: f as u64, ..Default::default() };
        let mut best: Vec<(u64, u32)> = vec![(0, UNMAPPED); l as usize];
        for p in 0..f {
            let (seq, logical) = valid[p as usize];
            if logical == INVALID {
                continue; // a fault
            }
            report.last_sequence = report.last_sequence.max(seq);
            if logical == FREE {
                report.free += 1;
                continue;
            }
            let b = &mut best[logical as usize];
            if b.1 == UNMAPPED || seq > b.0 {
                if b.1 != UNMAPPED {
                    report.stale += 1;
                }
                *b = (seq, p);
            } else {
                report.stale += 1;
            }
        }
        let mut table = Vec::with_capacity(l as usize);
        let mut newest: Option<(u64, u32)> = None;
        for (logical, &(seq, p)) in best.iter().enumerate() {
            table.push(p);
            if p == UNMAPPED {
                report.missing.push(logical as u64);
            } else {
                report.live += 1;
                if seq > 0 && newest.is_none_or(|(s, _)| seq > s) {
                    newest = Some((seq, p));
                }
            }
        }
        let last = newest.map_or(l - 1, |(_, p)| p);
        let mut map = Mapping::from_table(table, f, last);

        // A lone unreadable sector where the interrupted write went is that write, torn.
        if faults.len() == 1
            && report.missing.is_empty()
            && matches!(faults[0].kind, SectorFaultKind::BadMagic | SectorFaultKind::BadChecksum)
            && faults[0].physical == map.target() as u64
        {
            report.torn = Some(faults[0].physical);
            faults.clear();
        }
        report.damaged = faults;

        let mut seq = report.last_sequence;
        if !report.is_consistent() {
            if mode == RecoverMode::Strict {
                let first = report.damaged.first().map_or_else(|| report.missing[0], |x| x.physical);
                return Err(StoreError::Corrupt {
                    page: first,
                    message: format!(
                        "recovery refused: {} (salvage mode recovers the rest and reports these)",
                        report.describe_damage()
                    ),
                });
            }
            // Salvage: scrub damaged sectors into valid free ones, then give every lost logical
            // sector a zero copy the way the layer writes (next pool sector after f).
            let mut put = |physical: u32, logical: u32, seq: u64| {
                let h = Header { seq, logical, physical, logical_sectors: l, physical_sectors: f };
                sector[HEADER_BYTES..].fill(0);
                seal(&mut sector, &h);
                store.write_page(physical as u64, &sector)
            };
            for fault in &report.damaged {
                seq += 1;
                put(fault.physical as u32, FREE, seq)?;
            }
            for &logical in &report.missing {
                let target = map.target();
                seq += 1;
                put(target, logical as u32, seq)?;
                map.commit_unmapped(logical as u32, target);
                report.zeroed.push(logical);
            }
            store.sync()?;
        }
        report.last_written = map.last() as u64;
        debug_assert!(map.check().is_ok(), "{:?}", map.check());
        Ok((GatherStore { store, map, seq, sector, stats: GatherStats::default() }, report))
    }

    /// The store underneath.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The store underneath, mutably (e.g. to reset counters). Writing to it directly bypasses
    /// the layer and will be reported as damage by recovery.
    pub fn store_mut(&mut self) -> &mut S {
        &mut self.store
    }

    /// Unwraps the store (e.g. to simulate a crash in tests: drop the layer, keep the store).
    pub fn into_inner(self) -> S {
        self.store
    }

    /// The layer's counters (logical operations, distances).
    pub fn gather_stats(&self) -> &GatherStats {
        &self.stats
    }

    /// Zeroes the layer's counters.
    pub fn reset_gather_stats(&mut self) {
        self.stats = GatherStats::default();
    }

    /// Physical sector holding logical sector `l`.
    pub fn physical_of(&self, l: u64) -> Result<u64, StoreError> {
        Ok(self.map.physical_of(self.check(l)?) as u64)
    }

    /// The physical sector the next write will go to.
    pub fn next_target(&self) -> u64 {
        self.map.target() as u64
    }

    /// The last written physical sector (f).
    pub fn last_written(&self) -> u64 {
        self.map.last() as u64
    }

    /// |F|.
    pub fn physical_sectors(&self) -> u64 {
        self.map.physical() as u64
    }

    /// |P|.
    pub fn pool_sectors(&self) -> u64 {
        self.map.pool_len() as u64
    }

    /// The last sequence number used.
    pub fn sequence(&self) -> u64 {
        self.seq
    }

    /// Checks the mapping's invariants (T injective, P its complement).
    pub fn check_invariants(&self) -> Result<(), String> {
        self.map.check()
    }

    #[inline]
    fn check(&self, l: u64) -> Result<u32, StoreError> {
        if l >= self.map.logical() as u64 {
            return Err(StoreError::OutOfRange { page: l, pages: self.map.logical() as u64 });
        }
        Ok(l as u32)
    }

    #[inline]
    fn check_buf(&self, len: usize) -> Result<(), StoreError> {
        let expected = self.sector.len() - HEADER_BYTES;
        if len != expected {
            return Err(StoreError::BadBuffer { expected, got: len });
        }
        Ok(())
    }
}

fn config(message: String) -> StoreError {
    StoreError::Device(DeviceError::Config(message))
}

fn check_geometry<S: PageStore>(store: &S, l: u32, f: u32) -> Result<(), StoreError> {
    let page_size = store.page_size();
    if page_size <= HEADER_BYTES {
        return Err(config(format!("sectors of {page_size} bytes cannot hold the {HEADER_BYTES}-byte header")));
    }
    if f as u64 > store.pages() {
        return Err(config(format!(
            "{l} logical sectors plus a pool of {} need {f} physical sectors; the store has {}",
            f - l,
            store.pages()
        )));
    }
    Ok(())
}

impl<S: PageStore> PageStore for GatherStore<S> {
    fn page_size(&self) -> usize {
        self.sector.len() - HEADER_BYTES
    }

    fn pages(&self) -> u64 {
        self.map.logical() as u64
    }

    fn read_page(&mut self, page: u64, buf: &mut [u8]) -> Result<Nanos, StoreError> {
        let l = self.check(page)?;
        self.check_buf(buf.len())?;
        let p = self.map.physical_of(l);
        let t = self.store.read_page(p as u64, &mut self.sector)?;
        match open(&self.sector) {
            Ok(h) if h.logical == l && h.physical == p => {}
            Ok(h) => {
                return Err(StoreError::Corrupt {
                    page,
                    message: format!(
                        "physical sector {p} holds logical sector {} written for sector {}",
                        h.logical, h.physical
                    ),
                });
            }
            Err(kind) => return Err(StoreError::Corrupt { page, message: format!("physical sector {p}: {kind}") }),
        }
        buf.copy_from_slice(&self.sector[HEADER_BYTES..]);
        self.stats.reads += 1;
        Ok(t)
    }

    fn write_page(&mut self, page: u64, buf: &[u8]) -> Result<Nanos, StoreError> {
        let l = self.check(page)?;
        self.check_buf(buf.len())?;
        let target = self.map.target();
        self.seq += 1; // consumed even if the write fails: sequence numbers stay unique
        self.sector[HEADER_BYTES..].copy_from_slice(buf);
        let h = Header {
            seq: self.seq,
            logical: l,
            physical: target,
            logical_sectors: self.map.logical(),
            physical_sectors: self.map.physical(),
        };
        seal(&mut self.sector, &h);
        let t = self.store.write_page(target as u64, &self.sector)?;
        let d = self.map.commit(l, target);
        self.stats.record_write(d);
        Ok(t)
    }

    fn sync(&mut self) -> Result<Nanos, StoreError> {
        self.store.sync()
    }

    fn stats(&self) -> DeviceStats {
        self.store.stats()
    }

    fn label(&self) -> String {
        format!("gather/pool{}/{}", self.map.pool_len(), self.store.label())
    }
}

/// A [`PageStore`] view of pages `first .. first + pages` of another store (e.g. a file whose
/// first sector holds a marker).
pub struct SectorWindow<S: PageStore> {
    inner: S,
    first: u64,
    pages: u64,
}

impl<S: PageStore> SectorWindow<S> {
    /// The window; it must fit inside `inner` ([`StoreError::OutOfRange`] if not).
    pub fn new(inner: S, first: u64, pages: u64) -> Result<Self, StoreError> {
        let end = first.checked_add(pages).filter(|&e| e <= inner.pages());
        if end.is_none() {
            return Err(StoreError::OutOfRange { page: first.saturating_add(pages), pages: inner.pages() });
        }
        Ok(SectorWindow { inner, first, pages })
    }

    /// The store underneath.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Unwraps the store.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S: PageStore> PageStore for SectorWindow<S> {
    fn page_size(&self) -> usize {
        self.inner.page_size()
    }
    fn pages(&self) -> u64 {
        self.pages
    }
    #[inline]
    fn read_page(&mut self, page: u64, buf: &mut [u8]) -> Result<Nanos, StoreError> {
        if page >= self.pages {
            return Err(StoreError::OutOfRange { page, pages: self.pages });
        }
        self.inner.read_page(self.first + page, buf)
    }
    #[inline]
    fn write_page(&mut self, page: u64, buf: &[u8]) -> Result<Nanos, StoreError> {
        if page >= self.pages {
            return Err(StoreError::OutOfRange { page, pages: self.pages });
        }
        self.inner.write_page(self.first + page, buf)
    }
    fn sync(&mut self) -> Result<Nanos, StoreError> {
        self.inner.sync()
    }
    fn stats(&self) -> DeviceStats {
        self.inner.stats()
    }
    fn label(&self) -> String {
        format!("{}[{}..{}]", self.inner.label(), self.first, self.first + self.pages)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemStore;

    fn payload(n: usize, tag: u64) -> Vec<u8> {
        (0..n).map(|i| (i as u64).wrapping_mul(2654435761).wrapping_add(tag) as u8).collect()
    }

    #[test]
    fn header_layout_is_as_documented() {
        let mut s = vec![0xAAu8; 64];
        let h = Header { seq: 0x0102030405060708, logical: 7, physical: 9, logical_sectors: 10, physical_sectors: 15 };
        seal(&mut s, &h);
        assert_eq!(&s[0..4], b"FBG1");
        assert_eq!(&s[8..16], &[8, 7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(&s[16..32], &[7, 0, 0, 0, 9, 0, 0, 0, 10, 0, 0, 0, 15, 0, 0, 0]);
        let crc = crc32c::crc32c(&[&s[0..4], &s[8..]].concat());
        assert_eq!(u32_at(&s, 4), crc);
        assert_eq!(open(&s), Ok(h));
        for i in [0usize, 5, 20, 63] {
            let mut bad = s.clone();
            bad[i] ^= 0x10;
            assert!(open(&bad).is_err(), "flip at byte {i} undetected");
        }
    }

    #[test]
    fn format_write_read_recover() {
        let mut g = GatherStore::format(MemStore::new(128, 20), 10, PoolSize::Sectors(5)).unwrap();
        assert_eq!((g.pages(), g.page_size(), g.physical_sectors()), (10, 96, 15));
        let mut buf = vec![1u8; 96];
        g.read_page(3, &mut buf).unwrap();
        assert!(buf.iter().all(|&b| b == 0), "a never-written sector reads as zeros");
        for (i, l) in [3u64, 3, 9, 0, 3].into_iter().enumerate() {
            g.write_page(l, &payload(96, i as u64)).unwrap();
            g.check_invariants().unwrap();
        }
        let fresh = GatherStore::format(MemStore::new(128, 20), 10, PoolSize::Sectors(5)).unwrap();
        let (_, report) = GatherStore::recover(fresh.into_inner(), RecoverMode::Strict).unwrap();
        assert_eq!((report.live, report.stale, report.free, report.last_written), (10, 0, 5, 9));
        let (mut r, report) = GatherStore::recover(g.into_inner(), RecoverMode::Strict).unwrap();
        assert!(report.is_consistent() && report.torn.is_none(), "{report:?}");
        // Sectors 10..15 took the five writes; the format copies of 0, 3, 9 and the first two
        // copies of 3 (sectors 10, 11) are stale; no sector is still marked free.
        assert_eq!((report.live, report.stale, report.free, report.last_sequence), (10, 5, 0, 5));
        assert_eq!(report.last_written, 14);
        for (l, tag) in [(3u64, 4u64), (9, 2), (0, 3)] {
            r.read_page(l, &mut buf).unwrap();
            assert_eq!(buf, payload(96, tag), "logical {l}");
        }
        r.write_page(5, &payload(96, 9)).unwrap();
        assert_eq!(r.last_written(), 0, "wraps to sector 0, the format copy of logical 0");
    }

    #[test]
    fn bad_geometry_is_an_error() {
        assert!(GatherStore::format(MemStore::new(32, 20), 10, PoolSize::Sectors(5)).is_err(), "no payload room");
        let e = GatherStore::format(MemStore::new(64, 12), 10, PoolSize::Sectors(5)).err().unwrap().to_string();
        assert!(e.contains("need 15 physical sectors") && e.contains("has 12"), "{e}");
        assert!(GatherStore::format(MemStore::new(64, 12), 10, PoolSize::Sectors(0)).is_err());
        let e = GatherStore::recover(MemStore::new(64, 12), RecoverMode::Strict).err().unwrap().to_string();
        assert!(e.contains("never formatted"), "{e}");
    }

    #[test]
    fn a_window_shifts_and_bounds_pages() {
        let mut w = SectorWindow::new(MemStore::new(16, 10), 1, 8).unwrap();
        w.write_page(0, &[7u8; 16]).unwrap();
        assert!(w.write_page(8, &[7u8; 16]).is_err());
        let mut inner = w.into_inner();
        let mut b = [0u8; 16];
        inner.read_page(1, &mut b).unwrap();
        assert_eq!(b, [7u8; 16]);
        assert!(SectorWindow::new(inner, 3, 8).is_err());
    }
}
