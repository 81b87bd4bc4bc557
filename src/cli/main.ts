#!/usr/bin/env node
/**
 * `sluice` command line: the admin API's operations against the database directly,
 * plus serve and migrate. Command groups live in ./commands, one file each.
 */
import { Command, CommanderError } from 'commander';
import { isEntryPoint } from '../entry-point.js';
import { ConfigError, databaseConfigOrNull } from '../config/load.js';
import { describeStartupFailure } from '../storage/db/connect-errors.js';
import { AppError } from '../domain/shared/errors.js';
import { registerAdminCommands } from './commands/admin.js';
import { registerServerCommands } from './commands/server.js';
import { registerModelsCommands } from './commands/models.js';
import { registerWorkerCommands } from './commands/worker.js';
import { registerPacksCommands } from './commands/packs.js';
import { registerCalibrateCommand } from './commands/calibrate.js';
import { registerRuntimesCommands } from './commands/runtimes.js';
import { registerConfigCommands } from './commands/config.js';
import { registerProvidersCommands } from './commands/providers.js';
import { registerRequestsCommands } from './commands/requests.js';
import { registerSpendCommand } from './commands/spend.js';
import { packageVersion } from './version.js';
import { ListenError } from '../listen-errors.js';

export function buildProgram(): Command {
  const program = new Command()
    .name('sluice')
    .description('Sluice: self-hostable OpenAI-compatible inference, classification, batch and decision API')
    .version(packageVersion(), '-v, --version', 'print the version')
    .showHelpAfterError()
    .exitOverride();
  registerServerCommands(program);
  registerAdminCommands(program);
  registerSpendCommand(program);
  registerModelsCommands(program);
  registerWorkerCommands(program);
  registerPacksCommands(program);
  registerCalibrateCommand(program);
  registerRuntimesCommands(program);
  registerConfigCommands(program);
  registerProvidersCommands(program);
  registerRequestsCommands(program);
  return program;
}

export async function runCli(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    if (err instanceof ListenError) {
      console.error(err.message);
      return err.exitCode;
    }
    if (err instanceof ConfigError) {
      console.error(err.message);
      return 78;
    }
    if (err instanceof AppError) {
      console.error(`error: ${err.message}`);
      return 1;
    }
    const failure = describeStartupFailure(err, databaseConfigOrNull());
    if (failure) {
      console.error(failure.message);
      return failure.exitCode;
    }
    console.error(err);
    return 1;
  }
}

if (isEntryPoint(import.meta.url)) {
  // `sluice models list | head`: the reader left; that is the end of the output, not a crash.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  runCli(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
