/**
 * Route options for schemas that only document. A response schema normally becomes the
 * route's serializer, which drops fields it does not list and may write numbers its own
 * way; these routes keep JSON.stringify, byte for byte what they answered before, while
 * @fastify/swagger still reads the schema. A body validated elsewhere (a multipart form
 * read part by part, a batch whose every refusal must be recorded) is documented the same
 * way: Fastify accepts it and the route's own reader checks it.
 */
import type { FastifySchemaCompiler } from 'fastify';

const stringify = (data: unknown): string => JSON.stringify(data);

/** Responses serialized by JSON.stringify, as without a schema. */
export const serializeAsBefore = { serializerCompiler: () => stringify };

const acceptAll: FastifySchemaCompiler<unknown> = () => () => true;

/** Request schemas not enforced by Fastify: the handler's own reader is the check. */
export const notValidated = { validatorCompiler: acceptAll };

/** Both: nothing about the route's behaviour changes, only the OpenAPI document. */
export const documentOnly = { ...serializeAsBefore, ...notValidated };
