//! Where each benchmark comes from: the official download of every file `sleuth data
//! fetch` installs, and where it lands in the data directory.
//!
//! Sources (the URLs the benchmarks' own READMEs and download scripts give):
//!
//! - HotpotQA dev sets: the HotpotQA README (github.com/hotpotqa/hotpot) links
//!   `http://curtis.ml.cmu.edu/datasets/hotpot/hotpot_dev_distractor_v1.json` and
//!   `..._fullwiki_v1.json` (7,405 questions each, one JSON array).
//! - HotpotQA's Wikipedia: the same README links the processed abstracts dump
//!   `https://nlp.stanford.edu/projects/hotpotqa/enwiki-20171001-pages-meta-current-withlinks-abstracts.tar.bz2`
//!   (5.23M first paragraphs, bz2 JSON Lines files inside a tar.bz2).
//! - MuSiQue v1.0: `download_data.sh` of github.com/StonyBrookNLP/musique fetches Google
//!   Drive file `1tGdADlNjWFaHLeZZGShh2IRcpO6Lv24h` (`musique_v1.0.zip`); we ask Drive's
//!   direct-download endpoint for the same id.
//! - 2WikiMultiHopQA: the README of github.com/Alab-NII/2wikimultihop links
//!   `https://www.dropbox.com/s/ms2m13252h6xubs/data_ids_april7.zip` (the release with
//!   `evidences_id`/`answer_id` and fixed sentence splits, plus `id_aliases.json`).
//!
//! None of these hosts publishes digests, so no digest is pinned here: the first fetch
//! records the sha256 of every download (see [`super::digests`]) and a later fetch that
//! gets different bytes is refused. A digest added to [`Remote::sha256`] is checked on
//! every fetch, the first included.

use crate::Dataset;

const MB: u64 = 1_000_000;

/// The most a fetch writes for something whose size is about `expected`: four times
/// that plus 256 MiB, room for a bigger release while an endless or inflating download
/// (a zip bomb) stops long before it fills a disk. The sizes below are estimates (the
/// hosts publish none): the dev files' sizes from shared/data/SOURCES.md and the rest
/// of each release scaled from its question counts.
pub const fn limit(expected: u64) -> u64 {
    expected * 4 + (256 << 20)
}

/// One downloadable file and what to do with it.
#[derive(Debug, Clone, Copy)]
pub struct Remote {
    pub url: &'static str,
    /// Path under a mirror root (`SLEUTH_DATA_MIRROR`); also the download's file name.
    pub mirror_path: &'static str,
    /// Known sha256 of the whole download, when one can be established.
    pub sha256: Option<&'static str>,
    pub unpack: Unpack,
    /// About how large the download is, in bytes (the free-space check asks for it).
    pub bytes: u64,
    /// The most the download may be: a longer body is stopped and deleted.
    pub max_bytes: u64,
}

/// What an installed file must be: it is checked before anything is installed or a
/// digest recorded, so a download of the wrong thing never counts as the dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// Questions in this benchmark's schema (read off the first record).
    Questions(Dataset),
    /// 2Wiki's `id_aliases.json`: JSON Lines of `{Q_id, aliases, demonyms}`.
    Aliases,
    /// The HotpotQA Wikipedia dump: a folder of bz2 JSON Lines articles.
    WikiDump,
}

