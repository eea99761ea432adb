"""The in-memory store: the reference implementation of the store, inbox and outbox ports
(pure Python, no driver), used by the model tests and the runner's memory backend.

Why copy-on-write: a transaction works on shallow copies of the committed tables (the
values are immutable attrs objects), so rollback is dropping the copy, a savepoint is
one more copy, and commit is one reference swap. Transactions (and the few mutators that
run outside one) are serialized by one lock, like PIPELINE_LOCK serializes the real
stores; readers see the last committed tables. Do not call the store's mutators from
inside an open transaction in the same thread: the commit would overwrite them.
"""

from flightstate_core.memory._store import MemoryStore
from flightstate_core.memory.inbox import MemoryInbox
from flightstate_core.memory.transaction import MemoryTransaction

__all__ = ["MemoryInbox", "MemoryStore", "MemoryTransaction"]
