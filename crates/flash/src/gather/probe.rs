//! Measuring cost(d): the write cost as a function of the distance from the previous write
//! (the paper's §3 and Fig. 2; `fio --rw=write:<gap>` with a gap of `(d − 1)` sectors).
//!
//! For each distance `d` the probe writes sector after sector at a fixed distance: `d = 0`
//! rewrites one sector in place, `d = 1` is sequential, `d = −1` reverse sequential, larger
//! values skip `|d| − 1` sectors; positions wrap around inside the region probed. A pattern
//! starts at a random sector (seeded), its first `warmup` writes are dropped, and the next
//! `writes` are timed one by one (queue depth 1): the row gives the median, the 99th percentile
//! (nearest rank) and the mean latency, and IOPS = 1 s / mean latency. An optional `random` row
//! writes uniformly random sectors (the reference the layer is compared with).
//!
//! * [`probe_store`] measures any [`PageStore`]: over a [`FileStore`] the times are wall-clock
//!   nanoseconds of each `pwrite` (plus `fdatasync` with `sync_each_write`);
//! * [`probe_device`] measures a simulated [`Device`] (simulated time), each pattern on a fresh
//!   clone so patterns do not disturb each other.
//!
//! # Probe files
//!
//! [`open_probe_file`] is the only way the probe touches a file, and it writes only inside it:
//!
//! * an absent file is created (of `size_bytes`, default 256 MiB) with `O_EXCL`;
//! * its first sector holds a marker, [`PROBE_MARKER`] followed by a line of text, and is
//!   never probed: the probe writes sectors `1..n` only;
//! * an existing file is used only if its first bytes are the marker (it was created by the
//!   probe), or with `force` (the whole file is then overwritten, marker included). A file with
//!   the marker may be resized to `size_bytes`; a file without it never is;
//! * directories, paths that are not regular files (block devices: [`FileStore`] sizes a file
//!   from its metadata) and unwritable paths are [`StoreError::Io`] errors;
//! * preconditioning writes the whole file once (pseudo-random bytes, so a compressing or
//!   deduplicating virtual disk cannot shortcut it) and syncs, before any measurement.

use std::fmt;
use std::fs::OpenOptions;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use rand::{Rng, RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::store::SectorWindow;
use crate::device::{Device, DeviceError, Nanos};
use crate::store::{FileOptions, FileStore, PageStore, StoreError};

/// The first bytes of a file created by the probe.
pub const PROBE_MARKER: &[u8] = b"FLASHBUF-PROBE-FILE v1\n";

/// Default size of a probe file: 256 MiB.
pub const DEFAULT_PROBE_FILE_BYTES: u64 = 256 << 20;

/// The distances of the paper's Fig. 2 that the probe measures by default.
pub const DEFAULT_DISTANCES: [i64; 12] = [0, 1, -1, 2, 4, 8, 16, 32, 64, 128, 256, 1024];

/// An access pattern of the probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Pattern {
    /// Each write `d` sectors after the previous one (wrapping).
    Distance(i64),
    /// Uniformly random sectors.
    Random,
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pattern::Distance(d) => write!(f, "{d}"),
            Pattern::Random => f.write_str("random"),
        }
    }
}

/// What to measure.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeConfig {
    /// Fixed distances, in sectors.
    pub distances: Vec<i64>,
    /// Also measure uniformly random writes.
    pub random: bool,
    /// Timed writes per pattern.
    pub writes: u64,
    /// Writes per pattern made first and dropped.
    pub warmup: u64,
    /// Seed of the start positions and random writes.
    pub seed: u64,
}

impl Default for ProbeConfig {
    fn default() -> Self {
        ProbeConfig { distances: DEFAULT_DISTANCES.to_vec(), random: true, writes: 4096, warmup: 512, seed: 1 }
    }
}

