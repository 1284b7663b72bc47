"""``sasl.jaas.config``: Kafka's ``JaasConfig`` grammar, and the login modules' options for librdkafka.

* ``PlainLoginModule`` / ``ScramLoginModule`` ``username``/``password`` → ``sasl.username``/``sasl.password``
* ``Krb5LoginModule`` ``keyTab``/``principal``/``serviceName`` → ``sasl.kerberos.keytab``/``.principal``/
  ``.service.name``
* ``OAuthBearerLoginModule``'s unsecured-token options → librdkafka's unsecured JWT handler
  (``enable.sasl.oauthbearer.unsecure.jwt`` + ``sasl.oauthbearer.config``); its OIDC options (``clientId``,
  ``clientSecret``, ``scope``, ``extension_*``) → ``sasl.oauthbearer.client.id`` ….

The parser follows Kafka's (``"…"`` or ``'…'`` values unescaped as Java's ``StreamTokenizer`` does, the
control flag, Kafka's errors for a malformed value), so a line Kafka refuses is refused here too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cdc.api.errors import ConfigError

__all__ = ["JaasEntry", "jaas_to_librdkafka", "parse_jaas"]


@dataclass(frozen=True)
class JaasEntry:
    """One login module of a ``sasl.jaas.config`` value, as Kafka's ``JaasConfig`` parses it."""

    module: str
    flag: str
    options: dict[str, str]

    @property
    def simple_name(self) -> str:
        """The module's class name without its package (``PlainLoginModule``)."""
        return self.module.rsplit(".", 1)[-1]


_FLAGS = ("REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL")
_JAVA_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_OCTAL = "01234567"
_VALUES = ("word", "quoted")  # a number has no string value in StreamTokenizer: Kafka refuses it


def _word_char(c: str, first: bool) -> bool:
    """java.io.StreamTokenizer's word characters, with the ``-``, ``_`` and ``$`` JaasConfig adds; digits
    and ``.`` continue a word (they are "numeric" characters, which a word may hold past its start)."""
    if ("a" <= c <= "z") or ("A" <= c <= "Z") or c in "_$" or ord(c) >= 160:
        return True
    return not first and ((c.isascii() and c.isdigit()) or c in ".-")


