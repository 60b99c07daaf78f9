"""claim topic: the named subject of the answer a claim that names nothing was about

``claim.topic`` keeps, for a claim that names nothing itself ("Adults pay £9 to get
in" in an answer about Kessock Botanic Garden), the name the extractor read it as being
about. Retrieval searches for the claim together with it, and relevance counts evidence
that names it, so a re-judge and the freshness watch read the claim as the audit did.
NULL for claims that name their subject and for runs written before this revision.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03

"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("claim", sa.Column("topic", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("claim") as batch:
        batch.drop_column("topic")
