//! The experiments of §6 (Figs. 5–7): uniform random logical writes of one sector, directly and
//! through the layer, for pool sizes from 5% to 300% of the logical space, with the model's
//! prediction beside every measurement.
//!
//! * **Simulated devices** ([`simulate`]): a [`DeviceConfig`] (the defaults are BAST and FAST
//!   with the REF paper's Table I timings, 8 log blocks, and the page-mapped FTL for contrast),
//!   4 KiB sectors of `sector_bytes / page size` NAND pages. The direct run writes uniformly
//!   random sectors of a device of |L| sectors; each gathering run wraps a device of |L| + |P|
//!   sectors in [`Gather`]. Both devices are filled sequentially when built, which is also the
//!   layer's initial placement. Each run makes `warmup_passes × (device sectors)` writes (dropped)
//!   then `measure_writes` timed ones, with the same seeded (ChaCha8) stream of logical sectors.
//!   Results are device time per write, merges by type, erases and page copies, and the mean
//!   distance between consecutive writes.
//! * **The model** needs cost(d): it is measured once per device kind on a fresh device of |L|
//!   sectors with [`super::probe::probe_device`] (each distance on its own clone, sustained for a
//!   pass over the device before 4096 timed writes), as the paper measures its devices once
//!   (Fig. 2) and applies the curve to every pool size.
//! * **A real file** ([`run_file`]): the same through a [`GatherStore`] over a
//!   [`FileStore`](crate::FileStore) (a probe file: see [`super::probe`]), wall-clock writes per
//!   second, the cost curve probed on the same file.
//!
//! Every step is a library call returning rows; [`simulate`] composes them for one device,
//! and callers that want parallelism run [`simulate_direct`] / [`simulate_gather`] themselves.

use std::path::PathBuf;
use std::time::Instant;

use rand::{Rng, RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::model::{CostCurve, predict};
use super::probe::{self, ProbeConfig, ProbeFileOptions, ProbeRow};
use super::store::{GatherStore, HEADER_BYTES, SectorWindow};
use super::{Gather, GatherConfig, GatherStats, PoolSize};
use crate::config::{DeviceConfig, DeviceKind};
use crate::device::{Device, DeviceError, DeviceStats};
use crate::nand::NandPreset;
use crate::store::{FileOptions, PageStore, StoreError};

/// The pool sizes of the experiments, in percent of the logical space.
pub const DEFAULT_POOLS_PERCENT: [f64; 14] =
    [5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 75.0, 100.0, 150.0, 200.0, 250.0, 300.0];

/// Distances at which cost(d) is probed on simulated devices: every distance up to 16, then
/// sparser (the curve is interpolated between points).
pub const SIM_PROBE_DISTANCES: [i64; 24] =
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 20, 24, 32, 48, 64, 128, 256, 1024];

/// Parameters of the simulated experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct ExperimentConfig {
    /// |L| in sectors (the paper: 100,000 for its USB key, 200,000 for its SSD).
    pub logical_sectors: u64,
    /// Pool sizes in percent of |L|.
    pub pools_percent: Vec<f64>,
    /// Sector size in bytes (a multiple of the device's page size).
    pub sector_bytes: u32,
    /// Warm-up writes, in passes over the device's sectors (|L| direct, |L| + |P| gathered).
    pub warmup_passes: f64,
    /// Timed writes per run.
    pub measure_writes: u64,
    /// Seed of the logical write stream.
    pub seed: u64,
    /// How cost(d) is probed for the model; each pattern's warm-up is `probe.warmup` plus
    /// `probe_warmup_passes × |L|` writes, so that it is sustained long enough for the FTL to
    /// settle (the page-mapped FTL needs about a pass to reach its garbage-collection steady
    /// state).
    pub probe: ProbeConfig,
    /// See `probe`.
    pub probe_warmup_passes: f64,
}

