//! Parsing model specs, the one place where a spec's options are read: options go
//! after the model (`openai-compat:BASE_URL#MODEL?key_env=VAR&preset=NAME`,
//! `anthropic:MODEL?prompt_cache=off`); before the `#`, on another provider, unknown,
//! repeated or empty they are refused, so a `key_env` can never silently become part of
//! a URL while the default key goes to that server.

use super::ModelSpec;
use crate::quirks::Quirks;
use crate::LlmError;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

fn spec_error(spec: &str, why: &str) -> LlmError {
    LlmError::Config(format!(
        "invalid model spec `{spec}`: {why} (expected openai:MODEL, anthropic:MODEL[?prompt_cache=off], openai-compat:BASE_URL#MODEL[?key_env=VAR&preset=NAME], local:NAME|PATH.gguf or scripted:FILE)"
    ))
}

/// The options a spec can carry, after its model: `openai-compat:BASE_URL#MODEL?OPTS`.
const OPTIONS: &str = "key_env=VAR, preset=NAME";

/// The options of `anthropic:MODEL?OPTS`.
const ANTHROPIC_OPTIONS: &str = "prompt_cache=on|off";

impl FromStr for ModelSpec {
    type Err = LlmError;

    fn from_str(s: &str) -> Result<ModelSpec, LlmError> {
        let (kind, rest) = s
            .split_once(':')
            .ok_or_else(|| spec_error(s, "no provider prefix"))?;
        let nonempty = |v: &str, what: &str| {
            if v.trim().is_empty() {
                Err(spec_error(s, &format!("missing {what}")))
            } else {
                Ok(v.to_string())
            }
        };
        if !matches!(kind, "openai-compat" | "anthropic") && carries_options(rest, kind) {
            return Err(spec_error(
                s,
                &format!("`{kind}:` takes no options ({OPTIONS} belong to openai-compat:BASE_URL#MODEL?...)"),
            ));
        }
        match kind {
            "openai" => Ok(ModelSpec::OpenAi {
                model: nonempty(rest, "model name")?,
            }),
            "anthropic" => parse_anthropic(s, rest),
            "scripted" => Ok(ModelSpec::Scripted {
                path: PathBuf::from(nonempty(rest, "file")?),
            }),
            "local" => Ok(ModelSpec::Local {
                name: nonempty(rest, "model name or path")?,
            }),
            "openai-compat" => parse_compat(s, rest),
            other => Err(spec_error(s, &format!("unknown provider `{other}`"))),
        }
    }
}

/// Whether a spec's remainder tries to pass options. API model names never hold `?`;
/// file paths (local:, scripted:) may, so for them only a known option counts.
fn carries_options(rest: &str, kind: &str) -> bool {
    match kind {
        "openai" => rest.contains('?'),
        _ => ["?key_env=", "?preset=", "&key_env=", "&preset="]
            .iter()
            .any(|o| rest.contains(o)),
    }
}

/// `BASE_URL#...` with the `user[:password]@` of its URL removed, when it has one.
fn without_credentials(rest: &str) -> Option<String> {
    let (url, tail) = rest
        .split_once('#')
        .map_or((rest, None), |(u, t)| (u, Some(t)));
    let stripped = crate::endpoint::without_credentials(url)?;
    Some(match tail {
        Some(t) => format!("{stripped}#{t}"),
        None => stripped,
    })
}

/// Whether `name` can be an environment variable's name.
fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `anthropic:MODEL[?prompt_cache=on|off]`: prompt caching is on unless switched off.
fn parse_anthropic(spec: &str, rest: &str) -> Result<ModelSpec, LlmError> {
    let (model, opts) = rest.split_once('?').unwrap_or((rest, ""));
    if model.trim().is_empty() {
        return Err(spec_error(spec, "missing model name"));
    }
    let mut prompt_cache = None;
    for pair in opts.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        if name != "prompt_cache" {
            return Err(spec_error(
                spec,
                &format!("unknown option `{name}` for `anthropic:` (known: {ANTHROPIC_OPTIONS}; {OPTIONS} belong to openai-compat:BASE_URL#MODEL?...)"),
            ));
        }
        if prompt_cache.is_some() {
            return Err(spec_error(spec, &format!("option `{name}` given twice")));
        }
        prompt_cache = Some(match value {
            "on" => true,
            "off" => false,
            "" => return Err(spec_error(spec, &format!("option `{name}` has no value"))),
            other => {
                return Err(spec_error(
                    spec,
                    &format!("`prompt_cache={other}`: expected on or off"),
                ))
            }
        });
    }
    Ok(ModelSpec::Anthropic {
        model: model.to_string(),
        prompt_cache: prompt_cache.unwrap_or(true),
    })
}

