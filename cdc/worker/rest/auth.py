"""HTTP basic authentication of the REST API, as Connect's ``BasicAuthSecurityRestExtension`` does it.

Turned on in either of two ways:

* Connect's: ``rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension.
  BasicAuthSecurityRestExtension`` with a JAAS file named by the JVM option Connect reads,
  ``KAFKA_OPTS="-Djava.security.auth.login.config=/path/jaas.conf"``; its ``KafkaConnect`` section lists
  ``org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
  file="/path/users.properties";`` entries. JAAS flags (required, requisite, sufficient, optional) are
  honoured when a section lists several files.
* ours: ``rest.basic.auth.credentials.file=/path/users.properties`` (wins over the JAAS file if both
  are given).

The credentials file is a Java properties file of ``user=password`` lines, re-read when it changes.

A request without valid credentials gets 401 with ``WWW-Authenticate: Basic realm="Kafka Connect"`` and
``{"error_code":401,"message":"User cannot access the resource."}`` (Connect sends that text as plain text and
no challenge; a JSON body keeps every error of the API in one shape). Differences from Connect, both
deliberate:

* an empty credentials file is refused at start (Connect logs a warning and lets every request in);
* internal requests between workers (``POST /connectors/{n}/tasks``, ``PUT /connectors/{n}/fence``) skip
  the password only when they carry a KIP-507 signature *and* the herder checks signatures (the
  ``sessioned`` protocol); Connect skips it for every ``POST …/tasks``. Under ``eager``/``compatible`` with
  authentication on, followers cannot send task configs to the leader: keep the default ``sessioned``.

Requests a user sends to one worker and that worker forwards to another carry the user's
``Authorization`` header (:mod:`cdc.worker.rest.forwarding`), as Connect's do.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import logging
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from starlette.types import ASGIApp, Receive, Scope, Send

from cdc.api.errors import ConfigError
from cdc.worker.properties import load_properties
from cdc.worker.rest.errors import ConnectJSONResponse
from cdc.worker.rest.signature import ALGORITHM_HEADER, SIGNATURE_HEADER

__all__ = [
    "BASIC_AUTH_EXTENSION",
    "CREDENTIALS_FILE_CONFIG",
    "BasicAuthMiddleware",
    "BasicAuthenticator",
    "CredentialsFile",
    "JaasEntry",
    "basic_auth",
    "jaas_config_path",
    "parse_jaas",
]

log = logging.getLogger(__name__)

BASIC_AUTH_EXTENSION = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
PROPERTY_FILE_LOGIN_MODULE = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"
CREDENTIALS_FILE_CONFIG = "rest.basic.auth.credentials.file"
JAAS_PROPERTY = "java.security.auth.login.config"
LOGIN_CONTEXT = "KafkaConnect"
UNAUTHORIZED_MESSAGE = "User cannot access the resource."
_FLAGS = ("required", "requisite", "sufficient", "optional")
_INTERNAL = re.compile(r"^/?connectors/[^/]+/(tasks|fence)/?$")
_TOKEN = re.compile(r'\s+|//[^\n]*|/\*.*?\*/|"((?:[^"\\]|\\.)*)"|([{};=])|([^\s{};="]+)', re.S)


# -- JAAS ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class JaasEntry:
    login_module: str
    flag: str
    options: dict[str, str] = field(default_factory=dict)


def parse_jaas(text: str) -> dict[str, list[JaasEntry]]:
    """Sections of a JAAS login configuration file: ``Name { Module flag key="value" ...; ... };``."""
    tokens: list[tuple[str, bool]] = []  # (text, is_punctuation)
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise ConfigError(f"Unreadable JAAS configuration near: {text[pos : pos + 40]!r}")
        pos = match.end()
        if match.group(1) is not None:
            tokens.append((re.sub(r"\\(.)", r"\1", match.group(1)), False))
        elif match.group(2) is not None:
            tokens.append((match.group(2), True))
        elif match.group(3) is not None:
            tokens.append((match.group(3), False))
    sections: dict[str, list[JaasEntry]] = {}
    i = 0

    def expect(punct: str) -> None:
        nonlocal i
        if i >= len(tokens) or tokens[i] != (punct, True):
            found = tokens[i][0] if i < len(tokens) else "end of file"
            raise ConfigError(f"JAAS configuration: expected '{punct}' but found '{found}'")
        i += 1

    def word() -> str:
        nonlocal i
        if i >= len(tokens) or tokens[i][1]:
            found = tokens[i][0] if i < len(tokens) else "end of file"
            raise ConfigError(f"JAAS configuration: expected a name but found '{found}'")
        i += 1
        return tokens[i - 1][0]

    while i < len(tokens):
        name = word()
        expect("{")
        entries: list[JaasEntry] = []
        while i < len(tokens) and tokens[i] != ("}", True):
            module = word()
            flag = word().lower()
            if flag not in _FLAGS:
                raise ConfigError(f"JAAS configuration: invalid control flag '{flag}' for {module}")
            options: dict[str, str] = {}
            while i < len(tokens) and tokens[i] != (";", True):
                key = word()
                expect("=")
                options[key] = word()
            expect(";")
            entries.append(JaasEntry(module, flag, options))
        expect("}")
        expect(";")
        sections.setdefault(name, []).extend(entries)
    return sections


def jaas_config_path(environ: Mapping[str, str]) -> str | None:
    """The ``-Djava.security.auth.login.config=…`` given in ``KAFKA_OPTS`` (``==`` form included)."""
    opts = environ.get("KAFKA_OPTS", "")
    try:
        words = shlex.split(opts)
    except ValueError:
        words = opts.split()
    found = None
    prefix = f"-D{JAAS_PROPERTY}="
    for item in words:
        if item.startswith(prefix):
            found = item[len(prefix) :].lstrip("=") or None
    return found


# -- credentials -----------------------------------------------------------------------------------------
class CredentialsFile:
    """A ``user=password`` properties file, re-read when its modification time or size changes."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._stamp: tuple[float, int] | None = None
        self._users: dict[str, str] = {}
        self._load()

    def _load(self) -> None:
        try:
            stat = os.stat(self.path)
            stamp = (stat.st_mtime, stat.st_size)
            if stamp == self._stamp:
                return
            users = load_properties(self.path)
        except OSError as exc:
            if self._stamp is None:
                raise ConfigError(f"Error loading Property Credentials file {self.path}: {exc}") from exc
            log.error(
                "Could not re-read the credentials file %s; keeping the previous users: %s", self.path, exc
            )
            return
        if not users:
            raise ConfigError(
                f"The credentials file {self.path} is empty: every request would be let in. "
                "Add user=password lines, or switch basic authentication off."
            )
        self._users, self._stamp = users, stamp

    def check(self, username: str, password: str) -> bool:
        try:
            self._load()
        except ConfigError as exc:  # emptied while running: keep the previous users, say why
            log.error("%s", exc)
        expected = self._users.get(username)
        # Compare in constant time, and compare even for an unknown user so timing says nothing about names.
        ok = hmac.compare_digest((expected or "\0").encode(), password.encode())
        return expected is not None and ok


