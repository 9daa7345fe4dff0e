"""Loading tasks from JSONL, Parquet and Hugging Face datasets with a field mapping.

A record becomes a :class:`~envgym.core.Task` through a :class:`FieldMap`: which field holds the prompt (a
string, or a list of chat messages), the answer, and the id. Extra fields go to ``metadata``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from envgym.core import Message, Task
from envgym.tasks.sources import ListTaskSource


@dataclasses.dataclass
class FieldMap:
    """Which record fields make a task.

    prompt: field with the question text or a list of chat messages.
    answer: field with the gold answer (``None``: no answer field).
    id: field with a stable id (``None``: ``"{prefix}{row number}"``).
    system_prompt: prepended as a system message when set.
    template: formats the prompt text (``{prompt}`` and any record field), e.g. ``"{prompt}\\nPut the final
        answer in \\\\boxed{{}}."``.
    answer_transform: applied to the raw answer (e.g. take what follows ``####`` in GSM8K).
    answer_optional: a record without the answer field (or with null there) makes a task with answer ``None``
        instead of an error (label-free data, for rewards that need no label).
    """

    prompt: str = "question"
    answer: str | None = "answer"
    id: str | None = None
    system_prompt: str | None = None
    template: str = "{prompt}"
    answer_transform: Callable[[Any], Any] | None = None
    answer_optional: bool = False


def records_to_tasks(records: Iterable[Mapping[str, Any]], fields: FieldMap, *, id_prefix: str = "") -> ListTaskSource:
    """Turn records into tasks; a record missing a mapped field raises with the row number and the fields it has."""
    tasks = []
    for row, record in enumerate(records):
        if fields.prompt not in record:
            raise KeyError(f"record {row} has no prompt field {fields.prompt!r}; its fields are {sorted(record)}")
        raw_prompt = record[fields.prompt]
        messages: list[Message] = []
        if fields.system_prompt:
            messages.append({"role": "system", "content": fields.system_prompt})
        if isinstance(raw_prompt, list):
            messages.extend(dict(m) for m in raw_prompt)
        else:
            text = fields.template.format_map({**record, "prompt": raw_prompt})
            messages.append({"role": "user", "content": text})
        answer = None
        if fields.answer is not None and not (fields.answer_optional and record.get(fields.answer) is None):
            if fields.answer not in record:
                raise KeyError(f"record {row} has no answer field {fields.answer!r}; its fields are {sorted(record)}")
            answer = record[fields.answer]
            if fields.answer_transform is not None:
                answer = fields.answer_transform(answer)
        task_id = str(record[fields.id]) if fields.id and fields.id in record else f"{id_prefix}{row}"
        used = {fields.prompt, fields.answer, fields.id}
        metadata = {k: v for k, v in record.items() if k not in used and _jsonable(v)}
        tasks.append(Task(id=task_id, messages=messages, answer=answer, metadata=metadata))
    if not tasks:
        raise ValueError("no records: a task file or dataset must hold at least one record")
    return ListTaskSource(tasks)


def load_jsonl(path: str | Path, fields: FieldMap | None = None) -> ListTaskSource:
    """Tasks from a JSON Lines file (one object per line; blank lines are skipped)."""
    path = Path(path)
    records = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not valid JSON ({error.msg})") from None
    return records_to_tasks(records, fields or FieldMap(), id_prefix=f"{path.stem}-")


def load_parquet(path: str | Path, fields: FieldMap | None = None) -> ListTaskSource:
    """Tasks from a Parquet file (needs ``pyarrow``: ``pip install envgym[data]``)."""
    import pyarrow.parquet as pq

    path = Path(path)
    return records_to_tasks(pq.read_table(path).to_pylist(), fields or FieldMap(), id_prefix=f"{path.stem}-")


def load_hf(
    name_or_path: str, fields: FieldMap | None = None, *, split: str = "train", **load_kwargs: Any
) -> ListTaskSource:
    """Tasks from a Hugging Face dataset: a hub name, a local dataset folder, or a data file type with
    ``data_files=`` (``load_hf("json", data_files="x.jsonl")``). Needs ``datasets``."""
    import datasets

    path = Path(name_or_path)
    saved_markers = ("dataset_info.json", "state.json", "dataset_dict.json")
    if path.is_dir() and any((path / marker).exists() for marker in saved_markers):
        dataset = datasets.load_from_disk(str(path))
        if isinstance(dataset, datasets.DatasetDict):
            dataset = dataset[split]
    else:
        dataset = datasets.load_dataset(name_or_path, split=split, **load_kwargs)
    return records_to_tasks(dataset, fields or FieldMap(), id_prefix=f"{path.name}-")


def _jsonable(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool, type(None), list, dict))
