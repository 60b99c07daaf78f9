"""retrieval deciding: whether each evidence row is relevant by the run's label policy

``retrieval.deciding`` stores, per evidence row, the outcome of label rule 2 (relevance,
``auditor.decision.evidence_relevant``) as the label step decided it, so that the
ledger's claim counts, report cards and the freshness watch read which evidence a claim's
label can rest on instead of re-implementing the rule in SQL. NULL for rows written before
this revision: readers apply the rule to their stored values
(``auditor.decision.stored_deciding``).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-05

"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("retrieval", sa.Column("deciding", sa.Boolean(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("retrieval") as batch:
        batch.drop_column("deciding")
