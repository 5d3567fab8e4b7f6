//! `flashbuf-fuzz TARGET [--seconds N] [--seed S] [--crashes DIR]`: the stable-Rust mutational
//! fuzzer over flashbuf's fuzz targets (`flashbuf-fuzz list` names them). For coverage-guided
//! fuzzing, the same targets run under libFuzzer: `cd fuzz && cargo +nightly fuzz run TARGET`.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let Some(name) = args.first() else {
        eprintln!("usage: flashbuf-fuzz TARGET|all|list|corpus DIR [--seconds N] [--seed S] [--crashes DIR]");
        return ExitCode::from(2);
    };
    if name == "list" {
        for t in flashbuf_fuzz::TARGETS {
            println!("{:<14} {}", t.name, t.about);
        }
        return ExitCode::SUCCESS;
    }
    if name == "corpus" {
        // Writes the seed corpus as cargo-fuzz expects it: DIR/<target>/<name>.
        let Some(dir) = args.get(1).map(PathBuf::from) else {
            eprintln!("usage: flashbuf-fuzz corpus DIR");
            return ExitCode::from(2);
        };
        for (target, file, bytes) in flashbuf_fuzz::seeds() {
            let d = dir.join(target);
            if std::fs::create_dir_all(&d).and_then(|()| std::fs::write(d.join(&file), bytes)).is_err() {
                eprintln!("cannot write {}", d.join(file).display());
                return ExitCode::FAILURE;
            }
        }
        return ExitCode::SUCCESS;
    }
    let seconds: f64 = value("--seconds").and_then(|s| s.parse().ok()).unwrap_or(60.0);
    let seed: u64 = value("--seed").and_then(|s| s.parse().ok()).unwrap_or(1);
    let crashes = value("--crashes").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("target/fuzz-crashes"));
    let targets: Vec<&flashbuf_fuzz::Target> = if name == "all" {
        flashbuf_fuzz::TARGETS.iter().collect()
    } else {
        match flashbuf_fuzz::target(name) {
            Some(t) => vec![t],
            None => {
                eprintln!("unknown target '{name}'; `flashbuf-fuzz list` names them");
                return ExitCode::from(2);
            }
        }
    };
    let mut failed = false;
    for t in targets {
        let r = flashbuf_fuzz::fuzz(t, seconds, u64::MAX, seed, Some(&crashes));
        println!(
            "{:<14} {:>10} executions in {seconds:.0} s ({:.0}/s), {} crash(es)",
            t.name,
            r.executions,
            r.executions as f64 / seconds,
            r.crashes.len()
        );
        failed |= !r.crashes.is_empty();
    }
    if failed {
        eprintln!("crashing inputs saved in {}", crashes.display());
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
