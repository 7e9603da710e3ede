//! `livemove`: model-check live replica moves, export and check traces,
//! explore the state space.

mod cmd;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "livemove",
    version,
    about = "Model-checked live rebalancing and replica moves for a replicated queue partition"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Explore every interleaving of a configuration and report each property.
    Check(cmd::check::Args),
    /// Serve Stateright's Explorer for a configuration (web UI).
    Explore {
        #[arg(long)]
        config: String,
        /// Address to bind; loopback unless told otherwise.
        #[arg(long, default_value = "127.0.0.1:3000")]
        addr: String,
        #[arg(long)]
        mutant: Option<String>,
    },
    /// Export and check trace files.
    #[command(subcommand)]
    Trace(TraceCmd),
    /// Replay the model against the implementation: every edge, refusals, traces, walks.
    Conform(cmd::conform::Args),
    /// Run every mutant of the bug zoo against every available checker.
    Zoo(cmd::zoo::Args),
    /// Model-checking throughput: median of N runs per config, as a table.
    Bench(cmd::bench::Args),
    /// Check a configuration with TLC on the TLA+ spec and compare with the model.
    Tlc(cmd::tlc::Args),
    /// Rebalance planner: scenarios against lower bounds, scores, moves, operator commands.
    Plan(cmd::plan::Args),
}

#[derive(Subcommand)]
enum TraceCmd {
    /// Write one file per property discovery plus N seeded random walks.
    Export {
        #[arg(long)]
        config: String,
        #[arg(long)]
        out: PathBuf,
        #[arg(long, default_value_t = 0)]
        walks: u32,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Longest random walk.
        #[arg(long, default_value_t = 64)]
        steps_max: usize,
        #[arg(long)]
        mutant: Option<String>,
    },
    /// Replay trace files through the model: is every step allowed?
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Check(args) => cmd::check::run(args),
        Command::Explore {
            config,
            addr,
            mutant,
        } => cmd::explore(&config, &addr, mutant.as_deref()),
        Command::Trace(TraceCmd::Export {
            config,
            out,
            walks,
            seed,
            steps_max,
            mutant,
        }) => cmd::trace::export(&config, &out, walks, seed, steps_max, mutant.as_deref()),
        Command::Trace(TraceCmd::Check { files }) => cmd::trace::check(&files),
        Command::Conform(args) => cmd::conform::run(args),
        Command::Zoo(args) => cmd::zoo::run(args),
        Command::Bench(args) => cmd::bench::run(args),
        Command::Tlc(args) => cmd::tlc::run(args),
        Command::Plan(args) => cmd::plan::run(args),
    };
    ExitCode::from(code)
}
