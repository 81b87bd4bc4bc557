/**
 * Records a clip from the microphone with MediaRecorder and hands it over as a File. Shown
 * only where the browser has MediaRecorder and getUserMedia; a missing microphone or a
 * refused permission is said in words, and choosing a file still works.
 */
import { useEffect, useRef, useState } from 'react';
import { canRecord, microphoneProblem, recordingName } from '../lib/transcript.js';

export function Recorder({ onRecorded }: { onRecorded: (file: File) => void }) {
  const [recording, setRecording] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const recorder = useRef<MediaRecorder | null>(null);
  useEffect(() => () => recorder.current?.stream.getTracks().forEach((t) => t.stop()), []);
  if (!canRecord(window)) return <p className="sub">This browser cannot record here; choose an audio file.</p>;

  const start = async () => {
    setProblem(null);
    try {
      const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
      const media = new MediaRecorder(stream);
      const chunks: Blob[] = [];
      media.ondataavailable = (event) => chunks.push(event.data);
      media.onstop = () => {
        stream.getTracks().forEach((t) => t.stop());
        const type = media.mimeType || 'audio/webm';
        onRecorded(new File(chunks, recordingName(type), { type }));
      };
      media.start();
      recorder.current = media;
      setRecording(true);
    } catch (err) {
      setProblem(microphoneProblem(err));
    }
  };
  const stop = () => {
    recorder.current?.stop();
    recorder.current = null;
    setRecording(false);
  };

  return (
    <div className="actions">
      {recording ? (
        <button type="button" className="danger" onClick={stop}>
          Stop recording
        </button>
      ) : (
        <button type="button" className="secondary" onClick={() => void start()}>
          Record from the microphone
        </button>
      )}
      {recording && (
        <span role="status" className="sub">
          Recording…
        </span>
      )}
      {problem && (
        <p role="alert" className="sub" data-testid="microphone-problem">
          {problem}
        </p>
      )}
    </div>
  );
}
