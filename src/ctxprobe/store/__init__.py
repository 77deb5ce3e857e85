"""SQLite store (embedded, zero set-up) with forward-only migrations."""

from ctxprobe.store.db import DEFAULT_STORE, RunRecord, Store, iter_export, open_existing, reading_only
from ctxprobe.core.runmeta import Preflight, RunMeta

__all__ = ["DEFAULT_STORE", "Preflight", "RunMeta", "RunRecord", "Store", "iter_export", "open_existing",
           "reading_only"]
