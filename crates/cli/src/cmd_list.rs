//! `flashbuf list`: what can be named on the command line.

use crate::output::outln;
use anyhow::Result;
use flashbuf_policy::{POLICIES, PolicyConfig};
use flashbuf_trace::{Format, GenKind, PRESETS};

pub fn run() -> Result<()> {
    outln!("Policies (--policy name or name:key=value,...):");
    for (name, doc) in POLICIES {
        let cfg = PolicyConfig::with_defaults(name).expect("registered");
        outln!("  {name:<10} {doc}");
        for k in cfg.keys() {
            outln!("  {:<10}   {}: {}", "", k.key, k.help);
        }
    }
    outln!();
    outln!("Devices (--device, on a --preset chip: micron = AD-LRU Table 2, ref = REF Table I):");
    outln!("  page       page-mapped FTL: garbage collection (--gc greedy|cost-benefit|fifo, --op PERCENT,");
    outln!("             --gc-threshold), dynamic and static wear levelling (the default device)");
    outln!("  block      block-mapped FTL: in place, copy on update");
    outln!("  bast       log-block FTL, 1:1 (Kim et al. 2002): --log-blocks N, --eager-merge");
    outln!("  fast       log-block FTL, 1:N (Lee et al. 2007): --log-blocks N, --no-seq-log");
    outln!("  ideal      the preset's read and write latencies, no translation layer");
    outln!("  every device: --precondition empty|sequential|aged[:WRITES|steady[:SEED]], --verify, --capacity");
    outln!();
    outln!("Trace formats (--format, or name:path):");
    for f in Format::ALL {
        outln!("  {:<13} {}", f.name(), f.description());
    }
    outln!();
    outln!("Generators (gen:KIND,key=value,... or flashbuf gen KIND):");
    for k in GenKind::ALL {
        outln!("  {:<13} keys: {}", k.name(), k.keys().join(", "));
    }
    outln!("Presets (the papers' traces, usable as KIND):");
    for p in PRESETS {
        outln!("  {:<20} {}", p.name, p.description);
    }
    Ok(())
}
