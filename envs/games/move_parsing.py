"""Reading a move out of the assistant's text: the last complete tag, and strict ASCII integers.

Every game parses with these two helpers, so a parse failure is always ``None`` (a policy mistake the game
reports with ``action_valid=False``), never an exception. Why not ``re.findall(r"<tag>(.*?)</tag>")`` and
``int()``:

- the lazy pattern rescans the rest of the text from every opening tag, so 100 KB of unclosed tags took
  about 10 s; the pattern here stops at the next opening tag, which keeps it linear;
- ``str.isdigit`` accepts superscripts that ``int`` refuses (``"²"``), and ``int`` accepts digits of every
  script (``int("٣") == 3``). The games ask for ASCII digits, so only ``0-9`` (with an optional minus sign)
  are read, and at most ``max_digits`` of them (``int`` of 100,000 digits is slow and means nothing here).
"""

from __future__ import annotations

import functools
import re

MAX_DIGITS = 12


@functools.cache
def _tag_pattern(tag: str) -> re.Pattern[str]:
    name = re.escape(tag)
    # The body may not contain another opening or closing tag: linear time, and the innermost of nested tags.
    return re.compile(rf"<{name}>((?:(?!</?{name}>).)*)</{name}>", re.DOTALL | re.IGNORECASE)


def last_tag(text: str, tag: str) -> str | None:
    """The text inside the last complete ``<tag>...</tag>`` (tag names match case-insensitively), or ``None``."""
    body = None
    for match in _tag_pattern(tag).finditer(text):
        body = match.group(1)
    return body


def parse_int(text: str, max_digits: int = MAX_DIGITS) -> int | None:
    """``text`` without surrounding whitespace as an int when it is ASCII digits ``0-9`` (at most ``max_digits``)
    after an optional ``-``; else ``None``. ``"-0"`` is 0."""
    text = text.strip()
    if re.fullmatch(rf"-?[0-9]{{1,{max_digits}}}", text) is None:
        return None
    return int(text)


def quote(text: str, limit: int = 40) -> str:
    """A short, safe echo of what the agent wrote, for feedback messages."""
    text = text.strip()
    return repr(text[:limit] + ("..." if len(text) > limit else ""))
