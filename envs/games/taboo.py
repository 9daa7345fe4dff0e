"""The describer's taboo in ``games/DescribeGuess-v0``: whether a clue names the secret word in any disguise a rule
can catch, and whether it talks about the word or the list instead of the thing.

The clue is checked in many *views*, each a plain lowercase text, and a view names the word when the word starts
a word of it, spelled straight or backwards with any separators or digits between its letters
(``c-a-t``, ``c1a2t``, ``t a c``), or when a word of it, or a run of single letters, is its anagram (``act``):

- the clue folded (:func:`envgym.utils.text_folding.fold_text`: NFKC, zero-width characters and marks removed,
  look-alike letters of other scripts folded) and with leetspeak read as letters (``c4t``, ``(@t``);
- decoded: rot13, base64, hex and decimal byte codes, A1Z26 letter numbers (``3 1 20``), Morse, the NATO phonetic
  alphabet and English letter names (``charlie alfa tango``, ``see ay tee``), the first letters of consecutive
  words (an acrostic);
- translated: the word in French, Spanish, German, Italian and Portuguese (:data:`TRANSLATIONS`).

Meta clues are refused too (:func:`meta_clue`): rhymes and sounds, spelling, letters, positions in the list
(``the second candidate``), other candidates named (an elimination list). What no rule here catches: synonyms
and descriptions in a private code the two seats agree on, other languages, puns. docs/multi-agent.md says so.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re

from envgym.utils.text_folding import fold_text

NATO = {
    "alfa": "a", "alpha": "a", "bravo": "b", "charlie": "c", "delta": "d", "echo": "e", "foxtrot": "f",
    "golf": "g", "hotel": "h", "india": "i", "juliett": "j", "juliet": "j", "kilo": "k", "lima": "l",
    "mike": "m", "november": "n", "oscar": "o", "papa": "p", "quebec": "q", "romeo": "r", "sierra": "s",
    "tango": "t", "uniform": "u", "victor": "v", "whiskey": "w", "whisky": "w", "xray": "x", "yankee": "y",
    "zulu": "z",
}  # fmt: skip
LETTER_NAMES = {
    "ay": "a", "bee": "b", "see": "c", "cee": "c", "dee": "d", "ee": "e", "ef": "f", "eff": "f", "gee": "g",
    "aitch": "h", "eye": "i", "jay": "j", "kay": "k", "el": "l", "ell": "l", "em": "m", "en": "n", "oh": "o",
    "pee": "p", "cue": "q", "queue": "q", "ar": "r", "are": "r", "ess": "s", "tee": "t", "you": "u", "vee": "v",
    "ex": "x", "why": "y", "zee": "z", "zed": "z",
}  # fmt: skip
MORSE = {
    ".-": "a", "-...": "b", "-.-.": "c", "-..": "d", ".": "e", "..-.": "f", "--.": "g", "....": "h", "..": "i",
    ".---": "j", "-.-": "k", ".-..": "l", "--": "m", "-.": "n", "---": "o", ".--.": "p", "--.-": "q", ".-.": "r",
    "...": "s", "-": "t", "..-": "u", "...-": "v", ".--": "w", "-..-": "x", "-.--": "y", "--..": "z",
}  # fmt: skip
LEET = str.maketrans({"4": "a", "@": "a", "8": "b", "(": "c", "3": "e", "6": "g", "9": "g", "1": "l", "!": "i",
                      "0": "o", "5": "s", "$": "s", "7": "t", "+": "t", "2": "z", "|": "l"})  # fmt: skip
# The words of WORDS (describe_guess.py) in French, Spanish, German, Italian and Portuguese, accents folded.
TRANSLATIONS = {
    "cat": "chat gato katze gatto",
    "dog": "chien perro hund cane cao cachorro",
    "horse": "cheval caballo pferd cavallo cavalo",
    "cow": "vache vaca kuh mucca",
    "lion": "leon lowe loewe leone leao",
    "elephant": "elefant elefante elephant",
    "penguin": "manchot pingouin pinguino pinguin pinguim",
    "owl": "hibou chouette buho lechuza eule gufo coruja",
    "apple": "pomme manzana apfel mela maca",
    "banana": "banane platano",
    "orange": "naranja arancia laranja",
    "grape": "raisin uva traube weintraube",
    "lemon": "citron limon zitrone limone limao",
    "cherry": "cerise cereza kirsche ciliegia cereja",
    "strawberry": "fraise fresa erdbeere fragola morango",
    "watermelon": "pasteque sandia wassermelone anguria melancia",
    "hammer": "marteau martillo martello martelo",
    "saw": "scie sierra sage sega serrote",
    "screwdriver": "tournevis destornillador schraubenzieher cacciavite",
    "wrench": "cle llave schraubenschlussel chiave",
    "ladder": "echelle escalera leiter scala escada",
    "shovel": "pelle pala schaufel",
    "drill": "perceuse taladro bohrmaschine trapano furadeira",
    "scissors": "ciseaux tijeras schere forbici tesoura",
    "bicycle": "velo bicicleta fahrrad bicicletta",
    "car": "voiture coche carro auto macchina",
    "train": "tren zug treno comboio",
    "airplane": "avion flugzeug aereo aviao",
    "boat": "bateau barco boot barca",
    "bus": "autobus onibus",
    "helicopter": "helicoptere helicoptero hubschrauber elicottero",
    "rocket": "fusee cohete rakete razzo foguete",
    "doctor": "medecin docteur medico arzt dottore",
    "teacher": "professeur maestro profesor lehrer insegnante",
    "chef": "cuisinier cocinero koch cuoco cozinheiro",
    "pilot": "pilote piloto",
    "farmer": "fermier agriculteur granjero bauer contadino agricultor",
    "firefighter": "pompier bombero feuerwehrmann pompiere bombeiro",
    "dentist": "dentiste dentista zahnarzt",
    "baker": "boulanger panadero backer fornaio padeiro",
}
_META = re.compile(
    r"\b(?:rhym\w*|sounds?\s+like|homophone\w*|spell\w*|letters?|alphabet\w*|syllables?|anagram\w*|backwards?"
    r"|revers\w*|initials?|acrostic|candidates?|options?|translat\w*|in\s+(?:french|spanish|german|italian|"
    r"portuguese)|(?:starts?|begins?|ends?)\s+with|(?:first|second|third|fourth|last)\s+(?:one|word|item|entry))\b"
)


def _starts_a_word(view: str, word: str) -> bool:
    for spelling in (word, word[::-1]):
        pattern = r"[\W\d_]*".join(re.escape(letter) for letter in spelling)
        if re.search(rf"(?<![^\W\d_]){pattern}", view):
            return True
    return False


def _anagram(view: str, word: str) -> bool:
    letters = sorted(word)
    tokens = re.findall(r"[^\W\d_]+", view)
    singles = "".join(re.findall(r"(?<![^\W\d_])[^\W\d_](?![^\W\d_])", view))  # "a c t" -> "act"
    return any(sorted(token) == letters for token in tokens) or any(
        sorted(singles[i : i + len(word)]) == letters for i in range(len(singles) - len(word) + 1)
    )


def _decoded(text: str, original: str) -> list[str]:
    """What the encodings of the module docstring turn ``text`` (folded) into, each piece lowercase; ``original``
    keeps the capitals an acrostic is written with."""
    out = []
    for token in re.findall(r"[A-Za-z0-9+/=_-]{4,}", original):
        try:
            out.append(base64.b64decode(token + "=" * (-len(token) % 4), altchars=b"-_").decode("utf-8", "ignore"))
        except (binascii.Error, ValueError):
            pass
    hex_tokens = re.findall(r"[0-9a-f]+", re.sub(r"0x|\\x", " ", text))
    out.append(bytes.fromhex("".join(t for t in hex_tokens if len(t) % 2 == 0)).decode("latin-1"))
    for run in re.findall(r"\d+(?:[\s,.;:/-]+\d+)+", text):  # numbers with nothing but separators between
        numbers = [int(n) for n in re.findall(r"\d+", run)]
        out.append("".join(chr(n) for n in numbers if 32 <= n < 127))
        out.append("".join(chr(96 + n) for n in numbers if 1 <= n <= 26))
    for run in re.findall(r"(?:[.-]+[ /|]+)+[.-]+", text):
        out.append("".join(MORSE.get(code, " ") for code in re.split(r"[ /|]+", run)))
    words = re.findall(r"[a-z]+", text)
    out.append("".join(NATO.get(w, " ") for w in words))
    out.append("".join(LETTER_NAMES.get(w, " ") for w in words))
    out.append("".join(re.findall(r"\b([A-Z])[a-z]", original)).lower())  # "Cute Animal Thing"
    return [piece.lower() for piece in out]


def names_word(text: str, word: str) -> bool:
    """Whether ``text`` names ``word`` in any of the disguises of the module docstring."""
    word = word.casefold()
    folded = fold_text(text)
    views = [folded, folded.translate(LEET), folded.replace("1", "i").translate(LEET)]
    if any(_starts_a_word(view, word) or _anagram(view, word) for view in views):
        return True
    if _starts_a_word(codecs.encode(folded, "rot13"), word):
        return True
    if any(word in piece for piece in _decoded(folded, text)):
        return True
    words = set(re.findall(r"[a-z]+", folded))
    return any(t in words or t + "s" in words for t in TRANSLATIONS.get(word, "").split())


def meta_clue(text: str, candidates: list[str], secret: str) -> str | None:
    """Why a clue talks about the word or the list instead of the thing (see the module docstring), or None."""
    folded = fold_text(text)
    found = _META.search(folded)
    if found:
        return f"the clue talks about the word or the list ({found.group(0)!r}), not the thing"
    words = set(re.findall(r"[a-z]+", folded))
    named = [c for c in candidates if c != secret and (c in words or c + "s" in words)]
    if named:
        return f"the clue names another candidate ({named[0]!r}): describe the secret word itself"
    return None
