"""answer origin: where an imported answer came from (trace and span ids)

``answer.origin`` keeps an answer's ``origin`` (``auditor.types.Answer.origin``): for an
answer imported from traces (``auditor import otel|langfuse``) the format, trace id and
span id, for one imported from an evaluation data set the format and row, so that a
claim's trail leads back to the trace that produced it. NULL for answers that gave none
and for runs written before this revision.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-08

"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("answer", sa.Column("origin", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("answer") as batch:
        batch.drop_column("origin")
