"""A throwaway PKI for TLS tests, made as users make theirs: openssl for the CA and certificates, the
JDK's keytool for the Java stores (JKS and PKCS12 trust stores, a JKS key store converted from PKCS12).

Files in the directory (passwords: trust stores ``trustpass``, key stores ``keypass``):

* ``ca.pem``/``ca.key``; ``server.pem``/``server.key`` for DNS:localhost and IP:127.0.0.1 (so 127.0.0.2,
  also loopback, is a host name the certificate does not cover);
* ``client.pem``/``client.key`` (CN=client), ``client.p12``, ``client.jks``, ``client.pk8`` (PKCS-8 DER,
  pgJDBC's format), ``server.p12``/``server.jks`` (alias ``server``: a broker's key store);
* ``trust.jks``, ``trust.p12`` (the CA).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

__all__ = ["KEY_PASSWORD", "TRUST_PASSWORD", "make_pki"]

TRUST_PASSWORD = "trustpass"
KEY_PASSWORD = "keypass"


def _run(*args: str) -> None:
    subprocess.run(args, check=True, capture_output=True, timeout=120)


def make_pki(d: Path) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    _run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=cdc test CA",
         "-keyout", str(d / "ca.key"), "-out", str(d / "ca.pem"))  # fmt: skip
    for name in ("server", "client"):
        _run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}",
             "-keyout", str(d / f"{name}.key"), "-out", str(d / f"{name}.csr"))  # fmt: skip
        ext = d / f"{name}.ext"
        ext.write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
        _run("openssl", "x509", "-req", "-in", str(d / f"{name}.csr"), "-CA", str(d / "ca.pem"),
             "-CAkey", str(d / "ca.key"), "-CAcreateserial", "-days", "2", "-extfile", str(ext),
             "-out", str(d / f"{name}.pem"))  # fmt: skip
        _run("openssl", "pkcs12", "-export", "-in", str(d / f"{name}.pem"), "-inkey", str(d / f"{name}.key"),
             "-certfile", str(d / "ca.pem"), "-name", name, "-passout", f"pass:{KEY_PASSWORD}",
             "-out", str(d / f"{name}.p12"))  # fmt: skip
        _run("keytool", "-importkeystore", "-noprompt", "-srckeystore", str(d / f"{name}.p12"),
             "-srcstoretype", "PKCS12", "-srcstorepass", KEY_PASSWORD,
             "-destkeystore", str(d / f"{name}.jks"), "-deststoretype", "JKS",
             "-deststorepass", KEY_PASSWORD)  # fmt: skip
    for kind in ("JKS", "PKCS12"):
        _run("keytool", "-importcert", "-noprompt", "-alias", "ca", "-file", str(d / "ca.pem"),
             "-keystore", str(d / ("trust.jks" if kind == "JKS" else "trust.p12")), "-storetype", kind,
             "-storepass", TRUST_PASSWORD)  # fmt: skip
    _run("openssl", "pkcs8", "-topk8", "-nocrypt", "-in", str(d / "client.key"), "-outform", "DER",
         "-out", str(d / "client.pk8"))  # fmt: skip
    for key in d.glob("*.key"):
        key.chmod(0o600)
    return d
