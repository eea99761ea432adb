"""Which compression codec the dispatcher's producer uses: ratio and CPU on real payloads.

The payloads are real ``schd`` values: a day-like mix built by the pump (``MemoryStore``)
from the traffic generator (a SCHD DNLD of FLIGHTS flights, then random FLOPs), plus one
huge flight (a FLOP GTDT of HUGE_GATES gates: several MB, what a real flight's state can
grow to). Each codec produces the same records to a private tansu broker with the
dispatcher's producer configuration (``producer_config``, record limit raised so the huge
one is sent); the table shows, per codec and per payload set, the bytes librdkafka put on
the wire (``txbytes`` from its statistics: compressed batches plus protocol framing), the
ratio to the payload bytes, and the process CPU time (all threads: compression runs on
librdkafka's broker threads). The machine is shared: codecs alternate for
BENCH_COMPRESSION_ROUNDS rounds (3) and the medians are shown.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from confluent_kafka import Producer

from flightstate_core.memory import MemoryInbox, MemoryStore
from flightstate_kafka import KafkaSettings, TopicSettings, provision_topics
from flightstate_kafka.producer import producer_config
from flightstate_testing.builders import SisBuilder
from flightstate_testing.kafka import TansuBroker
from flightstate_testing.pumping import pump_until_idle
from flightstate_testing.traffic import TrafficGenerator

FLIGHTS = int(os.environ.get("BENCH_COMPRESSION_FLIGHTS", "400"))
FLOPS = int(os.environ.get("BENCH_COMPRESSION_FLOPS", "4000"))
HUGE_GATES = int(os.environ.get("BENCH_COMPRESSION_HUGE_GATES", "20000"))
ROUNDS = int(os.environ.get("BENCH_COMPRESSION_ROUNDS", "3"))
CODECS = ("none", "lz4", "zstd", "snappy", "gzip")
_LIMIT = 16_000_000  # every payload here is sent


def day_payloads() -> list[bytes]:
    """Every ``schd`` payload the pump writes for a DNLD and FLOPS random FLOPs."""
    gen = TrafficGenerator(seed=11)
    flids = list(range(1, FLIGHTS + 1))
    inbox = MemoryInbox()
    inbox.append(gen.schedule("DNLD", flids))
    for n in range(FLOPS):
        inbox.append(gen.random_flop(flids[n % len(flids)], flids))
    store = MemoryStore()
    pump_until_idle(store, inbox)
    return [e.payload for e in store.events() if e.topic == "schd" and e.payload]


def huge_payload() -> bytes:
    """The ``schd`` payload of one flight with HUGE_GATES gate rows."""
    sis = SisBuilder(seed=3)
    inbox = MemoryInbox()
    inbox.append(sis.schedule("ADD", [1]))
    gates = [{"GATE": f"G{i % 60}", "PGOT": sis.when(1, -40), "GTYP": "D"}
             for i in range(HUGE_GATES)]  # fmt: skip
    inbox.append(sis.collection(1, "GTDT", gates))
    store = MemoryStore()
    pump_until_idle(store, inbox)
    return max((e.payload for e in store.events() if e.topic == "schd" and e.payload), key=len)


def produce(bootstrap: str, topic: str, codec: str, payloads: list[bytes],
            *, one_by_one: bool = False) -> tuple[int, float]:  # fmt: skip
    """(txbytes, CPU seconds) of producing *payloads* with *codec* and flushing (after
    each record if *one_by_one*)."""
    stats: list[dict[str, Any]] = []
    conf: dict[str, Any] = dict(producer_config(KafkaSettings(bootstrap, max_record_bytes=_LIMIT)))
    conf.update({"compression.type": codec, "statistics.interval.ms": 100, "log_level": 3,
                 "stats_cb": lambda text: stats.append(json.loads(text))})  # fmt: skip
    producer = Producer(conf)
    producer.poll(0.3)  # connected, metadata known: not counted
    stats.clear()
    cpu = time.process_time()
    for n, payload in enumerate(payloads):
        while True:
            try:
                producer.produce(topic, payload, b"F%d" % (n % 997))
                break
            except BufferError:
                producer.poll(0.01)
        if one_by_one:
            producer.flush(30)
    left = producer.flush(120)
    cpu = time.process_time() - cpu
    producer.poll(0.3)  # one more statistics report after the flush
    if left:
        raise RuntimeError(f"{codec}: {left} records not delivered")
    sent = max((sum(b["txbytes"] for b in s["brokers"].values()) for s in stats), default=0)
    return sent, cpu


def main() -> None:
    day = day_payloads()
    sets = {"day": day, "live": day[-300:], "huge": [huge_payload()] * 3}
    print(
        f"payloads: day {len(day)} records, {sum(map(len, day)) / 1e6:.1f} MB "
        f"(median {statistics.median(map(len, day)):.0f} bytes); "
        f"huge 3 x {len(sets['huge'][0]):,} bytes"
    )
    results: dict[tuple[str, str], list[tuple[int, float]]] = {}
    with TansuBroker() as broker:
        for round_ in range(ROUNDS):
            for name, payloads in sets.items():
                for codec in CODECS:
                    topic = f"bench-{codec}-{name}-{round_}"
                    settings = KafkaSettings(
                        broker.bootstrap, topics={"schd": topic, "msg": topic + "-m"}
                    )
                    provision_topics(settings, TopicSettings(partitions=1))
                    results.setdefault((name, codec), []).append(
                        produce(broker.bootstrap, topic, codec, payloads, one_by_one=name == "live")
                    )
    print(
        f"{'set':<5} {'codec':<7} {'payload MB':>10} {'wire MB':>8} {'ratio':>6} "
        f"{'CPU s':>6} {'CPU µs/KB':>9}"
    )
    for (name, codec), runs in results.items():
        raw = sum(map(len, sets[name]))
        sent = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        print(
            f"{name:<5} {codec:<7} {raw / 1e6:>10.2f} {sent / 1e6:>8.2f} "
            f"{raw / sent:>6.1f} {cpu:>6.2f} {cpu * 1e6 / (raw / 1e3):>9.1f}"
        )


if __name__ == "__main__":
    main()
