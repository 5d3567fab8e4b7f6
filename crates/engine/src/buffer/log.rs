//! The buffer manager's side of the write-ahead log: the log tail in memory, group commit,
//! log room and the checkpoints that make it.
//!
//! * **Appending** (an operation's commit, [`super::Op`]): under the log lock, the group gets
//!   the next LSN range, its bytes are copied to the in-memory tail, the metadata is updated,
//!   and the pages it changed get their LSNs — all before any of their latches is released.
//! * **Group commit** ([`BufferManager::wait_durable`]): a thread that needs the log durable up
//!   to some LSN either finds it so, or waits for the thread writing (the *leader*), or becomes
//!   the leader: it copies the unwritten tail (from the start of the page holding the durable
//!   end: a partly filled page is written again as it fills), writes those pages and syncs,
//!   without the log lock, so that other commits append meanwhile and go out together in the
//!   next round.
//! * **Room**: an operation reserves its largest possible group before it fixes a page
//!   ([`BufferManager::begin`]); when the ring lacks room, the thread checkpoints — writes the
//!   pages whose changes hold the ring's oldest bytes — before it takes any latch.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use flashbuf_flash::PageStore;

use super::{BufferError, BufferManager, BufferPolicy, Op};
use crate::wal::{
    Anchor, GROUP_HEADER_BYTES, LogGeometry, LogMeta, LogStats, Lsn, META_ENTRY_BYTES, group_header, meta_entry,
};

/// The log of a buffer manager.
pub(crate) struct Log {
    state: Mutex<LogState>,
    changed: Condvar,
    /// Page-sized buffers for before-images.
    spare_pages: Mutex<Vec<Box<[u8]>>>,
    /// Buffers for group bodies.
    spare_bodies: Mutex<Vec<Vec<u8>>>,
    /// A zero page (the before-image of a new page).
    pub(crate) zero: Box<[u8]>,
}

/// Everything the log lock protects.
pub(crate) struct LogState {
    pub(crate) geom: LogGeometry,
    /// The next LSN to assign.
    pub(crate) end: Lsn,
    /// Every group before this LSN is on the store and synced.
    pub(crate) durable: Lsn,
    /// The redo LSN of the last anchor: the ring holds `tail..end`.
    pub(crate) tail: Lsn,
    /// Room promised to operations in progress, bytes.
    pub(crate) reserved: u64,
    /// The stream bytes `buf_base..end` (`buf_base`: the start of the page holding `durable`).
    buf: Vec<u8>,
    buf_base: Lsn,
    /// A thread is writing the log.
    leader: bool,
    /// A log write failed: nothing can be made durable any more.
    pub(crate) failed: Option<String>,
    pub(crate) epoch: u32,
    /// Sequence number of the last anchor written.
    pub(crate) seq: u64,
    /// Page count and application area as of `end`.
    pub(crate) meta: LogMeta,
    pub(crate) stats: LogStats,
    /// The leader's copy of the tail (kept to reuse its allocation).
    io: Vec<u8>,
}

impl Log {
    pub(crate) fn new(geom: LogGeometry, anchor: Anchor) -> Self {
        debug_assert_eq!(geom.page_start(anchor.end_lsn), anchor.end_lsn, "the log resumes at a page boundary");
        Log {
            state: Mutex::new(LogState {
                geom,
                end: anchor.end_lsn,
                durable: anchor.end_lsn,
                tail: anchor.redo_lsn,
                reserved: 0,
                buf: Vec::new(),
                buf_base: anchor.end_lsn,
                leader: false,
                failed: None,
                epoch: anchor.epoch,
                seq: anchor.seq,
                meta: anchor.meta,
                stats: LogStats::default(),
                io: Vec::new(),
            }),
            changed: Condvar::new(),
            spare_pages: Mutex::new(Vec::new()),
            spare_bodies: Mutex::new(Vec::new()),
            zero: vec![0u8; geom.page_size].into(),
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, LogState> {
        // A panic under the log lock is a bug; the log's state cannot be trusted after it.
        self.state.lock().expect("the log lock was poisoned by a panic")
    }

    pub(crate) fn notify(&self) {
        self.changed.notify_all();
    }

    fn wait<'a>(&self, guard: MutexGuard<'a, LogState>, timeout: Option<Duration>) -> MutexGuard<'a, LogState> {
        match timeout {
            None => self.changed.wait(guard).expect("the log lock was poisoned by a panic"),
            Some(t) => self.changed.wait_timeout(guard, t).expect("the log lock was poisoned by a panic").0,
        }
    }

