/** Opens the container for one CLI command and always closes it. */
import pino from 'pino';
import { loadConfig } from '../config/load.js';
import { createContainer, type Container } from '../container.js';

export async function withContainer<T>(work: (container: Container) => Promise<T>): Promise<T> {
  const config = loadConfig();
  // Commands print their own results; the logger only reports problems.
  const container = await createContainer(config, { logger: pino({ level: 'warn' }, pino.destination(2)) });
  try {
    return await work(container);
  } finally {
    await container.close();
  }
}

export const printJson = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
};
