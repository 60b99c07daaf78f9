"""Statistics: cluster bootstrap, agreement scores (explicit random generators)."""

from auditor.stats.bootstrap import (
    cluster_bootstrap_weights,
    percentile_interval,
    ratio_with_interval,
)

__all__ = ["cluster_bootstrap_weights", "percentile_interval", "ratio_with_interval"]
