"""retrieval signals: content-word coverage and best sentence cosine per evidence chunk

Stored so that re-judging a run (``auditor rejudge``) labels its claims on exactly
the evidence signals the original run used.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01

"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("retrieval", schema=None) as batch_op:
        batch_op.add_column(sa.Column("coverage", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("sentence_relevance", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("retrieval", schema=None) as batch_op:
        batch_op.drop_column("sentence_relevance")
        batch_op.drop_column("coverage")
