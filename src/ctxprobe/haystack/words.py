"""Random, unguessable keys and values shared by the retrieval families."""

from __future__ import annotations

import random

ADJECTIVES = (
    "amber", "brisk", "calm", "dusty", "eager", "faint", "gentle", "hollow", "icy", "jolly",
    "keen", "lofty", "mellow", "nimble", "olive", "plain", "quiet", "rapid", "sandy", "tidy",
    "umber", "vivid", "wary", "young", "zesty", "bold", "crisp", "dim", "even", "fresh",
    "grand", "hazy", "ivory", "jade", "kind", "lunar", "misty", "narrow", "odd", "pale",
    "rosy", "silent", "tawny", "upper", "velvet", "wild", "azure", "bright", "coral", "deep",
    "early", "fluffy", "golden", "humble", "inner", "lucky", "modest", "noble", "polar", "rustic",
)
NOUNS = (
    "lantern", "harbor", "meadow", "kettle", "pebble", "compass", "orchard", "saddle", "beacon",
    "canyon", "ribbon", "thimble", "anchor", "basket", "candle", "falcon", "garnet", "hammock",
    "island", "jacket", "ladder", "marble", "needle", "otter", "parcel", "quarry", "raven",
    "shovel", "tunnel", "violin", "walnut", "yarrow", "zephyr", "acorn", "bucket", "cobble",
    "dagger", "ember", "ferret", "goblet", "hinge", "igloo", "juniper", "kayak", "locket",
    "mitten", "nectar", "oyster", "pillar", "quiver", "rudder", "spindle", "trellis", "urchin",
    "vessel", "wicket", "badger", "cradle", "dynamo", "funnel",
)


def random_key(rng: random.Random, taken: set[str]) -> str:
    """An ``adjective-noun-NNN`` key not in ``taken`` (and added to it)."""
    while True:
        key = f"{rng.choice(ADJECTIVES)}-{rng.choice(NOUNS)}-{rng.randint(100, 999)}"
        if key not in taken:
            taken.add(key)
            return key


def random_value(rng: random.Random, taken: set[str], digits: int = 7) -> str:
    """A ``digits``-digit number (no leading zero) not in ``taken`` (and added to it)."""
    while True:
        value = str(rng.randint(10 ** (digits - 1), 10**digits - 1))
        if value not in taken:
            taken.add(value)
            return value
