"""The blind learner: can the gold answer be predicted from the surface of a task, without solving it?

A task generator leaks when something a policy can read without solving the task predicts the answer: the
correct option is the one the distractors are fixed multiples of, the true statements are the ones that say
``>=``. A policy finds such a cue long before it learns the task. The audit draws N tasks from the env's task
source and fits simple predictors on surface features only:

- **multiple choice** (options ``(A) ...`` in the prompt, the gold a letter): one rule per feature of the options,
  "pick the option whose feature has rank r" (r learned), over the options' positions, values (the first number
  of each), value ranks, distances from the median value, lengths, significant digits, and how many other
  options are a round multiple of it (2, 3, 10, 3.6, 60, ...);
- **labels** (a few distinct gold answers, each common, such as proved/disproved or yes/no): one-feature stumps
  over the statement's word and symbol n-grams and its length, a naive Bayes and an L2 logistic regression over
  the n-grams. Only n-grams common to at least 5% of the tasks count: a rare token (one task's number) names that
  task, not a cue, and memorising it says nothing about tasks not seen.

Every predictor is chosen on training folds and scored on the held-out fold (5-fold cross-validation), so its
accuracy is an honest estimate. A predictor that beats chance (1/k options; the commonest label's share) by at
least :data:`MIN_GAIN` with a one-sided binomial p-value under :data:`ALPHA` is a ``cue_leak`` finding that names
the feature: noise on N tasks is not a finding, a real cue is. Open answers (numbers, strings) and numeric labels
with more than two values (computed from the statement's own numbers) are not checked; a prompt drawn twice counts
once.

Light: numpy only.
"""

from __future__ import annotations

import dataclasses
import math
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from envgym.audit import verdicts
from envgym.audit.verdicts import Finding

if TYPE_CHECKING:
    from envgym.audit.runner import Auditor

ALPHA = 1e-3  # per env, after Bonferroni over its predictors: noise across a hundred envs stays below one finding
MIN_GAIN = 0.10  # accuracy over chance a cue must reach to matter
MIN_SHARE = 0.05  # n-grams seen in fewer tasks than this (or in all but this share) are not features
FOLDS = 5
PROBE_TASKS = 12  # tasks drawn first to see whether the answers are choices or labels at all
# Seconds spent drawing tasks (a generator may take 0.1 s a task): fewer tasks give a weaker test, never a wrong one.
DRAW_BUDGET_S, THOROUGH_DRAW_BUDGET_S = 10.0, 90.0  # under the 120 s a load may take
MAX_LABELS = 10
OPTION_LINE = re.compile(r"^\s*\(?([A-J])[).:]\s+(.+?)\s*$", re.MULTILINE)
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
TOKEN = re.compile(r"[A-Za-z]+|\d+|[<>=!]=|[^\sA-Za-z\d]")
ROUND_RATIOS = (2.0, 3.0, 4.0, 5.0, 6.0, 10.0, 12.0, 60.0, 100.0, 1000.0, 3.6, 3600.0)


@dataclasses.dataclass
class Cue:
    """The best predictor found: its held-out accuracy, chance, the p-value, and the feature it reads."""

    feature: str
    correct: int
    total: int
    chance: float
    p_value: float

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0

    @property
    def leaks(self) -> bool:
        return self.p_value < ALPHA and self.accuracy - self.chance >= MIN_GAIN

    def describe(self) -> str:
        return (
            f"{self.feature} predicts the gold answer without solving the task: {self.correct}/{self.total} "
            f"held out ({self.accuracy:.0%}, chance {self.chance:.0%}, one-sided binomial p = {self.p_value:.1e})"
        )


def applies(auditor: Auditor) -> bool:
    return auditor.has_tasks and auditor.settings.cue_tasks > 0 and not auditor.seats


def findings(auditor: Auditor) -> list[Finding]:
    """A ``cue_leak`` finding when the blind learner beats chance on the env's tasks (see the module docstring)."""
    tasks = auditor.env.unwrapped.tasks
    count = min(auditor.settings.cue_tasks, len(tasks))
    if auditor.on_call is not None:  # drawing tasks has the deadline of building an env, not of a step
        auditor.on_call(f"load: draw {count} tasks for the cue check")
    probe = [tasks.get(i) for i in range(min(PROBE_TASKS, count))]
    if not (_choice_tasks(probe) or _label_tasks(probe, count)):
        auditor.report.notes.append("cue check: open answers (no options or few labels), not checked")
        return []
    budget = THOROUGH_DRAW_BUDGET_S if auditor.settings.thorough else DRAW_BUDGET_S
    drawn, start = list(probe), time.perf_counter()
    while len(drawn) < count and time.perf_counter() - start < budget:
        drawn.append(tasks.get(len(drawn)))
    cues = blind_learner([_prompt(task) for task in drawn], [str(task.answer).strip() for task in drawn])
    if not cues:
        auditor.report.notes.append(
            f"cue check: {len(drawn)} tasks, numeric answers (the statement's numbers decide them)"
        )
        return []
    auditor.report.notes.append(f"cue check on tasks 0..{len(drawn) - 1}: best {cues[0].describe()}")
    leaks = [cue for cue in cues if cue.leaks]
    if not leaks:
        return []
    evidence = f"on tasks 0..{len(drawn) - 1}: {leaks[0].describe()}"
    return [Finding(auditor.env_id, verdicts.CUE_LEAK, f"blind-learner:{leaks[0].feature}", [], evidence)]


