/**
 * The Hugging Face Hub, as far as `sluice models pull` needs it: list a repository's
 * files with sizes and hashes, and download one file resumably (HTTP Range into a
 * `.part` file), verified by size and hash (sha256 for LFS files, the git blob sha1
 * otherwise), then renamed into place atomically.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, stat, truncate, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { Agent, fetch, type Response } from 'undici';

export interface HubFile {
  /** Path inside the repository, `/`-separated. */
  path: string;
  size: number;
  /** sha256 of the content, for LFS files. */
  sha256: string | null;
  /** git blob sha1, for files stored in git itself. */
  gitOid: string | null;
}

export class HubError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HubError';
  }
}

const DOWNLOAD_ATTEMPTS = 4;

interface TreeEntry {
  type: string;
  path: string;
  size?: number;
  oid?: string;
  lfs?: { oid?: string; sha256?: string; size?: number };
}

function nextLink(header: string | null): string | null {
  const match = header ? /<([^>]+)>\s*;\s*rel="next"/.exec(header) : null;
  return match ? match[1]! : null;
}

const encodePath = (p: string): string => p.split('/').map(encodeURIComponent).join('/');

export interface HubTimeouts {
  /** Time to establish a connection. */
  connectTimeoutMs: number;
  /** Longest silence while waiting for headers or body bytes. */
  idleTimeoutMs: number;
}

const UNREACHABLE_HINT = 'check the network, or set HF_ENDPOINT to a reachable Hub mirror';

/** Network failures as one line: what failed, where, what to try. */
function transportError(what: string, endpoint: string, err: unknown): HubError {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code ?? (err as { code?: string }).code;
  const why =
    code === 'UND_ERR_CONNECT_TIMEOUT'
      ? 'the connection timed out'
      : code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT'
        ? 'it stopped answering'
        : (code ?? cause?.message ?? (err as Error).message);
  return new HubError(`${what} failed: cannot reach ${endpoint} (${why}); ${UNREACHABLE_HINT}`);
}

export class HubClient {
  readonly #dispatcher: Agent;

