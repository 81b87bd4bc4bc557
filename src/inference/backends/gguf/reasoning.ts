/**
 * Separates a thinking model's reasoning from its answer in a text stream:
 * `<think>…</think>` at the start of the output (or an open <think> left by the chat
 * template) is reasoning, the rest is the answer. Partial tags at chunk borders are held
 * back until they can be told apart from text.
 */
export interface SplitText {
  content: string;
  reasoning: string;
}

const OPEN = '<think>';
const CLOSE = '</think>';

/** Length of the longest suffix of `text` that is a proper prefix of `tag`. */
function partialTagAtEnd(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) if (tag.startsWith(text.slice(-n))) return n;
  return 0;
}

export class ReasoningSplitter {
  private mode: 'start' | 'reasoning' | 'content';
  private buffer = '';
  private trimNext = false;
  /** Whether any reasoning was seen (null reasoning otherwise). */
  sawReasoning: boolean;

  constructor(startsInReasoning = false) {
    this.mode = startsInReasoning ? 'reasoning' : 'start';
    this.sawReasoning = startsInReasoning;
  }

  get inReasoning(): boolean {
    return this.mode === 'reasoning';
  }

  push(text: string): SplitText {
    this.buffer += text;
    const out: SplitText = { content: '', reasoning: '' };
    for (;;) {
      if (this.mode === 'start') {
        const lead = this.buffer.trimStart();
        if (lead.startsWith(OPEN)) {
          this.buffer = lead.slice(OPEN.length);
          this.mode = 'reasoning';
          this.sawReasoning = true;
          continue;
        }
        if (OPEN.startsWith(lead)) return out; // still undecided
        this.mode = 'content';
      }
      if (this.mode === 'reasoning') {
        const at = this.buffer.indexOf(CLOSE);
        if (at < 0) {
          const keep = partialTagAtEnd(this.buffer, CLOSE);
          out.reasoning += this.buffer.slice(0, this.buffer.length - keep);
          this.buffer = this.buffer.slice(this.buffer.length - keep);
          return out;
        }
        out.reasoning += this.buffer.slice(0, at);
        this.buffer = this.buffer.slice(at + CLOSE.length);
        this.mode = 'content';
        this.trimNext = true;
      }
      if (this.trimNext) {
        // The answer after </think> usually starts with blank lines that belong to neither part.
        this.buffer = this.buffer.trimStart();
        if (this.buffer === '') return out;
        this.trimNext = false;
      }
      out.content += this.buffer;
      this.buffer = '';
      return out;
    }
  }

  /** Whatever is held back, at the end of the output. */
  flush(): SplitText {
    const rest = this.buffer;
    this.buffer = '';
    if (this.mode === 'reasoning') return { content: '', reasoning: rest };
    return { content: this.trimNext ? rest.trimStart() : rest, reasoning: '' };
  }
}
