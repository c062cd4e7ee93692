//! `sleuth cache stats|export|import|clear`: look into a response cache, move its
//! entries between stores (a SQLite directory and Redis keep the same entries), and
//! remove a SQLite cache (a damaged file is named with this command in its warning).
//!
//! Export writes JSON Lines, one [`CacheEntry`] per line (format, key, model, time,
//! response with usage); import reads them back into any store, keeping entries
//! already there (the first answer wins, as in a run). Import checks the whole file
//! before writing anything, so a bad line costs nothing but the message naming it.

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use sleuth::llm::middleware::{CacheEntry, CacheSpec, CacheStats, CacheStore};
use std::io::{BufRead, BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Subcommand)]
pub enum CacheCommand {
    /// Entries, size and models of a response cache.
    Stats(StatsArgs),
    /// Write every entry as JSON Lines (to --out, or stdout).
    Export(ExportArgs),
    /// Add the entries of a JSON Lines export (`-` for stdin); existing keys are kept.
    Import(ImportArgs),
    /// Delete a SQLite cache's file (with its -wal and -shm files), e.g. a damaged one.
    Clear(ClearArgs),
}

#[derive(Args)]
pub struct Location {
    /// The cache: a directory (SQLite; default $SLEUTH_HOME/responses, else
    /// ~/.cache/sleuth/responses) or
    /// redis://HOST:PORT/DB.
    #[arg(
        long,
        env = "SLEUTH_CACHE",
        hide_env_values = true,
        value_name = "DIR|URL"
    )]
    pub cache: Option<String>,
}

#[derive(Args)]
pub struct StatsArgs {
    #[command(flatten)]
    pub location: Location,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub location: Location,
    /// Output file (default: stdout).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Args)]
pub struct ImportArgs {
    /// A JSON Lines file written by `sleuth cache export`, or `-` for stdin.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    #[command(flatten)]
    pub location: Location,
}

#[derive(Args)]
pub struct ClearArgs {
    #[command(flatten)]
    pub location: Location,
}

fn open(location: &Location) -> Result<Arc<dyn CacheStore>> {
    let spec = crate::resolve::cache_spec(location.cache.as_deref())?;
    Ok(spec.open()?)
}

pub fn run(command: CacheCommand) -> Result<()> {
    let rt = tokio::runtime::Runtime::new()?;
    match command {
        CacheCommand::Stats(a) => rt.block_on(stats(a)),
        CacheCommand::Export(a) => rt.block_on(export(a)),
        CacheCommand::Import(a) => rt.block_on(import(a)),
        CacheCommand::Clear(a) => clear(a),
    }
}

/// Removes the cache file without opening it (it may be damaged past opening), unless
/// a running sleuth has it open.
fn clear(args: ClearArgs) -> Result<()> {
    let dir = match crate::resolve::cache_spec(args.location.cache.as_deref())? {
        CacheSpec::Sqlite(dir) => dir,
        CacheSpec::Redis(_) => bail!(
            "`sleuth cache clear` removes a SQLite cache directory's file; a Redis cache's entries are the server's keys under `sleuth:response:` (delete them there)"
        ),
    };
    let removed: Vec<String> = sleuth::llm::middleware::clear_sqlite(&dir)?
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    if removed.is_empty() {
        eprintln!("no response cache in {}", dir.display());
    } else {
        eprintln!("removed {}", removed.join(", "));
    }
    Ok(())
}

async fn stats(args: StatsArgs) -> Result<()> {
    let store = open(&args.location)?;
    let s = store.stats().await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        print!("{}", render(&s));
    }
    Ok(())
}

fn render(s: &CacheStats) -> String {
    let mut out = format!("cache    {}\nentries  {}", s.location, s.entries);
    out.push_str(&format!(" ({:.1} MB)\n", s.bytes as f64 / 1e6));
    if let (Some(a), Some(b)) = (s.oldest_unix, s.newest_unix) {
        out.push_str(&format!("written  {} .. {}\n", utc(a), utc(b)));
    }
    for (format, n) in &s.by_format {
        out.push_str(&format!("format {format}: {n}\n"));
    }
    for (model, n) in &s.by_model {
        out.push_str(&format!("  {n:>8}  {model}\n"));
    }
    out
}

/// `YYYY-MM-DD HH:MM UTC` from Unix seconds (civil-from-days, no calendar crate).
fn utc(unix: i64) -> String {
    let (days, secs) = (unix.div_euclid(86_400), unix.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        secs / 3600,
        secs % 3600 / 60
    )
}

async fn export(args: ExportArgs) -> Result<()> {
    let store = open(&args.location)?;
    let sink: Box<dyn Write> = match &args.out {
        Some(p) => {
            Box::new(std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?)
        }
        None => Box::new(std::io::stdout().lock()),
    };
    let mut sink = BufWriter::new(sink);
    // Redis SCAN may repeat a key; write each once.
    let mut seen = std::collections::HashSet::new();
    let mut cursor = String::new();
    loop {
        let page = store.page(&cursor, 500).await?;
        for e in page.entries {
            if seen.insert(e.key.clone()) {
                serde_json::to_writer(&mut sink, &e)?;
                sink.write_all(b"\n")?;
            }
        }
        match page.next {
            Some(c) => cursor = c,
            None => break,
        }
    }
    sink.flush()?;
    eprintln!("exported {} entries from {}", seen.len(), store.location());
    Ok(())
}

/// Reads and checks every line of an export.
fn read_entries(file: &PathBuf) -> Result<Vec<CacheEntry>> {
    let shown = if file.as_os_str() == "-" {
        "stdin".to_string()
    } else {
        file.display().to_string()
    };
    let reader: Box<dyn BufRead> = if file.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        let f = std::fs::File::open(file).with_context(|| format!("opening {shown}"))?;
        Box::new(std::io::BufReader::new(f))
    };
    let mut entries = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.with_context(|| format!("reading {shown}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let entry: CacheEntry = serde_json::from_str(&line)
            .map_err(|e| anyhow::anyhow!("{shown}:{}: not a cache entry: {e}", i + 1))?;
        if let Err(e) = entry.validate() {
            bail!("{shown}:{}: {e}", i + 1);
        }
        entries.push(entry);
    }
    Ok(entries)
}

async fn import(args: ImportArgs) -> Result<()> {
    let entries = read_entries(&args.file)?;
    let store = open(&args.location)?;
    let mut added = 0usize;
    for e in &entries {
        if store.put(e).await? {
            added += 1;
        }
    }
    eprintln!(
        "imported {added} new entries into {} ({} already there)",
        store.location(),
        entries.len() - added
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_dates_match_known_instants() {
        assert_eq!(super::utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(super::utc(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(super::utc(1_796_083_200 + 3_723), "2026-12-01 01:02 UTC");
    }
}
