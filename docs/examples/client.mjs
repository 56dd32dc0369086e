// carphoto with Node's fetch (Node 18+): every operation, the Assets library and a video job.
//
//   CARPHOTO_URL=http://localhost:8080 CARPHOTO_KEY=cp_live_... \
//     PHOTO=../samples/car.jpg LOGO=../samples/plate-design.png BACKDROP=../samples/backdrop.jpg \
//     IMAGE_URL=https://example.com/car.jpg VIDEO=walkaround.mp4 WEBHOOK_SECRET=... \
//     OUT=out node client.mjs
//
// IMAGE_URL, VIDEO and WEBHOOK_SECRET are optional: without them the photo by
// URL, the video job or its webhook is left out, saying so.
//
// Calls are retried on 429 (waiting the Retry-After the server sends), 500
// and 503 (both uncharged), with an Idempotency-Key on photo and video calls
// so that a retry after a lost answer is never charged twice. A video job is
// polled as its Retry-After says (every poll counts toward the key's rate
// limit); with WEBHOOK_SECRET (the server's) the job's end also comes to a
// webhook, whose Carphoto-Signature is checked before it is believed. The
// webhook receiver here listens on 127.0.0.1 (WEBHOOK_PORT, default any free
// port), which a service on the same machine reaches when started with
// ALLOW_PRIVATE_URLS=true; from elsewhere set WEBHOOK_URL to the address that
// reaches it.
import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";

const URL = process.env.CARPHOTO_URL ?? "http://localhost:8080";
const KEY = process.env.CARPHOTO_KEY;
const OUT = process.env.OUT ?? "out";
const RETRY_STATUSES = new Set([429, 500, 503]); // 429 and 503 (overload too) say how long in Retry-After
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// call sends one API call, retrying what the API says is worth retrying.
// body is a function so that each attempt sends a fresh FormData.
async function call(method, path, { body, headers = {}, attempts = 6 } = {}) {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(URL + path, {
      method,
      headers: { Authorization: `Bearer ${KEY}`, ...headers },
      body: body?.(),
    });
    if (res.ok) return res;
    const err = await res.json().catch(() => ({}));
    if (!RETRY_STATUSES.has(res.status) || attempt === attempts) {
      throw new Error(`${method} ${path}: ${res.status} ${err.code}: ${err.error}`);
    }
    const wait = Number(res.headers.get("Retry-After") ?? 2 ** (attempt - 1));
    console.error(`retrying ${method} ${path} in ${wait} s (${res.status} ${err.code ?? ""})`);
    await sleep(wait * 1000);
  }
}

// form is a multipart body of fields: Blobs go as files, the rest as values.
function form(fields) {
  const f = new FormData();
  for (const [name, value] of Object.entries(fields)) {
    if (value instanceof Blob) f.append(name, value, name + "." + (value.type.split("/")[1] ?? "bin"));
    else f.append(name, value);
  }
  return f;
}

const file = (path, type) => new Blob([readFileSync(path)], { type });

// photo makes one photo call: the image comes back in the body, the facts in
// headers. With imageUrl among the fields the service fetches the photo itself.
async function photo(op, out, fields = {}) {
  const image = "imageUrl" in fields ? {} : { image: file(process.env.PHOTO, "image/jpeg") };
  const res = await call("POST", `/v1/${op}`, {
    headers: { "Idempotency-Key": randomUUID() },
    body: () => form({ ...image, ...fields }),
  });
  writeFileSync(out, Buffer.from(await res.arrayBuffer()));
  const h = (name) => res.headers.get(name);
  console.log(`${op}: plates ${h("X-Plates-Found") ?? "-"}, charged ${h("X-Credits-Charged")}, ` +
    `remaining ${h("X-Credits-Remaining")} -> ${out}`);
}

// verifySignature reports whether body (the raw bytes received) was signed by
// the service: header is its Carphoto-Signature, t=<unix time>,v1=<hex
// HMAC-SHA256 of "<t>.<body>">. A signature older than tolerance seconds is
// refused (a replay).
function verifySignature(secret, header, body, tolerance = 300) {
  const parts = Object.fromEntries(header.split(",").map((p) => p.split("=", 2)));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > tolerance) return false;
  const want = createHmac("sha256", secret).update(`${t}.`).update(body).digest();
  const got = Buffer.from(parts.v1 ?? "", "hex");
  return got.length === want.length && timingSafeEqual(got, want);
}

