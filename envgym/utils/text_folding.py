"""Text folded to what a reader sees: the one normal form that rules about what a text *says* are checked on.

A rule written against plain ASCII ("no ``Score: N``", "never the secret word") is bypassed by text that looks the
same and is spelled differently: full-width letters and colons, zero-width characters inside a word, Cyrillic
or Greek look-alikes, combining marks. :func:`fold_text` undoes all of them: Unicode compatibility decomposition
(NFKD: full-width and styled letters become plain ones), marks and invisible format characters removed, each
remaining character replaced by its ASCII look-alike from Unicode's confusables table (TR39, as the
``confusable-homoglyphs`` package ships it), then case folded.
"""

from __future__ import annotations

import functools
import json
import unicodedata
from pathlib import Path

_KEEP_CONTROLS = {"\n", "\t", " "}


@functools.lru_cache(maxsize=1)
def _ascii_lookalikes() -> dict[int, str]:
    """Each non-ASCII character whose confusables include exactly one printable ASCII character, mapped to it."""
    import confusable_homoglyphs

    table = json.loads((Path(confusable_homoglyphs.__file__).parent / "confusables.json").read_text("utf-8"))
    out: dict[int, str] = {}
    for character, homoglyphs in table.items():
        if len(character) != 1 or character.isascii():
            continue
        ascii_forms = {h["c"] for h in homoglyphs if len(h["c"]) == 1 and h["c"].isascii() and h["c"].isprintable()}
        if len(ascii_forms) == 1:
            out[ord(character)] = ascii_forms.pop()
    return out


def strip_invisible(text: str) -> str:
    """``text`` without format characters (zero-width spaces and joiners, soft hyphens, bidi controls) and
    control characters other than newlines and tabs."""
    return "".join(
        c for c in text if c in _KEEP_CONTROLS or unicodedata.category(c) not in ("Cf", "Cc", "Co", "Cs", "Cn")
    )


def fold_text(text: str) -> str:
    """What ``text`` looks like, in plain lowercase ASCII where it can be: NFKD, marks and invisible characters
    removed, look-alikes replaced by their ASCII letter, NFKC, case folded (see the module docstring)."""
    decomposed = unicodedata.normalize("NFKD", text)
    visible = strip_invisible("".join(c for c in decomposed if unicodedata.category(c) not in ("Mn", "Me")))
    return unicodedata.normalize("NFKC", visible.translate(_ascii_lookalikes())).casefold()
