"""search/MultiHopQA-v0: answer a question by searching a corpus over many turns (Search-R1's protocol).

Each turn the agent either searches (``<search>query</search>``, or a JSON/OpenAI function call to
``search``) and gets the top documents back as ``<information>...</information>``, or answers with
``<answer>...</answer>``, which ends the episode. Reward, on the final turn: ``correct`` = exact match
(SQuAD normalization, against every gold answer; ``metric="f1"`` for token F1, which gives nothing to a list of
candidates or to an answer longer than the gold: see :mod:`envgym.verifiers.qa`). ``info`` has both ``em`` and
``f1``, and the :class:`~envgym.tools.ToolEnv` counts (searches made, errors). One search runs per turn; more
calls in the turn are skipped and make the turn invalid (``action_valid=False``).

Tasks come from the synthetic world (:mod:`envgym.envs.search.world`: contamination-free, 1-4 hops, unique
answers) or from files: a JSONL corpus plus a QA file in Search-R1 (``question``, ``golden_answers``) or
HotpotQA (``question``, ``answer``) shape. Turn limits are the registry's (``max_turns``, default 12); raise
them for long-horizon search, e.g. ``envgym.make("search/MultiHopQA-v0", max_turns=64)``.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import numpy as np

from envgym.core import Action, Env, Message, RewardRange, StepResult, Task, action_text, reward_total
from envgym.tasks import FieldMap, ProceduralTaskSource, load_jsonl, load_parquet
from envgym.tools import Tool, ToolEnv, ToolUnavailable

# The body may hold no other <answer> tag: linear time on floods of unclosed tags (a lazy .*? rescans the rest of
# the text from every opening tag), and the innermost answer of nested tags.
ANSWER = re.compile(r"<answer>((?:(?!</?answer>).)*)</answer>", re.DOTALL)

QUESTION_TEMPLATE = (
    "Answer the question. Search as many times as you need; each search returns the top documents. "
    "Give only the final answer inside <answer> and </answer>, for example <answer>Beijing</answer>.\n"
    "Question: {prompt}"
)


class QuestionAnswering(Env):
    """Single-turn QA: the turn's last ``<answer>`` is graded against the task's gold answers (a list)."""

    description = "Answer a question in <answer> tags; exact-match reward."
    reward_ranges = {"correct": RewardRange()}

    def __init__(self, tasks: Any, metric: str = "em"):
        if metric not in ("em", "f1"):
            raise ValueError(f"metric must be 'em' (exact match) or 'f1' (token F1), got {metric!r}")
        self.tasks, self.metric = tasks, metric

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        self._golds = [task.answer] if isinstance(task.answer, str) else [str(a) for a in task.answer]
        return task.prompt(), {}

    def reference_action(self) -> Action | None:
        """The first gold answer in the answer format."""
        return None if self.task is None else f"<answer>{self._golds[0]}</answer>"

    def _step(self, action: Action) -> StepResult:
        from envgym.verifiers.qa import exact_match, token_f1

        answers = ANSWER.findall(action_text(action))
        if not answers:
            components = {"correct": 0.0}
            message = "No <answer> was given, so the episode ends unanswered."
            info = {
                "reward_components": components,
                "correct": False,
                "em": 0.0,
                "f1": 0.0,
                "answer": None,
                "action_valid": False,
                "action_error": message,
            }
            return [{"role": "user", "content": message}], 0.0, True, False, info
        answer = answers[-1].strip()
        em, f1 = float(exact_match(answer, self._golds)), float(token_f1(answer, self._golds))
        components = {"correct": em if self.metric == "em" else f1}
        info = {
            "reward_components": components,
            "correct": em == 1.0,
            "em": em,
            "f1": f1,
            "answer": answer,
            "gold": self._golds,
            "action_valid": True,
        }
        verdict = "correct" if em == 1.0 else "incorrect"
        return [{"role": "user", "content": f"Your answer is {verdict}."}], reward_total(components), True, False, info


class MultiHopQA(ToolEnv):
    """Multi-turn search QA; see the module docstring.

    num_docs, world_seed, hops: the synthetic world's size and seed, and the (low, high) hop range of its
        questions. Ignored when ``corpus_path`` is set.
    corpus_path, qa_path: a JSONL corpus (``{"id", "title", "text"}`` or Search-R1's ``{"id", "contents"}``) and
        a JSONL/Parquet QA file; use both, or neither.
    retriever_url: search a running ``envgym serve search`` (or any Search-R1 retriever) instead of an
        in-process index.
    topk: documents per search.
    metric: ``"em"`` (exact match) or ``"f1"`` (token F1) as the ``correct`` component (named ``metric``, not
        ``reward``: ``make(..., reward=...)`` takes a reward spec). Remaining keywords go to
        :class:`~envgym.tools.ToolEnv` (limits, OTC).
    """

    description = "Multi-hop question answering with a BM25 search tool over a corpus."

    def __init__(
        self,
        *,
        num_docs: int = 10_000,
        world_seed: int = 0,
        hops: tuple[int, int] = (1, 4),
        corpus_path: str | None = None,
        qa_path: str | None = None,
        retriever_url: str | None = None,
        topk: int = 3,
        metric: str = "em",
        **tool_options: Any,
    ):
        if (corpus_path is None) != (qa_path is None):
            raise ValueError("corpus_path and qa_path go together: give both (a corpus and its questions) or neither")
        low, high = hops
        if not 1 <= low <= high <= 4:
            raise ValueError(f"hops must be a (low, high) range within 1..4, got {hops!r}")
        if topk < 1:
            raise ValueError(f"topk must be >= 1, got {topk}")
        self.topk = topk
        if qa_path is not None:
            tasks = _file_tasks(qa_path)
            index = None if retriever_url else _file_index(str(corpus_path))
        else:
            world = _world(num_docs, world_seed)
            tasks = ProceduralTaskSource(functools.partial(_world_task, world, low, high))
            index = None if retriever_url else _world_index(num_docs, world_seed)
        self._client = None
        if retriever_url is not None:
            from envgym.envs.search.client import SearchClient

            client = self._client = SearchClient(retriever_url)

            def remote_search(queries: list[str]) -> Any:
                try:
                    return client.search(queries, topk=self.topk)
                except Exception as error:  # the server's failure, not the policy's: never a reward of 0
                    raise ToolUnavailable(f"the search server at {retriever_url} failed: {error}") from error

            self._search_batch = remote_search
        else:
            self._search_batch = lambda queries: index.search_batch(queries, self.topk)
        tool_options.setdefault("max_calls_per_turn", 1)
        super().__init__(QuestionAnswering(tasks, metric), [self._search_tool()], **tool_options)

    def _search_tool(self) -> Tool:
        from envgym.envs.search.index import format_hits

        def search(query: str) -> str:
            return format_hits(self._search_batch([query])[0])

        return Tool(
            name="search",
            description=f"Search the encyclopedia with a keyword query; returns the top {self.topk} documents.",
            parameters={
                "type": "object",
                "properties": {"query": {"type": "string", "description": "keywords, e.g. a name"}},
                "required": ["query"],
            },
            function=search,
            result_tag="information",
        )

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
        super().close()


def _world_task(world: Any, low: int, high: int, rng: np.random.Generator, index: int) -> Task:
    hops = int(rng.integers(low, high + 1))
    question = world.question(rng, hops)
    return Task(
        id=f"multihop-{world.num_docs}-{world.seed}-{index}",
        messages=[{"role": "user", "content": QUESTION_TEMPLATE.format(prompt=question["question"])}],
        answer=[question["answer"]],
        metadata={"hops": hops, "path": question["path"], "steps": question["steps"]},
    )


@functools.lru_cache(maxsize=4)
def _world(num_docs: int, seed: int) -> Any:
    from envgym.envs.search.world import World

    return World(num_docs, seed)


@functools.lru_cache(maxsize=4)
def _world_index(num_docs: int, seed: int) -> Any:
    """One index per world, shared by every env in the process (vector envs do not rebuild it)."""
    from envgym.envs.search.index import SearchIndex

    return SearchIndex(_world(num_docs, seed).documents())


@functools.lru_cache(maxsize=4)
def _file_index(path: str) -> Any:
    from envgym.envs.search.index import SearchIndex

    return SearchIndex.from_jsonl(path)


def _file_tasks(path: str) -> Any:
    load = load_parquet if Path(path).suffix == ".parquet" else load_jsonl
    golds = lambda answer: [answer] if isinstance(answer, str) else [str(a) for a in answer]  # noqa: E731
    try:
        return load(path, FieldMap(answer="golden_answers", template=QUESTION_TEMPLATE, answer_transform=golds))
    except KeyError:
        return load(path, FieldMap(answer="answer", template=QUESTION_TEMPLATE, answer_transform=golds))
