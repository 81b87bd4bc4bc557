/** The MCP endpoint's configuration section, `mcp:`: where it is mounted on the main listener. */
import { Type } from '@sinclair/typebox';
import { configSection } from './section.js';

export interface McpConfig {
  prefix: string;
}

export const mcpSection = configSection({
  key: 'mcp',
  schema: Type.Object(
    {
      prefix: Type.Optional(Type.String({ pattern: '^/[A-Za-z0-9/_-]*$', description: 'mount path of the MCP endpoint on the main listener (default /mcp)' })),
    },
    { additionalProperties: false },
  ),
  resolve: ({ file }): McpConfig => ({ prefix: (file?.prefix ?? '/mcp').replace(/\/+$/, '') || '/mcp' }),
});
