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
    /// Serve the Explorer for a configuration: walk its states in a browser.
    Explore(cmd::explore::Args),
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
    /// Deterministic simulation of the runtime's nodes: one row per seed.
    Sim(cmd::sim::Args),
    /// Run one node process over TCP, hosting every partition of the store.
    Node(cmd::node::NodeArgs),
    /// Run the controller process: the failure detector that opens recoveries.
    Controller(cmd::node::ControllerArgs),
    /// Make the first records, publish, read a status, ask for a join or a handoff, cut links.
    #[command(subcommand)]
    Client(cmd::node::ClientCmd),
    /// A live cluster in one process: moves, a handoff, a kill; the report and the traces validated.
    Demo(cmd::demo::Args),
}

#[derive(Subcommand)]
enum TraceCmd {
    /// Write one file per property discovery plus N seeded random walks.
    Export {
        /// A config or group name (see `livemove check --list`).
        #[arg(long)]
        config: String,
        /// Directory the trace files are written to (created if missing).
        #[arg(long)]
        out: PathBuf,
        /// Seeded random walks to write besides the discoveries.
        #[arg(long, default_value_t = 0)]
        walks: u32,
        /// Seed of the first walk (walk k uses seed + k).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Longest random walk, in steps (at least 1).
        #[arg(long, default_value_t = 64, value_parser = cmd::positive_count)]
        steps_max: usize,
        /// Write the traces of a mutant of the protocol (see `livemove zoo`).
        #[arg(long)]
        mutant: Option<String>,
        /// The project's JSON schema, the Informal Trace Format (`.itf.json`), or both.
        #[arg(long, value_enum, default_value = "json")]
        format: cmd::trace::Format,
    },
    /// Validate runtime traces (NDJSON) against the TLA+ spec with TLC.
    Validate(cmd::validate::Args),
    /// Replay trace files through the model: is every step allowed?
    Check {
        /// Trace files (`livemove-trace/1` JSON, see docs/traces.md).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Check(args) => cmd::check::run(args),
        Command::Explore(args) => cmd::explore::run(args),
        Command::Trace(TraceCmd::Export {
            config,
            out,
            walks,
            seed,
            steps_max,
            mutant,
            format,
        }) => cmd::trace::export(
            &config,
            &out,
            walks,
            seed,
            steps_max,
            mutant.as_deref(),
            format,
        ),
        Command::Trace(TraceCmd::Check { files }) => cmd::trace::check(&files),
        Command::Trace(TraceCmd::Validate(args)) => return cmd::validate::run(args),
        Command::Conform(args) => cmd::conform::run(args),
        Command::Zoo(args) => cmd::zoo::run(args),
        Command::Bench(args) => cmd::bench::run(args),
        Command::Tlc(args) => cmd::tlc::run(args),
        Command::Plan(args) => cmd::plan::run(args),
        Command::Sim(args) => cmd::sim::run(args),
        Command::Node(args) => cmd::node::run_node(args),
        Command::Controller(args) => cmd::node::run_controller(args),
        Command::Client(c) => cmd::node::run_client(c),
        Command::Demo(args) => cmd::demo::run(args),
    };
    ExitCode::from(code)
}
