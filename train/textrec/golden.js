// Writes the text recogniser's parity data: for each crop NAME.png given
// (48 px high, as ppocr_rec.py --golden cut it), onnxruntime's output on the
// original ONNX graph, NAME.json: at each step the five likeliest classes and
// their probabilities, and the dictionary's reading (greedy CTC).
//
//   cd /tmp/scratch && npm install --ignore-scripts onnxruntime-node pngjs
//   node /path/to/train/textrec/golden.js /tmp/package/assets/ch_PP-OCRv4_rec_infer.onnx \
//       /tmp/package/assets/ppocr_keys_v1.txt imageops/textrec/testdata/*.png
//
// (run with NODE_PATH=/tmp/scratch/node_modules from the repository.)
const fs = require('fs');
const ort = require('onnxruntime-node');
const { PNG } = require('pngjs');

(async () => {
  const [model, keysFile, ...crops] = process.argv.slice(2);
  const keys = fs.readFileSync(keysFile, 'utf8').split('\n');
  const label = (c) => (c >= 1 && c <= keys.length ? keys[c - 1] : ' ');
  const s = await ort.InferenceSession.create(model, { intraOpNumThreads: 1 });
  for (const f of crops) {
    const png = PNG.sync.read(fs.readFileSync(f));
    const { width: w, height: h, data } = png;
    const x = new Float32Array(3 * h * w);
    for (let i = 0; i < h * w; i++) {
      // Planes blue, green, red, each v/127.5 − 1 ((v/255 − 0.5)/0.5).
      x[i] = data[4 * i + 2] / 127.5 - 1;
      x[h * w + i] = data[4 * i + 1] / 127.5 - 1;
      x[2 * h * w + i] = data[4 * i] / 127.5 - 1;
    }
    const out = (await s.run({ x: new ort.Tensor('float32', x, [1, 3, h, w]) }))[s.outputNames[0]];
    const [, t, n] = out.dims;
    const steps = [];
    let text = '', prev = 0;
    for (let i = 0; i < t; i++) {
      const row = Array.from(out.data.subarray(i * n, (i + 1) * n));
      const top = row.map((p, c) => [p, c]).sort((a, b) => b[0] - a[0]).slice(0, 5);
      steps.push({ classes: top.map((e) => e[1]), p: top.map((e) => e[0]) });
      const c = top[0][1];
      if (c !== 0 && c !== prev) text += label(c);
      prev = c;
    }
    fs.writeFileSync(f.replace(/\.png$/, '.json'), JSON.stringify({ width: w, steps, text }) + '\n');
    console.log(`${f}: ${w}x${h}, ${t} steps`);
  }
})();
