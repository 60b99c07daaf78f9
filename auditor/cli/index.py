"""Commands: index (see the module docstring once implemented)."""

from __future__ import annotations
