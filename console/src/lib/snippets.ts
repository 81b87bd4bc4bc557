/**
 * "Copy as curl / openai-node / Python" for a playground request: the exact body sent,
 * against this server's /v1, with a placeholder for the key (the console never holds one).
 */
export type SnippetKind = 'curl' | 'node' | 'python';

const KEY_PLACEHOLDER = '$SLUICE_API_KEY';

/** `route` is the API path after /v1, e.g. `/chat/completions`. */
export function snippet(kind: SnippetKind, origin: string, route: string, body: Record<string, unknown>): string {
  const base = `${origin}/v1`;
  const json = JSON.stringify(body, null, 2);
  if (kind === 'curl') {
    const quoted = json.replaceAll("'", `'\\''`);
    return `curl ${base}${route} \\\n  -H "Authorization: Bearer ${KEY_PLACEHOLDER}" \\\n  -H 'content-type: application/json' \\\n  -d '${quoted}'`;
  }
  const method = methodFor(route);
  if (kind === 'node') {
    return `import OpenAI from 'openai';\n\nconst client = new OpenAI({ baseURL: '${base}', apiKey: process.env.SLUICE_API_KEY });\nconst result = await client.${method}(${json});\n`;
  }
  return `import os\nfrom openai import OpenAI\n\nclient = OpenAI(base_url="${base}", api_key=os.environ["SLUICE_API_KEY"])\nresult = client.${method}(**${pythonLiteral(body)})\n`;
}

const METHODS = new Map([
  ['/chat/completions', 'chat.completions.create'],
  ['/embeddings', 'embeddings.create'],
  ['/moderations', 'moderations.create'],
]);

const methodFor = (route: string): string => METHODS.get(route) ?? 'post';

/** JSON as a Python literal: true/false/null spelled the Python way. */
export function pythonLiteral(value: unknown, indent = 0): string {
  const pad = '    '.repeat(indent + 1);
  const end = '    '.repeat(indent);
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number' || typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return value.length === 0 ? '[]' : `[\n${value.map((v) => pad + pythonLiteral(v, indent + 1)).join(',\n')}\n${end}]`;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([k, v]) => `${pad}${JSON.stringify(k)}: ${pythonLiteral(v, indent + 1)}`).join(',\n')}\n${end}}`;
}
