/** Assembles the features for one CLI command and always closes them; records the changes a command makes in the audit log. */
import { userInfo } from 'node:os';
import pino from 'pino';
import { loadConfig } from '../config/load.js';
import { assemble, type Assembly } from '../composition/features.js';
import type { Actor, AuditChange } from '../domain/audit/audit.types.js';

export async function withAssembly<T>(work: (assembly: Assembly) => Promise<T>): Promise<T> {
  const config = loadConfig();
  // Commands print their own results; the logger only reports problems.
  const assembly = await assemble(config, { logger: pino({ level: 'warn' }, pino.destination(2)) });
  try {
    return await work(assembly);
  } finally {
    await assembly.close();
  }
}

/** The operating-system user running the command (null where the system names none). */
function osUserName(): string | null {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? null;
  }
}

/** Who a CLI change is recorded as: the CLI, run by this operating-system user, on the server's own machine. */
export const cliActor = (): Actor => ({ type: 'cli', id: osUserName(), ip: 'local' });

/** Appends a change the command made to the audit log, as the CLI. */
export const auditCliChange = (assembly: Assembly, change: AuditChange): Promise<void> => assembly.core.audit.record(cliActor(), change);

export const printJson = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
};