  constructor(
    private readonly endpoint: string,
    private readonly token: string | null,
    timeouts: HubTimeouts = { connectTimeoutMs: 10_000, idleTimeoutMs: 30_000 },
  ) {
    this.#dispatcher = new Agent({
      connect: { timeout: timeouts.connectTimeoutMs },
      headersTimeout: timeouts.idleTimeoutMs,
      bodyTimeout: timeouts.idleTimeoutMs,
    });
  }

  async close(): Promise<void> {
    await this.#dispatcher.close();
  }

  /** Every file of `repo` at `revision`, from the tree API (following its pagination). */
  async listFiles(repo: string, revision: string): Promise<HubFile[]> {
    const files: HubFile[] = [];
    let url: string | null = `${this.endpoint}/api/models/${repo}/tree/${encodeURIComponent(revision)}?recursive=true`;
    while (url) {
      const response = await this.#get(url, {}, `Listing ${repo}`);
      if (response.status === 404) throw new HubError(`Repository ${repo} (revision ${revision}) was not found on ${this.endpoint}`);
      if (response.status === 401 || response.status === 403) {
        throw new HubError(`${this.endpoint} refused access to ${repo} (status ${response.status}); set HF_TOKEN for gated or private repositories`);
      }
      if (!response.ok) throw new HubError(`Listing ${repo} failed: status ${response.status}`);
      for (const entry of (await response.json()) as TreeEntry[]) {
        if (entry.type !== 'file') continue;
        files.push({
          path: entry.path,
          size: entry.lfs?.size ?? entry.size ?? 0,
          sha256: entry.lfs?.oid ?? entry.lfs?.sha256 ?? null,
          gitOid: entry.lfs ? null : (entry.oid ?? null),
        });
      }
      const next = nextLink(response.headers.get('link'));
      url = next ? new URL(next, this.endpoint).href : null;
    }
    return files;
  }

  /**
   * Downloads `file` to `dest` unless `dest` already has the expected size. Interrupted
   * transfers resume from the `.part` file, within this call and across runs.
   * `onProgress` receives the bytes of this file on disk so far, as they grow.
   */
  async download(repo: string, revision: string, file: HubFile, dest: string, onProgress: (bytes: number) => void): Promise<'downloaded' | 'present'> {
    const existing = await stat(dest).catch(() => null);
    if (existing?.isFile() && existing.size === file.size) {
      onProgress(file.size);
      return 'present';
    }
    await mkdir(path.dirname(dest), { recursive: true });
    const part = `${dest}.part`;
    const url = `${this.endpoint}/${repo}/resolve/${encodeURIComponent(revision)}/${encodePath(file.path)}`;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#fetchInto(url, file, part, onProgress);
        break;
      } catch (err) {
        if (err instanceof HubError) throw err;
        if (attempt >= DOWNLOAD_ATTEMPTS) throw transportError(`Downloading ${file.path}`, this.endpoint, err);
        // Network trouble: the next attempt resumes from what reached the disk.
      }
    }
    await verify(file, part);
    await rename(part, dest);
    return 'downloaded';
  }

  async #fetchInto(url: string, file: HubFile, part: string, onProgress: (bytes: number) => void): Promise<void> {
    let have = (await stat(part).catch(() => null))?.size ?? 0;
    if (have > file.size) {
      await truncate(part, 0);
      have = 0;
    }
    if (have === file.size) {
      onProgress(have);
      return;
    }
    const response = await this.#get(url, have > 0 ? { range: `bytes=${have}-` } : {}, null);
    if (response.status === 200 && have > 0) have = 0; // the server ignored the range: start over
    else if (response.status !== 200 && response.status !== 206) {
      await response.body?.cancel();
      throw new HubError(`Downloading ${file.path} failed: status ${response.status}`);
    }
    if (!response.body) throw new HubError(`Downloading ${file.path} failed: empty response`);
    let written = have;
    onProgress(written);
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        written += chunk.length;
        onProgress(written);
        done(null, chunk);
      },
    });
    const body = Readable.fromWeb(response.body as unknown as WebReadableStream<Uint8Array>);
    await pipeline(body, counter, createWriteStream(part, { flags: have > 0 ? 'a' : 'w' }));
  }

  /** A GET with the timeouts; `what` names a failure as a HubError (null: the caller retries raw errors). */
  async #get(url: string, headers: Record<string, string>, what: string | null): Promise<Response> {
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    try {
      return await fetch(url, { headers, redirect: 'follow', dispatcher: this.#dispatcher });
    } catch (err) {
      throw what ? transportError(what, this.endpoint, err) : err;
    }
  }
}

function hasherFor(file: HubFile): { hash: Hash; expected: string; algorithm: string } | null {
  if (file.sha256) return { hash: createHash('sha256'), expected: file.sha256, algorithm: 'sha256' };
  if (file.gitOid) {
    const hash = createHash('sha1');
    hash.update(`blob ${file.size}\0`);
    return { hash, expected: file.gitOid, algorithm: 'git sha1' };
  }
  return null;
}

/** Size and content hash of a finished `.part`; a mismatch deletes it (it cannot be resumed). */
async function verify(file: HubFile, part: string): Promise<void> {
  const size = (await stat(part)).size;
  if (size !== file.size) {
    await unlink(part).catch(() => {});
    throw new HubError(`${file.path}: expected ${file.size} bytes, got ${size}`);
  }
  const hasher = hasherFor(file);
  if (!hasher) return;
  for await (const chunk of createReadStream(part)) hasher.hash.update(chunk as Buffer);
  const actual = hasher.hash.digest('hex');
  if (actual !== hasher.expected) {
    await unlink(part).catch(() => {});
    throw new HubError(`${file.path}: ${hasher.algorithm} mismatch (expected ${hasher.expected}, got ${actual}); the download was discarded`);
  }
}
