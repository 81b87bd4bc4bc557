import type { Command } from 'commander';
import { loadConfig } from '../../config/load.js';
import { openDatabase } from '../../storage/db/database.js';
import { migrateToLatest } from '../../storage/db/migrate.js';

export function registerServerCommands(program: Command): void {
  program
    .command('serve')
    .description('start the HTTP server (and in-process workers unless SLUICE_WORKERS=off)')
    .action(async () => {
      const { serve } = await import('../../main.js');
      await serve();
    });

  program
    .command('migrate')
    .description('apply pending database migrations and exit')
    .action(async () => {
      const database = openDatabase(loadConfig().database);
      try {
        const { applied } = await migrateToLatest(database);
        console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
      } finally {
        await database.close();
      }
    });
}
