"""Signatures of internal requests between workers (KIP-507), as Connect's ``InternalRequestSignature``.

A follower signs the raw body of ``POST /connectors/{n}/tasks`` and ``PUT /connectors/{n}/fence`` with the
session key: ``X-Connect-Authorization: base64(HMAC(key, body))`` and
``X-Connect-Request-Signature-Algorithm: HmacSHA256``. The REST layer only parses the headers; the herder
decides whether a missing or wrong signature is an error (it holds the session key).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass

from cdc.worker.rest.errors import RestError

__all__ = ["ALGORITHM_HEADER", "SIGNATURE_HEADER", "RequestSignature", "sign"]

SIGNATURE_HEADER = "X-Connect-Authorization"
ALGORITHM_HEADER = "X-Connect-Request-Signature-Algorithm"

_DIGESTS = {"HmacSHA256": hashlib.sha256, "HmacSHA1": hashlib.sha1, "HmacSHA512": hashlib.sha512}


@dataclass(frozen=True)
class RequestSignature:
    body: bytes
    algorithm: str  # Java's name, e.g. "HmacSHA256"
    signature: bytes  # decoded

    @classmethod
    def from_headers(cls, body: bytes, headers: Mapping[str, str]) -> RequestSignature | None:
        """None when either header is missing; 400 for an unknown algorithm or bad base64."""
        algorithm = headers.get(ALGORITHM_HEADER.lower(), headers.get(ALGORITHM_HEADER))
        encoded = headers.get(SIGNATURE_HEADER.lower(), headers.get(SIGNATURE_HEADER))
        if algorithm is None or encoded is None:
            return None
        if algorithm not in _DIGESTS:
            raise RestError(400, f"{algorithm} Mac not available")
        try:
            decoded = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError) as e:
            raise RestError(400, f"Illegal base64 signature: {e}") from None
        return cls(body, algorithm, decoded)

    def is_valid(self, key: bytes) -> bool:
        expected = hmac.new(key, self.body, _DIGESTS[self.algorithm]).digest()
        return hmac.compare_digest(expected, self.signature)


def sign(key: bytes, body: bytes, algorithm: str = "HmacSHA256") -> dict[str, str]:
    """The headers that sign ``body``, for a worker sending an internal request."""
    digest = hmac.new(key, body, _DIGESTS[algorithm]).digest()
    return {SIGNATURE_HEADER: base64.b64encode(digest).decode("ascii"), ALGORITHM_HEADER: algorithm}
