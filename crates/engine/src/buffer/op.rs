//! Operations: the unit of change, of atomicity and (with a log) of durability.
//!
//! An [`Op`] holds the write latches of the pages it fixes until it commits. With a log it
//! also keeps each page's *before-image*; [`Op::commit`] compares every page with its
//! before-image, appends the differences as one log group (with the new metadata, if the
//! operation changed it), marks the changed pages dirty with the group's LSNs, and only then
//! releases the latches. So a page never reaches the store with changes of an operation that
//! is not entirely in the log (the write-ahead rule makes the log durable first), and no other
//! operation sees a change whose group could be lost while its own survives: redo alone
//! restores a consistent state, without undo. Dropping an operation without committing rolls
//! its pages back to their before-images.
//!
//! The commit appends; [`BufferManager::wait_durable`] with the LSN it returns makes the group
//! durable. An operation is **acknowledged** when that returns: from then on it survives any
//! crash.
//!
//! Without a log an operation is a set of write guards: pages are marked dirty when latched,
//! [`Op::release`] lets one go early, and nothing is rolled back.

use std::sync::atomic::Ordering;

use flashbuf_flash::PageStore;

use super::{BufferError, BufferManager, BufferPolicy, WriteInner};
use crate::page::{APP_BYTES, PAGE_HEADER_BYTES};
use crate::wal::{Lsn, push_diff, push_init};
use flashbuf_policy::AccessKind;

/// A page held by an operation (an index into it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot(usize);

struct Held<'a> {
    page: u64,
    /// `None` once released early (without a log).
    inner: Option<WriteInner<'a>>,
    /// With a log: the page when it was fixed (`None` for a new page: zeros).
    before: Option<Box<[u8]>>,
    new: bool,
    changed: bool,
}

impl Held<'_> {
    fn bytes(&self) -> &[u8] {
        match self.inner.as_ref().expect("the page is held") {
            WriteInner::Frame(_, g) => &g.buf,
            WriteInner::Detached(b) => b,
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        match self.inner.as_mut().expect("the page is held") {
            WriteInner::Frame(_, g) => &mut g.buf,
            WriteInner::Detached(b) => b,
        }
    }
}

/// A set of page changes made atomically and, with a log, durably (see the module
/// documentation). Built by [`BufferManager::begin`].
pub struct Op<'a, S: PageStore, P: BufferPolicy> {
    bm: &'a BufferManager<S, P>,
    held: Vec<Held<'a>>,
    /// Log bytes reserved for this operation's group.
    reserved: u64,
    max_pages: u64,
    /// One past the highest page allocated (0: none).
    alloc_end: u64,
    open: bool,
}

impl<'a, S: PageStore, P: BufferPolicy> Op<'a, S, P> {
    pub(super) fn new(bm: &'a BufferManager<S, P>, reserved: u64, max_pages: u64) -> Self {
        Op { bm, held: Vec::new(), reserved, max_pages, alloc_end: 0, open: true }
    }

    fn check_room(&self) -> Result<(), BufferError> {
        if self.bm.log.is_some() && self.held.len() as u64 >= self.max_pages {
            return Err(BufferError::OperationTooLarge(format!(
                "the operation was begun for at most {} pages and fixes one more",
                self.max_pages
            )));
        }
        Ok(())
    }

    fn hold(&mut self, page: u64, inner: WriteInner<'a>, new: bool) -> Slot {
        let mut held = Held { page, inner: Some(inner), before: None, new, changed: false };
        if let Some(log) = &self.bm.log
            && !new
        {
            let mut before = log.take_page();
            before.copy_from_slice(held.bytes());
            held.before = Some(before);
        }
        self.held.push(held);
        Slot(self.held.len() - 1)
    }

    /// Fixes `page` for writing and holds it (latched and pinned) until the operation ends.
    pub fn write(&mut self, page: u64) -> Result<Slot, BufferError> {
        if self.held.iter().any(|h| h.page == page) {
            return Err(BufferError::Config(format!("page {page} is fixed twice in one operation")));
        }
        self.check_room()?;
        let fixed = self.bm.fix(page, AccessKind::Write, false)?;
        let (page, inner) = self.bm.latch_write(fixed)?;
        Ok(self.hold(page, inner, false))
    }

