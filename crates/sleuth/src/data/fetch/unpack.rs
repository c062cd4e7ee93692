//! Turning a verified download into the files the loaders read, inside a staging folder
//! (the caller moves the staging folder into place only when everything succeeded).

use super::registry::Unpack;
use super::{FetchError, FetchProgress};
use std::fs::{self, File};
use std::io::{self, BufReader, Read};
use std::path::Path;

/// Unpacks `download` into `staging` as `how` says; returns the paths written, relative
/// to `staging`. A tar.bz2 (the multi-GB Wikipedia dump) reports progress in compressed
/// bytes read.
pub(super) fn unpack(
    download: &Path,
    how: Unpack,
    staging: &Path,
    progress: &dyn FetchProgress,
) -> Result<Vec<String>, FetchError> {
    match how {
        Unpack::Plain(dest) => {
            let to = staging.join(dest);
            fs::rename(download, &to).map_err(|e| FetchError::io(&to, e))?;
            Ok(vec![dest.to_string()])
        }
        Unpack::Zip(members) => unzip(download, members, staging),
        Unpack::TarBz2(dir) => {
            untar_bz2(download, &staging.join(dir), progress)?;
            Ok(vec![dir.to_string()])
        }
    }
}

fn unzip(
    download: &Path,
    members: &[(&str, &str)],
    staging: &Path,
) -> Result<Vec<String>, FetchError> {
    let bad = |message: String| FetchError::Archive {
        path: download.to_path_buf(),
        message,
    };
    let file = File::open(download).map_err(|e| FetchError::io(download, e))?;
    let mut archive = zip::ZipArchive::new(BufReader::new(file)).map_err(|e| bad(e.to_string()))?;
    let names: Vec<String> = archive.file_names().map(str::to_string).collect();
    let mut written = Vec::new();
    for (wanted, dest) in members {
        let member = names
            .iter()
            .filter(|n| !n.contains("__MACOSX") && !n.ends_with('/'))
            .find(|n| n.rsplit('/').next() == Some(*wanted))
            .ok_or_else(|| bad(format!("the archive has no file named {wanted}")))?;
        let mut entry = archive
            .by_name(member)
            .map_err(|e| bad(format!("{member}: {e}")))?;
        let to = staging.join(dest);
        let mut out = File::create(&to).map_err(|e| FetchError::io(&to, e))?;
        io::copy(&mut entry, &mut out).map_err(|e| bad(format!("{member}: {e}")))?;
        written.push(dest.to_string());
    }
    Ok(written)
}

fn untar_bz2(download: &Path, into: &Path, progress: &dyn FetchProgress) -> Result<(), FetchError> {
    fs::create_dir_all(into).map_err(|e| FetchError::io(into, e))?;
    let file = File::open(download).map_err(|e| FetchError::io(download, e))?;
    let total = file.metadata().map(|m| m.len()).ok();
    let name = download
        .file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
    progress.begin(
        &format!("unpacking {}", name.trim_end_matches(".part")),
        total,
        0,
    );
    let counted = Counted {
        inner: BufReader::new(file),
        progress,
    };
    let decoder = bzip2::read::MultiBzDecoder::new(counted);
    // `unpack` refuses entries that would land outside `into` (absolute or `..` paths).
    let result = tar::Archive::new(decoder)
        .unpack(into)
        .map_err(|e| FetchError::Archive {
            path: download.to_path_buf(),
            message: e.to_string(),
        });
    progress.end();
    result
}

/// A reader that reports how many bytes went through it.
struct Counted<'a, R> {
    inner: R,
    progress: &'a dyn FetchProgress,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.advance(n as u64);
        Ok(n)
    }
}
