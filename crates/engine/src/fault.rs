//! A fault-injecting [`PageStore`] for crash tests: power cuts that lose unsynced writes and
//! tear the write in flight.
//!
//! [`FaultStore`] wraps any store (the *durable image*: what survives a power cut) and keeps
//! every write not yet made durable by [`sync`](PageStore::sync) in a *volatile image* on top
//! of it, as a disk's write cache or an operating system's page cache does. Reads see the
//! volatile image. A sync writes the volatile pages into the durable image, in the order they
//! were first written, and syncs the inner store.
//!
//! A **power cut** happens either when the write counter reaches the configured
//! [`crash_at_write`](FaultConfig::crash_at_write) or when a test calls
//! [`FaultStore::cut_power`]. At that moment:
//!
//! * the write in flight (the one that reached the crash point) is **torn**: its first `k`
//!   bytes reach the durable image and the rest of the page keeps its durable bytes, for a
//!   seeded random `k` in `0..=page_size` (0: the write was lost, `page_size`: it completed);
//! * every other unsynced write is **lost** — or, with
//!   [`keep_unsynced`](FaultConfig::keep_unsynced) above zero, each independently survives
//!   with that probability, in any order (a drive that reorders its cache);
//! * from then on every operation fails with an I/O error ("power cut"), so the engine above
//!   stops as a process would; the test takes the durable image with
//!   [`FaultStore::into_durable`] and reopens it.
//!
//! Everything random derives from [`seed`](FaultConfig::seed) (the portable ChaCha8 stream of
//! the trace crate): the same seed and the same sequence of writes give the same image. (The
//! sequence of writes of a multi-threaded run depends on thread scheduling; the faults applied
//! to a given sequence do not.)
//!
//! The model assumes what the engine's log assumes of real media (see `docs/engine.md`): a
//! page write that is cut short leaves every byte either old or new (here: a new prefix and an
//! old suffix), a completed sync makes every earlier write durable, and nothing is corrupted
//! that was not being written.

use std::collections::HashMap;
use std::io;

use flashbuf_flash::{DeviceStats, Nanos, PageStore, StoreError};
use flashbuf_trace::rng::PortableRng;

/// When and how a [`FaultStore`] loses power.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultConfig {
    /// Seed of the tear points and of which unsynced writes survive.
    pub seed: u64,
    /// Cut power during the write with this number (writes are numbered from 1 since the
    /// store was wrapped); `None`: only [`FaultStore::cut_power`] cuts it.
    pub crash_at_write: Option<u64>,
    /// Probability that an unsynced write other than the torn one survives a power cut
    /// (0: every unsynced write is lost).
    pub keep_unsynced: f64,
}

impl Default for FaultConfig {
    fn default() -> Self {
        FaultConfig { seed: 1, crash_at_write: None, keep_unsynced: 0.0 }
    }
}

/// What a power cut did (for test messages).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrashReport {
    /// Writes issued before the cut (the torn one included).
    pub writes: u64,
    /// Unsynced pages at the cut (the torn one not included).
    pub unsynced: u64,
    /// Of which survived (only with `keep_unsynced` > 0).
    pub kept: u64,
    /// The torn page and how many of its bytes were written, if a write was in flight.
    pub torn: Option<(u64, usize)>,
}

/// A [`PageStore`] with a durable and a volatile image and seeded power cuts (see the module
/// documentation).
pub struct FaultStore<S: PageStore> {
    durable: S,
    /// Unsynced pages: page → (order of first write since the last sync, bytes).
    volatile: HashMap<u64, (u64, Box<[u8]>)>,
    config: FaultConfig,
    rng: PortableRng,
    writes: u64,
    syncs: u64,
    order: u64,
    crashed: Option<CrashReport>,
    scratch: Box<[u8]>,
}

impl<S: PageStore> FaultStore<S> {
    /// Wraps `durable`, whose contents are the durable image from now on.
    pub fn new(durable: S, config: FaultConfig) -> Self {
        let rng = PortableRng::new(config.seed);
        let scratch = vec![0u8; durable.page_size()].into();
        FaultStore {
            durable,
            volatile: HashMap::new(),
            config,
            rng,
            writes: 0,
            syncs: 0,
            order: 0,
            crashed: None,
            scratch,
        }
    }

