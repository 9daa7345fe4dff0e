"""String environments: compositions of string functions, with held-out compositions."""

from envgym.registration import register


def register_envs() -> None:
    """Entry point of the ``envgym.envs`` group for the string envs.

    The held-out and deep splits are also registered under their own ids, so that a suite reports the three
    splits side by side (results are keyed by env id)."""
    entry = "envgym.envs.strings.compose:Compose"
    register(
        "strings/Compose-v0",
        entry,
        max_turns=1,
        description="Apply a composition of string functions (split=train|heldout|deep); answer in <answer>.",
    )
    register(
        "strings/ComposeHeldout-v0",
        entry,
        max_turns=1,
        split="heldout",
        description="strings/Compose-v0's held-out pairs: compositions never in the train split.",
    )
    register(
        "strings/ComposeDeep-v0",
        entry,
        max_turns=1,
        split="deep",
        description="strings/Compose-v0's deep split: chains of 3 or more functions (depths=...).",
    )
