/**
 * The GGUF runtime for the tests that load GGUF models. node-llama-cpp is not installed by
 * `npm ci`: `sluice runtimes add gguf` puts it into a runtimes folder, and the tests find
 * that folder through SLUICE_RUNTIMES_DIR (CI installs it once into a cache folder). Without
 * it those tests are skipped, unless SLUICE_TEST_REQUIRE_GGUF=1 says it must be there.
 */
import { ggufRuntimeState } from '../../src/inference/backends/gguf/runtime.js';

const dir = process.env.SLUICE_RUNTIMES_DIR || null;

/** The runtimes folder holding the GGUF runtime, or null when there is none. */
export const GGUF_RUNTIMES_DIR: string | null = dir && (await ggufRuntimeState(dir)).installed ? dir : null;

if (!GGUF_RUNTIMES_DIR && process.env.SLUICE_TEST_REQUIRE_GGUF === '1') {
  throw new Error(`GGUF runtime required (SLUICE_TEST_REQUIRE_GGUF=1) but SLUICE_RUNTIMES_DIR (${dir ?? 'unset'}) holds none: run \`sluice runtimes add gguf\` with it set`);
}

/** The environment a test server needs to load GGUF models (servers do not inherit the test's own). */
export const GGUF_RUNTIME_ENV: Record<string, string> = GGUF_RUNTIMES_DIR ? { SLUICE_RUNTIMES_DIR: GGUF_RUNTIMES_DIR } : {};
