"""Reading one committed answer out of ``<tag>...</tag>``: several different answers are no answer.

The string, table and SQL envs score exact answers, so a reply that commits to two candidates in two tags must
not earn what either would alone: it is refused (a policy mistake, ``action_valid=False``). Repeating the same
answer is one answer. Tags are found with the games' linear pattern (:mod:`envgym.envs.games.move_parsing`), so
100 KB of unclosed tags costs linear time.
"""

from __future__ import annotations

from envgym.envs.games.move_parsing import _tag_pattern


def tag_bodies(text: str, tag: str) -> list[str]:
    """The stripped bodies of every complete ``<tag>...</tag>`` in ``text`` (innermost of nested tags)."""
    return [match.group(1).strip() for match in _tag_pattern(tag).finditer(text)]


def single_answer(text: str, tag: str = "answer") -> tuple[str | None, str | None]:
    """``(answer, None)`` when ``text`` commits to one answer in ``<tag>``; ``(None, why)`` otherwise."""
    bodies = set(tag_bodies(text, tag))
    if not bodies:
        return None, f"no <{tag}>...</{tag}> found"
    if len(bodies) > 1:
        return None, f"{len(bodies)} different <{tag}> answers; give exactly one"
    return bodies.pop(), None