impl Default for ExperimentConfig {
    fn default() -> Self {
        ExperimentConfig {
            logical_sectors: 100_000,
            pools_percent: DEFAULT_POOLS_PERCENT.to_vec(),
            sector_bytes: 4096,
            warmup_passes: 2.0,
            measure_writes: 100_000,
            seed: 42,
            probe: ProbeConfig {
                distances: SIM_PROBE_DISTANCES.to_vec(),
                random: true,
                writes: 4096,
                warmup: 0,
                seed: 1,
            },
            probe_warmup_passes: 1.0,
        }
    }
}

/// The devices of the experiment: BAST and FAST with the REF paper's timings and 8 log blocks,
/// and the page-mapped FTL (greedy, 7% over-provisioning) for contrast.
pub fn default_devices() -> Vec<DeviceConfig> {
    let base = DeviceConfig { preset: NandPreset::Ref, ..Default::default() };
    vec![
        DeviceConfig { kind: DeviceKind::Bast, ..base.clone() },
        DeviceConfig { kind: DeviceKind::Fast, ..base.clone() },
        DeviceConfig { kind: DeviceKind::Page, ..base },
    ]
}

/// Direct writes or writes through the layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Uniformly random sectors written straight to the device.
    Direct,
    /// The same logical writes through the gathering layer.
    Gather,
}

impl Mode {
    /// `direct` or `gather`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Direct => "direct",
            Mode::Gather => "gather",
        }
    }
}

/// One measurement, with the model's prediction for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExperimentRow {
    /// Device label (`bast/ref/log8`, `file:/tmp/x (direct I/O)`).
    pub device: String,
    /// Direct or through the layer.
    pub mode: Mode,
    /// |L|.
    pub logical_sectors: u64,
    /// |P| (0 for direct writes).
    pub pool_sectors: u64,
    /// |P| / |L| in percent.
    pub pool_percent: f64,
    /// Timed writes.
    pub writes: u64,
    /// Device time (simulated) or wall-clock time (file) per write, in ns.
    pub time_per_write_ns: f64,
    /// 1 s / time per write.
    pub writes_per_s: f64,
    /// Switch merges during the timed writes (simulated log-block FTLs).
    pub merges_switch: u64,
    /// Partial merges.
    pub merges_partial: u64,
    /// Full merges.
    pub merges_full: u64,
    /// Block erases.
    pub erases: u64,
    /// Valid pages copied by merges or garbage collection.
    pub page_copies: u64,
    /// Mean distance between consecutive physical writes (gather rows; 0 for direct).
    pub mean_distance: f64,
    /// The paper's model (uniform pool): writes per second; for direct rows, 1 / cost of a
    /// random write from the cost curve.
    pub model_writes_per_s: f64,
    /// The forward-sweep model: writes per second (direct rows: as `model_writes_per_s`).
    pub sweep_model_writes_per_s: f64,
    /// Mean distance predicted by the paper's model (|F| / (|P| + 1)).
    pub model_mean_distance: f64,
    /// Mean distance predicted by the forward-sweep model.
    pub sweep_model_mean_distance: f64,
    /// writes_per_s over the direct row's, for the same device.
    pub speedup: f64,
}

impl ExperimentRow {
    /// CSV header matching [`ExperimentRow::csv`].
    pub const CSV_HEADER: &'static str = "device,mode,logical_sectors,pool_sectors,pool_percent,writes,\
time_per_write_us,writes_per_s,merges_switch,merges_partial,merges_full,erases,page_copies,mean_distance,\
model_writes_per_s,sweep_model_writes_per_s,model_mean_distance,sweep_model_mean_distance,speedup";

