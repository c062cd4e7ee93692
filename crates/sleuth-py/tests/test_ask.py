"""`sleuth.load` and `sleuth.ask` with a Python callable as the model, on a real
MuSiQue question."""

import pytest

import sleuth
from models import CountySeatReader

QID = "2hop__574419_270105"


def van_hook(musique):
    qs = sleuth.load("musique", musique, hops=2)
    return next(q for q in qs if q.id == QID)


def test_load_selects_like_the_cli_and_converts_to_pandas(musique):
    qs = sleuth.load("musique", musique, hops=3, limit=5)
    assert len(qs) == 5 and all(q.hops == 3 for q in qs)
    df = qs.to_pandas()
    assert list(df.columns) == ["id", "dataset", "question", "answer", "answers", "hops", "kind", "paragraphs", "gold_titles"]
    assert (df["dataset"] == "musique").all() and (df["paragraphs"] == 20).all()
    assert [q.id for q in qs] == list(df["id"])
    sampled = sleuth.load("musique", musique, sample=4, seed=7)
    assert len(sampled) == 4 and "Question(" in repr(sampled[0])


@pytest.mark.parametrize("method", ["react", "sleuth"])
def test_a_callable_model_answers_a_musique_question(musique, method):
    q = van_hook(musique)
    reader = CountySeatReader("react" if method == "react" else "sleuth")
    ep = sleuth.ask(method, q, model=reader, turns=6)
    assert ep.answer == "Stanley" and ep.em == 1.0 and ep.f1 == 1.0
    assert ep.stop == "finished" and ep.error is None
    assert ep.model == "python:CountySeatReader" and ep.method == method
    assert [t.number for t in ep.turns] == [1, 2, 3] and ep.calls == 3 == len(reader.calls)
    assert ep.input_tokens > 0 and ep.output_tokens > 0 and ep.tokens == ep.input_tokens + ep.output_tokens
    # The model was shown the pool's real paragraphs and got the request's parameters.
    assert "Mountrail County" in str(ep.turns[0].observations)
    assert all("temperature" in kw and "max_tokens" in kw and "stop" in kw for kw in reader.calls)
    assert set(ep.retrieved) >= set(q.gold_titles)
    if method == "sleuth":
        # The working memory is parsed and kept per turn.
        assert ep.outputs["memory_counts"][-1]["facts"] == 2
        assert ep.turns[2].memory is not None
    text = repr(ep)
    assert "answer 'Stanley'" in text and "Turn 3: finish[Stanley]" in text


def test_a_lambda_and_an_own_question(musique):
    paragraphs = [
        {"title": "Ada", "text": "Ada Lovelace was born in London. She wrote the first program."},
        {"title": "London", "text": "London is the capital of England."},
    ]
    model = lambda messages, **kw: "Thought: done.\nAction: finish[London]"  # noqa: E731
    ep = sleuth.ask("react", "Where was Ada Lovelace born?", model=model, paragraphs=paragraphs)
    assert ep.answer == "London" and ep.model == "python:<lambda>"
    own = sleuth.Question("Where was Ada born?", paragraphs, answers=["London"], supporting=["Ada"])
    ep = sleuth.ask("react", own, model=model, model_name="my-model")
    assert ep.em == 1.0 and ep.gold_titles == ["Ada"] and ep.model == "my-model"
    # A list of completions (DSPy's LM) answers with its first; a dict may carry usage.
    ep = sleuth.ask("react", own, model=lambda m, **kw: ["Thought: done.\nAction: finish[London]", "x"])
    assert ep.answer == "London"
    ep = sleuth.ask("react", own, model=lambda m, **kw: {"text": "Action: finish[Paris]", "input_tokens": 7, "output_tokens": 3})
    assert (ep.answer, ep.em, ep.input_tokens, ep.output_tokens) == ("Paris", 0.0, 7, 3)


def test_errors_are_python_exceptions_with_the_cli_messages(musique, tmp_path):
    q = van_hook(musique)
    with pytest.raises(sleuth.MethodError, match="unknown method `nope`"):
        sleuth.ask("nope", q, model="scripted:x")
    with pytest.raises(sleuth.MethodError, match="setting `tau` is read by none of react"):
        sleuth.ask("react", q, model="scripted:x", tau=3)
    with pytest.raises(sleuth.ModelError, match="invalid model spec `gpt-4o`: no provider prefix"):
        sleuth.ask("react", q, model="gpt-4o")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "question": "q", "answers": ["x"], "paragraphs": []}\nnot json\n')
    with pytest.raises(sleuth.DataError, match=r"bad.jsonl:2:"):
        sleuth.load("jsonl", bad)
    with pytest.raises(sleuth.DataError, match="unknown dataset `nope`"):
        sleuth.load("nope", bad)
    with pytest.raises(sleuth.ModelError, match="expected a str"):
        sleuth.ask("react", q, model=lambda m, **kw: 42)
    assert issubclass(sleuth.DataError, sleuth.SleuthError)


def test_errors_print_as_sleuth_classes_and_name_keywords_not_flags(musique, tmp_path):
    q = van_hook(musique)
    # The classes belong to the public module, so a traceback reads `sleuth.MethodError`.
    assert sleuth.MethodError.__module__ == "sleuth"
    assert sleuth.SleuthError.__qualname__ == "SleuthError"
    # A bad setting value: `--set nudge=…` in the CLI is the keyword `nudge=` here.
    with pytest.raises(sleuth.MethodError) as info:
        sleuth.ask("sleuth", q, model="scripted:x", nudge="soon")
    message = str(info.value)
    assert message.startswith("setting nudge=soon: expected"), message
    assert "--" not in message, message
    # A bad budget names the keyword.
    with pytest.raises(sleuth.SleuthError) as info:
        sleuth.ask("react", q, model="scripted:x", max_cost=-1)
    assert "(max_cost=)" in str(info.value) and "--" not in str(info.value), str(info.value)
    # The library words every knob in the package's keywords (no rewriting on the way
    # out): a cache location, a shard, a knob Python has no keyword for.
    with pytest.raises(sleuth.SleuthError) as info:
        sleuth.ask("react", q, model="scripted:x", cache="ftp://host/x")
    assert str(info.value).startswith("cache=: `ftp://` is not a cache location"), str(info.value)
    recipe = tmp_path / "r.toml"
    recipe.write_text('name = "r"\nmethods = ["react"]\n[[datasets]]\nname = "musique"\n')
    with pytest.raises(sleuth.SleuthError) as info:
        sleuth.experiment(recipe, model="scripted:x", shard="5/2", dry_run=True,
                          data={"musique": musique})
    assert "shard=5/2: expected I/N" in str(info.value), str(info.value)
    assert not hasattr(sleuth._native, "pythonic_message")


def test_an_exception_in_the_callable_is_raised_with_the_partial_episode(musique):
    q = van_hook(musique)

    def broken(messages, **kw):
        raise ValueError("the GPU fell over")

    with pytest.raises(sleuth.ModelError, match="python:broken raised ValueError: the GPU fell over") as info:
        sleuth.ask("react", q, model=broken)
    # The call that raised was made: it counts, as in a run's closing summary.
    assert info.value.episode.stop == "error" and info.value.episode.calls == 1


def test_load_without_a_path_reads_the_fetched_file_or_names_the_fetch(tmp_path, monkeypatch):
    monkeypatch.delenv("SLEUTH_DATA", raising=False)
    monkeypatch.setenv("SLEUTH_DATA_DIR", str(tmp_path))
    with pytest.raises(sleuth.DataError, match="sleuth data fetch musique"):
        sleuth.load("musique")
