/**
 * The moderation categories `/v1/moderations` answers, shared by the moderations service,
 * the backends that score them and the classifier packs' moderation label set.
 */
/** The 13 moderation categories in OpenAI's order: every `/v1/moderations` result answers each, in this order. */
export const MODERATION_CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
] as const;

export type ModerationCategory = (typeof MODERATION_CATEGORIES)[number];
