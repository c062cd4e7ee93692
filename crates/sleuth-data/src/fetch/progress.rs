//! How a fetch reports what it is doing: a trait so that the CLI can draw a bar and a
//! library caller can stay silent, with no terminal code in the data layer.

/// Progress of downloads, for a bar or log lines.
pub trait FetchProgress: Send + Sync {
    /// A download (re)starts: `total` bytes when known, `done` already on disk.
    fn begin(&self, label: &str, total: Option<u64>, done: u64);
    fn advance(&self, bytes: u64);
    fn end(&self);
    /// Something worth a line: a resume, a retry, an unpack step.
    fn note(&self, message: &str);
}

/// Reports nothing.
pub struct Quiet;

impl FetchProgress for Quiet {
    fn begin(&self, _: &str, _: Option<u64>, _: u64) {}
    fn advance(&self, _: u64) {}
    fn end(&self) {}
    fn note(&self, _: &str) {}
}
