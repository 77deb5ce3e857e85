"""The HTML report: the page (:mod:`.page`: ``render_html``, ``write_html``,
``build_html_report``), its building blocks (:mod:`.parts`: templates, tables, figures, the
``ReportSection`` a plugin's section returns), the built-in sections (:mod:`.builtin`, with
:mod:`.overview`, :mod:`.sections`, :mod:`.budgets`, :mod:`.floor`, :mod:`.natural`)."""
