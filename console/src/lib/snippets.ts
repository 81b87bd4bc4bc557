/**
 * "Copy as curl / openai-node / Python" for a playground request: the exact body sent,
 * against this server's /v1, with a placeholder for the key (the console never holds one).
 * Routes the SDKs have no method for (`/systemone`) use their generic `client.post`; a
 * multipart upload (audio) names the file the page sent.
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
  const method = METHODS.get(route);
  if (kind === 'node') {
    const call = method ? `client.${method}(${json})` : `client.post('${route}', { body: ${json} })`;
    return `${NODE_CLIENT(base)}const result = await ${call};\n`;
  }
  if (method) return `${PYTHON_CLIENT(base)}result = client.${method}(**${pythonLiteral(body)})\n`;
  // The SDK's documented way to call a route it has no method for: a raw response, read as JSON.
  return `import os\nimport httpx\nfrom openai import OpenAI\n\nclient = OpenAI(base_url="${base}", api_key=os.environ["SLUICE_API_KEY"])\nresponse = client.post("${route}", cast_to=httpx.Response, body=${pythonLiteral(body)})\nresult = response.json()\n`;
}

const NODE_CLIENT = (base: string) => `import OpenAI from 'openai';\n\nconst client = new OpenAI({ baseURL: '${base}', apiKey: process.env.SLUICE_API_KEY });\n`;
const PYTHON_CLIENT = (base: string) => `import os\nfrom openai import OpenAI\n\nclient = OpenAI(base_url="${base}", api_key=os.environ["SLUICE_API_KEY"])\n`;

const METHODS = new Map([
  ['/chat/completions', 'chat.completions.create'],
  ['/embeddings', 'embeddings.create'],
  ['/moderations', 'moderations.create'],
  ['/audio/transcriptions', 'audio.transcriptions.create'],
]);

const shellQuote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

/**
 * A multipart request (`fields` in the order sent, then `file` as `fileName`). A field
 * named `x[]` is a list for the SDKs, which send it back as `x[]` parts.
 */
export function multipartSnippet(kind: SnippetKind, origin: string, route: string, fields: ReadonlyArray<readonly [string, string]>, fileName: string): string {
  const base = `${origin}/v1`;
  if (kind === 'curl') {
    const parts = fields.map(([name, value]) => `  -F ${shellQuote(`${name}=${value}`)}`);
    return [`curl ${base}${route}`, `  -H "Authorization: Bearer ${KEY_PLACEHOLDER}"`, `  -F ${shellQuote(`file=@${fileName}`)}`, ...parts].join(' \\\n');
  }
  const params = new Map<string, string | string[]>();
  for (const [name, value] of fields) {
    if (name.endsWith('[]')) params.set(name.slice(0, -2), [...((params.get(name.slice(0, -2)) as string[] | undefined) ?? []), value]);
    else params.set(name, value);
  }
  const method = METHODS.get(route) ?? 'audio.transcriptions.create';
  if (kind === 'node') {
    const lines = [`  file: fs.createReadStream(${JSON.stringify(fileName)}),`, ...[...params].map(([k, v]) => `  ${k}: ${JSON.stringify(v)},`)];
    return `import fs from 'node:fs';\n${NODE_CLIENT(base)}const result = await client.${method}({\n${lines.join('\n')}\n});\n`;
  }
  const args = [`    file=open(${JSON.stringify(fileName)}, "rb"),`, ...[...params].map(([k, v]) => `    ${k}=${pythonLiteral(v, 1)},`)];
  return `${PYTHON_CLIENT(base)}result = client.${method}(\n${args.join('\n')}\n)\n`;
}

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
