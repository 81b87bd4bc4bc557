/**
 * The Responses API's input items as the domain reads them: messages (with text, image,
 * file and audio parts), function calls, their outputs and reasoning. A request's input
 * and a stored conversation are lists of these; the wire's body schema
 * (src/wire/responses/items.ts) checks a request's against them.
 */
export type ResponseContentPartIn =
  | { type: 'input_text' | 'output_text' | 'text'; text: string }
  | { type: 'input_image'; image_url?: string | null; file_id?: string | null; detail?: string | null }
  | { type: 'input_file'; file_data?: string | null; file_id?: string | null; file_url?: string | null; filename?: string | null }
  | { type: 'input_audio'; input_audio: { data: string; format: string } }
  | { type: 'refusal'; refusal: string };

export interface MessageItemIn {
  type?: 'message' | null;
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content: string | ResponseContentPartIn[];
  id?: string | null;
  status?: string | null;
  name?: string | null;
  tool_call_id?: string | null;
}

export interface FunctionCallItemIn {
  type: 'function_call';
  call_id: string;
  name: string;
  /** The namespace tool the function belongs to (OpenAI's function_call of a namespaced function). */
  namespace?: string | null;
  arguments: string;
  id?: string | null;
  status?: string | null;
}

export interface FunctionCallOutputItemIn {
  type: 'function_call_output';
  call_id: string;
  output: string | ResponseContentPartIn[];
  id?: string | null;
  status?: string | null;
}

export interface ReasoningItemIn {
  type: 'reasoning';
  id?: string | null;
  summary?: unknown[] | null;
  content?: Array<{ type?: string; text?: string }> | null;
  encrypted_content?: string | null;
}

export type ResponseInputItemIn = MessageItemIn | FunctionCallItemIn | FunctionCallOutputItemIn | ReasoningItemIn;
