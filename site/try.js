// The try-it page's script: it calls the public API like any client.
"use strict";
const $ = (id) => document.getElementById(id);
const extensions = { "image/jpeg": "jpg", "image/png": "png", "image/webp": "webp" };
let photo = null, originalURL = null, resultURL = null;

$("key").value = sessionStorage.getItem("carphoto.key") || "";
$("key").addEventListener("change", () => sessionStorage.setItem("carphoto.key", $("key").value.trim()));

function showOptions() {
  const op = $("op").value;
  for (const el of document.querySelectorAll(".opt")) {
    el.hidden = !el.dataset.ops.split(" ").includes(op);
  }
}
$("op").addEventListener("change", showOptions);
showOptions();

function usePhoto(file) {
  if (!file) return;
  photo = file;
  if (originalURL) URL.revokeObjectURL(originalURL);
  originalURL = URL.createObjectURL(file);
  $("original").src = originalURL;
  $("original").alt = file.name;
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

$("form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const key = $("key").value.trim();
  sessionStorage.setItem("carphoto.key", key);
  if (!photo) { status("Choose or drop a photo first.", true); return; }
  const op = $("op").value;
  const body = new FormData();
  body.append("image", photo, photo.name);
  if (op === "blur-plates" && $("style").value) body.append("style", $("style").value);
  if (op === "plate-logo") {
    if ($("logo").files[0]) body.append("logo", $("logo").files[0], $("logo").files[0].name);
    if ($("logoAssetId").value.trim()) body.append("logoAssetId", $("logoAssetId").value.trim());
  }
  if (op === "car-shadow" && $("reflection").checked) body.append("reflection", "true");
  if (op !== "car-shadow" && $("requirePlate").checked) body.append("requirePlate", "true");
  if ($("format").value) body.append("format", $("format").value);

  $("run").disabled = true;
  status("Processing…");
  const started = performance.now();
  try {
    const res = await fetch("/v1/" + op, { method: "POST", headers: { Authorization: "Bearer " + key }, body });
    const h = (name) => res.headers.get(name);
    $("requestId").textContent = h("X-Request-Id") || "–";
    if (!res.ok) {
      let msg = res.status + " " + res.statusText;
      try { const err = await res.json(); msg = res.status + " " + err.code + ": " + err.error; } catch (_) {}
      if (h("Retry-After")) msg += " (retry in " + h("Retry-After") + " s)";
      status(msg, true);
      return;
    }
    const blob = await res.blob();
    if (resultURL) URL.revokeObjectURL(resultURL);
    resultURL = URL.createObjectURL(blob);
    $("result").src = resultURL;
    $("result").alt = op + " result";
    const type = (h("Content-Type") || "").split(";")[0];
    const base = photo.name.replace(/\.[^.]*$/, "") || "photo";
    $("download").href = resultURL;
    $("download").download = base + "-" + op + "." + (extensions[type] || "bin");
    $("download").hidden = false;
    $("plates").textContent = h("X-Plates-Found") ?? "–";
    $("charged").textContent = h("X-Credits-Charged") ?? "–";
    $("remaining").textContent = h("X-Credits-Remaining") ?? "–";
    $("timing").textContent = Math.round(performance.now() - started) + " ms" +
      (h("Server-Timing") ? " (" + h("Server-Timing") + ")" : "");
    $("facts").hidden = false;
    status("Done: " + type + ", " + Math.round(blob.size / 1024) + " KB.");
  } catch (err) {
    status("The call failed: " + err.message, true);
  } finally {
    $("run").disabled = false;
  }
});