    /// One CSV line (no newline).
    pub fn csv(&self) -> String {
        format!(
            "{},{},{},{},{:.3},{},{:.3},{:.2},{},{},{},{},{},{:.4},{:.2},{:.2},{:.4},{:.4},{:.3}",
            csv_field(&self.device),
            self.mode.name(),
            self.logical_sectors,
            self.pool_sectors,
            self.pool_percent,
            self.writes,
            self.time_per_write_ns / 1e3,
            self.writes_per_s,
            self.merges_switch,
            self.merges_partial,
            self.merges_full,
            self.erases,
            self.page_copies,
            self.mean_distance,
            self.model_writes_per_s,
            self.sweep_model_writes_per_s,
            self.model_mean_distance,
            self.sweep_model_mean_distance,
            self.speedup
        )
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

fn pages_per_sector(cfg: &ExperimentConfig, device: &DeviceConfig) -> Result<u32, DeviceError> {
    let page = device.preset.config(1).geometry.page_size_bytes;
    if cfg.sector_bytes == 0 || !cfg.sector_bytes.is_multiple_of(page) {
        return Err(DeviceError::Config(format!(
            "sector size {} is not a positive multiple of the {} preset's {page}-byte pages",
            cfg.sector_bytes, device.preset
        )));
    }
    Ok(cfg.sector_bytes / page)
}

fn build(device: &DeviceConfig, sectors: u64, k: u32) -> Result<crate::AnyDevice, DeviceError> {
    device.build(sectors * k as u64)
}

/// cost(d) of a device kind, probed on a fresh device of |L| sectors (each pattern on a clone).
pub fn cost_curve(cfg: &ExperimentConfig, device: &DeviceConfig) -> Result<(CostCurve, Vec<ProbeRow>), DeviceError> {
    let k = pages_per_sector(cfg, device)?;
    let dev = build(device, cfg.logical_sectors, k)?;
    let mut probe = cfg.probe.clone();
    probe.warmup += (cfg.probe_warmup_passes * cfg.logical_sectors as f64).round() as u64;
    let rows = probe::probe_device(&dev, k, &probe, &mut |_| {})?;
    Ok((CostCurve::from_probe(&rows)?, rows))
}

fn delta(after: &DeviceStats, before: &DeviceStats) -> [u64; 5] {
    [
        after.merges_switch - before.merges_switch,
        after.merges_partial - before.merges_partial,
        after.merges_full - before.merges_full,
        after.erases - before.erases,
        after.page_copies - before.page_copies,
    ]
}

/// Writes `n` uniformly random logical sectors (drawn from `rng`) to `dev`; returns their total
/// time and the counter deltas.
fn drive<D: Device>(dev: &mut D, rng: &mut ChaCha8Rng, n: u64) -> Result<(u64, [u64; 5]), DeviceError> {
    let pages = dev.logical_pages();
    let before = dev.stats();
    let mut t = 0u64;
    for _ in 0..n {
        t += dev.write(rng.random_range(0..pages))?;
    }
    Ok((t, delta(&dev.stats(), &before)))
}

/// Sectors written directly: a device of |L| sectors whose "pages" are whole sectors.
struct Sectors<D: Device> {
    dev: D,
    k: u64,
}

impl<D: Device> Device for Sectors<D> {
    fn name(&self) -> String {
        self.dev.name()
    }
    fn logical_pages(&self) -> u64 {
        self.dev.logical_pages() / self.k
    }
    fn read(&mut self, page: u64) -> Result<u64, DeviceError> {
        (page * self.k..page * self.k + self.k).try_fold(0, |t, p| Ok(t + self.dev.read(p)?))
    }
    #[inline]
    fn write(&mut self, page: u64) -> Result<u64, DeviceError> {
        (page * self.k..page * self.k + self.k).try_fold(0, |t, p| Ok(t + self.dev.write(p)?))
    }
    fn stats(&self) -> DeviceStats {
        self.dev.stats()
    }
}

fn row(
    device: String,
    mode: Mode,
    logical: u64,
    pool: u64,
    writes: u64,
    time_ns: f64,
    counts: [u64; 5],
) -> ExperimentRow {
    let per = time_ns / writes.max(1) as f64;
    ExperimentRow {
        device,
        mode,
        logical_sectors: logical,
        pool_sectors: pool,
        pool_percent: 100.0 * pool as f64 / logical as f64,
        writes,
        time_per_write_ns: per,
        writes_per_s: 1e9 / per,
        merges_switch: counts[0],
        merges_partial: counts[1],
        merges_full: counts[2],
        erases: counts[3],
        page_copies: counts[4],
        mean_distance: 0.0,
        model_writes_per_s: 0.0,
        sweep_model_writes_per_s: 0.0,
        model_mean_distance: 0.0,
        sweep_model_mean_distance: 0.0,
        speedup: 1.0,
    }
}

fn with_model(
    mut r: ExperimentRow,
    curve: &CostCurve,
    gather: Option<&GatherStats>,
) -> Result<ExperimentRow, DeviceError> {
    match gather {
        None => {
            r.model_writes_per_s = 1e9 / curve.random_ns();
            r.sweep_model_writes_per_s = r.model_writes_per_s;
        }
        Some(g) => {
            let p = predict(r.logical_sectors, r.pool_sectors, curve)?;
            r.mean_distance = g.mean_distance();
            r.model_writes_per_s = p.writes_per_s;
            r.sweep_model_writes_per_s = p.sweep_writes_per_s;
            r.model_mean_distance = p.mean_distance;
            r.sweep_model_mean_distance = p.sweep_mean_distance;
        }
    }
    Ok(r)
}

/// Direct uniform random sector writes on a device of |L| sectors.
pub fn simulate_direct(
    cfg: &ExperimentConfig,
    device: &DeviceConfig,
    curve: &CostCurve,
) -> Result<ExperimentRow, DeviceError> {
    let k = pages_per_sector(cfg, device)?;
    let l = cfg.logical_sectors;
    let mut dev = Sectors { dev: build(device, l, k)?, k: k as u64 };
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    drive(&mut dev, &mut rng, (cfg.warmup_passes * l as f64).round() as u64)?;
    let (t, counts) = drive(&mut dev, &mut rng, cfg.measure_writes)?;
    with_model(row(device.label(), Mode::Direct, l, 0, cfg.measure_writes, t as f64, counts), curve, None)
}

/// The same writes through the layer with a pool of `pool_percent`% of |L|, on a device of
/// |L| + |P| sectors.
pub fn simulate_gather(
    cfg: &ExperimentConfig,
    device: &DeviceConfig,
    pool_percent: f64,
    curve: &CostCurve,
) -> Result<ExperimentRow, DeviceError> {
    let k = pages_per_sector(cfg, device)?;
    let l = cfg.logical_sectors;
    let gcfg = GatherConfig { logical_sectors: l, pool: PoolSize::Percent(pool_percent), pages_per_sector: k };
    let f = gcfg.physical_sectors()?;
    let mut g = Gather::new(build(device, f, k)?, &gcfg)?;
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    drive(&mut g, &mut rng, (cfg.warmup_passes * f as f64).round() as u64)?;
    g.reset_gather_stats();
    let (t, counts) = drive(&mut g, &mut rng, cfg.measure_writes)?;
    let stats = g.gather_stats().clone();
    let r = row(device.label(), Mode::Gather, l, f - l, cfg.measure_writes, t as f64, counts);
    with_model(r, curve, Some(&stats))
}

/// The whole experiment on one simulated device: its cost curve, the direct row, then one
/// gather row per pool size (speedups filled in). `progress` sees each row as it is made.
pub fn simulate(
    cfg: &ExperimentConfig,
    device: &DeviceConfig,
    progress: &mut dyn FnMut(&ExperimentRow),
) -> Result<(Vec<ExperimentRow>, Vec<ProbeRow>), DeviceError> {
    let (curve, probe_rows) = cost_curve(cfg, device)?;
    let direct = simulate_direct(cfg, device, &curve)?;
    progress(&direct);
    let direct_rate = direct.writes_per_s;
    let mut rows = vec![direct];
    for &pc in &cfg.pools_percent {
        let mut r = simulate_gather(cfg, device, pc, &curve)?;
        r.speedup = r.writes_per_s / direct_rate;
        progress(&r);
        rows.push(r);
    }
    Ok((rows, probe_rows))
}

/// Sets each row's `speedup` to its writes per second over the direct row of the same device.
pub fn fill_speedups(rows: &mut [ExperimentRow]) {
    let direct: Vec<(String, f64)> =
        rows.iter().filter(|r| r.mode == Mode::Direct).map(|r| (r.device.clone(), r.writes_per_s)).collect();
    for r in rows.iter_mut() {
        if let Some((_, base)) = direct.iter().find(|(d, _)| *d == r.device) {
            r.speedup = r.writes_per_s / base;
        }
    }
}

/// Parameters of the real-file experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct FileExperimentConfig {
    /// The probe file (created if absent; see [`super::probe`] for the safety rules). Its size
    /// must hold 1 + |L| × (1 + largest pool) sectors; by default it is made just that large.
    pub path: PathBuf,
    /// Use a file not created by flashbuf.
    pub force: bool,
    /// Direct I/O (with recorded fallback) and `fdatasync` after every write.
    pub file: FileOptions,
    /// |L| in sectors.
    pub logical_sectors: u64,
    /// Pool sizes in percent of |L|.
    pub pools_percent: Vec<f64>,
    /// Sector size in bytes (the layer's payload is 32 bytes less).
    pub sector_bytes: usize,
    /// Warm-up writes in passes over the sectors in use.
    pub warmup_passes: f64,
    /// Timed writes per run.
    pub measure_writes: u64,
    /// Seed of the logical write stream.
    pub seed: u64,
    /// How cost(d) is probed on the file for the model.
    pub probe: ProbeConfig,
}

impl FileExperimentConfig {
    /// Defaults for `path`: 16,384 logical sectors of 4 KiB (64 MiB), the default pools (so a
    /// 256 MiB file), direct I/O without sync, one warm-up pass, 16,384 timed writes.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileExperimentConfig {
            path: path.into(),
            force: false,
            file: FileOptions::default(),
            logical_sectors: 16_384,
            pools_percent: DEFAULT_POOLS_PERCENT.to_vec(),
            sector_bytes: 4096,
            warmup_passes: 1.0,
            measure_writes: 16_384,
            seed: 42,
            probe: ProbeConfig { distances: SIM_PROBE_DISTANCES.to_vec(), ..Default::default() },
        }
    }

    /// Physical sectors the largest pool needs (|L| + |P|max).
    pub fn sectors_needed(&self) -> Result<u64, DeviceError> {
        let mut most = self.logical_sectors;
        for &pc in &self.pools_percent {
            most = most.max(GatherConfig::new(self.logical_sectors, PoolSize::Percent(pc)).physical_sectors()?);
        }
        Ok(most)
    }
}

