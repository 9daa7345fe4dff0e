"""The reward spec: one declarative section that says where a reward comes from.

A spec is a list of named components, each with a ``source``, a ``weight`` and an optional ``gate``; the reward of
a turn is ``Σ_c weight_c · gate_c · value_c`` where ``gate_c`` is 1 when the gate component's unweighted value on
that turn is > 0 (else 0), and ``value_c`` is the component's unweighted value. The same section is read from a
recipe (``reward:``), a suite, ``envgym.make(id, reward=...)`` or built in Python::

    reward:
      hold_out_labels: false
      components:
        - {name: correct, source: env, weight: 1.0, gate: format}
        - {name: format, source: format, tags: [answer], weight: 0.1}
        - {name: reasoning, source: pattern, pattern: "(?i)let's|first|therefore", weight: 0.2}
        - {name: noise, source: flip, rate: 0.4, applies_to: correct, seed: 0}

Sources come in four kinds (see ``docs/rewards.md`` for every field):

- per-turn values, computed inside ``Env.step`` by :func:`envgym.rewards.apply_reward`: ``env`` (a component the
  env's verifier reports), ``pattern``, ``format``, ``length``, ``tool_cost``, ``judge``;
- noise, which corrupts another per-turn component before gates and weights: ``flip``, ``gaussian``;
- group rewards, computed by the trainer over the G episodes of a task after they end, never in ``Env.step``:
  ``majority_vote`` (TTRL), ``self_consistency``, ``judge_group`` (relative judging of the G answers in one call,
  as RULER does), ``reward_model`` (a sequence-classification model's scalar) and ``self_certainty`` (the
  policy's own certainty, Intuitor); the last two need torch and live in ``envgym.agents``;
- process rewards, scored per step inside a response by the trainer and credited to the tokens of each step
  (PURE's min-form or a sum): ``process``.

Everything is validated when the spec is built, before any rollout, and an error names the key path
(``reward.components[2].weight must be a number, got 'x'``).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

STEP_SOURCES = ("env", "pattern", "format", "length", "tool_cost", "judge")
NOISE_SOURCES = ("flip", "gaussian")
GROUP_SOURCES = ("majority_vote", "self_consistency", "judge_group", "reward_model", "self_certainty")
PROCESS_SOURCES = ("process",)
SOURCES = STEP_SOURCES + NOISE_SOURCES + GROUP_SOURCES + PROCESS_SOURCES
EQUIVALENCES = ("env", "math", "exact")
SEGMENTS = ("lines", "step", "blank", "regex")
STEP_SCORERS = ("rule", "judge")
CREDITS = ("min", "sum")
SCOPES = ("answer", "turn")
# The scope a per-turn source has unless the spec says otherwise: what grades the answer is scored once, on the
# answering turn; what means something on every turn (a length, a tool call) every turn. ``env``: the env's
# declaration (``Env.reward_ranges``), else ``answer``.
DEFAULT_SCOPES = {"env": None, "pattern": "answer", "format": "answer", "judge": "answer", "length": "turn"}
DEFAULT_SCOPES["tool_cost"] = "turn"
_REQUIRED = object()


class RewardSpecError(ValueError):
    """A reward spec that cannot be built; the message names the key path of what is wrong."""


_JUDGE_OPTIONS: dict[str, tuple[str, Any]] = {
    "base_url": ("str", _REQUIRED),
    "model": ("str", _REQUIRED),
    "rubric": ("str", None),
    "scale": ("positive_int", 10),
    "timeout": ("positive_number", 60.0),
    "retries": ("count", 2),
    "cache_size": ("positive_int", 4096),
    "reference": ("bool", True),
    "api_key_env": ("str", None),
    "max_tokens": ("positive_int", 512),
    "examples": ("examples", ()),
    "json_mode": ("bool", False),
}
# A vote counts only in a group that has not collapsed: at least min_distinct answers, and an answer entropy (nats)
# of at least min_entropy (see envgym.rewards.group).
_VOTE_OPTIONS: dict[str, tuple[str, Any]] = {
    "equivalence": ("equivalence", "env"),
    "min_distinct": ("positive_int", 2),
    "min_entropy": ("nonnegative_number", 0.0),
}
# Every per-turn source: when it is scored and what it can be worth (see DEFAULT_SCOPES and default_range).
_SCORING: dict[str, tuple[str, Any]] = {"scope": ("scope", None), "range": ("range", None)}

# Per source: option name -> (kind, default). Kinds are checked by _check_option; _REQUIRED has no default.
OPTIONS: dict[str, dict[str, tuple[str, Any]]] = {
    "env": {"component": ("str", None), **_SCORING},
    "pattern": {
        "pattern": ("regex", None),
        "patterns": ("regex_list", None),
        "cap": ("positive_int", None),
        **_SCORING,
    },
    "format": {"tags": ("str_list", ()), "pattern": ("regex", None), "penalty": ("number", 0.0), **_SCORING},
    "length": {"max_length": ("positive_int", _REQUIRED), "buffer": ("positive_int", _REQUIRED), **_SCORING},
    "tool_cost": dict(_SCORING),
    "judge": {**_JUDGE_OPTIONS, "part": ("str", None), **_SCORING},
    "flip": {"rate": ("probability", _REQUIRED), "applies_to": ("str", _REQUIRED), "seed": ("int", 0)},
    "gaussian": {
        "rate": ("probability", _REQUIRED),
        "applies_to": ("str", _REQUIRED),
        "seed": ("int", 0),
        "sigma": ("positive_number", 0.5),
    },
    "majority_vote": {**_VOTE_OPTIONS},
    "self_consistency": {**_VOTE_OPTIONS},
    "judge_group": dict(_JUDGE_OPTIONS),
    "reward_model": {
        "model": ("str", None),
        "url": ("str", None),
        "batch_size": ("positive_int", 8),
        "max_length": ("positive_int", 1024),
        "device": ("str", None),
        "timeout": ("positive_number", 60.0),
        "retries": ("count", 2),
    },
    "self_certainty": {"max_repetition": ("probability", 0.5)},
    "process": {
        "segment": ("segment", "lines"),
        "split": ("regex", None),
        "scorer": ("scorer", "rule"),
        "rule": ("regex", None),
        "credit": ("credit", "min"),
        **{
            k: (kind, None if k in ("base_url", "model") else default)
            for k, (kind, default) in _JUDGE_OPTIONS.items()
            if k != "reference"
        },
        "reference": ("bool", False),
    },
}
_COMMON = ("name", "source", "weight", "gate")


@dataclasses.dataclass(frozen=True)
class RewardComponent:
    """One named part of the reward.

    ``name``: how it is logged (``reward/<name>``) and what gates and noise refer to; unique in a spec.
    ``source``: where its value comes from (one of :data:`SOURCES`).
    ``weight``: multiplies the value in the reward; GDPO reads the unweighted value and applies it itself.
    ``gate``: the name of another per-turn component; this one counts only on turns where that one is > 0.
    ``options``: the source's own settings (see :data:`OPTIONS`), defaults filled in.
    """

    name: str
    source: str
    weight: float = 1.0
    gate: str | None = None
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def kind(self) -> str:
        """``step``, ``noise``, ``group`` or ``process``: when the value is computed."""
        if self.source in NOISE_SOURCES:
            return "noise"
        return "group" if self.source in GROUP_SOURCES else "process" if self.source in PROCESS_SOURCES else "step"

    def option(self, key: str) -> Any:
        """The option's value, or its default for the source (a component built without a spec has none set)."""
        if key in self.options:
            return self.options[key]
        default = OPTIONS[self.source][key][1]
        if default is _REQUIRED:
            raise KeyError(f"{self.name!r} (source {self.source!r}) has no {key!r}, and it has no default")
        return default

    @property
    def scope(self) -> str | None:
        """``answer`` (scored once, on the answering turn) or ``turn`` (every turn) for a per-turn source; None
        where the env decides (``source: env`` without a ``scope``) or for other kinds."""
        return self.options.get("scope") or DEFAULT_SCOPES.get(self.source)


