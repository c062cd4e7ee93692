"""The same recipes through the CLI and through Python give the same files (issue 45):
records, the experiment's manifest and the report's tables, figures and pages. Both
front ends only convert arguments and print; the runs, the manifest and the report's
files are the library's. The CLI binary is the one `cargo build -p sleuth-cli` made
(scripts/test-python builds it and names it in SLEUTH_BIN)."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import sleuth

# What differs between any two runs, whoever starts them: wall-clock time.
VOLATILE = {"elapsed_s", "started_at", "finished_at", "wall_s"}


def _bin() -> str:
    path = os.environ.get("SLEUTH_BIN")
    if not path or not Path(path).is_file():
        pytest.fail("SLEUTH_BIN names no sleuth binary; run the tests with scripts/test-python")
    return path


def _files(root: Path) -> dict:
    """Every file under `root` by relative path: JSON Lines records without their
    timings, anything else byte for byte."""
    out = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = str(path.relative_to(root))
        if path.name == "run.lock":
            continue
        if path.name == "records.jsonl":
            rows = [json.loads(l) for l in path.read_text().splitlines() if l.strip()]
            out[rel] = [{k: v for k, v in r.items() if k not in VOLATILE} for r in rows]
        else:
            out[rel] = path.read_bytes()
    return out


RECIPES = {
    "grid": 'name = "grid"\ndescription = "a sweep"\nlimit = 3\nmethods = ["react"]\n'
    '[settings]\nturns = 2\n[[datasets]]\nname = "musique"\nhops = [2]\n'
    '[[groups]]\nmethods = ["react", "self-ask"]\ngrid = { turns = [1, 2] }\n',
    "paper": 'name = "paper"\ndescription = "two methods, two splits"\nsample = 4\nseed = 7\n'
    'methods = ["react", "sleuth"]\nconventions = "sleuth"\ntables = ["summary"]\n'
    '[settings]\nturns = 3\n[[datasets]]\nname = "musique"\nhops = [2, 3]\n',
}


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_a_recipe_through_the_cli_and_through_python_gives_the_same_files(name, musique, tmp_path):
    recipe = tmp_path / f"{name}.toml"
    recipe.write_text(RECIPES[name])
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(["Thought: look.\nAction: search[county seat]"]))
    model = f"scripted:{replies}"
    run, rep = tmp_path / "run", tmp_path / "report"
    seen = {}
    for front in ["cli", "python"]:
        if front == "cli":
            subprocess.run(
                [_bin(), "experiment", str(recipe), "--model", model, "--out", str(run),
                 "--data", f"musique={musique}", "--no-cache"],
                check=True, capture_output=True,
            )
            subprocess.run(
                [_bin(), "report", str(run), "--out", str(rep), "--html"],
                check=True, capture_output=True,
            )
        else:
            sleuth.experiment(recipe, model=model, out=run, data={"musique": musique}, cache=False)
            sleuth.report(run, out=rep, html=True)
        seen[front] = (_files(run), _files(rep))
        shutil.rmtree(run)
        shutil.rmtree(rep)
    (cli_run, cli_rep), (py_run, py_rep) = seen["cli"], seen["python"]
    assert "experiment.json" in cli_run and any(k.endswith("records.jsonl") for k in cli_run)
    assert sorted(cli_run) == sorted(py_run)
    for rel in cli_run:
        if isinstance(cli_run[rel], list):
            for a, b in zip(cli_run[rel], py_run[rel]):
                diff = {k: (a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k)}
                assert not diff, (rel, diff)
        assert cli_run[rel] == py_run[rel], rel
    assert "index.html" in cli_rep and "summary.csv" in cli_rep
    assert sorted(cli_rep) == sorted(py_rep)
    for rel in cli_rep:
        assert cli_rep[rel] == py_rep[rel], rel