/// What the file experiment returns: rows, the file's cost probe, and the I/O mode in effect.
pub struct FileExperiment {
    /// Direct row then one gather row per pool size.
    pub rows: Vec<ExperimentRow>,
    /// cost(d) probed on the file.
    pub probe: Vec<ProbeRow>,
    /// Why direct I/O is not in effect, if it was asked for and refused.
    pub fallback_reason: Option<String>,
    /// Whether the run created the file.
    pub created: bool,
}

/// The experiment on a real file: probe cost(d), then direct random writes over |L| sectors,
/// then each pool size through a [`GatherStore`] (formatted afresh each time; formatting is the
/// sequential fill). Times are wall clock around the timed loop.
pub fn run_file(
    cfg: &FileExperimentConfig,
    progress: &mut dyn FnMut(&ExperimentRow),
) -> Result<FileExperiment, StoreError> {
    let needed = cfg.sectors_needed()?;
    let size = (needed + 1) * cfg.sector_bytes as u64;
    let mut opts = ProbeFileOptions::new(cfg.path.clone());
    opts.sector_bytes = cfg.sector_bytes;
    opts.force = cfg.force;
    opts.file = cfg.file;
    opts.size_bytes = Some(size);
    let pf = probe::open_probe_file(&opts)?;
    let created = pf.created;
    let fallback_reason = pf.store.inner().fallback_reason().map(str::to_string);
    let label = pf.store.inner().label();
    let mut file = pf.store.into_inner();

    let mut region = SectorWindow::new(file, 1, needed)?;
    let probe_rows = probe::probe_store(&mut region, &cfg.probe, &mut |_| {})?;
    let curve = CostCurve::from_probe(&probe_rows)?;
    file = region.into_inner();

    let l = cfg.logical_sectors;
    let mut data = vec![0u8; cfg.sector_bytes];
    ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x5EED).fill_bytes(&mut data);

    // Direct: random whole sectors.
    let mut direct = SectorWindow::new(file, 1, l)?;
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    timed_writes(&mut direct, &mut data, l, &mut rng, (cfg.warmup_passes * l as f64).round() as u64)?;
    let time = timed_writes(&mut direct, &mut data, l, &mut rng, cfg.measure_writes)?;
    let r = with_model(row(label.clone(), Mode::Direct, l, 0, cfg.measure_writes, time, [0; 5]), &curve, None)?;
    progress(&r);
    let direct_rate = r.writes_per_s;
    let mut rows = vec![r];
    file = direct.into_inner();

    for &pc in &cfg.pools_percent {
        let gcfg = GatherConfig::new(l, PoolSize::Percent(pc));
        let f = gcfg.physical_sectors()?;
        let window = SectorWindow::new(file, 1, f)?;
        let mut g = GatherStore::format(window, l, gcfg.pool)?;
        let payload = cfg.sector_bytes - HEADER_BYTES;
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
        timed_writes(&mut g, &mut data[..payload], l, &mut rng, (cfg.warmup_passes * f as f64).round() as u64)?;
        g.reset_gather_stats();
        let time = timed_writes(&mut g, &mut data[..payload], l, &mut rng, cfg.measure_writes)?;
        let stats = g.gather_stats().clone();
        let r = row(label.clone(), Mode::Gather, l, f - l, cfg.measure_writes, time, [0; 5]);
        let mut r = with_model(r, &curve, Some(&stats))?;
        r.speedup = r.writes_per_s / direct_rate;
        progress(&r);
        rows.push(r);
        file = g.into_inner().into_inner();
    }
    Ok(FileExperiment { rows, probe: probe_rows, fallback_reason, created })
}

