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
    println!("Devices (--device):");
    println!("  ideal      fixed latency per page: 25 µs read, 220 µs write (AD-LRU Table 2)");
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
