/**
 * Request loggers made on first use. Fastify gives every request a child of the root
 * logger bound to its request id, and pino builds that child (serializing its bindings)
 * at once, about a microsecond a request; yet a request that succeeds logs nothing through
 * it (its one line is written by request-context.ts, with the id as a field). The child is
 * made only when something is logged at an enabled level.
 */
import type { Bindings, ChildLoggerOptions, Logger } from 'pino';
import type { FastifyBaseLogger } from 'fastify';

type LevelName = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type LogArguments = Parameters<Logger['info']>;

class LazyRequestLogger implements FastifyBaseLogger {
  #child: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
  ) {}

  get level(): string {
    return this.#child?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.#materialized().level = level;
  }

  fatal(...args: LogArguments): void {
    this.#log('fatal', args);
  }
  error(...args: LogArguments): void {
    this.#log('error', args);
  }
  warn(...args: LogArguments): void {
    this.#log('warn', args);
  }
  info(...args: LogArguments): void {
    this.#log('info', args);
  }
  debug(...args: LogArguments): void {
    this.#log('debug', args);
  }
  trace(...args: LogArguments): void {
    this.#log('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#materialized().child(bindings, options);
  }

  #log(level: LevelName, args: LogArguments): void {
    if (this.#child || this.parent.isLevelEnabled(level)) this.#materialized()[level](...args);
  }

  #materialized(): Logger {
    return (this.#child ??= this.parent.child(this.bindings));
  }
}

/** Fastify's `childLoggerFactory`; a route with its own log options gets pino's child at once. */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  const parent = logger as Logger;
  if (Object.keys(options).length > 0) return parent.child(bindings, options);
  return new LazyRequestLogger(parent, bindings);
}
