/** The moderations wire (`POST /v1/moderations`): the 13 categories' flags and scores, never streamed. */
import type { WireFormat } from '../wire-format.js';
import { ModerationsBody, type ModerationsRequestBody } from './body.js';
import { ModerationResponse } from './response.js';

export const moderationsWire: WireFormat<ModerationsRequestBody> = {
  path: '/moderations',
  summary: 'Classify text against the 13 moderation categories',
  body: ModerationsBody,
  response: ModerationResponse,
  serializedBySchema: false,
  run: (services, caller, body, context) => services.moderations.create(caller, body, context),
  gateway: false,
  batch: { serves: (model) => model.entry.routes.includes('moderations') },
};
