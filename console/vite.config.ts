/**
 * The console's build: React, served by Sluice at /console/ (hashed names under assets/,
 * which the server caches for a year), no inline scripts (the CSP forbids them), and a
 * brotli and a gzip copy of each text asset written beside it for @fastify/static's
 * preCompressed serving. The compression is a few lines of node:zlib in the closeBundle
 * hook rather than a plugin dependency.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';

const outDir = path.resolve(import.meta.dirname, '../dist/console');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [file];
  });
}

function precompress(): Plugin {
  return {
    name: 'sluice-precompress',
    apply: 'build',
    closeBundle() {
      for (const file of filesUnder(outDir).filter((f) => /\.(js|css|html|svg|json)$/.test(f))) {
        const bytes = readFileSync(file);
        writeFileSync(`${file}.br`, brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
        writeFileSync(`${file}.gz`, gzipSync(bytes, { level: 9 }));
      }
    },
  };
}

export default defineConfig({
  root: import.meta.dirname,
  base: '/console/',
  plugins: [react(), precompress()],
  build: {
    outDir,
    emptyOutDir: true,
    assetsDir: 'assets',
    // The polyfill would be an inline script; every browser the console supports has modulepreload.
    modulePreload: { polyfill: false },
    // No base64 data: URLs for small assets beyond what the CSP's img-src allows.
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: false,
  },
});
