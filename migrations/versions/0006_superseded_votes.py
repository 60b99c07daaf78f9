"""superseded votes: the panel's votes against a claim's superseded evidence

``superseded_vote`` keeps the votes that decide ``stale`` (cast against the older
versions of the documents a claim cited), keyed like ``judge_vote``, so a ``stale``
verdict can be traced to its votes and a re-judge reuses them.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01

"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "superseded_vote",
        sa.Column("run_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("claim_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("judge_digest", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("judge_name", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("value", sa.Float(), nullable=False),
        sa.Column("raw", sa.Text(), nullable=True),
        sa.Column("scores", sa.JSON(), nullable=True),
        sa.Column("latency_s", sa.Float(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["judge_digest"],
            ["component.digest"],
        ),
        sa.PrimaryKeyConstraint("run_id", "claim_id", "judge_digest"),
    )


def downgrade() -> None:
    op.drop_table("superseded_vote")
