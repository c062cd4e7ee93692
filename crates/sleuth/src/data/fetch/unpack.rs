//! Turning a verified download into the files the loaders read, inside a staging folder
//! (the caller moves the staging folder into place only when everything succeeded).

use super::registry::Unpack;
use super::FetchError;
use std::fs::{self, File};
use std::io::{self, BufReader};
use std::path::Path;

/// Unpacks `download` into `staging` as `how` says; returns the paths written, relative
/// to `staging`.
pub(super) fn unpack(
    download: &Path,
    how: Unpack,
    staging: &Path,
) -> Result<Vec<String>, FetchError> {
    match how {
        Unpack::Plain(dest) => {
            let to = staging.join(dest);
            fs::rename(download, &to).map_err(|e| FetchError::io(&to, e))?;
            Ok(vec![dest.to_string()])
        }
        Unpack::Zip(members) => unzip(download, members, staging),
        Unpack::TarBz2(dir) => {
            untar_bz2(download, &staging.join(dir))?;
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

fn untar_bz2(download: &Path, into: &Path) -> Result<(), FetchError> {
    fs::create_dir_all(into).map_err(|e| FetchError::io(into, e))?;
    let file = File::open(download).map_err(|e| FetchError::io(download, e))?;
    let decoder = bzip2::read::MultiBzDecoder::new(BufReader::new(file));
    // `unpack` refuses entries that would land outside `into` (absolute or `..` paths).
    tar::Archive::new(decoder)
        .unpack(into)
        .map_err(|e| FetchError::Archive {
            path: download.to_path_buf(),
            message: e.to_string(),
        })
}
