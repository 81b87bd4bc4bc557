/**
 * The output of one response as it is produced: reasoning, message and function_call
 * items, and the stream events that announce them (OpenAI's sequence: an item is added,
 * its content part is added, deltas, the text's done, the part's done, the item's done).
 * An item is closed when output moves to another item, and all are closed at the end.
 */
import type { AnswerEvent } from '../../domain/completions/answer-reader.js';
import { hexId } from './resource.js';
import type { NamespacedName, ResponseStreamEvent } from '../../domain/responses/responses.types.js';

type Json = Record<string, unknown>;

interface Part {
  type: 'output_text' | 'refusal' | 'reasoning_text';
  value: string;
  logprobs: Json[];
}

interface Item {
  kind: 'reasoning' | 'message' | 'function_call';
  id: string;
  outputIndex: number;
  parts: Part[];
  callId: string;
  name: string;
  arguments: string;
  done: boolean;
  /** A reasoning item's sealed text, once it is closed (when the request asked for it). */
  sealed?: string;
}

export interface OutputOptions {
  /** Function calls beyond this many are left out. */
  maxToolCalls: number | null;
  /** The engine's flat name of each namespaced function → its namespace and name. */
  namespaced: ReadonlyMap<string, NamespacedName>;
  /** Seals a reasoning item's text into its `encrypted_content`; null: none is sent. */
  seal: ((text: string) => string) | null;
}

export interface ToolCallDelta {
  index: number;
  id?: string;
  name?: string;
  arguments?: string;
}

const PREFIX = { reasoning: 'rs_', message: 'msg_', function_call: 'fc_' } as const;

function partJson(part: Part): Json {
  if (part.type === 'refusal') return { type: 'refusal', refusal: part.value };
  if (part.type === 'reasoning_text') return { type: 'reasoning_text', text: part.value };
  return { type: 'output_text', text: part.value, annotations: [], logprobs: part.logprobs };
}

function itemJson(item: Item, status: string, namespaced: OutputOptions['namespaced']): Json {
  if (item.kind === 'reasoning') {
    const json: Json = { id: item.id, type: 'reasoning', content: item.parts.map(partJson), summary: [] };
    if (item.sealed !== undefined) json.encrypted_content = item.sealed;
    return json;
  }
  if (item.kind === 'message') return { type: 'message', id: item.id, status, role: 'assistant', content: item.parts.map(partJson) };
  const owner = namespaced.get(item.name);
  const named = owner ? { name: owner.name, namespace: owner.namespace } : { name: item.name };
  return { type: 'function_call', id: item.id, call_id: item.callId, ...named, arguments: item.arguments, status };
}

export class ResponseOutput {
  readonly #items: Item[] = [];
  readonly #tools = new Map<number, Item>();
  readonly #pending: ResponseStreamEvent[] = [];
  #current: Item | null = null;
  #sequence = 0;

  constructor(private readonly options: OutputOptions) {}

