/** `sluice config show`: the configuration as resolved from sluice.yaml and the environment, secrets redacted. */
import type { Command } from 'commander';
import { loadConfig } from '../../config/load.js';
import { redactedConfig } from '../../config/redacted.js';
import { printJson } from '../context.js';

export function registerConfigCommands(program: Command): void {
  const config = program.command('config').description('the configuration in force');
  config
    .command('show')
    .description('print the resolved configuration (sluice.yaml, the environment, the defaults) as JSON, every key and secret redacted')
    .action(() => printJson(redactedConfig(loadConfig())));
}
