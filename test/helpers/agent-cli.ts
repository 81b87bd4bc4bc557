/**
 * The real agent CLIs, installed on demand into a cache folder (as .ci/node.sh keeps its
 * Node builds), never into the project's own node_modules: Claude Code
 * (`@anthropic-ai/claude-code`) and Codex (`@openai/codex`), each at a pinned version.
 * Both packages ship a native binary in a platform package from the npm registry, so the
 * install needs the registry and nothing else; a later test finds the cached copy.
 *
 *   const claude = await agentCli('claude-code');   // → absolute path of its binary
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export type AgentCliName = 'claude-code' | 'codex';

interface AgentCliPackage {
  pkg: string;
  version: string;
  /** The binary's name under node_modules/.bin. */
  bin: string;
}

/** The versions the tests pin: the agent issue's Claude Code 2.1.x and Codex 0.169. */
export const AGENT_CLIS: Readonly<Record<AgentCliName, AgentCliPackage>> = {
  'claude-code': { pkg: '@anthropic-ai/claude-code', version: '2.1.337', bin: 'claude' },
  codex: { pkg: '@openai/codex', version: '0.169.1', bin: 'codex' },
};

export const agentCliCache = (): string =>
  process.env.SLUICE_AGENT_CLI_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'sluice-ci', 'agent-clis');

const installing = new Map<AgentCliName, Promise<string>>();

/** The path of the CLI's binary, installing it into the cache first when it is not there. */
export function agentCli(name: AgentCliName): Promise<string> {
  let pending = installing.get(name);
  if (!pending) {
    pending = install(name);
    installing.set(name, pending);
  }
  return pending;
}

async function install(name: AgentCliName): Promise<string> {
  const { pkg, version, bin } = AGENT_CLIS[name];
  const folder = join(agentCliCache(), `${name}@${version}`);
  const binary = join(folder, 'node_modules', '.bin', bin);
  if (installedVersion(folder, pkg) === version && existsSync(binary)) return binary;
  // Installed beside the final folder, then renamed: an interrupted install leaves no half folder behind.
  const staging = `${folder}.partial-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  await run('npm', ['install', '--prefix', staging, '--no-save', '--no-audit', '--no-fund', '--loglevel=error', `${pkg}@${version}`], {
    timeout: 300_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  rmSync(folder, { recursive: true, force: true });
  renameSync(staging, folder);
  if (!existsSync(binary)) throw new Error(`${pkg}@${version} installed without its ${bin} binary`);
  return binary;
}

function installedVersion(folder: string, pkg: string): string | undefined {
  try {
    return JSON.parse(readFileSync(join(folder, 'node_modules', pkg, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}
