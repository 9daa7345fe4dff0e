"""Which TextArena games envgym adapts, which it leaves out and why, and the rewards it fixes (textarena 0.7.4).

TextArena 0.7.4 registers 712 ids: 95 games as ``<Game>-v0``, the rest their difficulty variants and their
``-train``/``-raw`` wrapper versions. envgym adapts the ``-v0`` game of each that runs offline and passes
``envgym audit`` (``textarena/<Game>-v0``); every other ``-v0`` game is in :data:`EXCLUDED` with the reason, and
docs/textarena.md shows the same table. ``tests/envs/textarena/test_catalog.py`` checks that the two tables cover the
installed TextArena's ``-v0`` games exactly, and that each reason still holds.
"""

from __future__ import annotations

from typing import Any

NEEDS_OPENROUTER = "needs an LLM through OpenRouter (OPENROUTER_API_KEY and the network) to play or judge"
NEEDS_NLTK_WORDS = "downloads NLTK's 'words' corpus when imported, which no offline package ships"
NEEDS_PYTHON_312 = "its code uses f-string syntax of Python 3.12 (a SyntaxError on the 3.10/3.11 envgym supports)"

# Game -> how envgym plays it: players (the game's own count; the smallest where it allows a range).
GAMES: dict[str, dict[str, Any]] = {
    "2048-v0": {"players": 1},
    "Bandit-v0": {"players": 1},
    "Blackjack-v0": {"players": 1},
    "Countdown-v0": {"players": 1},
    "Crosswords-v0": {"players": 1},
    "Cryptarithm-v0": {"players": 1},
    "FifteenPuzzle-v0": {"players": 1},
    "FrozenLake-v0": {"players": 1},
    "GuessTheNumber-v0": {"players": 1},
    "LightsOut-v0": {"players": 1},
    "LogicPuzzle-v0": {"players": 1},
    "Mastermind-v0": {"players": 1},
    "Minesweeper-v0": {"players": 1},
    "PegJump-v0": {"players": 1},
    "RushHour-v0": {"players": 1},
    "Secretary-v0": {"players": 1},
    "Set-v0": {"players": 1},
    "Slitherlink-v0": {"players": 1},
    "Sokoban-v0": {"players": 1},
    "Sudoku-v0": {"players": 1},
    "ThreeCardMonte-v0": {"players": 1},
    "TowerOfHanoi-v0": {"players": 1},
    "Alquerque-v0": {"players": 2},
    "Battleship-v0": {"players": 2},
    "Breakthrough-v0": {"players": 2},
    "Briscola-v0": {"players": 2},
    "Chopsticks-v0": {"players": 2},
    "ColonelBlotto-v0": {"players": 2},
    "ConnectFour-v0": {"players": 2},
    "Crusade-v0": {"players": 2},
    "GameOfPureStrategy-v0": {"players": 2},
    "GermanWhist-v0": {"players": 2},
    "Golf-v0": {"players": 2},
    "HighSociety-v0": {"players": 2},
    "IndianPoker-v0": {"players": 2},
    "IteratedMatchingPennies-v0": {"players": 2},
    "IteratedPrisonersDilemma-v0": {"players": 2},
    "IteratedRockPaperScissors-v0": {"players": 2},
    "IteratedTwoThirdsAverage-v0": {"players": 2},
    "KuhnPoker-v0": {"players": 2},
    "LinesOfAction-v0": {"players": 2},
    "MemoryGame-v0": {"players": 2},
    "Nim-v0": {"players": 2},
    "Othello-v0": {"players": 2},
    "PigDice-v0": {"players": 2},
    "QuantumTicTacToe-v0": {"players": 2},
    "SimpleBlindAuction-v0": {"players": 2},
    "SimpleNegotiation-v0": {"players": 2},
    "SimpleTak-v0": {"players": 2},
    "SpiteAndMalice-v0": {"players": 2},
    "Stratego-v0": {"players": 2},
    "Tak-v0": {"players": 2},
    "TicTacToe-v0": {"players": 2},
    "TruthAndDeception-v0": {"players": 2},
    "TwoDollar-v0": {"players": 2},
    "UltimateTicTacToe-v0": {"players": 2},
    "IteratedUltimatumGame-v0": {"players": 2},
    "WildTicTacToe-v0": {"players": 2},
    "NewRecruit-v0": {"players": 2},
    "SantoriniBaseFixed-v0": {"players": 2},
    "Snake-v0": {"players": 2},
    "Surround-v0": {"players": 2},
    "LiarsDice-v0": {"players": 2},
    "Poker-v0": {"players": 2},
    "PublicGoodsGame-v0": {"players": 3},
    "MarketEntryGame-v0": {"players": 3},
    "ThreePlayerTicTacToe-v0": {"players": 3},
    "ThreePlayerGOPS-v0": {"players": 3},
    "ThreePlayerIPD-v0": {"players": 3},
    "Taboo-v0": {"players": 4},
    "SettlersOfCatan-v0": {"players": 4},
    "SecretMafia-v0": {"players": 6},
}

