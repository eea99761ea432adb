"""The runner tests' store fixtures (``_backends``): one fresh store per backend."""

from tests.runner._backends import restored_process, store_case

__all__ = ["restored_process", "store_case"]
