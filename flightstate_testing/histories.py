"""Hypothesis strategies for random message histories (the messages are built with
``flightstate_testing.models``; ``flightstate_testing.replay`` hands a history over as inbox
rows and applies it in batches). The strategies draw
every kind the pump sees: FLOP blocks of every catalog subtype (FDEL and the codeshare
group included), SCHD packages (some with an OPERATION_DAY conflict or a FLID twice),
Set-only ADFT/ADD/UPD, SCHD DEL, ignored kinds (SCHS, reference data) and messages whose
decoding failed. A history step is a new message, a replay of an earlier inbox row (same
message id) or a resend of an earlier message under a new id (a business duplicate).
FLIDs come from a small pool so that histories collide on flights, masters and stands.
"""

from __future__ import annotations

from typing import Any, Final

from attrs import evolve, frozen
from hypothesis import strategies as st

from flightstate_core.domain.catalog import (
    COLLECTIONS,
    DOCUMENTS,
    EXCEPTIONS,
    FLOP_SUBTYPES,
    PORT_SCALARS,
    SCALARS,
    STAND_UPDATES,
    ChildSpec,
    ValueKind,
)
from flightstate_core.domain.errors import ProtocolError
from flightstate_core.domain.items import DocItem, Item
from flightstate_core.domain.messages import (
    CollectionValue,
    DocumentValue,
    Envelope,
    FlightRecord,
    FlopMessage,
    Message,
    ScheduleMessage,
    StandUpdate,
)
from flightstate_core.domain.values import CLEAR, Clear, Set
from flightstate_core.engine.outcome import Undecodable
from flightstate_testing import strategies as shared
from flightstate_testing.models import (
    DTTM,
    collection_items,
    envelope,
    flop,
    payload_digest,
    record,
    schedule,
)  # fmt: skip

__all__ = ["FLID_POOL", "Step", "histories", "messages", "steps"]

FLID_POOL: Final = shared.FLID_POOL
_STANDS: Final = ("504", "505")
_NO_ENVELOPE: Final = Envelope("", "", "", "", "")

# ----------------------------------------------------------------------------- values

_TEXT = st.sampled_from(["A", "B", "0", "01", " ", "x y", "长"])
_TIMES = st.sampled_from(["23JAN210535", "23JAN210140", "24JAN212330", "01FEB211200"])
_FLID = st.sampled_from(FLID_POOL)


def _raw(kind: ValueKind, allowed: frozenset[str] | None) -> st.SearchStrategy[str]:
    if allowed is not None:
        return st.sampled_from(sorted(allowed))
    if kind is ValueKind.TIME:
        return _TIMES
    if kind is ValueKind.DURATION:
        return st.sampled_from(["0010", "0130"])
    return _TEXT


def _op(code: str, *, clear: bool = True) -> st.SearchStrategy[Set | Clear]:
    spec = SCALARS[code]
    sets = _raw(spec.kind, spec.allowed).map(Set)
    if code == "MAID":
        sets = _FLID.map(Set)
    return st.one_of(sets, st.just(CLEAR)) if clear else sets


def _child_values(
    children: tuple[ChildSpec, ...],
) -> st.SearchStrategy[tuple[tuple[str, str], ...]]:
    def draw_values(present: list[bool], raws: list[str]) -> tuple[tuple[str, str], ...]:
        return tuple((c.code, r) for c, p, r in zip(children, present, raws, strict=True) if p)

    return st.builds(
        draw_values,
        st.lists(st.booleans(), min_size=len(children), max_size=len(children)),
        st.tuples(*(_raw(c.kind, c.allowed) | st.just("") for c in children)).map(list),
    )


def _items(code: str) -> st.SearchStrategy[tuple[Item, ...]]:
    spec = COLLECTIONS[code]
    seqs = st.sampled_from([None, "1", "2", "3"]) if spec.seq_attr else st.none()
    children = spec.children
    if code == "PSDT":
        values = _child_values(children[1:3]).flatmap(
            lambda rest: st.sampled_from(_STANDS).map(lambda s: (("PSST", s), *rest))
        )
    else:
        values = _child_values(children)
    one = st.builds(lambda q, v: Item(0, q, v), seqs, values)
    return st.lists(one, min_size=1, max_size=3).map(lambda xs: collection_items(*xs))


def _collection(code: str) -> st.SearchStrategy[CollectionValue]:
    return st.one_of(_items(code), st.just(CLEAR))


def _document(code: str) -> st.SearchStrategy[DocumentValue]:
    spec = DOCUMENTS[code]
    entry = _child_values(spec.children).filter(bool).map(DocItem)
    return st.one_of(st.lists(entry, min_size=1, max_size=2).map(tuple), st.just(CLEAR))


