/**
 * The Dockerfile's build, checked without Docker (these machines have no engine). Always:
 * both stages run deploy/build.sh, every file they COPY exists, the image runs as a non-root
 * user. With SLUICE_TEST_DOCKER_BUILD=1: the two stages are run for real, each in a clean
 * temporary directory holding only what the Dockerfile copies, and the built server starts
 * and answers /readyz. That run installs the packages twice, all of them and then the
 * production ones (from npm's cache where it can, npm_config_prefer_offline=true, from the
 * registry for the rest), and compiles better-sqlite3: several minutes on two cores and not
 * network-free, so it is opt-in.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/databases.js';

const REPO = path.resolve(import.meta.dirname, '../../..');
const DOCKERFILE = readFileSync(path.join(REPO, 'Dockerfile'), 'utf8');

interface Stage {
  name: string;
  copies: { from: string | null; sources: string[]; target: string }[];
  runs: string[];
  user: string | null;
}

function stagesOf(dockerfile: string): Stage[] {
  const stages: Stage[] = [];
  const logical = dockerfile.replace(/\\\n\s*/g, ' ').split('\n').map((l) => l.trim());
  for (const line of logical) {
    if (line === '' || line.startsWith('#')) continue;
    const [instruction, ...rest] = line.split(/\s+/);
    const args = rest.join(' ');
    if (instruction === 'FROM') stages.push({ name: /\bAS\s+(\S+)/i.exec(args)?.[1] ?? '', copies: [], runs: [], user: null });
    const stage = stages.at(-1)!;
    if (instruction === 'COPY') {
      const words = rest.filter((w) => !w.startsWith('--') || w.startsWith('--from='));
      const from = words[0]?.startsWith('--from=') ? words.shift()!.slice('--from='.length) : null;
      stage.copies.push({ from, sources: words.slice(0, -1), target: words.at(-1)! });
    }
    if (instruction === 'RUN') stage.runs.push(args);
    if (instruction === 'USER') stage.user = args;
  }
  return stages;
}

const stages = stagesOf(DOCKERFILE);
const build = stages.find((s) => s.name === 'build')!;
const runtime = stages.at(-1)!;

describe('Dockerfile', () => {
  it('has a build stage and a runtime stage, each running its step of deploy/build.sh', () => {
    expect(stages.map((s) => s.name)).toEqual(['build', 'runtime']);
    expect(build.runs.some((r) => r === 'sh deploy/build.sh compile')).toBe(true);
    expect(runtime.runs.some((r) => r.startsWith('sh deploy/build.sh runtime'))).toBe(true);
    expect(runtime.copies).toContainEqual({ from: 'build', sources: ['/app/dist'], target: 'dist' });
  });

  it('copies only files that exist in the repository', () => {
    for (const stage of stages) {
      for (const copy of stage.copies.filter((c) => c.from === null)) {
        for (const source of copy.sources) expect(existsSync(path.join(REPO, source)), `${stage.name}: COPY ${source}`).toBe(true);
      }
    }
  });

  it('runs as the unprivileged node user, with production dependencies only', () => {
    expect(runtime.user).toBe('node');
    const script = readFileSync(path.join(REPO, 'deploy/build.sh'), 'utf8');
    expect(script).toMatch(/runtime\)\n\s*npm ci --omit=dev/);
    // onnxruntime-node's other platforms' binaries go right after the install, as `prepare` does after npm ci.
    expect(script).toMatch(/runtime\)\n\s*npm ci --omit=dev[^\n]*\n(\s*#[^\n]*\n)*\s*node deploy\/prune-onnx-binaries\.mjs\n/);
  });

  it('deploy/build.sh refuses an unknown stage (exit 64, usage on stderr)', () => {
    const result = spawnSync('sh', [path.join(REPO, 'deploy/build.sh'), 'bake'], { encoding: 'utf8' });
    expect(result.status).toBe(64);
    expect(result.stderr).toBe('usage: deploy/build.sh compile|runtime\n');
  });
});

/** A clean directory holding exactly what the stage's COPY lines bring in from the repository. */
function stageDirectory(stage: Stage): string {
  const dir = tempDir('sluice-docker-stage-');
  for (const copy of stage.copies.filter((c) => c.from === null)) {
    for (const source of copy.sources) {
      const target = copy.sources.length > 1 || copy.target.endsWith('/') ? path.join(dir, copy.target, path.basename(source)) : path.join(dir, copy.target);
      cpSync(path.join(REPO, source), target, { recursive: true });
    }
  }
  return dir;
}

function runStage(dir: string, step: string): void {
  const result = spawnSync('sh', ['deploy/build.sh', step], {
    cwd: dir,
    env: { ...process.env, npm_config_prefer_offline: 'true' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  expect(result.status, `deploy/build.sh ${step}:\n${result.stdout}\n${result.stderr}`).toBe(0);
}

describe.runIf(process.env.SLUICE_TEST_DOCKER_BUILD === '1')('the Dockerfile build, outside Docker', () => {
  it('compiles in one clean directory, installs production dependencies in another, and the result serves', async () => {
    const buildDir = stageDirectory(build);
    runStage(buildDir, 'compile');
    expect(existsSync(path.join(buildDir, 'dist/src/main.js'))).toBe(true);

    const appDir = stageDirectory(runtime);
    runStage(appDir, 'runtime');
    cpSync(path.join(buildDir, 'dist'), path.join(appDir, 'dist'), { recursive: true });
    expect(existsSync(path.join(appDir, 'node_modules/fastify'))).toBe(true);
    expect(existsSync(path.join(appDir, 'node_modules/vitest'))).toBe(false);
    expect(existsSync(path.join(appDir, 'node_modules/node-llama-cpp'))).toBe(false);
    expect(readdirSync(path.join(appDir, 'node_modules/onnxruntime-node/bin/napi-v6'))).toEqual([process.platform]);

    const dataDir = tempDir();
    const child = spawn(process.execPath, ['dist/src/main.js'], {
      cwd: appDir,
      env: { PATH: process.env.PATH, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', SLUICE_WORKERS: 'off' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const baseUrl = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout! }).on('line', (line) => {
          const found = /(http:\/\/127\.0\.0\.1:\d+)/.exec(line);
          if (found) resolve(found[1]!);
        });
        child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
      });
      const ready = await fetch(`${baseUrl}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', blob_store: 'ok' } });
    } finally {
      child.kill('SIGTERM');
    }
  }, 20 * 60_000);
});