    /// Allocates a new page (zero-filled) and holds it; with a log the allocation is part of
    /// the operation's group (an `INIT` entry and the new page count).
    pub fn new_page(&mut self) -> Result<Slot, BufferError> {
        self.check_room()?;
        let fixed = self.bm.fix(0, AccessKind::Write, true)?;
        let (page, inner) = self.bm.latch_write(fixed)?;
        self.alloc_end = self.alloc_end.max(page + 1);
        Ok(self.hold(page, inner, true))
    }

    /// The page number held in `slot`.
    pub fn page_no(&self, slot: Slot) -> u64 {
        self.held[slot.0].page
    }

    /// The payload of the page in `slot` (the bytes after the page header).
    pub fn page(&self, slot: Slot) -> &[u8] {
        &self.held[slot.0].bytes()[PAGE_HEADER_BYTES..]
    }

    /// The payload of the page in `slot`, to change.
    pub fn page_mut(&mut self, slot: Slot) -> &mut [u8] {
        &mut self.held[slot.0].bytes_mut()[PAGE_HEADER_BYTES..]
    }

    /// The payloads of two different pages, to change both.
    pub fn pages_mut(&mut self, a: Slot, b: Slot) -> (&mut [u8], &mut [u8]) {
        assert_ne!(a, b, "two different slots");
        let (lo, hi, swap) = if a.0 < b.0 { (a.0, b.0, false) } else { (b.0, a.0, true) };
        let (left, right) = self.held.split_at_mut(hi);
        let x = &mut left[lo].bytes_mut()[PAGE_HEADER_BYTES..];
        let y = &mut right[0].bytes_mut()[PAGE_HEADER_BYTES..];
        if swap { (y, x) } else { (x, y) }
    }

    /// Without a log: releases the page in `slot` now (its latch and pin; the page stays dirty).
    /// With a log the page stays held until the operation ends (this does nothing), so that
    /// no one sees or writes a change before its group is in the log.
    pub fn release(&mut self, slot: Slot) {
        if self.bm.log.is_none()
            && let Some(inner) = self.held[slot.0].inner.take()
        {
            self.bm.release_inner(self.held[slot.0].page, inner, true);
        }
    }

    /// Commits: see [`commit_with_app`](Self::commit_with_app), with the application area
    /// unchanged.
    pub fn commit(self) -> Result<Lsn, BufferError> {
        self.finish(None::<fn(&mut [u8; APP_BYTES])>)
    }

    /// Commits the operation, changing the application area of the file header with `change`
    /// as part of it: with a log, appends the group and returns its end LSN, to pass to
    /// [`BufferManager::wait_durable`] (the operation is acknowledged when that returns); the
    /// latches are released on return. Returns 0 when nothing changed (nothing to wait for).
    /// Without a log, releases everything and returns 0.
    pub fn commit_with_app(self, change: impl FnOnce(&mut [u8; APP_BYTES])) -> Result<Lsn, BufferError> {
        self.finish(Some(change))
    }

