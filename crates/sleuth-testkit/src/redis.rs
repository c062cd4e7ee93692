//! A real `redis-server` for tests: started on a free port of 127.0.0.1 with its own
//! temporary directory and no persistence, killed when dropped.
//!
//! Tests that need it call [`RedisServer::start`], which returns `None` (after printing
//! why) when `redis-server` is not installed, so a developer without it still runs the
//! rest of the suite; CI sets `SLEUTH_REQUIRE_REDIS=1` and then a missing server fails.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
    /// `requirepass`, when the server was started with a password.
    password: Option<String>,
}

impl RedisServer {
    /// Starts a server, or `None` when `redis-server` is missing and
    /// `SLEUTH_REQUIRE_REDIS` is not `1` (then it panics instead).
    pub fn start() -> Option<RedisServer> {
        Self::start_with_password(None)
    }

    /// Like [`RedisServer::start`], requiring `password` from clients when given.
    pub fn start_with_password(password: Option<&str>) -> Option<RedisServer> {
        let binary = std::env::var("SLEUTH_REDIS_SERVER").unwrap_or_else(|_| "redis-server".into());
        let installed = Command::new(&binary)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !installed {
            if std::env::var("SLEUTH_REQUIRE_REDIS").is_ok_and(|v| v == "1") {
                panic!("SLEUTH_REQUIRE_REDIS=1 but `{binary}` is not installed (Debian: apt-get install redis-server)");
            }
            eprintln!("skipped: `{binary}` is not installed (Debian: apt-get install redis-server; set SLEUTH_REQUIRE_REDIS=1 to make this fail)");
            return None;
        }
        // The port is free when we look; another process could take it before
        // redis-server binds, so try a few.
        let mut last = String::new();
        for _ in 0..5 {
            match Self::try_start(&binary, password) {
                Ok(server) => return Some(server),
                Err(e) => last = e,
            }
        }
        panic!("redis-server would not start: {last}");
    }

    fn try_start(binary: &str, password: Option<&str>) -> Result<RedisServer, String> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        static STARTED: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "sleuth-redis-{}-{port}-{}",
            std::process::id(),
            STARTED.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let mut server = RedisServer {
            child: None,
            port,
            dir,
            password: password.map(str::to_string),
        };
        server.child = Some(server.spawn(binary).map_err(|e| e.to_string())?);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if server.ping() {
                return Ok(server);
            }
            if let Some(Ok(Some(status))) = server.child.as_mut().map(|c| c.try_wait()) {
                return Err(format!("exited with {status} on port {port}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        server.kill();
        Err(format!("no answer on port {port} within 10 s"))
    }

    /// Starts the server again on the same port after [`RedisServer::kill`] (its data
    /// is gone: the tests run it without persistence).
    pub fn restart(&mut self) {
        self.kill();
        let binary = std::env::var("SLEUTH_REDIS_SERVER").unwrap_or_else(|_| "redis-server".into());
        self.child = Some(self.spawn(&binary).expect("restart redis-server"));
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.ping() {
            assert!(
                Instant::now() < deadline,
                "redis-server did not come back on port {}",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `redis://127.0.0.1:PORT/DB`, with the password when there is one.
    pub fn url(&self, db: u8) -> String {
        match &self.password {
            Some(p) => format!("redis://:{p}@127.0.0.1:{}/{db}", self.port),
            None => format!("redis://127.0.0.1:{}/{db}", self.port),
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    fn spawn(&self, binary: &str) -> std::io::Result<Child> {
        let mut cmd = Command::new(binary);
        if let Some(p) = &self.password {
            cmd.args(["--requirepass", p]);
        }
        cmd.args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
    }

    /// Whether the server answers PING now.
    pub fn ping(&self) -> bool {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
        let mut buf = [0u8; 16];
        s.write_all(b"PING\r\n").is_ok()
            && s.read(&mut buf).is_ok_and(|n| {
                // A server with a password answers NOAUTH: it is up all the same.
                buf[..n].starts_with(b"+PONG") || buf[..n].starts_with(b"-NOAUTH")
            })
    }

    /// Kills the server at once (SIGKILL), as a crash or a lost node would.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
