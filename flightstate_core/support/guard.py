"""Running a function inside an adapter's error translator.

Why: every method of a store's transaction must raise only the core's errors
(docs/design.md, "Layers": an adapter's driver errors are translated to the core's). Each
adapter has one translator (``_errors.translated``, a context manager); ``guarded_by`` turns
it into a decorator, so the methods of both stores' transactions are wrapped the same way.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import ParamSpec, TypeVar

__all__ = ["guarded_by"]

P = ParamSpec("P")
R = TypeVar("R")


def guarded_by(
    translated: Callable[[], AbstractContextManager[object]],
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A decorator running the function inside ``translated()``."""

    def guard(method: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(method)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            with translated():
                return method(*args, **kwargs)

        return wrapper

    return guard
