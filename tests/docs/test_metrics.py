"""Every metric the documents name is one the runner exports (a family name, or a sample
name such as ``_total``), or one of the inbox-gap metrics the pump's stats feed."""

from __future__ import annotations

import re

from prometheus_client.core import Metric

from flightstate_runner.metrics import RunnerMetrics
from tests.docs._markdown import DOCUMENTS
from tests.ops.test_ops import GAP_METRICS

_SUFFIXES = {"counter": ("_total",), "histogram": ("", "_bucket", "_sum", "_count"),
             "gauge": ("",), "summary": ("", "_sum", "_count")}  # fmt: skip
_METRIC = re.compile(r"\bflightstate_[a-z_]+\b")
# Words of the project that look like metric names: its packages and its console script's
# module paths.
_NOT_METRICS = re.compile(r"flightstate_(core|pg|oracle|kafka|mysql|runner|testing)\b")


def test_every_metric_named_in_the_documents_is_exported() -> None:
    families: list[Metric] = list(RunnerMetrics().registry.collect())
    known = {f.name + s for f in families for s in _SUFFIXES[f.type]} | GAP_METRICS
    named = {name for doc in DOCUMENTS for name in _METRIC.findall(doc.read_text(encoding="utf-8"))
             if not _NOT_METRICS.match(name)}  # fmt: skip
    assert len(named) >= 10  # the documents do name the metrics an operator watches
    assert sorted(named - known) == []
