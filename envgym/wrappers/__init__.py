"""Single-purpose wrappers: turn limits, prompt prefixes, reward shaping with named components, chat-to-text."""

from envgym.wrappers.prompt import PromptPrefix
from envgym.wrappers.rewards import (
    FormatReward,
    LengthPenalty,
    PatternReward,
    RewardComponentWrapper,
    RewardNoise,
    RewardWeights,
)
from envgym.wrappers.text import ChatToText
from envgym.wrappers.time_limit import TimeLimit

__all__ = [
    "ChatToText",
    "FormatReward",
    "LengthPenalty",
    "PatternReward",
    "PromptPrefix",
    "RewardComponentWrapper",
    "RewardNoise",
    "RewardWeights",
    "TimeLimit",
]
