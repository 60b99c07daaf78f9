"""The audit path's start-up trimmings change nothing they replace: the written-out stop
words are scikit-learn's, the encoder run without sentence-transformers gives its
vectors bit for bit, and an audit imports neither (nor pandas, nor SciPy's statistics)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from auditor.judges._text import ENGLISH_STOP_WORDS, STOP_WORDS


def test_stop_words_are_scikit_learns() -> None:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS as sklearn_words

    assert frozenset(sklearn_words) == ENGLISH_STOP_WORDS
    assert len(ENGLISH_STOP_WORDS) == 318
    assert "not" not in STOP_WORDS and "the" in STOP_WORDS


TEXTS = [
    "The Eiffel Tower is 330 metres tall.",
    "Paris is the capital of France, and it has been since 987 [1].",
    "",
    "   padded   ",
    "Zürich’s café — naïve 東京 🙂",
    "a",
    "a",
    " ".join(["A long sentence that goes on and on past the encoder's token limit."] * 40),
    "Short.",
    "A middling sentence, with a clause or two, about nothing much at all.",
]


@pytest.mark.slow
@pytest.mark.parametrize("batch_size", [64, 3])
def test_encoder_matches_sentence_transformers_bit_for_bit(batch_size: int) -> None:
    """The encoder without sentence-transformers gives its vectors exactly (the index,
    retrieval and the judges compare vectors ingested and queried in other processes)."""
    from sentence_transformers import SentenceTransformer

    from auditor.embedding import load_encoder, model_path

    reference = SentenceTransformer(str(model_path()), device="cpu")
    expected = reference.encode(
        TEXTS, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
    )
    got = load_encoder().encode(TEXTS, batch_size)
    assert got.dtype == np.float32 and got.shape == (len(TEXTS), 384)
    assert np.array_equal(got, np.asarray(expected, dtype=np.float32))


@pytest.mark.slow
def test_an_audit_imports_neither_sentence_transformers_nor_scikit_learn(
    tmp_path: Path,
) -> None:
    code = (
        "import sys\n"
        "from auditor import AuditConfig, Auditor\n"
        "from auditor.demo import DEMO_CONFIG, prepare_sample_index, sample_path\n"
        f"work = {str(tmp_path)!r}\n"
        "index = prepare_sample_index(work + '/index', work + '/l.db')\n"
        "with Auditor(index, work + '/l.db', config=DEMO_CONFIG) as auditor:\n"
        "    run = auditor.audit(sample_path('answers.jsonl'))\n"
        "assert len(run.claims) > 10\n"
        "heavy = sorted(m for m in ('sentence_transformers', 'sklearn', 'pandas', 'scipy.stats')"
        " if m in sys.modules)\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "HEAVY []" in out, out


def test_the_command_line_collects_less_often() -> None:
    """``auditor`` raises the collector's first threshold (start-up allocates millions of
    long-lived objects); the collector stays enabled."""
    code = (
        "import gc\nfrom auditor.cli import main\nfrom auditor.gctune import THRESHOLD0\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('GC', gc.isenabled(), gc.get_threshold()[0] == THRESHOLD0 == 20000)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "GC True True" in out, out


def test_collecting_less_restores_the_thresholds() -> None:
    import gc

    from auditor.gctune import THRESHOLD0, collecting_less

    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with collecting_less():
            assert gc.get_threshold() == (THRESHOLD0, 10, 10) and gc.isenabled()
        assert gc.get_threshold() == (700, 10, 10)
        gc.set_threshold(50_000, 10, 10)
        with collecting_less():  # never lowers a higher threshold
            assert gc.get_threshold()[0] == 50_000
    finally:
        gc.set_threshold(*before)
