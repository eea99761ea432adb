"""The in-memory store: the reference implementation of the store, inbox and outbox ports
(pure Python, no driver), used by the model tests and the runner's memory backend."""

from flightstate_core.memory._store import MemoryInbox, MemoryStore, MemoryTransaction

__all__ = ["MemoryInbox", "MemoryStore", "MemoryTransaction"]
