/** What an operator does with one target's outbox: list messages by state, replay a dead letter. */
import { AppError } from '../shared/errors.js';
import type { Clock } from '../shared/clock.js';
import type { Page } from '../shared/pagination.js';
import type { OutboxMessage, OutboxState, OutboxStore } from './outbox.types.js';

export class OutboxAdmin {
  constructor(
    private readonly store: OutboxStore,
    private readonly target: string,
    private readonly clock: Clock,
    /** Called after a replay: the worker should look at once. */
    private readonly onReplayed: () => void,
  ) {}

  list(state: OutboxState, limit: number, after?: string): Promise<Page<OutboxMessage>> {
    return this.store.list(this.target, state, limit, after);
  }

  /** The dead letter `id` back to pending with a fresh set of attempts; 404 when there is no such dead letter. */
  async replay(id: string): Promise<OutboxMessage> {
    const message = await this.store.replay(this.target, id, this.clock.nowMs());
    if (!message) throw new AppError('not_found', `No dead settlement with id ${id}`, { code: 'settlement_not_found', param: 'id' });
    this.onReplayed();
    return message;
  }
}
