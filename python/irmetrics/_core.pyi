"""Type stubs for the compiled extension ``irmetrics._core``."""

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol, Union, final

__all__ = [
    "Qrels",
    "Run",
    "Evaluator",
    "ArrowData",
    "QueryStream",
    "cli_main",
    "measures",
    "parse_cli_args",
    "parse_compare_args",
    "trec_eval",
    "as_qrels",
    "as_run",
    "dense_inputs",
    "dense_dcg",
    "set_max_line_bytes",
    "_write_file",
    "_after_fork_in_child",
    "canonical_names",
    "_panic_for_tests",
    "_run_from_pickle",
    "_qrels_from_pickle",
    "_test_result_from_pickle",
    "_require",
    "_measure_names",
    "QUERY_COLUMNS",
    "DOC_COLUMNS",
    "LABEL_COLUMNS",
    "SCORE_COLUMNS",
    "__version__",
    "Error",
    "FileError",
    "FormatError",
    "InputError",
    "MissingQueryError",
    "MeasureError",
    "MissingDependencyError",
    "aggregate",
    "bootstrap_ci",
    "kendall_tau",
    "spearman_rho",
    "kendall_topk_distance",
    "rbo",
    "compare_runs",
    "diversity",
    "pooled_auroc",
    "normalize",
    "fuse",
    "train_fusion",
    "fusion_methods",
    "optimize_fusion",
    "TestResult",
    "_Report",
    "ttest",
    "wilcoxon",
    "sign_test",
    "randomization_test",
    "bootstrap_test",
    "kendall_tau_test",
    "tau_ap",
    "correct",
    "effect_size",
    "compare_runs_report",
    "compare_values_report",
    "check_compare_options",
    "tukey_hsd",
    "randomized_tukey_hsd",
    "studentized_range_sf",
    "anova2",
    "OnlineLog",
    "online_read",
    "online_from_columns",
    "online_from_arrow",
    "online_evaluate",
    "online_session_parts",
    "online_combine",
    "online_evaluate_stream",
    "online_top_queries",
    "online_queries_per",
    "online_parse_time",
    "online_ctr_by_query",
    "ONLINE_FIELDS",
]

__version__: str

class Error(Exception): ...
class FileError(Error, OSError): ...
class FormatError(Error, ValueError): ...
class InputError(Error, ValueError): ...
class MissingQueryError(InputError): ...
class MeasureError(InputError): ...
class MissingDependencyError(Error, ImportError): ...

_Path = Union[str, "os.PathLike[str]"]
# progress=: True (a bar), a callable called as callback(done, total), None / False
_Progress = bool | Callable[[int, int], object] | None

class _IrMeasure(Protocol):
    """An ir_measures measure object (``nDCG@10``), read by its name ``str(m)``."""

    @property
    def AT_PARAM(self) -> str: ...
    @property
    def SUPPORTED_PARAMS(self) -> Mapping[str, Any]: ...

#: One measure: a name or an ir_measures measure.
_Measure = str | _IrMeasure
#: A ``measures=`` argument: one measure or an iterable of them.
_Measures = _Measure | Iterable[_Measure]