    /// Writes issued so far (the write counter that `crash_at_write` compares with).
    pub fn writes(&self) -> u64 {
        self.writes
    }

    /// Syncs completed so far.
    pub fn syncs(&self) -> u64 {
        self.syncs
    }

    /// Pages written but not yet synced.
    pub fn unsynced_pages(&self) -> usize {
        self.volatile.len()
    }

    /// Sets the write during which power fails (`None`: only [`cut_power`](Self::cut_power)).
    pub fn set_crash_at_write(&mut self, write: Option<u64>) {
        self.config.crash_at_write = write;
    }

    /// Whether power has been cut, and what the cut did.
    pub fn crash_report(&self) -> Option<&CrashReport> {
        self.crashed.as_ref()
    }

    /// Cuts power now, with no write in flight: unsynced writes are lost (or kept, as
    /// configured). Does nothing if power is already off.
    pub fn cut_power(&mut self) -> Result<(), StoreError> {
        self.crash(None)
    }

    /// The durable image (after a power cut: what survived it; otherwise the synced state,
    /// unsynced writes dropped).
    pub fn into_durable(self) -> S {
        self.durable
    }

    fn power_cut_error(&self) -> StoreError {
        StoreError::Io { path: self.durable.label(), source: io::Error::other("power cut (fault injection)") }
    }

    fn crash(&mut self, in_flight: Option<(u64, &[u8])>) -> Result<(), StoreError> {
        if self.crashed.is_some() {
            return Ok(());
        }
        let mut report =
            CrashReport { writes: self.writes, unsynced: self.volatile.len() as u64, ..Default::default() };
        // Surviving unsynced writes land in a random order (the drive reorders its cache).
        let mut pending: Vec<(u64, u64)> = self.volatile.iter().map(|(&p, (o, _))| (*o, p)).collect();
        pending.sort_unstable();
        if self.config.keep_unsynced > 0.0 {
            for (_, page) in pending {
                if self.rng.chance(self.config.keep_unsynced) {
                    let (_, bytes) = self.volatile.remove(&page).expect("pending page");
                    self.durable.write_page(page, &bytes)?;
                    report.kept += 1;
                }
            }
        }
        self.volatile.clear();
        if let Some((page, bytes)) = in_flight {
            let cut = self.rng.below(bytes.len() as u64 + 1) as usize;
            self.durable.read_page(page, &mut self.scratch)?;
            self.scratch[..cut].copy_from_slice(&bytes[..cut]);
            self.durable.write_page(page, &self.scratch)?;
            report.torn = Some((page, cut));
        }
        self.durable.sync()?;
        self.crashed = Some(report);
        Ok(())
    }
}

impl<S: PageStore> PageStore for FaultStore<S> {
    fn page_size(&self) -> usize {
        self.durable.page_size()
    }

    fn pages(&self) -> u64 {
        self.durable.pages()
    }

    fn read_page(&mut self, page: u64, buf: &mut [u8]) -> Result<Nanos, StoreError> {
        if self.crashed.is_some() {
            return Err(self.power_cut_error());
        }
        match self.volatile.get(&page) {
            Some((_, bytes)) if buf.len() == bytes.len() => {
                buf.copy_from_slice(bytes);
                Ok(0)
            }
            _ => self.durable.read_page(page, buf),
        }
    }

    fn write_page(&mut self, page: u64, buf: &[u8]) -> Result<Nanos, StoreError> {
        if self.crashed.is_some() {
            return Err(self.power_cut_error());
        }
        if page >= self.pages() {
            return Err(StoreError::OutOfRange { page, pages: self.pages() });
        }
        if buf.len() != self.page_size() {
            return Err(StoreError::BadBuffer { expected: self.page_size(), got: buf.len() });
        }
        self.writes += 1;
        if self.config.crash_at_write == Some(self.writes) {
            self.crash(Some((page, buf)))?;
            return Err(self.power_cut_error());
        }
        self.order += 1;
        let order = self.order;
        self.volatile
            .entry(page)
            .and_modify(|(_, b)| b.copy_from_slice(buf))
            .or_insert_with(|| (order, buf.to_vec().into()));
        Ok(0)
    }

