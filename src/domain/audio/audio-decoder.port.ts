/** The port speech routes decode audio through; src/adapters/ffmpeg implements it. */

/** The sample rate every decoder delivers: 16 kHz mono. */
export const SAMPLE_RATE = 16_000;

export interface DecodedAudio {
  samples: Float32Array;
  seconds: number;
}

export interface AudioDecoder {
  /** Throws invalid_request when the file cannot be decoded, is empty, or runs past `maxSeconds`. */
  decode(file: string, maxSeconds: number): Promise<DecodedAudio>;
}