impl ProbeConfig {
    /// The patterns in measuring order: the distances, then `random`.
    pub fn patterns(&self) -> Vec<Pattern> {
        let mut v: Vec<Pattern> = self.distances.iter().map(|&d| Pattern::Distance(d)).collect();
        if self.random {
            v.push(Pattern::Random);
        }
        v
    }

    fn validate(&self) -> Result<(), DeviceError> {
        if self.writes == 0 {
            return Err(DeviceError::Config("the probe needs at least one timed write per pattern".into()));
        }
        if self.patterns().is_empty() {
            return Err(DeviceError::Config("nothing to probe: no distance and no random pattern".into()));
        }
        Ok(())
    }
}

/// One measured pattern. Latencies in nanoseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeRow {
    /// The pattern.
    pub pattern: Pattern,
    /// Timed writes.
    pub writes: u64,
    /// Median latency.
    pub median_ns: f64,
    /// 99th percentile latency (nearest rank).
    pub p99_ns: f64,
    /// Mean latency.
    pub mean_ns: f64,
    /// Writes per second at queue depth 1: 1 s / mean latency.
    pub iops: f64,
}

impl ProbeRow {
    /// The CSV header matching [`ProbeRow::csv`] (and read by
    /// [`super::model::CostCurve::from_csv`]).
    pub const CSV_HEADER: &'static str = "pattern,distance,writes,median_us,p99_us,mean_us,iops";

    /// One CSV line (no newline): `fixed,<d>,…` or `random,random,…`; times in µs.
    pub fn csv(&self) -> String {
        let kind = match self.pattern {
            Pattern::Distance(_) => "fixed",
            Pattern::Random => "random",
        };
        format!(
            "{kind},{},{},{:.3},{:.3},{:.3},{:.1}",
            self.pattern,
            self.writes,
            self.median_ns / 1e3,
            self.p99_ns / 1e3,
            self.mean_ns / 1e3,
            self.iops
        )
    }
}

/// Runs one pattern over a region of `region` sectors; `write(sector, i)` performs the `i`-th
/// write and returns its time. `lat` is scratch space (reused, no allocation per write).
fn measure<E>(
    region: u64,
    pattern: Pattern,
    cfg: &ProbeConfig,
    lat: &mut Vec<Nanos>,
    mut write: impl FnMut(u64, u64) -> Result<Nanos, E>,
) -> Result<ProbeRow, E> {
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let mut pos = rng.random_range(0..region);
    let step = match pattern {
        Pattern::Distance(d) => d.rem_euclid(region as i64) as u64,
        Pattern::Random => 0,
    };
    lat.clear();
    lat.reserve(cfg.writes as usize);
    for i in 0..cfg.warmup + cfg.writes {
        let t = write(pos, i)?;
        if i >= cfg.warmup {
            lat.push(t);
        }
        pos = match pattern {
            Pattern::Distance(_) => (pos + step) % region,
            Pattern::Random => rng.random_range(0..region),
        };
    }
    Ok(summarise(pattern, lat))
}

fn summarise(pattern: Pattern, lat: &mut [Nanos]) -> ProbeRow {
    lat.sort_unstable();
    let n = lat.len();
    let median = if n % 2 == 1 { lat[n / 2] as f64 } else { (lat[n / 2 - 1] as f64 + lat[n / 2] as f64) / 2.0 };
    let rank = ((0.99 * n as f64).ceil() as usize).clamp(1, n);
    let mean = lat.iter().map(|&t| t as f64).sum::<f64>() / n as f64;
    ProbeRow {
        pattern,
        writes: n as u64,
        median_ns: median,
        p99_ns: lat[rank - 1] as f64,
        mean_ns: mean,
        iops: if mean > 0.0 { 1e9 / mean } else { f64::INFINITY },
    }
}