@final
class Qrels:
    @staticmethod
    def from_file(path: _Path, format: str | None = None) -> Qrels: ...
    @staticmethod
    def from_string(text: str | bytes, source: str = "<string>") -> Qrels: ...
    @staticmethod
    def from_dict(d: dict[str, dict[str, int]]) -> Qrels: ...
    @staticmethod
    def from_rows(rows: Iterable[Any]) -> Qrels: ...
    @staticmethod
    def from_ir_datasets(dataset: Any) -> Qrels: ...
    @staticmethod
    def from_columns(
        query_ids: Iterable[str], doc_ids: Iterable[str], labels: Iterable[int]
    ) -> Qrels: ...
    @staticmethod
    def from_dataframe(
        df: Any, *, query: str | None = None, doc: str | None = None, label: str | None = None
    ) -> Qrels: ...
    @staticmethod
    def from_arrow(
        data: Any, *, query: str | None = None, doc: str | None = None, label: str | None = None
    ) -> Qrels: ...
    def arrow_data(self) -> ArrowData: ...
    def to_arrow(self) -> Any: ...
    def to_polars(self) -> Any: ...
    def to_pandas(self) -> Any: ...
    def __reduce__(self) -> tuple[Any, tuple[bytes]]: ...
    def to_dict(self) -> dict[str, dict[str, int]]: ...
    def to_file(self, path: _Path, format: str | None = None) -> None: ...
    def query_ids(self) -> list[str]: ...
    @property
    def num_judgments(self) -> int: ...
    def __len__(self) -> int: ...
    def __contains__(self, key: object, /) -> bool: ...

@final
class Run:
    @staticmethod
    def from_file(path: _Path, format: str | None = None) -> Run: ...
    @staticmethod
    def from_string(text: str | bytes, source: str = "<string>") -> Run: ...
    @staticmethod
    def from_dict(d: dict[str, dict[str, float]], name: str | None = None) -> Run: ...
    @staticmethod
    def from_rows(rows: Iterable[Any], name: str | None = None) -> Run: ...
    @staticmethod
    def from_ir_datasets(dataset: Any, name: str | None = None) -> Run: ...
    @staticmethod
    def from_columns(
        query_ids: Iterable[str],
        doc_ids: Iterable[str],
        scores: Iterable[float],
        name: str | None = None,
    ) -> Run: ...
    @staticmethod
    def from_dataframe(
        df: Any,
        *,
        query: str | None = None,
        doc: str | None = None,
        score: str | None = None,
        name: str | None = None,
    ) -> Run: ...
    @staticmethod
    def from_arrow(
        data: Any,
        *,
        query: str | None = None,
        doc: str | None = None,
        score: str | None = None,
        name: str | None = None,
    ) -> Run: ...
    def with_float32_scores(self) -> Run: ...
    def arrow_data(self) -> ArrowData: ...
    def to_arrow(self) -> Any: ...
    def to_polars(self) -> Any: ...
    def to_pandas(self) -> Any: ...
    def __reduce__(self) -> tuple[Any, tuple[bytes]]: ...
    def to_dict(self) -> dict[str, dict[str, float]]: ...
    def to_file(self, path: _Path, format: str | None = None) -> None: ...
    def query_ids(self) -> list[str]: ...
    @property
    def runid(self) -> str: ...
    @property
    def num_results(self) -> int: ...
    def __len__(self) -> int: ...
    def __contains__(self, key: object, /) -> bool: ...

@final
class ArrowData:
    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...
    def __len__(self) -> int: ...

@final
class QueryStream:
    def add(self, query_id: str, doc_ids: Iterable[str], scores: Iterable[float]) -> None: ...
    def finish(
        self, *, per_query: bool = False, keys: str = "requested", aggregate: str = "mean"
    ) -> dict[str, Any]: ...
    def __enter__(self) -> QueryStream: ...
    def __exit__(self, exc_type: object, _exc: object, _tb: object) -> bool: ...

