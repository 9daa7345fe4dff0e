"""TextArena games as envgym envs: one-player games as :class:`~envgym.core.Env`, the others as
:class:`~envgym.multiagent.MultiAgentEnv` (self-play: one policy plays every seat, ``player_0``, ``player_1``...).

Task ``i`` is the game started from seed ``i`` (the same index gives the same game: GRPO groups). The messages are
the game's own; the agent answers in the game's own action format (most games read ``[move]`` in brackets).

Rewards: TextArena decides rewards at the end of a game (``env.close()``): 1 / -1 / 0 for a win, a loss or a draw in
most games, the game's score in some. Each turn that does not end the game earns 0; the turn that ends it pays every
player its TextArena reward as the component ``outcome`` (a multi-seat env reports each seat's in
``info["rewards"]``). Where the catalog fixes a game's reward (:data:`~envgym.envs.textarena.catalog.REWARD_FIXES`),
the fixed value is paid and ``info["textarena_rewards"]`` keeps TextArena's. The game ending, by its rules or its own
turn limit, is ``terminated``; the registry's ``max_turns`` is the outer limit (``truncated``).

A move TextArena refuses is ``action_valid=False`` with its reason in ``action_error``; TextArena's own rule decides
what follows (most games allow one retry, then the player loses). Two rules of the adapter come first: a reply is
cut to 4,000 characters, and a reply holding several different ``[...]`` moves is refused
(:func:`refuse_several_moves`). A game of several seats that ends on a refused move is a forfeit
(``info["forfeit"]``): the seat that made it gets its TextArena reward (a loss), every other seat at most 0, what a
draw pays. One policy plays every seat, so a win by forfeit must pay no more than a draw, or a seat that throws the
game (replies "I resign.") would be a cheaper way to pay its partner +1 than winning by the rules.
"""

from __future__ import annotations

import re
from typing import Any

from envgym.core import Action, Env, Message, StepResult, Task, action_text, reward_total
from envgym.envs.textarena.catalog import FORFEITS, GAMES, REWARD_FIXES
from envgym.envs.textarena.driver import GameDriver, Move
from envgym.multiagent import MultiAgentEnv, SeatTurn
from envgym.tasks import ProceduralTaskSource

BRACKETED = re.compile(r"\[[^\[\]]*\]")
# TextArena's parsers read the whole reply, some in quadratic time (ConnectFour's takes 27 s on 100 KB, 1 s on 8 KB): a
# reply is cut to this many characters before the game reads it (info["action_truncated"]); TextArena's own wrapper
# for its conversation games clips replies at 1,000.
MAX_ACTION_CHARS = 4_000


def _user(text: str) -> Message:
    return {"role": "user", "content": text}


def _seed_task(game: str) -> ProceduralTaskSource:
    def make(rng: Any, index: int) -> Task:
        return Task(id=f"textarena-{game}-{index}", messages=[], metadata={"seed": index, "game": game})

    return ProceduralTaskSource(make)


def _driver(game: str, num_players: int | None) -> GameDriver:
    import textarena

    if game not in GAMES:
        raise ValueError(f"unknown or excluded TextArena game {game!r}; see envgym.envs.textarena.catalog")
    players = GAMES[game]["players"] if num_players is None else num_players
    if not isinstance(players, int) or isinstance(players, bool) or players < 1:
        raise ValueError(f"num_players must be a positive int, got {players!r}")
    return GameDriver(game, players, textarena.make)


def _ending(move: Move, player: int, paid: dict[int, float]) -> str:
    reason = move.game_info.get(player, {}).get("reason") if isinstance(move.game_info.get(player), dict) else None
    outcome = f"Game over. Your reward: {paid.get(player, 0.0):g}."
    return f"{outcome} {reason}" if reason else outcome


def _paid(game: str, move: Move) -> dict[int, float]:
    """Each player's reward: TextArena's, or the catalog's fix of it."""
    fix = REWARD_FIXES.get(game)
    if fix is None:
        return {player: float(reward) for player, reward in move.rewards.items()}
    return {player: fix["pay"](reward, move.game_info.get(player) or {}) for player, reward in move.rewards.items()}


def refuse_several_moves(text: str) -> tuple[str, str | None]:
    """The text the game reads, and why the reply was refused (None: it was not).

    TextArena's games take the first (or any) ``[...]`` in a reply as the move, so a reply that quotes the prompt or
    lists candidates would play whatever the game finds first. A reply holding two or more different bracketed
    tokens is refused: the game reads it with its brackets removed, which plays no move (a game that reads free text
    still hears the words), and TextArena's own rule for an invalid move follows.
    """
    tokens = dict.fromkeys(match.group(0) for match in BRACKETED.finditer(text))
    if len(tokens) < 2:
        return text, None
    shown = ", ".join(list(tokens)[:3]) + (", ..." if len(tokens) > 3 else "")
    reason = f"the reply holds {len(tokens)} different bracketed moves ({shown}); give exactly one move in [ ]"
    return text.replace("[", "").replace("]", ""), reason


