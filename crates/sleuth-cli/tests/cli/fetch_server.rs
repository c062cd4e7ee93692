//! A small real HTTP/1.1 file server on 127.0.0.1 for the `data fetch` tests: serves
//! byte files by path, honours `Range: bytes=N-` unless told not to, and can drop a
//! response partway through the body, the way a flaky mirror does; or, hostile, send a
//! body without end or announce a size it never sends, or answer slowly. Every
//! request's path and Range header is logged.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

#[derive(Default)]
pub struct Behaviour {
    /// Answer Range requests with 206 (otherwise 200 and the whole file).
    pub ranges: bool,
    /// Drop the connection after this many body bytes, for this many responses.
    pub drop_after: Option<(usize, usize)>,
    /// Serve every file as an HTML page (a host that wants a browser).
    pub html: bool,
    /// Send a body without end and without a length (a runaway mirror).
    pub endless: bool,
    /// Announce this Content-Length whatever the file's size.
    pub announce: Option<u64>,
    /// Wait this long before sending a body.
    pub slow: Option<std::time::Duration>,
}

#[derive(Default)]
struct State {
    files: HashMap<String, Vec<u8>>,
    behaviour: Behaviour,
    log: Vec<(String, Option<String>)>,
    dropped: usize,
}

pub struct FileServer {
    pub port: u16,
    state: Arc<Mutex<State>>,
}

impl FileServer {
    pub fn start(behaviour: Behaviour) -> FileServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State {
            behaviour,
            ..State::default()
        }));
        let shared = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let state = shared.clone();
                std::thread::spawn(move || serve(stream, &state));
            }
        });
        FileServer { port, state }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn put(&self, path: &str, bytes: Vec<u8>) {
        self.state
            .lock()
            .unwrap()
            .files
            .insert(format!("/{path}"), bytes);
    }

    pub fn set(&self, behaviour: Behaviour) {
        let mut s = self.state.lock().unwrap();
        s.behaviour = behaviour;
        s.dropped = 0;
    }

    /// (path, Range header) of every request so far.
    pub fn log(&self) -> Vec<(String, Option<String>)> {
        self.state.lock().unwrap().log.clone()
    }
}

fn serve(stream: TcpStream, state: &Mutex<State>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
    let mut out = stream;
    // One request per connection (we answer `Connection: close`).
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_string();
    let mut range = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("range") {
                range = Some(value.trim().to_string());
            }
        }
    }
    let (endless, announce, slow) = {
        let s = state.lock().unwrap();
        (s.behaviour.endless, s.behaviour.announce, s.behaviour.slow)
    };
    if let Some(wait) = slow {
        std::thread::sleep(wait);
    }
    if endless {
        state.lock().unwrap().log.push((path, range));
        let _ = out.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
        let chunk = vec![b'x'; 1 << 16];
        while out.write_all(&chunk).is_ok() {}
        return;
    }
    let (body, status, extra, cut) = {
        let mut s = state.lock().unwrap();
        s.log.push((path.clone(), range.clone()));
        let Some(file) = s.files.get(&path).cloned() else {
            let _ = out.write_all(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
            return;
        };
        if s.behaviour.html {
            let page = b"<html><body>Please confirm the download</body></html>".to_vec();
            (
                page,
                "200 OK",
                "Content-Type: text/html; charset=utf-8\r\n".to_string(),
                None,
            )
        } else {
            let start = match (&range, s.behaviour.ranges) {
                (Some(r), true) => r
                    .strip_prefix("bytes=")
                    .and_then(|r| r.strip_suffix('-'))
                    .and_then(|n| n.parse::<usize>().ok()),
                _ => None,
            };
            let cut = match s.behaviour.drop_after {
                Some((n, times)) if s.dropped < times => {
                    s.dropped += 1;
                    Some(n)
                }
                _ => None,
            };
            match start {
                Some(start) if start < file.len() => (
                    file[start..].to_vec(),
                    "206 Partial Content",
                    format!(
                        "Content-Range: bytes {start}-{}/{}\r\nAccept-Ranges: bytes\r\n",
                        file.len() - 1,
                        file.len()
                    ),
                    cut,
                ),
                _ => (file, "200 OK", String::new(), cut),
            }
        }
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n",
        announce.unwrap_or(body.len() as u64)
    );
    let _ = out.write_all(head.as_bytes());
    match cut {
        Some(n) => {
            let _ = out.write_all(&body[..n.min(body.len())]);
            let _ = out.flush();
            let _ = out.shutdown(std::net::Shutdown::Both);
        }
        None => {
            let _ = out.write_all(&body);
        }
    }
}