/// How a download becomes files in the dataset folder.
#[derive(Debug, Clone, Copy)]
pub enum Unpack {
    /// The download is the file; it is stored under this name.
    Plain(&'static str),
    /// A zip archive: each `(file name, dest)` pair takes the member whose last path
    /// component is `file name` (archives nest them in a release folder, and carry
    /// `__MACOSX` copies we skip) and stores it as `dest`.
    Zip(&'static [(&'static str, &'static str)]),
    /// A tar.bz2 archive unpacked whole under this folder (inner files stay as they are).
    TarBz2(&'static str),
}

/// A named thing `sleuth data fetch` installs.
#[derive(Debug, Clone, Copy)]
pub struct Source {
    pub name: &'static str,
    pub description: &'static str,
    /// What the download is, size-wise, for `--list` (the hosts publish no sizes; the
    /// dev-file sizes are those of the copies described in shared/data/SOURCES.md).
    pub size: &'static str,
    pub remotes: &'static [Remote],
    /// The benchmark file a command reads when `--dataset` is given without `--data`.
    pub default_file: Option<&'static str>,
    /// About how much the installed files take, in bytes.
    pub unpacked: u64,
    /// The most unpacking may write: an archive inflating past it is stopped.
    pub max_unpacked: u64,
    /// Each installed file (as named in the dataset folder) and what it must hold.
    pub checks: &'static [(&'static str, Content)],
}

pub const SOURCES: &[Source] = &[
    Source {
        name: "hotpotqa",
        description: "HotpotQA dev, distractor and fullwiki settings (7,405 questions each)",
        size: "two JSON files of ~46 MB",
        remotes: &[
            Remote {
                url: "http://curtis.ml.cmu.edu/datasets/hotpot/hotpot_dev_distractor_v1.json",
                mirror_path: "hotpotqa/hotpot_dev_distractor_v1.json",
                sha256: None,
                unpack: Unpack::Plain("hotpot_dev_distractor_v1.json"),
                bytes: 47 * MB,
                max_bytes: limit(47 * MB),
            },
            Remote {
                url: "http://curtis.ml.cmu.edu/datasets/hotpot/hotpot_dev_fullwiki_v1.json",
                mirror_path: "hotpotqa/hotpot_dev_fullwiki_v1.json",
                sha256: None,
                unpack: Unpack::Plain("hotpot_dev_fullwiki_v1.json"),
                bytes: 48 * MB,
                max_bytes: limit(48 * MB),
            },
        ],
        default_file: Some("hotpot_dev_distractor_v1.json"),
        unpacked: 95 * MB,
        max_unpacked: limit(95 * MB),
        checks: &[
            ("hotpot_dev_distractor_v1.json", Content::Questions(Dataset::HotpotQa)),
            ("hotpot_dev_fullwiki_v1.json", Content::Questions(Dataset::HotpotQa)),
        ],
    },
    Source {
        name: "musique",
        description: "MuSiQue v1.0 dev: answerable (2,417) and full (answerable + unanswerable)",
        size: "zip of the whole release; the dev file is ~28 MB",
        remotes: &[Remote {
            url: "https://drive.usercontent.google.com/download?id=1tGdADlNjWFaHLeZZGShh2IRcpO6Lv24h&export=download&confirm=t",
            mirror_path: "musique/musique_v1.0.zip",
            sha256: None,
            unpack: Unpack::Zip(&[
                ("musique_ans_v1.0_dev.jsonl", "musique_ans_v1.0_dev.jsonl"),
                ("musique_full_v1.0_dev.jsonl", "musique_full_v1.0_dev.jsonl"),
            ]),
            bytes: 450 * MB,
            max_bytes: limit(450 * MB),
        }],
        default_file: Some("musique_ans_v1.0_dev.jsonl"),
        unpacked: 90 * MB,
        max_unpacked: limit(90 * MB),
        checks: &[
            ("musique_ans_v1.0_dev.jsonl", Content::Questions(Dataset::Musique)),
            ("musique_full_v1.0_dev.jsonl", Content::Questions(Dataset::Musique)),
        ],
    },
    Source {
        name: "2wiki",
        description: "2WikiMultiHopQA dev (12,576) with id_aliases.json for answer aliases",
        size: "zip of the whole release; dev.json is ~60 MB",
        remotes: &[Remote {
            url: "https://www.dropbox.com/s/ms2m13252h6xubs/data_ids_april7.zip?dl=1",
            mirror_path: "2wiki/data_ids_april7.zip",
            sha256: None,
            unpack: Unpack::Zip(&[
                ("dev.json", "dev.json"),
                ("id_aliases.json", "id_aliases.json"),
            ]),
            bytes: 350 * MB,
            max_bytes: limit(350 * MB),
        }],
        default_file: Some("dev.json"),
        unpacked: 80 * MB,
        max_unpacked: limit(80 * MB),
        checks: &[
            ("dev.json", Content::Questions(Dataset::TwoWiki)),
            ("id_aliases.json", Content::Aliases),
        ],
    },
    Source {
        name: "hotpotqa-wiki",
        description: "HotpotQA's Wikipedia abstracts (5.23M first paragraphs, 2017-10-01)",
        size: "tar.bz2 of several GB unpacked",
        remotes: &[Remote {
            url: "https://nlp.stanford.edu/projects/hotpotqa/enwiki-20171001-pages-meta-current-withlinks-abstracts.tar.bz2",
            mirror_path: "hotpotqa-wiki/enwiki-20171001-pages-meta-current-withlinks-abstracts.tar.bz2",
            sha256: None,
            unpack: Unpack::TarBz2("abstracts"),
            bytes: 1600 * MB,
            max_bytes: limit(1600 * MB),
        }],
        default_file: None,
        unpacked: 2000 * MB,
        max_unpacked: limit(2000 * MB),
        checks: &[("abstracts", Content::WikiDump)],
    },
];

/// The source called `name`.
pub fn source(name: &str) -> Option<&'static Source> {
    let name = name.to_ascii_lowercase();
    let name = match name.as_str() {
        "hotpot" => "hotpotqa",
        "2wikimultihopqa" | "twowiki" => "2wiki",
        other => other,
    };
    SOURCES.iter().find(|s| s.name == name)
}

/// The source that installs `dataset`'s benchmark files (none for our own `jsonl`).
pub fn source_of(dataset: Dataset) -> Option<&'static Source> {
    match dataset {
        Dataset::Jsonl => None,
        other => source(other.name()),
    }
}

/// Every source's name, for messages.
pub fn names() -> String {
    SOURCES
        .iter()
        .map(|s| s.name)
        .collect::<Vec<_>>()
        .join(", ")
}
