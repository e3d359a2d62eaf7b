"""Checks a shopper's checkout mandate with the SD-JWT reference
implementation (`sd-jwt`), not the shop's code.

Reads one JSON object on stdin: {"mandate": the SD-JWT+KB presentation,
"device_jwk": the public key the shop bound to the shopper, "aud": the
shop's origin, "nonce": the checkout's id}. The issuer-signed part must be
signed by that key (named by its `kid`), the key binding by its `cnf` key,
with the expected audience, nonce and digest. Prints {"verified": true,
"checkout_id": ..., "total": ...} or {"verified": false, "reason": ...}.

Usage: verify_mandate.py < document.json
"""

import json
import sys

from jwcrypto.jwk import JWK
from sd_jwt.verifier import SDJWTVerifier


def main() -> None:
    document = json.load(sys.stdin)
    device = document["device_jwk"]

    def issuer_key(_issuer, header):
        if header.get("kid") != device["kid"]:
            raise ValueError(f"signed by {header.get('kid')}, not the bound device key")
        return JWK(**device)

    try:
        verifier = SDJWTVerifier(
            document["mandate"],
            issuer_key,
            expected_aud=document["aud"],
            expected_nonce=document["nonce"],
        )
        payload = verifier.get_verified_payload()
    except Exception as error:  # every failure is a verdict, not a crash
        print(json.dumps({"verified": False, "reason": f"{type(error).__name__}: {error}"}))
        return
    checkout = payload["checkout"]
    total = next(t["amount"] for t in checkout["totals"] if t["type"] == "total")
    print(json.dumps({"verified": True, "checkout_id": checkout["id"], "total": total}))


if __name__ == "__main__":
    main()
