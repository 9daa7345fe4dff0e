"""Experiment tracking: a 2-step tiny-model run with report_to trackio, wandb (offline) and tensorboard; each
library's own files read back hold the metrics of metrics.jsonl (same names, same steps), the config and the
rollout tables. A backend whose library is absent is skipped."""

import glob
import importlib.util
import json
import re
import struct

import pytest

pytest.importorskip("torch")

from helpers.tiny_models import tiny_model_path  # noqa: E402

from envgym.agents.training import tracking  # noqa: E402
from envgym.agents.training.config import GRPOConfig  # noqa: E402
from envgym.cli.preflight import check_report_to
from envgym.config import BadInput  # noqa: E402
from envgym.core import Env, Task, action_text  # noqa: E402
from envgym.tasks.sources import ListTaskSource  # noqa: E402

INSTALLED = [name for name in tracking.TRACKERS if importlib.util.find_spec(name) is not None]
PROJECT = "envgym-tests"


class SayDigit(Env):
    """One turn: reward 1 when the reply's first digit is 7."""

    def __init__(self):
        self.tasks = ListTaskSource(
            [Task(id="digit-7", messages=[{"role": "user", "content": "Say the digit 7."}], answer="7")]
        )

    def _reset(self, task, options):
        return task.prompt(), {}

    def _step(self, action):
        correct = float(re.findall(r"\d", action_text(action))[:1] == ["7"])
        return [], correct, True, False, {"reward_components": {"correct": correct}, "correct": bool(correct)}


@pytest.fixture(scope="module")
def tracked_run(tmp_path_factory):
    """(out dir, metrics.jsonl lines) of a 2-step run reporting to every installed tracker, all on local disk."""
    if not INSTALLED:
        pytest.skip("no tracker library installed (pip install 'envgym[tracking]')")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.training.trainer import GRPOTrainer

    root = tmp_path_factory.mktemp("tracking")
    out = root / "tracked-run"
    with pytest.MonkeyPatch.context() as patch:
        # trackio reads TRACKIO_DIR when first imported: set before the trainer imports it
        for key, value in {
            "TRACKIO_DIR": root / "trackio",
            "TRACKIO_PROJECT": PROJECT,
            "WANDB_MODE": "offline",
            "WANDB_DIR": root / "wandb",
            "WANDB_PROJECT": PROJECT,
            "WANDB_SILENT": "true",
        }.items():
            patch.setenv(key, str(value))
        config = GRPOConfig(
            num_generations=2,
            num_tasks_per_step=1,
            max_completion_length=3,
            max_steps=2,
            report_to=INSTALLED,
            report_samples=2,
        )
        path = tiny_model_path()
        GRPOTrainer(
            AutoModelForCausalLM.from_pretrained(path),
            AutoTokenizer.from_pretrained(path),
            SayDigit,
            config,
            device="cpu",
            out_dir=out,
        ).train()
    lines = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    return root, out, lines


def numeric(line):
    return {key: float(value) for key, value in line.items() if key != "step" and isinstance(value, (int, float))}


def assert_same_numbers(logged, lines, rel=1e-9):
    """``logged`` ({step: {name: value}}) holds exactly the numeric metrics of each metrics.jsonl line."""
    assert sorted(logged) == [line["step"] for line in lines]
    for line in lines:
        expected = numeric(line)
        assert set(logged[line["step"]]) == set(expected), line["step"]
        for key, value in expected.items():
            assert logged[line["step"]][key] == pytest.approx(value, rel=rel, nan_ok=True), key


# --- report_to ----------------------------------------------------------------------------------------
def test_report_to_takes_a_list_or_a_comma_string():
    assert tracking.parse_report_to("wandb, TensorBoard,wandb") == ["wandb", "tensorboard"]
    assert tracking.parse_report_to(["trackio"]) == ["trackio"]
    assert tracking.parse_report_to("none") == tracking.parse_report_to(None) == []


def test_an_unknown_tracker_is_refused_with_the_accepted_names():
    with pytest.raises(ValueError, match="unknown tracker 'mlflow'; accepted: trackio, wandb, tensorboard"):
        GRPOConfig(report_to="wandb,mlflow")


def test_preflight_refuses_an_unknown_tracker_in_one_line():
    with pytest.raises(BadInput, match="--report-to: .*unknown tracker 'comet'"):
        check_report_to("comet", where="--report-to")


