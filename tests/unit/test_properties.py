"""``.properties`` parsing: the seed configs and Java's ``Properties.load`` corner cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdc.api.errors import ConfigError
from cdc.worker.properties import decode_properties_bytes, load_properties, parse_properties

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "seed-configs"
REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "reference" / "seed-configs"
if not SHARED.is_dir():
    SHARED = Path("/work/shared/reference/seed-configs")
SEED_FILES = sorted(FIXTURES.glob("*.properties"))
# every copy the tests read instead of ../shared (so they run from a bare clone)
COPIES = [*sorted(FIXTURES.iterdir()), REPO / "scripts" / "sql" / "kafkadb.sql"]


def test_fixtures_present() -> None:
    names = {p.name for p in SEED_FILES}
    assert {
        "connect-standalone.properties",
        "local-file-source.properties",
        "local-file-sink.properties",
        "nginx-accesslog-source.properties",
        "nginx-accesslog-sink.properties",
        "worker-distributed.properties",
    } <= names


@pytest.mark.parametrize("path", SEED_FILES, ids=lambda p: p.name)
def test_seed_file_parses_like_naive_split(path: Path) -> None:
    # Every seed file is plain ``key=value`` lines, so Java's reading equals a split at the first '='.
    expected: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith(("#", "!")):
            key, _, value = line.partition("=")
            expected[key.strip()] = value
    assert load_properties(path) == expected
    assert load_properties(str(path)) == expected


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared/ not beside the clone")
@pytest.mark.parametrize("path", COPIES, ids=lambda p: p.name)
def test_fixture_copies_match_shared(path: Path) -> None:
    shared = SHARED / path.name
    assert shared.exists(), f"{path.name}: no original in {SHARED}"
    assert shared.read_bytes() == path.read_bytes()


def test_seed_values() -> None:
    src = load_properties(FIXTURES / "local-file-source.properties")
    assert src == {
        "name": "local-file-source",
        "connector.class": "FileStreamSource",
        "tasks.max": "1",
        "file": "/tmp/test.txt",
        "topic": "connect-test",
    }
    worker = load_properties(FIXTURES / "worker-distributed.properties")
    assert worker["bootstrap.servers"] == "kafka1:9091,kafka2:9091"
    assert worker["value.converter.schemas.enable"] == "false"
    assert worker["plugin.path"] == "/tmp/"
    standalone = load_properties(FIXTURES / "connect-standalone.properties")
    assert standalone["offset.storage.file.filename"] == "/tmp/connect.offsets"
    # '?' and '&' in a JDBC URL are ordinary characters; only the first '=' separates.
    jdbc = load_properties(FIXTURES / "jdbc-incrementing.properties")
    assert jdbc["connection.url"] == "jdbc:mysql://localhost:3306/kafkadb?user=kafka&password=kafka123"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # separators and whitespace around them
        ("a=b", {"a": "b"}),
        ("a:b", {"a": "b"}),
        ("a b", {"a": "b"}),
        ("a\tb", {"a": "b"}),
        ("a\fb", {"a": "b"}),
        ("a = b", {"a": "b"}),
        ("a  :  b", {"a": "b"}),
        ("a   b c", {"a": "b c"}),
        ("a = = b", {"a": "= b"}),  # only one separator is swallowed
        ("a==b", {"a": "=b"}),
        ("a:=b", {"a": "=b"}),
        ("a =:b", {"a": ":b"}),
        ("   a=b", {"a": "b"}),
        ("a=b   ", {"a": "b   "}),  # trailing whitespace is kept, as in Java
        ("a=", {"a": ""}),
        ("a", {"a": ""}),
        ("a   ", {"a": ""}),
        ("=b", {"": "b"}),
        (":b", {"": "b"}),
        ("a=b=c:d", {"a": "b=c:d"}),
        # comments and blank lines
        ("# c\n! c\na=b", {"a": "b"}),
        ("   # indented comment\na=b", {"a": "b"}),
        ("a=b # not a comment", {"a": "b # not a comment"}),
        ("\n\n  \t\n\fa=b\n\n", {"a": "b"}),
        ("#comment ending in backslash \\\na=b", {"a": "b"}),
        ("a=b\n#c=d", {"a": "b"}),
        # line terminators
        ("a=1\r\nb=2\rc=3\nd=4", {"a": "1", "b": "2", "c": "3", "d": "4"}),
        # continuation
        ("a=b\\\n   c", {"a": "bc"}),
        ("a=b \\\n   c", {"a": "b c"}),
        ("a=b\\\r\n   c\r\nd=e", {"a": "bc", "d": "e"}),
        ("a=b\\\r   c", {"a": "bc"}),
        ("a=b\\\n\\\n  c", {"a": "bc"}),
        ("a=b\\\n# still value", {"a": "b# still value"}),
        ("a=b\\\n\nc=d", {"a": "b", "c": "d"}),  # an empty continuation ends the logical line
        ("a=b\\\\\nc=d", {"a": "b\\", "c": "d"}),  # an even count of backslashes does not continue
        ("a=b\\\\\\\n c", {"a": "b\\c"}),
        ("a=b\\", {"a": "b"}),  # backslash at end of input is dropped
        ("a=b\\\n", {"a": "b"}),
        ("\\\n", {"": ""}),  # the JDK returns an empty line here, so an empty key
        ("key\\\n  = value", {"key": "value"}),
        ("\\\n# comment after an empty continuation\na=b", {"a": "b"}),
        # escapes
        ("a=\\t\\n\\r\\f", {"a": "\t\n\r\f"}),
        ("a=c:\\\\path\\\\to", {"a": "c:\\path\\to"}),
        ("a\\=b=c", {"a=b": "c"}),
        ("a\\:b:c", {"a:b": "c"}),
        ("a\\ b c", {"a b": "c"}),
        ("a=\\ leading", {"a": " leading"}),
        ("\\#notcomment=1", {"#notcomment": "1"}),
        ("\\!x=1", {"!x": "1"}),
        ("a=\\b\\x\\y\\z", {"a": "bxyz"}),  # unknown escapes stand for the character
        ("a=\\u0041\\u00e9\\u00E9", {"a": "Aéé"}),
        ("\\u0041=1", {"A": "1"}),
        ("a=\\ud83d\\ude00", {"a": "\U0001f600"}),  # a surrogate pair joins
        ("a=\\u003d", {"a": "="}),
        ("a=x\\u0020", {"a": "x "}),
        # later keys win
        ("a=1\na=2", {"a": "2"}),
        # non-ASCII text as such
        ("이름=값", {"이름": "값"}),
    ],
)
def test_java_rules(text: str, expected: dict[str, str]) -> None:
    assert parse_properties(text) == expected


def test_escaped_separator_in_key_then_value_with_separators() -> None:
    assert parse_properties("x\\:y\\=z = p:q=r") == {"x:y=z": "p:q=r"}


@pytest.mark.parametrize("text", ["a=\\u12", "a=\\u12g4", "a=\\u"])
def test_malformed_unicode_escape(text: str) -> None:
    with pytest.raises(ConfigError, match=r"Malformed \\uxxxx encoding\."):
        parse_properties(text)


def test_order_is_first_appearance() -> None:
    assert list(parse_properties("b=1\na=2\nb=3")) == ["b", "a"]


def test_encodings(tmp_path: Path) -> None:
    utf8 = tmp_path / "utf8.properties"
    utf8.write_bytes("topic=주문\n".encode())
    assert load_properties(utf8) == {"topic": "주문"}
    latin1 = tmp_path / "latin1.properties"
    latin1.write_bytes("name=caf\xe9\n".encode("latin-1"))  # not valid UTF-8
    assert load_properties(latin1) == {"name": "café"}
    bom = tmp_path / "bom.properties"
    bom.write_bytes(b"\xef\xbb\xbfa=b\n")
    assert load_properties(bom) == {"a": "b"}
    assert decode_properties_bytes(b"a=\xff") == "a=\xff"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_properties(tmp_path / "nope.properties")