@dataclasses.dataclass(frozen=True)
class RewardSpec:
    """Named reward components, validated when built (see the module docstring).

    ``hold_out_labels``: the task's labels exist but must not reach the reward (label-free training such as
    TTRL, measured against the labels): components that grade against the label (``env``, a ``judge`` with a
    reference) are refused, and the trainer logs ``label_accuracy`` from the env's own ``correct`` verdict.
    """

    components: tuple[RewardComponent, ...]
    hold_out_labels: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "components", tuple(self.components))
        _validate_spec(self, "reward")

    # --- building -------------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "reward") -> RewardSpec:
        """Build from a recipe's ``reward:`` section; every error names its key path under ``where``."""
        if not isinstance(data, Mapping):
            raise RewardSpecError(f"{where} must be a mapping with a 'components' list, got {_show(data)}")
        unknown = sorted(set(data) - {"components", "hold_out_labels"})
        if unknown:
            raise RewardSpecError(f"{where} has unknown keys {unknown}; known keys: ['components', 'hold_out_labels']")
        items = data.get("components")
        if not isinstance(items, Sequence) or isinstance(items, str) or not items:
            raise RewardSpecError(f"{where}.components must be a non-empty list of components, got {_show(items)}")
        hold_out = data.get("hold_out_labels", False)
        if not isinstance(hold_out, bool):
            raise RewardSpecError(f"{where}.hold_out_labels must be true or false, got {_show(hold_out)}")
        components = [_component(item, f"{where}.components[{i}]") for i, item in enumerate(items)]
        spec = object.__new__(cls)
        object.__setattr__(spec, "components", tuple(components))
        object.__setattr__(spec, "hold_out_labels", hold_out)
        _validate_spec(spec, where)
        return spec

    @classmethod
    def coerce(cls, value: RewardSpec | Mapping[str, Any], where: str = "reward") -> RewardSpec:
        """A spec from a spec or its dict form (what ``make(id, reward=...)`` and recipes accept)."""
        return value if isinstance(value, RewardSpec) else cls.from_dict(value, where)

    # --- reading --------------------------------------------------------------------------------------
    def of_kind(self, kind: str) -> list[RewardComponent]:
        """The components computed at one time: ``step``, ``noise``, ``group`` or ``process`` (in spec order)."""
        return [c for c in self.components if c.kind == kind]

    @property
    def needs_labels(self) -> bool:
        """Whether some component grades against the task's label (the env's verifier, a judge with a reference);
        a dataset env may then refuse rows without one."""
        return any(_grades_against_label(c) for c in self.components)

    def to_dict(self) -> dict[str, Any]:
        """The dict form :meth:`from_dict` reads back."""
        components = []
        for c in self.components:
            item: dict[str, Any] = {"name": c.name, "source": c.source}
            if c.kind != "noise":
                item["weight"] = c.weight
            if c.gate is not None:
                item["gate"] = c.gate
            item.update({k: list(v) if isinstance(v, tuple) else v for k, v in c.options.items()})
            components.append(item)
        return {"components": components, "hold_out_labels": self.hold_out_labels}


