"""The plain steps behind the graph: what the judges read of a claim."""

from __future__ import annotations

import pytest

from auditor.steps import judged_text


@pytest.mark.parametrize(
    ("text", "judged"),
    [
        ("The bridge opened in 1990 [1].", "The bridge opened in 1990."),
        ("Paris is large [2, 3] and old.", "Paris is large and old."),
        ("It rains (source: the met office).", "It rains."),
        ("Details at https://example.org/a?b=1 today.", "Details at today."),
        ("The 2020 [a1] report.", "The 2020 report."),
        ("Array [i] access is O(1).", "Array [i] access is O(1)."),  # not a citation
        ("[1]", "[1]"),  # nothing but a marker: kept, never an empty claim
    ],
)
def test_citation_markers_are_not_judged(text: str, judged: str) -> None:
    assert judged_text(text) == judged