# Game -> why envgym leaves it out. The single table of exclusions (docs/textarena.md shows it).
EXCLUDED: dict[str, str] = {
    "GuessWho-v0": NEEDS_OPENROUTER,
    "TwentyQuestions-v0": NEEDS_OPENROUTER,
    "Debate-v0": NEEDS_OPENROUTER,
    "ScenarioPlanning-v0": NEEDS_OPENROUTER,
    "Hangman-v0": NEEDS_NLTK_WORDS,
    "WordLadder-v0": NEEDS_NLTK_WORDS,
    "Wordle-v0": NEEDS_NLTK_WORDS,
    "WordSearch-v0": NEEDS_NLTK_WORDS,
    "DontSayIt-v0": NEEDS_NLTK_WORDS,
    "LetterAuction-v0": NEEDS_NLTK_WORDS,
    "SpellingBee-v0": NEEDS_NLTK_WORDS,
    "WordChains-v0": NEEDS_NLTK_WORDS,
    "Codenames-v0": NEEDS_NLTK_WORDS,
    "Klondike-v0": NEEDS_PYTHON_312,
    "Checkers-v0": NEEDS_PYTHON_312,
    "Chess-v0": NEEDS_PYTHON_312,
    "IteratedStagHunt-v0": NEEDS_PYTHON_312,
    "ReverseTicTacToe-v0": NEEDS_PYTHON_312,
    "UltimateTexasHoldem-v0": NEEDS_PYTHON_312,
    "UsedCarNegotiation-v0": "its instruction files (instructions/blue_book.txt) are missing from the textarena wheel",
    "ScorableGames-v0": "its game descriptions (games_descriptions/base) are missing from the textarena wheel",
    "BabyAiText-v0": "it has no -raw registration and needs BabyAI/minigrid, which textarena does not install",
    "CharacterConclave-v0": "every move raises TypeError (it calls State.add_observation without observation_type)",
}


def _bandit_pay(reward: Any, game_info: dict[str, Any]) -> float:
    """Bandit-v0 compares the chosen button with the dict of all buttons' means, so no choice is ever "correct", and
    pays the choice's regret: 0.0 for the best button, up to about 0.4 for the worst. Paid here: 1 for the best
    button (regret 0), 0 for any other, and TextArena's -1 for a forfeit (two invalid moves) unchanged."""
    if game_info.get("invalid_move"):
        return float(reward)
    return 1.0 if reward == 0.0 else 0.0


def _progress_pay(reward: Any, game_info: dict[str, Any]) -> float:
    """Countdown-v0, Cryptarithm-v0, Slitherlink-v0 and ThreeCardMonte-v0 call ``set_invalid_move(progress, message)``
    with the arguments swapped, so a game lost to invalid moves "pays" the message (a string) and files the progress
    as the reason (``"Invalid Move: 0.25"``). Paid here: that progress, as the games mean (ThreeCardMonte's is 0, what
    a wrong pick pays); every other reward unchanged."""
    if not isinstance(reward, str):
        return float(reward)
    return float(str(game_info.get("reason", "")).removeprefix("Invalid Move: "))


# Game -> a reward TextArena computes wrongly, and what envgym pays instead (``info["textarena_rewards"]`` keeps
# TextArena's own).
REWARD_FIXES: dict[str, dict[str, Any]] = {
    "Bandit-v0": {"pay": _bandit_pay, "why": _bandit_pay.__doc__},
    "Countdown-v0": {"pay": _progress_pay, "why": _progress_pay.__doc__},
    "Cryptarithm-v0": {"pay": _progress_pay, "why": _progress_pay.__doc__},
    "Slitherlink-v0": {"pay": _progress_pay, "why": _progress_pay.__doc__},
    "ThreeCardMonte-v0": {"pay": _progress_pay, "why": _progress_pay.__doc__},
}


def _died_of_invalid_moves(game_state: dict[str, Any], key: str) -> set[int]:
    return {
        pid for pid, body in game_state.get(key, {}).items() if getattr(body, "death_reason", None) == "invalid move"
    }


# Game -> the players who forfeited, for games whose invalid move is not TextArena's invalid move: Snake-v0 and
# Surround-v0 kill the player at once ("died due to invalid move") without ``set_invalid_move``, so neither the retry
# nor ``game_info["invalid_move"]`` marks it.
FORFEITS: dict[str, Any] = {
    "Snake-v0": lambda game_state: _died_of_invalid_moves(game_state, "snakes"),
    "Surround-v0": lambda game_state: _died_of_invalid_moves(game_state, "players"),
}