def _component(item: Any, where: str) -> RewardComponent:
    if not isinstance(item, Mapping):
        raise RewardSpecError(
            f"{where} must be a mapping such as {{name: correct, source: env, weight: 1.0}}, got {_show(item)}"
        )
    for key in ("name", "source"):
        if key not in item:
            raise RewardSpecError(f"{where}.{key} is missing; every component needs a name and a source")
    source = item["source"]
    if source not in SOURCES:
        raise RewardSpecError(f"{where}.source must be one of {', '.join(SOURCES)}; got {_show(source)}")
    options = {k: v for k, v in item.items() if k not in _COMMON}
    return RewardComponent(
        name=item["name"], source=source, weight=item.get("weight", 1.0), gate=item.get("gate"), options=options
    )


def _validate_spec(spec: RewardSpec, where: str) -> None:
    """Check every component and the references between them; fills option defaults in place."""
    if not spec.components:
        raise RewardSpecError(f"{where}.components must hold at least one component")
    names: dict[str, int] = {}
    for index, component in enumerate(spec.components):
        path = f"{where}.components[{index}]"
        if not isinstance(component, RewardComponent):
            raise RewardSpecError(f"{path} must be a RewardComponent, got {_show(component)}")
        _validate_component(component, path)
        if component.name in names:
            raise RewardSpecError(
                f"{path}.name {component.name!r} is already the name of "
                f"{where}.components[{names[component.name]}]; names must be unique"
            )
        names[component.name] = index
    per_turn = {c.name for c in spec.of_kind("step")}
    for index, component in enumerate(spec.components):
        path = f"{where}.components[{index}]"
        if component.gate is not None and component.gate not in per_turn:
            raise RewardSpecError(
                f"{path}.gate names {component.gate!r}, which is not a per-turn component of this "
                f"spec; gates can name: {sorted(per_turn - {component.name})}"
            )
        if component.gate == component.name:
            raise RewardSpecError(f"{path}.gate names the component itself; a gate is another component")
        if component.kind == "noise" and component.option("applies_to") not in per_turn:
            raise RewardSpecError(
                f"{path}.applies_to names {component.option('applies_to')!r}, which is not a "
                f"per-turn component of this spec; noise can apply to: {sorted(per_turn)}"
            )
        if component.source == "flip":
            target = next(c for c in spec.components if c.name == component.option("applies_to"))
            bounds = default_range(target)
            if bounds is not None and not all(map(math.isfinite, bounds)):
                raise RewardSpecError(
                    f"{path} flips {target.name!r}, whose values are unbounded {list(bounds)}; a flip mirrors a "
                    f"value within its range: give {target.name!r} a range: [low, high]"
                )
        if spec.hold_out_labels and _grades_against_label(component):
            raise RewardSpecError(
                f"{path} (source {component.source!r}) grades against the task's label, which hold_out_labels: true "
                "keeps from the reward; use label-free components (majority_vote, self_consistency, pattern, format, "
                "length, tool_cost, a judge with reference: false)"
            )
    if not spec.of_kind("step") and not spec.of_kind("group") and not spec.of_kind("process"):
        raise RewardSpecError(f"{where}.components has only noise; noise corrupts another component, add one")


