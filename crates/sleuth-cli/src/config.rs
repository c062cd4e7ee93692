//! The user's config file, `$SLEUTH_HOME/config.toml` (else
//! `$XDG_CONFIG_HOME/sleuth/config.toml`, else `~/.config/sleuth/config.toml`):
//! defaults for options typed on every command. Its values become the arguments'
//! defaults before parsing, so `--help` shows them as `[default: ...]` and a flag on
//! the command line still wins (as does an environment variable such as SLEUTH_CACHE).
//!
//! ```toml
//! model = "openai:gpt-4o-mini"     # --model of ask, eval, experiment
//! cache = "~/sleuth-cache"         # --cache (a directory, or redis://HOST:PORT/DB)
//! data_dir = "/data/benchmarks"    # --data-root of experiment (where recipes' data paths start)
//! ```

use anyhow::{Context, Result};
use serde::Deserialize;
use std::path::PathBuf;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub model: Option<String>,
    pub cache: Option<String>,
    pub data_dir: Option<PathBuf>,
}

/// Where the config file is looked for.
pub fn path() -> Option<PathBuf> {
    let non_empty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(home) = non_empty("SLEUTH_HOME") {
        return Some(PathBuf::from(home).join("config.toml"));
    }
    let base = non_empty("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| non_empty("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("sleuth").join("config.toml"))
}

/// The config file's values; none when there is no file. A malformed file is an error
/// naming the file and line.
pub fn load() -> Result<Config> {
    let Some(path) = path() else {
        return Ok(Config::default());
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    toml::from_str(&text).map_err(|e| {
        // An unknown key's span is the whole table: find the key's own line.
        let unknown = e
            .message()
            .split('`')
            .nth(1)
            .filter(|_| e.message().starts_with("unknown field"));
        let line = match unknown {
            Some(key) => text
                .lines()
                .position(|l| l.trim_start().starts_with(key))
                .map_or(1, |i| i + 1),
            None => e
                .span()
                .map(|s| text[..s.start].lines().count().max(1))
                .unwrap_or(1),
        };
        anyhow::anyhow!("{}:{line}: {}", path.display(), e.message())
    })
}

/// Sets `id`'s default to `value` on `cmd` and every subcommand that has the argument
/// (an argument with a default is no longer required). A value that carries
/// credentials (`redis://:PASSWORD@host`) is not shown by `--help` (hardening III,
/// item 4), as the same value from `SLEUTH_CACHE` is not.
fn default_everywhere(cmd: clap::Command, id: &str, value: &'static str) -> clap::Command {
    let has = cmd.get_arguments().any(|a| a.get_id() == id);
    let secret = sleuth::llm::middleware::redact(value) != value;
    let mut cmd = if has {
        cmd.mut_arg(id, |a| {
            a.default_value(value)
                .required(false)
                .hide_default_value(secret)
        })
    } else {
        cmd
    };
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        cmd = cmd.mut_subcommand(name, |s| default_everywhere(s, id, value));
    }
    cmd
}

/// The command with the config's values as defaults.
pub fn apply(mut cmd: clap::Command, config: &Config) -> clap::Command {
    // clap keeps defaults as 'static strings; the config lives for the whole process.
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    if let Some(m) = &config.model {
        cmd = default_everywhere(cmd, "model", leak(m.clone()));
    }
    if let Some(c) = &config.cache {
        cmd = default_everywhere(cmd, "cache", leak(c.clone()));
    }
    if let Some(d) = &config.data_dir {
        cmd = default_everywhere(cmd, "data_root", leak(d.display().to_string()));
    }
    cmd
}
