"""RAIM stacking: cross-fitted logistic regression over panel votes."""

from auditor.stacking.model import Stacker, load_stacker

__all__ = ["Stacker", "load_stacker"]
