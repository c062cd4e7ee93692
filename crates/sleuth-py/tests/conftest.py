"""Shared fixtures: the real MuSiQue file from the shared data folder (never copied
into the repository) and the repository's docs."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def _shared_data() -> Path:
    env = os.environ.get("SLEUTH_SHARED_DATA")
    candidates = [Path(env)] if env else []
    candidates += [REPO.parent / "shared" / "data", Path("/work/shared/data")]
    for c in candidates:
        if (c / "musique").is_dir():
            return c
    raise RuntimeError(f"no shared data folder (tried {', '.join(map(str, candidates))}); set SLEUTH_SHARED_DATA")


@pytest.fixture(scope="session")
def musique() -> str:
    return str(_shared_data() / "musique" / "musique_ans_dev_subset200_with_paragraphs.jsonl")


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO
