"""Units after a number: which trailing text is a unit (``12ft``, ``2\\pi cm``, ``5 square feet``, ``60 miles per
hour``) and which is not (``16 is not the answer``, ``16 or more``); and clock times (``8:34 p.m.``).

Text at the end of an answer is a unit only when it is one: a word of the whitelist below, optionally squared or
cubed (``cm^2``, ``square meters``) or divided by another unit (``km/h``, ``meters per second``). Anything else
stays part of the answer, so it must equal the gold as a whole (and words like "or more" never do). A unit may be
glued to a number (``12ft``) when it has two letters or more, or is ``s`` or ``h`` (``3s``, ``2h``); other
one-letter units (``5 m``) must be separated, because ``2m`` may be a product or two million. Percent is not a
unit here: it changes the value (see ``Conventions.percent``).
"""

from __future__ import annotations

import re

# canonical name -> spellings (lower case); plurals are added below.
_UNIT_SPELLINGS: dict[str, tuple[str, ...]] = {
    "mm": ("mm", "millimeter", "millimetre"),
    "cm": ("cm", "centimeter", "centimetre"),
    "m": ("meter", "metre"),
    "km": ("km", "kilometer", "kilometre"),
    "nm": ("nm", "nanometer", "nanometre"),
    "in": ("in", "inch", "inches"),
    "ft": ("ft", "foot", "feet"),
    "yd": ("yd", "yard"),
    "mi": ("mi", "mile"),
    "mg": ("mg", "milligram"),
    "g": ("gram",),
    "kg": ("kg", "kilogram"),
    "lb": ("lb", "lbs", "pound"),
    "oz": ("oz", "ounce"),
    "t": ("ton", "tonne"),
    "ms": ("ms", "millisecond"),
    "s": ("sec", "secs", "second"),
    "min": ("min", "mins", "minute"),
    "h": ("hr", "hrs", "hour"),
    "day": ("day",),
    "week": ("week",),
    "month": ("month",),
    "year": ("yr", "yrs", "year"),
    "ml": ("ml", "milliliter", "millilitre", "cc"),
    "l": ("liter", "litre"),
    "gal": ("gal", "gallon"),
    "qt": ("qt", "quart"),
    "pint": ("pint",),
    "cup": ("cup",),
    "tbsp": ("tbsp", "tablespoon"),
    "tsp": ("tsp", "teaspoon"),
    "acre": ("acre",),
    "ha": ("hectare",),
    "mph": ("mph",),
    "kph": ("kph", "kmh"),
    "knot": ("knot",),
    "dollar": ("dollar", "usd"),
    "cent": ("cent",),
    "euro": ("euro", "eur"),
    "yen": ("yen",),
    "degree": ("degree", "deg"),
    "rad": ("rad", "radian"),
    "unit": ("unit",),
    "celsius": ("celsius",),
    "fahrenheit": ("fahrenheit",),
    "kelvin": ("kelvin",),
    "hz": ("hz", "hertz"),
    "kw": ("kw", "kilowatt"),
    "kwh": ("kwh",),
    "watt": ("watt",),
    "volt": ("volt",),
    "joule": ("joule",),
    "newton": ("newton",),
    "pa": ("pa", "pascal"),
}
_CANONICAL: dict[str, str] = {}
for _canonical, _spellings in _UNIT_SPELLINGS.items():
    for _spelling in _spellings:
        _CANONICAL[_spelling] = _canonical
        if len(_spelling) > 3 and not _spelling.endswith("s"):
            _CANONICAL[_spelling + ("es" if _spelling.endswith("inch") else "s")] = _canonical
# One-letter units are case-sensitive (``5 m`` is metres, ``5 M`` is not a unit) and never glued to the number.
_ONE_LETTER = {
    "m": "m",
    "g": "g",
    "s": "s",
    "h": "h",
    "l": "l",
    "L": "l",
    "V": "volt",
    "W": "watt",
    "J": "joule",
    "K": "kelvin",
    "N": "newton",
    "C": "celsius",
    "F": "fahrenheit",
}

# Glued to a number, only these single letters are read as units (seconds, hours): no product or scale word
# (``2m``: metres, m times 2 or two million; ``3k``: three thousand) is spelled with them.
_GLUED_ONE_LETTER = {"s": "s", "h": "h"}
_CLOCK = re.compile(
    r"(?P<hours>[0-9]{1,2}):(?P<minutes>[0-9]{2})(?::(?P<seconds>[0-9]{2}))?(?:\s*(?P<half>[AaPp])\.?\s*[Mm]\.?)?"
)

_POWER = r"(?:\s*\^\s*\{?\s*[23]\s*\}?)?"
_TRAILING_UNIT = re.compile(
    rf"(?P<unit>(?P<prefix>(?:square|sq|cubic|cu)\.?\s+)?(?P<first>[A-Za-z]+){_POWER}(?P<suffix>\s+(?:squared|cubed))?"
    rf"(?:\s*(?:/|\s\s*per\s)\s*(?P<second>[A-Za-z]+){_POWER})?)\s*\.?$"
)
_VALUE_END = re.compile(r"(?:\d|\}|\)|\\[A-Za-z]+)$")


def _unit_name(word: str, glued: bool) -> str | None:
    if len(word) == 1:
        return _GLUED_ONE_LETTER.get(word) if glued else _ONE_LETTER.get(word)
    return _CANONICAL.get(word.lower())


def unit_split(text: str) -> tuple[str, str | None]:
    """``(value, unit)`` when ``text`` ends with a unit after a value (``12ft`` -> ``("12", "ft")``), else
    ``(text, None)``. The unit comes back canonical, so ``5 feet`` and ``5 ft`` carry the same unit."""
    match = _TRAILING_UNIT.search(text)
    if match is None:
        return text, None
    value = text[: match.start()].rstrip()
    if not value or _VALUE_END.search(value) is None:
        return text, None
    glued = match.start() == len(value)
    first = _unit_name(match.group("first"), glued)
    second = _unit_name(match.group("second"), False) if match.group("second") else ""
    if first is None or second is None:
        return text, None
    head = match.group("unit").split("/")[0].split(" per ")[0]
    prefix = (match.group("prefix") or "").strip(" .").lower()
    suffix = (match.group("suffix") or "").strip()
    cubed = prefix in ("cubic", "cu") or suffix == "cubed" or "3" in head
    power = "3" if cubed else "2" if prefix or suffix or "2" in head else ""
    return value, first + (f"^{power}" if power else "") + (f"/{second}" if second else "")


def clock_time(text: str) -> tuple[int, bool] | None:
    """``(seconds since midnight, explicit)`` for a time of day (``20:34``, ``20:34:00``, ``8:34 P.M.``,
    ``12:05 a.m.``), where ``explicit`` says it writes seconds or a.m./p.m. and so cannot be a ratio; None for
    anything else. A time without a.m./p.m. is on the 24-hour clock (``8:34`` is morning)."""
    match = _CLOCK.fullmatch(text.strip())
    if match is None:
        return None
    hours, minutes = int(match.group("hours")), int(match.group("minutes"))
    seconds = int(match.group("seconds") or 0)
    half = (match.group("half") or "").lower()
    if minutes > 59 or seconds > 59 or hours > (12 if half else 23) or (half and hours == 0):
        return None
    if half:
        hours = hours % 12 + (12 if half == "p" else 0)
    return hours * 3600 + minutes * 60 + seconds, bool(half or match.group("seconds"))
