/**
 * Shared setup of the Claude Code suites: the sluice.yaml of docs/claude-code.md (two
 * engine models, Claude Code's names aliased onto them), an engine scripted to make Claude
 * Code write a file, and what that engine must have received.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path, { join } from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { expect } from 'vitest';
import type { FakeUpstream } from '../../helpers/fake-upstream.js';
import { toolLoop } from '../../helpers/tool-loop-engine.js';

export const CONTENT = 'Sluice carried this file.\n';
export const FINAL = 'Created notes.txt.';
export const THOUGHT = 'The user wants a file, so I will call Write.';
export const PROMPT = 'Create notes.txt in this folder containing "Sluice carried this file."';

const DOCS_PAGE = readFileSync(path.resolve(import.meta.dirname, '../../../docs/claude-code.md'), 'utf8');

interface DocsModel {
  base_url: string;
  upstream_model: string;
  max_output_tokens: number;
}

/** The `sluice.yaml` of docs/claude-code.md, as printed there (its first yaml block). */
function docsConfig(): { models: Record<string, DocsModel>; aliases: Record<string, string> } {
  const block = /```yaml\n([\s\S]*?)```/.exec(DOCS_PAGE)?.[1];
  if (!block) throw new Error('docs/claude-code.md has no yaml block');
  return parseYaml(block);
}

/** The page's config with every model's `base_url` pointed at `engineUrl`: the tests run the page's own config. */
export function claudeCodeYaml(engineUrl: string): string {
  const config = docsConfig();
  for (const model of Object.values(config.models)) model.base_url = engineUrl;
  return stringifyYaml(config);
}

/** The page's two models, as the engine is asked for them. */
export const BIG = docsConfig().models['big-coder']!;
export const SMALL = docsConfig().models['small-coder']!;

/** A fresh working folder and the engine scripted to write `notes.txt` in it. */
export function scriptWriteLoop(engine: FakeUpstream) {
  const cwd = mkdtempSync(join(tmpdir(), 'sluice-claude-work-'));
  const target = join(cwd, 'notes.txt');
  const call = { id: 'call_write_notes', name: 'Write', arguments: JSON.stringify({ file_path: target, content: CONTENT }) };
  engine.reset();
  engine.setDefault('/chat/completions', toolLoop(call, FINAL, { reasoning: THOUGHT }));
  return { cwd, target, call };
}

/** What the engine received: two streamed turns, the second carrying the call and its result, never the thought. */
export function expectEngineSawTheLoop(engine: FakeUpstream, call: { id: string; arguments: string }, target: string, served: DocsModel = BIG) {
  const bodies = engine.requests.filter((r) => r.path === '/chat/completions').map((r) => r.body);
  expect(bodies).toHaveLength(2);
  const [first, second] = bodies;
  for (const body of bodies) {
    // The model the page names, Claude Code's 128k max_tokens held to the page's max_output_tokens.
    expect(body).toMatchObject({ model: served.upstream_model, stream: true, max_tokens: served.max_output_tokens });
    // metadata.user_id (Claude Code's device id) is never the engine's `user`.
    expect(body).not.toHaveProperty('user');
    const write = body.tools.find((t: any) => t.function?.name === 'Write');
    expect(write).toMatchObject({
      type: 'function',
      function: { parameters: { type: 'object', properties: { file_path: { type: 'string' }, content: { type: 'string' } }, required: ['file_path', 'content'] } },
    });
  }
  expect(first.messages.map((m: any) => m.role)).not.toContain('tool');
  expect(JSON.stringify(first.messages.filter((m: any) => m.role === 'user'))).toContain(JSON.stringify(PROMPT).slice(1, -1));
  // Claude Code's per-request billing line never reaches the engine: its prefix cache holds.
  for (const body of bodies) expect(JSON.stringify(body.messages)).not.toContain('x-anthropic-billing-header');
  const assistant = second.messages.find((m: any) => m.role === 'assistant');
  expect(assistant.tool_calls).toEqual([{ id: call.id, type: 'function', function: { name: 'Write', arguments: call.arguments } }]);
  // The result comes back as a tool message right after the call (Claude Code may add a system message after it).
  const toolMessage = second.messages[second.messages.indexOf(assistant) + 1];
  expect(toolMessage).toMatchObject({ role: 'tool', tool_call_id: call.id });
  expect(JSON.stringify(toolMessage.content)).toContain(`File created successfully at: ${target}`);
  // The earlier turn's thinking never goes back to the engine, as content or as a field.
  expect(JSON.stringify(second.messages)).not.toContain(THOUGHT.slice(0, 20));
  expect(assistant).not.toHaveProperty('reasoning_content');
  expect(assistant).not.toHaveProperty('thinking');
}
