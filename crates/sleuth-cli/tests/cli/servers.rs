//! Integration tests against servers other people wrote, installed from their PyPI
//! packages by `scripts/test-servers-setup`: llama-cpp-python's OpenAI-compatible server
//! on the embedded model's GGUF, and the LiteLLM proxy in front of it serving the OpenAI
//! chat-completions and the Anthropic Messages endpoints. One question per method
//! family (react, sleuth, eir) through every path must finish with 0 errors and counted
//! usage, and no key may reach a file.
//!
//! Two tests: the llama server alone (its own preset, and a preset whose schema form it
//! refuses) and the proxy in front of another llama server (both endpoints), so the two
//! run at once. The servers listen on loopback ports chosen here and are stopped when
//! the test ends (also when it fails). Without the Python packages or the GGUF the tests
//! are skipped loudly, unless `SLEUTH_REQUIRE_SERVERS` is set (CI sets it).

use crate::agents::read_records;
use crate::util::{stderr, stdout, Eval};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The key each server demands; it must appear in no file that sleuth writes.
const SERVER_KEY: &str = "sk-sleuth-llama-canary-5b1e";
const PROXY_KEY: &str = "sk-sleuth-proxy-canary-93c7";
/// The model name both servers expose.
const ALIAS: &str = "smollm2";

fn required() -> bool {
    std::env::var("SLEUTH_REQUIRE_SERVERS").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Skips loudly, or fails when the servers are required.
fn skip(why: &str) {
    assert!(!required(), "SLEUTH_REQUIRE_SERVERS is set but {why}");
    eprintln!(
        "\n*** SKIPPED: {why} -- run scripts/test-servers-setup \
         (set SLEUTH_REQUIRE_SERVERS=1 to fail instead) ***\n"
    );
}

/// Where `scripts/test-servers-setup` put the virtual environments.
fn servers_dir() -> PathBuf {
    std::env::var_os("SLEUTH_TEST_SERVERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/test-servers")
        })
}

/// The GGUF to serve: `$SLEUTH_TEST_MODEL`, else the installed default model.
fn gguf() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SLEUTH_TEST_MODEL") {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    let out = Command::new(env!("CARGO_BIN_EXE_sleuth"))
        .args(["model", "path", "smollm2"])
        .output()
        .expect("run sleuth");
    out.status
        .success()
        .then(|| PathBuf::from(stdout(&out).trim()))
        .filter(|p| p.is_file())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// The status line and body of `GET path`, or `None` when nothing answers yet.
fn get(port: u16, path: &str, key: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let req = format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\nConnection: close\r\n\r\n"
    );
    s.write_all(req.as_bytes()).ok()?;
    let mut resp = String::new();
    s.read_to_string(&mut resp).ok()?;
    let status = resp.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, resp))
}

/// A server process that is killed when dropped, with its log kept for failures.
struct Server {
    name: &'static str,
    child: Child,
    log: PathBuf,
    port: u16,
}

