/** The admin API's users, project members and audit log: bodies, params, query and wire objects (routes/admin/people.ts, audit.ts). */
import { Type, type TSchema } from '@sinclair/typebox';
import { ListOf } from './files-batches.js';

const UnixSeconds = Type.Integer({ description: 'Unix timestamp, seconds' });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const RoleText = Type.String({ maxLength: 32, description: '`owner`, `admin`, `member` or `viewer`' });

export const NewUserBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320 }),
    name: Type.Optional(Type.String({ maxLength: 200 })),
    operator: Type.Optional(Type.Boolean({ description: 'an operator may do what the admin token may (default false)' })),
  },
  { additionalProperties: false },
);
export const UserChangeBody = Type.Object(
  { name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))), operator: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export const NewMemberBody = Type.Object({ user_id: Type.String({ minLength: 1, maxLength: 64 }), role: RoleText }, { additionalProperties: false });
export const MemberChangeBody = Type.Object({ role: RoleText }, { additionalProperties: false });
export const MemberParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), user_id: Type.String({ minLength: 1, maxLength: 64 }) });
export const UserListQuery = Type.Object({
  limit: Type.Optional(Type.String({ description: 'integer 1..100, default 20' })),
  after: Type.Optional(Type.String({ description: 'a user id: the `last_id` of the previous page' })),
});

export const UserObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('user'),
  email: Type.String(),
  name: Nullable(Type.String()),
  operator: Type.Boolean(),
  oidc_issuer: Nullable(Type.String({ description: 'the identity provider that signs the user in, once they have' })),
  created_at: UnixSeconds,
});
export const UserList = ListOf(UserObject);

export const MemberObject = Type.Object({
  object: Type.Literal('project_member'),
  project_id: Type.String(),
  user_id: Type.String(),
  email: Type.String(),
  name: Nullable(Type.String()),
  role: Type.String({ description: '`owner`, `admin`, `member` or `viewer`' }),
  granted_by: Type.Union([Type.Literal('admin'), Type.Literal('mapping')], {
    description: "`admin`: given by hand (kept as it is by sign-ins); `mapping`: given by the identity provider's claims, and changed or taken back at each sign-in as they change",
  }),
  created_at: UnixSeconds,
});
export const MemberList = Type.Object({ object: Type.Literal('list'), data: Type.Array(MemberObject) });
export const Deleted = Type.Object({ id: Type.String(), object: Type.String(), deleted: Type.Literal(true) });

/** Times are checked by the route, so that a bad one is named. */
export const AuditQuery = Type.Object({
  project_id: Type.Optional(Type.String({ maxLength: 64, description: "only this project's entries (a project admin must name their project)" })),
  actor: Type.Optional(Type.String({ maxLength: 320, description: "only this actor's (a user or key id)" })),
  action: Type.Optional(Type.String({ maxLength: 64, description: 'only this action, e.g. `key.create`' })),
  since: Type.Optional(Type.String({ description: 'Unix seconds: entries at or after' })),
  until: Type.Optional(Type.String({ description: 'Unix seconds: entries before' })),
  limit: Type.Optional(Type.String({ description: 'integer 1..100, default 20' })),
  after: Type.Optional(Type.String({ description: 'an entry id: the `last_id` of the previous page' })),
});
export const AuditExportQuery = Type.Object({
  ...AuditQuery.properties,
  format: Type.Optional(Type.String({ description: '`ndjson` (default) or `csv`' })),
});

export const AuditEntryObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('audit_entry'),
  created_at: UnixSeconds,
  actor: Type.Object({
    type: Type.String({ description: '`admin_token`, `operator_session`, `user`, `api_key` or `anonymous`' }),
    id: Nullable(Type.String({ description: 'the user or key id; for a failed sign-in, the email presented, if any' })),
    ip: Nullable(Type.String({ description: 'the client address' })),
  }),
  action: Type.String({ description: 'e.g. `key.create`, `member.update`, `sign_in.failure`' }),
  target: Type.Object({ type: Type.String(), id: Nullable(Type.String()) }),
  project_id: Nullable(Type.String()),
  detail: Type.Record(Type.String(), Type.Unknown(), { description: 'what changed; never a secret' }),
});
export const AuditList = ListOf(AuditEntryObject);

/** The audit export's answer: one entry per line (NDJSON, as in GET /admin/v1/audit) or CSV with a header row. */
export const AuditExport = {
  content: {
    'application/x-ndjson': { schema: Type.String({ description: 'one audit entry (as in GET /admin/v1/audit) per line' }) },
    'text/csv': { schema: Type.String({ description: 'a header row, then one audit entry per row' }) },
  },
};
