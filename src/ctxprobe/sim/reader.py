"""Reading key → value bindings out of prompt text: the one reader the sims and the skills share.

It sits here, below both :mod:`ctxprobe.sim.model` (whose default reader it is) and the
skills (``niah`` looks keys up with it), so neither imports the other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Sentence ends; a newline also ends a sentence so the seam left by blinding cannot glue
# the key of one sentence to the number of another.
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")


@dataclass(frozen=True)
class Reader:
    """Finds keys in a question and the values bound to them in a context.

    Other task families extend the sims by giving their own key and value patterns.
    """

    key_pattern: str = r"[a-z]+-[a-z]+-\d+"
    value_pattern: str = r"\d+"

    def keys_in(self, question: str) -> list[str]:
        """Keys the question asks about, in order, without repeats."""
        found = re.findall(rf"(?<![\w-])(?:{self.key_pattern})(?![\w-])", question)
        return list(dict.fromkeys(found))

    def values_for(self, key: str, context: str) -> list[str]:
        """Values stated for ``key``: the first value after each mention, in its sentence."""
        return self._values(re.escape(key), context).get(key, [])

    def bindings(self, context: str) -> dict[str, list[str]]:
        """Every key mentioned in the context with the values stated for it."""
        return self._values(f"(?:{self.key_pattern})", context)

    def _values(self, key_regex: str, context: str) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        value_re = re.compile(self.value_pattern)
        for match in re.finditer(rf"(?<![\w-]){key_regex}(?![\w-])", context):
            end = _SENTENCE_END.search(context, match.end())
            stop = end.start() if end else len(context)
            value = value_re.search(context, match.end(), stop)
            if value:
                values = found.setdefault(match.group(0), [])
                if value.group(0) not in values:
                    values.append(value.group(0))
        return found


NIAH_READER = Reader()