@final
class Evaluator:
    def __new__(
        cls,
        qrels: Qrels | Mapping[str, dict[str, int]] | Any | _Path,
        measures: _Measures,
        *,
        complete: bool | None = None,
        relevance_level: int | None = None,
        max_docs: int | None = None,
        judged_only: bool | None = None,
        num_docs_in_collection: int | None = None,
        n_threads: int | None = None,
        names: str | None = None,
        credibility: Qrels | Mapping[str, dict[str, int]] | Any | _Path | None = None,
        ties: str | None = None,
    ) -> Evaluator: ...
    def evaluate(
        self,
        run: Run | Mapping[str, Mapping[str, float]] | Any,
        *,
        per_query: bool = False,
        keys: str = "requested",
        aggregate: str = "mean",
        progress: _Progress = None,
    ) -> dict[str, Any]: ...
    def evaluate_file(
        self,
        path: _Path,
        *,
        per_query: bool = False,
        keys: str = "requested",
        aggregate: str = "mean",
    ) -> dict[str, Any]: ...
    def evaluate_table(
        self,
        run: Run | Mapping[str, Mapping[str, float]] | Any | _Path,
        *,
        stream: bool = False,
        progress: _Progress = None,
    ) -> tuple[list[str], list[str], Any, Any]: ...
    def evaluate_parts(
        self, run: Run | Mapping[str, Mapping[str, float]] | Any, *, max_label: int | None = None
    ) -> tuple[list[str], Any, Any]: ...
    def combine(
        self,
        query_ids: Sequence[str],
        values: Any,
        num_rel_1: int = 0,
        *,
        per_query: bool = False,
        keys: str = "requested",
        aggregate: str = "mean",
    ) -> dict[str, Any]: ...
    def trec_text(self, run: Run, *, per_query: bool = False, summary: bool = True) -> str: ...
    def columns(self) -> list[str]: ...
    def stream(self, name: str | None = None) -> QueryStream: ...
    def __reduce__(self) -> tuple[Any, tuple[Qrels, list[str]]]: ...

def cli_main(argv: list[str], last: bool = False) -> int: ...
def as_qrels(obj: Any) -> Qrels: ...
def set_max_line_bytes(n: int) -> int: ...
def _write_file(path: str | os.PathLike[str], data: bytes) -> None: ...
def as_run(obj: Any) -> Run: ...
def dense_inputs(y_true: Any, y_score: Any) -> tuple[Qrels, Run]: ...
def dense_dcg(
    which: str,
    y_true: Any,
    y_score: Any,
    k: int | None = None,
    log_base: float = 2.0,
    ignore_ties: bool = False,
) -> Any: ...
def parse_cli_args(argv: list[str]) -> dict[str, Any]: ...
def parse_compare_args(argv: list[str], command: str = "compare") -> dict[str, Any]: ...
def trec_eval(argv: list[str]) -> dict[str, dict[str, Any]]: ...
def measures() -> list[tuple[str, str, str]]: ...
def _after_fork_in_child() -> None: ...
def _panic_for_tests(where_: str) -> None: ...
def _run_from_pickle(data: bytes) -> Run: ...
def _qrels_from_pickle(data: bytes) -> Qrels: ...
def _test_result_from_pickle(
    statistic: float,
    pvalue: float,
    method: str,
    df: float | None,
    t: tuple[float, float, str] | None,
) -> TestResult: ...
def _require(module: str, what: str, install: str) -> None: ...
def _measure_names(measures: Any, one: bool = False) -> list[str]: ...

QUERY_COLUMNS: list[str]
DOC_COLUMNS: list[str]
LABEL_COLUMNS: list[str]
SCORE_COLUMNS: list[str]

