/**
 * A chat call's stream as a wire's stream: each event written by the wire's writer, the
 * events it has no frame for left out. Iterating it starts the chat call's relay, and
 * stopping it stops the relay (which settles what was delivered); never started, the
 * chat call releases the hold when the client leaves.
 */
import type { ChatStreamEvent } from '../domain/models/inference-backend.port.js';

export async function* writtenStream<T>(events: AsyncIterable<ChatStreamEvent>, write: (event: ChatStreamEvent) => T | null): AsyncGenerator<T> {
  for await (const event of events) {
    const written = write(event);
    if (written !== null) yield written;
  }
}