/// Measures every pattern of `cfg` on `store` (all its pages are the region), calling
/// `progress` after each row.
pub fn probe_store<S: PageStore>(
    store: &mut S,
    cfg: &ProbeConfig,
    progress: &mut dyn FnMut(&ProbeRow),
) -> Result<Vec<ProbeRow>, StoreError> {
    cfg.validate()?;
    let region = store.pages();
    if region == 0 {
        return Err(StoreError::Device(DeviceError::Config("the store to probe has no sector".into())));
    }
    // Pseudo-random contents, stamped with a counter per write: nothing to compress or dedupe.
    let mut buf = vec![0u8; store.page_size()];
    ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x5EED).fill_bytes(&mut buf);
    let mut lat = Vec::new();
    let mut rows = Vec::new();
    let mut stamp = 0u64;
    for pattern in cfg.patterns() {
        let row = measure(region, pattern, cfg, &mut lat, |sector, _| {
            stamp += 1;
            let n = buf.len().min(8);
            buf[..n].copy_from_slice(&stamp.to_le_bytes()[..n]);
            store.write_page(sector, &buf)
        })?;
        progress(&row);
        rows.push(row);
    }
    Ok(rows)
}

/// Measures one pattern on a simulated device whose sectors are `pages_per_sector` consecutive
/// pages (the region is every whole sector of the device).
pub fn probe_device_pattern<D: Device>(
    device: &mut D,
    pages_per_sector: u32,
    pattern: Pattern,
    cfg: &ProbeConfig,
) -> Result<ProbeRow, DeviceError> {
    cfg.validate()?;
    let k = pages_per_sector.max(1) as u64;
    let region = device.logical_pages() / k;
    if region == 0 {
        return Err(DeviceError::Config("the device holds no whole sector".into()));
    }
    let mut lat = Vec::new();
    measure(region, pattern, cfg, &mut lat, |sector, _| {
        let mut t = 0;
        for p in sector * k..sector * k + k {
            t += device.write(p)?;
        }
        Ok(t)
    })
}

/// Measures every pattern of `cfg` on a fresh clone of `device` each.
pub fn probe_device<D: Device + Clone>(
    device: &D,
    pages_per_sector: u32,
    cfg: &ProbeConfig,
    progress: &mut dyn FnMut(&ProbeRow),
) -> Result<Vec<ProbeRow>, DeviceError> {
    let mut rows = Vec::new();
    for pattern in cfg.patterns() {
        let mut d = device.clone();
        let row = probe_device_pattern(&mut d, pages_per_sector, pattern, cfg)?;
        progress(&row);
        rows.push(row);
    }
    Ok(rows)
}

/// How to open a probe file (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeFileOptions {
    /// The file.
    pub path: PathBuf,
    /// Size to create it with (default [`DEFAULT_PROBE_FILE_BYTES`]), or to resize a probe
    /// file to; a multiple of the sector size.
    pub size_bytes: Option<u64>,
    /// Sector size in bytes: a multiple of 512 (direct I/O).
    pub sector_bytes: usize,
    /// Use an existing file that the probe did not create (it is overwritten entirely).
    pub force: bool,
    /// Direct I/O and syncing of the store returned.
    pub file: FileOptions,
    /// Write the whole file once before returning (the default; the probe's preconditioning).
    pub precondition: bool,
}

impl ProbeFileOptions {
    /// Defaults for `path`: 4 KiB sectors, 256 MiB if created, direct I/O, no sync, no force,
    /// preconditioning on.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        ProbeFileOptions {
            path: path.into(),
            size_bytes: None,
            sector_bytes: 4096,
            force: false,
            file: FileOptions::default(),
            precondition: true,
        }
    }
}

/// An opened probe file: sectors `1..n` of the file as a store (sector 0 is the marker).
pub struct ProbeFile {
    /// The probed region.
    pub store: SectorWindow<FileStore>,
    /// Whether this call created the file.
    pub created: bool,
    /// The file's size in bytes.
    pub size_bytes: u64,
}

