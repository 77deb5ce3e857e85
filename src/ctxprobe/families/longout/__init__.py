"""``longout``: long outputs (LongProc's HTML→TSV): every matching record of a long page as TSV rows."""
