#!/usr/bin/env node
// onnxruntime-node ships its native binaries for every platform in one package (macOS,
// Windows and Linux, x64 and arm64: about 290 MB, of which one machine loads one folder),
// and offers no install option that takes only one. This deletes the other platforms'
// folders under onnxruntime-node/bin/napi-v*/<platform>/<arch>, keeping this machine's,
// which is the one onnxruntime-node loads (bin/napi-v*/${process.platform}/${process.arch}).
// `npm run prepare` runs it after `npm ci`, and deploy/build.sh runs it after its
// `npm ci --ignore-scripts`. Usage: node deploy/prune-onnx-binaries.mjs [node_modules dir]
// (default: the repository's). Plain JavaScript, no dependencies: it runs where the dev
// dependencies are not installed.
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';

const nodeModules = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..', 'node_modules'));
const bin = path.join(nodeModules, 'onnxruntime-node', 'bin');

const say = (line) => process.stderr.write(`prune-onnx-binaries: ${line}\n`);
const dirs = (dir) => readdirSync(dir).filter((name) => statSync(path.join(dir, name)).isDirectory());

if (!existsSync(bin)) {
  say("onnxruntime-node is not installed here; nothing to prune");
  process.exit(0);
}
const kept = path.join(process.platform, process.arch);
let removed = 0;
for (const napi of dirs(bin).filter((name) => /^napi-v\d+$/.test(name))) {
  const napiDir = path.join(bin, napi);
  if (!existsSync(path.join(napiDir, kept))) {
    // Never leave a machine without its binary: a package with no build for it stays whole.
    say(`onnxruntime-node has no ${napi}/${kept}; nothing pruned`);
    process.exit(0);
  }
  for (const platform of dirs(napiDir)) {
    for (const arch of dirs(path.join(napiDir, platform))) {
      if (path.join(platform, arch) === kept) continue;
      rmSync(path.join(napiDir, platform, arch), { recursive: true, force: true });
      removed++;
    }
    if (readdirSync(path.join(napiDir, platform)).length === 0) rmSync(path.join(napiDir, platform), { recursive: true, force: true });
  }
}
say(`kept onnxruntime-node's ${kept} binaries, removed ${removed} other platform folder(s)`);
