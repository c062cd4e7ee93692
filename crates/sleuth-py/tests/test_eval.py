"""`sleuth.eval` (resume, errors recorded, the GIL released), `sleuth.records` (the
documented schema) and `sleuth.report`."""

import json
import re
import threading
import time

import pytest

import sleuth
from models import CountySeatReader, searcher


def documented_fields(repo):
    """The first-column names of docs/records.md's "Top-level fields" table."""
    text = (repo / "docs" / "records.md").read_text()
    section = text.split("## Top-level fields", 1)[1].split("\n## ", 1)[0]
    fields = []
    for line in section.splitlines():
        if line.startswith("| `"):
            first = line.split("|")[1]
            fields += re.findall(r"`([a-z0-9_]+)`", first)
    return fields


def test_eval_resumes_and_records_match_the_documented_schema(musique, tmp_path, repo):
    out = tmp_path / "run"
    first = sleuth.eval("musique", musique, methods="react,sleuth", model=searcher, out=out, limit=2, turns=3)
    assert (first.planned, first.written, first.skipped, first.errors) == (4, 4, 0, 0)
    assert first.calls == 4 * 3
    # A larger selection on the same directory runs only what is missing.
    qs = sleuth.load("musique", musique, limit=3)
    second = sleuth.eval(qs, methods=["react", "sleuth"], model=searcher, out=out, turns=3)
    assert (second.planned, second.written, second.skipped) == (6, 2, 4)
    third = sleuth.eval(qs, methods=["react", "sleuth"], model=searcher, out=out, turns=3)
    assert (third.written, third.skipped, third.calls) == (0, 6, 0)
    run = json.loads((out / "run.json").read_text())
    assert run["model"] == "python:searcher" and run["method_settings"]["react"]["turns"] == "3"

    df = sleuth.records(out)
    assert len(df) == 6
    assert set(df.columns) == set(documented_fields(repo)) and len(df.columns) == len(set(df.columns))
    assert list(df.columns) == sleuth.record_fields()
    assert (df["stop"] == "timeout").all() and (df["turns"] == 3).all()
    assert sorted(df["method"].unique()) == ["react", "sleuth"] and df["id"].nunique() == 3
    # A resumed run must match the first one's settings, as on the command line.
    with pytest.raises(sleuth.SleuthError, match="other conditions: setting turns was `3` and is `4` now"):
        sleuth.eval(qs, methods="react", model=searcher, out=out, turns=4)


def test_an_exception_in_the_callable_is_recorded_and_the_run_goes_on(musique, tmp_path):
    qs = sleuth.load("musique", musique, hops=2, limit=3)
    victim = qs[1]
    reader = CountySeatReader()

    def flaky(messages, **kw):
        if victim.text in messages[-1]["content"] or any(victim.text in m["content"] for m in messages):
            raise RuntimeError("out of memory on question two")
        return reader.complete(messages, **kw)

    summary = sleuth.eval(qs, methods="react", model=flaky, out=tmp_path / "run", turns=4)
    assert (summary.written, summary.errors) == (3, 1)
    assert "RuntimeError: out of memory on question two" in summary.first_error
    df = sleuth.records(tmp_path / "run").set_index("id")
    assert df.loc[victim.id, "stop"] == "error"
    assert df.loc[victim.id, "error"] == "model call failed: python:flaky raised RuntimeError: out of memory on question two"
    others = df.drop(victim.id)
    assert others["error"].isna().all() and (others["stop"] != "error").all()
    # The reader answers the Van Hook question (the first 2-hop one).
    assert df.loc["2hop__574419_270105", "answer"] == "Stanley"
    # A rerun skips the error record unless asked to retry it.
    again = sleuth.eval(qs, methods="react", model=flaky, out=tmp_path / "run", turns=4)
    assert (again.written, again.skipped_errors) == (0, 1)


def test_every_question_failing_raises_like_the_cli(musique, tmp_path):
    def down(messages, **kw):
        raise ConnectionError("no server")

    with pytest.raises(sleuth.SleuthError, match=r"^every question failed \(first error: model call failed: python:down raised ConnectionError: no server\)") as info:
        sleuth.eval("musique", musique, methods="react", model=down, out=tmp_path / "r", limit=2)
    assert info.value.summary["errors"] == 2


def test_a_template_error_is_not_blamed_on_the_model(musique, tmp_path):
    """The library's verdict says where the fix lies, in Python's words (prompts=)."""
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "react.txt").write_text("Bad {{ no_such_variable }}\n")
    with pytest.raises(sleuth.SleuthError) as info:
        sleuth.eval("musique", musique, methods="react", model=searcher, out=tmp_path / "r",
                    limit=2, prompts=prompts)
    message = str(info.value)
    assert "prompt template react.txt" in message, message
    assert "fix the prompt template (prompts=)" in message, message
    assert "model endpoint and key" not in message and "--" not in message, message
    assert info.value.summary["verdict"] == {
        "kind": "all_failed", "first_error": info.value.summary["first_error"], "cause": "template",
    }


