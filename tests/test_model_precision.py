"""The encoder's precision and batch shapes (the real MiniLM encoder): a text's vector is
the same whatever it is encoded with, and bf16 vectors stay next to fp32 ones."""

from __future__ import annotations

import numpy as np
import pytest

from auditor import embedding
from auditor.errors import ConfigError
from auditor.precision import computing_in, native_bf16, resolve_precision

pytestmark = pytest.mark.slow  # loads the encoder

TEXTS = [
    "The museum opened in 1931.",
    "Ferries leave every hour from the pier on weekdays and twice an hour on Sundays.",
    "Short.",
    "The trial enrolled 3,200 participants across 14 hospitals and reported in March 2021.",
]
LONG = " ".join(["The northern branch of the Harbour Line carries freight to the port."] * 12)


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_a_vector_does_not_depend_on_what_it_is_encoded_with(
    precision: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUDITOR_PRECISION", precision)
    assert embedding.encoder_precision() == precision
    together = embedding.encode(TEXTS, cache=False)
    alone = np.vstack([embedding.encode([t], cache=False) for t in TEXTS])
    with_long = embedding.encode([LONG, *TEXTS], batch_size=2, cache=False)[1:]
    assert np.array_equal(together, alone)
    assert np.array_equal(together, with_long)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)


def test_bf16_vectors_stay_next_to_fp32_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUDITOR_PRECISION", "fp32")
    fp32 = embedding.encode([*TEXTS, LONG], cache=False)
    monkeypatch.setenv("AUDITOR_PRECISION", "bf16")
    bf16 = embedding.encode([*TEXTS, LONG], cache=False)
    cosine = (fp32 * bf16).sum(axis=1)
    assert cosine.min() > 0.999
    assert not np.array_equal(fp32, bf16)  # bf16 did run


def test_auto_precision_and_bad_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AUDITOR_PRECISION", raising=False)
    assert resolve_precision() == ("bf16" if native_bf16() else "fp32")
    assert resolve_precision("fp32") == "fp32" and resolve_precision("bf16") == "bf16"
    monkeypatch.setenv("AUDITOR_PRECISION", "FP32")
    assert resolve_precision() == "fp32"
    assert resolve_precision("bf16") == "bf16"  # an explicit setting wins over the environment
    monkeypatch.setenv("AUDITOR_PRECISION", "int4")
    with pytest.raises(ConfigError, match="AUDITOR_PRECISION"):
        resolve_precision()
    with pytest.raises(ConfigError, match="precision"):
        resolve_precision("half")
    with pytest.raises(ValueError, match="resolved"), computing_in("auto"):
        pass
