"""Shared fixtures of the test suite (data locations only)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["browser_fixtures"]  # chromium, a streamlit server, pages (only the browser tests use them)

ROOT = Path(__file__).resolve().parents[1]
#: trec_eval's test data vendored in the project (NIST notice in LICENSE.md, see NOTICE.md).
TREC_DIR = Path(__file__).resolve().parent / "data" / "trec_eval"
#: ``../shared`` beside the project root (bigger files that are not vendored).
SHARED_DIR = ROOT.parent / "shared"


@pytest.fixture(scope="session")
def trec_dir() -> Path:
    """Folder of the vendored trec_eval test files."""
    assert TREC_DIR.is_dir(), f"vendored trec_eval data missing: {TREC_DIR}"
    return TREC_DIR


@pytest.fixture(scope="session")
def shared_trec_dir() -> Path:
    """``../shared/data/trec_eval_test`` when present; the test is skipped otherwise."""
    d = SHARED_DIR / "data" / "trec_eval_test"
    if not d.is_dir():
        pytest.skip(f"{d} is absent (the shared data is not vendored)")
    return d
