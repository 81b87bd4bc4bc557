/**
 * Streams a batch input once: validates every line (first violation wins, with its
 * 1-based line) and plans the shards the runner will lease. Memory is one line plus one
 * chunk, and the Set of custom_ids (bounded by the 50,000-line limit).
 */
import { isUtf8 } from 'node:buffer';
import { MAX_INPUT_BYTES, MAX_INPUT_LINES, MAX_LINE_BYTES, type ShardPlan } from './batch.types.js';
import {
  checkEndpointMatchesFile,
  checkInputLine,
  inputTooLarge,
  lineNotJson,
  lineTooDeep,
  lineTooLarge,
  newLineRulesState,
  noLines,
  tooManyLines,
} from './batch-input.js';
import { splitJsonlLines } from './jsonl-lines.js';
import { MAX_JSON_DEPTH, jsonNestsDeeperThan } from '../shared/json-depth.js';

export interface ValidatedInput {
  totalLines: number;
  url: string;
  /** The first line's `body.model`, when it is a string. */
  model: string | null;
  shards: ShardPlan[];
}

export interface ValidateOptions {
  endpoint: string;
  shardLines: number;
  /** The endpoints a line may name; default: the spec's (chat completions only). */
  endpoints?: ReadonlySet<string>;
}

interface OpenShard {
  firstLine: number;
  startByte: number;
  lineCount: number;
}

/** Throws the first violation (an AppError); resolves with the plan when the file is valid. */
export async function validateBatchInput(
  source: AsyncIterable<Buffer | Uint8Array | string>,
  options: ValidateOptions,
): Promise<ValidatedInput> {
  const state = newLineRulesState(options.endpoints);
  const shards: ShardPlan[] = [];
  let open: OpenShard = { firstLine: 1, startByte: 0, lineCount: 0 };
  let total = 0;
  let lastLineNo = 0;
  let endByte = 0;

  for await (const line of splitJsonlLines(source, { maxLineBytes: MAX_LINE_BYTES })) {
    lastLineNo = line.no;
    endByte = line.end;
    if (line.end > MAX_INPUT_BYTES) throw inputTooLarge();
    if (line.oversize) throw lineTooLarge(line.no);
    if (line.blank) continue;
    total += 1;
    if (total > MAX_INPUT_LINES) throw tooManyLines();
    if (!isUtf8(line.bytes)) throw lineNotJson(line.no);
    const text = line.bytes.toString('utf8');
    // Before parsing: the runner stringifies the line's body, which a deep one overflows.
    if (jsonNestsDeeperThan(text, MAX_JSON_DEPTH)) throw lineTooDeep(line.no);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw lineNotJson(line.no);
    }
    const violation = checkInputLine(value, line.no, state);
    if (violation) throw violation;
    if (open.lineCount === options.shardLines) {
      shards.push(closeShard(open, shards.length, line.no - 1, line.start));
      open = { firstLine: line.no, startByte: line.start, lineCount: 0 };
    }
    open.lineCount += 1;
  }
  if (total === 0 || state.url === null) throw noLines();
  const mismatch = checkEndpointMatchesFile(options.endpoint, state.url);
  if (mismatch) throw mismatch;
  shards.push(closeShard(open, shards.length, lastLineNo, endByte));
  return { totalLines: total, url: state.url, model: state.model, shards };
}

function closeShard(open: OpenShard, shardNo: number, lastLine: number, endByte: number): ShardPlan {
  return { shardNo, firstLine: open.firstLine, lastLine, startByte: open.startByte, endByte, lineCount: open.lineCount };
}
