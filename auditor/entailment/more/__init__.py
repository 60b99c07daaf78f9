"""Loaders for ``../shared/data/nli_more``: one module per dataset.

Each module defines ``SOURCE`` (its folder name), ``LABEL_MAPPING`` (the dataset's labels to
the reader's classes, and its split rule) and ``load(root) -> list[NLIPair]``, where ``root`` is
the ``nli_more`` folder. :data:`LOADERS` finds them all.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from pathlib import Path

from auditor.entailment.data import NLIPair


def _discover() -> tuple[dict[str, Callable[[Path], list[NLIPair]]], dict[str, dict[str, str]]]:
    loaders: dict[str, Callable[[Path], list[NLIPair]]] = {}
    mappings: dict[str, dict[str, str]] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue  # private helpers, not loaders
        module = importlib.import_module(f"{__name__}.{info.name}")
        loaders[module.SOURCE] = module.load
        mappings[module.SOURCE] = dict(module.LABEL_MAPPING)
    return loaders, mappings


LOADERS, LABEL_MAPPING = _discover()
