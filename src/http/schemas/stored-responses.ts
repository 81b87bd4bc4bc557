/** The stored-response routes' parameters and answers (GET, DELETE, input_items, cancel). */
import { Type } from '@sinclair/typebox';
import { typed } from '../../wire/fields.js';

export const ResponseIdParams = Type.Object({ response_id: Type.String({ description: 'a response id (`resp_…`)' }) });

export const RetrieveResponseQuery = Type.Object({
  stream: Type.Optional(
    typed<string>('string', { enum: ['true', 'false'], description: '`true`: the events of a background response, as server-sent events, then those still to come' }, {
      default: 'stream must be true or false',
    }),
  ),
  starting_after: Type.Optional(Type.String({ description: 'with stream=true: only events whose sequence_number is greater than this' })),
  include: Type.Optional(Type.Unknown({ description: 'accepted and ignored' })),
});

export const InputItemsQuery = Type.Object({
  after: Type.Optional(Type.String({ description: 'an item id: the `last_id` of the previous page' })),
  limit: Type.Optional(Type.String({ description: 'integer 1..100, default 20' })),
  order: Type.Optional(
    typed<'asc' | 'desc'>('string', { enum: ['asc', 'desc'], description: '`desc` (default): the last input item first; `asc`: in input order' }, {
      default: 'order must be one of asc, desc',
    }),
  ),
  include: Type.Optional(Type.Unknown({ description: 'accepted and ignored' })),
});

export const ResponseDeleted = Type.Object({
  id: Type.String(),
  object: Type.Literal('response.deleted'),
  deleted: Type.Literal(true),
});

export const InputItemList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(
    Type.Object(
      { id: Type.String(), type: Type.String({ description: '`message`, `function_call`, `function_call_output`, `reasoning`, …' }) },
      { additionalProperties: true, description: 'an input item as it was sent, with its id; a message\'s text content as an `input_text` part' },
    ),
  ),
  first_id: typed(['string', 'null'], {}),
  last_id: typed(['string', 'null'], {}),
  has_more: Type.Boolean(),
});

export const ResponseEventStream = Type.String({
  description: 'text/event-stream: `event: <type>` and `data: <event>` per stored event (each with its sequence_number), until the response ends',
});
