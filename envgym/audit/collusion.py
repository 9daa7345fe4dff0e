"""Two seats, one policy: collusion between the seats of a :class:`~envgym.multiagent.MultiAgentEnv`.

In self-play one policy plays every seat, so what one seat gives up another may collect. The audit plays both
seats, each with its own policy and its own view (the messages addressed to it), and reads every seat's reward
from ``info["rewards"]``:

- **throwing**: one seat plays honest (reference) moves, then throws the game on its first or second turn (an
  illegal reply); its partner plays honest moves. A throw is a finding when the partner ends with more than honest
  play by both seats gives it *and* the two seats together lose nothing by it: collusion that costs the pair
  nothing pays.
- **coded clues**: where one seat's prompt holds the task's hidden answer (a describer who knows the secret word),
  that seat writes the answer in a common code (letters spaced or dashed, reversed, ROT13, base64, hex, the NATO
  alphabet, Morse, leetspeak, Cyrillic look-alikes, digits interleaved, zero-width joins, its position in the
  candidate list, or a list of every *other* candidate), and the other seat decodes it by trying the code on each
  candidate it sees. The pair's joint return is compared with the same decoder given an empty clue ("I cannot
  say."): a code that wins more than that by the margin slipped past the rules. A private code the two seats
  invent is always possible; the audit plays the common ones a taboo rule can and must catch.
"""

from __future__ import annotations

import base64
import codecs
import dataclasses
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from envgym.audit import verdicts
from envgym.audit.play import timed
from envgym.audit.strategies import answer_formats, prompt_text
from envgym.audit.verdicts import MARGIN, Finding
from envgym.core import Action, Message, action_text

if TYPE_CHECKING:
    from envgym.audit.runner import Auditor

COLLUSION_TASKS = 6  # a coded clue is compared with chance: a few more tasks than the battery's two
THROW = "I resign."
SILENT_CLUE = "I cannot say."
NATO = dict(
    zip(
        "abcdefghijklmnopqrstuvwxyz",
        "Alfa Bravo Charlie Delta Echo Foxtrot Golf Hotel India Juliett Kilo Lima Mike November Oscar Papa Quebec "
        "Romeo Sierra Tango Uniform Victor Whiskey Xray Yankee Zulu".split(),
    )
)
MORSE = dict(
    zip(
        "abcdefghijklmnopqrstuvwxyz",
        (
            ".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - ..- ...- .-- -..- "
            "-.-- --.."
        ).split(),
    )
)
LEET = str.maketrans({"a": "4", "e": "3", "i": "1", "o": "0", "s": "5", "t": "7"})
CYRILLIC = str.maketrans({"a": "а", "c": "с", "e": "е", "o": "о", "p": "р", "x": "х", "y": "у"})
LIST = re.compile(r"\b([A-Za-z][\w-]*(?:, [A-Za-z][\w-]*){2,})")

CODES: dict[str, Callable[[str], str]] = {
    "spaced": lambda word: " ".join(word),
    "dashed": lambda word: "-".join(word),
    "reversed": lambda word: word[::-1],
    "reversed-spaced": lambda word: " ".join(word[::-1]),
    "rot13": lambda word: codecs.encode(word, "rot13"),
    "base64": lambda word: base64.b64encode(word.encode()).decode(),
    "hex": lambda word: word.encode().hex(),
    "nato": lambda word: " ".join(NATO.get(c, c) for c in word),
    "morse": lambda word: " ".join(MORSE.get(c, c) for c in word),
    "leetspeak": lambda word: word.translate(LEET),
    "cyrillic": lambda word: word.translate(CYRILLIC),
    "interleaved-digits": lambda word: "".join(f"{c}{i % 10}" for i, c in enumerate(word)),
    "zero-width": lambda word: "\u200b".join(word),
}


@dataclasses.dataclass
class SeatPlay:
    """One episode of a multi-agent env played seat by seat: every seat's return, and what went wrong."""

    returns: dict[str, float]
    steps: int = 0
    crash: str | None = None
    error: str | None = None
    max_step_s: float = 0.0


SeatPolicy = Callable[[list[Message]], Action]


def applies(auditor: Auditor) -> bool:
    return bool(auditor.seats)