fn parse_compat(spec: &str, rest: &str) -> Result<ModelSpec, LlmError> {
    // First, before any message echoes the spec: credentials in the URL would be stored
    // with the model's name (records, run.json, the cache) and shown in errors.
    if let Some(shown) = without_credentials(rest) {
        return Err(LlmError::Config(format!(
            "invalid model spec `openai-compat:{shown}`: the base URL carries credentials (user:password@), which sleuth does not store or send from a URL; put the key in an environment variable and name it with ?key_env=VAR after the model (openai-compat:BASE_URL#MODEL?key_env=VAR)"
        )));
    }
    let Some((base_url, model_opts)) = rest.split_once('#') else {
        let why = if rest.contains('?') {
            "openai-compat needs BASE_URL#MODEL, with options after the model (BASE_URL#MODEL?key_env=VAR)"
        } else {
            "openai-compat needs BASE_URL#MODEL"
        };
        return Err(spec_error(spec, why));
    };
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(spec_error(
            spec,
            "the base URL must start with http:// or https://",
        ));
    }
    // Options before the `#` would become part of the URL (and `key_env` would be
    // ignored, sending the default key to that server): refuse them.
    if let Some((_, query)) = base_url.split_once('?') {
        // sleuth's own options in the wrong place are echoed with the fix; anything
        // else is not echoed, since a gateway's key may be in it.
        let own = query.split('&').all(|pair| match pair.split_once('=') {
            Some(("key_env", v)) => is_var_name(v),
            Some(("preset", v)) => v
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)),
            _ => false,
        });
        if own {
            return Err(spec_error(
                spec,
                &format!(
                    "options go after the model, not in the URL: write BASE_URL#MODEL?{query}"
                ),
            ));
        }
        let names: Vec<&str> = query
            .split('&')
            .map(|p| p.split_once('=').map_or(p, |(n, _)| n))
            .collect();
        return Err(LlmError::Config(format!(
            "invalid model spec `openai-compat:{}`: the base URL carries a query string ({}); options go after the model (BASE_URL#MODEL?key_env=VAR&preset=NAME), and a key belongs in an environment variable named with key_env",
            crate::endpoint::redact_query(rest),
            names.join(", ")
        )));
    }
    let (model, opts) = model_opts.split_once('?').unwrap_or((model_opts, ""));
    if model.is_empty() {
        return Err(spec_error(spec, "missing model name after #"));
    }
    let (mut key_env, mut preset) = (None, None);
    for pair in opts.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let slot = match name {
            "key_env" => &mut key_env,
            "preset" => &mut preset,
            _ => {
                // The spec is shown with its option values redacted: an unknown
                // option may be a key (`?api-key=…`).
                return Err(spec_error(
                    &format!("openai-compat:{}", crate::endpoint::redact_query(rest)),
                    &format!("unknown option `{name}` (known: {OPTIONS})"),
                ));
            }
        };
        if value.is_empty() {
            return Err(spec_error(spec, &format!("option `{name}` has no value")));
        }
        if slot.is_some() {
            return Err(spec_error(spec, &format!("option `{name}` given twice")));
        }
        match name {
            // Not echoing the spec: a value that is not a variable name may be a key.
            "key_env" if !is_var_name(value) => {
                return Err(LlmError::Config(
                    "invalid model spec: `key_env=` takes the name of an environment variable (letters, digits, _), not a key".into(),
                ))
            }
            "preset" => {
                Quirks::preset(value)?;
            }
            _ => {}
        }
        *slot = Some(value.to_string());
    }
    Ok(ModelSpec::OpenAiCompat {
        base_url: base_url.trim_end_matches('/').to_string(),
        model: model.to_string(),
        key_env,
        preset,
    })
}

