/**
 * The Messages API's configuration section, `messages:`: what becomes of a server tool no
 * engine here runs (`server_tools`: `drop`, the default, names the dropped tools in the
 * `x-sluice-dropped-tools` header; `refuse` answers 400), and the key thinking blocks are
 * signed with (SLUICE_THINKING_KEY, or SLUICE_THINKING_KEY_FILE; without one, a key made at
 * start-up, so a thinking block returned after a restart, or to another replica, is refused).
 */
import { Type } from '@sinclair/typebox';
import { envSecret } from './env.js';
import { configSection } from './section.js';

export interface MessagesConfig {
  serverTools: 'drop' | 'refuse';
  /** Null: none configured (the composition makes one at start-up). */
  thinkingKey: string | null;
}

export const messagesSection = configSection({
  key: 'messages',
  schema: Type.Object(
    {
      server_tools: Type.Optional(
        Type.Union([Type.Literal('drop'), Type.Literal('refuse')], {
          description: 'a server tool (web_search_*, code_execution_*, computer_*, bash_*, text_editor_*) no engine here runs: drop it (default), or refuse the request',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  resolve: ({ file, env, cwd, problems }): MessagesConfig => ({
    serverTools: file?.server_tools ?? 'drop',
    thinkingKey: envSecret(env, 'SLUICE_THINKING_KEY', cwd, problems),
  }),
});