def _prompt(task: Any) -> str:
    users = [m.get("content") for m in task.messages if m.get("role") == "user" and isinstance(m.get("content"), str)]
    return users[-1] if users else ""


def _choice_tasks(tasks: Sequence[Any]) -> bool:
    return bool(tasks) and all(options(_prompt(t)) and str(t.answer).strip().upper() in "ABCDEFGHIJ" for t in tasks)


def _label_tasks(tasks: Sequence[Any], count: int) -> bool:
    labels = Counter(str(t.answer).strip() for t in tasks)
    return 2 <= len(labels) <= MAX_LABELS and len(labels) <= len(tasks) / 2 and count >= 20


def _numeric(labels: Sequence[str]) -> bool:
    """Numbers with more than two values are computed from the statement's own numbers: a model of its n-grams
    that predicts them reads the question (arithmetic), which is the task, not a cue."""
    try:
        [float(label) for label in labels]
    except ValueError:
        return False
    return len(set(labels)) > 2


def options(prompt: str) -> list[str]:
    """The option texts of a multiple-choice prompt (``(A) ...`` lines from A on), or [] when there are none."""
    found = OPTION_LINE.findall(prompt)
    letters = [letter for letter, _ in found]
    if len(found) < 2 or letters != list("ABCDEFGHIJ"[: len(found)]):
        return []
    return [text for _, text in found]


def blind_learner(prompts: list[str], answers: list[str]) -> list[Cue]:
    """The cues found in ``(prompt, gold answer)`` pairs, best first (a choice or label task set; else []).

    A prompt drawn twice counts once: a task that repeats teaches its answer by heart, which any learner
    memorises and is no cue (the held-out folds must hold tasks the predictors never saw)."""
    unique = dict(zip(prompts, answers))
    prompts, answers = list(unique), list(unique.values())
    if all(options(p) for p in prompts) and all(a.upper() in "ABCDEFGHIJ" for a in answers):
        return sorted(_choice_cues(prompts, answers), key=lambda cue: cue.p_value)
    labels = Counter(answers)
    if 2 <= len(labels) <= MAX_LABELS and not _numeric(answers):
        return sorted(_label_cues(prompts, answers), key=lambda cue: cue.p_value)
    return []


# --- multiple choice ---------------------------------------------------------------------------------------------


def option_features(texts: list[str]) -> dict[str, np.ndarray]:
    """Per option, every surface feature the choice rules read (named)."""
    values = np.array([_value(text) for text in texts], dtype=float)
    logs = np.log10(np.abs(values) + 1e-300)
    median = np.nanmedian(logs) if not np.all(np.isnan(logs)) else 0.0
    return {
        "answer position": np.arange(len(texts), dtype=float),
        "option value": values,
        "option length": np.array([len(text) for text in texts], dtype=float),
        "distance from the median value": np.abs(logs - median),
        "significant digits": np.array([_significant(text) for text in texts], dtype=float),
        "round multiples among the options": np.array(
            [sum(_round_ratio(values[i], values[j]) for j in range(len(texts)) if j != i) for i in range(len(texts))],
            dtype=float,
        ),
    }


def _value(text: str) -> float:
    match = NUMBER.search(text)
    return float(match.group(0)) if match else math.nan


def _significant(text: str) -> int:
    match = NUMBER.search(text)
    return len(match.group(0).replace("-", "").replace(".", "").lstrip("0").rstrip("0")) if match else 0


def _round_ratio(a: float, b: float) -> bool:
    if not (math.isfinite(a) and math.isfinite(b)) or a == 0 or b == 0:
        return False
    ratio = abs(a / b) if abs(a) >= abs(b) else abs(b / a)
    return any(abs(ratio / r - 1) < 0.005 for r in ROUND_RATIOS)


def _ranks(feature: np.ndarray) -> np.ndarray:
    """Each option's rank by the feature (0 = smallest; missing values rank last)."""
    keyed = np.where(np.isnan(feature), np.inf, feature)
    return np.argsort(np.argsort(keyed, kind="stable"), kind="stable")


