"""A seeded fictional encyclopedia and multi-hop questions about it (contamination-free search tasks).

The world has countries, cities, companies and people with made-up names. Every relation is functional
(a person has one birthplace, a city one country, ...), so following a chain of relations from a named
entity always ends at exactly one answer. One document per entity states its attributes and relations,
so a question with ``h`` hops needs ``h`` documents: the agent must search for the start entity, read which
entity the first relation leads to, search for that one, and so on. Nothing here exists anywhere else, so a
model cannot know the answers from pretraining.

``World(num_docs, seed)`` builds the same world for the same arguments; ``question(rng, hops)`` draws a
question whose chain visits ``hops`` distinct entities.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np

KINDS = ("country", "city", "company", "person")
SHARES = {"country": 0.01, "city": 0.09, "company": 0.15, "person": 0.75}

# relation name -> (source kind, target kind, noun phrase around the inner description)
RELATIONS: dict[str, tuple[str, str, str]] = {
    "birthplace": ("person", "city", "the city where {x} was born"),
    "employer": ("person", "company", "the company that {x} works for"),
    "headquarters": ("company", "city", "the city where {x} has its headquarters"),
    "founder": ("company", "person", "the person who founded {x}"),
    "country": ("city", "country", "the country that {x} lies in"),
    "capital": ("country", "city", "the capital of {x}"),
}
# attribute name -> (kind, question around the description)
ATTRIBUTES: dict[str, tuple[str, str]] = {
    "occupation": ("person", "What is the occupation of {x}?"),
    "birth_year": ("person", "In what year was {x} born?"),
    "founding_year": ("city", "In what year was {x} founded?"),
    "industry": ("company", "In which industry does {x} work?"),
    "established": ("company", "In what year was {x} established?"),
    "currency": ("country", "What is the currency of {x}?"),
}
OCCUPATIONS = (
    "glassblower",
    "cartographer",
    "beekeeper",
    "astronomer",
    "luthier",
    "ferryman",
    "archivist",
    "potter",
    "botanist",
    "clockmaker",
    "weaver",
    "stonemason",
    "falconer",
    "brewer",
    "engraver",
    "surveyor",
)
INDUSTRIES = (
    "shipbuilding",
    "textiles",
    "mining",
    "printing",
    "brewing",
    "railways",
    "pharmacy",
    "ceramics",
    "banking",
    "perfumery",
    "salt trade",
    "telegraphy",
)
CURRENCY_UNITS = ("crown", "mark", "florin", "ducat", "shell", "talent", "real", "dinar")
COMPANY_SUFFIXES = ("Works", "Guild", "Company", "Holdings", "Foundry", "Trading House", "Mills", "Consortium")
_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "th", "br", "kr", "st", "dr", "vel")
_VOWELS = ("a", "e", "i", "o", "u", "ae", "ou", "ia")
_CODAS = ("", "", "n", "r", "s", "l", "th", "m", "x", "nd")


@dataclasses.dataclass
class Entity:
    """One encyclopedia entry: a kind, a unique name, attributes and functional relations (by entity index)."""

    index: int
    kind: str
    name: str
    attributes: dict[str, Any]
    relations: dict[str, int]


class World:
    """The fictional encyclopedia: ``entities[i]`` is described by ``documents()[i]``."""

    def __init__(self, num_docs: int = 10_000, seed: int = 0):
        if num_docs < 40:
            raise ValueError(f"a world needs at least 40 documents (so every kind has a few entities), got {num_docs}")
        self.num_docs, self.seed = num_docs, seed
        rng = np.random.default_rng(seed)
        counts = {kind: max(2, int(num_docs * share)) for kind, share in SHARES.items()}
        counts["person"] = num_docs - sum(counts[k] for k in KINDS if k != "person")
        names = _unique_names(rng, num_docs, counts)
        self.entities: list[Entity] = []
        self.by_kind: dict[str, np.ndarray] = {}
        start = 0
        for kind in KINDS:
            self.by_kind[kind] = np.arange(start, start + counts[kind])
            for i in range(counts[kind]):
                self.entities.append(Entity(start + i, kind, names[start + i], {}, {}))
            start += counts[kind]
        self._fill(rng)
        self._documents: list[dict[str, str]] | None = None

    def _fill(self, rng: np.random.Generator) -> None:
        countries, cities, companies, people = (self.by_kind[k] for k in KINDS)
        city_country = rng.choice(countries, size=len(cities))
        city_country[: len(countries)] = countries  # every country has at least one city, so a capital
        for city, country, year in zip(
            cities.tolist(), city_country.tolist(), rng.integers(800, 1900, len(cities)).tolist()
        ):
            entity = self.entities[city]
            entity.relations["country"] = country
            entity.attributes["founding_year"] = year
        cities_of: dict[int, list[int]] = {}
        for city, country in zip(cities.tolist(), city_country.tolist()):
            cities_of.setdefault(country, []).append(city)
        units = rng.integers(len(CURRENCY_UNITS), size=len(countries)).tolist()
        for country, unit in zip(countries.tolist(), units):
            entity = self.entities[country]
            options = cities_of[country]
            entity.relations["capital"] = options[int(rng.integers(len(options)))]
            entity.attributes["currency"] = f"{entity.name} {CURRENCY_UNITS[unit]}"
        columns = zip(
            companies.tolist(),
            rng.choice(cities, len(companies)).tolist(),
            rng.choice(people, len(companies)).tolist(),
            rng.integers(len(INDUSTRIES), size=len(companies)).tolist(),
            rng.integers(1700, 1990, len(companies)).tolist(),
        )
        for company, hq, founder, industry, year in columns:
            entity = self.entities[company]
            entity.relations.update(headquarters=hq, founder=founder)
            entity.attributes.update(industry=INDUSTRIES[industry], established=year)
        columns = zip(
            people.tolist(),
            rng.choice(cities, len(people)).tolist(),
            rng.choice(companies, len(people)).tolist(),
            rng.integers(len(OCCUPATIONS), size=len(people)).tolist(),
            rng.integers(1850, 2000, len(people)).tolist(),
        )
        for person, city, employer, occupation, year in columns:
            entity = self.entities[person]
            entity.relations.update(birthplace=city, employer=employer)
            entity.attributes.update(occupation=OCCUPATIONS[occupation], birth_year=year)

    def document(self, index: int) -> dict[str, str]:
        """The encyclopedia entry of entity ``index``: ``{"id", "title", "text"}``."""
        e = self.entities[index]
        name = lambda relation: self.entities[e.relations[relation]].name  # noqa: E731
        a = e.attributes
        if e.kind == "country":
            text = (
                f"{e.name} is a country whose capital is {name('capital')}. "
                f"The currency of {e.name} is the {a['currency']}."
            )
        elif e.kind == "city":
            text = f"{e.name} is a city in {name('country')}. {e.name} was founded in {a['founding_year']}."
        elif e.kind == "company":
            text = (
                f"{e.name} is a {a['industry']} company established in {a['established']}. "
                f"{e.name} has its headquarters in {name('headquarters')}. {e.name} was founded by {name('founder')}."
            )
        else:
            text = (
                f"{e.name} (born {a['birth_year']}) is a {a['occupation']}. {e.name} was born in {name('birthplace')}. "
                f"{e.name} works for {name('employer')}."
            )
        return {"id": str(index), "title": e.name, "text": text}

    def documents(self) -> list[dict[str, str]]:
        """Every entry, in entity order (cached: the world never changes)."""
        if self._documents is None:
            self._documents = [self.document(i) for i in range(len(self.entities))]
        return self._documents

    def write_jsonl(self, path: str | Path) -> Path:
        """Write the corpus as JSONL (``{"id", "title", "text"}`` per line), the shape ``envgym serve search`` reads."""
        path = Path(path)
        with path.open("w", encoding="utf-8") as handle:
            for document in self.documents():
                handle.write(json.dumps(document, ensure_ascii=False) + "\n")
        return path

    def question(self, rng: np.random.Generator, hops: int) -> dict[str, Any]:
        """A question that needs ``hops`` documents (1-4): ``{"question", "answer", "hops", "path", "steps"}``.

        ``path`` lists the entity names whose documents hold the chain, in order (an oracle searches them).
        """
        if not 1 <= hops <= 4:
            raise ValueError(f"hops must be between 1 and 4, got {hops}")
        for _ in range(1000):
            found = self._try_chain(rng, hops)
            if found is not None:
                return found
        raise RuntimeError(f"could not draw a {hops}-hop question with distinct entities; the world is too small")

    def _try_chain(self, rng: np.random.Generator, hops: int) -> dict[str, Any] | None:
        current = int(rng.integers(len(self.entities)))
        visited, steps = [current], []
        for _ in range(hops - 1):
            options = [r for r, (source, _, _) in RELATIONS.items() if source == self.entities[current].kind]
            relation = str(rng.choice(options))
            current = self.entities[current].relations[relation]
            if current in visited:
                return None
            visited.append(current)
            steps.append(relation)
        last = self.entities[current]
        finals = [a for a, (kind, _) in ATTRIBUTES.items() if kind == last.kind]
        finals += [r for r, (source, _, _) in RELATIONS.items() if source == last.kind]
        final = str(rng.choice(finals))
        description = self.entities[visited[0]].name
        for relation in steps:
            description = RELATIONS[relation][2].format(x=description)
        if final in ATTRIBUTES:
            question, answer = ATTRIBUTES[final][1].format(x=description), str(last.attributes[final])
        else:
            target = last.relations[final]
            if target in visited:
                return None
            noun = RELATIONS[final][2].format(x=description)
            question, answer = f"What is the name of {noun}?", self.entities[target].name
        steps.append(final)
        return {
            "question": question[0].upper() + question[1:],
            "answer": answer,
            "hops": hops,
            "path": [self.entities[i].name for i in visited],
            "steps": steps,
        }


def _unique_names(rng: np.random.Generator, total: int, counts: dict[str, int]) -> list[str]:
    """Made-up names, unique across the world: single words for places, suffixed words for companies, two
    words for people (first names repeat across people, surnames never do)."""
    seen: set[str] = set()
    places = _unique_words(rng, counts["country"] + counts["city"], 2, 3, seen)
    companies = _unique_words(rng, counts["company"], 2, 3, seen)
    suffixes = rng.integers(len(COMPANY_SUFFIXES), size=len(companies))
    first_names = _unique_words(rng, max(50, counts["person"] // 40), 2, 2, seen)
    surnames = _unique_words(rng, counts["person"], 2, 4, seen)
    firsts = rng.integers(len(first_names), size=len(surnames))
    names = places + [f"{w} {COMPANY_SUFFIXES[s]}" for w, s in zip(companies, suffixes)]
    names += [f"{first_names[f]} {surname}" for f, surname in zip(firsts, surnames)]
    assert len(names) == total
    return names


def _unique_words(
    rng: np.random.Generator, n: int, min_syllables: int, max_syllables: int, seen: set[str]
) -> list[str]:
    """``n`` new words of syllables (onset + vowel + coda), none of them in ``seen`` (which they join)."""
    words: list[str] = []
    while len(words) < n:
        batch = 2 * (n - len(words)) + 16
        lengths = rng.integers(min_syllables, max_syllables + 1, size=batch)
        parts = [rng.integers(len(table), size=(batch, max_syllables)) for table in (_ONSETS, _VOWELS, _CODAS)]
        for row in range(batch):
            word = "".join(
                _ONSETS[parts[0][row, j]] + _VOWELS[parts[1][row, j]] + _CODAS[parts[2][row, j]]
                for j in range(lengths[row])
            ).capitalize()
            if word not in seen:
                seen.add(word)
                words.append(word)
                if len(words) == n:
                    break
    return words