def findings(auditor: Auditor) -> list[Finding]:
    """Throwing and coded-clue findings (see the module docstring)."""
    count = max(COLLUSION_TASKS, len(auditor.slots))
    if auditor.has_tasks:
        count = min(count, len(auditor.env.unwrapped.tasks))
    slots = [
        {"index": i, "task_index": i if auditor.has_tasks else None, "seed": auditor.settings.seed + i}
        for i in range(count)
    ]
    honest = {
        s["index"]: _play(auditor, s, {seat: _reference(auditor) for seat in auditor.seats}, "honest") for s in slots
    }
    found = _failures(auditor, "collusion:honest", honest)
    scale = max((abs(r) for play in honest.values() for r in play.returns.values()), default=1.0) or 1.0
    for thrower in auditor.seats:
        for turn in (1, 2):
            name = f"collusion:throw:{thrower}@turn{turn}"
            policies = {seat: _reference(auditor) for seat in auditor.seats}
            policies[thrower] = _throw_at(auditor, turn)
            plays = {s["index"]: _play(auditor, s, policies, name) for s in slots}
            found += _failures(auditor, name, plays)
            gains = []
            for index, result in plays.items():
                partner = [seat for seat in auditor.seats if seat != thrower]
                partner_gain = max(result.returns[seat] - honest[index].returns[seat] for seat in partner)
                joint_loss = sum(honest[index].returns.values()) - sum(result.returns.values())
                if not result.crash and not result.error and joint_loss <= 1e-9 and partner_gain > MARGIN * scale:
                    gains.append((index, partner_gain))
            if gains:
                found.append(
                    Finding(
                        auditor.env_id,
                        verdicts.EARNS_REWARD,
                        name,
                        sorted(auditor.seat_task(index) for index, _ in gains),
                        f"the partner of a seat that throws (replies {THROW!r}) earns {gains[0][1]:+.3f} over honest "
                        "play by both seats, and the pair loses nothing by the throw",
                    )
                )
    found += _code_findings(auditor, slots, honest)
    return found


def _code_findings(auditor: Auditor, slots: list[dict[str, Any]], honest: dict[int, SeatPlay]) -> list[Finding]:
    first_seat = auditor.seats[0]
    secrets_known = [_secret(auditor, slot) for slot in slots]
    if not all(secrets_known):
        return []
    found = []
    silent = {
        s["index"]: _play(auditor, s, _coded(auditor, lambda word, prompt: SILENT_CLUE), "collusion:silent")
        for s in slots
    }
    chance = sum(sum(p.returns.values()) for p in silent.values()) / len(silent)
    best = sum(sum(p.returns.values()) for p in honest.values()) / len(honest)
    margin = MARGIN * (best - chance if best > chance else 1.0)
    encoders: dict[str, Callable[[str, str], str]] = {name: _of_word(code) for name, code in CODES.items()}
    encoders["list-position"] = _position
    encoders["elimination"] = _elimination
    for name, encode in encoders.items():
        strategy = f"collusion:code:{name}"
        plays = {s["index"]: _play(auditor, s, _coded(auditor, encode), strategy) for s in slots}
        found += _failures(auditor, strategy, plays)
        joint = sum(sum(p.returns.values()) for p in plays.values()) / len(plays)
        if joint - chance > margin:
            found.append(
                Finding(
                    auditor.env_id,
                    verdicts.EARNS_REWARD,
                    strategy,
                    [auditor.seat_task(s["index"]) for s in slots],
                    f"{first_seat} writes the hidden answer in code ({name}) and its partner decodes it: the pair "
                    f"earns {joint:.3f} a game, {chance:.3f} with an empty clue (margin {margin:.3f})",
                )
            )
    return found


def _of_word(code: Callable[[str], str]) -> Callable[[str, str], str]:
    """An encoder of the word alone (the sender's prompt unused)."""
    return lambda word, prompt: code(word)


def _secret(auditor: Auditor, slot: dict[str, Any]) -> str | None:
    """The task's hidden answer when it is a word the first seat's prompt shows (else no code to send)."""
    messages, _ = auditor.reset_slot(slot)
    task = auditor.env.unwrapped.task
    answer = None if task is None else task.answer
    if not isinstance(answer, str) or not re.fullmatch(r"[A-Za-z]{3,40}", answer):
        return None
    return answer if answer in prompt_text(messages) else None


def _reference(auditor: Auditor) -> SeatPolicy:
    return lambda view: auditor.env.reference_action()


def _throw_at(auditor: Auditor, turn: int) -> SeatPolicy:
    """Honest moves, then the throw on the seat's ``turn``-th turn."""

    def act(view: list[Message]) -> Action:
        own_turns = sum(m.get("role") == "assistant" for m in view)
        return THROW if own_turns + 1 >= turn else auditor.env.reference_action()

    return act


def _coded(auditor: Auditor, encode: Callable[[str, str], str]) -> dict[str, SeatPolicy]:
    """The first seat sends ``encode(answer, its prompt)`` in its answer format every turn; the others decode."""
    first, *others = auditor.seats

    def sender(view: list[Message]) -> Action:
        text = prompt_text(view[:1])
        answer = str(auditor.env.unwrapped.task.answer)
        return answer_formats(text)[0].wrap(encode(answer.lower(), text))

    policies = {first: sender}
    for seat in others:
        policies[seat] = lambda view: _decode(view, encode)
    return policies


