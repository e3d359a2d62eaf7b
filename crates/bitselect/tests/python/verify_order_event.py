"""Checks an order event the shop posted to a platform, with code that is
not the shop's.

Reads one JSON object on stdin: {"request": {"method", "url", "headers":
{name: value}, "body_b64"}, "keys": [JWK, ...]} (the keys the shop's
profile publishes). Checks, as the standard's order webhooks say:

- the `Content-Digest` header is the sha-256 of the raw body (RFC 9530);
- the RFC 9421 signature (the `http-message-signatures` package, ECDSA
  P-256 with a raw r||s signature) holds with the published key its
  `keyid` names, and covers the method, authority, path, `UCP-Agent`,
  the digest and the content type;
- `Webhook-Id` and `Webhook-Timestamp` are present (Standard Webhooks);
- the body is an order as the standard's own models (`ucp-sdk`) read it.

Prints {"verified": true, "kid": ..., "order_id": ...} when all hold, else
{"verified": false, "reason": ...}. Exits non-zero only on bad input.

Usage: verify_order_event.py < event.json
"""

import base64
import hashlib
import json
import sys
from types import SimpleNamespace

from cryptography.hazmat.primitives import serialization
from http_message_signatures import HTTPMessageVerifier, HTTPSignatureKeyResolver, algorithms
from http_message_signatures.structures import CaseInsensitiveDict
from jwcrypto import jwk
from ucp_sdk.models.schemas.shopping.order import Order

REQUIRED = {"@method", "@authority", "@path", "ucp-agent", "content-digest", "content-type"}


class PublishedKeys(HTTPSignatureKeyResolver):
    def __init__(self, keys):
        self.keys = {key["kid"]: key for key in keys}

    def resolve_public_key(self, key_id):
        pem = jwk.JWK(**self.keys[key_id]).export_to_pem()
        return serialization.load_pem_public_key(pem)


def refuse(reason):
    print(json.dumps({"verified": False, "reason": reason}))


def main():
    document = json.load(sys.stdin)
    request = document["request"]
    body = base64.b64decode(request["body_b64"])
    headers = {name.lower(): value for name, value in request["headers"].items()}

    digest = "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode() + ":"
    if headers.get("content-digest") != digest:
        return refuse("Content-Digest is not the sha-256 of the body")
    for name in ("webhook-id", "webhook-timestamp"):
        if not headers.get(name):
            return refuse(f"no {name}")

    message = SimpleNamespace(
        method=request["method"], url=request["url"], headers=CaseInsensitiveDict(headers)
    )
    verifier = HTTPMessageVerifier(
        signature_algorithm=algorithms.ECDSA_P256_SHA256,
        key_resolver=PublishedKeys(document["keys"]),
    )
    try:
        # The event's time is the shop's; how old it may be is the
        # platform's policy, not the signature's.
        [result] = verifier.verify(message, max_age=None)
    except Exception as error:  # the library's refusals, whatever their type
        return refuse(f"signature: {error}")
    covered = {str(name).strip('"') for name in result.covered_components}
    if not REQUIRED <= covered:
        return refuse(f"the signature leaves out {sorted(REQUIRED - covered)}")

    try:
        order = Order.model_validate_json(body)
    except Exception as error:
        return refuse(f"not an order: {error}")
    print(
        json.dumps(
            {"verified": True, "kid": result.parameters["keyid"], "order_id": order.id}
        )
    )


if __name__ == "__main__":
    main()