  #json(item: Item, status: string): Json {
    return itemJson(item, status, this.options.namespaced);
  }

  /** Queues an event with the next sequence number. */
  event(type: string, fields: Json = {}): void {
    this.#pending.push(Object.assign({ type, sequence_number: this.#sequence++ }, fields) as ResponseStreamEvent);
  }

  /** The events queued since the last drain. */
  drain(): ResponseStreamEvent[] {
    return this.#pending.splice(0);
  }

  /** One event of the engine's answer (answer-reader.ts); its finish, usage and carried fields are the run's to read. */
  read(event: AnswerEvent): void {
    if (event.type === 'text') this.text(event.text, event.logprobs);
    else if (event.type === 'reasoning') this.reasoning(event.text);
    else if (event.type === 'refusal') this.refusal(event.text);
    else if (event.type === 'tool_call') {
      // A whole call an in-process runtime made is numbered apart from an engine's stream indexes.
      this.toolCall({ index: event.index ?? -1 - this.#tools.size, id: event.id, name: event.name, arguments: event.arguments });
    }
  }

  reasoning(delta: string): void {
    if (delta === '') return;
    const item = this.#open('reasoning');
    this.#append(item, 'reasoning_text', delta, null, 'response.reasoning_text.delta');
  }

  text(delta: string, logprobs: Json[] | null): void {
    if (delta === '') return;
    const item = this.#open('message');
    this.#append(item, 'output_text', delta, logprobs, 'response.output_text.delta');
  }

  refusal(delta: string): void {
    if (delta === '') return;
    this.#append(this.#open('message'), 'refusal', delta, null, 'response.refusal.delta');
  }

  toolCall(delta: ToolCallDelta): void {
    let item = this.#tools.get(delta.index);
    if (!item) {
      if (this.options.maxToolCalls !== null && this.#tools.size >= this.options.maxToolCalls) return;
      // The reasoning or message before the call is done before the call is added (OpenAI's order; Codex keeps items in the order they are done).
      if (this.#current?.kind !== 'function_call') this.#closeCurrent('completed');
      item = this.#add('function_call');
      item.callId = delta.id ?? hexId('call_');
      item.name = delta.name ?? '';
      this.#tools.set(delta.index, item);
      this.event('response.output_item.added', { output_index: item.outputIndex, item: this.#json(item, 'in_progress') });
    } else if (this.#current !== item) {
      this.#closeCurrent('completed');
      this.#current = item;
    }
    if (delta.name && item.name === '') item.name = delta.name;
    if (delta.arguments) {
      item.arguments += delta.arguments;
      this.event('response.function_call_arguments.delta', { item_id: item.id, output_index: item.outputIndex, delta: delta.arguments });
    }
  }

  /** Closes every open item; `status` is the message's (`incomplete` when cut short by the cap). */
  close(status: 'completed' | 'incomplete'): void {
    if (this.#items.length === 0) this.#emptyMessage();
    this.#closeCurrent(status);
    for (const item of this.#items) if (!item.done) this.#closeItem(item, status);
  }

  /** The output items as they stand. */
  items(status: 'completed' | 'incomplete' | 'in_progress'): Json[] {
    return this.#items.map((item) => this.#json(item, item.done ? (item.kind === 'function_call' ? 'completed' : status) : 'in_progress'));
  }

  /** A message with empty text: what a model that said nothing answered. */
  #emptyMessage(): void {
    const item = this.#open('message');
    const part: Part = { type: 'output_text', value: '', logprobs: [] };
    item.parts.push(part);
    this.event('response.content_part.added', { item_id: item.id, output_index: item.outputIndex, content_index: 0, part: partJson(part) });
  }

  /** The open item of `kind`, or a new one (closing the one open before). */
  #open(kind: 'reasoning' | 'message'): Item {
    if (this.#current?.kind === kind) return this.#current;
    this.#closeCurrent('completed');
    const item = this.#add(kind);
    this.event('response.output_item.added', { output_index: item.outputIndex, item: this.#json(item, 'in_progress') });
    return item;
  }

  #add(kind: Item['kind']): Item {
    const item: Item = { kind, id: hexId(PREFIX[kind]), outputIndex: this.#items.length, parts: [], callId: '', name: '', arguments: '', done: false };
    this.#items.push(item);
    this.#current = item;
    return item;
  }

  #append(item: Item, type: Part['type'], delta: string, logprobs: Json[] | null, event: string): void {
    let part = item.parts.at(-1);
    if (part?.type !== type) {
      if (part) this.#partDone(item, part);
      part = { type, value: '', logprobs: [] };
      item.parts.push(part);
      this.event('response.content_part.added', { item_id: item.id, output_index: item.outputIndex, content_index: item.parts.length - 1, part: partJson(part) });
    }
    part.value += delta;
    if (logprobs) part.logprobs.push(...logprobs);
    const fields: Json = { item_id: item.id, output_index: item.outputIndex, content_index: item.parts.length - 1, delta };
    if (type === 'output_text') fields.logprobs = logprobs ?? [];
    this.event(event, fields);
  }

  #partDone(item: Item, part: Part): void {
    const where = { item_id: item.id, output_index: item.outputIndex, content_index: item.parts.indexOf(part) };
    if (part.type === 'output_text') this.event('response.output_text.done', { ...where, text: part.value, logprobs: part.logprobs });
    else if (part.type === 'refusal') this.event('response.refusal.done', { ...where, refusal: part.value });
    else this.event('response.reasoning_text.done', { ...where, text: part.value });
    this.event('response.content_part.done', { ...where, part: partJson(part) });
  }

  #closeCurrent(status: 'completed' | 'incomplete'): void {
    const item = this.#current;
    this.#current = null;
    if (item && !item.done) this.#closeItem(item, status);
  }

  #closeItem(item: Item, status: 'completed' | 'incomplete'): void {
    item.done = true;
    if (item.kind === 'function_call') {
      const name = this.options.namespaced.get(item.name)?.name ?? item.name;
      this.event('response.function_call_arguments.done', { item_id: item.id, output_index: item.outputIndex, name, arguments: item.arguments });
      this.event('response.output_item.done', { output_index: item.outputIndex, item: this.#json(item, 'completed') });
      return;
    }
    const last = item.parts.at(-1);
    if (last) this.#partDone(item, last);
    if (item.kind === 'reasoning' && this.options.seal) item.sealed = this.options.seal(item.parts.map((part) => part.value).join(''));
    this.event('response.output_item.done', { output_index: item.outputIndex, item: this.#json(item, status) });
  }
}
