"""Config providers and ``${alias:path:key}`` placeholders, as Kafka's ``ConfigTransformer`` resolves them."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import pytest

from cdc.api.errors import ConfigError
from cdc.worker.config_providers import (
    VARIABLE_PATTERN,
    ConfigData,
    ConfigProvider,
    ConfigTransformer,
    DirectoryConfigProvider,
    EnvVarConfigProvider,
    FileConfigProvider,
    instantiate_providers,
    is_from_provider,
    resolve_worker_config,
)

KAFKA = "org.apache.kafka.common.config.provider."


@pytest.fixture
def secrets(tmp_path: Path) -> Path:
    d = tmp_path / "secrets"
    d.mkdir()
    (d / "db.properties").write_text("user = admin\npassword=s3cr\\u0065t\nurl=jdbc:mysql://h:3306/db\n")
    (d / "db_password").write_text("from-dir\n")
    (d / "token").write_text("tok")
    (d / "sub").mkdir()
    return d


def env_provider(environ: dict[str, str], pattern: str | None = None) -> EnvVarConfigProvider:
    p = EnvVarConfigProvider(environ)
    p.configure({} if pattern is None else {"allowlist.pattern": pattern})
    return p


def test_pattern_groups_match_kafka() -> None:
    def parts(text: str) -> tuple[str, str, str]:
        m = VARIABLE_PATTERN.search(text)
        assert m is not None
        return m.group(1), m.group(3) or "", m.group(4)

    assert parts("${env:HOME}") == ("env", "", "HOME")
    assert parts("${env::HOME}") == ("env", "", "HOME")
    assert parts("${file:/a/b.properties:k}") == ("file", "/a/b.properties", "k")
    assert parts("${file:/a:b:c}") == ("file", "/a", "b:c")  # the path stops at the first colon
    assert VARIABLE_PATTERN.search("${nocolon}") is None


def test_file_provider(secrets: Path) -> None:
    t = ConfigTransformer({"file": FileConfigProvider()})
    path = secrets / "db.properties"
    resolved, ttls = t.transform(
        {
            "connection.user": f"${{file:{path}:user}}",
            "connection.password": f"${{file:{path}:password}}",
            "connection.url": f"${{file:{path}:url}}",
            "plain": "x",
        }
    )
    assert resolved == {
        "connection.user": "admin",
        "connection.password": "s3cret",
        "connection.url": "jdbc:mysql://h:3306/db",
        "plain": "x",
    }
    assert ttls == {}


def test_embedded_and_repeated_placeholders(secrets: Path) -> None:
    path = secrets / "db.properties"
    t = ConfigTransformer({"file": FileConfigProvider(), "env": env_provider({"HOST": "db1"})})
    resolved, _ = t.transform(
        {"url": f"jdbc:mysql://${{env:HOST}}:3306/x?u=${{file:{path}:user}}&h=${{env::HOST}}"}
    )
    assert resolved["url"] == "jdbc:mysql://db1:3306/x?u=admin&h=db1"


def test_unknown_alias_and_missing_key_left_as_written(secrets: Path) -> None:
    path = secrets / "db.properties"
    t = ConfigTransformer({"file": FileConfigProvider(), "env": env_provider({"A": "1"})})
    raw = {
        "a": "${vault:secret/db:password}",
        "b": f"${{file:{path}:nope}}",
        "c": "${env:MISSING}-${env:A}",
        "d": "${not a placeholder",
    }
    resolved, _ = t.transform(raw)
    assert resolved == {**raw, "c": "${env:MISSING}-1"}


def test_none_and_non_string_values_pass_through() -> None:
    t = ConfigTransformer({"env": env_provider({"A": "1"})})
    resolved, _ = t.transform({"a": None, "b": 3, "c": "${env:A}"})
    assert resolved == {"a": None, "b": 3, "c": "1"}


def test_file_provider_unreadable_file(tmp_path: Path) -> None:
    t = ConfigTransformer({"file": FileConfigProvider()})
    missing = tmp_path / "missing.properties"
    with pytest.raises(ConfigError, match="Could not read properties from file"):
        t.transform({"a": f"${{file:{missing}:k}}"})


def test_directory_provider(secrets: Path) -> None:
    p = DirectoryConfigProvider()
    p.configure({})
    t = ConfigTransformer({"dir": p})
    resolved, _ = t.transform(
        {
            "pw": f"${{dir:{secrets}:db_password}}",
            "tok": f"${{dir:{secrets}:token}}",
            "sub": f"${{dir:{secrets}:sub}}",
        }
    )
    # Content is kept as it is (Kafka does not strip the newline); directories are not values.
    assert resolved == {"pw": "from-dir\n", "tok": "tok", "sub": f"${{dir:{secrets}:sub}}"}
    assert p.get(str(secrets)).data.keys() == {"db.properties", "db_password", "token"}
    assert p.get(str(secrets / "token")).data == {}  # not a directory: nothing, logged


def test_env_provider_allowlist() -> None:
    p = env_provider({"DB_PASSWORD": "pw", "DB_USER": "u", "HOME": "/root"}, pattern="DB_.*")
    t = ConfigTransformer({"env": p})
    resolved, _ = t.transform({"a": "${env:DB_PASSWORD}", "b": "${env:HOME}", "c": "${env::DB_USER}"})
    assert resolved == {"a": "pw", "b": "${env:HOME}", "c": "u"}
    # The allowlist must match the whole name, as Java's Matcher.matches().
    assert env_provider({"XDB_A": "1"}, pattern="DB_.*").get("").data == {}
    assert env_provider({"A": "1", "B": "2"}).get("").data == {"A": "1", "B": "2"}


def test_env_provider_rejects_a_path() -> None:
    t = ConfigTransformer({"env": env_provider({"A": "1"})})
    with pytest.raises(
        ConfigError, match="Path is not supported for EnvVarConfigProvider, invalid value '/x'"
    ):
        t.transform({"a": "${env:/x:A}"})


def test_env_provider_reads_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CDC_TEST_SECRET", "abc")
    p = EnvVarConfigProvider()
    p.configure({"allowlist.pattern": "CDC_TEST_.*"})
    assert p.get("", {"CDC_TEST_SECRET", "PATH"}).data == {"CDC_TEST_SECRET": "abc"}


def test_allowed_paths(secrets: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.properties"
    outside.write_text("k=v\n")
    sibling = tmp_path / "secretsX"
    sibling.mkdir()
    (sibling / "a.properties").write_text("k=v\n")
    p = FileConfigProvider()
    p.configure({"allowed.paths": str(secrets)})
    t = ConfigTransformer({"file": p})
    assert t.transform({"a": f"${{file:{secrets / 'db.properties'}:user}}"})[0] == {"a": "admin"}
    for bad in (outside, secrets / ".." / "outside.properties", sibling / "a.properties"):
        with pytest.raises(ConfigError, match="is not allowed to be accessed"):
            t.transform({"a": f"${{file:{bad}:k}}"})
    d = DirectoryConfigProvider()
    d.configure({"allowed.paths": f"{sibling},{secrets}"})
    assert d.get(str(secrets), {"token"}).data == {"token": "tok"}
    with pytest.raises(ConfigError, match="is not allowed to be accessed"):
        d.get(str(tmp_path), {"outside.properties"})


@pytest.mark.parametrize(
    ("value", "message"), [("relative/path", "is not absolute"), ("/no/such/dir/anywhere", "does not exist")]
)
def test_allowed_paths_must_be_absolute_and_exist(value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        FileConfigProvider().configure({"allowed.paths": value})


def test_instantiate_from_worker_config(secrets: Path) -> None:
    worker = {
        "config.providers": "file, env,dir,nocls",
        "config.providers.file.class": KAFKA + "FileConfigProvider",
        "config.providers.file.param.allowed.paths": str(secrets),
        "config.providers.env.class": "EnvVarConfigProvider",
        "config.providers.env.param.allowlist.pattern": "ONLY_.*",
        "config.providers.dir.class": KAFKA + "DirectoryConfigProvider",
    }
    providers = instantiate_providers(worker)
    assert set(providers) == {"file", "env", "dir"}
    assert isinstance(providers["file"], FileConfigProvider)
    assert isinstance(providers["env"], EnvVarConfigProvider)
    assert isinstance(providers["dir"], DirectoryConfigProvider)
    with pytest.raises(ConfigError, match="not allowed"):
        providers["file"].get("/etc/passwd", {"x"})
    assert instantiate_providers({}) == {}


def test_unknown_provider_class() -> None:
    with pytest.raises(ConfigError, match=r"Class com\.example\.Nope could not be found"):
        instantiate_providers({"config.providers": "x", "config.providers.x.class": "com.example.Nope"})


class _Expiring(ConfigProvider):
    def get(self, path: str, keys: Collection[str] | None = None) -> ConfigData:
        return ConfigData({k: k.upper() for k in keys or ()}, ttl=5000 if path == "/lease" else None)


def test_ttls_by_path() -> None:
    t = ConfigTransformer({"v": _Expiring()})
    resolved, ttls = t.transform({"a": "${v:/lease:a}", "b": "${v:/static:b}"})
    assert resolved == {"a": "A", "b": "B"}
    assert ttls == {"/lease": 5000}


def test_is_from_provider() -> None:
    assert is_from_provider("${file:/x:y}")
    assert is_from_provider("prefix-${env:A}")
    assert not is_from_provider("plain")
    assert not is_from_provider("")
    assert not is_from_provider(None)
    assert not is_from_provider("$1-$2-$3")  # RegexRouter replacement text
    assert is_from_provider("${env:A}", aliases={"env"})
    assert not is_from_provider("${vault:a:b}", aliases={"env", "file"})


def test_resolve_worker_config(secrets: Path) -> None:
    worker = {
        "config.providers": "file",
        "config.providers.file.class": KAFKA + "FileConfigProvider",
        "bootstrap.servers": "localhost:9092",
        "producer.sasl.jaas.config": f"${{file:{secrets / 'db.properties'}:password}}",
    }
    assert resolve_worker_config(worker)["producer.sasl.jaas.config"] == "s3cret"
    plain = {"bootstrap.servers": "x", "a": "${file:/x:y}"}
    assert resolve_worker_config(plain) == plain
