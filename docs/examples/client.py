"""carphoto with Python requests: every operation and the Assets library.

    pip install requests
    CARPHOTO_URL=http://localhost:8080 CARPHOTO_KEY=cp_live_... \
        PHOTO=../samples/car.jpg LOGO=../samples/plate-design.png OUT=out python3 client.py

Calls are retried on 429 (waiting the Retry-After the server sends), 500
and 503 (both uncharged), with an Idempotency-Key on photo calls so that a
retry after a lost answer is never charged twice.
"""

import os
import sys
import time
import uuid

import requests

URL = os.environ.get("CARPHOTO_URL", "http://localhost:8080")
KEY = os.environ["CARPHOTO_KEY"]
RETRY_STATUSES = {429, 500, 503}


def call(method, path, attempts=6, **kwargs):
    """Send one API call, retrying what the API says is worth retrying."""
    headers = {"Authorization": "Bearer " + KEY, **kwargs.pop("headers", {})}
    for attempt in range(1, attempts + 1):
        res = requests.request(method, URL + path, headers=headers, timeout=60, **kwargs)
        if res.status_code not in RETRY_STATUSES or attempt == attempts:
            break
        wait = float(res.headers.get("Retry-After", 2 ** (attempt - 1)))
        code = res.json().get("code", "") if res.headers.get("Content-Type", "").startswith("application/json") else ""
        print(f"retrying {method} {path} in {wait:g} s ({res.status_code} {code})", file=sys.stderr)
        time.sleep(wait)
    if not res.ok:
        err = res.json()
        raise SystemExit(f"{method} {path}: {res.status_code} {err['code']}: {err['error']}")
    return res


def photo(op, out, files=None, **fields):
    """One photo call: the image comes back in the body, the facts in headers."""
    with open(os.environ["PHOTO"], "rb") as f:
        image = f.read()
    res = call("POST", "/v1/" + op, headers={"Idempotency-Key": str(uuid.uuid4())},
               files={"image": ("car.jpg", image), **(files or {})}, data=fields)
    with open(out, "wb") as f:
        f.write(res.content)
    h = res.headers
    print(f"{op}: plates {h.get('X-Plates-Found', '-')}, charged {h['X-Credits-Charged']}, "
          f"remaining {h['X-Credits-Remaining']} -> {out}")


def main():
    out = os.environ.get("OUT", "out")
    os.makedirs(out, exist_ok=True)
    with open(os.environ["LOGO"], "rb") as f:
        logo = f.read()

    print("account:", call("GET", "/v1/account").json())
    photo("blur-plates", os.path.join(out, "blurred.jpg"), style="pixelate")
    photo("plate-logo", os.path.join(out, "logo-file.jpg"), files={"logo": ("logo.png", logo)})

    asset = call("POST", "/v1/assets", files={"file": ("dealer-plate.png", logo)}).json()
    print("asset saved:", asset["id"])
    photo("plate-logo", os.path.join(out, "logo-asset.jpg"), logoAssetId=asset["id"])
    print("assets:", [a["id"] for a in call("GET", "/v1/assets").json()["assets"]])
    print("asset:", call("GET", "/v1/assets/" + asset["id"]).json())
    photo("car-shadow", os.path.join(out, "shadow.png"), reflection="true")
    call("DELETE", "/v1/assets/" + asset["id"])
    print("asset deleted:", asset["id"])


if __name__ == "__main__":
    main()
