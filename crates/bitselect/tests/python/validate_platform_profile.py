"""Validates a platform's UCP profile with the standard's own models.

Reads one JSON document on stdin (the profile) and validates it as the
UCP Python SDK's `PlatformSchema`. Prints {"valid": true} or
{"valid": false, "errors": [...]} (each error's place and message).

Usage: validate_platform_profile.py < profile.json
"""

import json
import sys

from pydantic import ValidationError
from ucp_sdk.models.schemas import profile


def main() -> None:
    document = json.load(sys.stdin)
    try:
        profile.PlatformSchema.model_validate(document)
    except ValidationError as error:
        errors = sorted(
            {".".join(str(part) for part in e["loc"]) + ": " + e["msg"] for e in error.errors()}
        )
        print(json.dumps({"valid": False, "errors": errors}))
        return
    print(json.dumps({"valid": True}))


if __name__ == "__main__":
    main()