def _jaas_tokens(text: str) -> list[tuple[str, str]]:
    """The tokens of a JAAS value as ``(kind, text)``: ``word``, ``quoted`` (unescaped, ``"`` or ``'``),
    ``number``, or a single other character as its own kind (``=``, ``;`` …). Comments (``//``, ``/* */``
    and a lone ``/`` to the line's end) and white space are skipped, as java.io.StreamTokenizer does."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c <= " ":
            i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c == "/":
            while i < n and text[i] not in "\r\n":
                i += 1
        elif c in "\"'":
            i += 1
            chars: list[str] = []
            while i < n and text[i] != c and text[i] not in "\r\n":
                if text[i] == "\\" and i + 1 < n:
                    escaped = text[i + 1]
                    if escaped in _OCTAL:  # up to three octal digits, the first at most 3 for three
                        j = i + 2
                        limit = i + (4 if escaped <= "3" else 3)
                        while j < min(limit, n) and text[j] in _OCTAL:
                            j += 1
                        chars.append(chr(int(text[i + 1 : j], 8)))
                        i = j
                    else:
                        chars.append(_JAVA_ESCAPES.get(escaped, escaped))
                        i += 2
                else:
                    chars.append(text[i])
                    i += 1
            i += 1  # the closing quote (an unterminated string ends at the line's end, as in Java)
            out.append(("quoted", "".join(chars)))
        elif _word_char(c, first=True):
            j = i + 1
            while j < n and _word_char(text[j], first=False):
                j += 1
            out.append(("word", text[i:j]))
            i = j
        elif (c.isascii() and c.isdigit()) or c in ".-":
            j = i + 1
            while j < n and ((text[j].isascii() and text[j].isdigit()) or text[j] == "."):
                j += 1
            out.append(("number", text[i:j]))
            i = j
        else:
            out.append((c, c))
            i += 1
    return out


def _jaas_error(reason: str) -> ConfigError:
    from cdc.api.errors import ConfigError

    # Never the value: it holds the password.
    return ConfigError(f"Invalid value [hidden] for configuration sasl.jaas.config: {reason}")


def parse_jaas(value: str) -> JaasEntry:
    """The login module of a client's ``sasl.jaas.config``, parsed as Kafka's ``JaasConfig`` does.

    Quoted values (``"…"`` or ``'…'``) are unescaped as java.io.StreamTokenizer does (``\\"`` is ``"``,
    ``\\\\`` is ``\\``, ``\\n`` a line feed …); unquoted words are taken as they are. A value Kafka
    refuses is refused with Kafka's message (no login module, a bad control flag, a key without a value,
    no terminating ``;``, more than one module): a :class:`~cdc.api.errors.ConfigError` that never quotes
    the value.
    """
    tokens = _jaas_tokens(value)
    entries: list[JaasEntry] = []
    pos = 0
    while pos < len(tokens):
        module = tokens[pos][1]
        pos += 1
        if pos >= len(tokens):
            raise _jaas_error("Login module control flag not specified in JAAS config")
        flag = tokens[pos][1]
        pos += 1
        if flag.upper() not in _FLAGS:
            raise _jaas_error(f"Invalid login module control flag '{flag}' in JAAS config")
        options: dict[str, str] = {}
        while pos < len(tokens) and tokens[pos][0] != ";":
            key = tokens[pos][1]
            if pos + 2 >= len(tokens) or tokens[pos + 1][0] != "=" or tokens[pos + 2][0] not in _VALUES:
                raise _jaas_error(f"Value not specified for key '{key}' in JAAS config")
            options[key] = tokens[pos + 2][1]
            pos += 3
        if pos >= len(tokens):
            raise _jaas_error("JAAS config entry not terminated by semi-colon")
        pos += 1
        entries.append(JaasEntry(module, flag, options))
    if not entries:
        raise _jaas_error("Login module not specified in JAAS config")
    if len(entries) > 1:
        raise _jaas_error(f"JAAS config property contains {len(entries)} login modules, should be 1 module")
    return entries[0]


# OAuthBearerLoginModule's unsecured-token options (Java) and librdkafka's unsecured JWT handler's names.
_UNSECURED = "unsecuredLogin"


def _oauthbearer(options: Mapping[str, str]) -> dict[str, str]:
    """librdkafka's OAUTHBEARER settings for OAuthBearerLoginModule's options.

    With ``unsecuredLogin*`` options (Java's built-in unsecured tokens): librdkafka's unsecured JWT
    handler, ``sasl.oauthbearer.config`` = ``principalClaimName``, ``principal``, ``scopeClaimName``,
    ``scope``, ``lifeSeconds`` and ``extension_<name>``. Otherwise (OIDC, KIP-768, with
    ``sasl.oauthbearer.token.endpoint.url``): ``clientId``, ``clientSecret``, ``scope`` and
    ``extension_<name>`` → ``sasl.oauthbearer.client.id`` … ``sasl.oauthbearer.extensions``.
    """
    out: dict[str, str] = {}
    if any(k.startswith(_UNSECURED) for k in options):
        principal_claim = options.get(_UNSECURED + "PrincipalClaimName", "sub")
        scope_claim = options.get(_UNSECURED + "ScopeClaimName", "scope")
        parts = []
        if principal_claim != "sub":
            parts.append(f"principalClaimName={principal_claim}")
        principal = options.get(f"{_UNSECURED}StringClaim_{principal_claim}")
        if principal is not None:
            parts.append(f"principal={principal}")
        if scope_claim != "scope":
            parts.append(f"scopeClaimName={scope_claim}")
        scopes = options.get(f"{_UNSECURED}ListClaim_{scope_claim}")
        if scopes:  # Java: the first character is the delimiter
            parts.append("scope=" + ",".join(s for s in scopes[1:].split(scopes[0]) if s))
        elif options.get(f"{_UNSECURED}StringClaim_{scope_claim}"):
            parts.append(f"scope={options[f'{_UNSECURED}StringClaim_{scope_claim}']}")
        if options.get(_UNSECURED + "LifetimeSeconds"):
            parts.append(f"lifeSeconds={options[_UNSECURED + 'LifetimeSeconds']}")
        prefix = _UNSECURED + "Extension_"
        parts.extend(f"extension_{k[len(prefix) :]}={v}" for k, v in options.items() if k.startswith(prefix))
        out["enable.sasl.oauthbearer.unsecure.jwt"] = "true"
        if parts:
            out["sasl.oauthbearer.config"] = " ".join(parts)
        return out
    for java, name in (
        ("clientId", "sasl.oauthbearer.client.id"),
        ("clientSecret", "sasl.oauthbearer.client.secret"),
        ("scope", "sasl.oauthbearer.scope"),
    ):
        if java in options:
            out[name] = options[java]
    extensions = [f"{k[len('extension_') :]}={v}" for k, v in options.items() if k.startswith("extension_")]
    if extensions:
        out["sasl.oauthbearer.extensions"] = ",".join(extensions)
    return out


def jaas_to_librdkafka(value: str) -> dict[str, str]:
    """librdkafka's settings for a ``sasl.jaas.config`` value."""
    entry = parse_jaas(value)
    options, name = entry.options, entry.simple_name
    out: dict[str, str] = {}
    if name == "Krb5LoginModule":
        if "keyTab" in options:
            out["sasl.kerberos.keytab"] = options["keyTab"]
        if "principal" in options:
            out["sasl.kerberos.principal"] = options["principal"]
        if "serviceName" in options:
            out["sasl.kerberos.service.name"] = options["serviceName"]
        return out
    if name == "OAuthBearerLoginModule":
        return _oauthbearer(options)
    if "username" in options:  # PlainLoginModule, ScramLoginModule
        out["sasl.username"] = options["username"]
    if "password" in options:
        out["sasl.password"] = options["password"]
    return out
