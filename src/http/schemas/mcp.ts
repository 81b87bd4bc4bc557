/**
 * The MCP endpoint in the OpenAPI document: one JSON-RPC 2.0 POST. Documentation only:
 * the official SDK reads and answers the messages (src/http/routes/mcp/endpoint.ts).
 */
import { Type } from '@sinclair/typebox';

const Id = Type.Union([Type.String(), Type.Integer()], { description: 'absent on notifications' });

export const JsonRpcRequest = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Optional(Id),
    method: Type.String({ description: 'initialize, server/discover, tools/list, tools/call, ping, notifications/…' }),
    params: Type.Optional(
      Type.Object(
        {
          name: Type.Optional(Type.String({ description: 'tools/call: chat, embed, moderate, classify, extract, transcribe, decide, batch_create or batch_get' })),
          arguments: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "tools/call: the tool's input" })),
          _meta: Type.Optional(
            Type.Record(Type.String(), Type.Unknown(), {
              description: '2026-07-28: the per-request protocol version, client info and capabilities; tools/call: a payment (x402/payment, org.paymentauth/credential)',
            }),
          ),
        },
        { additionalProperties: true },
      ),
    ),
  },
  { description: 'A JSON-RPC 2.0 message of the Model Context Protocol (revisions 2026-07-28 and 2025-11-25)' },
);

export const JsonRpcResponse = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Union([Id, Type.Null()]),
    result: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'tools/call: {content, structuredContent, isError}; a refused call is a result with isError and the REST error envelope',
      }),
    ),
    error: Type.Optional(
      Type.Object({
        code: Type.Integer({ description: '-32700 parse error, -32600 invalid request, -32601 unknown method, -32602 invalid params' }),
        message: Type.String(),
        data: Type.Optional(Type.Unknown()),
      }),
    ),
  },
  { description: 'As JSON, or as one server-sent event (`text/event-stream`) when the client accepts both' },
);

/** RFC 9728 protected-resource metadata of the MCP endpoint. */
export const ProtectedResourceMetadata = Type.Object({
  resource: Type.String({ description: 'the MCP endpoint' }),
  authorization_servers: Type.Array(Type.String(), { description: "the storefront, whose POST /oauth2/token issues agent access tokens" }),
  bearer_methods_supported: Type.Array(Type.String()),
  resource_name: Type.String(),
  resource_documentation: Type.Optional(Type.String()),
});