/// Bytes available to an unprivileged user on the file system holding `path` (its directory
/// when it does not exist yet), if it can be asked.
fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs fills the struct we own from a NUL-terminated path.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    (rc == 0).then(|| (st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

/// Refuses to grow a file by `grow` bytes when that would leave less than 5% of the file
/// system's free space, or less than 64 MiB, free: a probe must not fill the disk.
fn check_room(path: &Path, grow: u64) -> Result<(), StoreError> {
    let Some(free) = free_bytes(path) else { return Ok(()) };
    let keep = (free / 20).max(64 << 20);
    if grow > free.saturating_sub(keep) {
        return Err(io_err(
            path,
            io::ErrorKind::StorageFull,
            format!(
                "needs {:.1} MiB more, but its file system has {:.1} MiB free (the probe leaves at least {:.0} MiB); \
                 choose a smaller --size",
                grow as f64 / (1u64 << 20) as f64,
                free as f64 / (1u64 << 20) as f64,
                keep as f64 / (1u64 << 20) as f64
            ),
        ));
    }
    Ok(())
}

fn io_err(path: &Path, kind: io::ErrorKind, message: String) -> StoreError {
    StoreError::Io { path: path.display().to_string(), source: io::Error::new(kind, message) }
}

/// Opens (creating if absent) a probe file under the rules of the module docs.
pub fn open_probe_file(opts: &ProbeFileOptions) -> Result<ProbeFile, StoreError> {
    let path = opts.path.as_path();
    let io = |source| StoreError::Io { path: path.display().to_string(), source };
    let ss = opts.sector_bytes;
    if ss < 512 || !ss.is_multiple_of(512) {
        return Err(io_err(path, io::ErrorKind::InvalidInput, format!("sector size {ss} is not a multiple of 512")));
    }
    let check_size = |size: u64| {
        if !size.is_multiple_of(ss as u64) || size < 2 * ss as u64 {
            return Err(io_err(
                path,
                io::ErrorKind::InvalidInput,
                format!(
                    "size {size} bytes is not a whole number of at least two {ss}-byte sectors (one for the marker, \
                     the rest probed)"
                ),
            ));
        }
        Ok(size)
    };
    let (created, size) = match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => {
            return Err(io_err(path, io::ErrorKind::InvalidInput, "is a directory; give a file to probe".into()));
        }
        Ok(m) if !m.is_file() => {
            return Err(io_err(
                path,
                io::ErrorKind::InvalidInput,
                "is not a regular file (block devices are not supported: the store sizes a file from its metadata)"
                    .into(),
            ));
        }
        Ok(m) => {
            let mut head = vec![0u8; PROBE_MARKER.len()];
            let mut f = std::fs::File::open(path).map_err(io)?;
            let n = read_up_to(&mut f, &mut head).map_err(io)?;
            let ours = n == head.len() && head == PROBE_MARKER;
            if !ours && !opts.force {
                return Err(io_err(
                    path,
                    io::ErrorKind::AlreadyExists,
                    "exists and was not created by the flashbuf probe (no marker in its first sector); refusing to \
                     write to it unless forced"
                        .into(),
                ));
            }
            let size = match opts.size_bytes {
                Some(s) if s != m.len() && !ours => {
                    return Err(io_err(
                        path,
                        io::ErrorKind::InvalidInput,
                        format!("is {} bytes, not {s}: a file the probe did not create is never resized", m.len()),
                    ));
                }
                Some(s) => check_size(s)?,
                None => check_size(m.len())?,
            };
            check_room(path, size.saturating_sub(m.len()))?;
            let f = OpenOptions::new().write(true).open(path).map_err(io)?;
            if size != m.len() {
                f.set_len(size).map_err(io)?;
            }
            (false, size)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let size = check_size(opts.size_bytes.unwrap_or(DEFAULT_PROBE_FILE_BYTES))?;
            check_room(path, size)?;
            let f = OpenOptions::new().write(true).create_new(true).open(path).map_err(io)?;
            f.set_len(size).map_err(io)?;
            (true, size)
        }
        Err(e) => return Err(io(e)),
    };
    write_marker_and_fill(path, ss, size, opts.precondition).map_err(io)?;
    let store = FileStore::open(path, ss, opts.file)?;
    let pages = store.pages();
    Ok(ProbeFile { store: SectorWindow::new(store, 1, pages - 1)?, created, size_bytes: size })
}

fn read_up_to(f: &mut std::fs::File, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Writes the marker sector and, if `fill`, pseudo-random bytes over the rest; syncs.
fn write_marker_and_fill(path: &Path, sector: usize, size: u64, fill: bool) -> io::Result<()> {
    let mut f = OpenOptions::new().write(true).open(path)?;
    let mut first = vec![0u8; sector];
    let text = [
        PROBE_MARKER,
        b"Scratch file of `flashbuf gather probe` / `flashbuf gather bench`: its contents are overwritten by \
          every run.\n",
    ]
    .concat();
    first[..text.len()].copy_from_slice(&text);
    f.write_all(&first)?;
    if fill {
        let mut rng = ChaCha8Rng::seed_from_u64(size);
        let mut chunk = vec![0u8; 1 << 20];
        let mut left = size - sector as u64;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            rng.fill_bytes(&mut chunk[..n]);
            f.write_all(&chunk[..n])?;
            left -= n as u64;
        }
    }
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{IdealConfig, IdealDevice, MemStore};

    #[test]
    fn summary_statistics() {
        let mut lat: Vec<Nanos> = (1..=100).rev().collect();
        let r = summarise(Pattern::Distance(3), &mut lat);
        assert_eq!((r.writes, r.median_ns, r.p99_ns, r.mean_ns), (100, 50.5, 99.0, 50.5));
        assert!((r.iops - 1e9 / 50.5).abs() < 1e-6);
        let mut one = vec![7];
        let r = summarise(Pattern::Random, &mut one);
        assert_eq!((r.median_ns, r.p99_ns), (7.0, 7.0));
        assert_eq!(r.csv(), "random,random,1,0.007,0.007,0.007,142857142.9");
    }

    /// The probe visits exactly the positions of its pattern, wrapping inside the region.
    #[test]
    fn patterns_visit_the_expected_sectors() {
        let cfg = ProbeConfig { warmup: 2, writes: 6, ..Default::default() };
        for (d, region) in [(0i64, 10u64), (1, 10), (-1, 10), (4, 10), (1024, 7)] {
            let mut seen = Vec::new();
            let mut lat = Vec::new();
            measure(region, Pattern::Distance(d), &cfg, &mut lat, |s, _| {
                seen.push(s);
                Ok::<_, ()>(1)
            })
            .unwrap();
            assert_eq!(seen.len(), 8);
            for w in seen.windows(2) {
                assert_eq!((w[0] as i64 + d).rem_euclid(region as i64) as u64, w[1], "d={d}");
            }
        }
    }

    #[test]
    fn device_probe_costs_are_simulated_time() {
        let dev = IdealDevice::new(IdealConfig { logical_pages: 64, ..Default::default() }).unwrap();
        let cfg = ProbeConfig { distances: vec![1, 5], random: true, writes: 10, warmup: 1, seed: 3 };
        let rows = probe_device(&dev, 2, &cfg, &mut |_| {}).unwrap();
        assert_eq!(rows.len(), 3);
        for r in rows {
            assert_eq!((r.mean_ns, r.median_ns), (440_000.0, 440_000.0), "two 220 µs pages per sector");
        }
    }

    #[test]
    fn store_probe_writes_inside_the_store() {
        let mut s = MemStore::new(512, 9);
        let cfg = ProbeConfig { distances: vec![2], random: false, writes: 20, warmup: 0, seed: 1 };
        let rows = probe_store(&mut s, &cfg, &mut |_| {}).unwrap();
        assert_eq!(rows[0].writes, 20);
        assert_eq!(s.stats().host_writes, 20);
        let bad = ProbeConfig { writes: 0, ..cfg };
        assert!(probe_store(&mut s, &bad, &mut |_| {}).is_err());
    }
}
