//! The `sleuth` command-line tool.
//!
//! Arguments are parsed here (clap), then each command resolves them into real objects
//! (datasets, models, methods) in one place and runs. `anyhow` lives only in this crate.

mod bounds;
mod commands;
mod config;
mod cost;
mod examples;
mod local;
mod progress;
mod resolve;
mod show;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "sleuth",
    version,
    about = "Multi-hop QA agents that track what they know, and their evaluation"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Inspect benchmark files.
    #[command(subcommand)]
    Data(commands::data::DataCommand),
    /// Score predictions in the official formats against a benchmark file.
    Score(commands::score::Args),
    /// Answer one question with one method, showing each turn.
    Ask(commands::ask::Args),
    /// Run methods over a benchmark and write run records.
    Eval(commands::eval::Args),
    /// Tables, statistics, plots and trace viewers from run records.
    Report(commands::report::Args),
    /// Write one method's answers and supporting facts as an official prediction file.
    Export(commands::export::Args),
    /// Build or search a BM25 corpus index.
    #[command(subcommand)]
    Index(commands::index::IndexCommand),
    /// Manage embedded local models.
    #[command(subcommand)]
    Model(commands::model::ModelCommand),
    /// Offline demo: the embedded model on bundled questions.
    Demo(commands::demo::Args),
    /// Run an experiment recipe (a grid of methods x datasets x options).
    Experiment(commands::experiment::Args),
    /// List the methods, or show one method's settings and call estimate.
    Methods(commands::methods::Args),
    /// Inspect a response cache, or move its entries between SQLite and Redis.
    #[command(subcommand)]
    Cache(commands::cache::CacheCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(commands::completions::Args),
}

/// Restores the default SIGPIPE action so `sleuth report | head` ends quietly instead
/// of panicking on a closed stdout (Rust ignores SIGPIPE by default).
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called once at startup before any other thread exists; SIG_DFL is a
    // valid disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// The command tree with the config file's defaults and every subcommand's examples.
fn command(config: &config::Config) -> clap::Command {
    examples::attach(config::apply(Cli::command(), config), "")
}

fn main() -> ExitCode {
    restore_sigpipe();
    // The library's messages name its knobs by this front end's flags.
    sleuth::knob::speak_as(sleuth::knob::Speaker::Cli);
    tracing_subscriber::fmt()
        // Unset SLEUTH_LOG shows our own warnings (e.g. a response cache gone away)
        // but not the embedded model's chatter.
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SLEUTH_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("error,sleuth=warn")),
        )
        .with_writer(std::io::stderr)
        // Colour only for a person at a terminal: a redirected log gets plain text.
        .with_ansi(
            std::io::IsTerminal::is_terminal(&std::io::stderr())
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        )
        .init();
    // The user's config file supplies defaults, shown by --help (config.rs).
    let config = match config::load() {
        Ok(c) => c,
        Err(e) => {
            eprintln!(
                "error: {}",
                sleuth::terminal::terminal_safe_lines(&format!("{e:#}"))
            );
            return ExitCode::FAILURE;
        }
    };
    let cli = match Cli::from_arg_matches(&command(&config).get_matches()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let result = match cli.command {
        Command::Data(c) => commands::data::run(c),
        Command::Score(a) => commands::score::run(a),
        Command::Ask(a) => commands::ask::run(a),
        Command::Eval(a) => commands::eval::run(a),
        Command::Report(a) => commands::report::run(a),
        Command::Export(a) => commands::export::run(a),
        Command::Index(c) => commands::index::run(c),
        Command::Model(c) => commands::model::run(c),
        Command::Demo(a) => commands::demo::run(a),
        Command::Experiment(a) => commands::experiment::run(a),
        Command::Methods(a) => commands::methods::run(a),
        Command::Cache(c) => commands::cache::run(c),
        Command::Completions(a) => commands::completions::run(a, &mut command(&config)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // Ctrl-C or SIGTERM: what was kept is already said; 130 or 143 as a shell
        // reports SIGINT or SIGTERM.
        Err(e) if e.is::<Interrupted>() => {
            let code = e
                .downcast_ref::<Interrupted>()
                .map_or(130, Interrupted::exit_code);
            ExitCode::from(code)
        }
        Err(e) => {
            // Errors quote data and model text: escape what a terminal would act on.
            eprintln!(
                "error: {}",
                sleuth::terminal::terminal_safe_lines(&one_line(&e))
            );
            ExitCode::FAILURE
        }
    }
}

/// A run stopped by a signal (Ctrl-C's SIGINT, or SIGTERM from a job scheduler or
/// `kill`) after saying what it kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupted {
    Interrupt,
    Terminate,
}

impl Interrupted {
    /// The status a shell reports for a process the signal ended: 128 + its number.
    fn exit_code(&self) -> u8 {
        match self {
            Interrupted::Interrupt => 130,
            Interrupted::Terminate => 143,
        }
    }

    /// Waits for SIGINT or SIGTERM (SIGINT alone where there is no SIGTERM) and says
    /// which came. SIGTERM ends a run as Ctrl-C does (hardening III): records kept,
    /// the resume command printed.
    pub async fn wait() -> Interrupted {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            if let Ok(mut term) = signal(SignalKind::terminate()) {
                return tokio::select! {
                    _ = tokio::signal::ctrl_c() => Interrupted::Interrupt,
                    _ = term.recv() => Interrupted::Terminate,
                };
            }
        }
        let _ = tokio::signal::ctrl_c().await;
        Interrupted::Interrupt
    }
}

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Interrupted::Interrupt => "interrupted",
            Interrupted::Terminate => "terminated",
        })
    }
}

impl std::error::Error for Interrupted {}

/// The error and its causes on one line, each cause once: many error types already
/// quote their cause in their own message, and printing the chain as well would repeat
/// it ("cannot read F: No such file or directory: No such file or directory").
fn one_line(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let cause = cause.to_string();
        if text.contains(&cause) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn a_cause_quoted_by_its_error_is_not_repeated() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        #[derive(Debug)]
        struct Quoting(std::io::Error);
        impl std::fmt::Display for Quoting {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "cannot read F: {}", self.0)
            }
        }
        impl std::error::Error for Quoting {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let e = anyhow::Error::new(Quoting(io)).context("loading questions");
        assert_eq!(
            one_line(&e),
            "loading questions: cannot read F: No such file"
        );
    }
}
