// The try-it page's script: it calls the public API like any client.
"use strict";
const $ = (id) => document.getElementById(id);
const extensions = { "image/jpeg": "jpg", "image/png": "png", "image/webp": "webp", "video/mp4": "mp4" };
const photoKinds = "image/jpeg,image/png,image/webp";
let photo = null, originalURL = null, resultURL = null;

// A key typed in this tab wins; else the one the page came with (the
// zero-setup mode's demo key, shown to a visitor on the same machine only).
$("key").value = sessionStorage.getItem("carphoto.key") || $("key").value;
$("key").addEventListener("change", () => sessionStorage.setItem("carphoto.key", $("key").value.trim()));

const isVideo = () => $("op").value === "video-blur";

function showOptions() {
  const op = $("op").value;
  for (const el of document.querySelectorAll(".opt")) {
    el.hidden = !el.dataset.ops.split(" ").includes(op);
  }
  $("photo").accept = isVideo() ? "video/*" : photoKinds;
  $("dropLabel").textContent = isVideo() ? "Drop a video here" : "Drop a photo here";
  $("dropKinds").textContent = isVideo() ? "MP4, MOV, WebM…" : "JPEG, PNG or WebP";
}
$("op").addEventListener("change", showOptions);

// hasBackdrop reports whether a backdrop is chosen (a file, a URL or a
// saved one): then the placement shows and the canvas options do not.
const hasBackdrop = () => Boolean($("backgroundImage").files[0] || $("backgroundUrl").value.trim() || $("backgroundAssetId").value.trim());
function showBackdrop() {
  const on = hasBackdrop();
  $("placement").hidden = !on;
  $("canvas").classList.toggle("off", on);
  for (const id of ["crop", "padding", "aspect", "background"]) $(id).disabled = on;
}
for (const id of ["backgroundImage", "backgroundUrl", "backgroundAssetId"]) {
  $(id).addEventListener("change", showBackdrop);
  $(id).addEventListener("input", showBackdrop);
}
showOptions();
showBackdrop();

function usePhoto(file) {
  if (!file) return;
  photo = file;
  if (originalURL) URL.revokeObjectURL(originalURL);
  originalURL = URL.createObjectURL(file);
  const video = file.type.startsWith("video/");
  $("original").hidden = video;
  $("originalVideo").hidden = !video;
  if (video) {
    $("originalVideo").src = originalURL;
    $("original").removeAttribute("src");
  } else {
    $("original").src = originalURL;
    $("original").alt = file.name;
    $("originalVideo").removeAttribute("src");
  }
}
$("photo").addEventListener("change", () => usePhoto($("photo").files[0]));
const drop = $("drop");
drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
drop.addEventListener("dragleave", () => drop.classList.remove("over"));
drop.addEventListener("drop", (e) => {
  e.preventDefault();
  drop.classList.remove("over");
  usePhoto(e.dataTransfer.files[0]);
});

function status(text, isError) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

// clearResult takes the previous call's result, facts and download link
// off the page, so that nothing of it shows beside a failure.
function clearResult() {
  if (resultURL) URL.revokeObjectURL(resultURL);
  resultURL = null;
  for (const id of ["result", "resultVideo"]) {
    $(id).removeAttribute("src");
    $(id).hidden = true;
  }
  $("download").hidden = true;
  $("download").removeAttribute("href");
  $("download").removeAttribute("download");
  for (const id of ["plates", "truncated", "scaleUsed", "charged", "remaining", "timing", "requestId"]) $(id).textContent = "–";
  $("facts").hidden = true;
}

// fields appends the chosen operation's options to body.
function fields(op, body) {
  const text = (id) => $(id).value.trim();
  const add = (name, id) => { if (text(id)) body.append(name, text(id)); };
  if (op === "blur-plates" || op === "video-blur") add("style", "style");
  const studio = op === "car-shadow" || op === "car-cutout";
  if (studio) {
    add("plates", "studioPlates");
    if ($("requireWholeCar").checked) body.append("requireWholeCar", "true");
  }
  if (op === "plate-logo" || op === "logo-overlay" || (studio && text("studioPlates") === "logo")) {
    if ($("logo").files[0]) body.append("logo", $("logo").files[0], $("logo").files[0].name);
    add("logoAssetId", "logoAssetId");
    add("logoUrl", "logoUrl");
  }
  if (op === "logo-overlay") for (const f of ["position", "scale", "opacity", "margin"]) add(f, f);
  if (op === "car-shadow" && $("reflection").checked) body.append("reflection", "true");
  if (op === "car-shadow" || op === "car-cutout") {
    if (hasBackdrop()) {
      // On a backdrop the canvas is the backdrop: crop, padding, aspect
      // and background do not apply (the page hides them).
      if ($("backgroundImage").files[0]) body.append("backgroundImage", $("backgroundImage").files[0], $("backgroundImage").files[0].name);
      add("backgroundUrl", "backgroundUrl");
      add("backgroundAssetId", "backgroundAssetId");
      add("floorY", "floorY");
      add("scale", "carScale");
      add("centerX", "centerX");
    } else {
      if ($("crop").checked) body.append("crop", "true");
      for (const f of ["padding", "aspect", "background"]) add(f, f);
    }
  }
  if ((op === "blur-plates" || op === "plate-logo") && $("requirePlate").checked) body.append("requirePlate", "true");
  if (op !== "video-blur") add("format", "format");
}