def test_the_gil_is_released_while_eval_runs(musique, tmp_path):
    """A rate-limited Rust scripted model makes eval wait in Rust: a Python thread
    counting meanwhile must keep running (it would stall if eval held the GIL)."""
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(["Thought: look.\nAction: search[county seat]"]))
    counted = []
    stop = threading.Event()

    def count():
        n = 0
        while not stop.is_set():
            n += 1
        counted.append(n)

    # Warm up: what the thread counts per second with nothing else running.
    t = threading.Thread(target=count)
    start = time.perf_counter()
    t.start()
    time.sleep(0.3)
    stop.set()
    t.join()
    idle_rate = counted[0] / (time.perf_counter() - start)

    stop.clear()
    t = threading.Thread(target=count)
    t.start()
    start = time.perf_counter()
    summary = sleuth.eval(
        "musique", musique, methods="react", model=f"scripted:{script}", out=tmp_path / "run",
        limit=3, turns=8, rpm=600, cache=False, concurrency=1,
    )
    took = time.perf_counter() - start
    stop.set()
    t.join()
    # 600 a minute: a burst of 10 calls, then one every 100 ms.
    assert summary.calls == 24 and took > 1.0, took
    # Most of the thread's idle speed was kept while eval ran.
    assert counted[1] / took > 0.3 * idle_rate, (counted[1], took, idle_rate)


def test_evals_closing_scores_are_the_reports_summary(musique, tmp_path):
    """One fold of the scores: eval's closing table (``EvalSummary.scores``, as the CLI
    prints it) gives the n, EM and F1 the report's summary table gives."""
    run = tmp_path / "run"
    done = sleuth.eval("musique", musique, methods="react,sleuth", model=CountySeatReader(), out=run, hops=2, limit=3, turns=4)
    closing = done.to_pandas().set_index("method")
    assert list(closing.index) == ["react", "sleuth"] and list(closing["arm"]) == ["react", "sleuth"]
    assert closing["support_f1"].isna().all()
    summary = sleuth.report(run).tables["summary"].set_index("method")
    for method in ["react", "sleuth"]:
        assert closing.loc[method, "n"] == summary.loc[method, "n"] == 3
        for col in ["em", "f1"]:
            assert closing.loc[method, col] == pytest.approx(summary.loc[method, col], abs=0.05)