def _grades_against_label(component: RewardComponent) -> bool:
    """The env's verifier and judges given the task's label as a reference read the label."""
    return component.source == "env" or (
        component.source in ("judge", "judge_group", "process") and bool(component.options.get("reference"))
    )


def _validate_component(component: RewardComponent, path: str) -> None:
    if not isinstance(component.name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", component.name):
        raise RewardSpecError(
            f"{path}.name must be an identifier such as 'correct' (letters, digits, _ . -), got {_show(component.name)}"
        )
    if component.source not in SOURCES:
        raise RewardSpecError(f"{path}.source must be one of {', '.join(SOURCES)}; got {_show(component.source)}")
    weight = component.weight
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight):
        raise RewardSpecError(f"{path}.weight must be a number, got {_show(weight)}")
    object.__setattr__(component, "weight", float(weight))
    if component.gate is not None and not isinstance(component.gate, str):
        raise RewardSpecError(f"{path}.gate must be the name of another component, got {_show(component.gate)}")
    if component.kind == "noise" and (component.weight != 1.0 or component.gate is not None):
        raise RewardSpecError(
            f"{path} is noise (source {component.source!r}): it corrupts the component named by "
            "applies_to and has no weight or gate of its own"
        )
    allowed = OPTIONS[component.source]
    unknown = sorted(set(component.options) - set(allowed))
    if unknown:
        raise RewardSpecError(
            f"{path} has unknown keys {unknown} for source {component.source!r}; it takes "
            f"{sorted(_COMMON + tuple(allowed))}"
        )
    options = {}
    for key, (kind, default) in allowed.items():
        value = component.options.get(key, _REQUIRED)
        if value is _REQUIRED and default is _REQUIRED:
            raise RewardSpecError(f"{path}.{key} is missing; source {component.source!r} needs it")
        # A default passes as it is (a spec validated twice, e.g. rebuilt from its components, stays valid).
        options[key] = (
            default if value is _REQUIRED or value == default else _check_option(value, kind, f"{path}.{key}")
        )
    if component.source == "pattern" and (options["pattern"] is None) == (options["patterns"] is None):
        raise RewardSpecError(f"{path} needs exactly one of pattern (a regex) or patterns (a list of regexes)")
    if component.source == "format" and not options["tags"] and options["pattern"] is None:
        raise RewardSpecError(f"{path} needs tags (e.g. [answer]), a pattern, or both")
    if component.source == "length" and options["buffer"] > options["max_length"]:
        raise RewardSpecError(
            f"{path}.buffer must be <= max_length, got buffer={options['buffer']}, max_length={options['max_length']}"
        )
    _check_combinations(component, options, path)
    object.__setattr__(component, "options", options)