@dataclass
class _Module:
    flag: str
    credentials: CredentialsFile


class BasicAuthenticator:
    """Checks an ``Authorization`` header against credential files combined by JAAS flags."""

    def __init__(self, modules: Sequence[tuple[str, CredentialsFile]], source: str) -> None:
        if not modules:
            raise ConfigError(f"Basic authentication is on but {source} names no credentials file")
        self._modules = [_Module(flag, creds) for flag, creds in modules]
        self.source = source

    @classmethod
    def from_file(cls, path: str) -> BasicAuthenticator:
        return cls([("required", CredentialsFile(path))], f"{CREDENTIALS_FILE_CONFIG}={path}")

    @classmethod
    def from_jaas(cls, path: str) -> BasicAuthenticator:
        try:
            with open(path, encoding="utf-8") as fh:
                sections = parse_jaas(fh.read())
        except OSError as exc:
            raise ConfigError(f"Cannot read the JAAS configuration {path}: {exc}") from exc
        entries = sections.get(LOGIN_CONTEXT)
        if not entries:
            raise ConfigError(f"The JAAS configuration {path} has no {LOGIN_CONTEXT} section")
        modules = []
        for entry in entries:
            if entry.login_module != PROPERTY_FILE_LOGIN_MODULE:
                raise ConfigError(
                    f"Unsupported login module {entry.login_module} in {path}: only "
                    f"{PROPERTY_FILE_LOGIN_MODULE} is available"
                )
            file = entry.options.get("file", "").strip()
            if not file:
                raise ConfigError("Property Credentials file must be specified")
            modules.append((entry.flag, CredentialsFile(file)))
        return cls(modules, f"the {LOGIN_CONTEXT} section of {path}")

    def authenticate(self, header: str | None) -> bool:
        credentials = _parse_basic(header)
        if credentials is None:
            return False
        user, password = credentials
        required_failed, any_passed = False, False
        for module in self._modules:  # JAAS LoginContext semantics
            ok = module.credentials.check(user, password)
            if module.flag == "requisite" and not ok:
                return False
            if module.flag in ("required", "requisite"):
                required_failed |= not ok
                any_passed |= ok
            elif module.flag == "sufficient" and ok and not required_failed:
                return True
            elif ok:
                any_passed = True
        return any_passed and not required_failed


