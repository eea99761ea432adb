"""Hostile and malformed input: DOCTYPE, entities, size, encodings, broken XML."""

from __future__ import annotations

import pytest

from flightstate_core.domain.codec import decode
from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.messages import FlopMessage
from flightstate_core.domain.values import Set
from flightstate_testing.sis import DECLARATION, flop, meta
from tests.codec.helpers import error

BODY = f"<MSG>{meta('FLOP', 'REMC')}<FLOP><FLID>15</FLID><REMC>&lol9;</REMC></FLOP></MSG>"

BILLION_LAUGHS = (
    DECLARATION
    + '<!DOCTYPE MSG [<!ENTITY lol "lol">'
    + "".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">'
        for i in range(1, 10)
    )
    + "]>"
    + BODY
)

EXTERNAL_ENTITY = (
    DECLARATION
    + '<!DOCTYPE MSG [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
    + f"<MSG>{meta('FLOP', 'REMC')}<FLOP><FLID>15</FLID><REMC>&xxe;</REMC></FLOP></MSG>"
)

EXTERNAL_DTD = DECLARATION + '<!DOCTYPE MSG SYSTEM "http://127.0.0.1:9/evil.dtd">' + BODY


@pytest.mark.parametrize(
    "raw",
    [BILLION_LAUGHS, EXTERNAL_ENTITY, EXTERNAL_DTD, "<!DOCTYPE MSG>" + BODY],
    ids=["billion-laughs", "external-entity", "external-dtd", "bare-doctype"],
)
def test_doctype_is_refused(raw: str) -> None:
    caught = error(raw.encode("utf-8"))
    assert caught.xpath == "/"
    assert "DOCTYPE" in caught.reason
    assert "DOCTYPE" in error(raw).reason  # str input too


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_doctype_in_a_wide_encoding_is_refused(codec: str) -> None:
    raw = EXTERNAL_ENTITY.replace('encoding="UTF-8"', f'encoding="{codec.upper()}"')
    data = raw.encode(codec)
    caught = error(data)
    assert caught.xpath == "/"
    assert "DOCTYPE" in caught.reason


def test_undeclared_entity_is_not_well_formed() -> None:
    caught = error(DECLARATION + BODY)
    assert caught.xpath == "/"
    assert "lol9" in caught.reason


def test_size_limit_is_checked_before_parsing() -> None:
    raw = flop("REMC", "<REMC>x</REMC>").encode("utf-8")
    assert isinstance(decode(raw, CoreConfig(max_message_bytes=len(raw))), FlopMessage)
    caught = error(raw, CoreConfig(max_message_bytes=len(raw) - 1))
    assert caught.xpath == "/"
    assert "limit" in caught.reason
    garbage = b"<" * 200
    assert "limit" in error(garbage, CoreConfig(max_message_bytes=100)).reason
    chinese = flop("REMC", "<REMC>由于机器问题</REMC>")  # 18 bytes in 6 characters
    limit = len(chinese.encode("utf-8")) - 1
    assert "limit" in error(chinese, CoreConfig(max_message_bytes=limit)).reason


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        (DECLARATION + f"<MSG>{meta('FLOP', 'REMC')}<FLOP>", "line 2"),
        (DECLARATION + "<MSG></MSG></MSG>", "line 2, column 12"),
        ("", "line"),
        ("not xml at all", "line 1"),
        (DECLARATION + "<MSG><META></MSG>", "line 2"),
    ],
)
def test_not_well_formed_reports_line_and_column(raw: str, where: str) -> None:
    caught = error(raw)
    assert caught.xpath == "/"
    assert where in caught.reason


def test_text_input_ignores_a_wrong_declared_encoding() -> None:
    raw = flop("REMC", "<REMC>由于</REMC>").replace('encoding="UTF-8"', 'encoding="GBK"')
    message = decode(raw)
    assert isinstance(message, FlopMessage)
    assert message.blocks[0].scalars == {"REMC": Set("由于")}


def test_bytes_input_honours_its_declared_encoding() -> None:
    raw = flop("REMC", "<REMC>由于</REMC>").replace('encoding="UTF-8"', 'encoding="GBK"')
    message = decode(raw.encode("gbk"))
    assert isinstance(message, FlopMessage)
    assert message.blocks[0].scalars == {"REMC": Set("由于")}
    assert error(raw.replace("GBK", "NO-SUCH-CODEC").encode("utf-8")).xpath == "/"


def test_lone_surrogate_in_text_input() -> None:
    assert error(flop("REMC", "<REMC>\ud800</REMC>")).xpath == "/"


def test_deep_nesting_is_refused_or_rejected() -> None:
    deep = "<A>" * 5000 + "</A>" * 5000
    caught = error(flop("REMC", f"<REMC>{deep}</REMC>"))
    assert caught.xpath in ("/", "/MSG/FLOP[1]/REMC/A")


def test_xinclude_is_not_processed() -> None:
    include = '<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="/etc/passwd"/>'
    caught = error(flop("REMC", f"<REMC>x</REMC>{include}"))
    assert caught.xpath == "/MSG/FLOP[1]/{http://www.w3.org/2001/XInclude}include"
