"""The review application of ``auditor serve``: pages and a JSON API on the ledger.

:func:`create_app` builds the FastAPI application; :mod:`auditor.web.views` holds what
the pages and the API show (read from the ledger, reviews written through
:mod:`auditor.human_audit`); :mod:`auditor.web.queue` the queue's pure ordering,
filtering, paging and highlighting.
"""

from auditor.web.app import create_app

__all__ = ["create_app"]