def _stand_update(kind: str) -> st.SearchStrategy[StandUpdate]:
    seq_child, _, children = STAND_UPDATES[kind]
    values = st.tuples(*(_raw(c.kind, c.allowed).map(Set) for c in children))
    ops = values.map(lambda vs: tuple((c.code, v) for c, v in zip(children, vs, strict=True)))
    seq = st.sampled_from(["1", "2"]) if seq_child else st.none()
    return st.builds(lambda m, q, o: StandUpdate(kind, m, q, o), st.sampled_from(_STANDS), seq, ops)


def _element(element: str, draw: Any) -> dict[str, Any]:
    """Record fields for one FLOP element: {"scalars"|"collections"|...: {...}}."""
    if element in EXCEPTIONS:
        spec = EXCEPTIONS[element]
        parts = (spec.text_part, *spec.attributes.values())
        chosen = draw(st.lists(st.sampled_from(parts), min_size=1, unique=True))
        return {"scalars": {p: draw(_op(p)) for p in chosen}}
    if element == "PORT":
        part = draw(st.sampled_from(sorted(PORT_SCALARS.values())))
        return {"scalars": {part: draw(_op(part))}}
    if element in COLLECTIONS:
        return {"collections": {element: draw(_collection(element))}}
    if element in DOCUMENTS:
        return {"documents": {element: draw(_document(element))}}
    if element in STAND_UPDATES:
        return {"stand_updates": (draw(_stand_update(element)),)}
    return {"scalars": {element: draw(_op(element))}}


@st.composite
def flop_messages(draw: Any, styp: str | None = None) -> FlopMessage:
    """One FLOP block of a random (or the given) catalog subtype."""
    styp = styp or draw(st.sampled_from(sorted(FLOP_SUBTYPES)))
    flid = draw(_FLID)
    if styp == "FDEL":
        return flop(styp, record(flid, delete=True), seqn=draw(_SEQN), dttm=draw(_SENT))
    elements = sorted(FLOP_SUBTYPES[styp])
    chosen = draw(st.lists(st.sampled_from(elements), min_size=1, unique=True))
    fields: dict[str, Any] = {}
    for element in chosen:
        for key, value in _element(element, draw).items():
            fields[key] = value if key == "stand_updates" else {**fields.get(key, {}), **value}
    return flop(styp, record(flid, **fields), seqn=draw(_SEQN), dttm=draw(_SENT))


_SEQN = st.sampled_from(["1243", "1", "2"])
# Few send times, so that histories reuse one SEQN with the same payload at another DTTM
# (A -> B -> A, earlier or later): another message, never a duplicate.
_SENT = st.sampled_from([DTTM, DTTM.replace(hour=9), DTTM.replace(day=20)])
_PACKAGE_SCALARS: Final = ("ALCD", "FLNO", "MVIN", "STND", "MAID", "CSOP", "REMC", "ACTT")


@st.composite
def _package_record(draw: Any, flid: str, *, clear: bool) -> FlightRecord:
    scalars: dict[str, Set | Clear] = {}
    if draw(st.booleans()):
        scalars["SODT"] = Set(draw(_TIMES))
    for code in draw(st.lists(st.sampled_from(_PACKAGE_SCALARS), unique=True, max_size=4)):
        scalars[code] = draw(_op(code, clear=clear))
    colls = draw(st.lists(st.sampled_from(sorted(COLLECTIONS)), unique=True, max_size=2))
    documents = {"MAFL": draw(_mafl())} if draw(st.integers(0, 3)) == 0 else {}
    return record(flid, scalars, {code: draw(_collection(code)) for code in colls}, documents)


def _mafl() -> st.SearchStrategy[DocumentValue]:
    """A carried MAFL naming FLIDs of the pool, codeshares or not (upstream's list)."""
    entry = _FLID.map(lambda flid: DocItem((("FLID", flid), ("CSOP", "MU"))))
    return st.one_of(st.lists(entry, min_size=1, max_size=3).map(tuple), st.just(CLEAR))


@st.composite
def schedule_messages(draw: Any) -> ScheduleMessage:
    """A SCHD package, Set-only message or DEL (sometimes with a FLID twice)."""
    styp = draw(st.sampled_from(["DNLD", "RESP", "ADFT", "ADD", "UPD"] * 2 + ["DEL"]))
    flids = draw(st.lists(_FLID, min_size=1, max_size=3))
    if styp == "DEL":
        return schedule(styp, *(record(f) for f in flids), seqn=draw(_SEQN), dttm=draw(_SENT))
    records = [draw(_package_record(f, clear=True)) for f in flids]
    return schedule(styp, *records, seqn=draw(_SEQN), recs=len(records), dttm=draw(_SENT))


def _ignored() -> st.SearchStrategy[Message]:
    return st.one_of(
        shared.schedule_season_messages(),
        shared.reference_data_messages(),
        shared.schedule_requests(),
        shared.reference_requests(),
    )


def _with_digest(message: Message) -> Message:
    """The shared strategies leave the digest empty: derive one from the payload."""
    return evolve(
        message, payload_digest=payload_digest(repr(evolve(message, envelope=_NO_ENVELOPE)))
    )


