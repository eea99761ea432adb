"""The one choke point where confluent-kafka errors become core errors."""

from __future__ import annotations

from confluent_kafka import KafkaError, KafkaException

from flightstate_core.domain.errors import FlightstateError, PermanentError, TransientError

__all__ = ["REFUSALS", "refusal", "translated"]

# Errors a retry cannot fix: bad configuration, authorization, a message the broker refuses.
_PERMANENT = frozenset(
    {
        KafkaError._INVALID_ARG,
        KafkaError.TOPIC_AUTHORIZATION_FAILED,
        KafkaError.CLUSTER_AUTHORIZATION_FAILED,
        KafkaError.MSG_SIZE_TOO_LARGE,
        KafkaError.INVALID_CONFIG,
    }
)

#: A record the broker (or the producer's own size check) refuses for what it *is*: sending
#: it again cannot succeed, so the dispatcher parks it (docs/design.md, "Outbox dispatch").
#: MSG_SIZE_TOO_LARGE also comes from produce() itself (over ``message.max.bytes``, checked
#: before compression); RECORD_LIST_TOO_LARGE: a batch over the broker's segment size;
#: INVALID_RECORD: the broker failed to validate the record; INVALID_MSG_SIZE: a record
#: size the broker cannot accept. Not INVALID_MSG (a CRC error: corruption on the way,
#: retriable) and not timeouts or connection errors: a broker that is down never parks.
REFUSALS = frozenset(
    {
        KafkaError.MSG_SIZE_TOO_LARGE,
        KafkaError.RECORD_LIST_TOO_LARGE,
        KafkaError.INVALID_RECORD,
        KafkaError.INVALID_MSG_SIZE,
    }
)


def refusal(error: object) -> str | None:
    """The parking reason if *error* is a permanent refusal of one record, else None."""
    if isinstance(error, KafkaError) and error.code() in REFUSALS:
        return f"{error.name()}: {error.str()}"
    return None


def translated(error: KafkaError | KafkaException | BaseException, what: str) -> FlightstateError:
    """A core error for a Kafka failure (``raise translated(exc, "...") from exc``)."""
    if isinstance(error, KafkaException) and error.args and isinstance(error.args[0], KafkaError):
        error = error.args[0]
    if isinstance(error, KafkaError):
        text = f"{what}: {error.name()}: {error.str()}"
        if error.code() in _PERMANENT and not error.retriable():
            return PermanentError(text)
        return TransientError(text)
    return TransientError(f"{what}: {error}")
