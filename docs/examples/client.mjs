// carphoto with Node's fetch (Node 18+): every operation and the Assets library.
//
//   CARPHOTO_URL=http://localhost:8080 CARPHOTO_KEY=cp_live_... \
//     PHOTO=../samples/car.jpg LOGO=../samples/plate-design.png OUT=out node client.mjs
//
// Calls are retried on 429 (waiting the Retry-After the server sends), 500
// and 503 (both uncharged), with an Idempotency-Key on photo calls so that a
// retry after a lost answer is never charged twice.
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const URL = process.env.CARPHOTO_URL ?? "http://localhost:8080";
const KEY = process.env.CARPHOTO_KEY;
const OUT = process.env.OUT ?? "out";
const RETRY_STATUSES = new Set([429, 500, 503]);
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

// photo makes one photo call: the image comes back in the body, the facts in headers.
async function photo(op, out, fields = {}) {
  const image = new Blob([readFileSync(process.env.PHOTO)], { type: "image/jpeg" });
  const res = await call("POST", `/v1/${op}`, {
    headers: { "Idempotency-Key": randomUUID() },
    body: () => {
      const form = new FormData();
      form.append("image", image, "car.jpg");
      for (const [name, value] of Object.entries(fields)) {
        if (value instanceof Blob) form.append(name, value, name + ".png");
        else form.append(name, value);
      }
      return form;
    },
  });
  writeFileSync(out, Buffer.from(await res.arrayBuffer()));
  const h = (name) => res.headers.get(name);
  console.log(`${op}: plates ${h("X-Plates-Found") ?? "-"}, charged ${h("X-Credits-Charged")}, ` +
    `remaining ${h("X-Credits-Remaining")} -> ${out}`);
}

mkdirSync(OUT, { recursive: true });
const logo = new Blob([readFileSync(process.env.LOGO)], { type: "image/png" });

console.log("account:", JSON.stringify(await (await call("GET", "/v1/account")).json()));
await photo("blur-plates", join(OUT, "blurred.jpg"), { style: "pixelate" });
await photo("plate-logo", join(OUT, "logo-file.jpg"), { logo });

const asset = await (await call("POST", "/v1/assets", {
  body: () => {
    const form = new FormData();
    form.append("file", logo, "dealer-plate.png");
    return form;
  },
})).json();
console.log("asset saved:", asset.id);
await photo("plate-logo", join(OUT, "logo-asset.jpg"), { logoAssetId: asset.id });
const list = await (await call("GET", "/v1/assets")).json();
console.log("assets:", list.assets.map((a) => a.id).join(", "));
console.log("asset:", JSON.stringify(await (await call("GET", `/v1/assets/${asset.id}`)).json()));
await photo("car-shadow", join(OUT, "shadow.png"), { reflection: "true" });
await call("DELETE", `/v1/assets/${asset.id}`);
console.log("asset deleted:", asset.id);