def _check_combinations(component: RewardComponent, options: dict[str, Any], path: str) -> None:
    """Options that depend on each other (one of two, or one needed by a choice of another)."""
    if component.source == "reward_model" and (options["model"] is None) == (options["url"] is None):
        raise RewardSpecError(
            f"{path} needs exactly one of model (a Hugging Face sequence-classification model: a "
            "path or hub name) or url (an HTTP scorer answering POST {'texts': [...]})"
        )
    if component.source != "process":
        return
    if options["segment"] == "regex" and options["split"] is None:
        raise RewardSpecError(f"{path} has segment: regex, which needs split: a regex whose matches start the steps")
    if options["scorer"] == "rule" and options["rule"] is None:
        raise RewardSpecError(f"{path} has scorer: rule, which needs rule: a regex a correct step matches")
    if options["scorer"] == "judge" and (options["base_url"] is None or options["model"] is None):
        raise RewardSpecError(f"{path} has scorer: judge, which needs base_url and model (the judge endpoint)")


def _check_option(value: Any, kind: str, path: str) -> Any:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "str" and isinstance(value, str) and value:
        return value
    if kind == "bool" and isinstance(value, bool):
        return value
    if kind == "int" and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind == "count" and isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if kind == "positive_int" and isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if kind == "number" and number and math.isfinite(value):
        return float(value)
    if kind == "positive_number" and number and math.isfinite(value) and value > 0:
        return float(value)
    if kind == "nonnegative_number" and number and math.isfinite(value) and value >= 0:
        return float(value)
    if kind == "range" and _is_range(value):
        return (float(value[0]), float(value[1]))
    if kind == "probability" and number and 0.0 <= value <= 1.0:
        return float(value)
    if kind == "equivalence" and value in EQUIVALENCES:
        return value
    if kind in _CHOICES and value in _CHOICES[kind]:
        return value
    if kind == "examples":
        from envgym.verifiers.judge_prompt import check_examples

        try:
            return tuple(check_examples(value))
        except ValueError as error:
            raise RewardSpecError(f"{path}: {error}") from None
    if kind in ("regex", "regex_list", "str_list"):
        items = [value] if kind == "regex" else value
        if (
            isinstance(items, Sequence)
            and not isinstance(items, str)
            and items
            and all(isinstance(i, str) for i in items)
        ):
            if kind != "str_list":
                for item in items:
                    try:
                        re.compile(item)
                    except re.error as error:
                        raise RewardSpecError(f"{path} is not a valid regular expression ({error}): {item!r}") from None
            return value if kind == "regex" else tuple(items)
    expected = {
        "str": "a non-empty string",
        "bool": "true or false",
        "int": "an integer",
        "count": "an integer >= 0",
        "positive_int": "an integer >= 1",
        "number": "a number",
        "positive_number": "a number > 0",
        "nonnegative_number": "a number >= 0",
        "range": "[low, high], two numbers with low <= high",
        "probability": "a probability in [0, 1]",
        "equivalence": f"one of {', '.join(EQUIVALENCES)}",
        **{name: f"one of {', '.join(choices)}" for name, choices in _CHOICES.items()},
        "regex": "a regular expression (a string)",
        "regex_list": "a non-empty list of regular expressions",
        "str_list": "a non-empty list of strings",
    }
    raise RewardSpecError(f"{path} must be {expected[kind]}, got {_show(value)}")


_CHOICES = {"segment": SEGMENTS, "scorer": STEP_SCORERS, "credit": CREDITS, "scope": SCOPES}


def _is_range(value: Any) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and len(value) == 2
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v) for v in value)
        and value[0] <= value[1]
    )


def default_range(component: RewardComponent) -> tuple[float, float] | None:
    """The values a per-turn component takes when its spec sets no ``range``; None for ``env`` (the env declares
    it in ``Env.reward_ranges``)."""
    if component.options.get("range") is not None:
        return tuple(component.options["range"])
    source = component.source
    if source == "format":
        return (min(0.0, -component.options["penalty"]), 1.0)
    return {"pattern": (0.0, 1.0), "judge": (0.0, 1.0), "length": (-1.0, 0.0), "tool_cost": (-math.inf, 0.0)}.get(
        source
    )


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
