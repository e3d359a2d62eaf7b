"""Checks a checkout's merchant signature with code that is not the shop's.

Reads one JSON object on stdin, {"checkout": ..., "keys": [JWK, ...]}, and
verifies `checkout.ap2.merchant_authorization` as the AP2 extension says:
a detached JWS (`<header>..<signature>`) over the checkout without `ap2`,
canonicalized by RFC 8785 (the `rfc8785` package), checked by the JOSE
library `jwcrypto` with the published key the header names. Prints
{"verified": true, "kid": ...} when it holds; otherwise prints
{"verified": false, "reason": ...}. Exits non-zero only on bad input.

Usage: verify_merchant_signature.py < document.json
"""

import base64
import json
import sys

import rfc8785
from jwcrypto import jwk, jws


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def main() -> None:
    document = json.load(sys.stdin)
    checkout = document["checkout"]
    keys = {key["kid"]: jwk.JWK(**key) for key in document["keys"]}
    signature = checkout["ap2"]["merchant_authorization"]
    header_b64, payload_b64, signature_b64 = signature.split(".")
    if payload_b64 != "":
        print(json.dumps({"verified": False, "reason": "payload not detached"}))
        return
    header = json.loads(b64url_decode(header_b64))
    if header.get("alg") != "ES256" or header.get("kid") not in keys:
        print(json.dumps({"verified": False, "reason": f"header {header}"}))
        return
    payload = {name: value for name, value in checkout.items() if name != "ap2"}
    compact = ".".join([header_b64, b64url(rfc8785.dumps(payload)), signature_b64])
    token = jws.JWS()
    token.deserialize(compact)
    try:
        token.verify(keys[header["kid"]], alg="ES256")
    except jws.InvalidJWSSignature as error:
        print(json.dumps({"verified": False, "reason": str(error)}))
        return
    print(json.dumps({"verified": True, "kid": header["kid"]}))


if __name__ == "__main__":
    main()
