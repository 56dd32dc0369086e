"""carphoto with Python requests: every operation, the Assets library and a video job.

    pip install requests        # or Debian's python3-requests
    CARPHOTO_URL=http://localhost:8080 CARPHOTO_KEY=cp_live_... \
        PHOTO=../samples/car.jpg LOGO=../samples/plate-design.png BACKDROP=../samples/backdrop.jpg \
        IMAGE_URL=https://example.com/car.jpg VIDEO=walkaround.mp4 WEBHOOK_SECRET=... \
        OUT=out python3 client.py

IMAGE_URL, VIDEO and WEBHOOK_SECRET are optional: without them the photo by
URL, the video job or its webhook is left out, saying so.

Calls are retried on 429 (waiting the Retry-After the server sends), 500
and 503 (both uncharged), with an Idempotency-Key on photo and video calls
so that a retry after a lost answer is never charged twice. A video job is
polled as its Retry-After says (every poll counts toward the key's rate
limit); with WEBHOOK_SECRET (the server's) the job's end also comes to a
webhook, whose Carphoto-Signature is checked before it is believed. The
webhook receiver here listens on 127.0.0.1 (WEBHOOK_PORT, default any
free port), which a service on the same machine reaches when started with
ALLOW_PRIVATE_URLS=true; from elsewhere set WEBHOOK_URL to the address
that reaches it.
"""

import hashlib
import hmac
import http.server
import os
import queue
import sys
import threading
import time
import uuid

import requests

URL = os.environ.get("CARPHOTO_URL", "http://localhost:8080")
KEY = os.environ["CARPHOTO_KEY"]
RETRY_STATUSES = {429, 500, 503}  # 429 and 503 (overload too) say how long in Retry-After


def call(method, path, attempts=6, **kwargs):
    """Send one API call, retrying what the API says is worth retrying."""
    headers = {"Authorization": "Bearer " + KEY, **kwargs.pop("headers", {})}
    for attempt in range(1, attempts + 1):
        res = requests.request(method, URL + path, headers=headers, timeout=120, **kwargs)
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
    """One photo call: the image comes back in the body, the facts in headers.
    With imageUrl among the fields the service fetches the photo itself."""
    parts = {name: (None, value) for name, value in fields.items()}  # multipart fields, not a file
    if "imageUrl" not in fields:
        with open(os.environ["PHOTO"], "rb") as f:
            parts["image"] = ("car.jpg", f.read())
    res = call("POST", "/v1/" + op, headers={"Idempotency-Key": str(uuid.uuid4())}, files={**parts, **(files or {})})
    with open(out, "wb") as f:
        f.write(res.content)
    h = res.headers
    print(f"{op}: plates {h.get('X-Plates-Found', '-')}, charged {h['X-Credits-Charged']}, "
          f"remaining {h['X-Credits-Remaining']} -> {out}")


def verify_signature(secret, header, body, tolerance=300):
    """Whether body, as received, was signed by the service: header is its
    Carphoto-Signature, t=<unix time>,v1=<hex HMAC-SHA256 of "<t>.<body>">.
    A signature older than tolerance seconds is refused (a replay)."""
    parts = dict(p.split("=", 1) for p in header.split(",") if "=" in p)
    try:
        t = int(parts["t"])
    except (KeyError, ValueError):
        return False
    want = hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    return abs(time.time() - t) <= tolerance and hmac.compare_digest(want, parts.get("v1", ""))


def start_webhook_receiver():
    """A webhook endpoint on 127.0.0.1: each delivery (signature, body) goes
    to the queue returned with the server; it answers 204."""
    deliveries = queue.Queue()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            deliveries.put((self.headers.get("Carphoto-Signature", ""), body))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("WEBHOOK_PORT", "0"))), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, deliveries


