"""kafka-console-producer.sh without a broker: the line reader and the producer properties."""
from __future__ import annotations

import io

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_py.core.tools.console_producer import (
    LineMessageReader,
    LineReaderException,
    ProducerRecord,
    main,
    producer_props,
    read_lines,
)


def reader(**props: str) -> LineMessageReader:
    return LineMessageReader.from_props({"topic": "t", **props})


def test_plain_lines_are_values() -> None:
    assert reader().read_message("hello\tworld") == ProducerRecord("t", None, b"hello\tworld")
    assert reader().read_message("") == ProducerRecord("t", None, b"")
    assert reader().read_message(None) is None


def test_keys() -> None:
    r = reader(**{"parse.key": "true", "key.separator": ":"})
    assert r.read_message("k1:v1") == ProducerRecord("t", b"k1", b"v1")
    assert r.read_message("k2:v:with:colons") == ProducerRecord("t", b"k2", b"v:with:colons")
    assert r.read_message("k3:") == ProducerRecord("t", b"k3", b"")
    assert reader(**{"parse.key": "TRUE "}).read_message("k\tv") == ProducerRecord("t", b"k", b"v")
    multi = reader(**{"parse.key": "true", "key.separator": "::"})
    assert multi.read_message("a::b::c") == ProducerRecord("t", b"a", b"b::c")


def test_missing_key_separator() -> None:
    r = reader(**{"parse.key": "true", "key.separator": ":"})
    r.read_message("a:b")
    with pytest.raises(LineReaderException, match="No key separator found on line number 2: 'novalue'"):
        r.read_message("novalue")
    lenient = reader(**{"parse.key": "true", "key.separator": ":", "ignore.error": "true"})
    assert lenient.read_message("novalue") == ProducerRecord("t", None, b"novalue")


def test_headers_then_key_then_value() -> None:
    r = reader(**{"parse.headers": "true", "parse.key": "true", "key.separator": "|"})
    assert r.read_message("h1:v1,h2:v2\tkey|value") == ProducerRecord(
        "t", b"key", b"value", (("h1", b"v1"), ("h2", b"v2")))
    assert r.read_message("h1:\tk|v") == ProducerRecord("t", b"k", b"v", (("h1", b""),))
    assert r.read_message("h:a:b\tk|v").headers == (("h", b"a:b"),)


def test_header_separators_are_configurable_and_a_regex() -> None:
    r = reader(**{"parse.headers": "true", "headers.delimiter": "#", "headers.separator": "[;,]",
                  "headers.key.separator": "="})
    assert r.read_message("a=1;b=2,c=3#value") == ProducerRecord(
        "t", None, b"value", (("a", b"1"), ("b", b"2"), ("c", b"3")))


def test_header_errors() -> None:
    r = reader(**{"parse.headers": "true"})
    with pytest.raises(LineReaderException, match="No headers delimiter found on line number 1"):
        r.read_message("no delimiter")
    with pytest.raises(LineReaderException, match="No header key separator found in pair 'nokey'"):
        r.read_message("nokey\tvalue")
    lenient = reader(**{"parse.headers": "true", "ignore.error": "true"})
    assert lenient.read_message("nokey\tvalue").headers == (("nokey", None),)
    assert lenient.read_message("just a value") == ProducerRecord("t", None, b"just a value")


def test_null_marker() -> None:
    r = reader(**{"parse.headers": "true", "parse.key": "true", "null.marker": "<null>"})
    assert r.read_message("h:<null>\t<null>\t<null>") == ProducerRecord("t", None, None, (("h", None),))
    assert r.read_message("<null>\tk\tv") == ProducerRecord("t", b"k", b"v", ())
    with pytest.raises(LineReaderException, match="Header keys should not be equal to the null marker"):
        r.read_message("<null>:x\tk\tv")


@pytest.mark.parametrize("props, message", [
    ({"headers.delimiter": ","}, "headers.delimiter and headers.separator may not be equal"),
    ({"headers.delimiter": ":"}, "headers.delimiter and headers.key.separator may not be equal"),
    ({"headers.separator": ":"}, "headers.separator and headers.key.separator may not be equal"),
    ({"null.marker": "\t"}, "null.marker and key.separator may not be equal"),
    ({"null.marker": ":", "key.separator": "|", "headers.delimiter": "#"},
     "null.marker and headers.key.separator may not be equal"),
    ({"headers.separator": "("}, "not a valid regular expression"),
])
def test_conflicting_separators(props: dict[str, str], message: str) -> None:
    with pytest.raises(LineReaderException, match=message):
        reader(**props)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.text("abcxyz", min_size=1, max_size=4), st.text("abc=xyz", max_size=4)),
                min_size=1, max_size=4),
       st.text("abcxyz\t", max_size=6), st.text("abcxyz:\t", max_size=10))
def test_written_lines_read_back(headers: list[tuple[str, str]], key: str, value: str) -> None:
    r = reader(**{"parse.headers": "true", "parse.key": "true", "key.separator": "|",
                  "headers.delimiter": "#", "headers.separator": ",", "headers.key.separator": "="})
    head = ",".join(f"{k}={v}" for k, v in headers)
    record = r.read_message(f"{head}#{key}|{value}")
    assert record is not None
    assert record.key == key.encode() and record.value == value.encode()
    assert record.headers == tuple((k, v.encode()) for k, v in headers)


def test_empty_header_section_is_an_error_as_in_kafka() -> None:
    # Pattern.split of "" yields one empty pair, which has no key separator
    with pytest.raises(LineReaderException, match="No header key separator found in pair ''"):
        reader(**{"parse.headers": "true"}).read_message("\tvalue")


def test_read_lines_like_buffered_reader() -> None:
    stream = io.StringIO("a\r\nb\nc\rd", newline="")
    assert list(read_lines(stream)) == ["a", "b", "c", "d"]


def test_producer_props_precedence() -> None:
    defaults = {"acks": "1", "linger.ms": "1000", "retries": "3"}
    props = producer_props(
        bootstrap_server="h:1", compression_codec="gzip",
        producer_config={"acks": "0", "linger.ms": "7", "client.id": "mine"},
        extra_producer_props={"linger.ms": "8"},
        explicit={"acks": "all"}, defaults=defaults)
    assert props["acks"] == "all"                # given on the command line: wins
    assert props["linger.ms"] == "8"             # --producer-property over the file, default unused
    assert props["retries"] == "3"               # nothing else set it: the option's default
    assert props["client.id"] == "mine"
    assert props["compression.type"] == "gzip" and props["bootstrap.servers"] == "h:1"
    assert props["enable.idempotence"] == "false"
    assert producer_props(bootstrap_server="h:1", compression_codec="none", producer_config={},
                          extra_producer_props={}, explicit={}, defaults={})["client.id"] == "console-producer"


def test_cli_validates_before_connecting() -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["--bootstrap-server", "127.0.0.1:1"])
    assert result.exit_code == 2 and "topic" in result.output
    result = runner.invoke(main, ["--bootstrap-server", "127.0.0.1:1", "--topic", "t",
                                  "--compression-codec", "brotli"])
    assert result.exit_code == 2 and "Unknown compression codec 'brotli'" in result.output
    result = runner.invoke(main, ["--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--property",
                                  "parse.headers=true", "--property", "headers.delimiter=,"])
    assert result.exit_code == 1
    assert result.output == "headers.delimiter and headers.separator may not be equal\n"