def _parse_basic(header: str | None) -> tuple[str, str] | None:
    if not header:
        return None
    method, _, encoded = header.strip().partition(" ")
    if method.lower() != "basic" or not encoded:
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    user, colon, password = decoded.partition(":")
    if not colon or not user:
        return None
    return user, password


def basic_auth(
    extensions: Sequence[str], credentials_file: str | None, environ: Mapping[str, str] | None = None
) -> BasicAuthenticator | None:
    """The authenticator that ``rest.extension.classes``, ``rest.basic.auth.credentials.file`` (and
    ``KAFKA_OPTS``) ask for, or None."""
    environ = os.environ if environ is None else environ
    for name in extensions:
        if name != BASIC_AUTH_EXTENSION:
            log.warning("REST extension %s is not available and is ignored", name)
    file = (credentials_file or "").strip()
    if file:
        if BASIC_AUTH_EXTENSION in extensions and jaas_config_path(environ):
            log.info("Basic authentication reads %s; the JAAS file in KAFKA_OPTS is not used", file)
        return BasicAuthenticator.from_file(file)
    if BASIC_AUTH_EXTENSION not in extensions:
        return None
    jaas = jaas_config_path(environ)
    if not jaas:
        raise ConfigError(
            f"{BASIC_AUTH_EXTENSION} needs a JAAS file: set KAFKA_OPTS=-D{JAAS_PROPERTY}=/path/jaas.conf "
            f"(with a {LOGIN_CONTEXT} section) or {CREDENTIALS_FILE_CONFIG}=/path/users.properties"
        )
    return BasicAuthenticator.from_jaas(jaas)


# -- the middleware --------------------------------------------------------------------------------------
def _signed_internal(scope: Scope) -> bool:
    """A signed worker-to-worker request the herder will verify with the session key."""
    match = _INTERNAL.match(scope.get("path", ""))
    if match is None or (scope.get("method"), match.group(1)) not in (("POST", "tasks"), ("PUT", "fence")):
        return False
    names = {k.lower() for k, _ in scope.get("headers", [])}
    if SIGNATURE_HEADER.lower().encode() not in names or ALGORITHM_HEADER.lower().encode() not in names:
        return False
    try:
        return bool(scope["app"].state.rest.herder.internal_requests_signed())
    except Exception:
        return False


class BasicAuthMiddleware:
    def __init__(self, app: ASGIApp, authenticator: BasicAuthenticator) -> None:
        self.app = app
        self.authenticator = authenticator

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _signed_internal(scope):
            await self.app(scope, receive, send)
            return
        header = None
        for key, value in scope.get("headers", []):
            if key.lower() == b"authorization":
                header = value.decode("latin-1")
                break
        if self.authenticator.authenticate(header):
            await self.app(scope, receive, send)
            return
        # Debug only, as Connect: a mistyped password must not fill the log.
        log.debug("Request %s %s failed authentication", scope.get("method"), scope.get("path"))
        response = ConnectJSONResponse(
            {"error_code": 401, "message": UNAUTHORIZED_MESSAGE},
            status_code=401,
            headers={"WWW-Authenticate": 'Basic realm="Kafka Connect", charset="UTF-8"'},
        )
        await response(scope, receive, send)