// failure turns an error answer into the status line's text.
async function failure(res) {
  let msg = res.status + " " + res.statusText;
  try { const err = await res.json(); msg = res.status + " " + err.code + ": " + err.error; } catch (_) {}
  if (res.headers.get("Retry-After")) msg += " (retry in " + res.headers.get("Retry-After") + " s)";
  return msg;
}

// showResult puts a successful answer's body on the page.
function showResult(op, blob, type, facts) {
  resultURL = URL.createObjectURL(blob);
  const el = type.startsWith("video/") ? $("resultVideo") : $("result");
  el.src = resultURL;
  el.alt = op + " result";
  el.hidden = false;
  const base = photo ? photo.name.replace(/\.[^.]*$/, "") || "photo" : "photo";
  $("download").href = resultURL;
  $("download").download = base + "-" + op + "." + (extensions[type] || "bin");
  $("download").hidden = false;
  for (const [id, v] of Object.entries(facts)) $(id).textContent = v ?? "–";
  $("facts").hidden = false;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// runVideo submits a video-blur job, polls it until it ends and fetches
// its MP4.
async function runVideo(key, body, started) {
  const auth = { Authorization: "Bearer " + key };
  const res = await fetch("/v1/video-blur", { method: "POST", headers: auth, body });
  $("requestId").textContent = res.headers.get("X-Request-Id") || "–";
  if (res.status !== 202) { status(await failure(res), true); return; }
  let job = await res.json(), wait = 2;
  for (;;) {
    const p = job.progress || {};
    status("Job " + job.id + ": " + job.status + (p.framesTotal ? " (" + (p.framesDone || 0) + "/" + p.framesTotal + " frames)" : "") + "…");
    if (job.status === "done" || job.status === "failed") break;
    // Every poll counts toward the key's rate limit: wait what the job's
    // last answer said (2 s before the first look).
    await sleep(wait * 1000);
    const r = await fetch("/v1/jobs/" + job.id, { headers: auth });
    if (!r.ok) { status(await failure(r), true); return; }
    wait = Number(r.headers.get("Retry-After")) || 2;
    job = await r.json();
  }
  if (job.status === "failed") {
    status("Job " + job.id + " failed, uncharged: " + (job.code || "") + ": " + (job.error || ""), true);
    return;
  }
  const r = await fetch(job.resultUrl, { headers: auth });
  if (!r.ok) { status(await failure(r), true); return; }
  const blob = await r.blob();
  showResult("video-blur", blob, "video/mp4", {
    charged: String(job.credits), timing: Math.round(performance.now() - started) + " ms",
    requestId: r.headers.get("X-Request-Id"),
  });
  status("Done: video/mp4, " + Math.round(blob.size / 1024) + " KB.");
}

$("form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const key = $("key").value.trim();
  sessionStorage.setItem("carphoto.key", key);
  const op = $("op").value;
  const url = isVideo() ? "" : $("imageUrl").value.trim();
  clearResult();
  if (!photo && !url) { status(isVideo() ? "Choose or drop a video first." : "Choose or drop a photo, or give its URL, first.", true); return; }
  const body = new FormData();
  if (url) body.append("imageUrl", url);
  else body.append(isVideo() ? "video" : "image", photo, photo.name);
  fields(op, body);

  $("run").disabled = true;
  status("Processing…");
  const started = performance.now();
  try {
    if (isVideo()) { await runVideo(key, body, started); return; }
    const res = await fetch("/v1/" + op, { method: "POST", headers: { Authorization: "Bearer " + key }, body });
    const h = (name) => res.headers.get(name);
    $("requestId").textContent = h("X-Request-Id") || "–";
    if (!res.ok) { status(await failure(res), true); return; }
    const blob = await res.blob();
    const type = (h("Content-Type") || "").split(";")[0];
    showResult(op, blob, type, {
      plates: h("X-Plates-Found"), charged: h("X-Credits-Charged"), remaining: h("X-Credits-Remaining"),
      // car-shadow and car-cutout: the sides that cut the car off, and its
      // scale on a backdrop.
      truncated: h("X-Car-Truncated") || ((op === "car-shadow" || op === "car-cutout") ? "none" : null),
      scaleUsed: h("X-Car-Scale"),
      timing: Math.round(performance.now() - started) + " ms" + (h("Server-Timing") ? " (" + h("Server-Timing") + ")" : ""),
      requestId: h("X-Request-Id"),
    });
    status("Done: " + type + ", " + Math.round(blob.size / 1024) + " KB.");
  } catch (err) {
    status("The call failed: " + err.message, true);
  } finally {
    $("run").disabled = false;
  }
});
