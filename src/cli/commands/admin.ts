/** projects, keys and credits: the admin API's operations, straight on the database. */
import type { Command } from 'commander';
import { usdToMicros } from '../../domain/shared/money.js';
import { invalidRequest } from '../../domain/shared/errors.js';
import { keyToWire, projectToWire } from '../../http/routes/admin/mappers.js';
import { readLimit, toListPage } from '../../http/mappers/list-page.js';
import { printJson, withAssembly } from '../context.js';
import { policyInputOf, withPolicyFlags, type KeyPolicyFlags } from './key-policy-options.js';
import { projectDeletedToWire } from '../../http/routes/admin/project-deletion.js';
import type { Actor } from '../../domain/audit/audit.types.js';

/** Who a change made from the command line is audited as. */
const CLI_ACTOR: Actor = { type: 'cli', id: null, ip: null };

export function registerAdminCommands(program: Command): void {
  const projects = program.command('projects').description('manage projects');
  projects
    .command('create')
    .argument('<name>', 'project name')
    .description('create a project (with the configured free credits)')
    .action(async (name: string) =>
      withAssembly(async ({ core: c }) => printJson(projectToWire(await c.projects.createProject(name)))),
    );
  projects
    .command('list')
    .option('--limit <n>', 'projects per page (1-100)', '20')
    .option('--after <project-id>', 'continue after this project (the last id of the previous page)')
    .description('list projects, newest first, a page at a time')
    .action(async (options: { limit: string; after?: string }) =>
      withAssembly(async ({ core: c }) => {
        const page = await c.projects.listProjects(readLimit(options.limit, 100, 20), options.after);
        printJson(toListPage(page, projectToWire));
      }),
    );
  projects
    .command('show')
    .argument('<project-id>')
    .description('show a project and its balance')
    .action(async (id: string) => withAssembly(async ({ core: c }) => printJson(projectToWire(await c.projects.getProject(id)))));

  projects
    .command('delete')
    .argument('<project-id>')
    .description('delete a project: keys revoked; request log, members, stored responses, batches and files deleted; usage kept (refused while a batch runs)')
    .action(async (id: string) =>
      withAssembly(async ({ features }) => printJson(projectDeletedToWire(await features.requestLog.services.deletion.delete(id, CLI_ACTOR)))),
    );

  const keys = program.command('keys').description('manage API keys');
  withPolicyFlags(keys.command('create').argument('<project-id>').option('--name <name>', 'a label for the key', 'default'), false)
    .description('create an API key, with its policy; the key is printed once and cannot be shown again')
    .action(async (projectId: string, options: KeyPolicyFlags & { name: string }) =>
      withAssembly(async ({ core: c }) => {
        const { record, key } = await c.projects.createKey(projectId, options.name, policyInputOf(options));
        printJson({ ...keyToWire(record), key });
      }),
    );
  withPolicyFlags(keys.command('update').argument('<key-id>').option('--name <name>', 'a new label for the key'), true)
    .description("change a key's name and policy; every replica sees it within the auth cache TTL")
    .action(async (keyId: string, options: KeyPolicyFlags & { name?: string }) =>
      withAssembly(async ({ core: c }) => printJson(keyToWire(await c.projects.updateKey(keyId, { name: options.name, ...policyInputOf(options) })))),
    );
  keys
    .command('rotate')
    .argument('<key-id>')
    .requiredOption('--grace-seconds <n>', 'how long the old secret keeps working (0: it stops at once)')
    .description('issue a key a new secret, printed once; the old one works until the grace ends')
    .action(async (keyId: string, options: { graceSeconds: string }) =>
      withAssembly(async ({ core: c }) => {
        const grace = Number(options.graceSeconds);
        const { record, key } = await c.projects.rotateKey(keyId, options.graceSeconds.trim() !== '' && Number.isFinite(grace) ? grace : options.graceSeconds);
        printJson({ ...keyToWire(record), key });
      }),
    );
  keys
    .command('list')
    .argument('<project-id>')
    .description("list a project's keys (prefixes only)")
    .action(async (projectId: string) =>
      withAssembly(async ({ core: c }) => printJson((await c.projects.listKeys(projectId)).map(keyToWire))),
    );
  keys
    .command('revoke')
    .argument('<key-id>')
    .description('revoke a key; other replicas stop accepting it within the auth cache TTL')
    .action(async (keyId: string) => withAssembly(async ({ core: c }) => printJson(keyToWire(await c.projects.revokeKey(keyId)))));

  const credits = program.command('credits').description('manage credit balances');
  credits
    .command('grant')
    .argument('<project-id>')
    .argument('<amount-usd>', 'dollars to add (negative to remove)')
    .option('--reason <text>', 'why, kept with the grant')
    .description("add to (or take from) a project's balance")
    .action(async (projectId: string, amount: string, options: { reason?: string }) =>
      withAssembly(async ({ core: c }) => {
        const usd = Number(amount);
        if (amount.trim() === '' || !Number.isFinite(usd)) throw invalidRequest(`amount-usd must be a number, got "${amount}"`);
        printJson(projectToWire(await c.projects.grantCredits(projectId, usdToMicros(usd), options.reason ?? null)));
      }),
    );
}
