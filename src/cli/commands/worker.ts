import type { Command } from 'commander';

export function registerWorkerCommands(program: Command): void {
  program
    .command('worker')
    .description('run background workers (batch runner) without HTTP; SIGTERM drains and exits')
    .action(async () => {
      const { runWorker } = await import('../../worker-main.js');
      await runWorker();
    });
}