class TextArenaEnv(Env):
    """A one-player TextArena game."""

    description = "A one-player TextArena game, with the game's own messages and reward."
    max_action_chars = MAX_ACTION_CHARS

    def __init__(self, game: str, num_players: int | None = None):
        self.game = game
        self.driver = _driver(game, num_players)
        if self.driver.num_players != 1:
            raise ValueError(f"TextArenaEnv plays one-player games; {game} has {self.driver.num_players} players")
        self.tasks = _seed_task(game)

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        _, text = self.driver.reset(task.metadata["seed"])
        return [_user(text)], {}

    def _step(self, action: Action) -> StepResult:
        reply, refusal = refuse_several_moves(action_text(action))
        move, text = self.driver.play(0, reply)
        error = refusal or move.invalid_reason
        info: dict[str, Any] = {"action_valid": error is None}
        if error is not None:
            info["action_error"] = error
        if move.next_player is not None:
            info["reward_components"] = {"outcome": 0.0}
            return [_user(text)], 0.0, False, False, info
        paid = _paid(self.game, move)
        components = {"outcome": paid[0]}
        info.update(reward_components=components, textarena_rewards=move.rewards, game_info=move.game_info)
        final = "\n".join(part for part in (move.final_messages.get(0, ""), _ending(move, 0, paid)) if part)
        return [_user(final)], reward_total(components), True, False, info


class TextArenaMultiEnv(MultiAgentEnv):
    """A TextArena game of two or more players; each player is a seat (``player_0``, ``player_1``...)."""

    description = "A TextArena game of several players as seats (self-play), with the game's own messages and rewards."
    max_action_chars = MAX_ACTION_CHARS

    def __init__(self, game: str, num_players: int | None = None):
        self.game = game
        self.driver = _driver(game, num_players)
        if self.driver.num_players < 2:
            raise ValueError(f"TextArenaMultiEnv plays games of 2 or more players; {game} has 1")
        self.agents = tuple(f"player_{index}" for index in range(self.driver.num_players))
        self.tasks = _seed_task(game)

    def _reset_seats(self, task: Task, options: dict[str, Any]) -> tuple[str, list[Message], dict[str, Any]]:
        player, text = self.driver.reset(task.metadata["seed"])
        return self.agents[player], [_user(text or "[GAME] Your turn.")], {}

    def _play(self, agent: str, action: Action) -> SeatTurn:
        player = self.agents.index(agent)
        reply, refusal = refuse_several_moves(action_text(action))
        move, text = self.driver.play(player, reply)
        error = refusal or move.invalid_reason
        info: dict[str, Any] = {"action_valid": error is None}
        if error is not None:
            info["action_error"] = error
        if move.next_player is not None:
            following = self.agents[move.next_player]
            return SeatTurn({following: [_user(text or "[GAME] Your turn.")]}, {}, following, info)
        paid = _paid(self.game, move)
        forfeited = self._forfeited(move, player, error)
        if forfeited:
            paid = {index: value if index in forfeited else min(value, 0.0) for index, value in paid.items()}
            info["forfeit"] = sorted(self.agents[index] for index in forfeited)
            if player in forfeited and error is None:
                info.update(action_valid=False, action_error="the game refused the move (the player is out)")
        info.update(textarena_rewards=move.rewards, game_info=move.game_info)
        messages = {}
        for index, seat in enumerate(self.agents):
            final = "\n".join(part for part in (move.final_messages.get(index, ""), _ending(move, index, paid)) if part)
            messages[seat] = [_user(final)]
        rewards = {seat: {"outcome": paid[index]} for index, seat in enumerate(self.agents)}
        return SeatTurn(messages, rewards, None, info)

    def _forfeited(self, move: Move, player: int, error: str | None) -> set[int]:
        """The players whose refused moves ended the game: the mover's refused move, TextArena's invalid-move mark,
        or a game's own rule (:data:`~envgym.envs.textarena.catalog.FORFEITS`)."""
        forfeited = {pid for pid, info in move.game_info.items() if isinstance(info, dict) and info.get("invalid_move")}
        if error is not None:
            forfeited.add(player)
        rule = FORFEITS.get(self.game)
        if rule is not None:
            forfeited |= rule(self.driver.game.state.game_state)
        return forfeited


def make_textarena(game: str, num_players: int | None = None) -> Env:
    """The entry point of ``textarena/<game>``: a one-player game as an Env, a game of several as a MultiAgentEnv."""
    players = GAMES.get(game, {}).get("players") if num_players is None else num_players
    if players == 1:
        return TextArenaEnv(game, num_players)
    return TextArenaMultiEnv(game, num_players)
