"""Fresh procedural writing for the ``mrcr`` conversation: requests and replies.

A request is ``write a {format} about {topic}``; a reply is text in that format, built
from the seeded neutral prose of :mod:`ctxprobe.haystack.prose` plus sentences naming the
topic, shaped as the format asks (stanzas of short lines, titled paragraphs, hashtags, a
closing question...). Never published text, never a model's output: only
``random.Random(seed)`` decides, so a seed gives the same reply in every process.
"""

from __future__ import annotations

import itertools
import random
import re

from ctxprobe.haystack.prose import prose_sentences

FORMATS: tuple[str, ...] = ("poem", "short story", "blog post", "social media post", "riddle", "short essay",
                            "letter", "speech")
TOPICS: tuple[str, ...] = tuple("""tapirs rocks lighthouses glaciers beekeeping lanterns owls harbours
orchards violins bridges comets sourdough kites tortoises windmills fog rivers deserts quilts
foxes teapots canals maps clocks gardens herons pebbles volcanoes ferns lullabies ladders
otters tides marmalade pottery lichen snowfall sailboats moths caves meadows gondolas
chimneys hedgehogs bonfires typewriters sparrows ponds thunderstorms bicycles almonds
weaving cobblestones carousels acorns puffins dunes compasses kettles barns tulips""".split())
REQUEST = "write {article} {format} about {topic}"
#: A request turn, as it is written and as a reader finds it (one whole message).
REQUEST_RE = re.compile(r"^write an? (.+?) about (.+)$")
ORDINAL_SUFFIX = {1: "st", 2: "nd", 3: "rd"}

_TOPIC_LINES = (
    "Few things are as quietly remarkable as {t}.",
    "Anyone who watches {t} for long enough starts to notice small changes.",
    "There is a patience in {t} that the rest of the day seldom has.",
    "The oldest stories about {t} are told slowly, with long pauses.",
    "Nobody forgets the first time they looked closely at {t}.",
    "In every season {t} seem to keep a rhythm of their own.",
    "Talk of {t} always drifts toward weather and old roads.",
    "It is easy to overlook {t}, and a pity to do so.",
    "Children ask more questions about {t} than grown people admit to.",
    "Some say {t} are best understood in the early morning light.",
    "A whole afternoon can pass in thinking about {t}.",
    "The simplest facts about {t} are often the most surprising.",
)
_TAGS = ("quietmoments", "slowliving", "noticing", "smallwonders", "outdoors", "seasons", "today", "calm")
_SIGN_OFFS = ("Warm regards,\nA neighbour", "With fond wishes,\nAn old friend", "Until soon,\nYour correspondent")


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th`` ... (``11th``-``13th`` too)."""
    suffix = "th" if 10 <= n % 100 <= 20 else ORDINAL_SUFFIX.get(n % 10, "th")
    return f"{n}{suffix}"


def request(fmt: str, topic: str) -> str:
    article = "an" if fmt[0] in "aeiou" else "a"
    return REQUEST.format(article=article, format=fmt, topic=topic)


def _sentences(rng: random.Random, topic: str, words: int) -> list[str]:
    """Sentences (prose and topic lines mixed) until about ``words`` words."""
    prose = prose_sentences(rng.getrandbits(63))
    out: list[str] = [rng.choice(_TOPIC_LINES).format(t=topic)]
    count = len(out[0].split())
    for s in itertools.islice(prose, 10_000):
        if count >= words:
            break
        if rng.random() < 0.2:
            s = rng.choice(_TOPIC_LINES).format(t=topic)
        out.append(s)
        count += len(s.split())
    return out


def _paragraphs(rng: random.Random, sentences: list[str]) -> list[str]:
    paras, i = [], 0
    while i < len(sentences):
        k = rng.randint(2, 4)
        paras.append(" ".join(sentences[i:i + k]))
        i += k
    return paras


def _lines(sentences: list[str]) -> list[str]:
    """Short poem lines: sentences broken at commas and after about seven words."""
    lines: list[str] = []
    for s in sentences:
        for part in re.split(r"(?<=,) ", s):
            words = part.split()
            for j in range(0, len(words), 7):
                lines.append(" ".join(words[j:j + 7]))
    return lines


def reply(seed: int, fmt: str, topic: str, words: int) -> str:
    """A fresh piece of about ``words`` words in format ``fmt`` about ``topic``."""
    rng = random.Random(seed)
    s = _sentences(rng, topic, words)
    title = topic[0].upper() + topic[1:]
    if fmt == "poem":
        lines = _lines(s)
        stanzas = ["\n".join(lines[i:i + 4]) for i in range(0, len(lines), 4)]
        return f"On {title}\n\n" + "\n\n".join(stanzas)
    if fmt == "short story":
        return "\n\n".join(_paragraphs(rng, ["It began, as such things do, on an ordinary day.", *s]))
    if fmt == "blog post":
        return f"Notes on {title}\n\n" + "\n\n".join(_paragraphs(rng, s)) + "\n\nThanks for reading."
    if fmt == "social media post":
        tags = " ".join(f"#{t}" for t in [topic, *rng.sample(_TAGS, 2)])
        return " ".join(s) + "\n\n" + tags
    if fmt == "riddle":
        return "\n".join(s) + "\nWhat am I?"
    if fmt == "letter":
        return "Dear friend,\n\n" + "\n\n".join(_paragraphs(rng, s)) + "\n\n" + rng.choice(_SIGN_OFFS)
    if fmt == "speech":
        return "Friends and neighbours,\n\n" + "\n\n".join(_paragraphs(rng, s)) + "\n\nThank you."
    return f"{title}\n\n" + "\n\n".join(_paragraphs(rng, s))  # short essay


def cut_words(text: str, n: int) -> str:
    """The first ``n`` whitespace-separated words of ``text``, its own spacing kept."""
    if n <= 0:
        return ""
    ends = [m.start() for m in re.finditer(r"\s+", text)] + [len(text)]
    return text[: ends[min(n, len(ends)) - 1]]


def word_count(text: str) -> int:
    return len(text.split())


def random_string(rng: random.Random, n: int = 10) -> str:
    """A random string of letters and digits (OpenAI MRCR's ``random_string_to_prepend``)."""
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    return "".join(rng.choice(alphabet) for _ in range(n))
