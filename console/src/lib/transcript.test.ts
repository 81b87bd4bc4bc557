import { describe, expect, it } from 'vitest';
import { audioProblem, canRecord, MAX_AUDIO_BYTES, microphoneProblem, readTranscript, recordingName, timestamp, transcriptionFields } from './transcript.js';

describe('the transcription request', () => {
  it('asks for verbose_json with segment timestamps, language and prompt only when given', () => {
    expect(transcriptionFields({ model: 'whisper-tiny', language: '', prompt: ' ' })).toEqual([
      ['model', 'whisper-tiny'],
      ['response_format', 'verbose_json'],
      ['timestamp_granularities[]', 'segment'],
    ]);
    expect(transcriptionFields({ model: 'w', language: ' EN', prompt: 'Names: Ada' }).slice(3)).toEqual([
      ['language', 'en'],
      ['prompt', 'Names: Ada'],
    ]);
  });

  it('refuses a file the route would refuse, before sending it', () => {
    expect(audioProblem({ name: 'a.wav', size: 10 })).toBeNull();
    expect(audioProblem({ name: 'A.MP3', size: MAX_AUDIO_BYTES })).toBeNull();
    expect(audioProblem({ name: 'a.wav', size: 0 })).toBe('a.wav is empty');
    expect(audioProblem({ name: 'a.wav', size: MAX_AUDIO_BYTES + 1 })).toBe('a.wav is 25.0 MB; the limit is 25 MB');
    expect(audioProblem({ name: 'notes.txt', size: 5 })).toBe('notes.txt is not one of flac, m4a, mp3, mp4, mpeg, mpga, oga, ogg, wav, webm');
  });
});

describe('the transcript', () => {
  it('writes timestamps as m:ss.ss, with hours from an hour', () => {
    expect(timestamp(0)).toBe('0:00.00');
    expect(timestamp(3.2)).toBe('0:03.20');
    expect(timestamp(75.456)).toBe('1:15.46');
    expect(timestamp(3723.5)).toBe('1:02:03.50');
  });

  it('reads a verbose_json answer', () => {
    const t = readTranscript({
      task: 'transcribe',
      language: 'english',
      duration: 31.5,
      text: ' hello there',
      segments: [
        { id: 0, seek: 0, start: 0, end: 2.5, text: ' hello', tokens: [1] },
        { id: 1, seek: 3000, start: 30, end: 31.5, text: ' there ', tokens: [2] },
      ],
    });
    expect(t).toEqual({
      text: ' hello there',
      language: 'english',
      duration: 31.5,
      segments: [
        { id: 0, start: 0, end: 2.5, text: 'hello' },
        { id: 1, start: 30, end: 31.5, text: 'there' },
      ],
    });
    expect(readTranscript({ text: 'x' })).toEqual({ text: 'x', language: null, duration: null, segments: [] });
  });
});

describe('recording', () => {
  it('is offered only with MediaRecorder and getUserMedia', () => {
    class FakeRecorder {}
    expect(canRecord({ MediaRecorder: FakeRecorder, navigator: { mediaDevices: { getUserMedia: () => null } } })).toBe(true);
    expect(canRecord({ navigator: { mediaDevices: { getUserMedia: () => null } } })).toBe(false);
    expect(canRecord({ MediaRecorder: FakeRecorder, navigator: {} })).toBe(false);
  });

  it('names the recording by its container and says why the microphone failed', () => {
    expect(recordingName('audio/webm;codecs=opus')).toBe('recording.webm');
    expect(recordingName('audio/ogg; codecs=opus')).toBe('recording.ogg');
    expect(recordingName('audio/mp4')).toBe('recording.mp4');
    const named = (name: string) => Object.assign(new Error('x'), { name });
    expect(microphoneProblem(named('NotFoundError'))).toBe('No microphone was found: choose an audio file instead.');
    expect(microphoneProblem(named('NotAllowedError'))).toBe('The browser did not allow the microphone: choose an audio file instead.');
    expect(microphoneProblem(new Error('busy'))).toBe('Recording could not start (busy): choose an audio file instead.');
  });
});
