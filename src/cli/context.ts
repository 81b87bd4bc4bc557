/** Assembles the features for one CLI command and always closes them. */
import pino from 'pino';
import { loadConfig } from '../config/load.js';
import { assemble, type Assembly } from '../composition/features.js';

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

export const printJson = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
};
