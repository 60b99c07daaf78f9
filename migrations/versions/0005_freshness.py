"""freshness: run links, carried verdicts, and indexes for impact queries

``run_link`` ties a re-audit to the run it re-audited; ``carried_verdict`` marks the
claims whose votes and verdict were carried over unchanged (with the reason). The
indexes let ``auditor impact`` find the versions ingested, published or withdrawn in
a time window and the claims that cited them without scanning the ledger.

Revision ID: 0005
Revises: 0002
Create Date: 2026-12-01

"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0005"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "run_link",
        sa.Column("run_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("parent_run_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("relation", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("details", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["parent_run_id"],
            ["run.run_id"],
        ),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["run.run_id"],
        ),
        sa.PrimaryKeyConstraint("run_id", "parent_run_id"),
    )
    with op.batch_alter_table("run_link", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_run_link_parent_run_id"), ["parent_run_id"], unique=False
        )

    op.create_table(
        "carried_verdict",
        sa.Column("run_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("claim_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("from_run_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["from_run_id"],
            ["run.run_id"],
        ),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["run.run_id"],
        ),
        sa.PrimaryKeyConstraint("run_id", "claim_id"),
    )
    with op.batch_alter_table("document_version", schema=None) as batch_op:
        batch_op.create_index("ix_document_version_created_at", ["created_at"], unique=False)
        batch_op.create_index("ix_document_version_published_at", ["published_at"], unique=False)
        batch_op.create_index("ix_document_version_valid_from", ["valid_from"], unique=False)
        batch_op.create_index("ix_document_version_valid_to", ["valid_to"], unique=False)
    with op.batch_alter_table("retrieval", schema=None) as batch_op:
        batch_op.create_index(
            "ix_retrieval_doc_id_version_digest", ["doc_id", "version_digest"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("retrieval", schema=None) as batch_op:
        batch_op.drop_index("ix_retrieval_doc_id_version_digest")
    with op.batch_alter_table("document_version", schema=None) as batch_op:
        batch_op.drop_index("ix_document_version_valid_to")
        batch_op.drop_index("ix_document_version_valid_from")
        batch_op.drop_index("ix_document_version_published_at")
        batch_op.drop_index("ix_document_version_created_at")
    op.drop_table("carried_verdict")
    with op.batch_alter_table("run_link", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_run_link_parent_run_id"))
    op.drop_table("run_link")