/// `n` writes of uniformly random pages (drawn from `rng`), each stamped with a counter;
/// returns their wall-clock time in nanoseconds.
fn timed_writes<S: PageStore>(
    store: &mut S,
    data: &mut [u8],
    pages: u64,
    rng: &mut ChaCha8Rng,
    n: u64,
) -> Result<f64, StoreError> {
    let start = Instant::now();
    for i in 0..n {
        data[..8].copy_from_slice(&i.to_le_bytes());
        store.write_page(rng.random_range(0..pages), data)?;
    }
    Ok(start.elapsed().as_nanos() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sector_sizes_must_fit_pages() {
        let cfg = ExperimentConfig { sector_bytes: 3000, ..Default::default() };
        assert!(pages_per_sector(&cfg, &default_devices()[0]).is_err());
        let cfg = ExperimentConfig::default();
        assert_eq!(pages_per_sector(&cfg, &default_devices()[0]).unwrap(), 2);
    }

    #[test]
    fn csv_line_has_one_field_per_header_column() {
        let r = row("file:/a,b (direct I/O)".into(), Mode::Direct, 10, 0, 5, 100.0, [1, 2, 3, 4, 5]);
        let header = ExperimentRow::CSV_HEADER.split(',').count();
        let line = r.csv();
        assert!(line.starts_with("\"file:/a,b (direct I/O)\",direct,10,0,0.000,5,"), "{line}");
        assert_eq!(line.replace("\"file:/a,b (direct I/O)\"", "x").split(',').count(), header);
    }
}
