/**
 * deploy/prune-onnx-binaries.mjs (run by `prepare` and by deploy/build.sh runtime) on a copy
 * of the installed onnxruntime-node, with other platforms' folders beside this machine's:
 * only this machine's folder is left, and onnxruntime-node still loads it and runs a model.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/databases.js';
import { REPO } from '../../helpers/cli.js';
import { buildTestModels } from '../../fixtures/model-builders/index.js';

const SCRIPT = path.join(REPO, 'deploy/prune-onnx-binaries.mjs');
const HERE = `${process.platform}/${process.arch}`;
const OTHERS = ['darwin/arm64', 'darwin/x64', 'linux/arm64', 'linux/x64', 'win32/arm64', 'win32/x64'].filter((p) => p !== HERE);

const prune = (nodeModules: string) => spawnSync(process.execPath, [SCRIPT, nodeModules], { encoding: 'utf8' });

/** The platform/arch folders under bin/napi-v6. */
function platformsIn(napiDir: string): string[] {
  return readdirSync(napiDir).flatMap((platform) => readdirSync(path.join(napiDir, platform)).map((arch) => `${platform}/${arch}`));
}

describe('prune-onnx-binaries', () => {
  let root: string;
  let nodeModules: string;
  let napiDir: string;
  let modelsDir: string;

  beforeAll(() => {
    root = tempDir('sluice-prune-');
    nodeModules = path.join(root, 'node_modules');
    const installed = path.join(REPO, 'node_modules/onnxruntime-node');
    // The package as installed, but only this machine's binaries (the others are large): the
    // other platforms' folders are stand-ins with a file each.
    cpSync(installed, path.join(nodeModules, 'onnxruntime-node'), {
      recursive: true,
      filter: (source) => {
        const rel = path.relative(path.join(installed, 'bin/napi-v6'), source).split(path.sep);
        return rel[0] === '..' || rel.length < 2 || `${rel[0]}/${rel[1]}` === HERE;
      },
    });
    cpSync(path.join(REPO, 'node_modules/onnxruntime-common'), path.join(nodeModules, 'onnxruntime-common'), { recursive: true });
    napiDir = path.join(nodeModules, 'onnxruntime-node/bin/napi-v6');
    for (const other of OTHERS) {
      mkdirSync(path.join(napiDir, other), { recursive: true });
      writeFileSync(path.join(napiDir, other, 'onnxruntime_binding.node'), 'another platform');
    }
    modelsDir = buildTestModels(['all-minilm-l6-v2']);
  });

  afterAll(() => {
    for (const dir of [root, modelsDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("deletes every other platform's folder and keeps this machine's", () => {
    expect(platformsIn(napiDir).sort()).toEqual([...OTHERS, HERE].sort());
    const result = prune(nodeModules);
    expect(result.status).toBe(0);
    expect(result.stderr).toBe(`prune-onnx-binaries: kept onnxruntime-node's ${HERE} binaries, removed ${OTHERS.length} other platform folder(s)\n`);
    expect(platformsIn(napiDir)).toEqual([HERE]);
    expect(readdirSync(path.join(napiDir, HERE))).toContain('onnxruntime_binding.node');
  });

  it('is idempotent: a second run removes nothing', () => {
    const result = prune(nodeModules);
    expect(result.status).toBe(0);
    expect(result.stderr).toBe(`prune-onnx-binaries: kept onnxruntime-node's ${HERE} binaries, removed 0 other platform folder(s)\n`);
  });

  it('onnxruntime-node still loads from the pruned package and runs a model', () => {
    const model = path.join(modelsDir, 'all-minilm-l6-v2/onnx/model.onnx');
    const program = `
      const ort = require('onnxruntime-node');
      ort.InferenceSession.create(process.argv[1]).then((s) => console.log(JSON.stringify({ from: require.resolve('onnxruntime-node'), inputs: s.inputNames })));
    `;
    const result = spawnSync(process.execPath, ['-e', program, model], { cwd: root, encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    const out = JSON.parse(result.stdout) as { from: string; inputs: string[] };
    expect(out.from.startsWith(path.join(nodeModules, 'onnxruntime-node'))).toBe(true);
    expect(out.inputs).toContain('input_ids');
  });

  it('leaves a package without a build for this machine whole, and a tree without onnxruntime-node alone', () => {
    const foreign = path.join(tempDir('sluice-prune-'), 'node_modules');
    mkdirSync(path.join(foreign, 'onnxruntime-node/bin/napi-v6/plan9/mips'), { recursive: true });
    const result = prune(foreign);
    expect(result.status).toBe(0);
    expect(result.stderr).toBe(`prune-onnx-binaries: onnxruntime-node has no napi-v6/${HERE}; nothing pruned\n`);
    expect(platformsIn(path.join(foreign, 'onnxruntime-node/bin/napi-v6'))).toEqual(['plan9/mips']);
    const empty = prune(path.join(tempDir('sluice-prune-'), 'node_modules'));
    expect(empty.status).toBe(0);
    expect(empty.stderr).toBe('prune-onnx-binaries: onnxruntime-node is not installed here; nothing to prune\n');
  });
});
