/**
 * WAL checkpoints of the embedded database on a thread of their own.
 *
 * SQLite's automatic checkpoint runs inside whichever commit crosses its threshold, on
 * the event loop, and with `synchronous = NORMAL` it also syncs the files twice: a stall
 * of milliseconds for one unlucky request, and under load the largest share of what a
 * commit costs. So a worker thread with a connection of its own runs PASSIVE checkpoints
 * (which never block readers or writers) at an interval, and the main connection's
 * automatic checkpoint is kept only as a backstop at a much larger WAL: the WAL is
 * rewritten from its start only after a checkpoint that caught up with every commit,
 * which a thread racing a steady stream of commits may never do, so without the backstop
 * the file could grow without bound. Its rare runs are cheap, as the thread has already
 * copied nearly every frame. Should the thread die or keep failing, automatic
 * checkpoints go back to SQLite's default.
 */
import { Worker } from 'node:worker_threads';
import type * as WorkerThreads from 'node:worker_threads';
import type SQLite from 'better-sqlite3';
import { sqliteDriver } from './sqlite-driver.js';

export interface CheckpointReport {
  /** Frames in the WAL, and how many of them are now in the database file. */
  walFrames: number;
  checkpointedFrames: number;
}

/** Runs inside the worker (stringified: only its own requires and workerData). */
function checkpointerMain(): void {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { parentPort, workerData } = require('node:worker_threads') as typeof WorkerThreads;
  const Database = require(workerData.sqlitePath) as typeof SQLite;
  /* eslint-enable @typescript-eslint/no-require-imports */
  const db = new Database(workerData.file);
  db.pragma('busy_timeout = 1000');
  const checkpoint = () => {
    try {
      const [row] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ busy: number; log: number; checkpointed: number }>;
      parentPort!.postMessage({ walFrames: row!.log, checkpointedFrames: row!.checkpointed });
    } catch (err) {
      // Busy or locked: the next round tries again.
      parentPort!.postMessage({ error: String(err) });
    }
  };
  const timer = setInterval(checkpoint, workerData.intervalMs);
  parentPort!.on('message', (message: string) => {
    if (message !== 'close') return;
    clearInterval(timer);
    db.close();
    parentPort!.close();
  });
}

/** SQLite's default automatic checkpoint, in WAL frames (pages). */
const DEFAULT_AUTOCHECKPOINT = 1000;
/** The backstop while the thread runs: about 40 MB of WAL with 4 KiB pages. */
const BACKSTOP_AUTOCHECKPOINT = 10_000;
/** Consecutive failed rounds after which the thread is given up. */
const MAX_FAILED_ROUNDS = 20;

export class SqliteCheckpointer {
  readonly #worker: Worker;
  #closing = false;
  #failedRounds = 0;

  /**
   * Starts checkpointing `file` (opened by `sqlite` in WAL mode) every `intervalMs`;
   * `onReport` hears every round (tests, metrics).
   */
  constructor(
    private readonly sqlite: SQLite.Database,
    file: string,
    intervalMs: number,
    onReport: (report: CheckpointReport) => void = () => {},
  ) {
    sqlite.pragma(`wal_autocheckpoint = ${BACKSTOP_AUTOCHECKPOINT}`);
    const sqlitePath = sqliteDriver().modulePath;
    // esbuild's keepNames (tsx, vitest) may wrap functions in __name(); define it in the worker.
    const source = `const __name = (f) => f;\n(${checkpointerMain.toString()})();`;
    this.#worker = new Worker(source, { eval: true, workerData: { sqlitePath, file, intervalMs } });
    this.#worker.unref();
    this.#worker.on('message', (message: CheckpointReport | { error: string }) => {
      if ('error' in message) {
        if (++this.#failedRounds >= MAX_FAILED_ROUNDS) void this.close().then(() => this.#fallBack());
        return;
      }
      this.#failedRounds = 0;
      onReport(message);
    });
    this.#worker.on('error', () => this.#fallBack());
    this.#worker.on('exit', () => {
      if (!this.#closing) this.#fallBack();
    });
  }

  /** Stops the thread (before the main connection closes, which checkpoints one last time). */
  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    // Referenced while it winds down: an unreferenced thread would let the process exit
    // in the middle of this await, before the caller's own work after close() has run.
    this.#worker.ref();
    const exited = new Promise((resolve) => this.#worker.once('exit', resolve));
    this.#worker.postMessage('close');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 2_000)))]);
    clearTimeout(timer);
    await this.#worker.terminate();
  }

  #fallBack(): void {
    this.#closing = true;
    if (this.sqlite.open) this.sqlite.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT}`);
  }
}
