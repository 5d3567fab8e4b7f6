//! `flashbuf list`: what can be named on the command line.

use anyhow::Result;
use flashbuf_policy::{POLICIES, PolicyConfig};
use flashbuf_trace::{Format, GenKind, PRESETS};

pub fn run() -> Result<()> {
    println!("Policies (--policy name or name:key=value,...):");
    for (name, doc) in POLICIES {
        let cfg = PolicyConfig::with_defaults(name).expect("registered");
        println!("  {name:<10} {doc}");
        for k in cfg.keys() {
            println!("  {:<10}   {}: {}", "", k.key, k.help);
        }
    }
    println!();
    println!("Devices (--device, on a --preset chip: micron = AD-LRU Table 2, ref = REF Table I):");
    println!("  page       page-mapped FTL: garbage collection (--gc greedy|cost-benefit|fifo, --op PERCENT,");
    println!("             --gc-threshold), dynamic and static wear levelling (the default device)");
    println!("  block      block-mapped FTL: in place, copy on update");
    println!("  bast       log-block FTL, 1:1 (Kim et al. 2002): --log-blocks N, --eager-merge");
    println!("  fast       log-block FTL, 1:N (Lee et al. 2007): --log-blocks N, --no-seq-log");
    println!("  ideal      the preset's read and write latencies, no translation layer");
    println!("  every device: --precondition empty|sequential|aged[:WRITES|steady[:SEED]], --verify, --capacity");
    println!();
    println!("Trace formats (--format, or name:path):");
    for f in Format::ALL {
        println!("  {:<13} {}", f.name(), f.description());
    }
    println!();
    println!("Generators (gen:KIND,key=value,... or flashbuf gen KIND):");
    for k in GenKind::ALL {
        println!("  {:<13} keys: {}", k.name(), k.keys().join(", "));
    }
    println!("Presets (the papers' traces, usable as KIND):");
    for p in PRESETS {
        println!("  {:<20} {}", p.name, p.description);
    }
    Ok(())
}