// startWebhookReceiver listens on 127.0.0.1; next() resolves with the next
// delivery, {signature, body}, or rejects after ms.
async function startWebhookReceiver() {
  const waiting = [], received = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const d = { signature: req.headers["carphoto-signature"] ?? "", body: Buffer.concat(chunks) };
      if (waiting.length) waiting.shift()(d);
      else received.push(d);
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(Number(process.env.WEBHOOK_PORT ?? 0), "127.0.0.1", resolve));
  const next = (ms) => received.length ? Promise.resolve(received.shift()) : new Promise((resolve, reject) => {
    waiting.push(resolve);
    setTimeout(() => reject(new Error(`no webhook delivery within ${ms / 1000} s of the job's end`)), ms).unref();
  });
  return { server, port: server.address().port, next };
}

// videoBlur submits a video, polls its job as Retry-After says, fetches the
// MP4 and, with WEBHOOK_SECRET, checks the webhook that says the job ended.
async function videoBlur(out) {
  const secret = process.env.WEBHOOK_SECRET ?? "";
  const fields = { style: "blur", video: file(process.env.VIDEO, "video/mp4") };
  let receiver = null;
  if (secret) {
    receiver = await startWebhookReceiver();
    fields.webhookUrl = process.env.WEBHOOK_URL ?? `http://127.0.0.1:${receiver.port}/carphoto-webhook`;
  } else {
    console.log("video-blur: no WEBHOOK_SECRET: polling only, no webhook");
  }
  let job = await (await call("POST", "/v1/video-blur", {
    headers: { "Idempotency-Key": randomUUID() },
    body: () => form(fields),
  })).json();
  console.log(`video-blur: job ${job.id} ${job.status}, ${job.durationSeconds} s, ${job.credits} credits held`);
  let wait = 2, polls = 0;
  while (job.status !== "done" && job.status !== "failed") {
    await sleep(wait * 1000);
    const res = await call("GET", `/v1/jobs/${job.id}`);
    job = await res.json();
    polls++;
    const told = res.headers.get("Retry-After");
    wait = Number(told ?? 2);
    console.error(`  ${job.status}, ${job.progress.framesDone}/${job.progress.framesTotal} frames` +
      (told ? `; next look in ${wait} s` : ""));
  }
  if (job.status === "failed") throw new Error(`video-blur: job ${job.id} failed, uncharged: ${job.code}: ${job.error}`);
  writeFileSync(out, Buffer.from(await (await call("GET", job.resultUrl)).arrayBuffer()));
  console.log(`video-blur: job ${job.id} done after ${polls} polls (following Retry-After) -> ${out}`);
  if (receiver) {
    try {
      const { signature, body } = await receiver.next(60_000);
      if (!verifySignature(secret, signature, body)) {
        throw new Error("webhook: the signature does not match: not from the service, ignored");
      }
      console.log(`webhook: signature verified: ${body}`);
    } finally {
      receiver.server.close();
    }
  }
}

mkdirSync(OUT, { recursive: true });
const logo = file(process.env.LOGO, "image/png");
const backdrop = file(process.env.BACKDROP, "image/jpeg");

console.log("account:", JSON.stringify(await (await call("GET", "/v1/account")).json()));
await photo("blur-plates", join(OUT, "blurred.jpg"), { style: "pixelate" });
await photo("plate-logo", join(OUT, "logo-file.jpg"), { logo });

const asset = await (await call("POST", "/v1/assets", { body: () => form({ file: logo }) })).json();
console.log("asset saved:", asset.id);
await photo("plate-logo", join(OUT, "logo-asset.jpg"), { logoAssetId: asset.id });
await photo("logo-overlay", join(OUT, "watermarked.jpg"), { logoAssetId: asset.id, position: "top-right", opacity: "0.8" });
const list = await (await call("GET", "/v1/assets")).json();
console.log("assets:", list.assets.map((a) => a.id).join(", "));
console.log("asset:", JSON.stringify(await (await call("GET", `/v1/assets/${asset.id}`)).json()));
await photo("car-shadow", join(OUT, "shadow.png"), { reflection: "true" });
await photo("car-cutout", join(OUT, "cutout.png"), { crop: "true", padding: "5%" });
await photo("car-shadow", join(OUT, "studio.png"), { backgroundImage: backdrop, floorY: "0.9" });
if (process.env.IMAGE_URL) await photo("blur-plates", join(OUT, "by-url.jpg"), { imageUrl: process.env.IMAGE_URL });
else console.log("blur-plates by imageUrl: no IMAGE_URL, left out");
await call("DELETE", `/v1/assets/${asset.id}`);
console.log("asset deleted:", asset.id);
if (process.env.VIDEO) await videoBlur(join(OUT, "blurred.mp4"));
else console.log("video-blur: no VIDEO, left out");