def _shared_flight_messages() -> st.SearchStrategy[Message]:
    """The codec's strategies (any values, random stands and days) on our FLID pool."""
    return st.one_of(shared.flop_messages(flid=_FLID), shared.schedule_messages(max_records=3)).map(
        _with_digest
    )


def _undecodable() -> st.SearchStrategy[Undecodable]:
    return st.sampled_from(
        [
            Undecodable(ProtocolError("/", "not well-formed XML"), None),
            Undecodable(
                ProtocolError("/MSG/FLOP[1]/TOBT", "carries none"), envelope("FLOP", "TOBT")
            ),
        ]
    )


def messages() -> st.SearchStrategy[Message | Undecodable]:
    """Any message the pump may see (FLOP weighted highest)."""
    return st.one_of(
        flop_messages(),
        flop_messages(),
        schedule_messages(),
        _shared_flight_messages(),
        _ignored().map(_with_digest),
        _undecodable(),
    )


@frozen
class Step:
    """One inbox event: a new message, a replay of row ``index``, or a resend of it; an
    id reserved by an AODB writer that has not committed yet, or a late message: one
    committed into such a reserved id after higher ids were applied (docs/design.md,
    "Late rows and provenance")."""

    kind: str  # "new", "replay", "resend", "reserve", "late"
    message: Message | Undecodable | None = None
    index: int = 0


def steps() -> st.SearchStrategy[Step]:
    """One step of a history."""
    return st.one_of(
        messages().map(lambda m: Step("new", m)),
        messages().map(lambda m: Step("new", m)),
        st.integers(0, 50).map(lambda i: Step("replay", index=i)),
        st.integers(0, 50).map(lambda i: Step("resend", index=i)),
        st.just(Step("reserve")),
        st.builds(lambda m, i: Step("late", m, i), messages(), st.integers(0, 50)),
    )


def about(message: Message | Undecodable, flid: str) -> Message | Undecodable:
    """*message* about *flid* only (its first record or block, renamed)."""
    if isinstance(message, FlopMessage) and message.blocks:
        return evolve(message, blocks=(evolve(message.blocks[0], flid=flid),))
    if isinstance(message, ScheduleMessage) and message.records:
        return evolve(message, records=(evolve(message.records[0], flid=flid),), recs=1)
    return message


def _about_one() -> st.SearchStrategy[Message]:
    return st.one_of(flop_messages(), flop_messages(), schedule_messages())


def _same_subtype() -> st.SearchStrategy[tuple[Message, Message]]:
    """Two FLOPs of one subtype: they carry the same keys, so the late one meets them."""
    return st.sampled_from(sorted(FLOP_SUBTYPES)).flatmap(
        lambda styp: st.tuples(flop_messages(styp), flop_messages(styp))
    )


def overtaking_pairs() -> st.SearchStrategy[tuple[Message, Message]]:
    """(newer, older) messages for ``overtaken``: often of one FLOP subtype."""
    return st.one_of(_same_subtype(), st.tuples(_about_one(), _about_one()))


def overtaken() -> st.SearchStrategy[list[Step]]:
    """Two messages about one flight, the older id committed after the newer was applied:
    the older (late) message meets the keys the newer one stamped."""
    pairs = overtaking_pairs()
    return st.builds(
        lambda flid, pair: [
            Step("reserve"), Step("new", about(pair[0], flid)), Step("late", about(pair[1], flid))
        ],
        _FLID, pairs,
    )  # fmt: skip


def _sent_again(message: Message | Undecodable) -> Message | Undecodable:
    """*message* sent again by the AODB (another SEQN, so not a duplicate): the same
    values, which change nothing but raise the stamps of the keys it carries."""
    if isinstance(message, Undecodable) or message.envelope is None:
        return message
    envelope = message.envelope
    return evolve(message, envelope=evolve(envelope, seqn=f"{envelope.seqn}9"))


def resent_then_overtaken() -> st.SearchStrategy[list[Step]]:
    """A message, its unchanged re-send, and a late message whose id lies between the two:
    the keys stay as the re-send (the newest) left them (docs/design.md, "Late rows and
    provenance")."""
    return st.builds(
        lambda flid, pair: [
            Step("new", about(pair[0], flid)), Step("reserve"),
            Step("new", _sent_again(about(pair[0], flid))), Step("late", about(pair[1], flid)),
        ],
        _FLID, overtaking_pairs(),
    )  # fmt: skip


def histories(max_size: int = 30) -> st.SearchStrategy[list[Step]]:
    """A random history of steps (late messages included: ``reserve``, ``overtaken``,
    ``resent_then_overtaken``)."""
    groups = st.one_of(
        steps().map(lambda step: [step]), overtaken(), overtaken(), resent_then_overtaken()
    )
    return st.lists(groups, max_size=max_size).map(
        lambda nested: [step for group in nested for step in group][:max_size]
    )
