/**
 * What a request's tools become: the chat tools the engine receives, the tools the
 * resource lists, the hosted tools found (the service drops or refuses them:
 * `responses.hosted_tools`), and the qualified names of namespaced functions.
 *
 * A namespace's function reaches the engine as one flat chat tool named
 * `<namespace>__<name>` (two underscores: Codex's own flat form of a namespaced tool);
 * the engine's call of that name comes back as a function_call of `name` with
 * `namespace` (the writer reads `namespaced`).
 */
import { qualifiedToolName as qualifiedName } from '../../domain/responses/input-items.js';
import { invalidRequest } from '../../domain/shared/errors.js';
import type { HostedTool, NamespacedName } from '../../domain/responses/responses.types.js';
import type { FunctionToolIn } from './items.js';
import { HOSTED_TOOL, type NamespaceToolIn, type ToolIn } from './tools.js';

type Json = Record<string, unknown>;

export interface ToolPlan {
  chat: Json[];
  echo: Json[];
  hosted: HostedTool[];
  namespaced: Map<string, NamespacedName>;
}

function chatTool(tool: FunctionToolIn, name = tool.name): Json {
  const fn: Json = { name };
  if (typeof tool.description === 'string') fn.description = tool.description;
  if (tool.parameters) fn.parameters = tool.parameters;
  if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
  return { type: 'function', function: fn };
}

/** The tool as the resource lists it (Open Responses' FunctionTool: every field present). */
const echoedFunction = (tool: FunctionToolIn): Json => ({
  type: 'function',
  name: tool.name,
  description: tool.description ?? null,
  parameters: tool.parameters ?? null,
  strict: tool.strict ?? null,
});

const echoedNamespace = (tool: NamespaceToolIn): Json => ({
  type: 'namespace',
  name: tool.name,
  description: tool.description ?? null,
  tools: tool.tools.map(echoedFunction),
});

export function toolPlanOf(tools: readonly ToolIn[] | null | undefined): ToolPlan {
  const plan: ToolPlan = { chat: [], echo: [], hosted: [], namespaced: new Map() };
  const taken = new Map<string, string>();
  const claim = (name: string, param: string) => {
    const earlier = taken.get(name);
    if (earlier !== undefined) throw invalidRequest(`${param} names the function "${name}" that ${earlier} names too`, param);
    taken.set(name, param);
  };
  for (const [i, tool] of (tools ?? []).entries()) {
    if (tool.type === 'function') {
      const fn = tool as FunctionToolIn;
      claim(fn.name, `tools[${i}].name`);
      plan.chat.push(chatTool(fn));
      plan.echo.push(echoedFunction(fn));
    } else if (tool.type === 'namespace') {
      const group = tool as NamespaceToolIn;
      for (const [j, fn] of group.tools.entries()) {
        const flat = qualifiedName(group.name, fn.name);
        claim(flat, `tools[${i}].tools[${j}].name`);
        plan.namespaced.set(flat, { namespace: group.name, name: fn.name });
        plan.chat.push(chatTool(fn, flat));
      }
      plan.echo.push(echoedNamespace(group));
    } else if (HOSTED_TOOL.test(tool.type)) {
      plan.hosted.push({ type: tool.type, param: `tools[${i}].type` });
    }
  }
  return plan;
}
