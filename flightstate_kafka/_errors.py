"""The one choke point where confluent-kafka errors become core errors."""

from __future__ import annotations

from confluent_kafka import KafkaError, KafkaException

from flightstate_core.errors import FlightstateError, PermanentError, TransientError

__all__ = ["translate"]

# Errors a retry cannot fix: bad configuration, authorization, a message the broker refuses.
_PERMANENT = frozenset({
    KafkaError._INVALID_ARG,
    KafkaError.TOPIC_AUTHORIZATION_FAILED,
    KafkaError.CLUSTER_AUTHORIZATION_FAILED,
    KafkaError.MSG_SIZE_TOO_LARGE,
    KafkaError.INVALID_CONFIG,
})


def translate(error: KafkaError | KafkaException | BaseException, what: str) -> FlightstateError:
    """A core error for a Kafka failure (``raise translate(exc, "...") from exc``)."""
    if isinstance(error, KafkaException) and error.args and isinstance(error.args[0], KafkaError):
        error = error.args[0]
    if isinstance(error, KafkaError):
        text = f"{what}: {error.name()}: {error.str()}"
        if error.code() in _PERMANENT and not error.retriable():
            return PermanentError(text)
        return TransientError(text)
    return TransientError(f"{what}: {error}")
