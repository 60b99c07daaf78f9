"""As-of semantics: visibility by publication date, superseded by validity or newer versions."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import numpy as np
import pytest

from auditor.retrieval import as_of_masks, make_document, version_times


def _d(s: str) -> datetime:
    return datetime.fromisoformat(s).replace(tzinfo=UTC)


def _corpus() -> list:
    return [
        replace(
            make_document("law", "Old rule.", published_at="2020-01-01", valid_to="2022-01-01"),
            version="v1",
        ),
        replace(make_document("law", "New rule.", published_at="2022-01-01"), version="v2"),
        replace(make_document("undated", "Always here."), version="v1"),
        replace(
            make_document("expired", "Gone.", valid_from="2019-01-01", valid_to="2021-06-01"),
            version="v1",
        ),
        replace(
            make_document("late", "Later.", published_at="2023-01-01", valid_from="2018-01-01"),
            version="v1",
        ),
    ]


@pytest.mark.parametrize(
    ("as_of", "visible", "superseded"),
    [
        (None, [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]),
        ("2019-06-01", [0, 0, 1, 1, 0], [0, 0, 0, 0, 0]),
        ("2021-01-01", [1, 0, 1, 1, 0], [0, 0, 0, 0, 0]),
        ("2021-06-01", [1, 0, 1, 1, 0], [0, 0, 0, 1, 0]),  # valid_to <= T: superseded
        ("2022-01-01", [1, 1, 1, 1, 0], [1, 0, 0, 1, 0]),  # newer version visible at T
        ("2024-01-01", [1, 1, 1, 1, 1], [1, 0, 0, 1, 0]),  # published_at wins over valid_from
    ],
)
def test_visibility_and_superseded(
    as_of: str | None, visible: list[int], superseded: list[int]
) -> None:
    times = version_times(_corpus())
    vis, sup = as_of_masks(times, None if as_of is None else _d(as_of))
    np.testing.assert_array_equal(vis, np.array(visible, dtype=bool))
    np.testing.assert_array_equal(sup, np.array(superseded, dtype=bool))


def test_newer_version_without_validity_end_supersedes_once_visible() -> None:
    versions = [
        replace(make_document("d", "One.", published_at="2020-01-01"), version="v1"),
        replace(make_document("d", "Two.", published_at="2021-01-01"), version="v2"),
        replace(make_document("d", "Three.", published_at="2022-01-01"), version="v3"),
    ]
    times = version_times(versions)
    vis, sup = as_of_masks(times, _d("2021-06-01"))
    assert vis.tolist() == [True, True, False]
    assert sup.tolist() == [True, False, False]
    assert times.has_newer.tolist() == [True, True, False]


def test_naive_as_of_is_utc() -> None:
    times = version_times(_corpus())
    naive = as_of_masks(times, datetime(2022, 1, 1))
    aware = as_of_masks(times, _d("2022-01-01"))
    assert all((a == b).all() for a, b in zip(naive, aware, strict=True))
