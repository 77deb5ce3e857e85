"""SQLite store (embedded, zero set-up) with forward-only migrations."""

from ctxprobe.store.db import (DEFAULT_STORE, RunRecord, Store, iter_export, iter_records, open_existing,
                               reading_only)
from ctxprobe.core.records import CaseRecord, StoredResponse
from ctxprobe.core.runmeta import Preflight, RunMeta

__all__ = ["DEFAULT_STORE", "CaseRecord", "Preflight", "RunMeta", "RunRecord", "Store", "StoredResponse", "iter_export",
           "iter_records", "open_existing", "reading_only"]
