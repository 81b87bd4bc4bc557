/**
 * Migration 0017 and its repositories on SQLite and PostgreSQL: users (email unique, found
 * by OIDC issuer and subject), memberships (one role per project, re-roled in place), a
 * user's projects, sign-in flows taken once, the audit log filtered and paged newest
 * first; deleting a user takes their memberships and sessions; the migration reverts.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { dialectCases } from '../../helpers/databases.js';
import { migrateToLatest, migratorFor } from '../../../src/storage/db/migrate.js';
import { PeopleRepository } from '../../../src/storage/db/repositories/people.repository.js';
import { AuditLogRepository } from '../../../src/storage/db/repositories/audit-log.repository.js';
import { SignInFlowsRepository } from '../../../src/storage/db/repositories/sign-in-flows.repository.js';
import { ConsoleSessionsRepository } from '../../../src/storage/db/repositories/console-sessions.repository.js';
import { newId, newUuid } from '../../../src/domain/shared/ids.js';
import type { AuditEntry } from '../../../src/domain/audit/audit.types.js';

const cases = await dialectCases();
const NOW = 1_700_000_000_000;

const entry = (projectId: string | null, action: string, at: number): AuditEntry => ({
  id: newId('audit_'),
  createdAtMs: at,
  actor: { type: 'admin_token', id: null, ip: '127.0.0.1' },
  action,
  targetType: 'project',
  targetId: projectId,
  projectId,
  detail: { n: at - NOW },
});

describe.each(cases)('migration 0017 on $name', ({ open }) => {
  it('keeps users, members, flows and the audit log, and reverts', async () => {
    const database = await open();
    try {
      await migrateToLatest(database);
      const projectId = newUuid();
      await database.db.insertInto('projects').values({ id: projectId, name: 'Alpha', balance_micros: 0, created_at: NOW }).execute();
      const people = new PeopleRepository(database);
      const user = { id: newId('user_'), email: 'a@example.com', name: 'A', operator: false, operatorByHand: false, oidc: { issuer: 'https://id', subject: 's1' }, createdAtMs: NOW };
      expect(await people.insertUser(user)).toEqual(user);
      expect(await people.insertUser({ ...user, id: newId('user_'), oidc: null })).toBeUndefined();
      expect(await people.findByOidc('https://id', 's1')).toEqual(user);
      expect(await people.updateUser(user.id, { operator: true, name: null })).toEqual({ ...user, operator: true, operatorByHand: true, name: null });
      // The claims' operator flag (migration 0025) adds to the one set by hand and never clears it.
      expect(await people.updateUser(user.id, { operator: false, operatorMapped: true })).toEqual({ ...user, operator: true, operatorByHand: false, name: null });
      expect(await people.updateUser(user.id, { operatorMapped: false })).toEqual({ ...user, name: null });
      await people.putMembership({ projectId, userId: user.id, role: 'viewer', createdAtMs: NOW, grantedBy: 'mapping' });
      await people.putMembership({ projectId, userId: user.id, role: 'owner', createdAtMs: NOW + 5, grantedBy: 'admin' });
      expect(await people.listMembers(projectId)).toEqual([{ projectId, userId: user.id, role: 'owner', createdAtMs: NOW, grantedBy: 'admin' }]);
      expect(await people.membershipsOf(user.id)).toEqual(await people.listMembers(projectId));
      expect(await people.projectsOf(user.id)).toEqual([{ projectId, projectName: 'Alpha', role: 'owner' }]);
      await new ConsoleSessionsRepository(database).insert('h-user', { role: 'user', projectId: null, keyId: null, userId: user.id, expiresAtMs: NOW + 10 }, NOW);
      expect(await new ConsoleSessionsRepository(database).findLive('h-user', NOW)).toMatchObject({ role: 'user', userId: user.id });

      const flows = new SignInFlowsRepository(database);
      const flow = { state: 's', nonce: 'n', codeVerifier: 'v', redirectUrl: 'https://sluice/cb' };
      await flows.insert('f1', flow, Date.now() + 60_000);
      expect(await flows.take('f1', Date.now())).toEqual(flow);
      expect(await flows.take('f1', Date.now())).toBeUndefined();

      const audit = new AuditLogRepository(database);
      const written = [entry(projectId, 'key.create', NOW), entry(null, 'user.create', NOW + 1), entry(projectId, 'key.revoke', NOW + 2)];
      for (const e of written) await audit.append(e);
      expect((await audit.list({ projectId }, 10)).items.map((e) => e.action)).toEqual(['key.revoke', 'key.create']);
      expect((await audit.list({ action: 'user.create' }, 10)).items).toEqual([written[1]]);
      expect((await audit.list({ sinceMs: NOW + 1, untilMs: NOW + 2 }, 10)).items.map((e) => e.action)).toEqual(['user.create']);
      const first = await audit.list({}, 2);
      expect(first.hasMore).toBe(true);
      expect((await audit.list({}, 2, first.items[1]!.id)).items.map((e) => e.action)).toEqual(['key.create']);

      expect(await people.deleteUser(user.id)).toBe(true);
      expect(await people.listMembers(projectId)).toEqual([]);
      expect(await new ConsoleSessionsRepository(database).findLive('h-user', NOW)).toBeUndefined();

      const migrator = await migratorFor(database);
      const down = await migrator.migrateTo('0016-key-policy');
      const reverted = down.results?.map((r) => [r.migrationName, r.direction, r.status]) ?? [];
      expect(down.error).toBeUndefined();
      expect(reverted.at(-1)).toEqual(['0017-people-audit', 'Down', 'Success']);
      expect(reverted.every(([, direction, status]) => direction === 'Down' && status === 'Success')).toBe(true);
      await expect(sql`select id from audit_log`.execute(database.db)).rejects.toThrow();
      await migrateToLatest(database);
    } finally {
      await database.close();
    }
  });
});