def test_a_missing_tracker_library_names_the_extra(monkeypatch):
    monkeypatch.setattr(tracking.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(BadInput, match=r"needs the wandb package: pip install 'envgym\[tracking\]'"):
        check_report_to("wandb", where="recipe")


def test_train_refuses_an_unknown_tracker_before_loading_a_model():
    from envgym.cli.train import plan_training

    with pytest.raises(BadInput, match="unknown tracker 'mlflow'"):
        plan_training(
            env="math/Arithmetic-v0",
            model=tiny_model_path(),
            config=None,
            env_kwargs=None,
            resume=None,
            engine="transformers",
            overrides={"report_to": "mlflow"},
        )


def test_wandb_without_credentials_says_how_to_log_offline(tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    for key in ("WANDB_MODE", "WANDB_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("NETRC", str(tmp_path / "no-netrc"))
    with pytest.raises(RuntimeError, match="set WANDB_MODE=offline"):
        tracking.open_trackers("wandb", out_dir=tmp_path, name="run", config={})


# --- TensorBoard --------------------------------------------------------------------------------------
def tensorboard_events(out):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(out / "tensorboard"), size_guidance={"scalars": 0, "tensors": 0})
    events.Reload()
    return events


def text_of(events, tag):
    return {event.step: event.tensor_proto.string_val[0].decode() for event in events.Tensors(f"{tag}/text_summary")}


def test_tensorboard_holds_the_metrics_of_metrics_jsonl(tracked_run):
    _, out, lines = tracked_run
    events = tensorboard_events(out)
    logged = {}
    for tag in events.Tags()["scalars"]:
        for event in events.Scalars(tag):
            logged.setdefault(event.step, {})[tag] = event.value
    assert_same_numbers(logged, lines, rel=1e-6)  # TensorBoard stores float32


def test_tensorboard_holds_the_config_and_rollout_tables(tracked_run):
    _, out, lines = tracked_run
    events = tensorboard_events(out)
    assert '"report_samples": 2' in text_of(events, "config")[0]
    tables = text_of(events, "rollouts")
    assert sorted(tables) == [1, 2]
    assert tables[1].startswith("| step | env_id | task_id |") and "user: Say the digit 7." in tables[1]


# --- Weights & Biases (offline) -----------------------------------------------------------------------
def wandb_records(root):
    """The records of the offline run's .wandb file (a LevelDB-style log of protobuf records)."""
    pytest.importorskip("wandb")
    from wandb.proto import wandb_internal_pb2

    (path,) = glob.glob(str(root / "wandb" / "wandb" / "offline-run-*" / "run-*.wandb"))
    data, position, block, pending = open(path, "rb").read(), 7, 32768, b""  # 7: the ":W&B" header
    while position + 7 <= len(data):
        if block - position % block < 7:  # a block's tail too short for a record header is padding
            position += block - position % block
            continue
        _, length, kind = struct.unpack("<IHB", data[position : position + 7])
        pending += data[position + 7 : position + 7 + length]
        position += 7 + length
        if kind in (1, 4):  # a full record, or the last piece of one
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            pending = b""
            yield record


def test_wandb_offline_history_holds_the_metrics_of_metrics_jsonl(tracked_run):
    root, _, lines = tracked_run
    logged = {}
    for record in wandb_records(root):
        if record.WhichOneof("record_type") == "history":
            row = {item.key or "/".join(item.nested_key): json.loads(item.value_json) for item in record.history.item}
            step = row.pop("_step")
            logged.setdefault(step, {}).update(
                {key: float(value) for key, value in row.items() if not key.startswith(("_", "rollouts"))}
            )
    assert_same_numbers(logged, lines)


def test_wandb_offline_run_holds_the_config_and_rollout_tables(tracked_run):
    root, _, _ = tracked_run
    runs = [record.run for record in wandb_records(root) if record.WhichOneof("record_type") == "run"]
    config = {item.key: json.loads(item.value_json) for item in runs[0].config.update}
    assert config["report_samples"] == 2 and config["env"] == "SayDigit"
    (table_file, *_) = sorted(
        glob.glob(
            str(root / "wandb" / "wandb" / "offline-run-*" / "files" / "media" / "table" / "rollouts_1_*.table.json")
        )
    )
    table = json.loads(open(table_file).read())
    assert table["columns"] == tracking.SAMPLE_COLUMNS and len(table["data"]) == 2


# --- trackio ------------------------------------------------------------------------------------------
def trackio_logs(out):
    pytest.importorskip("trackio")
    from trackio.sqlite_storage import SQLiteStorage

    return SQLiteStorage, SQLiteStorage.get_logs(PROJECT, out.name)


def test_trackio_holds_the_metrics_of_metrics_jsonl(tracked_run):
    _, out, lines = tracked_run
    _, logs = trackio_logs(out)
    logged = {}
    for row in logs:
        logged.setdefault(row["step"], {}).update(
            {key: float(value) for key, value in row.items() if key not in ("step", "timestamp", "rollouts")}
        )
    assert_same_numbers(logged, lines)


def test_trackio_holds_the_config_and_rollout_tables(tracked_run):
    _, out, _ = tracked_run
    storage, logs = trackio_logs(out)
    assert storage.get_run_config(PROJECT, out.name)["report_samples"] == 2
    tables = {row["step"]: row["rollouts"]["_value"] for row in logs if "rollouts" in row}
    assert sorted(tables) == [1, 2] and len(tables[1]) == 2
    assert tables[1][0]["transcript"].startswith("user: Say the digit 7.")


# --- envgym eval --------------------------------------------------------------------------------------
def test_eval_refuses_an_unknown_tracker_before_the_model(tmp_path):
    from typer.testing import CliRunner

    from envgym.cli.app import app

    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--env",
            "math/Arithmetic-v0",
            "--model",
            "no/such-model",
            "--report-to",
            "mlflow",
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 2 and "unknown tracker 'mlflow'" in result.output


def test_eval_sends_each_envs_results_and_samples_to_tensorboard(tmp_path):
    pytest.importorskip("tensorboard")
    from typer.testing import CliRunner

    from envgym.cli.app import app

    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--env",
            "math/Arithmetic-v0",
            "--num-generations",
            "2",
            "--n-tasks",
            "1",
            "--max-completion-length",
            "4",
            "--model",
            tiny_model_path(),
            "--out",
            str(tmp_path),
            "--report-to",
            "tensorboard",
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "results.json").read_text())["envs"]["math/Arithmetic-v0"]
    events = tensorboard_events(tmp_path)
    for key in ("pass@1", "mean_reward", "n_samples"):
        assert events.Scalars(f"math/Arithmetic-v0/{key}")[0].value == pytest.approx(summary[key], rel=1e-6)
    table = text_of(events, "samples/math/Arithmetic-v0")[0]
    assert table.count("\n") == 1 + 2 and "assistant: " in table  # header, rule, then the 2 samples
