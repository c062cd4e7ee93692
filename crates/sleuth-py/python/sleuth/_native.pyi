"""Type stubs of the native module (the Rust library, built by maturin)."""

from typing import Any, Dict, List, Optional

__version__: str

class SleuthError(Exception): ...
class DataError(SleuthError): ...
class ModelError(SleuthError): ...
class MethodError(SleuthError): ...
class RunLockedError(SleuthError): ...
class BudgetExceeded(SleuthError): ...

class Question:
    """A multi-hop question with its gold answers and its paragraph pool."""

    def __init__(
        self,
        text: str,
        paragraphs: List[Dict[str, Any]],
        *,
        id: str = "ask",
        answers: Optional[List[str]] = None,
        supporting: Optional[List[str]] = None,
        hops: Optional[int] = None,
        kind: Optional[str] = None,
    ) -> None: ...
    @property
    def id(self) -> str: ...
    @property
    def dataset(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def answer(self) -> str: ...
    @property
    def answers(self) -> List[str]: ...
    @property
    def hops(self) -> Optional[int]: ...
    @property
    def kind(self) -> Optional[str]: ...
    @property
    def gold_titles(self) -> List[str]: ...
    @property
    def paragraphs(self) -> List[Dict[str, Any]]: ...

def load(
    dataset: str,
    path: str,
    hops: Optional[int] = None,
    limit: Optional[int] = None,
    sample: Optional[int] = None,
    seed: int = 0,
    sample_offset: int = 0,
) -> List[Question]: ...
def ask(
    method: str,
    question: Question,
    model: Any,
    *,
    settings: Dict[str, str],
    model_name: Optional[str] = None,
    model_options: Dict[str, Any],
    prompts: Optional[str] = None,
) -> str: ...
def eval(
    methods: List[str],
    model: Any,
    out: str,
    *,
    settings: Dict[str, str],
    dataset: Optional[str] = None,
    path: Optional[str] = None,
    questions: Optional[List[Question]] = None,
    files: List[str] = ...,
    hops: Optional[int] = None,
    limit: Optional[int] = None,
    sample: Optional[int] = None,
    seed: int = 0,
    sample_offset: int = 0,
    concurrency: int = 4,
    retry_errors: bool = False,
    model_name: Optional[str] = None,
    model_options: Dict[str, Any],
    prompts: Optional[str] = None,
    index: Optional[str] = None,
    corpus_reads: int = 6,
) -> str: ...
def experiment(
    file: str,
    model: Any,
    *,
    out: Optional[str] = None,
    dry_run: bool = False,
    data_root: Optional[str] = None,
    data: Dict[str, str] = ...,
    limit: Optional[int] = None,
    sample: Optional[int] = None,
    seed: Optional[int] = None,
    index: Optional[str] = None,
    on_setup: bool = False,
    shard: Optional[str] = None,
    model_name: Optional[str] = None,
    model_options: Dict[str, Any],
) -> str: ...
def methods() -> str: ...
def records(run: str) -> str: ...
def record_fields() -> List[str]: ...
def report(
    runs: List[str],
    *,
    baseline: Optional[str] = None,
    tables: List[str] = ...,
    out: Optional[str] = None,
    html: bool = False,
    cohort: Optional[int] = None,
    seed: int = ...,
    resamples: int = ...,
    conventions: Optional[str] = None,
    musique: Optional[str] = None,
    aliases: str = "on",
    holm_family: str = "all",
    holm_size: int = 0,
    reasoning_evidence: str = "any",
    error_classes: str = "defined",
    bootstrap_p: str = "twice-tail",
    direction: str = "method-minus-baseline",
) -> str: ...

def export(
    run: str,
    *,
    out: Optional[str] = None,
    format: Optional[str] = None,
    method: Optional[str] = None,
    dataset: Optional[str] = None,
    data: Optional[str] = None,
) -> str: ...
def score(
    predictions: str,
    *,
    dataset: Optional[str] = None,
    data: Optional[str] = None,
    hops: Optional[int] = None,
    only_predicted: bool = False,
    run: Optional[str] = None,
) -> str: ...

def default_data_file(dataset: str) -> str:
    """The file `sleuth data fetch DATASET` installed; DataError naming the fetch command when absent."""
    ...