def test_report_gives_tables_figures_and_html(musique, tmp_path):
    run = tmp_path / "run"
    sleuth.eval("musique", musique, methods="react,sleuth", model=CountySeatReader(), out=run, hops=2, limit=3, turns=4)
    rep = sleuth.report(run, baseline="react", out=tmp_path / "report", html=True)
    summary = rep.tables["summary"]
    assert len(summary) == 2 and set(summary["method"]) == {"react", "sleuth"}
    # Tidy columns (snake_case, one value per cell), as `report --out` writes CSV.
    assert "em" in summary.columns and rep.titles["summary"] == "Accuracy and cost per method"
    # sleuth paired against the baseline.
    assert len(rep["comparison"]) == 1
    assert rep.figures and all(p.suffix == ".svg" for p in rep.figures)
    assert rep.files and all(p.exists() for p in rep.files)
    assert any(p.name == "report.json" for p in rep.files)
    assert rep.html == [tmp_path / "report" / "trace.html"] and rep.html[0].exists()
    assert "react" in repr(rep)
    with pytest.raises(sleuth.MethodError, match="baseline='nope' has no records"):
        sleuth.report(run, baseline="nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(sleuth.SleuthError, match="empty: no records.jsonl found"):
        sleuth.report(tmp_path / "empty")
    with pytest.raises(sleuth.SleuthError, match="missing: no such file or directory"):
        sleuth.report(tmp_path / "missing")


def test_eval_runs_exactly_the_questions_it_is_given(musique, tmp_path):
    qs = sleuth.load("musique", musique)
    assert len(qs) == 200
    # A slice, a filtered list and a Questions built by hand each run just themselves.
    sliced = sleuth.eval(qs[:3], methods="react", model=searcher, out=tmp_path / "a", turns=2)
    assert (sliced.planned, sliced.written) == (3, 3)
    three_hop = [q for q in qs if q.hops == 3][:2]
    filtered = sleuth.eval(three_hop, methods="react", model=searcher, out=tmp_path / "b", turns=2)
    assert filtered.planned == 2
    assert set(sleuth.records(tmp_path / "b")["id"]) == {q.id for q in three_hop}
    mine = sleuth.Question("Who wrote it?", [{"title": "A", "text": "Ann wrote it."}], id="mine", answers=["Ann"])
    built = sleuth.Questions([mine], "jsonl", "")
    hand = sleuth.eval(built, methods="react", model=searcher, out=tmp_path / "c", turns=2)
    assert hand.planned == 1 and list(sleuth.records(tmp_path / "c")["id"]) == ["mine"]
    # Selection arguments still narrow given questions.
    narrowed = sleuth.eval(qs[:10], methods="react", model=searcher, out=tmp_path / "d", limit=4, turns=2)
    assert narrowed.planned == 4
    with pytest.raises(sleuth.SleuthError, match="path= is only for a dataset name"):
        sleuth.eval(qs[:3], musique, methods="react", model=searcher, out=tmp_path / "e")
    with pytest.raises(sleuth.SleuthError, match="expected Question objects"):
        sleuth.eval(["not a question"], methods="react", model=searcher, out=tmp_path / "f")


def test_sample_offset_holds_out_setup_questions_disjoint_from_the_sample(musique, tmp_path):
    scored = sleuth.load("musique", musique, sample=50, seed=3)
    setup = sleuth.load("musique", musique, sample=20, seed=3, sample_offset=50)
    assert len(scored) == 50 and len(setup) == 20
    assert not {q.id for q in scored} & {q.id for q in setup}
    # The CLI's flags pick the same questions: eval records the offset in run.json.
    sleuth.eval("musique", musique, methods="react", model=searcher, out=tmp_path / "s",
                sample=20, seed=3, sample_offset=50, turns=1)
    run = json.loads((tmp_path / "s" / "run.json").read_text())
    assert (run["sample"], run["seed"], run["sample_offset"]) == (20, 3, 50)
    assert set(sleuth.records(tmp_path / "s")["id"]) == {q.id for q in setup}


def test_experiment_plans_and_runs_a_recipe(musique, tmp_path):
    recipe = tmp_path / "tiny.toml"
    recipe.write_text(
        'name = "tiny"\ndescription = "two splits"\nlimit = 2\nmethods = ["react"]\n'
        "[settings]\nturns = 2\n"
        '[[datasets]]\nname = "musique"\nhops = [2, 3]\n'
        '[[groups]]\nmethods = ["react"]\ngrid = { turns = [1, 2] }\n'
    )
    out = tmp_path / "out"
    plan = sleuth.experiment(recipe, model="openai:gpt-4o-mini", out=out, dry_run=True,
                             data={"musique": musique})
    assert len(plan.jobs) == 4 and all(j["summary"] is None for j in plan.jobs)
    first = plan.jobs[0]
    assert (first["dataset"], first["hops"], first["settings"]["turns"]) == ("musique", 2, "1")
    assert first["plan"]["questions"] == 2
    assert 0 < first["plan"]["total"]["calls"] < plan.jobs[1]["plan"]["total"]["calls"]
    assert not out.exists()
    done = sleuth.experiment(recipe, model=searcher, out=out, data={"musique": musique})
    assert [j["summary"].written for j in done.jobs] == [2, 2, 2, 2]
    turns = [set(sleuth.records(j["out"])["turns"]) for j in done.jobs]
    assert turns == [{1}, {2}, {1}, {2}]
    assert len(done.to_pandas()) == 4


def test_an_experiments_budget_is_shared_by_its_jobs(musique, tmp_path):
    """Two jobs of the same cost and a max_cost that covers the first: the second gets
    what the first left (too little for one call), not the whole budget again."""
    recipe = tmp_path / "twice.toml"
    recipe.write_text(
        'name = "twice"\nlimit = 2\n[settings]\nturns = 1\n'
        '[[datasets]]\nname = "musique"\nhops = [2]\n'
        '[[groups]]\nname = "first"\nmethods = ["react"]\n'
        '[[groups]]\nname = "second"\nmethods = ["react"]\n'
    )
    # Input tokens only, counted as the budget estimates a call before it is sent
    # (characters / 4): every call's reservation is what it is billed, whether a job's
    # calls overlap or not.
    def priced(messages, **kw):
        chars = sum(len(m["content"]) for m in messages)
        return {"text": searcher(messages), "input_tokens": -(-chars // 4), "output_tokens": 0}

    prices = tmp_path / "prices.toml"
    prices.write_text("[priced]\ninput = 100.0\noutput = 0.0\n")
    kw = dict(model=priced, model_name="priced", prices=prices, data={"musique": musique})
    free = sleuth.experiment(recipe, out=tmp_path / "free", **kw)
    costs = [j["summary"]["cost_usd"] for j in free.jobs]
    assert len(costs) == 2 and costs[0] > 0 and costs[0] == pytest.approx(costs[1])
    one_call = costs[0] / 2
    with pytest.raises(sleuth.BudgetExceeded) as info:
        sleuth.experiment(recipe, out=tmp_path / "budget", max_cost=costs[0] + 0.9 * one_call, **kw)
    assert "max_cost" in str(info.value) and "--" not in str(info.value), str(info.value)
    assert len(sleuth.records(tmp_path / "budget" / "musique-2hop" / "first")) == 2
    second = tmp_path / "budget" / "musique-2hop" / "second"
    assert not (second / "records.jsonl").exists() or len(sleuth.records(second)) == 0
    # The manifest `report` reads is written, as the CLI writes it.
    assert json.loads((tmp_path / "budget" / "experiment.json").read_text())["name"] == "twice"
