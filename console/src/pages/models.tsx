/**
 * Every catalog model: its routes, runtime, whether it can run (and how to fix it when
 * not), whether its upstream engine answers, and price. Reachability comes with the same
 * one request: /v1/catalog probes the upstreams whose finding is stale, together, before
 * answering (a GET /v1/models/{id} per model would cost a request each and answer only
 * the previous finding).
 */
import { get } from '../lib/api.js';
import { deploymentState, reachability } from '../lib/activity.js';
import type { CatalogModel, List } from '../lib/types.js';
import { useApi } from '../lib/use-api.js';
import { Empty, ErrorBox, Loading, StatusChip, TableWrap } from '../components/common.js';
import { NeedsProject } from '../shell.js';

export function ModelsPage() {
  return (
    <>
      <h1>Models</h1>
      <NeedsProject>
        <ModelTable />
      </NeedsProject>
    </>
  );
}

function ModelTable() {
  const { data, error, loading } = useApi((signal) => get<List<CatalogModel>>('/v1/catalog', signal), []);
  if (loading && !data) return <Loading what="models" />;
  if (!data) return <ErrorBox error={error} />;
  const ready = data.data.filter((m) => m.ready).length;
  return (
    <>
      {ready === 0 && (
        <Empty title="No model is ready yet">
          Point a model at an OpenAI-compatible engine (vLLM, SGLang, llama.cpp server, Ollama) with <code>models.&lt;id&gt;.base_url</code> in{' '}
          <code>sluice.yaml</code>, or pull an in-process one with <code>npm run sluice -- models pull &lt;id&gt;</code>.
        </Empty>
      )}
      <p className="hint">
        {ready} of {data.data.length} models ready. Prices in USD per million tokens.
      </p>
      <TableWrap label="Models">
        <table>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Routes</th>
              <th scope="col">Runtime</th>
              <th scope="col">State</th>
              <th scope="col">Upstream</th>
              <th scope="col">Input</th>
              <th scope="col">Output</th>
            </tr>
          </thead>
          <tbody>
            {data.data.map((m) => (
              <tr key={m.id}>
                <td>
                  <code>{m.id}</code>
                  <div className="sub">{m.task}</div>
                </td>
                <td>{m.routes.join(', ')}</td>
                <td>{m.upstream ? `upstream: ${m.runtime}` : `in-process (${m.runtime})`}</td>
                <td>
                  <StatusChip status={m.ready ? 'ready' : 'not ready'} tone={m.ready ? 'ok' : 'bad'} />
                  {!m.ready && (
                    <div className="sub">
                      {m.detail}
                      <ul>
                        {m.fixes.map((fix) => (
                          <li key={fix}>{fix}</li>
                        ))}
                      </ul>
                    </div>
                  )}
                </td>
                <td data-testid="reachability">
                  <Reachable model={m} />
                </td>
                <td>${m.price.input_per_million_usd}</td>
                <td>${m.price.output_per_million_usd}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    </>
  );
}

function Reachable({ model }: { model: CatalogModel }) {
  const found = reachability(model);
  if (!found) return <span className="sub">{model.upstream ? '—' : 'in-process'}</span>;
  return (
    <>
      <StatusChip status={found.status} tone={found.tone} />
      {found.detail && <div className="sub">{found.detail}</div>}
      {model.deployments?.map((d) => (
        <div className="sub" key={d.id} data-testid="deployment">
          {d.id}: {deploymentState(d).text}
        </div>
      ))}
    </>
  );
}