    fn finish(mut self, change: Option<impl FnOnce(&mut [u8; APP_BYTES])>) -> Result<Lsn, BufferError> {
        self.open = false;
        let bm = self.bm;
        let Some(log) = &bm.log else {
            if let Some(change) = change {
                let mut pool = bm.lock_pool_any();
                change(&mut pool.header.app);
                pool.header_dirty = true;
            }
            for h in self.held.drain(..) {
                if let Some(inner) = h.inner {
                    bm.release_inner(h.page, inner, true);
                }
            }
            return Ok(0);
        };
        let mut body = log.take_body();
        let mut entries = 0u32;
        for h in &mut self.held {
            let Some(inner) = h.inner.as_ref() else { continue };
            let after: &[u8] = match inner {
                WriteInner::Frame(_, g) => &g.buf,
                WriteInner::Detached(b) => b,
            };
            let before: &[u8] = h.before.as_deref().unwrap_or(&log.zero);
            if h.new {
                push_init(&mut body, h.page);
                entries += 1;
            }
            let n = push_diff(&mut body, h.page, before, after);
            entries += n;
            h.changed = h.new || n > 0;
        }
        let meta_changed = change.is_some() || self.alloc_end > 0;
        if entries == 0 && !meta_changed {
            log.give_body(body);
            self.release_all(false);
            return Ok(0);
        }
        let body_crc = crc32c::crc32c(&body);
        // A bypassed page is written through below, after its group is durable; until then a
        // checkpoint must not move redo past its change.
        let detached: Vec<u64> = self
            .held
            .iter()
            .filter(|h| h.changed && matches!(h.inner, Some(WriteInner::Detached(_))))
            .map(|h| h.page)
            .collect();
        if !detached.is_empty() {
            let r = log.lock().end;
            let mut pool = bm.lock_pool_any();
            pool.inflight.extend(detached.iter().map(|&p| (p, r)));
        }
        let appended = {
            let mut st = log.lock();
            match &st.failed {
                Some(e) => Err(BufferError::Failed(e.clone())),
                None => {
                    let meta = meta_changed.then(|| {
                        if let Some(change) = change {
                            change(&mut st.meta.app);
                        }
                        st.meta.page_count = st.meta.page_count.max(self.alloc_end);
                        st.meta
                    });
                    let (start, end) = st.append(&body, body_crc, entries, meta.as_ref());
                    st.reserved -= self.reserved;
                    self.reserved = 0;
                    for h in self.held.iter().filter(|h| h.changed) {
                        if let Some(WriteInner::Frame(f, _)) = &h.inner {
                            let frame = &bm.frames[*f as usize];
                            frame.dirty.store(true, Ordering::Release);
                            frame.page_lsn.store(end, Ordering::Release);
                            if frame.rec_lsn.load(Ordering::Acquire) == 0 {
                                frame.rec_lsn.store(start, Ordering::Release);
                            }
                        }
                    }
                    Ok(end)
                }
            }
        };
        log.give_body(body);
        log.notify();
        let end = match appended {
            Ok(end) => end,
            Err(e) => {
                self.open = true; // roll back in drop
                if !detached.is_empty() {
                    bm.lock_pool_any().inflight.retain(|(p, _)| !detached.contains(p));
                }
                return Err(e);
            }
        };
        // Release the frames now; bypassed pages are written through once the log is durable.
        let mut through = Vec::new();
        for h in self.held.drain(..) {
            if let Some(b) = h.before {
                log.give_page(b);
            }
            match h.inner {
                Some(WriteInner::Detached(buf)) if h.changed => through.push((h.page, buf)),
                Some(inner) => bm.release_inner(h.page, inner, false),
                None => {}
            }
        }
        if !through.is_empty() {
            let durable = bm.wait_durable(end);
            for (page, buf) in through {
                bm.release_detached(page, buf, durable.is_ok());
            }
            bm.lock_pool_any().inflight.retain(|(p, _)| !detached.contains(p));
            durable?;
        }
        Ok(end)
    }

    /// Releases every held page; `restore`: put the before-images back first (roll back).
    fn release_all(&mut self, restore: bool) {
        let bm = self.bm;
        let log = bm.log.as_ref();
        for mut h in self.held.drain(..).rev() {
            if h.inner.is_none() {
                continue;
            }
            let before = h.before.take();
            if let Some(log) = log {
                if restore {
                    let src: &[u8] = before.as_deref().unwrap_or(&log.zero);
                    h.bytes_mut()[PAGE_HEADER_BYTES..].copy_from_slice(&src[PAGE_HEADER_BYTES..]);
                }
                if let Some(b) = before {
                    log.give_page(b);
                }
            }
            // Without a log a page is dirty from its latch on and a bypassed one is written
            // through; with a log nothing of an uncommitted operation is written.
            let inner = h.inner.take().expect("held");
            bm.release_inner(h.page, inner, log.is_none());
        }
        if self.reserved > 0
            && let Some(log) = log
        {
            log.lock().reserved -= self.reserved;
            self.reserved = 0;
            log.notify();
        }
    }
}

impl<S: PageStore, P: BufferPolicy> Drop for Op<'_, S, P> {
    /// An operation ended without a commit: with a log its pages are rolled back to their
    /// before-images; without one they are released as they are.
    fn drop(&mut self) {
        if self.open {
            self.open = false;
            self.release_all(true);
        }
    }
}
