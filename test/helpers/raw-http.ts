/**
 * Hand-written HTTP/1.1 over `net.connect`, for what fetch cannot send: malformed request
 * lines and headers, bodies that pause, bodies larger than the server will read.
 */
import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Map<string, string>;
  body: string;
  /** The socket failed (e.g. ECONNRESET) before the response was complete. */
  socketError: string | null;
}

/** Parses the first response out of what the socket delivered (`null` when none arrived). */
export function parseResponse(text: string): Omit<RawResponse, 'socketError'> | null {
  const headEnd = text.indexOf('\r\n\r\n');
  if (headEnd < 0) return null;
  const [statusLine, ...lines] = text.slice(0, headEnd).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1]);
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  let body = text.slice(headEnd + 4);
  const length = headers.get('content-length');
  if (length !== undefined) body = body.slice(0, Number(length));
  return { status, headers, body };
}

export interface RawRequestOptions {
  /** Written after `head`, piece by piece, `gapMs` apart. */
  pieces?: Array<string | Buffer>;
  gapMs?: number;
}

/** Sends `head` (then `pieces`) and resolves with the response once the server closes. */
export function rawRequest(port: number, head: string | Buffer, options: RawRequestOptions = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let socketError: string | null = null;
    let timer: NodeJS.Timeout | undefined;
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => (socketError = err.code ?? err.message));
    socket.on('close', () => {
      clearTimeout(timer);
      const parsed = parseResponse(Buffer.concat(received).toString('latin1'));
      if (!parsed) reject(new Error(`no response (socket: ${socketError ?? 'closed'})`));
      else resolve({ ...parsed, socketError });
    });
    socket.write(head);
    const pieces = [...(options.pieces ?? [])];
    const next = () => {
      const piece = pieces.shift();
      if (piece === undefined || socket.destroyed || socket.writableEnded) return;
      socket.write(piece);
      timer = setTimeout(next, options.gapMs ?? 0);
    };
    timer = setTimeout(next, options.gapMs ?? 0);
  });
}

/**
 * Sends a whole `size`-byte body as fast as the server takes it (with Content-Length,
 * or chunked) while reading; resolves with what came back, or the socket error if no
 * complete response did.
 */
export function rawOversizeUpload(port: number, head: string, size: number, chunked: boolean): Promise<RawResponse> {
  return new Promise((resolve) => {
    // Half-open: like clients that write the whole body before reading, it keeps sending
    // after the server's answer and FIN, then ends its side.
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const received: Buffer[] = [];
    let socketError: string | null = null;
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => (socketError = err.code ?? err.message));
    socket.on('close', () => {
      const parsed = parseResponse(Buffer.concat(received).toString('latin1'));
      resolve(parsed ? { ...parsed, socketError } : { status: 0, headers: new Map(), body: '', socketError });
    });
    socket.write(head + (chunked ? 'transfer-encoding: chunked\r\n\r\n' : `content-length: ${size}\r\n\r\n`));
    const piece = Buffer.alloc(64 * 1024, 0x20);
    const frame = chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece;
    let sent = 0;
    const pump = () => {
      while (sent < size && !socket.destroyed) {
        sent += piece.length;
        if (!socket.write(frame)) {
          socket.once('drain', pump);
          return;
        }
      }
      if (chunked && !socket.destroyed) socket.write('0\r\n\r\n');
      if (!socket.destroyed) socket.end();
    };
    pump();
  });
}
