/**
 * Gateway (operators): the settlement outbox, i.e. each signed gateway call's usage report
 * to the intermediary, with its delivery state, attempts and last error, filtered and a
 * page at a time; a dead one is replayed after a confirmation.
 */
import { useState } from 'react';
import { get, post, query } from '../lib/api.js';
import { time } from '../lib/format.js';
import type { List, OutboxMessage } from '../lib/types.js';
import { useApi } from '../lib/use-api.js';
import { deliveryTone, deliveryWhen, summarisePayload } from '../lib/activity.js';
import { Empty, ErrorBox, Loading, StatusChip, TableWrap } from '../components/common.js';
import { ConfirmButton } from '../components/confirm.js';
import { Pager, useCursor } from '../components/pager.js';

const PAGE = 20;
const STATES = ['pending', 'delivered', 'dead'] as const;

export function GatewayPage() {
  const [state, setState] = useState('');
  const [kind, setKind] = useState('intermediary');
  const cursor = useCursor();
  const { data, error, loading, reload } = useApi(
    (signal) => get<List<OutboxMessage>>(`/admin/outbox${query({ state, target_kind: kind, limit: PAGE, after: cursor.after })}`, signal),
    [state, kind, cursor.after],
  );
  const filtered = state !== '' || kind !== 'intermediary';
  return (
    <>
      <h1>Gateway</h1>
      <p className="hint">
        Settlements: each signed <code>/gateway/v1</code> call leaves one usage report for the intermediary, written with its usage record and
        delivered by the outbox, retried with backoff until its last attempt, then dead. Newest first.
      </p>
      <div className="filters">
        <label>
          <span>Delivery state</span>
          <select
            value={state}
            onChange={(e) => {
              setState(e.target.value);
              cursor.reset();
            }}
          >
            <option value="">Every state</option>
            {STATES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          <span>Target</span>
          <select
            value={kind}
            onChange={(e) => {
              setKind(e.target.value);
              cursor.reset();
            }}
          >
            <option value="intermediary">intermediary (gateway usage reports)</option>
            <option value="">every target kind</option>
          </select>
        </label>
      </div>
      {loading && !data && <Loading what="settlements" />}
      <ErrorBox error={error} />
      {data && data.data.length === 0 && !filtered && cursor.atStart && <NoSettlements />}
      {data && data.data.length === 0 && (filtered || !cursor.atStart) && <Empty title="No settlements match these filters" />}
      {data && data.data.length > 0 && <SettlementTable messages={data.data} onReplayed={reload} />}
      <Pager cursor={cursor} page={data} label="settlements" />
    </>
  );
}

function NoSettlements() {
  return (
    <Empty title="No settlements yet">
      <p>
        The gateway is on when <code>GATEWAY_SIGNING_SECRETS</code> (or <code>GATEWAY_SIGNING_SECRETS_FILE</code>) holds the intermediary's
        signing secrets and <code>GATEWAY_API_URL</code> points at the intermediary, with <code>GATEWAY_READ_KEY</code> and{' '}
        <code>GATEWAY_WRITE_KEY</code> for its allowance checks and usage reports (or <code>gateway:</code> in <code>sluice.yaml</code>). Each
        signed call to <code>/gateway/v1</code> then shows here with its delivery state.
      </p>
    </Empty>
  );
}

function SettlementTable({ messages, onReplayed }: { messages: OutboxMessage[]; onReplayed: () => void }) {
  return (
    <TableWrap label="Settlements">
      <table>
        <thead>
          <tr>
            <th scope="col">Settlement</th>
            <th scope="col">State</th>
            <th scope="col">Attempts</th>
            <th scope="col">Report</th>
            <th scope="col">Last error</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {messages.map((m) => (
            <tr key={m.id} data-testid="settlement">
              <td>
                <code>{m.idempotency_key}</code>
                <div className="sub">
                  {m.target_kind} · <code>{m.id}</code>
                </div>
                <div className="sub">created {time(m.created_at)}</div>
              </td>
              <td>
                <StatusChip status={m.state} tone={deliveryTone(m.state)} />
                <div className="sub">{deliveryWhen(m)}</div>
              </td>
              <td>{m.attempts}</td>
              <td className="wrap">{summarisePayload(m.payload)}</td>
              <td className="wrap">{m.last_error ?? '—'}</td>
              <td>
                {m.state === 'dead' ? (
                  <ConfirmButton
                    label={
                      <>
                        Replay <span className="visually-hidden">{m.idempotency_key}</span>
                      </>
                    }
                    title="Replay this settlement?"
                    message={`The usage report ${m.idempotency_key} (${m.id}) becomes pending again with no attempts and is sent at once; the intermediary drops events it already accepted.`}
                    confirmLabel="Replay settlement"
                    onConfirm={async () => {
                      await post(`/admin/outbox/${encodeURIComponent(m.id)}/replay`);
                      onReplayed();
                    }}
                  />
                ) : (
                  '—'
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