impl Server {
    fn start(name: &'static str, mut cmd: Command, port: u16, log: PathBuf) -> Server {
        let file = std::fs::File::create(&log).expect("server log");
        let child = cmd
            .stdin(Stdio::null())
            .stdout(file.try_clone().expect("log handle"))
            .stderr(file)
            .spawn()
            .unwrap_or_else(|e| panic!("start {name}: {e}"));
        Server {
            name,
            child,
            log,
            port,
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until `GET path` answers 200.
    fn wait_ready(&mut self, path: &str, key: &str, within: Duration) {
        let start = Instant::now();
        while start.elapsed() < within {
            if let Some(status) = self.child.try_wait().expect("poll server") {
                panic!(
                    "{} exited ({status}) before serving:\n{}",
                    self.name,
                    self.log()
                );
            }
            if let Some((200, _)) = get(self.port, path, key) {
                eprintln!("{} ready in {:.1?}", self.name, start.elapsed());
                return;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        panic!("{} not ready after {within:?}:\n{}", self.name, self.log());
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// llama-cpp-python's server on the GGUF, demanding `SERVER_KEY`.
fn start_llama(venv: &Path, model: &Path, logs: &Path) -> Server {
    let port = free_port();
    let mut cmd = Command::new(venv.join("bin/python"));
    cmd.args(["-m", "llama_cpp.server", "--model"])
        .arg(model)
        .args(["--model_alias", ALIAS, "--host", "127.0.0.1"])
        .args(["--port", &port.to_string(), "--n_ctx", "8192"])
        // One thread: ggml's threads spin at barriers, which collapses to ~1 token/s when
        // the cores are shared with the rest of the test suite.
        .args(["--n_threads", "1", "--n_threads_batch", "1"])
        .args(["--api_key", SERVER_KEY]);
    let mut server = Server::start("llama-cpp-python", cmd, port, logs.join("llama.log"));
    server.wait_ready("/v1/models", SERVER_KEY, Duration::from_secs(120));
    server
}

/// The LiteLLM proxy routing `ALIAS` to the llama server. Keys reach it through its
/// environment (`os.environ/...` in the config), so none is written to disk. Its
/// Anthropic endpoint bridges an `openai/` model to OpenAI's Responses API by default,
/// which an OpenAI-compatible server does not have; the setting below makes it use
/// chat completions, as a user of a local server must configure it too.
fn start_litellm(venv: &Path, upstream: u16, logs: &Path) -> Server {
    let port = free_port();
    let config = logs.join("litellm.yaml");
    std::fs::write(
        &config,
        format!(
            "model_list:\n  - model_name: {ALIAS}\n    litellm_params:\n      model: openai/{ALIAS}\n      api_base: http://127.0.0.1:{upstream}/v1\n      api_key: os.environ/SLEUTH_TEST_UPSTREAM_KEY\ngeneral_settings:\n  master_key: os.environ/SLEUTH_TEST_PROXY_KEY\nlitellm_settings:\n  drop_params: true\n  telemetry: false\n  use_chat_completions_url_for_anthropic_messages: true\n"
        ),
    )
    .unwrap();
    let mut cmd = Command::new(venv.join("bin/litellm"));
    cmd.arg("--config")
        .arg(&config)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["--num_workers", "1"])
        .env("SLEUTH_TEST_UPSTREAM_KEY", SERVER_KEY)
        .env("SLEUTH_TEST_PROXY_KEY", PROXY_KEY)
        // Offline: the bundled model-cost map, no telemetry.
        .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        .env("LITELLM_TELEMETRY", "False");
    let mut server = Server::start("litellm", cmd, port, logs.join("litellm.log"));
    server.wait_ready("/v1/models", PROXY_KEY, Duration::from_secs(180));
    server
}

/// One path to a model: the spec and the environment that carries its key.
struct Route {
    name: &'static str,
    model: String,
    env: Vec<(&'static str, String)>,
    methods: &'static str,
    /// A response cache directory (inside the scanned output) instead of none.
    cache: bool,
}

fn run_path(path: &Route, out: &Path, servers: &[&Server]) -> Vec<Value> {
    // The fixture's first question is the subset's: a clone without ../shared runs it too.
    let data = crate::golden::fixture("musique");
    let eval = Eval::new("musique", data, path.methods, &path.model, out)
        .opt("--limit", 1)
        .opt("--concurrency", 1)
        .opt("--attempts", 2)
        .opt("--timeout", 300)
        .set("max_tokens=192");
    // Only keys the path's methods read: any other key is refused.
    let loop_method = path.methods.split(',').any(|m| m != "eir");
    let eval = if loop_method {
        eval.set("turns=3")
    } else {
        eval
    };
    // EIR opts in to its schemas (prompting only by default): the paths test the
    // constraint forms each server takes, and the tiny model needs its grammar.
    let eval = if path.methods.contains("eir") {
        eval.set("reads=2").set("json_schema=true")
    } else {
        eval
    };
    let eval = if path.cache {
        eval.opt("--cache", out.join("cache").display())
    } else {
        eval
    };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sleuth"));
    cmd.args(eval.args())
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("SLEUTH_API_KEY_ENV")
        .env_remove("SLEUTH_CACHE");
    if !path.cache {
        cmd.env("SLEUTH_NO_CACHE", "true");
    }
    for (k, v) in &path.env {
        cmd.env(k, v);
    }
    let started = Instant::now();
    let o: Output = cmd.output().expect("run sleuth");
    let logs: String = servers
        .iter()
        .map(|s| format!("--- {} log ---\n{}", s.name, tail(&s.log())))
        .collect();
    assert!(
        o.status.success(),
        "{}: sleuth eval failed:\n{}\n{logs}",
        path.name,
        stderr(&o)
    );
    eprintln!(
        "{}: {} in {:.1?}\n{}",
        path.name,
        path.methods,
        started.elapsed(),
        stderr(&o).trim()
    );
    let records = read_records(out);
    let methods = path.methods.split(',').count();
    assert_eq!(
        records.len(),
        methods,
        "{}: one record per method",
        path.name
    );
    for r in &records {
        let what = format!("{} / {}", path.name, r["method"]);
        assert!(r["error"].is_null(), "{what}: {}\n{logs}", r["error"]);
        assert!(r["calls"].as_u64().unwrap() >= 1, "{what}");
        assert!(
            r["input_tokens"].as_u64().unwrap() > 0,
            "{what}: usage counted"
        );
        assert!(
            r["output_tokens"].as_u64().unwrap() > 0,
            "{what}: usage counted"
        );
    }
    records
}

fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

/// Every file under `dir` (recursively) that holds `needle`.
pub(crate) fn files_holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut hits = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if std::fs::read(&p)
                .map(|b| String::from_utf8_lossy(&b).contains(needle))
                .unwrap_or(false)
            {
                hits.push(p);
            }
        }
    }
    hits
}

/// The two virtual environments and the GGUF, or `None` after skipping (loudly).
fn installed() -> Option<(PathBuf, PathBuf, PathBuf)> {
    let dir = servers_dir();
    let (llama_venv, litellm_venv) = (dir.join("llama-cpp-python"), dir.join("litellm"));
    if !llama_venv.join("bin/python").is_file() || !litellm_venv.join("bin/litellm").is_file() {
        skip(&format!(
            "the test servers are not installed in {}",
            dir.display()
        ));
        return None;
    }
    let Some(model) = gguf() else {
        skip("the smollm2 GGUF is not installed (sleuth model pull smollm2, or SLEUTH_TEST_MODEL)");
        return None;
    };
    Some((llama_venv, litellm_venv, model))
}

/// Runs every route against the servers, then checks that no server key reached a
/// file under the runs' folder (records, traces, caches).
fn run_routes(routes: &[Route], servers: &[&Server], outs: &Path) -> Vec<Vec<Value>> {
    let runs = routes
        .iter()
        .enumerate()
        .map(|(i, route)| run_path(route, &outs.join(format!("path{i}")), servers))
        .collect();
    for key in [SERVER_KEY, PROXY_KEY] {
        let leaked = files_holding(outs, key);
        assert!(leaked.is_empty(), "a key reached {leaked:?}");
    }
    runs
}

const ALL: &str = "react,sleuth,eir";

// The paths are split over two tests, each with a llama server of its own (one thread
// each), so that the two run side by side on the suite's two test threads: one test
// walking all four paths through one server was the CLI suite's longest by far.

#[test]
fn the_llama_server_takes_every_method_family_with_its_preset_and_records_a_refused_schema() {
    let Some((llama_venv, _, model)) = installed() else {
        return;
    };
    let logs = tempfile::tempdir().unwrap();
    let llama = start_llama(&llama_venv, &model, logs.path());
    let routes = [
        // The server directly, with its own preset: grammars and json_object schemas.
        Route {
            name: "llama-cpp-python (preset llama-cpp-python)",
            model: format!(
                "openai-compat:http://127.0.0.1:{}/v1#{ALIAS}?key_env=LLAMA_KEY&preset=llama-cpp-python",
                llama.port
            ),
            env: vec![("LLAMA_KEY", SERVER_KEY.into())],
            methods: ALL,
            cache: false,
        },
        // The same server with a preset whose schema form it refuses (json_schema):
        // the constraint is dropped and recorded, not retried into failure.
        Route {
            name: "llama-cpp-python (preset vllm: refused json_schema)",
            model: format!(
                "openai-compat:http://127.0.0.1:{}/v1#{ALIAS}?key_env=LLAMA_KEY&preset=vllm",
                llama.port
            ),
            env: vec![("LLAMA_KEY", SERVER_KEY.into())],
            methods: "eir",
            cache: false,
        },
    ];
    let outs = tempfile::tempdir().unwrap();
    let runs = run_routes(&routes, &[&llama], outs.path());
    assert!(
        runs[0].iter().all(|r| r["constraints_dropped"] == 0),
        "{}: the server's own form is accepted",
        routes[0].name
    );
    let dropped: u64 = runs[1]
        .iter()
        .map(|r| r["constraints_dropped"].as_u64().unwrap_or(0))
        .sum();
    assert!(
        dropped > 0,
        "{}: the refused schema is recorded",
        routes[1].name
    );
    drop(llama);
}

#[test]
fn the_litellm_proxy_takes_every_method_family_on_both_endpoints_and_no_key_reaches_a_file() {
    let Some((llama_venv, litellm_venv, model)) = installed() else {
        return;
    };
    let logs = tempfile::tempdir().unwrap();
    let llama = start_llama(&llama_venv, &model, logs.path());
    let proxy = start_litellm(&litellm_venv, llama.port, logs.path());
    let routes = [
        // The proxy's OpenAI endpoint; the key comes from OPENAI_API_KEY as in the SDK.
        Route {
            name: "litellm openai",
            model: format!("openai-compat:http://127.0.0.1:{}/v1#{ALIAS}", proxy.port),
            env: vec![("OPENAI_API_KEY", PROXY_KEY.into())],
            methods: ALL,
            cache: true,
        },
        // The proxy's Anthropic Messages endpoint, base URL as the Anthropic SDK takes it.
        Route {
            name: "litellm anthropic",
            model: format!("anthropic:{ALIAS}"),
            env: vec![
                ("ANTHROPIC_API_KEY", PROXY_KEY.into()),
                (
                    "ANTHROPIC_BASE_URL",
                    format!("http://127.0.0.1:{}", proxy.port),
                ),
            ],
            methods: ALL,
            cache: true,
        },
    ];
    let outs = tempfile::tempdir().unwrap();
    run_routes(&routes, &[&llama, &proxy], outs.path());
    assert!(
        outs.path()
            .join("path0/cache")
            .read_dir()
            .unwrap()
            .next()
            .is_some(),
        "the response cache was written (and is scanned)"
    );
    drop(proxy);
    drop(llama);
}
