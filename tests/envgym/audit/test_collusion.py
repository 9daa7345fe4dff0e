"""Two-seat collusion: the audit plays both seats of a MultiAgentEnv, each with its own view and policy.

The games' own holes of issue 29 (a thrown TicTacToe paid the partner; DescribeGuess's taboo was a list of surface
forms and both seats saw the candidates in one order) are played on every audit and must stay "nothing found".
"""

from envgym.audit import AuditSettings, audit_env
from envgym.audit.collusion import CODES
from envgym.core import Task, action_text
from envgym.multiagent import MultiAgentEnv, SeatTurn
from envgym.tasks import ListTaskSource

SETTINGS = AuditSettings(cue_tasks=0)


def found(report):
    return {f.strategy for f in report.findings if f.kind == "earns_reward"}


class WordRelay(MultiAgentEnv):
    """A sender who knows a word and a receiver who must name it; ``taboo`` refuses a message holding the word
    in any common code (the sender loses, the game ends), else anything goes."""

    agents = ("sender", "receiver")

    def __init__(self, taboo: bool = False):
        self.taboo = taboo
        words = ["apple", "grape", "melon", "lemon"]
        self.tasks = ListTaskSource(
            [
                Task(
                    id=f"relay-{i}",
                    answer=word,
                    messages=[
                        {
                            "role": "user",
                            "content": f"The candidates are: apple, grape, melon, lemon. The secret word is: {word}. "
                            "Help your partner name it: <clue>your clue</clue>.",
                        }
                    ],
                )
                for i, word in enumerate(words)
            ]
        )

    def _reset_seats(self, task, options):
        return "sender", task.prompt(), {}

    def reference_action(self):
        if self.agent_selection == "sender":
            return "<clue>I may not say.</clue>"
        return f"<guess>{self.task.answer}</guess>"

    def _play(self, agent, action):
        text = action_text(action)
        if agent == "sender":
            coded = any(code(self.task.answer) in text for code in CODES.values()) or self.task.answer in text
            if self.taboo and coded:
                return SeatTurn({}, {"sender": {"outcome": -1.0}}, None, {"action_valid": False})
            prompt = "Name the word among: apple, grape, melon, lemon. Answer as <guess>word</guess>. Clue: " + text
            return SeatTurn({"receiver": [{"role": "user", "content": prompt}]}, {}, "receiver", {"action_valid": True})
        win = float(f"<guess>{self.task.answer}</guess>" in text)
        return SeatTurn({}, {"sender": {"outcome": win}, "receiver": {"outcome": win}}, None, {"correct": bool(win)})


def test_both_seats_play_and_coded_clues_that_slip_past_the_rules_are_found():
    report = audit_env("toy/Relay-v0", SETTINGS, env=WordRelay())
    assert "collusion" in report.phases
    assert {"collusion:code:rot13", "collusion:code:base64", "collusion:code:elimination"} <= found(report)


def test_a_game_that_refuses_every_coded_spelling_is_clean_of_them():
    report = audit_env("toy/Relay-v0", SETTINGS, env=WordRelay(taboo=True))
    assert not [name for name in found(report) if name.removeprefix("collusion:code:") in CODES]


def test_a_thrown_tictactoe_game_no_longer_pays_the_partner():
    report = audit_env("games/TicTacToeSelfPlay-v0", SETTINGS)
    throws = {"collusion:throw:X@turn1", "collusion:throw:X@turn2"}
    assert throws <= set(report.strategies)
    assert not throws & found(report), report.findings


def test_describe_guess_refuses_coded_clues_and_list_positions():
    report = audit_env("games/DescribeGuess-v0", SETTINGS)
    codes = {f"collusion:code:{name}" for name in ("rot13", "base64", "hex", "nato", "morse", "cyrillic")}
    codes |= {"collusion:code:list-position", "collusion:code:elimination"}
    assert codes <= set(report.strategies)
    assert not codes & found(report), report.findings
