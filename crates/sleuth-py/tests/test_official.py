"""`sleuth.export` and `sleuth.score` are `sleuth export` and `sleuth score --json`
through the library's entry points: the gold subset beside a limited run's predictions,
each official script's keys on its scale, the CLI's numbers, and refusals worded with
keywords."""

import json
import subprocess

import pytest

import sleuth
from models import CountySeatReader
from test_report import cli_binary


@pytest.fixture(scope="module")
def run(musique, tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "mq"
    sleuth.eval("musique", musique, methods="react,sleuth", model=CountySeatReader(), out=out, hops=2, limit=3, turns=4)
    return out


def test_export_writes_the_gold_subset_and_the_official_command(run, tmp_path):
    exported = sleuth.export(run, method="react", out=tmp_path / "react.jsonl")
    assert exported.format == "musique" and exported.count == 3
    assert exported.out == tmp_path / "react.jsonl"
    assert exported.gold == tmp_path / "react.gold.jsonl"
    gold_ids = [json.loads(line)["id"] for line in exported.gold.read_text().splitlines()]
    predicted = [json.loads(line)["id"] for line in exported.out.read_text().splitlines()]
    assert gold_ids == predicted, "one gold line per prediction, in the same order"
    assert exported.official_command[1:] == ["evaluate_v1.0.py", str(exported.out), str(exported.gold)]
    assert "StonyBrookNLP/musique" in exported.script["repository"]


def test_score_gives_the_official_keys_on_their_scale_and_the_records_numbers(run, tmp_path):
    exported = sleuth.export(run, method="react", out=tmp_path / "react.jsonl")
    scores = sleuth.score(exported.out, dataset="musique", data=exported.gold)
    assert scores["scale"] == "0-1" and scores["official_rounding"] == 3
    assert scores["n"] == 3 and scores["missing"] == 0
    records = sleuth.records(run)
    react = records[records["method"] == "react"]
    assert scores["answer_em"] == pytest.approx(react["em"].mean())
    assert scores["answer_f1"] == pytest.approx(react["f1"].mean())
    # Against the whole file, `run=` narrows to the run's questions.
    narrowed = sleuth.score(exported.out, dataset="musique", data=exported.data, run=run)
    assert narrowed["scored"] == "run" and narrowed["n"] == 3
    assert narrowed["answer_f1"] == scores["answer_f1"]
    # Over the whole file the unpredicted questions score 0, and the library says how
    # to score only the predicted ones, as the CLI does.
    with pytest.warns(UserWarning, match="only_predicted=True"):
        whole = sleuth.score(exported.out, dataset="musique", data=exported.data)
    assert whole["scored"] == "all" and whole["missing"] == whole["n"] - 3 > 0


def test_the_numbers_are_the_clis(run, repo, tmp_path):
    cli = cli_binary(repo)
    if cli is None:
        pytest.skip("no sleuth executable built (cargo build -p sleuth-cli, or set SLEUTH_CLI)")
    exported = sleuth.export(run, method="sleuth", out=tmp_path / "s.jsonl")
    done = subprocess.run(
        [cli, "score", "--dataset", "musique", "--data", exported.gold, "--predictions", exported.out, "--json"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == sleuth.score(exported.out, dataset="musique", data=exported.gold)
    cli_export = tmp_path / "cli.jsonl"
    done = subprocess.run([cli, "export", run, "--method", "sleuth", "--out", cli_export], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert cli_export.read_text() == exported.predictions
    assert (tmp_path / "cli.gold.jsonl").read_text() == exported.gold.read_text()


def test_refusals_name_keywords(run, tmp_path):
    with pytest.raises(sleuth.MethodError) as info:
        sleuth.export(run)
    assert "method=" in str(info.value) and "--method" not in str(info.value)
    records = tmp_path / "records.jsonl"
    records.write_text((run / "records.jsonl").read_text())
    with pytest.raises(sleuth.DataError) as info:
        sleuth.score(records, dataset="musique", data=run / "nothing.jsonl")
    assert "nothing.jsonl" in str(info.value)
    with pytest.raises(sleuth.DataError) as info:
        sleuth.score(records, dataset="musique", data=sleuth.export(run, method="react").data)
    assert "holds run records" in str(info.value) and "sleuth.export(" in str(info.value)