def _choice_cues(prompts: list[str], answers: list[str]) -> list[Cue]:
    tables = [option_features(options(p)) for p in prompts]
    gold = np.array(["ABCDEFGHIJ".index(a.upper()) for a in answers])
    sizes = np.array([len(options(p)) for p in prompts])
    chance = float(np.mean(1.0 / sizes))
    cues = []
    for name in tables[0]:
        # rank_of_gold[t]: the gold option's rank by this feature in task t; a rule predicts "rank r".
        rank_of_gold = np.array([_ranks(table[name])[g] for table, g in zip(tables, gold)])
        correct = _cross_validate(len(prompts), lambda train, rank=rank_of_gold: _best_rank(rank[train]), rank_of_gold)
        cues.append(_cue(f"option rule on {name}", correct, len(prompts), chance, families=len(tables[0])))
    return cues


def _best_rank(ranks: np.ndarray) -> int:
    return int(Counter(ranks.tolist()).most_common(1)[0][0])


# --- labels ------------------------------------------------------------------------------------------------------


def statement_grams(prompt: str) -> set[str]:
    """The word and symbol uni- and bigrams of a statement (lower case)."""
    tokens = [token.lower() for token in TOKEN.findall(prompt)]
    return set(tokens) | {f"{a} {b}" for a, b in zip(tokens, tokens[1:])}


def _label_cues(prompts: list[str], answers: list[str]) -> list[Cue]:
    n = len(prompts)
    every = [statement_grams(p) for p in prompts]
    seen = Counter(gram for grams in every for gram in grams)
    low = max(3, MIN_SHARE * n)
    common = {gram for gram, count in seen.items() if low <= count <= n - low}
    grams = [found & common for found in every]
    lengths = np.array([len(p) for p in prompts], dtype=float)
    labels = np.array(answers)
    chance = Counter(answers).most_common(1)[0][1] / n
    predictors: dict[str, Callable[[np.ndarray], _Rule]] = {
        "statement n-gram stump": lambda train: _fit_stump(grams, labels, train),
        "statement length": lambda train: _fit_length(lengths, labels, train),
        "statement n-grams (naive Bayes)": lambda train: _fit_bayes(grams, labels, train),
        "statement n-grams (logistic regression)": lambda train: _fit_logistic(grams, labels, train),
    }
    cues = []
    for name, fit in predictors.items():
        chosen: list[str] = []

        def fit_and_name(
            train: np.ndarray, fit: Callable[[np.ndarray], _Rule] = fit, chosen: list[str] = chosen
        ) -> _Rule:
            rule = fit(train)
            chosen.append(rule.feature)
            return rule

        correct = _cross_validate_labels(n, fit_and_name, labels)
        feature = Counter(chosen).most_common(1)[0][0] if chosen else ""
        cues.append(_cue(f"{name} ({feature})" if feature else name, correct, n, chance, families=len(predictors)))
    return cues


class _Rule:
    def __init__(self, predict: Callable[[int], str], feature: str = ""):
        self.predict, self.feature = predict, feature

    def __call__(self, index: int) -> str:
        return self.predict(index)


def _majority(labels: np.ndarray, indices: np.ndarray, default: str) -> str:
    return Counter(labels[indices].tolist()).most_common(1)[0][0] if len(indices) else default


def _fit_stump(grams: list[set[str]], labels: np.ndarray, train: np.ndarray) -> _Rule:
    """The n-gram whose presence splits the training labels best (each side predicts its majority)."""
    default = _majority(labels, train, labels[train][0])
    vocabulary = Counter(gram for i in train for gram in grams[i])
    best, best_score = None, -1
    for gram, seen in vocabulary.items():
        if seen < 3 or seen > len(train) - 3:
            continue
        inside = np.array([i for i in train if gram in grams[i]])
        outside = np.array([i for i in train if gram not in grams[i]])
        score = max(Counter(labels[inside].tolist()).values()) + max(Counter(labels[outside].tolist()).values())
        if score > best_score:
            best, best_score = gram, score
    if best is None:
        return _Rule(lambda index: default)
    inside = np.array([i for i in train if best in grams[i]])
    outside = np.array([i for i in train if best not in grams[i]])
    yes, no = _majority(labels, inside, default), _majority(labels, outside, default)
    return _Rule(lambda index: yes if best in grams[index] else no, f"{best!r}")


def _fit_length(lengths: np.ndarray, labels: np.ndarray, train: np.ndarray) -> _Rule:
    """The length threshold that splits the training labels best."""
    default = _majority(labels, train, labels[train][0])
    best = (-1, 0.0, default, default)
    for threshold in np.unique(lengths[train]):
        below = train[lengths[train] <= threshold]
        above = train[lengths[train] > threshold]
        low, high = _majority(labels, below, default), _majority(labels, above, default)
        score = int(np.sum(labels[below] == low) + np.sum(labels[above] == high))
        if score > best[0]:
            best = (score, float(threshold), low, high)
    _, threshold, low, high = best
    return _Rule(lambda index: low if lengths[index] <= threshold else high, f"<= {threshold:.0f} characters")


