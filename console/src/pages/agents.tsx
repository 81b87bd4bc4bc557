/**
 * Connect an agent: the `mcp.json` snippet an MCP client needs (this server's `/mcp` URL
 * and the key header), and the tools the endpoint lists right now, as it sends them:
 * name, description, the models each takes and its price. The list is read anonymously,
 * as any agent would before it pays.
 */
import { useSession } from '../session.js';
import { mcpJson, priceOf, priceText, toolModels, toolsListRequest, toolsOf, type McpTool } from '../lib/mcp.js';
import { useApi } from '../lib/use-api.js';
import { CopyButton, Empty, ErrorBox, Loading, TableWrap } from '../components/common.js';

async function listTools(path: string, signal: AbortSignal): Promise<McpTool[]> {
  const { headers, body } = toolsListRequest();
  const res = await fetch(path, { method: 'POST', headers, body, signal, credentials: 'omit' });
  const text = await res.text();
  if (!res.ok && !text.startsWith('{')) throw new Error(`The MCP endpoint answered ${res.status}`);
  return toolsOf(text, res.headers.get('content-type') ?? '');
}

export function AgentsPage() {
  const { session } = useSession();
  const path = session.mcp_path;
  const snippet = mcpJson(window.location.origin, path);
  return (
    <>
      <h1>Connect an agent</h1>
      <p className="hint">
        Agents that speak the Model Context Protocol reach the models as tools at <code>{`${window.location.origin}${path}`}</code>. Put this in
        the client&apos;s <code>mcp.json</code> (Claude Desktop, Cursor, VS Code and others), with an API key of your project in place of the
        placeholder; calls are paid from the project&apos;s credit like any API call.
      </p>
      <section aria-labelledby="mcp-json-heading">
        <h2 id="mcp-json-heading">mcp.json</h2>
        <pre className="code" data-testid="mcp-json">
          {snippet}
        </pre>
        <CopyButton text={snippet} label="Copy mcp.json" />
      </section>
      <section aria-labelledby="mcp-tools-heading">
        <h2 id="mcp-tools-heading">Tools</h2>
        <ToolList path={path} />
      </section>
    </>
  );
}

function ToolList({ path }: { path: string }) {
  const { data, error, loading } = useApi((signal) => listTools(path, signal), [path]);
  if (loading && !data) return <Loading what="the tools" />;
  if (!data) return <ErrorBox error={error} />;
  if (data.length === 0) return <Empty title="No tools yet">A tool is listed once a model it calls is ready.</Empty>;
  return (
    <>
      <p className="hint">As the endpoint lists them now: a tool is offered while a model it calls is ready. Prices in USD.</p>
      <TableWrap label="MCP tools">
        <table>
          <thead>
            <tr>
              <th scope="col">Tool</th>
              <th scope="col">What it does</th>
              <th scope="col">Models</th>
              <th scope="col">Price</th>
            </tr>
          </thead>
          <tbody>
            {data.map((tool) => (
              <tr key={tool.name}>
                <th scope="row">
                  <code>{tool.name}</code>
                </th>
                <td>{tool.title ?? tool.description}</td>
                <td>{toolModels(tool).join(', ') || '—'}</td>
                <td>{priceText(priceOf(tool))}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      <details>
        <summary>The tools/list answer</summary>
        <pre className="code" data-testid="mcp-tools-json">
          {JSON.stringify(data, null, 2)}
        </pre>
      </details>
    </>
  );
}
