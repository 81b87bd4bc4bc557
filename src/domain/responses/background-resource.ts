/**
 * The object a background response answers with at once (`queued`), before a worker
 * runs it: the request's settings echoed, no output, no usage yet.
 */
export function queuedResource(id: string, body: Record<string, unknown>, createdAt: number): Record<string, unknown> {
  const reasoning = (body.reasoning ?? {}) as { effort?: unknown };
  const text = (body.text ?? null) as { format?: unknown } | null;
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status: 'queued',
    background: true,
    completed_at: null,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? body.max_tokens ?? null,
    model: body.model,
    output: [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: reasoning.effort ?? null, summary: null },
    store: true,
    temperature: body.temperature ?? 1,
    text: { format: text?.format ?? { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? 'auto',
    usage: null,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  };
}

/** A background response that ends without its run's own answer: failed, with why. */
export function failedResource(resource: Record<string, unknown>, error: { code: string; message: string }): Record<string, unknown> {
  return { ...resource, status: 'failed', completed_at: null, error };
}
