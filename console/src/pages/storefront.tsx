/**
 * Storefront (operators): purchases by rail, agents' Credits and receipts' credit, each a
 * page at a time. A receipt is shown by the SHA-256 of its id, all the server stores.
 */
import { useState } from 'react';
import { get, query } from '../lib/api.js';
import { time, usd } from '../lib/format.js';
import type { List, StorefrontAccount, StorefrontPurchase } from '../lib/types.js';
import { useApi } from '../lib/use-api.js';
import { abbreviate, holderLabel } from '../lib/activity.js';
import { Empty, ErrorBox, Loading, StatusChip, TableWrap } from '../components/common.js';
import { Pager, useCursor } from '../components/pager.js';

const PAGE = 20;
const RAILS = ['x402', 'mpp', 'card'] as const;

export function StorefrontPage() {
  return (
    <>
      <h1>Storefront</h1>
      <p className="hint">
        Credits bought by agents (with an agent token) and anonymously (a receipt), and what each holder has left. Newest first; amounts in USD.
      </p>
      <Purchases />
      <Accounts kind="agent" />
      <Accounts kind="receipt" />
    </>
  );
}

/** How to turn the storefront on, for an empty list with no filter. */
function HowToTurnOn({ title }: { title: string }) {
  return (
    <Empty title={title}>
      <p>
        The storefront is on when <code>storefront.plans</code> in <code>sluice.yaml</code> has a plan (<code>sluice.example.yaml</code> ships
        one Credits plan) and a payment rail is configured: x402 (<code>STOREFRONT_FACILITATOR_URL</code>, <code>STOREFRONT_PAY_TO</code>), MPP
        (<code>STOREFRONT_MPP_SECRET_KEY</code>) or card (<code>STOREFRONT_CARD_PROVIDER</code>). Agents are registered with{' '}
        <code>STOREFRONT_AGENT_KEYS</code>; anonymous buyers get receipts. Purchases go to <code>/storefront/plans/&lt;plan&gt;/purchase</code>.
      </p>
    </Empty>
  );
}

function Purchases() {
  const [rail, setRail] = useState('');
  const cursor = useCursor();
  const { data, error, loading } = useApi(
    (signal) => get<List<StorefrontPurchase>>(`/admin/storefront/purchases${query({ rail, limit: PAGE, after: cursor.after })}`, signal),
    [rail, cursor.after],
  );
  return (
    <section aria-labelledby="purchases-heading">
      <h2 id="purchases-heading">Purchases</h2>
      <div className="filters">
        <label>
          <span>Rail</span>
          <select
            value={rail}
            onChange={(e) => {
              setRail(e.target.value);
              cursor.reset();
            }}
          >
            <option value="">Every rail</option>
            {RAILS.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
        </label>
      </div>
      {loading && !data && <Loading what="purchases" />}
      <ErrorBox error={error} />
      {data && data.data.length === 0 && (rail === '' && cursor.atStart ? <HowToTurnOn title="No purchases yet" /> : <Empty title="No purchases on this rail" />)}
      {data && data.data.length > 0 && (
        <TableWrap label="Purchases">
          <table>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Holder</th>
                <th scope="col">Rail</th>
                <th scope="col">Amount</th>
                <th scope="col">Payment reference</th>
              </tr>
            </thead>
            <tbody>
              {data.data.map((p) => (
                <tr key={p.id} data-testid="purchase">
                  <td className="nowrap">{time(p.created_at)}</td>
                  <td>
                    <code>{holderLabel(p.holder)}</code>
                    <div className="sub">{p.holder.kind}</div>
                  </td>
                  <td>{p.rail ?? '—'}</td>
                  <td>{usd(p.amount_usd)}</td>
                  <td>
                    <code title={p.payment_ref ?? undefined}>{abbreviate(p.payment_ref)}</code>
                    {p.detail && <div className="sub">settled in {abbreviate(p.detail)}</div>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <Pager cursor={cursor} page={data} label="purchases" />
    </section>
  );
}

function Accounts({ kind }: { kind: 'agent' | 'receipt' }) {
  const cursor = useCursor();
  const { data, error, loading } = useApi(
    (signal) => get<List<StorefrontAccount>>(`/admin/storefront/accounts${query({ holder_kind: kind, limit: PAGE, after: cursor.after })}`, signal),
    [kind, cursor.after],
  );
  const title = kind === 'agent' ? 'Agents' : 'Receipts';
  const headingId = `${kind}-accounts-heading`;
  return (
    <section aria-labelledby={headingId}>
      <h2 id={headingId}>{title}</h2>
      {kind === 'receipt' && <p className="hint">A receipt is stored only as the SHA-256 of its id: the start of that hash names it here.</p>}
      {loading && !data && <Loading what={title.toLowerCase()} />}
      <ErrorBox error={error} />
      {data && data.data.length === 0 && (
        <Empty title={kind === 'agent' ? 'No agent holds Credits yet' : 'No receipts yet'}>
          <p>{kind === 'agent' ? 'An agent appears here after its first purchase with an agent token.' : 'An anonymous purchase (no agent token) issues a receipt.'}</p>
        </Empty>
      )}
      {data && data.data.length > 0 && (
        <TableWrap label={title}>
          <table>
            <thead>
              <tr>
                <th scope="col">{kind === 'agent' ? 'Agent' : 'Receipt (SHA-256)'}</th>
                <th scope="col">Balance</th>
                <th scope="col">Purchased</th>
                <th scope="col">Consumed</th>
                <th scope="col">Status</th>
                <th scope="col">Last change</th>
              </tr>
            </thead>
            <tbody>
              {data.data.map((a) => (
                <tr key={a.id} data-testid={`${kind}-account`}>
                  <td>
                    <code title={a.holder.id}>{kind === 'agent' ? a.holder.id : `${a.holder.id.slice(0, 16)}…`}</code>
                    <div className="sub">seller {a.seller_id}</div>
                  </td>
                  <td className="balance">{usd(a.balance_usd)}</td>
                  <td>{usd(a.purchased_usd)}</td>
                  <td>{usd(a.consumed_usd)}</td>
                  <td>
                    <StatusChip status={a.status} tone={a.status === 'active' ? 'ok' : 'muted'} />
                  </td>
                  <td className="nowrap">{time(a.updated_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <Pager cursor={cursor} page={data} label={title.toLowerCase()} />
    </section>
  );
}
