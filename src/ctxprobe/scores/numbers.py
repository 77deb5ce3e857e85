"""Numbers written with digit-group separators, read back as plain digits.

A model asked for ``9996995`` may write ``9,996,995``, ``9 996 995``, ``9.996.995``,
``9'996'995`` or ``99,96,995``: the right value in a formatting that a digit-run scorer
would read as other numbers (``9``, ``996``, ``995``) and label ``wrong``. The numeric
families read an output through :func:`normalise_grouped` first:

- a **grouped number** is a first group of 1-3 digits followed by one or more groups of
  exactly 3 digits, every group joined by the same one separator (``,`` ``.`` ``'`` ``’`` ``_``
  a no-break or thin space; ``.`` and a plain space only with two groups or more after
  the first, so ``9.996`` stays a decimal and ``12 345`` two numbers), or the Indian grouping (``,`` only: 1-2 digits, groups
  of 2, a last group of 3). It must not touch another digit on either side, so a value
  inside a longer number never becomes the value: ``19,996,995`` reads ``19996995``.
- each grouped number is replaced by its digits; everything else is left as it is.

What is left that still looks like a formatted number (digit groups joined by ``,`` ``'`` ``’``
``_`` or a no-break/thin space whose groups are not one of the two groupings above, such as
``99,9,6995``) is reported by :func:`malformed_grouped`: a scorer labels a miss that
contains one ``parse_error`` (the answer could not be read), never ``wrong``.
"""

from __future__ import annotations

import re

#: Separators between digit groups (space, no-break space, thin and narrow no-break space).
_SEPS = ",.'\u2019_ \u00a0\u2009\u202f"
_WESTERN = re.compile(
    r"(?<!\d)(?<!\d[" + re.escape(_SEPS) + r"])\d{1,3}([" + re.escape(_SEPS) + r"])\d{3}(?:\1\d{3})*(?!\d)(?!\1\d)"
)
#: Separators that also occur between words and decimals: two groups needed (``9 996 995``).
_WEAK_SEPS = ". "
_INDIAN = re.compile(r"(?<!\d)(?<!\d,)\d{1,2}(?:,\d{2})+,\d{3}(?!\d)(?!,\d)")
#: Digit groups still joined by an unambiguous separator after normalising.
_MALFORMED = re.compile(r"\d+(?:[,'\u2019_\u00a0\u2009\u202f]\d+)+")
#: Fewer digits than this in all groups together is not a formatted value (``12,34``).
MIN_DIGITS = 5


def _digits(match: re.Match[str]) -> str:
    return re.sub(r"\D", "", match.group(0))


def _western(match: re.Match[str]) -> str:
    if match.group(1) in _WEAK_SEPS and match.group(0).count(match.group(1)) < 2:
        return match.group(0)  # "9.996" is a decimal, "12 345" may be two numbers
    return _digits(match)


def normalise_grouped(text: str) -> str:
    """``text`` with every grouped number (module docstring) written as plain digits."""
    text = _INDIAN.sub(_digits, text)
    return _WESTERN.sub(_western, text)


def malformed_grouped(text: str) -> list[str]:
    """Digit groups joined by a separator that :func:`normalise_grouped` could not read
    as one number (call it on normalised text); ``a, b`` (a comma then a space) is a
    list, not a number, and neither is a grouping of fewer than :data:`MIN_DIGITS` digits."""
    return [m.group(0) for m in _MALFORMED.finditer(text) if len(_digits(m)) >= MIN_DIGITS]
