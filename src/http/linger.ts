/**
 * Closing a connection whose request was not read to the end, without losing the answer.
 *
 * Closing a socket with unread bytes in its receive buffer makes the kernel send a reset,
 * and a client still writing its (refused) body then sees "connection reset" instead of
 * the 413 it was sent. So, as production servers do, the rest of the body is read and
 * discarded up to a bound (bytes and time) before the connection is closed.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** Discarded bytes after which a client still sending is cut off. */
export const DRAIN_MAX_BYTES = 256 * 1024 * 1024;
/** Time after which a client still sending is cut off. */
export const DRAIN_MAX_MS = 10_000;

/** Reads and discards the rest of `request`'s body; resolves at its end or at a bound. */
export function drainBody(request: IncomingMessage): Promise<void> {
  if (request.complete || request.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let discarded = 0;
    const finish = () => {
      clearTimeout(timer);
      request.off('data', onData);
      request.off('end', finish);
      request.off('error', finish);
      request.off('close', finish);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > DRAIN_MAX_BYTES) finish();
    };
    const timer = setTimeout(finish, DRAIN_MAX_MS);
    request.on('data', onData);
    request.once('end', finish);
    request.once('error', finish);
    request.once('close', finish);
    request.resume();
  });
}

/**
 * For a socket whose HTTP stream is broken (parse errors): ends it after what was
 * written and destroys it when the client closes, or after DRAIN_MAX_MS.
 */
export function closeAfterAnswer(socket: Socket): void {
  if (socket.destroyed) return;
  const timer = setTimeout(() => socket.destroy(), DRAIN_MAX_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.once('end', () => socket.destroy());
  socket.end();
}