impl fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelSpec::OpenAi { model } => write!(f, "openai:{model}"),
            ModelSpec::Anthropic {
                model,
                prompt_cache,
            } => {
                write!(f, "anthropic:{model}")?;
                if !prompt_cache {
                    write!(f, "?prompt_cache=off")?;
                }
                Ok(())
            }
            ModelSpec::Scripted { path } => write!(f, "scripted:{}", path.display()),
            ModelSpec::Local { name } => write!(f, "local:{name}"),
            ModelSpec::OpenAiCompat {
                base_url,
                model,
                key_env,
                preset,
            } => {
                write!(f, "openai-compat:{base_url}#{model}")?;
                let opts: Vec<String> = [("key_env", key_env), ("preset", preset)]
                    .iter()
                    .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}={v}")))
                    .collect();
                if !opts.is_empty() {
                    write!(f, "?{}", opts.join("&"))?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_print_back() {
        for s in [
            "openai:gpt-4o-mini",
            "anthropic:claude-sonnet-4-5",
            "anthropic:claude-sonnet-4-5?prompt_cache=off",
            "scripted:replies.json",
            "local:smollm2",
            "local:/models/x.gguf",
            "openai-compat:http://127.0.0.1:8080/v1#llama3.2:1b",
            "openai-compat:https://h/v1#m?key_env=MY_KEY&preset=vllm",
        ] {
            assert_eq!(ModelSpec::parse(s).unwrap().to_string(), s);
        }
        let compat =
            ModelSpec::parse("openai-compat:http://h:8000/v1/#org/model?preset=llama-cpp").unwrap();
        assert_eq!(
            compat,
            ModelSpec::OpenAiCompat {
                base_url: "http://h:8000/v1".into(),
                model: "org/model".into(),
                key_env: None,
                preset: Some("llama-cpp".into())
            }
        );
        assert_eq!(
            ModelSpec::parse("anthropic:claude-haiku-4-5?prompt_cache=on").unwrap(),
            ModelSpec::Anthropic {
                model: "claude-haiku-4-5".into(),
                prompt_cache: true
            }
        );
        assert!(!ModelSpec::parse("local:x").unwrap().is_core());
        assert!(ModelSpec::parse("openai:x").unwrap().is_core());
    }

    #[test]
    fn bad_specs_say_why() {
        for (s, why) in [
            ("gpt-4o", "no provider prefix"),
            ("openai:", "missing model"),
            ("foo:bar", "unknown provider `foo`"),
            ("openai-compat:http://h/v1", "BASE_URL#MODEL"),
            ("openai-compat:h/v1#m", "http://"),
            ("openai-compat:http://h/v1#", "missing model"),
            ("openai-compat:http://h/v1#m?x=1", "unknown option `x`"),
            (
                "openai-compat:http://h/v1#m?preset=nope",
                "unknown server preset",
            ),
            // Misplaced: before the `#` the options would be part of the URL.
            (
                "openai-compat:http://h/v1?key_env=MYKEY#mock",
                "options go after the model",
            ),
            (
                "openai-compat:http://h/v1?preset=bogus#m",
                "BASE_URL#MODEL?preset=bogus",
            ),
            // Anything else in the URL's query may be a key: named, never echoed.
            (
                "openai-compat:http://h/v1?api-key=sk-1#m",
                "query string (api-key); options go after the model",
            ),
            (
                "openai-compat:http://h/v1?key_env=K",
                "options after the model",
            ),
            ("openai:gpt-4o?key_env=K", "`openai:` takes no options"),
            (
                "anthropic:claude?preset=vllm",
                "unknown option `preset` for `anthropic:` (known: prompt_cache=on|off;",
            ),
            ("anthropic:?prompt_cache=off", "missing model"),
            (
                "anthropic:claude?prompt_cache=no",
                "`prompt_cache=no`: expected on or off",
            ),
            (
                "anthropic:claude?prompt_cache",
                "`prompt_cache` has no value",
            ),
            (
                "anthropic:claude?prompt_cache=on&prompt_cache=off",
                "`prompt_cache` given twice",
            ),
            ("local:smollm2?key_env=K", "`local:` takes no options"),
            ("scripted:r.json&preset=x", "`scripted:` takes no options"),
            (
                "openai-compat:http://h/v1#m?key_env=",
                "`key_env` has no value",
            ),
            (
                "openai-compat:http://h/v1#m?preset",
                "`preset` has no value",
            ),
            (
                "openai-compat:http://h/v1#m?key_env=A&key_env=B",
                "`key_env` given twice",
            ),
        ] {
            let e = ModelSpec::parse(s).unwrap_err().to_string();
            assert!(e.contains(why), "{s}: {e}");
        }
        // Credentials in the URL are refused without echoing them, naming key_env.
        for s in [
            "openai-compat:http://user:sk-url-secret@h/v1#m",
            "openai-compat:https://sk-url-secret@h:8000/v1#m?preset=vllm",
        ] {
            let e = ModelSpec::parse(s).unwrap_err().to_string();
            assert!(
                e.contains("credentials") && e.contains("key_env") && !e.contains("sk-url-secret"),
                "{e}"
            );
        }
        // A key pasted where its variable's name belongs is refused without echoing it.
        let e = ModelSpec::parse("openai-compat:http://h/v1#m?key_env=sk-live-123")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("name of an environment variable") && !e.contains("sk-live"),
            "{e}"
        );
    }
}