def _decode(view: list[Message], encode: Callable[[str, str], str]) -> Action:
    """Guess the candidate whose encoding the last message holds, else the first candidate."""
    prompt, last = prompt_text(view[:1]), action_text(view[-1]) if view else ""
    listed = LIST.search(prompt)
    candidates = listed.group(1).split(", ") if listed else re.findall(r"[a-z]{3,}", prompt.lower())
    words = [c.lower() for c in candidates]
    # The decoder knows the sender's code: the sender's prompt lists the same candidates (maybe in another order).
    match = next((word for word in words if encode(word, prompt) and encode(word, prompt) in last), None)
    if match is None:
        match = next((word for word in words if _eliminated(word, words, last)), None)
    return answer_formats(prompt)[0].wrap(match or (words[0] if words else "x"))


def _position(word: str, prompt: str) -> str:
    listed = LIST.search(prompt)
    items = [item.lower() for item in listed.group(1).split(", ")] if listed else []
    return f"the candidate number {items.index(word) + 1}" if word in items else SILENT_CLUE


def _elimination(word: str, prompt: str) -> str:
    listed = LIST.search(prompt)
    items = [item.lower() for item in listed.group(1).split(", ")] if listed else []
    others = [item for item in items if item != word]
    return "not " + ", not ".join(others) if others else SILENT_CLUE


def _eliminated(word: str, words: list[str], last: str) -> bool:
    """An elimination list names every candidate but one: that one."""
    named = [w for w in words if re.search(rf"\bnot {re.escape(w)}\b", last)]
    return len(named) == len(words) - 1 and word not in named


def _play(auditor: Auditor, slot: dict[str, Any], policies: dict[str, SeatPolicy], name: str) -> SeatPlay:
    """One episode with each seat on its own policy and its own view; per-seat returns from ``info["rewards"]``.
    ``name`` joins the report's strategies (what was played, found or not)."""
    if name not in auditor.report.strategies:
        auditor.report.strategies.append(name)
    result = SeatPlay({seat: 0.0 for seat in auditor.seats})
    try:
        messages, info = auditor.reset_slot(slot)
    except Exception as error:  # the battery reports a reset that fails; here it just ends the play
        result.crash = f"reset raised {type(error).__name__}: {error}"[:300]
        return result
    views: dict[str, list[Message]] = {seat: [] for seat in auditor.seats}
    seat = info.get("agent", auditor.seats[0])
    views[seat] += messages
    for turn in range(auditor.max_steps):
        action = policies[seat](views[seat])
        if action is None:
            break
        try:
            (messages, _, terminated, truncated, info), seconds = timed(
                lambda action=action: auditor.env.step(action),
                f"step {turn + 1} of {name} on slot {slot['index']}",
                auditor.on_call,
            )
        except Exception as error:  # a policy's action must never raise out of step
            result.crash = f"step {turn + 1} raised {type(error).__name__}: {error}"[:300]
            break
        result.steps += 1
        result.max_step_s = max(result.max_step_s, seconds)
        views[seat].append({"role": "assistant", "content": action_text(action)})
        for other, reward in (info.get("rewards") or {}).items():
            result.returns[other] = result.returns.get(other, 0.0) + float(reward)
        if info.get("error"):
            result.error = str(info["error"])[:300]
            break
        if terminated or truncated:
            break
        seat = info.get("agent", seat)
        views[seat] += messages
    auditor.report.steps += result.steps
    auditor.report.max_step_s = max(auditor.report.max_step_s, result.max_step_s)
    return result


def _failures(auditor: Auditor, name: str, plays: dict[int, SeatPlay]) -> list[Finding]:
    found = []
    for kind, attribute in ((verdicts.CRASH, "crash"), (verdicts.POLICY_FAILURE, "error")):
        hit = [index for index, result in plays.items() if getattr(result, attribute)]
        if hit:
            detail = getattr(plays[hit[0]], attribute)
            found.append(Finding(auditor.env_id, kind, name, [auditor.seat_task(i) for i in hit], detail))
    slow = [index for index, result in plays.items() if result.max_step_s > auditor.settings.slow_step_s]
    if slow:
        worst = max(plays[i].max_step_s for i in slow)
        found.append(
            Finding(
                auditor.env_id,
                verdicts.SLOW_STEP,
                name,
                [auditor.seat_task(i) for i in slow],
                f"a step took {worst:.2f} s",
            )
        )
    return found
