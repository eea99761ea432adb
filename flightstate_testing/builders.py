"""Raw SIS XML for tests: one builder method per message family of the protocol
(docs/protocol.md §3).

``SisBuilder`` writes the messages an AODB sends, as text ready for an inbox: schedule
packages and set-only updates, schedule deletes, FLOP updates of every subtype family
(single scalars, groups, exception objects, PORT, collections, documents, stand updates,
codeshare links, FDEL), reference data, SCHS and deliberately broken messages. Element
shapes come from ``flightstate_core.domain.catalog`` (sequence attributes, attribute children,
document nesting), so a builder cannot drift from what the decoder accepts. Each message
gets a new SEQN and a DTTM 7 s after the previous one; the same seed gives the same bytes.

Values are raw SIS texts (times as ``DDMONYYHHMM``: ``when(flid, minutes)`` makes one); a
value of ``None`` writes the empty element, which the protocol reads as Clear.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from xml.sax.saxutils import escape, quoteattr

from flightstate_core.domain import catalog
from flightstate_testing.traffic import TrafficGenerator

__all__ = ["BROKEN_KINDS", "SisBuilder"]

#: ``SisBuilder.broken(kind)``: each ends DEAD with a reason naming what is wrong.
BROKEN_KINDS = ("not_well_formed", "unknown_type", "bad_time", "bad_enum", "recs_mismatch")

Values = Mapping[str, str | None]
DocumentItem = Mapping[str, str | Sequence[Values] | None]


def _element(code: str, text: str | None) -> str:
    return f"<{code}></{code}>" if text is None else f"<{code}>{escape(text)}</{code}>"


def _attributes(values: Mapping[str, str]) -> str:
    return "".join(f" {name}={quoteattr(value)}" for name, value in values.items())


def _children(values: Values) -> str:
    return "".join(_element(code, text) for code, text in values.items())


class SisBuilder:
    """Builds raw SIS messages; see the module docstring for the families and conventions."""

    def __init__(self, seed: int = 1, day: datetime | None = None) -> None:
        self._gen = TrafficGenerator(seed, day)  # None: traffic.DEFAULT_DAY

    def when(self, flid: int, minutes: int = 0) -> str:
        """A ``DDMONYYHHMM`` time: *flid*'s scheduled time on the builder's day + *minutes*."""
        return self._gen.when(flid, minutes)

    # ------------------------------------------------------------------ SCHD

    def schedule(self, styp: str, flids: Sequence[int]) -> str:
        """SCHD DNLD/RESP (package) or ADFT/ADD/UPD (set-only) with a full FLTR per flight."""
        if catalog.SCHEDULE_STYPES.get(styp) not in ("package", "set_only"):
            raise ValueError(f"schedule: STYP {styp!r} is not a package or set-only update")
        return self._gen.schedule(styp, list(flids))

    def schedule_delete(self, flid: int) -> str:
        """SCHD DEL of one flight (the same as FLOP FDEL)."""
        return self._gen.schedule_delete(flid)

    # ------------------------------------------------------------------ FLOP

    def flop(self, flid: int, styp: str, body: str) -> str:
        """A FLOP of subtype *styp* for *flid* whose block carries *body* (raw XML)."""
        if styp not in catalog.FLOP_SUBTYPES:
            raise ValueError(f"flop: unknown FLOP subtype {styp!r}")
        return self._gen.flop(styp, flid, body)

    def scalars(self, flid: int, styp: str, **values: str | None) -> str:
        """A single-scalar FLOP (``ESTT=...``) or a group (EXSS, HNAG, VIPP, TAOP, CSOP)."""
        allowed = catalog.FLOP_SUBTYPES.get(styp, frozenset())
        unknown = sorted(set(values) - allowed)
        if not values or unknown or styp in catalog.COLLECTIONS:
            raise ValueError(f"scalars: FLOP {styp} carries {sorted(allowed)}, not {unknown}")
        return self.flop(flid, styp, _children(values))

    def exception(self, flid: int, code: str, text: str | None, **attributes: str) -> str:
        """FDIV/FRET/FLAB, e.g. ``exception(1, "FDIV", "weather", DDES="PEK", DDIR="TO")``."""
        spec = catalog.EXCEPTIONS[code]
        unknown = sorted(set(attributes) - set(spec.attributes))
        if unknown:
            raise ValueError(f"exception: {code} has attributes {sorted(spec.attributes)}")
        inner = "" if text is None else escape(text)
        return self.flop(flid, code, f"<{code}{_attributes(attributes)}>{inner}</{code}>")

    def port(self, flid: int, poid: str, potm: str | None) -> str:
        """FLOP PORT: *poid* ``O`` (open) or ``C`` (close) at *potm* (None clears it)."""
        return self.flop(flid, "PORT", f"<PORT>{_element('POTM', potm)}<POID>{poid}</POID></PORT>")

    def codeshare(self, flid: int, master: int | None, *, csop: str = "MU") -> str:
        """FLOP CSOP making *flid* a codeshare of *master* (``None``: unlink it)."""
        if master is None:
            return self.scalars(flid, "CSOP", CSOP=None, CSFT=None, MAID=None)
        return self.scalars(flid, "CSOP", CSOP=csop, CSFT=f"{csop}{5000 + flid}", MAID=str(master))

    def collection(
        self, flid: int, code: str, items: Sequence[Values], *, seqs: Sequence[str] | None = None
    ) -> str:
        """A collection FLOP (GTDT CKDT CLDT PSDT CHDT DELY ABTM CHOT ERUT ...): one element
        per item, the sequence attribute 1, 2, ... unless *seqs* gives them. Attribute
        children (DELY's CODE/STRT/DURA) become attributes, the text child the text."""
        spec = catalog.COLLECTIONS[code]
        numbers = list(seqs) if seqs is not None else [str(n) for n in range(1, len(items) + 1)]
        return self.flop(flid, code, "".join(
            self._item(spec, item, seq) for item, seq in zip(items, numbers, strict=True)
        ))  # fmt: skip

    @staticmethod
    def _item(spec: catalog.CollectionSpec, item: Values, seq: str) -> str:
        attributes = {spec.seq_attr: seq} if spec.seq_attr else {}
        children: dict[str, str | None] = {}
        text = ""
        for code, value in item.items():
            child = spec.child(code)
            if child is None:
                raise ValueError(f"collection: {spec.code} has no child {code}")
            if child.attribute:
                attributes[code] = value or ""
            elif code == spec.text_child:
                text = escape(value or "")
            else:
                children[code] = value
        return f"<{spec.code}{_attributes(attributes)}>{text}{_children(children)}</{spec.code}>"

    def document(self, flid: int, code: str, items: Sequence[DocumentItem]) -> str:
        """SRVT or VIPF (replaces the document; no items clears it). A VIPF item may carry
        ``"VIPT": [{...}, ...]``, its nested groups."""
        spec = catalog.DOCUMENTS[code]
        if not items:
            return self.flop(flid, code, f"<{code}></{code}>")
        return self.flop(flid, code, "".join(
            f"<{code}>{''.join(self._document_part(spec, k, v) for k, v in item.items())}</{code}>"
            for item in items
        ))  # fmt: skip

    @staticmethod
    def _document_part(
        spec: catalog.DocumentSpec, key: str, value: str | Sequence[Values] | None
    ) -> str:
        if value is None or isinstance(value, str):
            return _element(key, value)
        if key not in spec.nested:
            raise ValueError(f"document: {spec.code} has no nested group {key}")
        return "".join(f"<{key}>{_children(group)}</{key}>" for group in value)

    def stand_update(self, flid: int, code: str, stand: str, **values: str | None) -> str:
        """PSHT (``PSTM``, ``PSID``, optional ``seq`` → PSHN) or TIPT (``TRTM``) on every
        stand-plan item of *flid* whose PSST is *stand*."""
        seq_attr, match, _children_specs = catalog.STAND_UPDATES[code]
        seq = values.pop("seq", None)
        attributes = {seq_attr: seq} if seq_attr and seq is not None else {}
        inner = _children(values) + _element(match, stand)
        return self.flop(flid, code, f"<{code}{_attributes(attributes)}>{inner}</{code}>")

    def delete(self, flid: int) -> str:
        """FLOP FDEL: the flight becomes DELETED (tombstone)."""
        return self.flop(flid, "FDEL", "<FDEL></FDEL>")

    # ------------------------------------------------------------------ not flight state

    def reference(self, type_: str = "AIRL", code: str = "X1") -> str:
        """A reference-data message of one of the 23 types (IGNORED)."""
        if type_ not in catalog.REFERENCE_DATA_TYPES:
            raise ValueError(f"reference: {type_!r} is not a reference-data type")
        body = f"<RECS>1</RECS><{type_}>{_element('CODE', code)}</{type_}>"
        return self._gen.envelope(type_, "UPD", body)

    def schs(self) -> str:
        """A SCHS message (IGNORED: recognised, not applied to flight state)."""
        return self._gen.envelope("SCHS", "UPD", "<SCHS><X>1</X></SCHS>")

    def broken(self, kind: str) -> str:
        """A message that must end DEAD; *kind* is one of ``BROKEN_KINDS``."""
        if kind == "not_well_formed":
            return self.scalars(1, "ESTT", ESTT=self.when(1)) + "</MSG>"
        if kind == "unknown_type":
            return self._gen.envelope("XXXX", "NONE", "<XXXX/>")
        if kind == "bad_time":
            return self.scalars(1, "ESTT", ESTT="99XYZ261234")
        if kind == "bad_enum":
            return self.exception(1, "FDIV", "x", DDES="PEK", DDIR="SIDEWAYS")
        if kind == "recs_mismatch":
            return self._gen.schedule("DNLD", [1, 2], recs=3)
        raise ValueError(f"broken: kind must be one of {BROKEN_KINDS}, not {kind!r}")

    def random_flop(self, flid: int, flids: Sequence[int]) -> str:
        """One FLOP of a random family, as the realistic-day generator mixes them."""
        return self._gen.random_flop(flid, list(flids))
