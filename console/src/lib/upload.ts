/**
 * File uploads with progress: XMLHttpRequest, because fetch reports no upload progress.
 * The size limit is checked before any byte is sent.
 */
import { API_BASE, errorFromAnswer, requestHeaders } from './api.js';
import type { FileObject } from './types.js';

/** The Files API's limit per file (the server refuses larger ones with 413). */
export const MAX_UPLOAD_BYTES = 100 * 1024 * 1024;

/** Why `file` cannot be uploaded, or null. */
export function uploadProblem(file: { size: number; name: string }): string | null {
  if (file.size === 0) return `${file.name} is empty`;
  if (file.size > MAX_UPLOAD_BYTES) return `${file.name} is ${(file.size / 1024 / 1024).toFixed(1)} MB; the limit is 100 MB`;
  return null;
}

export function uploadFile(file: File, purpose: string, onProgress: (fraction: number) => void): Promise<FileObject> {
  const form = new FormData();
  form.append('purpose', purpose);
  form.append('file', file, file.name);
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `${API_BASE}/v1/files`);
    for (const [name, value] of Object.entries(requestHeaders('POST', '/v1/files'))) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve(JSON.parse(xhr.responseText) as FileObject);
      else reject(errorFromAnswer(xhr.status, xhr.getResponseHeader('x-request-id'), xhr.responseText));
    };
    xhr.onerror = () => reject(new Error('The upload was interrupted'));
    xhr.send(form);
  });
}
