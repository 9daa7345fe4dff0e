"""Dataset-v0: math problems from a JSONL/Parquet file or a Hugging Face dataset, with a field mapping.

Presets name the two common answer formats:
- ``"gsm8k"``: fields ``question``/``answer``, the gold answer is what follows ``####`` in ``answer``;
- ``"math"``: fields ``problem``/``solution``, the gold answer is the last ``\\boxed{}`` in ``solution``.
Explicit ``prompt_field``/``answer_field``/``id_field``/``template``/``system_prompt`` override the preset.
Answers are compared in any form (``form="any"``: golds are often expressions such as ``\\frac{\\sqrt{3}}{2}``),
except with the ``gsm8k`` preset (and the bundled sample), whose answers are numbers: there the default is
``form="literal"``, so ``\\boxed{3 \\cdot 12 - 5}`` is no answer. ``form=`` overrides either; ``strict=True``
accepts only ``\\boxed{}``, and ``conventions={"percent": "unit"}`` reads ``25\\%`` as 25 for datasets whose
percentages are plain figures.
With no source at all, the env plays a small bundled GSM8K-style sample (``SAMPLE``), so that
``envgym.make("math/Dataset-v0")`` works out of the box.

Label-free rows: with ``require_answers=False`` rows without an answer are played too; their turn reports the
extracted ``answer`` and no reward components, for a reward that needs no label (a group's majority vote).
``envgym.make(id, reward=spec)`` sets it from ``spec.needs_labels``; otherwise such rows are refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envgym.core import Action, Message, StepResult, Task, action_text
from envgym.envs.math.answer import ANSWER_INSTRUCTION, MathAnswerEnv
from envgym.tasks import FieldMap, load_hf, load_jsonl, load_parquet

SAMPLE = Path(__file__).with_name("sample_gsm8k.jsonl")


def gsm8k_answer(solution: Any) -> str:
    """The number after the last ``####`` of a GSM8K solution (commas dropped)."""
    text = str(solution)
    if "####" not in text:
        raise ValueError(f"a GSM8K answer must contain '#### <number>', got {text[:80]!r}")
    return text.rsplit("####", 1)[1].strip().replace(",", "")


def boxed_answer(solution: Any) -> str:
    """The content of the last ``\\boxed{}`` of a MATH solution."""
    from envgym.verifiers.math import extract_answer

    answer = extract_answer(str(solution), formats=("boxed",))
    if answer is None:
        raise ValueError(f"a MATH solution must contain \\boxed{{...}}, got {str(solution)[:80]!r}")
    return answer


PRESETS: dict[str, dict[str, Any]] = {
    "gsm8k": {"prompt": "question", "answer": "answer", "answer_transform": gsm8k_answer},
    "math": {"prompt": "problem", "answer": "solution", "answer_transform": boxed_answer},
}


def field_map(preset: str | None = None, **overrides: Any) -> FieldMap:
    """The FieldMap for a preset (or the plain ``question``/``answer`` fields), with ``overrides`` on top."""
    if preset is not None and preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; known presets: {sorted(PRESETS)} (or None)")
    settings: dict[str, Any] = {"template": "{prompt}\n\n" + ANSWER_INSTRUCTION.replace("{}", "{{}}")}
    settings.update(PRESETS.get(preset, {}))
    settings.update({k: v for k, v in overrides.items() if v is not None})
    return FieldMap(**settings)


class MathDataset(MathAnswerEnv):
    description = "Math problems from a JSONL/Parquet file or a Hugging Face dataset (GSM8K/MATH presets)."

    def __init__(
        self,
        path: str | None = None,
        *,
        hf: str | None = None,
        split: str = "train",
        data_files: str | list[str] | None = None,
        preset: str | None = None,
        prompt_field: str | None = None,
        answer_field: str | None = None,
        id_field: str | None = "id",
        template: str | None = None,
        system_prompt: str | None = None,
        timeout: float = 2.0,
        require_answers: bool = True,
        form: str | None = None,
        strict: bool = False,
        conventions: dict[str, Any] | None = None,
    ):
        if path is not None and hf is not None:
            raise ValueError("give one source: path='file.jsonl' / 'file.parquet', or hf='dataset name or folder'")
        if path is None and hf is None:
            path, preset = str(SAMPLE), preset or "gsm8k"
        # GSM8K's answers are numbers, so a formula left for the verifier (3 \cdot 12 - 5) is no answer there.
        form = form or ("literal" if preset == "gsm8k" else "any")
        super().__init__(timeout, form=form, strict=strict, conventions=conventions)
        self.require_answers = require_answers
        fields = field_map(
            preset,
            prompt=prompt_field,
            answer=answer_field,
            id=id_field,
            template=template,
            system_prompt=system_prompt,
            answer_optional=not require_answers,
        )
        if hf is not None:
            extra = {"data_files": data_files} if data_files is not None else {}
            self.tasks = load_hf(hf, fields, split=split, **extra)
            return
        suffix = Path(path).suffix.lower()
        if suffix in (".jsonl", ".json"):
            self.tasks = load_jsonl(path, fields)
        elif suffix == ".parquet":
            self.tasks = load_parquet(path, fields)
        else:
            raise ValueError(f"cannot tell the format of {path!r}: use a .jsonl or .parquet file, or hf=...")

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        if task.answer is None and not self.require_answers:
            return task.prompt(), {}
        return super()._reset(task, options)

    def _step(self, action: Action) -> StepResult:
        if self.task.answer is not None:
            return super()._step(action)
        from envgym.verifiers.math import extract_answer

        # No label, so nothing to grade here: the answer is reported for a group reward to compare.
        answer = extract_answer(action_text(action))
        info = {"reward_components": {}, "answer": answer, "action_valid": answer is not None, "labelled": False}
        return [], 0.0, True, False, info
