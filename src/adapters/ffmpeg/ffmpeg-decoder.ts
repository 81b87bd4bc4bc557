/**
 * Decodes any audio (or video) file ffmpeg understands to 16 kHz mono float32 PCM, in
 * a child process with its stdout piped: the server's event loop only collects bytes.
 * Decoding stops just past the duration limit, so an over-long file costs at most that
 * much work and memory. The system ffmpeg wins when it is on PATH; otherwise the binary
 * bundled by @ffmpeg-installer/ffmpeg.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { AppError, invalidRequest } from '../../domain/shared/errors.js';
import { SAMPLE_RATE, type AudioDecoder, type DecodedAudio } from '../../domain/audio/audio-decoder.port.js';

const DECODE_TIMEOUT_MS = 300_000;

function onPath(binary: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, binary);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

let resolved: string | null = null;
export function ffmpegPath(): string {
  resolved ??= onPath('ffmpeg') ?? (createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path: string }).path;
  return resolved;
}

const undecodable = () =>
  invalidRequest('The audio file could not be decoded. Supported formats: flac, m4a, mp3, mp4, mpeg, mpga, oga, ogg, wav, webm', 'file', 'invalid_audio');

export class FfmpegDecoder implements AudioDecoder {
  constructor(private readonly binary: string = ffmpegPath()) {}

  async decode(file: string, maxSeconds: number): Promise<DecodedAudio> {
    // A little past the limit, so "longer than the limit" is observable without decoding it all.
    const args = ['-nostdin', '-hide_banner', '-loglevel', 'error', '-i', file, '-t', String(maxSeconds + 0.5), '-vn', '-ac', '1', '-ar', String(SAMPLE_RATE), '-f', 'f32le', 'pipe:1'];
    const { code, stdout } = await this.run(args);
    if (code !== 0) throw undecodable();
    const samples = new Float32Array(Math.floor(stdout.length / 4));
    new Uint8Array(samples.buffer).set(stdout.subarray(0, samples.length * 4));
    const seconds = samples.length / SAMPLE_RATE;
    if (samples.length === 0) throw invalidRequest('The audio file contains no audio', 'file', 'invalid_audio');
    if (seconds > maxSeconds) {
      throw invalidRequest(`Audio is too long: the limit is ${maxSeconds / 60} minutes`, 'file', 'audio_too_long');
    }
    return { samples, seconds };
  }

  private run(args: string[]): Promise<{ code: number | null; stdout: Buffer }> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.binary, args, { stdio: ['ignore', 'pipe', 'ignore'] });
      const chunks: Buffer[] = [];
      child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
      const timer = setTimeout(() => child.kill('SIGKILL'), DECODE_TIMEOUT_MS);
      child.on('error', (err) => {
        clearTimeout(timer);
        reject(new AppError('internal', 'The audio decoder could not be started', { code: 'audio_decoder_unavailable', cause: err, expose: true }));
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout: Buffer.concat(chunks) });
      });
    });
  }
}
