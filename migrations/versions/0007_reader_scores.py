"""reader scores: the entailment reader's pair probabilities of a run

``reader_score`` keeps, per run, the class probabilities of every (evidence window or
sentence, claim sentence) pair the run's entailment judging read, keyed by the reader's
weights digest, whether they ran quantised, the pair's digest and the token limit, so
a re-judge of the run in a new process (other vote thresholds, the same weights) runs
no forward pass for them.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01

"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "reader_score",
        sa.Column("run_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("weights_digest", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("quantized", sa.Boolean(), nullable=False),
        sa.Column("pair_digest", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("max_length", sa.Integer(), nullable=False),
        sa.Column("entailment", sa.Float(), nullable=False),
        sa.Column("neutral", sa.Float(), nullable=False),
        sa.Column("contradiction", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["run.run_id"],
        ),
        sa.PrimaryKeyConstraint(
            "run_id", "weights_digest", "quantized", "pair_digest", "max_length"
        ),
    )


def downgrade() -> None:
    op.drop_table("reader_score")
