"""The default panel with one member's parameters replaced, for before/after runs."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def panel_with_reader(weights: str | Path, folder: Path) -> Path:
    """Write the shipped panel with the entailment reader reading ``weights`` into
    ``folder``; returns the panel file."""
    text = resources.files("auditor.samples").joinpath("panel.toml").read_text()
    marker = 'name = "entailment"'
    if text.count(marker) != 1:
        raise ValueError("the shipped panel.toml must name the entailment member once")
    panel = folder / "panel.toml"
    panel.write_text(
        text.replace(marker, f'{marker}\nparams = {{ weights = "{Path(weights).resolve()}" }}')
    )
    return panel
