//! `sleuth data fetch NAME...`: the official benchmark files, by name, with progress
//! bars; and `data corpus --dataset hotpotqa-wiki`, which reads what it fetched.

use anyhow::{anyhow, bail, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use sleuth::data::fetch::{self, FetchOptions, FetchProgress, SOURCES};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

#[derive(Args)]
pub struct FetchArgs {
    /// What to fetch: hotpotqa, musique, 2wiki, hotpotqa-wiki (several allowed).
    #[arg(required_unless_present = "list")]
    pub names: Vec<String>,
    /// List what can be fetched, from where, and what is installed.
    #[arg(long)]
    pub list: bool,
    /// Download again even when installed (a changed upstream file is refused).
    #[arg(long)]
    pub force: bool,
    /// Data directory (default: $SLEUTH_DATA_DIR, else $SLEUTH_HOME/data, else
    /// ~/.cache/sleuth/data).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Install from files downloaded by hand (one per download of NAME, in the order
    /// `--list` gives) instead of the network; the same digest checks apply.
    #[arg(long, value_name = "FILE")]
    pub from: Vec<PathBuf>,
}

pub fn run(args: FetchArgs) -> Result<()> {
    let dir = args.data_dir.clone().unwrap_or_else(fetch::data_dir);
    if args.list {
        print!("{}", list(&dir));
        return Ok(());
    }
    if !args.from.is_empty() && args.names.len() != 1 {
        bail!("--from installs one dataset at a time");
    }
    let mut sources = Vec::new();
    for name in &args.names {
        sources.push(
            fetch::source(name).ok_or_else(|| fetch::FetchError::UnknownSource(name.clone()))?,
        );
    }
    let mut opts = FetchOptions::new(dir.clone());
    opts.force = args.force;
    opts.from = args.from.clone();
    let progress = Bars::new();
    let runtime = tokio::runtime::Runtime::new()?;
    for source in sources {
        let started = Instant::now();
        let fetched = runtime.block_on(fetch::fetch(source, &opts, &progress))?;
        if fetched.already_present {
            eprintln!(
                "{} is already installed in {} (--force to download again)",
                source.name,
                fetched.dir.display()
            );
        } else {
            eprintln!(
                "{} installed in {} ({} file(s), {:.1} s)",
                source.name,
                fetched.dir.display(),
                fetched.installed.files.len(),
                started.elapsed().as_secs_f64()
            );
        }
        for file in &fetched.installed.files {
            println!("{}", fetched.dir.join(file).display());
        }
    }
    Ok(())
}

fn list(dir: &Path) -> String {
    let mut out = format!("data directory: {}\n", dir.display());
    for s in SOURCES {
        let state = if fetch::installed(s, dir).is_some() {
            "installed"
        } else {
            "not installed"
        };
        out += &format!(
            "\n{:<14} {} [{}, {}]\n",
            s.name, s.description, s.size, state
        );
        for r in s.remotes {
            out += &format!("  {}\n", r.url);
        }
    }
    out
}

/// A byte progress bar per download on a terminal; otherwise one line per start, end
/// and note (logs and CI).
struct Bars {
    bar: Mutex<Option<ProgressBar>>,
    terminal: bool,
}

impl Bars {
    fn new() -> Self {
        Bars {
            bar: Mutex::new(None),
            terminal: std::io::stderr().is_terminal(),
        }
    }
}

impl FetchProgress for Bars {
    fn begin(&self, label: &str, total: Option<u64>, done: u64) {
        if !self.terminal {
            let size = total.map_or("unknown size".to_string(), |t| format!("{t} bytes"));
            eprintln!("{label} ({size}, from byte {done})");
            return;
        }
        let bar = ProgressBar::new(total.unwrap_or(0));
        bar.set_style(
            ProgressStyle::with_template(
                "{msg} {bar:30} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            )
            .expect("valid progress template"),
        );
        bar.set_message(label.to_string());
        bar.set_position(done);
        *self.bar.lock().expect("progress lock") = Some(bar);
    }

    fn advance(&self, bytes: u64) {
        if let Some(bar) = self.bar.lock().expect("progress lock").as_ref() {
            bar.inc(bytes);
        }
    }

    fn end(&self) {
        if let Some(bar) = self.bar.lock().expect("progress lock").take() {
            bar.finish();
        }
    }

    fn note(&self, message: &str) {
        match self.bar.lock().expect("progress lock").as_ref() {
            Some(bar) => bar.println(message),
            None => eprintln!("{message}"),
        }
    }
}

/// `data corpus --dataset hotpotqa-wiki`: the abstracts dump as a corpus.
pub fn wiki_corpus(data: &[PathBuf], out: &Path) -> Result<()> {
    let input = match data {
        [] => {
            let dir = fetch::data_dir();
            let source = fetch::source("hotpotqa-wiki").expect("registered");
            if fetch::installed(source, &dir).is_none() {
                bail!(
                    "hotpotqa-wiki is not installed in {}: run `sleuth data fetch hotpotqa-wiki` \
                     (or give the dump with --data)",
                    dir.display()
                );
            }
            dir.join("hotpotqa-wiki").join("abstracts")
        }
        [one] => one.clone(),
        _ => bail!("hotpotqa-wiki takes one --data (the abstracts folder or .tar.bz2)"),
    };
    if !input.exists() {
        bail!("{} does not exist", input.display());
    }
    let started = Instant::now();
    let terminal = std::io::stderr().is_terminal();
    let mut last = Instant::now();
    let stats = sleuth::data::write_wiki_corpus(&input, out, &mut |s| {
        if terminal && last.elapsed().as_secs() >= 2 {
            eprint!("\r{} files, {} paragraphs", s.files, s.written);
            last = Instant::now();
        }
    })
    .map_err(|e| anyhow!(e))?;
    if terminal {
        eprintln!();
    }
    println!(
        "read {} articles from {} files in {:.1} s; wrote {} paragraphs to {} ({} empty left out)",
        stats.articles,
        stats.files,
        started.elapsed().as_secs_f64(),
        stats.written,
        out.display(),
        stats.empty
    );
    if stats.links_skipped > 0 {
        eprintln!(
            "skipped {} symbolic links: they lead out of {} or back to what was read already",
            stats.links_skipped,
            input.display()
        );
    }
    Ok(())
}
