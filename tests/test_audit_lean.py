"""The audit path's start-up trimmings change nothing they replace: the written-out stop
words are scikit-learn's, and an audit imports neither scikit-learn nor pandas."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from auditor.judges._text import ENGLISH_STOP_WORDS, STOP_WORDS


def test_stop_words_are_scikit_learns() -> None:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS as sklearn_words

    assert ENGLISH_STOP_WORDS == frozenset(sklearn_words)
    assert len(ENGLISH_STOP_WORDS) == 318
    assert "not" not in STOP_WORDS and "the" in STOP_WORDS
