/**
 * Each request body is compiled once, by one Ajv instance, and the same function checks
 * it wherever it arrives: on its route (the route's validator compiler hands Fastify the
 * compiled function) and on a batch line (parseBody). A refused body becomes the worded
 * AppError the route would answer.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import type { Static, TSchema } from '@sinclair/typebox';
import { invalidRequest } from '../domain/shared/errors.js';
import { WORDING_KEYWORD, wordValidationIssue, type ValidationIssue } from './wording.js';

/**
 * verbose: a refused value and its schema node ride on the error, for the wording;
 * `x-error` is that wording, a keyword Ajv must know in strict mode. allowUnionTypes:
 * OpenAI's string-or-array fields are `type: ['string', 'array']`, so a fault is reported
 * at the field, not as a failed branch of an anyOf. strictTuples off: a tuple reads "the
 * first element" (moderations' input), with the rest left open on purpose.
 */
export const AJV_OPTIONS = {
  coerceTypes: false,
  removeAdditional: false,
  allErrors: false,
  verbose: true,
  allowUnionTypes: true,
  strictTuples: false,
  keywords: [WORDING_KEYWORD],
};

const ajv = new Ajv(AJV_OPTIONS);
const compiled = new WeakMap<TSchema, ValidateFunction>();

/** The schema's validator, compiled on first use and kept with the schema. */
export function validatorOf(schema: TSchema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** A route's `validatorCompiler`: the body's shared validator, so a route and a batch line run one function. */
export const wireValidatorCompiler = ({ schema }: { schema: unknown }): ValidateFunction => validatorOf(schema as TSchema);

/** The body as its schema's type, or the worded 400 the route would answer for it. */
export function parseBody<T extends TSchema>(schema: T, body: unknown): Static<T> {
  const validate = validatorOf(schema);
  if (validate(body)) return body as Static<T>;
  const { message, param, code } = wordValidationIssue(validate.errors![0] as ValidationIssue, 'body');
  throw invalidRequest(message, param, code);
}
