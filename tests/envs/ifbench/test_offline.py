"""IFBench runs offline: its NLTK data and tagger come from installed packages, and nothing reaches the network."""

import json
import pickle
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("ifbench")
from envgym.envs.ifbench import offline  # noqa: E402

# Grades all 294 of IFBench's sample replies in a fresh interpreter whose sockets refuse to connect, with no NLTK data
# folder of the user's (HOME and NLTK_DATA point at an empty directory), and counts what tried to go out.
OFFLINE_RUN = textwrap.dedent(
    """
    import json, socket, sys
    from importlib import resources
    attempts = []
    def refuse(self, address, *args, **kwargs):
        attempts.append(str(address))
        raise OSError("the network is off in this test")
    socket.socket.connect = refuse
    import nltk
    downloads = []
    nltk.download = lambda *args, **kwargs: downloads.append(args) or False
    import envgym
    env = envgym.make("ifbench/IFBench-v0")
    text = resources.files("ifbench").joinpath("data/sample_output.jsonl").read_text(encoding="utf-8")
    replies = {record["prompt"]: record["response"] for record in map(json.loads, text.splitlines())}
    followed = 0
    for index in range(len(env.unwrapped.tasks)):
        messages, _ = env.reset(options={"task_index": index})
        followed += env.step(replies[messages[-1]["content"]])[1]
    print(json.dumps({"followed": followed, "attempts": attempts, "downloads": downloads}))
    """
)


def test_all_294_prompts_grade_with_the_network_off_and_no_nltk_data_of_the_user(tmp_path):
    env = {"HOME": str(tmp_path), "NLTK_DATA": str(tmp_path), "PATH": "/usr/bin:/bin"}
    run = subprocess.run([sys.executable, "-c", OFFLINE_RUN], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result == {"followed": 77.0, "attempts": [], "downloads": []}
    assert not list(tmp_path.iterdir())  # nothing was downloaded or cached into the user's folders


def test_the_nltk_data_folder_is_the_one_llama_index_core_ships():
    folder = offline.nltk_data_dir()
    assert folder is not None and folder.parts[-3:] == ("core", "_static", "nltk_cache")
    assert (folder / "tokenizers" / "punkt_tab" / "english").is_dir()
    assert (folder / "corpora" / "stopwords" / "english").is_file()


def test_missing_nltk_data_names_the_package_to_install(monkeypatch):
    monkeypatch.setattr(offline, "nltk_data_dir", lambda: None)
    with pytest.raises(offline.MissingNLTKData, match="pip install --no-deps llama-index-core"):
        offline.load_ifbench.__wrapped__()


def test_an_nltk_resource_envgym_does_not_provide_is_refused_not_downloaded():
    with pytest.raises(offline.MissingNLTKData, match="'wordnet'"):
        offline.load_ifbench().instructions.nltk.download("wordnet")


def test_the_packaged_tagger_tags_nltk_s_own_doctest_sentence_as_nltk_documents():
    import nltk

    tokens = nltk.word_tokenize("John's big idea isn't all that bad.")
    assert offline.perceptron_tagger().tag(tokens) == [
        ("John", "NNP"),
        ("'s", "POS"),
        ("big", "JJ"),
        ("idea", "NN"),
        ("is", "VBZ"),
        ("n't", "RB"),
        ("all", "PDT"),
        ("that", "DT"),
        ("bad", "JJ"),
        (".", "."),
    ]


def test_the_tagger_model_loader_refuses_a_pickle_that_would_run_code():
    class RunsCode:
        def __reduce__(self):
            return (print, ("ran",))

    import io

    with pytest.raises(pickle.UnpicklingError, match="only plain data"):
        offline._ModelOnly(io.BytesIO(pickle.dumps(RunsCode()))).load()
