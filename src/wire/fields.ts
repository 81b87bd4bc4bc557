/**
 * Builders for the fields of request bodies: the type, bounds and message for each kind
 * of field. Optional fields accept null (null is "not sent"). No `default` anywhere: Ajv
 * would write it into the body, and the domain decides defaults.
 */
import { Type, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { worded, type Wording } from './wording.js';

type Doc = {
  description?: string;
};

/** A JSON-schema node with a `type` list (`['string', 'null']`), which Ajv checks in one step. */
export const typed = <T = unknown>(type: string | string[], rest: Record<string, unknown> = {}, wording?: Wording): TUnsafe<T> => {
  const schema = Type.Unsafe<T>({ type, ...rest });
  return wording ? worded(schema, wording) : schema;
};

export const RequiredString = (doc: Doc = {}) =>
  typed<string>('string', { minLength: 1, ...doc }, { default: '{param} must be a non-empty string', null: '{param} is required' });

export const OptionalString = <T extends string = string>(doc: Doc & Record<string, unknown> = {}, wording: Wording = {}) =>
  Type.Optional(typed<T | null>(['string', 'null'], doc, { type: '{param} must be a string, got {got}', ...wording }));

export const OptionalBoolean = (doc: Doc = {}) =>
  Type.Optional(typed<boolean | null>(['boolean', 'null'], doc, { default: '{param} must be a boolean, got {got}' }));

export const OptionalNumber = (min: number, max: number, doc: Doc = {}) =>
  Type.Optional(
    typed<number | null>(['number', 'null'], { minimum: min, maximum: max, ...doc }, { default: `{param} must be a number between ${min} and ${max}` }),
  );

export const OptionalInteger = (min: number, doc: Doc & { maximum?: number } = {}, wording: Wording = {}) =>
  Type.Optional(
    typed<number | null>(
      ['integer', 'null'],
      { minimum: min, maximum: Number.MAX_SAFE_INTEGER, ...doc },
      { default: `{param} must be an integer of at least ${min}`, ...wording },
    ),
  );

/** An object with the given shape (its `properties` say how each is checked). */
export const OptionalShape = <T>(doc: Doc & Record<string, unknown> = {}) =>
  Type.Optional(typed<T | null>(['object', 'null'], doc, { type: '{param} must be an object, got {got}' }));

/** An object passed through (metadata, response_format): only its type is checked. */
export const OptionalObject = (doc: Doc & Record<string, unknown> = {}) => OptionalShape<Record<string, unknown>>(doc);

/** `categories`: 1 to 10 candidate labels, each with a non-blank character. */
export const OptionalLabels = () =>
  Type.Optional(
    typed<string[] | null>(
      ['array', 'null'],
      {
        minItems: 1,
        maxItems: 10,
        items: typed('string', { pattern: '\\S' }, { default: '{param} must be a non-empty string' }),
        description: 'candidate labels for zero-shot classification models (1 to 10)',
      },
      { default: '{param} must be a non-empty array of strings', maxItems: 'At most 10 candidate labels are allowed, got {count}' },
    ),
  );

/** The root of a JSON body: an object, with unknown fields allowed (OpenAI clients send many). */
export const JsonBody = <P extends Record<string, TSchema>>(properties: P, doc: Doc & Record<string, unknown> = {}) =>
  worded(Type.Object(properties, doc), { type: 'The request body must be a JSON object, got {got}' });

/** A field refused whenever it is sent (`not` keeps any other type passing). */
export const Refused = (refused: Record<string, unknown>, message: string, doc: Doc = {}) =>
  Type.Optional(worded(Type.Unsafe<unknown>({ not: refused, ...doc }), { default: message }));