def canonical_names(measure: str, names: str | None = None) -> list[str]: ...
def aggregate(values: Mapping[Any, float] | Iterable[float], how: str = "mean") -> float: ...
def bootstrap_ci(
    values: Mapping[Any, float] | Iterable[float],
    confidence: float = 0.95,
    resamples: int | None = None,
    seed: int | None = None,
) -> tuple[float, float]: ...
def kendall_tau(x: _Floats, y: _Floats) -> float: ...
def spearman_rho(x: _Floats, y: _Floats) -> float: ...
def kendall_topk_distance(
    a: Sequence[str], b: Sequence[str], k: int | None = None, penalty: float = 0.5
) -> float: ...
def rbo(a: Sequence[str], b: Sequence[str], p: float = 0.9) -> float: ...
def pooled_auroc(qrels: Qrels, run: Run, rel: int = 1, max_fpr: float | None = None) -> float: ...
def compare_runs(
    a: Run,
    b: Run,
    method: str = "rbo",
    k: int | None = None,
    p: float = 0.9,
    penalty: float = 0.5,
) -> dict[str, float]: ...
def diversity(
    qrels: Any,
    run: Any,
    measures: _Measures | None = None,
    *,
    alpha: float | None = None,
    beta: float | None = None,
    relevance_level: int | None = None,
    judged_only: bool | None = None,
    complete: bool | None = None,
    max_docs: int | None = None,
    ties: str = "descending",
    n_threads: int | None = None,
) -> tuple[list[str], list[str], Any, list[float]]: ...
def normalize(run: Any, method: str = "min-max", *, name: str | None = None) -> Run: ...
def fuse(
    runs: Iterable[Any] | Mapping[str, Any],
    method: str = "rrf",
    norm: str | None = None,
    params: Mapping[str, Any] | None = None,
    *,
    qrels: Any = None,
    name: str | None = None,
) -> Run: ...
def train_fusion(
    qrels: Any,
    runs: Iterable[Any] | Mapping[str, Any],
    method: str,
    norm: str | None = None,
    params: Mapping[str, float] | None = None,
) -> dict[str, Any]: ...
def fusion_methods() -> tuple[list[str], list[str]]: ...
def optimize_fusion(
    qrels: Any,
    runs: Iterable[Any] | Mapping[str, Any],
    method: str = "wsum",
    norm: str | None = "min-max",
    metric: _Measure = "ndcg",
    *,
    step: float | None = None,
    return_optimization_report: bool = False,
    progress: _Progress = None,
) -> Any: ...

@final
class TestResult:
    __test__: bool
    def __new__(
        cls, statistic: float, pvalue: float, method: str, df: float | None = None
    ) -> TestResult: ...
    @property
    def statistic(self) -> float: ...
    @property
    def pvalue(self) -> float: ...
    @property
    def method(self) -> str: ...
    @property
    def df(self) -> float | None: ...
    def confidence_interval(self, confidence_level: float = 0.95) -> tuple[float, float]: ...
    def __iter__(self) -> Iterator[float]: ...
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]: ...

@final
class _Report:
    def render(self, format: str, digits: int | None = None, percent: bool = False) -> str: ...
    def to_json(self, per_query: bool = False) -> str: ...
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]: ...

_Floats = Sequence[float] | Any

def ttest(x: _Floats, y: _Floats, alternative: str = "two-sided") -> TestResult: ...
def wilcoxon(
    x: _Floats,
    y: _Floats,
    alternative: str = "two-sided",
    *,
    zero_method: str = "wilcox",
    correction: bool = False,
    method: str = "auto",
) -> TestResult: ...
def sign_test(x: _Floats, y: _Floats, alternative: str = "two-sided") -> TestResult: ...
def randomization_test(
    x: _Floats, y: _Floats, n_resamples: int, seed: int, alternative: str = "two-sided"
) -> TestResult: ...
def bootstrap_test(
    x: _Floats, y: _Floats, n_resamples: int, seed: int, alternative: str = "two-sided"
) -> TestResult: ...
def kendall_tau_test(x: _Floats, y: _Floats) -> TestResult: ...
def tau_ap(x: _Floats, y: _Floats) -> float: ...
def correct(pvalues: _Floats, method: str) -> Any: ...
def effect_size(
    x: _Floats,
    y: _Floats,
    confidence: float = 0.95,
    n_resamples: int | None = None,
    seed: int | None = None,
) -> dict[str, Any]: ...
def compare_runs_report(
    evaluator: Evaluator,
    runs: Sequence[tuple[str, Run]],
    how: dict[str, Any],
    progress: _Progress = None,
) -> _Report: ...
def compare_values_report(
    names: Sequence[str],
    query_ids: Sequence[str],
    measures: Sequence[tuple[str, Sequence[_Floats]]],
    how: dict[str, Any],
) -> _Report: ...
def tukey_hsd(samples: Sequence[_Floats]) -> tuple[list[float], list[float]]: ...
def randomized_tukey_hsd(
    samples: Sequence[_Floats], n_resamples: int, seed: int
) -> list[float]: ...
def check_compare_options(how: dict[str, Any]) -> None: ...
def studentized_range_sf(q: float, k: int, df: float) -> float: ...
def anova2(rows: Sequence[_Floats]) -> dict[str, list[float]]: ...