def video_blur(out):
    """Submit a video, poll its job as Retry-After says, fetch the MP4 and,
    with WEBHOOK_SECRET, check the webhook that says the job ended."""
    secret = os.environ.get("WEBHOOK_SECRET", "")
    fields, receiver = {"style": "blur"}, None
    if secret:
        receiver, deliveries = start_webhook_receiver()
        fields["webhookUrl"] = os.environ.get(
            "WEBHOOK_URL", f"http://127.0.0.1:{receiver.server_address[1]}/carphoto-webhook")
    else:
        print("video-blur: no WEBHOOK_SECRET: polling only, no webhook")
    with open(os.environ["VIDEO"], "rb") as f:
        job = call("POST", "/v1/video-blur", headers={"Idempotency-Key": str(uuid.uuid4())},
                   files={"video": ("clip.mp4", f.read())}, data=fields).json()
    print(f"video-blur: job {job['id']} {job['status']}, {job['durationSeconds']:g} s, {job['credits']} credits held")
    wait, polls = 2.0, 0
    while job["status"] not in ("done", "failed"):
        time.sleep(wait)
        res = call("GET", "/v1/jobs/" + job["id"])
        job, polls = res.json(), polls + 1
        wait = float(res.headers.get("Retry-After", 2))
        p = job["progress"]
        told = f"; next look in {wait:g} s" if "Retry-After" in res.headers else ""
        print(f"  {job['status']}, {p['framesDone']}/{p['framesTotal']} frames{told}", file=sys.stderr)
    if job["status"] == "failed":
        raise SystemExit(f"video-blur: job {job['id']} failed, uncharged: {job['code']}: {job['error']}")
    with open(out, "wb") as f:
        f.write(call("GET", job["resultUrl"]).content)
    print(f"video-blur: job {job['id']} done after {polls} polls (following Retry-After) -> {out}")
    if receiver:
        try:
            signature, body = deliveries.get(timeout=60)
        except queue.Empty:
            raise SystemExit("webhook: no delivery within 60 s of the job's end")
        finally:
            receiver.shutdown()
        if not verify_signature(secret, signature, body):
            raise SystemExit("webhook: the signature does not match: not from the service, ignored")
        print(f"webhook: signature verified: {body.decode()}")


def main():
    out = os.environ.get("OUT", "out")
    os.makedirs(out, exist_ok=True)
    with open(os.environ["LOGO"], "rb") as f:
        logo = f.read()
    with open(os.environ["BACKDROP"], "rb") as f:
        backdrop = f.read()

    print("account:", call("GET", "/v1/account").json())
    photo("blur-plates", os.path.join(out, "blurred.jpg"), style="pixelate")
    photo("plate-logo", os.path.join(out, "logo-file.jpg"), files={"logo": ("logo.png", logo)})

    asset = call("POST", "/v1/assets", files={"file": ("dealer-plate.png", logo)}).json()
    print("asset saved:", asset["id"])
    photo("plate-logo", os.path.join(out, "logo-asset.jpg"), logoAssetId=asset["id"])
    photo("logo-overlay", os.path.join(out, "watermarked.jpg"), logoAssetId=asset["id"], position="top-right", opacity="0.8")
    print("assets:", [a["id"] for a in call("GET", "/v1/assets").json()["assets"]])
    print("asset:", call("GET", "/v1/assets/" + asset["id"]).json())
    photo("car-shadow", os.path.join(out, "shadow.png"), reflection="true")
    photo("car-cutout", os.path.join(out, "cutout.png"), crop="true", padding="5%")
    photo("car-shadow", os.path.join(out, "studio.png"), files={"backgroundImage": ("backdrop.jpg", backdrop)}, floorY="0.9")
    if os.environ.get("IMAGE_URL"):
        photo("blur-plates", os.path.join(out, "by-url.jpg"), imageUrl=os.environ["IMAGE_URL"])
    else:
        print("blur-plates by imageUrl: no IMAGE_URL, left out")
    call("DELETE", "/v1/assets/" + asset["id"])
    print("asset deleted:", asset["id"])
    if os.environ.get("VIDEO"):
        video_blur(os.path.join(out, "blurred.mp4"))
    else:
        print("video-blur: no VIDEO, left out")


if __name__ == "__main__":
    main()
