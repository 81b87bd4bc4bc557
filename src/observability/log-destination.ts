/**
 * How the server's log reaches its file descriptor (stdout). pino's default writes each
 * line with its own synchronous write(2), and the access log is a line per request: at
 * 1,500 req/s that cost Sluice 11% more CPU per request than with the log off. Lines are
 * gathered instead and written off the main thread (sonic-boom, pino's destination),
 * LOG_BATCH_BYTES at a time, and whatever has gathered every LOG_FLUSH_MS, so a quiet
 * server's lines still appear within that. pino flushes what is gathered synchronously
 * when the process exits (after an uncaught error too); only a kill -9 can lose the last
 * moment's lines.
 *
 * The timed flush is this file's, not sonic-boom's `periodicFlush`: that one flushes on
 * every tick, and with nothing gathered it writes an empty string, so an idle server made
 * ten thread-pool writes a second. Here the timer runs only while bytes handed to the
 * destination are unwritten, counted from the lines it is given and the bytes its
 * documented `write` event reports written: a line arms it, and a tick that finds nothing
 * unwritten does not re-arm it, so an idle server's main thread is not woken for its log.
 * A flush asked for while a write is under way does nothing, and the count stays above
 * zero, so the next tick asks again.
 */
import pino from 'pino';

export const LOG_BATCH_BYTES = 4096;
export const LOG_FLUSH_MS = 100;

export type LogDestination = ReturnType<typeof pino.destination>;

export function gatheringLogDestination(fd: number): LogDestination {
  const destination = pino.destination({ dest: fd, sync: false, minLength: LOG_BATCH_BYTES });
  let unwritten = 0;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  const tick = () => {
    timer = null;
    if (unwritten <= 0) return;
    try {
      destination.flush();
    } catch {
      // Destroyed (its stream ended): nothing more can be written, and 'close' stops the timer.
    }
    arm();
  };
  const arm = () => {
    if (timer !== null || closed) return;
    timer = setTimeout(tick, LOG_FLUSH_MS);
    timer.unref();
  };
  const write = destination.write.bind(destination);
  destination.write = (line: string) => {
    unwritten += Buffer.byteLength(line);
    arm();
    return write(line);
  };
  destination.on('write', (bytes: number) => {
    unwritten -= bytes;
  });
  destination.once('close', () => {
    closed = true;
    if (timer !== null) clearTimeout(timer);
  });
  return destination;
}
