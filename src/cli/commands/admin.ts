/**
 * projects, keys and credits: the admin API's operations, straight on the database. Each
 * change is written to the audit log as the CLI (the operating-system user, address `local`).
 */
import type { Command } from 'commander';
import { microsToUsd, usdToMicros } from '../../domain/shared/money.js';
import { invalidRequest } from '../../domain/shared/errors.js';
import type { ApiKeyRecord } from '../../domain/identity/api-key.types.js';
import type { Assembly } from '../../composition/features.js';
import { keyToWire, projectToWire } from '../../http/routes/admin/mappers.js';
import { readLimit, toListPage } from '../../http/mappers/list-page.js';
import { auditCliChange, cliActor, printJson, withAssembly } from '../context.js';
import { policyInputOf, withPolicyFlags, type KeyPolicyFlags } from './key-policy-options.js';
import { projectDeletedToWire } from '../../http/routes/admin/project-deletion.js';

/** Records a change to a key, with the same action and detail the admin API records. */
const auditKey = (assembly: Assembly, action: string, record: ApiKeyRecord, detail: Record<string, unknown> = {}) =>
  auditCliChange(assembly, { action, targetType: 'api_key', targetId: record.id, projectId: record.projectId, detail: { name: record.name, prefix: record.prefix, ...detail } });

export function registerAdminCommands(program: Command): void {
  registerProjectCommands(program);
  registerKeyCommands(program);
  registerCreditCommands(program);
}

function registerProjectCommands(program: Command): void {
  const projects = program.command('projects').description('manage projects');
  projects
    .command('create')
    .argument('<name>', 'project name')
    .description('create a project (with the configured free credits)')
    .action(async (name: string) =>
      withAssembly(async (assembly) => {
        const project = await assembly.core.projects.createProject(name);
        await auditCliChange(assembly, { action: 'project.create', targetType: 'project', targetId: project.id, projectId: project.id, detail: { name: project.name } });
        printJson(projectToWire(project));
      }),
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
      withAssembly(async ({ features }) => printJson(projectDeletedToWire(await features.requestLog.services.deletion.delete(id, cliActor())))),
    );
}

function registerKeyCommands(program: Command): void {
  const keys = program.command('keys').description('manage API keys');
  withPolicyFlags(keys.command('create').argument('<project-id>').option('--name <name>', 'a label for the key', 'default'), false)
    .description('create an API key, with its policy; the key is printed once and cannot be shown again')
    .action(async (projectId: string, options: KeyPolicyFlags & { name: string }) =>
      withAssembly(async (assembly) => {
        const policy = policyInputOf(options);
        const { record, key } = await assembly.core.projects.createKey(projectId, options.name, policy);
        await auditKey(assembly, 'key.create', record, Object.keys(policy).length > 0 ? { policy: Object.keys(policy) } : {});
        printJson({ ...keyToWire(record), key });
      }),
    );
  withPolicyFlags(keys.command('update').argument('<key-id>').option('--name <name>', 'a new label for the key'), true)
    .description("change a key's name and policy; every replica sees it within the auth cache TTL")
    .action(async (keyId: string, options: KeyPolicyFlags & { name?: string }) =>
      withAssembly(async (assembly) => {
        const change = { ...(options.name !== undefined && { name: options.name }), ...policyInputOf(options) };
        const record = await assembly.core.projects.updateKey(keyId, change);
        await auditKey(assembly, 'key.update', record, { fields: Object.keys(change) });
        printJson(keyToWire(record));
      }),
    );
  keys
    .command('rotate')
    .argument('<key-id>')
    .requiredOption('--grace-seconds <n>', 'how long the old secret keeps working (0: it stops at once)')
    .description('issue a key a new secret, printed once; the old one works until the grace ends')
    .action(async (keyId: string, options: { graceSeconds: string }) =>
      withAssembly(async (assembly) => {
        const grace = Number(options.graceSeconds);
        const { record, key } = await assembly.core.projects.rotateKey(keyId, options.graceSeconds.trim() !== '' && Number.isFinite(grace) ? grace : options.graceSeconds);
        await auditKey(assembly, 'key.rotate', record, { grace_seconds: grace });
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
    .action(async (keyId: string) =>
      withAssembly(async (assembly) => {
        const record = await assembly.core.projects.revokeKey(keyId);
        await auditKey(assembly, 'key.revoke', record);
        printJson(keyToWire(record));
      }),
    );
}

function registerCreditCommands(program: Command): void {
  const credits = program.command('credits').description('manage credit balances');
  credits
    .command('grant')
    .argument('<project-id>')
    .argument('<amount-usd>', 'dollars to add (negative to remove)')
    .option('--reason <text>', 'why, kept with the grant')
    .description("add to (or take from) a project's balance")
    .action(async (projectId: string, amount: string, options: { reason?: string }) =>
      withAssembly(async (assembly) => {
        const usd = Number(amount);
        if (amount.trim() === '' || !Number.isFinite(usd)) throw invalidRequest(`amount-usd must be a number, got "${amount}"`);
        const project = await assembly.core.projects.grantCredits(projectId, usdToMicros(usd), options.reason ?? null);
        const detail = { amount_usd: usd, reason: options.reason ?? null, balance_usd: microsToUsd(project.balanceMicros) };
        await auditCliChange(assembly, { action: 'credit.grant', targetType: 'project', targetId: project.id, projectId: project.id, detail });
        printJson(projectToWire(project));
      }),
    );
}