    fn sync(&mut self) -> Result<Nanos, StoreError> {
        if self.crashed.is_some() {
            return Err(self.power_cut_error());
        }
        let mut pending: Vec<(u64, u64)> = self.volatile.iter().map(|(&p, (o, _))| (*o, p)).collect();
        pending.sort_unstable();
        let mut t = 0;
        for (_, page) in pending {
            let (_, bytes) = self.volatile.remove(&page).expect("pending page");
            t += self.durable.write_page(page, &bytes)?;
        }
        t += self.durable.sync()?;
        self.syncs += 1;
        Ok(t)
    }

    fn stats(&self) -> DeviceStats {
        self.durable.stats()
    }

    fn label(&self) -> String {
        format!("fault:{}", self.durable.label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashbuf_flash::MemStore;

    fn page(b: u8) -> Vec<u8> {
        vec![b; 64]
    }

    fn read(s: &mut impl PageStore, p: u64) -> Vec<u8> {
        let mut buf = vec![0u8; s.page_size()];
        s.read_page(p, &mut buf).unwrap();
        buf
    }

    #[test]
    fn synced_writes_survive_and_unsynced_ones_are_lost() {
        let mut s = FaultStore::new(MemStore::new(64, 8), FaultConfig::default());
        s.write_page(1, &page(1)).unwrap();
        s.sync().unwrap();
        s.write_page(1, &page(2)).unwrap();
        s.write_page(2, &page(3)).unwrap();
        assert_eq!(read(&mut s, 1), page(2), "reads see the volatile image");
        assert_eq!(s.unsynced_pages(), 2);
        s.cut_power().unwrap();
        assert!(s.write_page(3, &page(4)).is_err() && s.sync().is_err(), "no I/O after the cut");
        assert_eq!(s.crash_report().unwrap().unsynced, 2);
        let mut d = s.into_durable();
        assert_eq!(read(&mut d, 1), page(1));
        assert_eq!(read(&mut d, 2), page(0));
    }

    #[test]
    fn the_write_in_flight_is_torn_at_a_seeded_point() {
        let mut cuts = Vec::new();
        for seed in 0..40 {
            let config = FaultConfig { seed, crash_at_write: Some(3), keep_unsynced: 0.0 };
            let mut s = FaultStore::new(MemStore::new(64, 8), config.clone());
            s.write_page(5, &page(7)).unwrap();
            s.sync().unwrap();
            s.write_page(4, &page(8)).unwrap();
            assert!(s.write_page(5, &page(9)).is_err(), "the third write is cut");
            let (torn, cut) = s.crash_report().unwrap().torn.unwrap();
            assert_eq!(torn, 5);
            let mut d = s.into_durable();
            let mut want = page(7);
            want[..cut].fill(9);
            assert_eq!(read(&mut d, 5), want, "seed {seed}: new prefix, old suffix");
            assert_eq!(read(&mut d, 4), page(0), "the unsynced write is lost");
            // Same seed, same cut.
            let mut again = FaultStore::new(MemStore::new(64, 8), config);
            again.write_page(5, &page(7)).unwrap();
            again.sync().unwrap();
            again.write_page(4, &page(8)).unwrap();
            let _ = again.write_page(5, &page(9));
            assert_eq!(again.crash_report().unwrap().torn, Some((5, cut)));
            cuts.push(cut);
        }
        assert!(cuts.iter().any(|&c| c > 0 && c < 64), "some writes are torn mid-page: {cuts:?}");
    }

    #[test]
    fn a_reordering_drive_keeps_a_random_subset_of_unsynced_writes() {
        let config = FaultConfig { seed: 9, crash_at_write: None, keep_unsynced: 0.5 };
        let mut s = FaultStore::new(MemStore::new(64, 64), config);
        for p in 0..64 {
            s.write_page(p, &page(p as u8 + 1)).unwrap();
        }
        s.cut_power().unwrap();
        let kept = s.crash_report().unwrap().kept;
        assert!((16..48).contains(&kept), "{kept}");
        let mut d = s.into_durable();
        let survived = (0..64).filter(|&p| read(&mut d, p) == page(p as u8 + 1)).count() as u64;
        let lost = (0..64).filter(|&p| read(&mut d, p) == page(0)).count() as u64;
        assert_eq!((survived, lost), (kept, 64 - kept), "each page is whole: old or new");
    }
}
