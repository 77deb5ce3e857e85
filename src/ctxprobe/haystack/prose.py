"""Procedurally generated neutral prose: the default haystack filler.

Filler must be fresh (never a widely published essay a model may have memorised), neutral
(no named people, organisations or places, no numbers or key-like strings that compete with a
needle) and cheap (a million tokens in a fraction of a second). Sentences are built from
many templates over word lists about weather, landscapes, crafts, cooking and gardens, so
the combinatorial space is far larger than any prompt and sentences rarely repeat.

Only ``random.Random(seed)`` drives choices (never ``hash()`` or set order), so a seed
gives the same stream in every process and Python version.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from typing import Any

_PLACES = """valley meadow orchard hillside harbour riverbank garden courtyard kitchen field
forest shore lane clearing heath moor marsh pasture paddock village hamlet cottage farmyard
dairy bakery market quay wharf jetty pier cove glade grove thicket dell hollow ridge slope
terrace allotment greenhouse porch attic cellar pantry larder scullery loft yard towpath
churchyard common upland lowland headland""".split()
_WATERS = """river stream brook creek pond lake canal channel millpond estuary rivulet
fountain ford""".split()
_WEATHERS = "fog mist rain snow frost wind breeze drizzle haze sleet hail dew storm".split()
_SEASONS = "spring summer autumn winter".split()
_TIMES_OF_DAY = "morning afternoon evening night".split()
_OBJECTS = """kettle basket ladder bucket shovel rake hammer chisel loom spindle jar bowl
ladle pot pan lantern candle rope barrel cart wheelbarrow bench table shelf knife spoon
quilt blanket scarf boot glove jug pitcher crate sack trowel hoe sieve whisk apron teapot
broom mallet anvil bellows saddle bridle plank stool cushion rug mat tray platter cauldron
crock satchel thimble skein ribbon parcel workbench cupboard chest mirror clock
windowsill doormat birdhouse""".split()
_FOODS = """loaf pie tart stew soup pudding cake scone biscuit pastry dumpling broth
porridge crumble pancake flatbread custard""".split()
_INGREDIENTS = """onion carrot turnip potato bean pear apple plum herb leek parsnip cabbage
mushroom radish lentil almond walnut hazelnut chestnut cherry gooseberry blackberry
raspberry damson quince marrow beetroot""".split()
_PLANTS = """oak willow birch pine fern reed beech alder elm maple cedar yew poplar hawthorn
bramble nettle thistle sunflower foxglove bluebell primrose buttercup dandelion marigold
vine hedge shrub sapling sedge crocus snowdrop tulip rosebush lilac hollyhock larch
chestnut sycamore""".split()
_ANIMALS = """sheep goat hen goose duck heron owl sparrow wren finch fox hare badger deer
cow horse pony dog cat bee moth beetle swan pigeon crow rook starling otter vole mole lamb
calf foal kitten lark thrush blackbird""".split()
_PEOPLE = """baker gardener farmer potter weaver fisherman carpenter miller shepherd
beekeeper cook blacksmith tailor boatman ferryman traveller neighbour walker painter
builder mason thatcher cobbler innkeeper grocer woodcutter forester ploughman lamplighter
stonemason glassblower joiner saddler bookbinder seamstress quiltmaker dyer""".split()
_STRUCTURES = """barn mill cottage shed granary cabin hut lodge boathouse storehouse windmill
watermill dovecote stable outbuilding forge smithy""".split()
_CROSSINGS = "bridge footbridge jetty pier willows alders boardwalk".split()
_PARTS = "roof walls door beams steps shutters windows chimney eaves timbers".split()
_SMELLS = tuple(" ".join(s.split()) for s in """woodsmoke|wet earth|cut grass|fresh bread|
pine resin|beeswax|warm soil|crushed mint|ripe apples|river mud|damp wool|linseed oil|
sawdust|wild thyme|strong tea|hay|salt air|clover|baked apples|fallen leaves|cinnamon|
orange peel""".replace("\n", "").split("|"))

_ADJ_THING = """old worn sturdy heavy polished faded painted wooden copper iron woven clay
chipped dented rusty smooth rough narrow wide tall short small large plain simple tidy
dusty clean bright dull cracked mended oiled sanded carved glazed speckled striped
familiar spare borrowed favourite humble slender round oval shallow deep broad battered
brass pewter wicker linen woollen cotton leather oaken sound handsome weathered squat
patched trusty""".split()
_ADJ_PLACE = """quiet sheltered open windy sunny shaded misty grassy rocky sandy muddy green
golden overgrown tidy sloping narrow wide distant hidden peaceful still empty lower upper
far little old familiar mossy leafy damp dry frosty stony lonely busy pleasant gentle
silent hushed""".split()
_ADJ_NATURE = """tall slender young gnarled leafy bare crooked pale dark silver grey white
soft heavy low wild tangled sturdy graceful drooping""".split()
_ADJ_TEMP = "cool crisp mild warm chilly damp still heavy fresh sharp clear soft".split()
_ADJ_SEASON = "long short mild hard wet dry gentle bright late early calm busy".split()
_COLOURS = """amber gold rust copper crimson ochre brown silver grey russet bronze yellow
scarlet purple""".split()
_ADVERBS = """slowly quietly gently carefully patiently steadily softly calmly lightly evenly
neatly briskly easily lazily idly warmly freely loosely firmly smoothly thoroughly tidily
deliberately cheerfully thoughtfully absently wearily happily readily busily methodically
silently faintly gradually unhurriedly contentedly dutifully skilfully diligently
casually fondly proudly serenely""".split()

# (base, past); the third person is derived. Pasts are explicit where a rule would fail.
_PAST = {"sweep": "swept", "hang": "hung", "set": "set", "lay": "laid", "hold": "held",
         "bring": "brought", "stir": "stirred", "dig": "dug", "feed": "fed", "run": "ran",
         "rise": "rose", "fall": "fell", "spread": "spread", "creep": "crept",
         "grow": "grew", "sleep": "slept", "drink": "drank", "hop": "hopped",
         "nod": "nodded", "clip": "clipped", "thin": "thinned", "chop": "chopped",
         "trim": "trimmed", "hum": "hummed", "sit": "sat", "stand": "stood",
         "chat": "chatted", "sing": "sang", "shake": "shook", "pat": "patted",
         "slip": "slipped", "drip": "dripped", "plan": "planned", "sow": "sowed",
         "shine": "shone", "fetch": "fetched"}
_CRAFT_VERBS = """mend carry sweep polish stack fold sand trim wrap hang lift oil paint carve
wash dry fill empty sort tidy clean fix repair inspect straighten sharpen scrub rinse patch
stitch brush dust arrange gather move lower raise turn steady balance set lay hold fetch
bring store collect shift examine tighten loosen""".split()
_COOK_VERBS = """stir knead bake slice chop peel simmer roast season taste warm mix sift
strain grate soak toast cool cover wrap""".split()
_GARDEN_VERBS = """plant water prune weed tend feed pick harvest dig rake tie stake clip
thin shade sow""".split()
_WATER_VERBS = """flow drift glitter ripple murmur bend curl gleam shimmer sparkle rush
trickle swirl babble slow widen narrow settle splash run spill""".split()
_WEATHER_VERBS = """drift settle linger gather thicken lift clear roll sweep pass fade
hang spread rise fall creep""".split()
_PLANT_VERBS = """sway bend bloom rustle lean ripen grow spread climb thrive droop shiver
sprout tremble nod""".split()
_ANIMAL_VERBS = """graze wander rest sleep wait watch listen call settle doze nest hop
drink forage roam paddle""".split()
_PEOPLE_VERBS = """walk wander rest pause linger stroll return wait chat hum whistle sit
stand sing""".split()

_SOUNDS = (("murmur", _WATERS), ("rustle", ("leaves", "reeds", "grasses", "branches")),
           ("creak", ("gate", "floorboards", "mill wheel", "old door", "rafters")),
           ("patter", ("rain", "drizzle", "sleet")), ("hum", ("bees", "kettle", "wind")),
           ("call", ("geese", "rooks", "owls", "gulls", "lambs")))
_CLEARED = "cleared lifted passed eased".split()
_WEATHERED = "grey faded worn smooth bleached weathered".split()


def _third(base: str) -> str:
    if base.endswith(("s", "sh", "ch", "x", "z", "o")):
        return base + "es"
    if base.endswith("y") and base[-2] not in "aeiou":
        return base[:-1] + "ies"
    return base + "s"


def _past(base: str) -> str:
    if base in _PAST:
        return _PAST[base]
    if base.endswith("e"):
        return base + "d"
    if base.endswith("y") and base[-2] not in "aeiou":
        return base[:-1] + "ied"
    return base + "ed"


_PLURAL = {"leaf": "leaves", "knife": "knives", "shelf": "shelves", "loaf": "loaves",
           "scarf": "scarves", "sheep": "sheep", "deer": "deer", "goose": "geese",
           "potato": "potatoes", "child": "children", "calf": "calves",
           "bellows": "bellows"}


def _plural(noun: str) -> str:
    if noun in _PLURAL:
        return _PLURAL[noun]
    if noun.endswith("man"):
        return noun[:-3] + "men"
    return _third(noun)


def _forms(bases: Sequence[str]) -> tuple[tuple[str, str, str], ...]:
    return tuple((b, _third(b), _past(b)) for b in bases)


def _plurals(nouns: Sequence[str]) -> tuple[str, ...]:
    return tuple(_plural(n) for n in nouns)


_CRAFT, _COOK, _GARDEN = _forms(_CRAFT_VERBS), _forms(_COOK_VERBS), _forms(_GARDEN_VERBS)
_WATER_V, _WEATHER_V = _forms(_WATER_VERBS), _forms(_WEATHER_VERBS)
_DRIFT_V = _forms("drift roll sweep pass spread creep move".split())
_PLANT_V, _ANIMAL_V, _PEOPLE_V = _forms(_PLANT_VERBS), _forms(_ANIMAL_VERBS), _forms(_PEOPLE_VERBS)
_OBJECTS_P, _PLANTS_P, _ANIMALS_P = _plurals(_OBJECTS), _plurals(_PLANTS), _plurals(_ANIMALS)
_PEOPLE_P, _INGREDIENTS_P = _plurals(_PEOPLE), _plurals(_INGREDIENTS)


def _a(word: str) -> str:
    """Indefinite article plus word; the word lists avoid 'hour'/'useful'-type exceptions."""
    return ("an " if word[0] in "aeiou" else "a ") + word


_Choice = Callable[[Sequence[Any]], Any]


def _time(c: _Choice) -> str:
    k = c(range(7))
    if k == 0:
        return f"in the {c(_ADJ_TEMP)} {c(_TIMES_OF_DAY)}"
    if k == 1:
        return f"on {_a(c(_ADJ_TEMP))} {c(_SEASONS)} {c(_TIMES_OF_DAY)}"
    if k == 2:
        return f"early one {c(_SEASONS)} {c(_TIMES_OF_DAY)}"
    if k == 3:
        return f"late in the {c(_TIMES_OF_DAY)}"
    if k == 4:
        return f"after the {c(_WEATHERS)} had {c(_CLEARED)}"
    if k == 5:
        return f"throughout the {c(_ADJ_SEASON)} {c(_SEASONS)}"
    return f"as the {c(('morning', 'afternoon', 'evening'))} grew {c(_ADJ_TEMP)}"


def _thing(c: _Choice) -> str:
    return f"{c(_ADJ_THING)} {c(_OBJECTS)}"


def _place(c: _Choice) -> str:
    return f"{c(_ADJ_PLACE)} {c(_PLACES)}"


def _sound(c: _Choice) -> str:
    sound, sources = c(_SOUNDS)
    return f"the {sound} of the {c(sources)}"


# Each template takes the bound ``rng.choice`` and returns an uncapitalised sentence body.
_TEMPLATES: tuple[Callable[[_Choice], str], ...] = (
    lambda c: f"{_time(c)}, the {c(_PEOPLE)} {c(_CRAFT)[2]} the {_thing(c)} across the {_place(c)}",
    lambda c: f"the {c(_WATERS)} {c(_WATER_V)[1]} {c(_ADVERBS)} past the {_place(c)}, where the "
    f"{c(_PLANTS_P)} {c(_PLANT_V)[0]} in the {c(_WEATHERS)}",
    lambda c: f"{_a(c(_ADJ_TEMP))} {c(_WEATHERS)} {c(_WEATHER_V)[2]} over the {c(_PLACES)} "
    f"{_time(c)}, and the {c(_PEOPLE_P)} {c(_PEOPLE_V)[2]} {c(_ADVERBS)}",
    lambda c: f"nobody in the {_place(c)} could remember {_a(c(_ADJ_SEASON))} {c(_SEASONS)} "
    f"as {c(_ADJ_TEMP)} as this one, not even the oldest {c(_PEOPLE_P)}",
    lambda c: f"{c(_PEOPLE_P)} often say that {_a(_thing(c))} is worth more than "
    f"{_a(c(_ADJ_THING))} {c(_OBJECTS)} and {_a(c(_ADJ_THING))} {c(_OBJECTS)}",
    lambda c: f"to make {_a(c(_ADJ_THING))} {c(_FOODS)}, the {c(_PEOPLE)} {c(_ADVERBS)} "
    f"{c(_COOK)[1]} the {c(_INGREDIENTS_P)} before adding the {c(_INGREDIENTS_P)}",
    lambda c: f"the {c(_COLOURS)} light of {c(_TIMES_OF_DAY)} fell across the {_place(c)} "
    f"and rested on the {_thing(c)}",
    lambda c: f"beside the {_place(c)}, a row of {c(_ADJ_NATURE)} {c(_PLANTS_P)} "
    f"{c(_PLANT_V)[2]} {c(_ADVERBS)} in the {c(_WEATHERS)}",
    lambda c: f"it was the kind of {c(_TIMES_OF_DAY)} when the {c(_PEOPLE)} {c(_ADVERBS)} "
    f"{c(_CRAFT)[2]} the {c(_OBJECTS)} and {c(_CRAFT)[2]} the {c(_OBJECTS_P)}",
    lambda c: f"every {c(_SEASONS)}, the {c(_PEOPLE_P)} gather at the {c(_PLACES)} to "
    f"{c(_CRAFT)[0]} their {c(_ADJ_THING)} {c(_OBJECTS_P)}",
    lambda c: f"through the {c(('open', 'narrow', 'dusty', 'low', 'wide'))} "
    f"{c(('window', 'doorway', 'gate', 'hedge'))}, the {c(_PEOPLE)} could see the {c(_WATERS)} "
    f"and the "
    f"{c(_ADJ_NATURE)} {c(_PLANTS_P)} beyond it",
    lambda c: f"somewhere beyond the {c(_PLACES)}, {_a(c(_ANIMALS))} {c(_ANIMAL_V)[2]} "
    f"{c(_ADVERBS)}, and the {c(_WEATHERS)} {c(_WEATHER_V)[2]} over the {c(_WATERS)}",
    lambda c: f"after the {c(_WEATHERS)}, the {_place(c)} smelled of {c(_SMELLS)} and "
    f"{c(_SMELLS)}",
    lambda c: f"when the {c(_WEATHERS)} {c(_CLEARED)}, the {c(_PEOPLE_P)} walked out to the "
    f"{c(_PLACES)} and looked at the {c(_ADJ_NATURE)} {c(_PLANTS_P)}",
    lambda c: f"there was {_a(_thing(c))} near the {c(_PLACES)}, and beside it lay "
    f"{_a(_thing(c))} that someone had {c(('left', 'forgotten', 'set down', 'mended'))}",
    lambda c: f"the {c(_WATERS)} was {c(('low', 'high', 'calm', 'swift', 'clear', 'cold'))} "
    f"that {c(_SEASONS)}, so the {c(_PEOPLE_P)} {c(_CRAFT)[2]} their {c(_OBJECTS_P)} "
    f"{c(_ADVERBS)} along the bank",
    lambda c: f"in {c(_SEASONS)}, the {c(_PLANTS_P)} along the {c(_PLACES)} turn "
    f"{c(_COLOURS)}, and the air grows {c(_ADJ_TEMP)}",
    lambda c: f"{_a(c(_ADJ_PLACE))} path led from the {c(_PLACES)} to the {c(_PLACES)}, "
    f"winding between {c(_PLANTS_P)} and {c(_ADJ_NATURE)} {c(_PLANTS_P)}",
    lambda c: f"the {c(_PEOPLE)} {c(_ADVERBS)} {c(_CRAFT)[2]} {_a(_thing(c))}, then set it "
    f"beside the {c(_OBJECTS)} to {c(('cool', 'dry', 'rest', 'settle'))}",
    lambda c: f"most {c(_TIMES_OF_DAY)}s, the {_place(c)} was {c(_ADJ_PLACE)} except for "
    f"{_sound(c)}",
    lambda c: f"long {c(_ADJ_NATURE)} clouds drifted over the {_place(c)} while the "
    f"{c(_PEOPLE)} {c(_CRAFT)[2]} the {c(_OBJECTS_P)}",
    lambda c: f"{c(_ADVERBS)}, the {c(_WEATHERS)} {c(_DRIFT_V)[2]} across the {_place(c)} "
    f"and settled on the {c(_ADJ_THING)} {c(_OBJECTS_P)}",
    lambda c: f"the {c(_OBJECTS_P)} in the {c(_PLACES)} were {c(_ADJ_THING)} and "
    f"{c(_ADJ_THING)}, and each had been made by hand over many {c(_SEASONS)}s",
    lambda c: f"it is said that {_a(_place(c))} needs {c(_ADJ_THING)} {c(_OBJECTS_P)} and "
    f"{_a(c(('patient', 'careful', 'steady', 'cheerful', 'tireless')))} {c(_PEOPLE)} "
    f"to keep it in order",
    lambda c: f"between the {c(_PLACES)} and the {c(_WATERS)} there stood "
    f"{_a(c(_ADJ_THING))} {c(_STRUCTURES)}, its {c(_PARTS)} {c(_ADJ_NATURE)} with "
    f"{c(('moss', 'age', 'lichen', 'ivy', 'weather', 'dust'))}",
    lambda c: f"the {c(_PEOPLE)} watched as the {c(_WATERS)} {c(_WATER_V)[2]} "
    f"{c(_ADVERBS)} beneath the {c(_CROSSINGS)}",
    lambda c: f"by {c(_TIMES_OF_DAY)}, the {c(_FOODS)} on the {c(_OBJECTS)} had "
    f"{c(('cooled', 'risen', 'set', 'browned'))} and the "
    f"{c(('kitchen', 'pantry', 'cottage', 'bakery', 'scullery'))} smelled of {c(_SMELLS)}",
    lambda c: f"{c(_WEATHERS)} came {c(_ADVERBS)} that {c(_SEASONS)}, and the "
    f"{c(_PLANTS_P)} by the {c(_WATERS)} {c(_PLANT_V)[2]} beneath it",
    lambda c: f"a faint smell of {c(_SMELLS)} hung in the {c(_PLACES)}, mixing with the "
    f"{c(_SMELLS)} from the {c(_PLACES)}",
    lambda c: f"the {c(_PEOPLE)} {c(_GARDEN)[2]} the {c(_PLANTS_P)} {_time(c)} and "
    f"{c(_GARDEN)[2]} the {c(_ADJ_NATURE)} {c(_PLANTS_P)} by the {c(_STRUCTURES)}",
    lambda c: f"{c(_ANIMALS_P)} {c(_ANIMAL_V)[0]} in the {_place(c)} while the {c(_PEOPLE_P)} "
    f"{c(_CRAFT)[0]} the {c(_OBJECTS_P)} and {c(_COOK)[0]} the {c(_INGREDIENTS_P)}",
    lambda c: f"{_time(c)}, {_a(c(_ANIMALS))} {c(_ANIMAL_V)[1]} by the {c(_WATERS)} and "
    f"{c(_SOUNDS)[0]}s drift across the {_place(c)}",
    lambda c: f"the {c(_STRUCTURES)} by the {c(_PLACES)} has {c(_COLOURS)} {c(_PARTS)}, "
    f"and in {c(_SEASONS)} the {c(_PLANTS_P)} grow {c(_ADVERBS)} against them",
    lambda c: f"no one hurries in the {_place(c)}, where the {c(_PEOPLE)} {c(_CRAFT)[1]} "
    f"the {c(_OBJECTS_P)} and the {c(_WATERS)} {c(_WATER_V)[1]} {c(_ADVERBS)}",
    lambda c: f"{_a(c(_ADJ_THING))} {c(_OBJECTS)} hung by the door of the "
    f"{c(_STRUCTURES)}, {c(_WEATHERED)} from years of {c(_SEASONS)} {c(_WEATHERS)}",
    lambda c: f"the {c(_WATERS)} {c(_WATER_V)[1]} {c(_ADVERBS)} past the {_place(c)}",
    lambda c: f"{c(_PEOPLE_P)} {c(_PEOPLE_V)[0]} {c(_ADVERBS)} by the {c(_WATERS)} in the "
    f"{c(_TIMES_OF_DAY)}",
    lambda c: f"{_a(_thing(c))} rested on the {_thing(c)}",
    lambda c: f"{_time(c)}, while the {c(_PEOPLE)} {c(_CRAFT)[2]} the {c(_OBJECTS_P)} in the "
    f"{c(_PLACES)}, the {c(_PEOPLE)} {c(_COOK)[2]} the {c(_INGREDIENTS_P)} and the "
    f"{c(_ANIMALS_P)} {c(_ANIMAL_V)[2]} {c(_ADVERBS)} by the {c(_WATERS)}",
    lambda c: f"in the {c(_ADJ_SEASON)} {c(_SEASONS)}s, when the {c(_WEATHERS)} "
    f"{c(_WEATHER_V)[1]} over the {_place(c)}, the {c(_PEOPLE_P)} {c(_CRAFT)[0]} their "
    f"{c(_OBJECTS_P)} and {c(_GARDEN)[0]} the {c(_ADJ_NATURE)} {c(_PLANTS_P)} by the "
    f"{c(_STRUCTURES)}",
    lambda c: f"the {c(_PEOPLE)} had {c(_CRAFT)[2]} the {_thing(c)} and {c(_CRAFT)[2]} the "
    f"{c(_OBJECTS_P)} long before the {c(_WEATHERS)} {c(_WEATHER_V)[2]} over the "
    f"{c(_WATERS)}, and by {c(_TIMES_OF_DAY)} the {c(_PLACES)} was {c(_ADJ_PLACE)} again",
    lambda c: f"the {c(_PEOPLE)} and the {c(_PEOPLE)} {c(_PEOPLE_V)[2]} together by the "
    f"{c(_WATERS)}, talking {c(_ADVERBS)} about the {c(_ADJ_SEASON)} {c(_SEASONS)}",
)


def prose_sentences(seed: int) -> Iterator[str]:
    """Yield fresh neutral English sentences forever; the same seed gives the same stream."""
    rng = random.Random(seed)
    c = rng.choice
    templates = _TEMPLATES
    previous = ""
    while True:
        body = c(templates)(c)
        words = body.count(" ") + 1
        if words < 8 or words > 30:
            continue
        sentence = body[0].upper() + body[1:] + "."
        if sentence == previous:
            continue
        previous = sentence
        yield sentence
