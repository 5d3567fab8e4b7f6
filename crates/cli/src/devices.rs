//! Choosing the simulated device from the command line.

use clap::Args;
use flashbuf_flash::{DeviceConfig, DeviceKind, GcPolicy, NandPreset, Precondition};

/// Device options shared by every command that simulates a device.
#[derive(Args, Clone, Debug)]
pub struct DeviceArgs {
    /// Devices, comma-separated: `page` (page-mapped FTL with garbage collection and wear
    /// levelling), `block` (block-mapped), `bast` (1:1 log blocks), `fast` (1:N log blocks),
    /// `ideal` (the preset's read and write latencies, no FTL). Every run is made on each.
    #[arg(long = "device", default_value = "page", value_parser = parse::<DeviceKind>, value_delimiter = ',')]
    pub devices: Vec<DeviceKind>,
    /// Chip preset: `micron` (MT29F4G08AAA, AD-LRU Table 2: 2 KiB pages, 64 per block, 25 µs
    /// read, 220 µs program, 1.5 ms erase) or `ref` (REF paper Table I: 10 µs, 200 µs, 2 ms).
    #[arg(long, default_value = "micron", value_parser = parse::<NandPreset>)]
    pub preset: NandPreset,
    /// Log blocks of the BAST and FAST devices.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub log_blocks: u32,
    /// FAST without its sequential log block (all log blocks random).
    #[arg(long)]
    pub no_seq_log: bool,
    /// BAST merges a log block as soon as it is full (default: when a log block is next needed,
    /// as in the REF paper's Fig. 6).
    #[arg(long)]
    pub eager_merge: bool,
    /// Garbage collection victim policy of the page-mapped device: greedy, cost-benefit, fifo.
    #[arg(long, default_value = "greedy", value_parser = parse::<GcPolicy>)]
    pub gc: GcPolicy,
    /// Over-provisioning of the page-mapped device: spare space in percent of the logical space.
    #[arg(long = "op", default_value_t = 7.0, value_name = "PERCENT")]
    pub op_percent: f64,
    /// Free blocks at or below which the page-mapped device collects garbage.
    #[arg(long, default_value_t = 2, value_name = "BLOCKS")]
    pub gc_threshold: u32,
    /// State of the device when the run starts: `empty`, `sequential` (every page written once,
    /// a freshly loaded database) or `aged[:WRITES|steady[:SEED]]` (then random writes to a
    /// steady state).
    #[arg(long, default_value = "sequential", value_parser = parse::<Precondition>)]
    pub precondition: Precondition,
    /// Check, on every read, that the device returns the version last written.
    #[arg(long)]
    pub verify: bool,
    /// Logical capacity of the devices in pages (default: the trace's page space: its largest
    /// page + 1, or, when pages are remapped, the touched extents × extent size).
    #[arg(long, value_name = "PAGES")]
    pub capacity: Option<u64>,
}

fn parse<T: std::str::FromStr<Err = flashbuf_flash::DeviceError>>(s: &str) -> Result<T, String> {
    s.parse::<T>().map_err(|e| e.to_string())
}

impl DeviceArgs {
    /// The device configurations these options describe, one per `--device` kind (each once).
    pub fn configs(&self) -> Vec<DeviceConfig> {
        let mut kinds: Vec<DeviceKind> = Vec::new();
        for &k in &self.devices {
            if !kinds.contains(&k) {
                kinds.push(k);
            }
        }
        kinds
            .into_iter()
            .map(|kind| DeviceConfig {
                kind,
                preset: self.preset,
                log_blocks: self.log_blocks,
                seq_log: !self.no_seq_log,
                eager_merge: self.eager_merge,
                gc: self.gc,
                op_percent: self.op_percent,
                gc_threshold: self.gc_threshold,
                precondition: self.precondition,
                verify: self.verify,
                ..DeviceConfig::default()
            })
            .collect()
    }
}
