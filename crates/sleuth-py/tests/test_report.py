"""`sleuth.report` is `sleuth report` through the library's one entry point: the same
tables (chosen by `tables=` or a recipe), the same pages (`index.html` with the tables,
`questions.html`, trace pages), tidy tables with their model and label columns, and the
same baselines refused, worded with keywords."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import sleuth
from models import CountySeatReader, searcher


@pytest.fixture(scope="module")
def run(musique, tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "mq2"
    sleuth.eval("musique", musique, methods="react,sleuth", model=CountySeatReader(), out=out, hops=2, limit=3, turns=4)
    return out


def index_tables(page):
    return re.findall(r'<table class="paper" id="table-([a-z0-9_]+)"', page.read_text())


def test_html_writes_the_index_with_the_tables_and_the_questions_page(run, tmp_path):
    out = tmp_path / "report"
    rep = sleuth.report(run, baseline="react", out=out, html=True)
    assert rep.index == out / "index.html" and rep.questions == out / "questions.html"
    index = rep.index.read_text()
    # The results tables, as `sleuth report --html` puts them on the index: for runs no
    # recipe names tables for, the accuracy and comparison tables.
    assert "<h2>Results</h2>" in index
    assert {"summary", "comparison"} <= set(index_tables(rep.index)) <= {"pivot", "summary", "comparison"}
    assert rep.titles["summary"] in index
    # It links the side-by-side page, the trace page and the written files.
    assert 'href="questions.html"' in index and 'href="trace.html"' in index
    assert 'href="summary.csv"' in index
    questions = rep.questions.read_text()
    qids = set(sleuth.records(run)["id"])
    assert len(qids) == 3 and all(q in questions for q in qids)
    assert 'href="trace.html' in questions
    assert rep.html == [out / "trace.html"] and rep.html[0].is_file()
    # Without `out`, the pages go into the one run directory given, as in the CLI.
    beside = sleuth.report(run, html=True)
    assert beside.index == run / "index.html" and beside.questions.is_file()
    assert beside.html == [run / "trace.html"]
    # Without `html`, no pages.
    plain = sleuth.report(run, out=tmp_path / "plain")
    assert plain.index is None and plain.html == [] and plain.files


def test_tables_choose_the_tables_shown_and_written(run, tmp_path):
    default = sleuth.report(run)
    assert "summary" in default.tables and "accuracy_at_turn" not in default.tables
    everything = sleuth.report(run, tables="all")
    assert set(default.tables) < set(everything.tables) and "accuracy_at_turn" in everything.tables
    rep = sleuth.report(run, baseline="react", tables=["comparison", "summary"], out=tmp_path / "two", html=True)
    assert list(rep.tables) == ["comparison", "summary"]
    assert rep.markdown.index(rep.titles["comparison"]) < rep.markdown.index(rep.titles["summary"])
    assert index_tables(rep.index) == ["comparison", "summary"]
    written = {p.name for p in rep.files}
    assert {"comparison.csv", "summary.csv", "comparison.md", "comparison.tex"} <= written
    # A comma-separated string as on the command line; a table with nothing to show.
    rep = sleuth.report(run, tables="summary,eir_support_f1")
    assert list(rep.tables) == ["summary"] and rep.empty == ["eir_support_f1"]
    with pytest.raises(sleuth.SleuthError, match=r"unknown table `nope` \(known: all, "):
        sleuth.report(run, tables=["summary", "nope"])


def test_tables_have_the_model_and_label_columns(run, musique, tmp_path):
    rep = sleuth.report(run, baseline="react")
    model = json.loads((run / "run.json").read_text())["model"]
    for name in ["summary", "comparison"]:
        df = rep.tables[name]
        assert list(df.columns[:4]) == ["dataset", "model", "method", "label"], name
        assert set(df["model"]) == {model} and set(df["dataset"]) == {"musique_2hop"}, name
    assert set(rep.tables["summary"]["method"]) == {"react", "sleuth"}
    # One run, nothing swept: the label is empty, as in the CLI's CSV.
    assert list(rep.tables["summary"]["label"]) == ["", ""]
    # A sweep over runs: one arm per setting, told apart by the label.
    a, b = tmp_path / "t3", tmp_path / "t4"
    qs = sleuth.load("musique", musique, hops=2, limit=2)
    sleuth.eval(qs, methods="react", model=searcher, out=a, turns=3)
    sleuth.eval(qs, methods="react", model=searcher, out=b, turns=4)
    sweep = sleuth.report([a, b]).tables["summary"]
    assert sorted(sweep["label"]) == ["turns=3", "turns=4"] and set(sweep["method"]) == {"react"}
    # A sweep's method is no baseline: the message names the keyword and the arms.
    with pytest.raises(sleuth.MethodError) as info:
        sleuth.report([a, b], baseline="react")
    message = str(info.value)
    assert message == "baseline='react' has 2 arms; name one: baseline='react [turns=3]', baseline='react [turns=4]'", message
    paired = sleuth.report([a, b], baseline="react [turns=3]")
    assert list(paired.tables["comparison"]["label"]) == ["turns=4"]


def test_a_bad_baseline_or_option_raises_naming_the_keyword(run):
    with pytest.raises(sleuth.MethodError) as info:
        sleuth.report(run, baseline="nope")
    assert str(info.value) == "baseline='nope' has no records (present: react, sleuth)"
    assert type(info.value).__module__ == "sleuth"
    with pytest.raises(sleuth.SleuthError, match=r"^holm_family=\"nope\": expected one of all, dataset"):
        sleuth.report(run, holm_family="nope")
    with pytest.raises(sleuth.SleuthError, match=r"^reasoning_evidence=\"most\": expected one of any, all"):
        sleuth.report(run, reasoning_evidence="most")
    with pytest.raises(sleuth.SleuthError, match=r"^error_classes=\"most\": expected one of defined, sums"):
        sleuth.report(run, error_classes="most")
    with pytest.raises(sleuth.SleuthError, match=r"^direction=\"up\": expected one of method-minus-baseline"):
        sleuth.report(run, direction="up")
    with pytest.raises(sleuth.SleuthError) as info:
        sleuth.report(run, resamples=0)
    assert str(info.value).startswith("resamples= must be 1 to") and "--" not in str(info.value)
    with pytest.raises(sleuth.SleuthError, match="cohort= must be at least 1 turn"):
        sleuth.report(run, cohort=0)


def test_holm_keywords_reach_the_comparison(run):
    # The comparison's note says which Holm families were used, and their counted size.
    default = sleuth.report(run, baseline="react").markdown
    assert "across all rows" in default and "counted as" not in default
    shaped = sleuth.report(run, baseline="react", holm_family="dataset", holm_size=5).markdown
    assert "within each dataset, each family counted as 5 comparisons" in shaped
    rep = sleuth.report(run, reasoning_evidence="all")
    assert "summary" in rep.tables


def cli_binary(repo):
    """The `sleuth` executable a `cargo build`/`cargo test` left (or `$SLEUTH_CLI`)."""
    if os.environ.get("SLEUTH_CLI"):
        return Path(os.environ["SLEUTH_CLI"])
    target = Path(os.environ.get("CARGO_TARGET_DIR", repo / "target"))
    for profile in ["debug", "release"]:
        if (target / profile / "sleuth").is_file():
            return target / profile / "sleuth"
    found = shutil.which("sleuth")
    return Path(found) if found else None


def test_the_files_and_pages_are_the_clis_byte_for_byte(run, repo, tmp_path):
    cli = cli_binary(repo)
    if cli is None:
        pytest.skip("no sleuth executable built (cargo build -p sleuth-cli, or set SLEUTH_CLI)")
    args = ["--baseline", "react", "--tables", "comparison,summary,agent", "--holm-family", "dataset"]
    done = subprocess.run([cli, "report", run, *args, "--out", tmp_path / "cli", "--html"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    rep = sleuth.report(run, baseline="react", tables="comparison,summary,agent", holm_family="dataset", out=tmp_path / "py", html=True)
    cli_files = sorted(p.relative_to(tmp_path / "cli") for p in (tmp_path / "cli").rglob("*") if p.is_file())
    py_files = sorted(p.relative_to(tmp_path / "py") for p in (tmp_path / "py").rglob("*") if p.is_file())
    assert cli_files == py_files and Path("index.html") in py_files and Path("questions.html") in py_files
    for f in cli_files:
        assert (tmp_path / "cli" / f).read_bytes() == (tmp_path / "py" / f).read_bytes(), f
    # What the CLI prints is the Markdown the Report carries.
    assert done.stdout == rep.markdown


def test_conventions_choose_whose_rules_and_a_keyword_sets_one_over_them(run):
    eir = sleuth.report(run, baseline="react", conventions="eir")
    assert eir.markdown.startswith("_conventions: eir (the EIR paper's): MuSiQue pooled; Holm families: baseline; bootstrap p: add-one")
    split = sleuth.report(run, baseline="react", conventions="eir", musique="splits", holm_family="all")
    assert split.markdown.startswith("_conventions: eir (the EIR paper's): MuSiQue by hop split; Holm families: all;")
    assert sleuth.report(run).markdown.startswith("_conventions: ours")
    with pytest.raises(sleuth.SleuthError, match='conventions="nope": expected one of ours, sleuth, eir'):
        sleuth.report(run, conventions="nope")


def test_aliases_off_is_said_in_the_header_and_a_bad_value_is_refused(run):
    first = sleuth.report(run).markdown.splitlines()[0]
    assert first.endswith("EM and F1 against gold answers and their aliases_")
    off = sleuth.report(run, aliases="off").markdown.splitlines()[0]
    assert off.endswith("EM and F1 against the first gold answer alone (--aliases off)_")
    with pytest.raises(sleuth.SleuthError, match='aliases="maybe": expected one of on, off'):
        sleuth.report(run, aliases="maybe")