    pub(crate) fn take_page(&self) -> Box<[u8]> {
        let spare = self.spare_pages.lock().unwrap_or_else(|e| e.into_inner()).pop();
        spare.unwrap_or_else(|| vec![0u8; self.zero.len()].into())
    }

    pub(crate) fn give_page(&self, page: Box<[u8]>) {
        self.spare_pages.lock().unwrap_or_else(|e| e.into_inner()).push(page);
    }

    pub(crate) fn take_body(&self) -> Vec<u8> {
        let mut body = self.spare_bodies.lock().unwrap_or_else(|e| e.into_inner()).pop().unwrap_or_default();
        body.clear();
        body
    }

    pub(crate) fn give_body(&self, body: Vec<u8>) {
        self.spare_bodies.lock().unwrap_or_else(|e| e.into_inner()).push(body);
    }
}

impl LogState {
    /// Room left in the ring for new groups, bytes. The ring holds `tail..end`, written in whole
    /// pages: a page is written from its start, and the last one written may run up to a page
    /// past `end`, so a page of slack is kept.
    pub(crate) fn free(&self) -> u64 {
        let used = self.end - self.geom.page_start(self.tail) + self.geom.page_size as u64;
        self.geom.ring_bytes().saturating_sub(used).saturating_sub(self.reserved)
    }

    /// Appends a group of `entries` entries (`body`, CRC32C `body_crc`), followed by a `META`
    /// entry when `meta` is given; returns its LSN range.
    pub(crate) fn append(&mut self, body: &[u8], body_crc: u32, entries: u32, meta: Option<&LogMeta>) -> (Lsn, Lsn) {
        let start = self.end;
        let mut meta_bytes = [0u8; META_ENTRY_BYTES];
        let (crc, extra, count) = match meta {
            Some(m) => {
                meta_entry(&mut meta_bytes, m);
                (crc32c::crc32c_append(body_crc, &meta_bytes), META_ENTRY_BYTES, entries + 1)
            }
            None => (body_crc, 0, entries),
        };
        let mut header = [0u8; GROUP_HEADER_BYTES];
        group_header(&mut header, crc, body.len() + extra, count, start, self.epoch);
        self.buf.extend_from_slice(&header);
        self.buf.extend_from_slice(body);
        self.buf.extend_from_slice(&meta_bytes[..extra]);
        let len = (GROUP_HEADER_BYTES + body.len() + extra) as u64;
        self.end += len;
        self.stats.groups += 1;
        self.stats.bytes += len;
        (start, self.end)
    }
}

