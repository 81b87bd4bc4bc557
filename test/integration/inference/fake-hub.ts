/**
 * A tiny Hugging Face Hub on loopback: the tree API (paginated, 2 entries a page) and
 * `resolve` downloads with HTTP Range, behind a redirect like the real CDN. Faults can be
 * injected per file: cut the connection after N bytes, or serve corrupted bytes.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeHubFile {
  path: string;
  content: Buffer;
  /** Stored in LFS (the tree API gives its sha256); otherwise a git blob (sha1 oid). */
  lfs: boolean;
}

export interface FakeHubRequest {
  url: string;
  range: string | undefined;
  authorization: string | undefined;
}

export interface FakeHub {
  endpoint: string;
  requests: FakeHubRequest[];
  /** The next download of `path` sends only `bytes` bytes, then drops the connection. */
  cutAfter(path: string, bytes: number): void;
  /** Every download of `path` serves bytes that do not match its hash. */
  corrupt(path: string): void;
  /** Forgets requests and injected faults. */
  reset(): void;
  close(): Promise<void>;
}

export const gitBlobSha1 = (content: Buffer): string =>
  createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');

const PAGE = 2;

export async function startFakeHub(repos: Record<string, FakeHubFile[]>): Promise<FakeHub> {
  const requests: FakeHubRequest[] = [];
  const cuts = new Map<string, number>();
  const corrupted = new Set<string>();

  function tree(res: http.ServerResponse, repo: string, cursor: number, base: string) {
    const files = repos[repo]!;
    const entries = files.slice(cursor, cursor + PAGE).map((f) => ({
      type: 'file',
      path: f.path,
      size: f.lfs ? 134 : f.content.length,
      oid: f.lfs ? 'pointer-blob-oid' : gitBlobSha1(f.content),
      ...(f.lfs ? { lfs: { oid: createHash('sha256').update(f.content).digest('hex'), size: f.content.length, pointerSize: 134 } } : {}),
    }));
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (cursor + PAGE < files.length) headers.link = `<${base}/api/models/${repo}/tree/main?recursive=true&cursor=${cursor + PAGE}>; rel="next"`;
    if (cursor === 0) entries.push({ type: 'directory', path: 'onnx', size: 0, oid: 'dir' } as never);
    res.writeHead(200, headers);
    res.end(JSON.stringify(entries));
  }

  function serveFile(req: http.IncomingMessage, res: http.ServerResponse, file: FakeHubFile) {
    let content = file.content;
    if (corrupted.has(file.path)) content = Buffer.from(content.map((b) => b ^ 0xff));
    const match = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const start = match ? Number(match[1]) : 0;
    const body = content.subarray(start);
    res.writeHead(match ? 206 : 200, {
      'content-length': String(body.length),
      ...(match ? { 'content-range': `bytes ${start}-${content.length - 1}/${content.length}` } : {}),
    });
    const cut = cuts.get(file.path);
    if (cut !== undefined) {
      cuts.delete(file.path);
      res.write(body.subarray(0, cut), () => setTimeout(() => res.socket?.destroy(), 20));
      return;
    }
    res.end(body);
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://hub');
    requests.push({ url: url.pathname + url.search, range: req.headers.range, authorization: req.headers.authorization });
    const treeMatch = /^\/api\/models\/(.+)\/tree\/main$/.exec(url.pathname);
    if (treeMatch && repos[treeMatch[1]!]) return tree(res, treeMatch[1]!, Number(url.searchParams.get('cursor') ?? 0), endpoint);
    // Like the real Hub: `resolve` redirects LFS files to a CDN host path.
    const resolveMatch = /^\/(.+?\/.+?)\/resolve\/main\/(.+)$/.exec(url.pathname);
    if (resolveMatch && repos[resolveMatch[1]!]) {
      res.writeHead(302, { location: `/cdn/${resolveMatch[1]}/${resolveMatch[2]}` });
      return res.end();
    }
    const cdnMatch = /^\/cdn\/(.+?\/.+?)\/(.+)$/.exec(url.pathname);
    const file = cdnMatch ? repos[cdnMatch[1]!]?.find((f) => f.path === decodeURIComponent(cdnMatch[2]!)) : undefined;
    if (file) return serveFile(req, res, file);
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'Repository not found' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    endpoint,
    requests,
    cutAfter: (path, bytes) => cuts.set(path, bytes),
    corrupt: (path) => corrupted.add(path),
    reset() {
      requests.length = 0;
      cuts.clear();
      corrupted.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
