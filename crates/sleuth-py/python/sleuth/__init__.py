"""sleuth: multi-hop question answering agents that track what they know, and their
evaluation — from Python.

The work is done by the sleuth Rust library (the same code as the ``sleuth`` command);
this package converts arguments and results. Five calls cover a notebook session::

    import sleuth
    qs = sleuth.load("musique", "musique_ans_dev_subset200_with_paragraphs.jsonl", hops=2, limit=20)
    ep = sleuth.ask("sleuth", qs[0], model="openai:gpt-4o-mini", turns=15)
    summary = sleuth.eval(qs, methods=["react", "sleuth"], model=my_llm, out="runs/mq2")
    df = sleuth.records("runs/mq2")
    rep = sleuth.report("runs/mq2", baseline="react")

A model is a spec string (``openai:MODEL``, ``anthropic:MODEL``,
``openai-compat:BASE_URL#MODEL``, ``scripted:FILE``) or any Python callable
``f(messages, **kw) -> str`` (or an object with ``complete(messages, **kw)``); it may
also return a list of completions (the first is used) or ``{"text", "input_tokens",
"output_tokens"}``.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

from . import _native
from ._native import (
    BudgetExceeded,
    DataError,
    MethodError,
    ModelError,
    Question,
    RunLockedError,
    SleuthError,
)

__version__: str = _native.__version__

__all__ = [
    "load",
    "ask",
    "eval",
    "experiment",
    "records",
    "report",
    "export",
    "score",
    "methods",
    "Question",
    "Questions",
    "Episode",
    "Turn",
    "EvalSummary",
    "ExperimentResult",
    "Report",
    "SleuthError",
    "DataError",
    "ModelError",
    "MethodError",
    "RunLockedError",
    "BudgetExceeded",
]

PathLike = Union[str, "os.PathLike[str]"]
Model = Union[str, Callable[..., Any], Any]


def _setting(value: Any) -> str:
    """A ``--set`` value as the CLI would receive it (``True`` -> ``true``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    return str(value)


def _settings(settings: Dict[str, Any]) -> Dict[str, str]:
    return {str(k): _setting(v) for k, v in settings.items()}


def _cache(cache: Union[None, bool, PathLike]) -> tuple:
    """``None``: the default; ``False``: no cache; a directory or redis:// URL."""
    if cache is None or cache is True:
        return None, False
    if cache is False:
        return None, True
    return os.fspath(cache), False


def _model_options(
    cache: Union[None, bool, PathLike],
    max_cost: Optional[float],
    timeout: Optional[int],
    attempts: int,
    rpm: Optional[float] = None,
    tpm: Optional[float] = None,
    prices: Optional[PathLike] = None,
    batch: bool = False,
) -> Dict[str, Any]:
    """The model keywords every call shares, as the native layer reads them."""
    cache_dir, no_cache = _cache(cache)
    return {
        "cache": cache_dir,
        "no_cache": no_cache,
        "max_cost": max_cost,
        "timeout": timeout,
        "attempts": attempts,
        "rpm": rpm,
        "tpm": tpm,
        "prices": os.fspath(prices) if prices is not None else None,
        "batch": batch,
    }


class _Fields(dict):
    """A dict whose keys read as attributes too."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError as e:
            raise AttributeError(name) from e


def _pandas():
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("this needs pandas: pip install pandas") from e
    return pandas


class Questions(list):
    """Questions loaded by :func:`load`: a list of :class:`Question` that remembers
    where it came from. :func:`eval` runs exactly the questions it holds (filter it,
    slice it, or build one by hand: what is in the list is what runs)."""

    def __init__(
        self,
        items: Iterable[Question],
        dataset: str,
        path: str,
        hops: Optional[int] = None,
        limit: Optional[int] = None,
        sample: Optional[int] = None,
        seed: int = 0,
        sample_offset: int = 0,
    ) -> None:
        super().__init__(items)
        self.dataset = dataset
        self.path = path
        self.hops = hops
        self.limit = limit
        self.sample = sample
        self.seed = seed
        self.sample_offset = sample_offset

    def to_pandas(self):
        """One row per question: id, dataset, question, answer, answers, hops, kind,
        paragraphs (count), gold_titles."""
        pd = _pandas()
        rows = [
            {
                "id": q.id,
                "dataset": q.dataset,
                "question": q.text,
                "answer": q.answer,
                "answers": q.answers,
                "hops": q.hops,
                "kind": q.kind,
                "paragraphs": len(q.paragraphs),
                "gold_titles": q.gold_titles,
            }
            for q in self
        ]
        columns = ["id", "dataset", "question", "answer", "answers", "hops", "kind", "paragraphs", "gold_titles"]
        return pd.DataFrame(rows, columns=columns)

    def __repr__(self) -> str:
        sel = "".join(
            f", {k}={v}" for k, v in (("hops", self.hops), ("limit", self.limit), ("sample", self.sample)) if v is not None
        )
        return f"Questions({len(self)} from {self.dataset} {self.path}{sel})"


def load(
    dataset: str,
    path: Optional[PathLike] = None,
    hops: Optional[int] = None,
    limit: Optional[int] = None,
    *,
    sample: Optional[int] = None,
    seed: int = 0,
    sample_offset: int = 0,
) -> Questions:
    """Loads a benchmark file (``hotpotqa``, ``musique``, ``2wiki`` or ``jsonl``).

    ``hops`` keeps questions with that many hops; then ``sample`` picks N at random
    (seeded) or ``limit`` keeps the first N: the same questions ``sleuth eval`` selects.
    ``sample_offset`` skips that many of the seeded order first, so with one seed
    ``sample=1000`` and ``sample=20, sample_offset=1000`` never share a question (the
    EIR paper's scored and setup questions).
    Without ``path``, ``$SLEUTH_DATA`` names the file, else the file ``sleuth data fetch
    DATASET`` installed. Raises :class:`DataError` with the file and line of a bad record,
    or with the fetch command to run when the dataset is not installed.
    """
    if path is None:
        path = os.environ.get("SLEUTH_DATA") or _native.default_data_file(dataset)
    path = os.fspath(path)
    items = _native.load(dataset, path, hops, limit, sample, seed, sample_offset)
    return Questions(items, dataset, path, hops, limit, sample, seed, sample_offset)


class Turn:
    """One turn of an episode: the model's response, the working memory it kept (its
    merged ``state``: facts, hypotheses, questions), its actions and observations."""

    def __init__(self, raw: Dict[str, Any]) -> None:
        self.raw = raw
        self.number: int = raw.get("number", 0)
        self.response: str = raw.get("response", "")
        self.memory: Optional[Dict[str, Any]] = raw.get("state") or raw.get("memory")
        self.actions: List[Any] = raw.get("actions", [])
        self.observations: List[Any] = raw.get("observations", [])
        self.nudged: bool = raw.get("nudged", False)

    def _memory_counts(self) -> str:
        if not self.memory:
            return ""
        parts = [f"{k} {len(v)}" for k, v in self.memory.items() if isinstance(v, list)]
        return " | " + ", ".join(parts) if parts else ""

    def __repr__(self) -> str:
        acts = "; ".join(_action_text(a) for a in self.actions) or "no action"
        nudge = " (nudged)" if self.nudged else ""
        return f"Turn {self.number}: {acts}{self._memory_counts()}{nudge}"


def _action_text(action: Any) -> str:
    """``{"tool": "search", "arg": "x"}`` as the protocol writes it: ``search[x]``."""
    if isinstance(action, dict) and "tool" in action:
        return f"{action['tool']}[{action.get('arg', '')}]"
    return json.dumps(action)


class Episode:
    """One method on one question: the answer, the turns (with memory), calls, tokens
    and scores. ``record`` is the run record (docs/records.md); every record field is
    also an attribute (``episode.em``, ``episode.calls_by_kind``, ...)."""

    def __init__(self, record: Dict[str, Any]) -> None:
        self.record = record

    def __getattr__(self, name: str) -> Any:
        record = self.__dict__.get("record", {})
        if name in record:
            return record[name]
        raise AttributeError(name)

    @property
    def turns(self) -> List[Turn]:
        """The trace, one :class:`Turn` per turn (``record["turns"]`` is the count)."""
        return [Turn(t) for t in self.record.get("trace", [])]

    @property
    def tokens(self) -> int:
        return int(self.record.get("input_tokens", 0)) + int(self.record.get("output_tokens", 0))

    def to_dict(self) -> Dict[str, Any]:
        return dict(self.record)

    def __repr__(self) -> str:
        r = self.record
        gold = r.get("gold") or []
        score = f" (gold {gold[0]!r}, EM {r.get('em', 0):.0f}, F1 {r.get('f1', 0):.2f})" if gold and gold[0] else ""
        head = (
            f"Episode({r.get('method')} on {r.get('id')}: answer {r.get('answer')!r}{score}; "
            f"{r.get('stop')} after {r.get('turns')} turns, {r.get('calls')} calls, "
            f"{r.get('input_tokens')} in / {r.get('output_tokens')} out tokens"
        )
        if r.get("error"):
            head += f"; error: {r['error']}"
        lines = [head + ")"] + [f"  {t!r}" for t in self.turns]
        return "\n".join(lines)


def ask(
    method: str,
    question: Union[Question, str],
    model: Model,
    *,
    paragraphs: Optional[Sequence[Dict[str, Any]]] = None,
    model_name: Optional[str] = None,
    cache: Union[None, bool, PathLike] = None,
    max_cost: Optional[float] = None,
    timeout: Optional[int] = None,
    attempts: int = 6,
    prompts: Optional[PathLike] = None,
    **settings: Any,
) -> Episode:
    """Runs one method on one question and returns the :class:`Episode`.

    ``question`` is a :class:`Question` (from :func:`load`, or built with your own
    paragraphs), or a string together with ``paragraphs=[{"title", "text"}, ...]``.
    Keyword arguments not listed are method settings (``turns=15``, ``nudge="none"``,
    ``enforce=True``: ``sleuth methods NAME`` lists them). ``cache``: ``None`` uses the
    CLI's default cache for a spec model and none for a callable, ``False`` none, a
    directory or ``redis://`` URL that cache. A failed episode raises
    :class:`ModelError` whose ``episode`` attribute holds the partial episode.
    """
    if isinstance(question, str):
        if paragraphs is None:
            raise DataError("ask: a question string needs paragraphs=[{'title': ..., 'text': ...}, ...]")
        question = Question(question, list(paragraphs))
    elif paragraphs is not None:
        raise DataError("ask: paragraphs= is only for a question given as a string")
    text = _native.ask(
        method,
        question,
        model,
        settings=_settings(settings),
        model_name=model_name,
        model_options=_model_options(cache, max_cost, timeout, attempts),
        prompts=os.fspath(prompts) if prompts is not None else None,
    )
    episode = Episode(json.loads(text))
    if episode.record.get("error"):
        err = ModelError(episode.record["error"])
        err.episode = episode  # type: ignore[attr-defined]
        raise err
    return episode


class EvalSummary(_Fields):
    """What :func:`eval` did: ``planned``, ``skipped`` (already recorded),
    ``skipped_errors``, ``written``, ``errors``, ``first_error``, ``halted``,
    ``records`` (the records file), ``dir``, the model totals ``calls``,
    ``retries``, ``cache_hits``, ``input_tokens``, ``output_tokens``, ``cost_usd``, and
    ``verdict``: the run's outcome as the CLI's exit code reads it (``kind`` done,
    halted, all_failed or nothing_ran, with its details), and ``scores``: eval's
    closing table, one dict per arm of the run's methods (every record in ``dir``,
    earlier runs' too) with ``method``, ``arm``, ``n``, ``em``, ``f1`` and
    ``support_f1`` (in %, as :func:`report`'s summary gives them) and ``problems``."""

    def to_pandas(self):
        """Eval's closing table as a DataFrame: one row per arm, with ``method``,
        ``arm``, ``n``, ``em``, ``f1``, ``support_f1`` (None for a method that cites
        nothing) and ``problems`` (what went wrong, as the CLI words it; "" if
        nothing)."""
        pd = _pandas()
        rows = [dict(s, problems=", ".join(s["problems"])) for s in self["scores"]]
        columns = ["method", "arm", "n", "em", "f1", "support_f1", "problems"]
        return pd.DataFrame(rows, columns=columns)

    def __repr__(self) -> str:
        return (
            f"EvalSummary({self['written']} records written to {self['records']} "
            f"({self['errors']} with errors); {self['skipped']} already there "
            f"({self['skipped_errors']} with errors); model calls {self['calls']}, "
            f"tokens {self['input_tokens']} in / {self['output_tokens']} out, billed ${self['cost_usd']:.4f})"
        )


def eval(  # noqa: A001 - the CLI's verb
    dataset: Union[str, Iterable[Question]],
    path: Optional[PathLike] = None,
    *,
    methods: Union[str, Sequence[str]],
    model: Model,
    out: PathLike,
    hops: Optional[int] = None,
    limit: Optional[int] = None,
    sample: Optional[int] = None,
    seed: int = 0,
    sample_offset: int = 0,
    concurrency: int = 4,
    retry_errors: bool = False,
    model_name: Optional[str] = None,
    cache: Union[None, bool, PathLike] = None,
    max_cost: Optional[float] = None,
    timeout: Optional[int] = None,
    attempts: int = 6,
    rpm: Optional[float] = None,
    tpm: Optional[float] = None,
    prices: Optional[PathLike] = None,
    batch: bool = False,
    prompts: Optional[PathLike] = None,
    index: Optional[PathLike] = None,
    corpus_reads: int = 6,
    settings: Optional[Dict[str, Any]] = None,
    **more_settings: Any,
) -> EvalSummary:
    """``sleuth eval`` from Python: every method on every selected question, one record
    per line in ``out/records.jsonl``. Rerunning on the same ``out`` resumes (records
    already there are skipped; error records are rerun only with ``retry_errors``).

    ``dataset`` is a benchmark name (with ``path``, ``hops``, ``limit``, ``sample``,
    ``seed``, ``sample_offset``), or the questions themselves: any iterable of
    :class:`Question` (the :class:`Questions` from :func:`load`, a slice or filtered
    list of it, questions you built), run as given; ``hops``/``limit``/``sample`` still
    narrow them. Method settings come
    as ``settings={...}`` or extra keyword arguments. ``index`` switches to the
    open-corpus setting (a ``sleuth index build`` directory). ``batch=True`` sends
    every call through the provider's batch API at half price (``--batch``). The GIL
    is released while it runs; Ctrl-C stops it (what was recorded stays).

    Raises :class:`BudgetExceeded` when ``max_cost`` stopped it, and
    :class:`SleuthError` when every question failed; both carry ``summary``.
    """
    source: Dict[str, Any] = {}
    if isinstance(dataset, (str, os.PathLike)):
        if path is None:
            path = os.environ.get("SLEUTH_DATA") or _native.default_data_file(os.fspath(dataset))
        source = {"dataset": os.fspath(dataset), "path": os.fspath(path)}
    else:
        if path is not None:
            raise SleuthError("eval: path= is only for a dataset name; these questions are already loaded")
        questions = list(dataset)
        bad = [type(q).__name__ for q in questions if not isinstance(q, Question)]
        if bad:
            raise SleuthError(f"eval: expected Question objects, got {bad[0]}")
        if not questions:
            raise DataError("eval: no questions given")
        files = [dataset.path] if isinstance(dataset, Questions) and dataset.path else []
        source = {"questions": questions, "files": files}
    if isinstance(methods, str):
        methods = methods.split(",")
    all_settings = dict(settings or {})
    all_settings.update(more_settings)
    text = _native.eval(
        list(methods),
        model,
        os.fspath(out),
        settings=_settings(all_settings),
        **source,
        hops=hops,
        limit=limit,
        sample=sample,
        seed=seed,
        sample_offset=sample_offset,
        concurrency=concurrency,
        retry_errors=retry_errors,
        model_name=model_name,
        model_options=_model_options(cache, max_cost, timeout, attempts, rpm, tpm, prices, batch),
        prompts=os.fspath(prompts) if prompts is not None else None,
        index=os.fspath(index) if index is not None else None,
        corpus_reads=corpus_reads,
    )
    summary = EvalSummary(json.loads(text))
    for note in summary.get("notes", []):
        warnings.warn(note, stacklevel=2)
    _check(summary)
    return summary


def _check(s: EvalSummary) -> None:
    """The run's verdict (the library decides it, as for the CLI's exit code) in
    Python's words: a budget halt and a run of nothing but errors raise."""
    verdict = s["verdict"]
    kind = verdict["kind"]
    if kind == "halted":
        err: SleuthError = BudgetExceeded(
            f"stopped before exceeding the cost budget ({verdict['reason']}); "
            "rerun with a larger max_cost to continue"
        )
    elif kind == "all_failed":
        check = {
            "template": "fix the prompt template (prompts=)",
            "model": "check the model endpoint and key",
            "method": "check the method's settings (its keyword arguments)",
        }[verdict["cause"]]
        err = SleuthError(
            f"every question failed (first error: {verdict['first_error']}); {check}, "
            "then rerun with retry_errors=True"
        )
    elif kind == "nothing_ran":
        err = SleuthError(
            f"nothing ran: all {verdict['skipped']} selected records in {s['dir']} ended in errors "
            f"(first error: {verdict['first_error']}); rerun with retry_errors=True to run them again"
        )
    else:
        return
    err.summary = s  # type: ignore[attr-defined]
    raise err


class ExperimentResult(_Fields):
    """What :func:`experiment` planned or did: ``name``, ``description``, ``out`` (the
    output root) and ``jobs``, one dict per job with ``dataset``, ``hops``,
    ``sample``, ``seed``, ``setup`` (held-out count), ``methods``, ``settings``, ``out`` (its run directory), ``plan`` (questions and
    estimated ``calls``, tokens and ``usd`` per method and in ``total``; ``None`` for a
    model with no price check, such as a callable) and ``summary`` (an
    :class:`EvalSummary` once the job ran, else ``None``)."""

    def to_pandas(self):
        """One row per job: its dataset, hops, methods, settings, run directory,
        questions, estimated calls and dollars, and (when run) records written."""
        pd = _pandas()
        rows = []
        for j in self["jobs"]:
            plan = j["plan"] or {}
            total = plan.get("total") or {}
            summary = j["summary"] or {}
            rows.append(
                {
                    "dataset": j["dataset"],
                    "hops": j["hops"],
                    "methods": ",".join(j["methods"]),
                    "settings": " ".join(f"{k}={v}" for k, v in j["settings"].items()),
                    "out": j["out"],
                    "questions": plan.get("questions"),
                    "calls_est": total.get("calls"),
                    "usd_est": total.get("usd"),
                    "written": summary.get("written"),
                    "errors": summary.get("errors"),
                }
            )
        return pd.DataFrame(rows)

    def __repr__(self) -> str:
        ran = sum(1 for j in self["jobs"] if j["summary"] is not None)
        return f"ExperimentResult({self['name']}: {len(self['jobs'])} jobs, {ran} run, out={self['out']})"


def experiment(
    recipe: PathLike,
    *,
    model: Model,
    out: Optional[PathLike] = None,
    dry_run: bool = False,
    data_root: Optional[PathLike] = None,
    data: Optional[Dict[str, PathLike]] = None,
    limit: Optional[int] = None,
    sample: Optional[int] = None,
    seed: Optional[int] = None,
    index: Optional[PathLike] = None,
    on_setup: bool = False,
    shard: Optional[str] = None,
    model_name: Optional[str] = None,
    cache: Union[None, bool, PathLike] = None,
    max_cost: Optional[float] = None,
    timeout: Optional[int] = None,
    attempts: int = 6,
    rpm: Optional[float] = None,
    tpm: Optional[float] = None,
    prices: Optional[PathLike] = None,
    batch: bool = False,
) -> ExperimentResult:
    """``sleuth experiment`` from Python: a recipe (``experiments/*.toml``) expanded
    into jobs, each run into its own directory under ``out`` (default
    ``runs/NAME``), so :func:`report` on ``out`` finds them all. ``dry_run=True`` runs
    nothing and returns each job's plan (questions, estimated calls, tokens, dollars).
    ``data`` maps a dataset to your own file (``{"musique": "subset.jsonl"}``),
    ``limit`` caps every split (a smoke run), ``sample``/``seed`` replace the recipe's,
    ``index`` is the BM25 index of its corpus groups, and ``on_setup=True`` runs the
    jobs on the setup questions the recipe holds out (``setup = N``) into ``out/setup``.
    ``batch=True`` (or the recipe's ``batch = true``) batches every call (``--batch``).
    ``max_cost`` bounds the whole experiment: each job may spend what the earlier ones
    left, and none starts once it is spent (``BudgetExceeded``). ``out`` gets the
    recipe's ``experiment.json``, as the CLI writes it, so :func:`report` shows the
    recipe's tables. Every job and data file is checked before the first runs; when
    every question of a job failed, it raises once the jobs are done (what they wrote
    stays on disk).
    """
    text = _native.experiment(
        os.fspath(recipe),
        model,
        out=os.fspath(out) if out is not None else None,
        dry_run=dry_run,
        data_root=os.fspath(data_root) if data_root is not None else None,
        data={k: os.fspath(v) for k, v in (data or {}).items()},
        limit=limit,
        sample=sample,
        seed=seed,
        index=os.fspath(index) if index is not None else None,
        on_setup=on_setup,
        shard=shard,
        model_name=model_name,
        model_options=_model_options(cache, max_cost, timeout, attempts, rpm, tpm, prices, batch),
    )
    result = ExperimentResult(json.loads(text))
    for job in result["jobs"]:
        if job["summary"] is not None:
            job["summary"] = EvalSummary(job["summary"])
            _check(job["summary"])
    return result


def record_fields() -> List[str]:
    """The top-level fields of a run record, in file order (docs/records.md)."""
    return list(_native.record_fields())


def records(run: PathLike):
    """The records of a run directory (or a ``records.jsonl``) as a pandas DataFrame,
    one row per record and one column per documented field (docs/records.md);
    ``trace``, ``outputs``, ``settings`` stay Python objects in their cells."""
    pd = _pandas()
    rows = json.loads(_native.records(os.fspath(run)))
    return pd.DataFrame.from_records(rows, columns=record_fields())


class Report:
    """``sleuth report`` as objects: ``tables`` (name -> DataFrame, the tables the
    report shows, in tidy form: snake_case columns with ``dataset``, ``model``,
    ``method`` and ``label``, one value per cell, as the CLI writes CSV), ``titles``
    (name -> title), ``markdown`` (what the CLI prints), ``warnings``, ``empty`` (table
    names that had nothing to show), ``files`` (tables, report.json/md and SVG figures
    written to ``out``), ``figures`` (the SVG paths among them), ``html`` (trace
    viewers written), and ``index`` and ``questions`` (``index.html`` and the
    side-by-side ``questions.html``, or None when not written)."""

    def __init__(self, raw: Dict[str, Any]) -> None:
        pd = _pandas()
        self.tables = {t["name"]: pd.DataFrame(t["rows"], columns=t["columns"]) for t in raw["tables"]}
        self.titles = {t["name"]: t["title"] for t in raw["tables"]}
        self.markdown: str = raw["markdown"]
        self.warnings: List[str] = raw["warnings"]
        self.empty: List[str] = raw["empty"]
        written = raw["written"]
        self.files: List[Path] = [Path(p) for p in written["files"]]
        self.figures: List[Path] = [p for p in self.files if p.suffix == ".svg"]
        self.html: List[Path] = [Path(t["page"]) for t in written["traces"]]
        pages = written["index"]
        self.index: Optional[Path] = Path(pages["index"]) if pages else None
        self.questions: Optional[Path] = Path(pages["questions"]) if pages else None

    def __getitem__(self, name: str):
        return self.tables[name]

    def __repr__(self) -> str:
        return self.markdown

    def _repr_markdown_(self) -> str:
        return self.markdown


def report(
    runs: Union[PathLike, Sequence[PathLike]],
    *,
    baseline: Optional[str] = None,
    tables: Union[None, str, Sequence[str]] = None,
    out: Optional[PathLike] = None,
    html: bool = False,
    cohort: Optional[int] = None,
    seed: Optional[int] = None,
    resamples: Optional[int] = None,
    conventions: Optional[str] = None,
    musique: Optional[str] = None,
    aliases: Optional[str] = None,
    holm_family: Optional[str] = None,
    holm_size: Optional[int] = None,
    reasoning_evidence: Optional[str] = None,
    error_classes: Optional[str] = None,
    bootstrap_p: Optional[str] = None,
    direction: Optional[str] = None,
) -> Report:
    """``sleuth report`` from Python, through the same library entry point: the tables
    the report shows as DataFrames (with ``baseline``, a method or one labelled arm
    such as ``"sleuth [nudge=none]"``, the paired comparisons). ``tables`` chooses them
    (names or ``"all"``, a list or comma-separated; default: the recipe's tables when
    ``runs`` holds an experiment's ``experiment.json``, else the report's own).
    ``out`` also writes CSV/JSON tables, Markdown and LaTeX of the shown ones,
    report.json and SVG figures there; ``html`` writes a trace viewer per run (into
    ``out``, else the run directory) and ``index.html`` and the side-by-side
    ``questions.html`` (into ``out``, else the one run directory given).
    ``conventions`` (ours, sleuth, eir; default: the recipe's, else ours) chooses whose
    rules the report follows; ``musique`` (splits, pooled), ``aliases`` (on, the
    default: EM and F1 count the gold answers' aliases; off: the first gold alone),
    ``holm_family`` (all, dataset, arm, baseline) and ``holm_size`` shape the Holm
    correction, ``reasoning_evidence`` (any, all) and ``error_classes`` (defined, sums) the error decomposition, ``bootstrap_p`` (twice-tail, add-one) the bootstrap p-value,
    ``direction`` (method-minus-baseline, baseline-minus-method) the paired differences, ``cohort``
    the memory-dynamics cohort, ``seed`` and ``resamples`` the bootstrap, as the CLI's
    flags of the same names. Reads records only; never calls a model."""
    if isinstance(runs, (str, os.PathLike)):
        runs = [runs]
    if isinstance(tables, str):
        tables = [t for t in tables.split(",") if t]
    kwargs: Dict[str, Any] = {
        "baseline": baseline,
        "tables": list(tables or []),
        "html": html,
        "cohort": cohort,
    }
    rules = {
        "conventions": conventions,
        "musique": musique,
        "aliases": aliases,
        "holm_family": holm_family,
        "holm_size": holm_size,
        "reasoning_evidence": reasoning_evidence,
        "error_classes": error_classes,
        "bootstrap_p": bootstrap_p,
        "direction": direction,
    }
    kwargs.update({k: v for k, v in rules.items() if v is not None})
    if out is not None:
        kwargs["out"] = os.fspath(out)
    if seed is not None:
        kwargs["seed"] = seed
    if resamples is not None:
        kwargs["resamples"] = resamples
    return Report(json.loads(_native.report([os.fspath(r) for r in runs], **kwargs)))


class Export:
    """An arm of a run as the benchmark's official files (``sleuth export``): ``arm``,
    ``format``, ``count``, ``predictions`` (the file's text), and, when ``out`` was
    given, the paths ``out`` (the predictions), ``gold`` (the gold subset of exactly
    the questions exported, in the official format) and ``aliases`` (2Wiki), with
    ``official_command``: the official script's command line on them (the script's
    file name first; ``script`` says where it comes from)."""

    def __init__(self, raw: Dict[str, Any]) -> None:
        self.arm: str = raw["arm"]
        self.format: str = raw["format"]
        self.count: int = raw["count"]
        self.predictions: str = raw["predictions"]
        self.data = Path(raw["data"])
        written = raw["written"] or {}
        self.out = Path(written["predictions"]) if written.get("predictions") else None
        self.gold = Path(written["gold"]) if written.get("gold") else None
        self.aliases = Path(written["aliases"]) if written.get("aliases") else None
        self.official_command: Optional[List[str]] = raw["official_command"]
        self.script: Optional[Dict[str, str]] = raw["script"]

    def __repr__(self) -> str:
        where = f" -> {self.out}" if self.out else ""
        return f"<Export {self.arm!r} as {self.format}: {self.count} predictions{where}>"


def export(
    run: PathLike,
    *,
    out: Optional[PathLike] = None,
    format: Optional[str] = None,  # noqa: A002 - the CLI's flag
    method: Optional[str] = None,
    dataset: Optional[str] = None,
    data: Optional[PathLike] = None,
) -> Export:
    """``sleuth export`` from Python: one arm of ``run`` (a run directory, records file
    or experiment root) as the benchmark's official prediction file. ``method`` names
    the arm (a method or ``"sleuth [nudge=none]"``) when the run holds several,
    ``dataset`` picks one benchmark of a root spanning several, ``format`` (hotpotqa,
    musique, 2wiki; default the records' own) and ``data`` (the benchmark file; default
    the run's) as the CLI's flags. With ``out`` the predictions are written there and
    the gold subset beside them, so the unmodified official script scores the run on
    its own questions."""
    kwargs: Dict[str, Any] = {"format": format, "method": method, "dataset": dataset}
    if out is not None:
        kwargs["out"] = os.fspath(out)
    if data is not None:
        kwargs["data"] = os.fspath(data)
    return Export(json.loads(_native.export(os.fspath(run), **kwargs)))


def score(
    predictions: PathLike,
    *,
    dataset: Optional[str] = None,
    data: Optional[PathLike] = None,
    hops: Optional[int] = None,
    only_predicted: bool = False,
    run: Optional[PathLike] = None,
) -> Dict[str, Any]:
    """``sleuth score --json`` from Python: a prediction file in the official format
    scored against ``data`` (a gold file; default the fetched dev set of ``dataset``).
    Returns the official script's keys on its scale (HotpotQA and MuSiQue fractions,
    2Wiki percentages; ``scale`` says which, ``official_rounding`` how the script
    rounds) with ``n``, ``answered``, ``missing``, ``unmatched`` and ``scored``. Like
    the scripts it averages over every gold question; ``only_predicted`` or ``run``
    (a run directory) score a subset on its own questions, ``hops`` one MuSiQue split."""
    kwargs: Dict[str, Any] = {"dataset": dataset, "hops": hops, "only_predicted": only_predicted}
    if data is not None:
        kwargs["data"] = os.fspath(data)
    if run is not None:
        kwargs["run"] = os.fspath(run)
    return json.loads(_native.score(os.fspath(predictions), **kwargs))


def methods():
    """The methods (``sleuth methods``): a list of dicts with ``name``, ``setting``,
    ``corpus``, ``summary`` and ``reads`` (the settings each reads)."""
    return json.loads(_native.methods())
