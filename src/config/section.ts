/**
 * A feature's configuration section: its key in sluice.yaml, the TypeBox schema of that
 * key, and how it resolves (with its environment twins) into the value the feature reads
 * as `config.<key>`. The loader (load.ts) validates the file against the core's keys
 * (schema.ts) and every section in CONFIG_SECTIONS (sections.ts), then resolves each
 * section after the core's keys, collecting every problem at once.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { CoreConfig } from './config.types.js';

export type Env = Readonly<Record<string, string | undefined>>;

export interface SectionInput<File> {
  /** The section's key in the file, validated against its schema; undefined when absent. */
  file: File | undefined;
  env: Env;
  /** The directory relative paths resolve against. */
  cwd: string;
  /** The core's resolved keys (models, rate limits, …), which a section may build on. */
  core: Readonly<CoreConfig>;
  /** Each problem found, naming the key or variable and why it is wrong. */
  problems: string[];
}

export interface ConfigSection<Key extends string, Schema extends TSchema, Value> {
  key: Key;
  /** The schema of `<key>:` in sluice.yaml (the loader makes it optional). */
  schema: Schema;
  resolve(input: SectionInput<Static<Schema>>): Value;
}

/** Declares a section, keeping its key, schema and value types for the loader's `Config`. */
export const configSection = <Key extends string, Schema extends TSchema, Value>(section: ConfigSection<Key, Schema, Value>) => section;
