/**
 * The Messages API's configuration section, `messages:`: what becomes of a server tool no
 * engine here runs (`server_tools`: `drop`, the default, names the dropped tools in the
 * `x-sluice-dropped-tools` header; `refuse` answers 400). Thinking blocks are signed under
 * the server's reasoning secrets (`responses.reasoning_keys`).
 */
import { Type } from '@sinclair/typebox';
import { configSection } from './section.js';

export interface MessagesConfig {
  serverTools: 'drop' | 'refuse';
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
  resolve: ({ file }): MessagesConfig => ({ serverTools: file?.server_tools ?? 'drop' }),
});