@final
class OnlineLog:
    def __len__(self) -> int: ...
    @property
    def n_sessions(self) -> int: ...
    @property
    def ignored(self) -> list[tuple[str, int]]: ...
    @property
    def reordered(self) -> int: ...
    @property
    def time_style(self) -> str | None: ...
    @property
    def variants(self) -> list[str]: ...
    def has(self, field: str) -> bool: ...

def online_read(
    path: _Path,
    *,
    format: str = "auto",
    columns: Mapping[str, str] | None = None,
    success_events: Sequence[str] = ...,
    dwell_cap: float = ...,
    time_unit: str = "auto",
) -> OnlineLog: ...
def online_from_columns(
    columns: Mapping[str, Any],
    *,
    success_events: Sequence[str] = ...,
    dwell_cap: float = ...,
    time_unit: str = "auto",
) -> OnlineLog: ...
def online_from_arrow(
    data: Any,
    *,
    columns: Mapping[str, str] | None = None,
    success_events: Sequence[str] = ...,
    dwell_cap: float = ...,
    time_unit: str = "auto",
) -> OnlineLog: ...
def online_evaluate_stream(
    path: _Path,
    metrics: Sequence[str] | None = None,
    *,
    dwell_threshold: float = 30.0,
    session_timeout: float = 1800.0,
    time_slack: float = 0.0,
    format: str = "auto",
    columns: Mapping[str, str] | None = None,
    success_events: Sequence[str] = ...,
    dwell_cap: float = ...,
    time_unit: str = "auto",
) -> tuple[list[str], list[float], int, int, list[tuple[str, int]], int]: ...
def online_evaluate(
    log: OnlineLog,
    metrics: Sequence[str] | None = None,
    *,
    dwell_threshold: float = 30.0,
    by_variant: bool = False,
    baseline: str | None = None,
    n_resamples: int | None = None,
    seed: int | None = None,
    confidence: float = 0.95,
) -> tuple[
    list[str],
    list[tuple[str, int, list[float]]],
    list[tuple[str, str, str, float, float, float, float]],
]: ...
def online_session_parts(
    log: OnlineLog,
    metrics: Sequence[str] | None = None,
    *,
    dwell_threshold: float = 30.0,
) -> tuple[
    list[str],
    list[str],
    Any,
    Any,
    list[str],
    Any,
    Any,
    Any,
    Any,
]: ...
def online_combine(
    metrics: Sequence[str],
    sessions: Sequence[str] | None,
    variant: Any,
    variants: Sequence[str],
    num: Any,
    den: Any,
    ttfc: Any,
    ttfc_ends: Any,
    *,
    by_variant: bool = False,
    baseline: str | None = None,
    n_resamples: int | None = None,
    seed: int | None = None,
    confidence: float = 0.95,
    source: str = ...,
) -> tuple[
    list[str],
    list[tuple[str, int, list[float]]],
    list[tuple[str, str, str, float, float, float, float]],
]: ...
def online_top_queries(
    log: OnlineLog,
    n: int | None = None,
    window: tuple[float, float] | None = None,
    normalize: bool = False,
) -> list[tuple[str, int, float]]: ...
def online_queries_per(
    log: OnlineLog, bucket: str = "hour", spike_k: float = 3.0
) -> dict[str, Any]: ...
def online_parse_time(text: str) -> float | None: ...
def online_ctr_by_query(
    log: OnlineLog, n: int | None = None, normalize: bool = False
) -> list[tuple[str, int, int, float]]: ...

ONLINE_FIELDS: list[str]
