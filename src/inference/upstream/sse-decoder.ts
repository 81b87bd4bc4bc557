/**
 * Incremental Server-Sent Events decoder (WHATWG rules): bytes in as they arrive, whole
 * events out as soon as their blank line is seen. Comments (`: ping` keep-alives) and
 * unknown fields are skipped; multi-line `data:` is joined with newlines.
 */
export interface SseEvent {
  event: string | null;
  data: string;
}

export class SseDecoder {
  readonly #text = new TextDecoder('utf-8');
  #buffer = '';
  #data: string[] = [];
  #event: string | null = null;

  push(chunk: Uint8Array): SseEvent[] {
    this.#buffer += this.#text.decode(chunk, { stream: true });
    return this.#drain(false);
  }

  /** Flushes an event left without its final blank line. */
  end(): SseEvent[] {
    this.#buffer += this.#text.decode();
    return this.#drain(true);
  }

  #drain(final: boolean): SseEvent[] {
    const events: SseEvent[] = [];
    let start = 0;
    for (;;) {
      const lf = this.#buffer.indexOf('\n', start);
      const cr = this.#buffer.indexOf('\r', start);
      let end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      if (end === -1) break;
      // A lone CR at the end of the buffer may be the first half of CRLF: wait for more.
      if (end === cr && cr === this.#buffer.length - 1 && !final) break;
      const line = this.#buffer.slice(start, end);
      if (this.#buffer[end] === '\r' && this.#buffer[end + 1] === '\n') end++;
      start = end + 1;
      this.#line(line, events);
    }
    this.#buffer = this.#buffer.slice(start);
    if (final) {
      if (this.#buffer) this.#line(this.#buffer, events);
      this.#buffer = '';
      this.#line('', events);
    }
    return events;
  }

  #line(line: string, events: SseEvent[]): void {
    if (line === '') {
      if (this.#data.length > 0) events.push({ event: this.#event, data: this.#data.join('\n') });
      this.#data = [];
      this.#event = null;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.#data.push(value);
    else if (field === 'event') this.#event = value;
  }
}
