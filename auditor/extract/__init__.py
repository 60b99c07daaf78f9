"""Claim extraction: atomic claims with answer spans, factual or not.

>>> from auditor.extract import build_extractor
>>> ex = build_extractor("rules")              # or "sentences", or "llm" with params
>>> claims_per_answer = ex.extract_many(answers)
>>> ex.component                                # kind="extractor", name, version, digest
"""

from auditor.extract.base import (
    KINDS,
    Extraction,
    Extractor,
    claim_id,
    clean_text,
    make_claim,
)
from auditor.extract.nonfactual import classify_text
from auditor.extract.registry import build_extractor, register_extractor, registered_extractors

__all__ = [
    "KINDS",
    "Extraction",
    "Extractor",
    "build_extractor",
    "claim_id",
    "classify_text",
    "clean_text",
    "make_claim",
    "register_extractor",
    "registered_extractors",
]