def _fit_logistic(grams: list[set[str]], labels: np.ndarray, train: np.ndarray, l2: float = 1.0) -> _Rule:
    """One-vs-rest logistic regression on n-gram presence (L2 penalty ``l2``, full-batch gradient descent: a few
    hundred features and tasks, no library needed); its feature is the n-grams with the largest weights."""
    classes = sorted(set(labels[train].tolist()))
    vocabulary = sorted({gram for i in train for gram in grams[i]})
    if len(classes) < 2 or not vocabulary:
        default = _majority(labels, train, labels[train][0])
        return _Rule(lambda index: default)
    index_of = {gram: k for k, gram in enumerate(vocabulary)}

    def row(index: int) -> np.ndarray:
        x = np.zeros(len(vocabulary))
        x[[index_of[g] for g in grams[index] if g in index_of]] = 1.0
        return x

    features = np.stack([row(int(i)) for i in train])
    weights, biases = [], []
    for label in classes:
        target = (labels[train] == label).astype(float)
        w, b = np.zeros(len(vocabulary)), 0.0
        for _ in range(300):
            p = 1.0 / (1.0 + np.exp(-(features @ w + b)))
            w -= 0.5 * (features.T @ (p - target) + l2 * w) / len(train)
            b -= 0.5 * float(np.mean(p - target))
        weights.append(w)
        biases.append(b)
    top = np.argsort(-np.abs(weights[0]))[:3]

    def predict(index: int) -> str:
        x = row(index)
        return classes[int(np.argmax([x @ w + b for w, b in zip(weights, biases)]))]

    return _Rule(predict, ", ".join(repr(vocabulary[k]) for k in top))


def _fit_bayes(grams: list[set[str]], labels: np.ndarray, train: np.ndarray) -> _Rule:
    """Bernoulli naive Bayes over the n-grams seen in training (Laplace smoothing)."""
    classes = sorted(set(labels[train].tolist()))
    vocabulary = sorted({gram for i in train for gram in grams[i]})
    index_of = {gram: k for k, gram in enumerate(vocabulary)}
    present = np.zeros((len(train), len(vocabulary)), dtype=bool)
    for row, i in enumerate(train):
        for gram in grams[i]:
            present[row, index_of[gram]] = True
    log_prior, log_yes, log_no = [], [], []
    for label in classes:
        rows = present[labels[train] == label]
        probability = (rows.sum(axis=0) + 1.0) / (len(rows) + 2.0)
        log_prior.append(math.log(len(rows) / len(train)))
        log_yes.append(np.log(probability))
        log_no.append(np.log1p(-probability))

    def predict(index: int) -> str:
        row = np.zeros(len(vocabulary), dtype=bool)
        for gram in grams[index]:
            if gram in index_of:
                row[index_of[gram]] = True
        scores = [p + np.sum(np.where(row, y, n)) for p, y, n in zip(log_prior, log_yes, log_no)]
        return classes[int(np.argmax(scores))]

    return _Rule(predict)


# --- evaluation --------------------------------------------------------------------------------------------------


def _folds(n: int) -> list[np.ndarray]:
    order = np.random.default_rng(0).permutation(n)
    return [order[k::FOLDS] for k in range(FOLDS)]


def _cross_validate(n: int, fit: Callable[[np.ndarray], int], rank_of_gold: np.ndarray) -> int:
    correct = 0
    for held_out in _folds(n):
        train = np.setdiff1d(np.arange(n), held_out)
        rank = fit(train)
        correct += int(np.sum(rank_of_gold[held_out] == rank))
    return correct


def _cross_validate_labels(n: int, fit: Callable[[np.ndarray], Any], labels: np.ndarray) -> int:
    correct = 0
    for held_out in _folds(n):
        train = np.setdiff1d(np.arange(n), held_out)
        rule = fit(train)
        correct += sum(rule(int(i)) == labels[i] for i in held_out)
    return int(correct)


def _cue(feature: str, correct: int, total: int, chance: float, families: int) -> Cue:
    # Bonferroni over the predictors tried on the same tasks.
    return Cue(feature, correct, total, chance, min(1.0, binomial_tail(correct, total, chance) * families))


def binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), summed in log space (exact for the few hundred tasks drawn)."""
    if k <= 0:
        return 1.0
    if p <= 0:
        return 0.0
    if p >= 1:
        return 1.0
    terms = [
        math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * math.log(p) + (n - i) * math.log1p(-p)
        for i in range(k, n + 1)
    ]
    top = max(terms)
    return min(1.0, math.exp(top) * sum(math.exp(t - top) for t in terms))
