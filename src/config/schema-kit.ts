/** Small TypeBox builders the core's schema (schema.ts) and the features' sections share. */
import { Type } from '@sinclair/typebox';

export const PositiveInt = (description: string) => Type.Integer({ minimum: 1, description });
export const NonNegative = (description: string) => Type.Number({ minimum: 0, description });
