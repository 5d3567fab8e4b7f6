//! `flashbuf` — flash-aware database buffer management: replacement policies, simulated flash,
//! trace-driven simulation.

mod args;
mod cmd_bench;
mod cmd_convert;
mod cmd_curve;
mod cmd_engine;
mod cmd_gather;
mod cmd_gen;
mod cmd_list;
mod cmd_plot;
mod cmd_reproduce;
mod cmd_run;
mod cmd_stats;
mod cmd_sweep;
mod devices;
mod output;
mod progress;
mod traces;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Flash-aware database buffer management: compare buffer replacement policies on traces over
/// simulated flash devices.
#[derive(Parser)]
#[command(name = "flashbuf", version, propagate_version = true)]
#[command(after_help = "Start with `flashbuf run` (the AD-LRU paper's Zipf trace through the classic \
policies) and `flashbuf list` (every policy, device, trace format and generator).")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run traces through buffer policies and print one result row per combination.
    Run(cmd_run::RunArgs),
    /// Curves against buffer size: LRU exact in one pass, SHARDS, miniature simulation; bounds.
    Curve(cmd_curve::CurveArgs),
    /// Write a synthetic trace to a file.
    Gen(cmd_gen::GenArgs),
    /// Summarise a trace: requests, reads and writes, distinct pages, footprint, volumes.
    Stats(cmd_stats::StatsArgs),
    /// Convert a trace to flashbuf's binary or text format or to libCacheSim's oracleGeneral.
    Convert(cmd_convert::ConvertArgs),
    /// List policies (with parameters), devices, trace formats and generators.
    List,
    /// Measure simulator throughput in requests per second.
    Bench(cmd_bench::BenchArgs),
    /// Re-run the papers' experiments and write reports beside their claims.
    Reproduce(cmd_reproduce::ReproduceArgs),
    /// The FTL-independent write-gathering layer: probe cost(d), model, benchmark.
    Gather(cmd_gather::GatherArgs),
    /// Run a parameter sweep described in a TOML file; results stream to CSV and JSON Lines.
    Sweep(cmd_sweep::SweepArgs),
    /// Plot columns of a CSV file (sweep or run results, or any other) as SVG and PNG.
    Plot(cmd_plot::PlotArgs),
    /// The storage engine: run the CFDC transaction workload (`engine bench`).
    Engine(cmd_engine::EngineArgs),
}

fn main() -> ExitCode {
    // Ctrl-C or SIGTERM: remove the temporary files of outputs being written, then end as an
    // interrupted program does (exit status 130). Outputs appear only when complete, so nothing
    // half-written is left either way.
    let _ = ctrlc::set_handler(|| {
        flashbuf_trace::output::remove_temporaries();
        std::process::exit(130);
    });
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(a) => cmd_run::run(a),
        Command::Curve(a) => cmd_curve::run(a),
        Command::Gen(a) => cmd_gen::run(a),
        Command::Stats(a) => cmd_stats::run(a),
        Command::Convert(a) => cmd_convert::run(a),
        Command::List => cmd_list::run(),
        Command::Bench(a) => cmd_bench::run(a),
        Command::Reproduce(a) => cmd_reproduce::run(a),
        Command::Gather(a) => cmd_gather::run(a),
        Command::Sweep(a) => cmd_sweep::run(a),
        Command::Plot(a) => cmd_plot::run(a),
        Command::Engine(a) => cmd_engine::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let chain: Vec<String> = e.chain().map(|c| c.to_string()).collect();
            let mut msg = String::new();
            for c in chain {
                if !msg.is_empty() && !msg.contains(&c) {
                    msg.push_str(": ");
                    msg.push_str(&c);
                } else if msg.is_empty() {
                    msg = c;
                }
            }
            eprintln!("flashbuf: error: {msg}");
            ExitCode::FAILURE
        }
    }
}