impl<S: PageStore, P: BufferPolicy> BufferManager<S, P> {
    /// Starts an operation that will change at most `max_pages` pages (fixed with
    /// [`Op::write`] or allocated with [`Op::new_page`]). With a log, room for its largest
    /// possible group is reserved first — checkpointing if the log is short of room — so the
    /// caller must hold no page guard when it calls this. Without a log, an operation is only
    /// a set of write guards.
    pub fn begin(&self, max_pages: u64) -> Result<Op<'_, S, P>, BufferError> {
        let Some(log) = &self.log else { return Ok(Op::new(self, 0, max_pages)) };
        let frames = self.frames.len() as u64;
        if max_pages >= frames {
            return Err(BufferError::OperationTooLarge(format!(
                "an operation that changes up to {max_pages} pages holds them all until it commits; the buffer \
                 has only {frames} frames"
            )));
        }
        let (need, limit) = {
            let st = log.lock();
            (st.geom.reservation(max_pages), st.geom.max_group_bytes())
        };
        if need > limit {
            return Err(BufferError::OperationTooLarge(format!(
                "an operation that changes up to {max_pages} pages may log {need} bytes; the log holds at most \
                 {limit} bytes per operation (half its ring): use a larger log"
            )));
        }
        let mut rounds = 0u32;
        loop {
            {
                let mut st = log.lock();
                if let Some(e) = &st.failed {
                    return Err(BufferError::Failed(e.clone()));
                }
                if st.free() >= need {
                    st.reserved += need;
                    return Ok(Op::new(self, need, max_pages));
                }
            }
            self.make_room(need, rounds)?;
            rounds = rounds.saturating_add(1);
        }
    }

    /// Makes log room for `need` bytes. Only a checkpoint frees room (commits turn reservations
    /// into log bytes): round 0 writes the pages holding the older half of the ring, later
    /// rounds every dirty page — unless what operations in progress reserved leaves no room
    /// to make, then it waits for them to finish.
    fn make_room(&self, need: u64, round: u32) -> Result<(), BufferError> {
        let log = self.log.as_ref().expect("a log");
        drop(self.lock_pool()?); // stopped after a failure: nothing to wait for
        let target = {
            let st = log.lock();
            if st.free() >= need {
                return Ok(());
            }
            let room = st.geom.ring_bytes().saturating_sub(2 * st.geom.page_size as u64);
            if round > 0 && st.reserved.saturating_add(need) > room {
                drop(log.wait(st, Some(Duration::from_millis(1))));
                return Ok(());
            }
            if round == 0 { st.end.saturating_sub(st.geom.ring_bytes() / 2) } else { Lsn::MAX }
        };
        self.checkpoint(target, true)
    }

    /// Returns when the log is durable up to `lsn` (at once without a log): the moment an
    /// operation whose commit returned `lsn` is acknowledged. Several threads waiting share one
    /// log write and sync (group commit).
    pub fn wait_durable(&self, lsn: Lsn) -> Result<(), BufferError> {
        let Some(log) = &self.log else { return Ok(()) };
        let mut st = log.lock();
        loop {
            if let Some(e) = &st.failed {
                return Err(BufferError::Failed(e.clone()));
            }
            if st.durable >= lsn {
                return Ok(());
            }
            if st.leader {
                st = log.wait(st, None);
                continue;
            }
            st.leader = true;
            let base = st.buf_base;
            let to = st.end;
            let ps = st.geom.page_size;
            let mut io = std::mem::take(&mut st.io);
            io.clear();
            io.extend_from_slice(&st.buf);
            drop(st);
            let pages = io.len().div_ceil(ps);
            io.resize(pages * ps, 0);
            let result = (|| -> Result<u64, BufferError> {
                let mut file = self.lock_file();
                let file = file.as_mut().expect("the page file is present until close");
                let mut t = 0;
                for k in 0..pages {
                    t += file.write_log_page(base + (k * ps) as u64, &io[k * ps..(k + 1) * ps])?;
                }
                t += file.sync()?;
                Ok(t)
            })();
            st = log.lock();
            st.leader = false;
            st.io = io;
            match result {
                Ok(t) => {
                    st.durable = to;
                    let new_base = st.geom.page_start(to);
                    st.buf.drain(..(new_base - base) as usize);
                    st.buf_base = new_base;
                    st.stats.page_writes += pages as u64;
                    st.stats.syncs += 1;
                    st.stats.write_time_ns += t;
                    log.notify();
                }
                Err(e) => {
                    st.failed.get_or_insert_with(|| format!("log write failed: {e}"));
                    drop(st);
                    log.notify();
                    self.fail(&e);
                    return Err(e);
                }
            }
        }
    }

    /// The log's counters (`None` without a log).
    pub fn log_stats(&self) -> Option<LogStats> {
        self.log.as_ref().map(|l| l.lock().stats.clone())
    }

    /// Zeroes the log's counters.
    pub(crate) fn reset_log_stats(&self) {
        if let Some(l) = &self.log {
            l.lock().stats = LogStats::default();
        }
    }

    /// Where the log lives (`None` without a log).
    pub fn log_geometry(&self) -> Option<LogGeometry> {
        self.log.as_ref().map(|l| l.lock().geom)
    }
}
